-- memloom, the current definition, part 12: export and import (docs/EXPORT.md). What a dump
-- line holds is decided here, once, for every caller (npm Store#exportDump / importDump, the
-- CLI's `memloom export` / `memloom import`, memloom-sql, a partition move): an entity line per
-- entity, an item line per item, as JSON; memloom_import_batch writes a batch of such lines
-- back in one statement. References between rows are by value (an item's versions by key and
-- version, a mention by its entity's name and kind), never by database id, so a dump restores
-- into any store.

-- An instant as the dump writes it: UTC, microseconds, 'Z' (independent of the session's TimeZone).
CREATE FUNCTION memloom_json_time(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;
COMMENT ON FUNCTION memloom_json_time(timestamptz) IS
'an instant as export lines write it: ISO 8601 in UTC with microseconds and Z (2026-12-01T16:50:07.123456Z), whatever the session''s TimeZone; NULL for NULL';

-- A vector as the dump writes it: base64 (no line breaks) of its components as IEEE 754
-- float32, big-endian, which is pgvector's binary form (vector_send) without its 4-byte header
-- (int16 dims, int16 unused). 1,368 characters for 256 dimensions instead of ~2,300 as text.
CREATE FUNCTION memloom_vector_base64(v vector) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT translate(encode(substring(vector_send(v) FROM 5), 'base64'), E'\n', '')
$$;
COMMENT ON FUNCTION memloom_vector_base64(vector) IS
'a vector as export lines carry it: base64 without line breaks of its float32 components, big-endian (pgvector''s binary form without its 4-byte header)';

CREATE FUNCTION memloom_export_entities(ns text, after_id bigint DEFAULT 0, lim integer DEFAULT 1000)
RETURNS TABLE (id bigint, line json)
LANGUAGE sql STABLE AS $$
    SELECT e.id, json_build_object(
        'type', 'entity',
        'namespace', e.namespace,
        'name', e.name,
        'kind', e.kind,
        'createdAt', memloom_json_time(e.created_at),
        'embedding', memloom_vector_base64(e.embedding))
    FROM memloom_entities e
    WHERE e.namespace = ns AND e.id > after_id
    ORDER BY e.id
    LIMIT lim
$$;
COMMENT ON FUNCTION memloom_export_entities(text, bigint, integer) IS
'export lines of namespace ns''s entities (type entity: namespace, name, kind, createdAt, embedding) with id above after_id, at most lim, in id order (page with the last id returned); docs/EXPORT.md';

-- The item line. Every field a restore needs, and nothing derived (content_hash, tsv and
-- heading_tsv are generated columns; ids are the store's own), the validity interval and the
-- event time included (sql/memloom/03_pool.sql).
CREATE FUNCTION memloom_export_items(ns text, after_id bigint DEFAULT 0, lim integer DEFAULT 1000)
RETURNS TABLE (id bigint, line json)
LANGUAGE sql STABLE AS $$
    SELECT i.id, json_build_object(
        'type', 'item',
        'namespace', i.namespace,
        'kind', i.kind,
        'key', i.key,
        'version', i.version,
        'status', i.status,
        'source', i.source,
        'breadcrumb', i.breadcrumb,
        'content', i.content,
        'metadata', i.metadata,
        'createdAt', memloom_json_time(i.created_at),
        'updatedAt', memloom_json_time(i.updated_at),
        'indexedAt', memloom_json_time((SELECT x.indexed_at FROM memloom_indexed x WHERE x.item_id = i.id)),
        'validFrom', memloom_json_time(i.valid_from),
        'validTo', memloom_json_time(i.valid_to),
        'eventAt', memloom_json_time(i.event_at),
        'supersedes', (SELECT json_build_object('key', p.key, 'version', p.version)
                       FROM memloom_items p WHERE p.namespace = i.namespace AND p.id = i.supersedes),
        'supersededBy', (SELECT json_build_object('key', s.key, 'version', s.version)
                         FROM memloom_items s WHERE s.namespace = i.namespace AND s.id = i.superseded_by),
        'mentions', coalesce((SELECT json_agg(json_build_object('name', e.name, 'kind', e.kind, 'strength', m.strength)
                                              ORDER BY e.name, e.kind)
                              FROM memloom_mentions m
                              JOIN memloom_entities e ON e.namespace = m.namespace AND e.id = m.entity_id
                              WHERE m.namespace = i.namespace AND m.item_id = i.id), '[]'::json),
        'embedding', memloom_vector_base64(i.embedding))
    FROM memloom_items i
    WHERE i.namespace = ns AND i.id > after_id
    ORDER BY i.id
    LIMIT lim
$$;
COMMENT ON FUNCTION memloom_export_items(text, bigint, integer) IS
'export lines of namespace ns''s items (type item: every stored field, supersession links as {key, version}, mentions as {name, kind, strength}, the embedding as memloom_vector_base64) with id above after_id, at most lim, in id order (page with the last id returned); docs/EXPORT.md';

-- Imports: one row per (namespace, export) being or having been restored, the last dump line
-- committed. A batch commits its rows and its line together, so a re-run skips what is there.
CREATE TABLE memloom_imports (
    namespace  text        NOT NULL,
    export_id  text        NOT NULL CHECK (export_id <> ''),
    last_line  bigint      NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, export_id)
);
COMMENT ON TABLE memloom_imports IS
'imports into a namespace: the dump''s exportId and the last line committed (memloom_import_batch); a re-run of the same dump resumes after it';
ALTER TABLE memloom_imports ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_imports_namespace ON memloom_imports
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_imports_namespace ON memloom_imports IS
'a session sees and writes only the import records of its memloom.namespace, like memloom_items';

CREATE FUNCTION memloom_import_batch(
    ns             text,
    export_id      text,
    last_line      bigint,
    entities       jsonb,
    items          jsonb,
    entity_vectors vector[],
    item_vectors   vector[]
) RETURNS TABLE (entities_written integer, items_written integer, mentions_written integer, skipped integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    mark    bigint;
    n_ent   integer := 0;
    n_items integer := 0;
    n_ment  integer := 0;
    n_want  integer;
    n_all   integer := coalesce(jsonb_array_length(entities), 0) + coalesce(jsonb_array_length(items), 0);
    ids     bigint[];
BEGIN
    IF ns IS NULL OR ns = '' OR export_id IS NULL OR export_id = '' OR last_line IS NULL THEN
        RAISE EXCEPTION 'memloom_import_batch needs a namespace, an export id and the batch''s last line'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF coalesce(jsonb_array_length(entities), 0) <> coalesce(cardinality(entity_vectors), 0)
       OR coalesce(jsonb_array_length(items), 0) <> coalesce(cardinality(item_vectors), 0) THEN
        RAISE EXCEPTION 'memloom_import_batch: expected one vector per entity and per item (% entities, % vectors; % items, % vectors)',
            jsonb_array_length(entities), cardinality(entity_vectors), jsonb_array_length(items), cardinality(item_vectors)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- One importer of a (namespace, dump) at a time; the record says what is committed.
    PERFORM pg_advisory_xact_lock(hashtextextended('memloom import ' || ns || chr(31) || export_id, 0));
    SELECT m.last_line INTO mark FROM memloom_imports m
    WHERE m.namespace = ns AND m.export_id = memloom_import_batch.export_id;
    IF mark IS NULL THEN
        -- A restore writes versions, links and ids of its own: into an empty namespace only.
        IF EXISTS (SELECT 1 FROM memloom_items i WHERE i.namespace = ns)
           OR EXISTS (SELECT 1 FROM memloom_entities e WHERE e.namespace = ns) THEN
            RAISE EXCEPTION 'namespace % already holds items or entities that are not from this dump (export %); import into an empty namespace (--namespace NEW), or empty this one first (memloom forget --namespace % --yes)',
                ns, export_id, ns
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        INSERT INTO memloom_imports (namespace, export_id, last_line)
        VALUES (ns, memloom_import_batch.export_id, 0);
        mark := 0;
    END IF;
    -- A bulk load: the statistics are marked and recomputed once (memloom_refresh_stats at the end).
    PERFORM set_config('memloom.stats_bulk', 'on', true);

    INSERT INTO memloom_entities (namespace, name, kind, embedding, created_at)
    SELECT ns, t.j->>'name', t.j->>'kind', entity_vectors[t.o],
           coalesce((t.j->>'createdAt')::timestamptz, now())
    FROM jsonb_array_elements(entities) WITH ORDINALITY AS t(j, o)
    WHERE (t.j->>'line')::bigint > mark
    ORDER BY t.o
    ON CONFLICT (namespace, name, kind) DO NOTHING;
    GET DIAGNOSTICS n_ent = ROW_COUNT;

    -- Ids drawn first, in line order, so the rows keep the dump's relative order (recall
    -- breaks score ties by id) and each line knows its row; then the supersession links, by
    -- (key, version), to a row of this batch or one already stored, so the INSERT writes them
    -- (the foreign keys are checked at the statement's end) and no row is updated after.
    CREATE TEMP TABLE IF NOT EXISTS memloom_import_rows (
        o       integer PRIMARY KEY,
        id      bigint  NOT NULL,
        key     text,
        version integer,
        sup     bigint,
        sup_by  bigint,
        j       jsonb   NOT NULL
    ) ON COMMIT DROP;
    TRUNCATE memloom_import_rows;
    INSERT INTO memloom_import_rows (o, id, key, version, j)
    SELECT t.o, nextval(pg_get_serial_sequence('memloom_items', 'id')), t.j->>'key',
           coalesce((t.j->>'version')::integer, 1), t.j
    FROM jsonb_array_elements(items) WITH ORDINALITY AS t(j, o)
    WHERE (t.j->>'line')::bigint > mark
    ORDER BY t.o;
    CREATE INDEX IF NOT EXISTS memloom_import_rows_key ON memloom_import_rows (key, version);
    ANALYZE memloom_import_rows;
    UPDATE memloom_import_rows r SET
        sup = CASE WHEN jsonb_typeof(r.j->'supersedes') = 'object' THEN coalesce(
                  (SELECT b.id FROM memloom_import_rows b
                   WHERE b.key = r.j->'supersedes'->>'key' AND b.version = (r.j->'supersedes'->>'version')::integer),
                  (SELECT p.id FROM memloom_items p
                   WHERE p.namespace = ns AND p.key = r.j->'supersedes'->>'key'
                     AND p.version = (r.j->'supersedes'->>'version')::integer)) END,
        sup_by = CASE WHEN jsonb_typeof(r.j->'supersededBy') = 'object' THEN coalesce(
                  (SELECT b.id FROM memloom_import_rows b
                   WHERE b.key = r.j->'supersededBy'->>'key' AND b.version = (r.j->'supersededBy'->>'version')::integer),
                  (SELECT p.id FROM memloom_items p
                   WHERE p.namespace = ns AND p.key = r.j->'supersededBy'->>'key'
                     AND p.version = (r.j->'supersededBy'->>'version')::integer)) END
    WHERE jsonb_typeof(r.j->'supersedes') = 'object' OR jsonb_typeof(r.j->'supersededBy') = 'object';
    -- The validity interval: the dump's, else (a dump without it, mem0's) from when the row was
    -- saved and, for a superseded version, when it was last updated (memloom_remember updates
    -- a version when it supersedes it).
    INSERT INTO memloom_items (id, namespace, kind, source, breadcrumb, key, version, content, status,
                               supersedes, superseded_by, embedding, metadata, created_at, updated_at,
                               valid_from, valid_to, event_at)
    OVERRIDING SYSTEM VALUE
    SELECT r.id, ns, r.j->>'kind', r.j->>'source', r.j->>'breadcrumb', r.key, r.version,
           r.j->>'content', coalesce(r.j->>'status', 'active'), r.sup, r.sup_by,
           item_vectors[r.o], coalesce(r.j->'metadata', '{}'),
           coalesce((r.j->>'createdAt')::timestamptz, now()),
           coalesce((r.j->>'updatedAt')::timestamptz, (r.j->>'createdAt')::timestamptz, now()),
           coalesce((r.j->>'validFrom')::timestamptz, (r.j->>'createdAt')::timestamptz, date_trunc('milliseconds', now())),
           CASE WHEN coalesce(r.j->>'status', 'active') <> 'active' THEN
               greatest(coalesce((r.j->>'validTo')::timestamptz, (r.j->>'updatedAt')::timestamptz, (r.j->>'createdAt')::timestamptz, date_trunc('milliseconds', now())),
                        coalesce((r.j->>'validFrom')::timestamptz, (r.j->>'createdAt')::timestamptz, date_trunc('milliseconds', now())))
           END,
           (r.j->>'eventAt')::timestamptz
    FROM memloom_import_rows r
    ORDER BY r.o;
    GET DIAGNOSTICS n_items = ROW_COUNT;
    INSERT INTO memloom_indexed (item_id, namespace, indexed_at)
    SELECT r.id, ns, (r.j->>'indexedAt')::timestamptz FROM memloom_import_rows r
    WHERE r.j->>'indexedAt' IS NOT NULL
    ORDER BY r.id;
    -- A version stored by an earlier batch whose successor arrives now (its supersededBy named
    -- a row that did not exist yet): linked from this end.
    UPDATE memloom_items p SET superseded_by = r.id
      FROM memloom_import_rows r
     WHERE r.sup IS NOT NULL AND p.namespace = ns AND p.id = r.sup AND p.superseded_by IS NULL;

    -- Mentions by their entity's (name, kind): every one must name an entity of the namespace.
    SELECT count(*)::integer INTO n_want
    FROM memloom_import_rows r, jsonb_array_elements(coalesce(r.j->'mentions', '[]')) m;
    INSERT INTO memloom_mentions (entity_id, item_id, strength, namespace)
    SELECT e.id, r.id, (m->>'strength')::real, ns
    FROM memloom_import_rows r
    CROSS JOIN LATERAL jsonb_array_elements(coalesce(r.j->'mentions', '[]')) m
    JOIN memloom_entities e ON e.namespace = ns AND e.name = m->>'name' AND e.kind = m->>'kind';
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    IF n_ment <> n_want THEN
        RAISE EXCEPTION 'memloom_import_batch: % of the batch''s % mentions name no entity of namespace % (an entity line must come before the items that mention it)',
            n_want - n_ment, n_want, ns
            USING ERRCODE = 'foreign_key_violation';
    END IF;

    UPDATE memloom_imports m SET last_line = greatest(m.last_line, memloom_import_batch.last_line), updated_at = now()
    WHERE m.namespace = ns AND m.export_id = memloom_import_batch.export_id;
    RETURN QUERY SELECT n_ent, n_items, n_ment, n_all - n_ent - n_items;
END
$$;
COMMENT ON FUNCTION memloom_import_batch(text, text, bigint, jsonb, jsonb, vector[], vector[]) IS
'restores a batch of export lines (docs/EXPORT.md; each element carries its dump line number as "line") into namespace ns, in one statement: entities (by name and kind), items with the ids drawn in line order, their supersession links by key and version, their mentions by entity name and kind, then records last_line for (ns, export_id) in memloom_imports. Lines at or below the recorded line are skipped (a re-run resumes); the first batch of an export refuses a namespace that already holds items or entities. A bulk load: call memloom_refresh_stats(ns) after the last batch. Returns the rows written and the lines skipped.';
