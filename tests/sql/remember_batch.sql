-- memloom_remember_batch (sql/0020): a batch of memories in one call, as one memloom_remember
-- per record in order would give, with an import's skips (seq at or below the key's newest,
-- or the key's active content) and duplicate keys in one batch (each a new version, in order).
SELECT memloom_init_store('toy', 1, 3, vector_index => false);
SELECT * FROM memloom_remember('ns', 'a', 'a one', '[1,0,0]', '{"seq": 1}');

-- a: seq 2 and 3 written (versions 2, 3), seq 1 skipped (imported before), seq 4 skipped
-- (its content is a's active content); b: seq 1, then seq 1 again (skipped); an unkeyed note;
-- c: seq 5. Metadata and event time per record.
SELECT * FROM memloom_remember_batch('ns',
  ARRAY['a', 'b', NULL, 'a', 'b', 'a', 'c', 'a'],
  ARRAY[2, 1, NULL, 3, 1, 1, 5, 4]::float8[],
  ARRAY['a two', 'b one', 'free', 'a three', 'b dup seq', 'a old seq', 'c one', 'a three'],
  ARRAY['[1,0,0]', '[0,1,0]', '[0,0,1]', '[1,1,0]', '[1,0,1]', '[0,1,1]', '[1,1,1]', '[1,0,0]']::vector[],
  ARRAY['{"x": 1}', NULL, '{"y": 2}', NULL, NULL, NULL, NULL, NULL]::jsonb[],
  ARRAY['2023-05-08T00:00Z', NULL, NULL, NULL, NULL, NULL, NULL, NULL]::timestamptz[]);
-- The chain: one active version per key, links both ways, the stored version's interval closed
-- where the batch's begin, a key's later versions of the batch 1 ms apart (none empty).
SELECT id, key, version, status, content, metadata, supersedes, superseded_by,
       valid_to IS NULL AS open, valid_from = valid_to AS empty, event_at
  FROM memloom_items ORDER BY id;
SELECT bool_and(p.valid_to = n.valid_from) AS intervals_meet
  FROM memloom_items p JOIN memloom_items n ON n.id = p.superseded_by;

-- The same batch again writes nothing (a re-run of a file).
SELECT * FROM memloom_remember_batch('ns',
  ARRAY['a', 'b', 'a', 'c'], ARRAY[2, 1, 3, 5]::float8[],
  ARRAY['a two', 'b one', 'a three', 'c one'],
  ARRAY['[1,0,0]', '[0,1,0]', '[1,1,0]', '[1,1,1]']::vector[]);
-- A later batch supersedes the batch's active versions.
SELECT * FROM memloom_remember_batch('ns', ARRAY['a', 'b'], ARRAY[5, 2]::float8[],
  ARRAY['a five', 'b two'], ARRAY['[1,0,0]', '[0,1,0]']::vector[]);
SELECT key, version, status, supersedes, superseded_by FROM memloom_items
 WHERE key IN ('a', 'b') ORDER BY key, version;

-- The keyword statistics the batch kept equal a full recompute.
CREATE TEMP TABLE kept AS SELECT lexeme, df FROM memloom_term_stats WHERE namespace = 'ns';
CREATE TEMP TABLE kept_ns AS SELECT doc_count, total_len, avg_doc_len FROM memloom_namespace_stats WHERE namespace = 'ns';
SELECT memloom_recompute_stats('ns');
SELECT count(*) AS differing_lexemes FROM (
  (SELECT lexeme, df FROM kept EXCEPT SELECT lexeme, df FROM memloom_term_stats WHERE namespace = 'ns')
  UNION ALL
  (SELECT lexeme, df FROM memloom_term_stats WHERE namespace = 'ns' EXCEPT SELECT lexeme, df FROM kept)) d;
SELECT k.doc_count = s.doc_count AND k.total_len = s.total_len AND k.avg_doc_len = s.avg_doc_len AS same_counts
  FROM kept_ns k, memloom_namespace_stats s WHERE s.namespace = 'ns';

-- Bad input: what is wrong, and nothing written.
SELECT * FROM memloom_remember_batch('ns', ARRAY['a'], NULL, ARRAY['x'], ARRAY['[1,0]']::vector[]);
SELECT * FROM memloom_remember_batch('ns', ARRAY['a', 'b'], NULL, ARRAY['x'], ARRAY['[1,0,0]']::vector[]);
SELECT * FROM memloom_remember_batch('ns', ARRAY['a', 'b'], NULL, ARRAY['x', NULL], ARRAY['[1,0,0]', '[1,0,0]']::vector[]);
SELECT * FROM memloom_remember_batch('ns', ARRAY[''], NULL, ARRAY['x'], ARRAY['[1,0,0]']::vector[]);
SELECT * FROM memloom_remember_batch('ns', ARRAY['a', 'b'], NULL, ARRAY['x', 'y'], ARRAY['[1,0,0]', NULL]::vector[]);
SELECT * FROM memloom_remember_batch('ns', '{}', '{}', '{}', '{}');
SELECT count(*) AS items FROM memloom_items;

-- Forgetting the namespace: one lock (memloom_lock_keys with NULL), every row gone.
BEGIN;
SELECT * FROM memloom_forget_namespace('ns');
SELECT count(*) AS advisory_locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS items FROM memloom_items;
