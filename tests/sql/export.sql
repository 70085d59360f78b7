-- sql/memloom/12_export.sql: what a dump line holds, and a batch restored from such lines.
-- Instants in UTC whatever the session's TimeZone; vectors as base64 of big-endian float32.
SET TimeZone = 'America/Los_Angeles';
SELECT memloom_json_time('2026-03-01 12:00:00.5+01'), memloom_json_time(NULL);
SELECT memloom_vector_base64('[1, -2, 0.5]'), memloom_vector_base64(NULL);
SELECT encode(decode(memloom_vector_base64('[1, -2, 0.5]'), 'base64'), 'hex') AS big_endian_float32;

SELECT memloom_init_store('toy-3', 1, 3, vector_index => false);
SELECT * FROM memloom_remember('src', 'k', 'first version', '[1,0,0]', '{"seq": 1}');
SELECT * FROM memloom_remember('src', 'k', 'second version', '[0,1,0]');
SELECT * FROM memloom_remember('src', NULL, 'an unkeyed note', '[0,0,1]');
INSERT INTO memloom_entities (namespace, name, kind, embedding) VALUES ('src', 'version', 'topic', '[1,1,0]');
INSERT INTO memloom_mentions (entity_id, item_id, strength, namespace)
SELECT e.id, i.id, 0.75, 'src' FROM memloom_entities e, memloom_items i WHERE i.version = 2 AND i.namespace = 'src';
-- Lines: links by (key, version), mentions by (name, kind), no ids.
SELECT line->>'type' AS type, line->>'key' AS key, line->>'version' AS version, line->>'status' AS status,
       line->'supersedes' AS supersedes, line->'supersededBy' AS superseded_by, line->'mentions' AS mentions,
       line->>'embedding' AS embedding
FROM memloom_export_items('src') ORDER BY id;
SELECT line->>'name' AS name, line->>'kind' AS kind, line->>'embedding' AS embedding FROM memloom_export_entities('src');
-- Paging: after the first id, at most one row.
SELECT count(*) FROM memloom_export_items('src', (SELECT min(id) FROM memloom_items), 1);

-- Restored into another namespace in two batches (line numbers 2.. as a dump would give), the
-- second version's link to the first crossing the batches.
CREATE TEMP TABLE dump AS
SELECT row_number() OVER (ORDER BY kind, id) + 1 AS line, j::jsonb AS j, v
FROM (SELECT 'entity' AS kind, e.id, x.line::text AS j, e.embedding AS v
      FROM memloom_export_entities('src') x JOIN memloom_entities e ON e.id = x.id
      UNION ALL
      SELECT 'item', i.id, x.line::text, i.embedding
      FROM memloom_export_items('src') x JOIN memloom_items i ON i.id = x.id) s;
SELECT * FROM memloom_import_batch('dst', 'export-1', 3,
    (SELECT jsonb_agg(j || jsonb_build_object('line', line) ORDER BY line) FROM dump WHERE line <= 3 AND j->>'type' = 'entity'),
    (SELECT coalesce(jsonb_agg(j || jsonb_build_object('line', line) ORDER BY line), '[]') FROM dump WHERE line <= 3 AND j->>'type' = 'item'),
    (SELECT array_agg(v ORDER BY line) FROM dump WHERE line <= 3 AND j->>'type' = 'entity'),
    (SELECT coalesce(array_agg(v ORDER BY line), '{}') FROM dump WHERE line <= 3 AND j->>'type' = 'item'));
SELECT * FROM memloom_import_batch('dst', 'export-1', 5, '[]',
    (SELECT jsonb_agg(j || jsonb_build_object('line', line) ORDER BY line) FROM dump WHERE line > 3),
    '{}', (SELECT array_agg(v ORDER BY line) FROM dump WHERE line > 3));
-- The same lines again: all skipped (the recorded last line), nothing written twice.
SELECT * FROM memloom_import_batch('dst', 'export-1', 5, '[]',
    (SELECT jsonb_agg(j || jsonb_build_object('line', line) ORDER BY line) FROM dump WHERE line > 3),
    '{}', (SELECT array_agg(v ORDER BY line) FROM dump WHERE line > 3));
SELECT namespace, export_id, last_line FROM memloom_imports;
-- Both namespaces export the same lines but for the namespace.
SELECT count(*) AS differing FROM (
    SELECT (line::jsonb - 'namespace') AS j FROM memloom_export_items('src')
    EXCEPT SELECT (line::jsonb - 'namespace') FROM memloom_export_items('dst')) d;
SELECT d.key, d.version, d.status, (SELECT p.version FROM memloom_items p WHERE p.id = d.supersedes) AS supersedes,
       (SELECT s.version FROM memloom_items s WHERE s.id = d.superseded_by) AS superseded_by
FROM memloom_items d WHERE d.namespace = 'dst' ORDER BY d.id;

-- Another export into a namespace that holds rows: refused, naming what to do.
SELECT * FROM memloom_import_batch('dst', 'export-2', 2, '[]', '[{"line": 2, "kind": "memory", "content": "x"}]', '{}', '{"[1,1,1]"}');
-- A mention of an entity the namespace lacks: the batch fails whole.
SELECT * FROM memloom_import_batch('fresh', 'export-3', 2, '[]',
    '[{"line": 2, "kind": "memory", "content": "x", "mentions": [{"name": "nobody", "kind": "name", "strength": 0.5}]}]', '{}', '{"[1,1,1]"}');
SELECT count(*) AS fresh_rows FROM memloom_items WHERE namespace = 'fresh';
