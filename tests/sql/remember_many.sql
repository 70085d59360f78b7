-- memloom_remember_many (sql/0021): several memories in one call, as one memloom_remember call
-- per record in array order in one transaction gives (Store#rememberMany), and atomic: a
-- failing record writes none of the batch.
SELECT memloom_init_store('toy', 1, 3, vector_index => false);
SELECT * FROM memloom_remember('many', 'a', 'a one', '[1,0,0]');
SELECT * FROM memloom_remember('each', 'a', 'a one', '[1,0,0]');

-- a: a new version (2); an unkeyed note; b: version 1; a again (3); a's active content again
-- (unchanged: version 3's id once more); b with metadata and an event time (2).
SELECT * FROM memloom_remember_many('many',
  ARRAY['a', NULL, 'b', 'a', 'a', 'b'],
  ARRAY['a two', 'free', 'b one', 'a three', 'a three', 'b two'],
  ARRAY['[0,1,0]', '[0,0,1]', '[1,1,0]', '[1,0,1]', '[1,0,1]', '[0,1,1]']::vector[],
  ARRAY[NULL, '{"x": 1}', NULL, NULL, NULL, '{"y": 2}']::jsonb[],
  ARRAY[NULL, NULL, NULL, NULL, NULL, '2023-05-08T00:00Z']::timestamptz[])
 ORDER BY ord;
-- The same records, one memloom_remember each, in one transaction (what rememberMany did).
BEGIN;
SELECT * FROM memloom_remember('each', 'a', 'a two', '[0,1,0]');
SELECT * FROM memloom_remember('each', NULL, 'free', '[0,0,1]', '{"x": 1}');
SELECT * FROM memloom_remember('each', 'b', 'b one', '[1,1,0]');
SELECT * FROM memloom_remember('each', 'a', 'a three', '[1,0,1]');
SELECT * FROM memloom_remember('each', 'a', 'a three', '[1,0,1]');
SELECT * FROM memloom_remember('each', 'b', 'b two', '[0,1,1]', '{"y": 2}', '2023-05-08T00:00Z');
COMMIT;
-- Both namespaces hold the same versions, statuses, links, contents, metadata and event times.
CREATE TEMP VIEW chain AS
  SELECT i.namespace, i.key, i.version, i.status, i.content, i.metadata, i.event_at, i.embedding::text AS v,
         p.version AS supersedes_version, n.version AS superseded_by_version, i.valid_to IS NULL AS open
    FROM memloom_items i
    LEFT JOIN memloom_items p ON p.id = i.supersedes
    LEFT JOIN memloom_items n ON n.id = i.superseded_by;
SELECT key, version, status, content, metadata, event_at, supersedes_version, superseded_by_version, open
  FROM chain WHERE namespace = 'many' ORDER BY key NULLS FIRST, version;
SELECT count(*) AS differing_rows FROM (
  (SELECT key, version, status, content, metadata, event_at, v, supersedes_version, superseded_by_version, open FROM chain WHERE namespace = 'many'
   EXCEPT ALL
   SELECT key, version, status, content, metadata, event_at, v, supersedes_version, superseded_by_version, open FROM chain WHERE namespace = 'each')
  UNION ALL
  (SELECT key, version, status, content, metadata, event_at, v, supersedes_version, superseded_by_version, open FROM chain WHERE namespace = 'each'
   EXCEPT ALL
   SELECT key, version, status, content, metadata, event_at, v, supersedes_version, superseded_by_version, open FROM chain WHERE namespace = 'many')) d;
SELECT bool_and(p.valid_to = n.valid_from) AS intervals_meet
  FROM memloom_items p JOIN memloom_items n ON n.id = p.superseded_by;
-- keys NULL: every record unkeyed.
SELECT ord, version FROM memloom_remember_many('many', NULL, ARRAY['u1', 'u2'], ARRAY['[1,0,0]', '[0,1,0]']::vector[]) ORDER BY ord;

-- Atomic: a bad record midway (wrong dimensions, no content, no embedding) fails the call and
-- none of the records before it stays; the arrays' lengths are checked first.
SELECT count(*) AS items FROM memloom_items WHERE namespace = 'many';
SELECT * FROM memloom_remember_many('many', ARRAY['c', 'd', 'e'], ARRAY['c one', 'd one', 'e one'],
  ARRAY['[1,0,0]', '[1,0]', '[0,0,1]']::vector[]);
SELECT * FROM memloom_remember_many('many', ARRAY['c', 'd'], ARRAY['c one', NULL], ARRAY['[1,0,0]', '[0,1,0]']::vector[]);
SELECT * FROM memloom_remember_many('many', ARRAY['c', 'd'], ARRAY['c one', 'd one'], ARRAY['[1,0,0]', NULL]::vector[]);
SELECT * FROM memloom_remember_many('many', ARRAY['c', 'd'], ARRAY['c one'], ARRAY['[1,0,0]']::vector[]);
SELECT * FROM memloom_remember_many('many', NULL, ARRAY['c one'], ARRAY['[1,0,0]']::vector[], ARRAY['{}', '{}']::jsonb[]);
SELECT * FROM memloom_remember_many(NULL, NULL, ARRAY['c one'], ARRAY['[1,0,0]']::vector[]);
SELECT count(*) AS items FROM memloom_items WHERE namespace = 'many';
SELECT count(*) AS keys_c_d_e FROM memloom_items WHERE key IN ('c', 'd', 'e');
-- Nothing to remember: no rows.
SELECT * FROM memloom_remember_many('many', '{}', '{}', '{}');
