-- memloom, the current definition, part 14: the clients' reads. Everything a client
-- reads besides recall, as SQL functions taking the namespace: the file hashes ingest skips
-- unchanged files by, the active memories, the items an index run still has to
-- do and the entities it already knows, a namespace's counts for `stats`, and whether the HNSW
-- index exists. The callers (npm store, memloom-sql) read no table directly, so the same calls
-- work through a PL/Proxy front that routes each by its `ns` argument to the partition holding
-- the namespace (sql/plproxy/, docs/SCALING.md). SECURITY INVOKER, like the reads they replace:
-- row-level security (10_security.sql) binds a tenant role's calls to its namespace as before.

-- Ingest: the stored hash of each file of a root, so unchanged files are skipped.
CREATE FUNCTION memloom_file_hashes(ns text, root text)
RETURNS TABLE (source text, hash text)
LANGUAGE sql STABLE AS $$
    SELECT i.source, min(i.metadata->>'fileHash')
      FROM memloom_items i
     WHERE i.namespace = ns AND i.kind = 'chunk' AND i.metadata->>'root' = root
     GROUP BY i.source
$$;
COMMENT ON FUNCTION memloom_file_hashes(text, text) IS
'the files ingested under root in namespace ns, each with its stored file hash (the smallest of its chunks'' metadata fileHash): ingest skips a file whose hash is unchanged';

-- The namespace's active items, from the statistics the writes keep (no count of the pool).
CREATE FUNCTION memloom_active_items(ns text) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT s.doc_count::integer FROM memloom_namespace_stats s WHERE s.namespace = ns), 0)
$$;
COMMENT ON FUNCTION memloom_active_items(text) IS
'the active items of namespace ns as memloom_namespace_stats.doc_count keeps them (0 when it has none): a load writing more than this is a bulk load';

-- An import's keys: each key's newest imported seq and active text, under the keys' locks
-- (memloom_lock_keys, memloom_remember's), held to the end of the caller's transaction.
-- memloom_remember_batch (09_memories.sql) decides with it which records to write.
CREATE FUNCTION memloom_memory_states(ns text, keys text[])
RETURNS TABLE (key text, seq double precision, active text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM memloom_lock_keys(ns, keys);
    -- Key by key (an index lookup each): `key = ANY (keys)` over the pool was planned as a
    -- sequential scan (no planner statistics on key, sql/0012), a scan of the pool per batch.
    RETURN QUERY
    SELECT d.k, s.seq, s.active
      FROM (SELECT DISTINCT k FROM unnest(keys) AS k WHERE k IS NOT NULL) d
     CROSS JOIN LATERAL (
           SELECT count(*) AS n,
                  max((i.metadata->>'seq')::float8) FILTER (WHERE jsonb_typeof(i.metadata->'seq') = 'number') AS seq,
                  max(i.content) FILTER (WHERE i.status = 'active') AS active
             FROM memloom_items i
            WHERE i.namespace = ns AND i.kind = 'memory' AND i.key = d.k) s
     WHERE s.n > 0;
END
$$;
COMMENT ON FUNCTION memloom_memory_states(text, text[]) IS
'for an import of memories with sequence numbers (memloom_remember_batch): takes the keys'' locks (memloom_lock_keys, to the end of the transaction), then returns per stored key the largest numeric metadata seq and the active version''s content';

-- The active memories, newest first.
CREATE FUNCTION memloom_memories(ns text, lim integer)
RETURNS TABLE (id bigint, key text, version integer, content text, created_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT i.id, i.key, i.version, i.content, i.created_at
      FROM memloom_items i
     WHERE i.namespace = ns AND i.kind = 'memory' AND i.status = 'active'
     ORDER BY i.id DESC
     LIMIT lim
$$;
COMMENT ON FUNCTION memloom_memories(text, integer) IS
'the active memories of namespace ns, newest (largest id) first, at most lim';

-- Index runs: `index --all` marks every item for re-indexing; batches of unindexed active
-- items in id order; which of a batch's entities the namespace has already.
CREATE FUNCTION memloom_reset_index(ns text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n integer;
BEGIN
    DELETE FROM memloom_indexed x WHERE x.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
COMMENT ON FUNCTION memloom_reset_index(text) IS
'marks every indexed item of namespace ns for re-indexing (deletes its memloom_indexed rows); returns how many';

CREATE FUNCTION memloom_unindexed(ns text, after_id bigint, lim integer)
RETURNS TABLE (id bigint, breadcrumb text, content text, content_hash text)
LANGUAGE sql STABLE AS $$
    -- x.item_id > after_id says again what x.item_id = i.id implies: without it the anti-join
    -- read every mark below after_id on each call (a merge join from the first mark), so an
    -- index run of N items read N^2 / (2 x batch) marks (sql/0027).
    SELECT i.id, i.breadcrumb, i.content, i.content_hash
      FROM memloom_items i
     WHERE i.namespace = ns AND i.status = 'active' AND i.id > after_id
       AND NOT EXISTS (SELECT 1 FROM memloom_indexed x WHERE x.item_id = i.id AND x.item_id > after_id)
     ORDER BY i.id
     LIMIT lim
$$;
COMMENT ON FUNCTION memloom_unindexed(text, bigint, integer) IS
'the next at most lim active items of namespace ns not indexed yet with an id above after_id, in id order (an index run''s batches)';

CREATE FUNCTION memloom_find_entities(ns text, names text[], kinds text[])
RETURNS TABLE (name text, kind text)
LANGUAGE sql STABLE AS $$
    SELECT e.name, e.kind
      FROM memloom_entities e
      JOIN unnest(names, kinds) AS t(name, kind) ON e.name = t.name AND e.kind = t.kind
     WHERE e.namespace = ns
$$;
COMMENT ON FUNCTION memloom_find_entities(text, text[], text[]) IS
'of the entities given as parallel arrays of names and kinds, those namespace ns already has';

-- `stats`: one namespace's counts (a sharded deployment answers it from the namespace's partition).
CREATE FUNCTION memloom_stats(ns text)
RETURNS TABLE (chunks integer, active_memories integer, superseded_memories integer, keys integer,
               files integer, entities integer, unindexed integer)
LANGUAGE sql STABLE AS $$
    SELECT (count(*) FILTER (WHERE i.kind = 'chunk'))::integer,
           (count(*) FILTER (WHERE i.kind = 'memory' AND i.status = 'active'))::integer,
           (count(*) FILTER (WHERE i.kind = 'memory' AND i.status = 'superseded'))::integer,
           (count(DISTINCT i.key))::integer,
           (count(DISTINCT (i.metadata->>'root', i.source)) FILTER (WHERE i.kind = 'chunk'))::integer,
           (SELECT count(*)::integer FROM memloom_entities e WHERE e.namespace = ns),
           (count(*) FILTER (WHERE x.item_id IS NULL AND i.status = 'active'))::integer
      FROM memloom_items i
      LEFT JOIN memloom_indexed x ON x.item_id = i.id
     WHERE i.namespace = ns
$$;
COMMENT ON FUNCTION memloom_stats(text) IS
'namespace ns in counts: chunks (every version), active and superseded memories, distinct keys, files (distinct root and source of its chunks), entities, active items not indexed yet';

-- Whether the HNSW index on the pool exists (memloom_ensure_vector_index builds it).
CREATE FUNCTION memloom_vector_index_exists() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_indexes
                    WHERE tablename = 'memloom_items' AND indexname = 'memloom_items_embedding')
$$;
COMMENT ON FUNCTION memloom_vector_index_exists() IS
'whether the pool''s HNSW index (memloom_items_embedding, built by memloom_ensure_vector_index) exists';

-- Whether the pool's HNSW index holds every stored version, as one built before schema 33 does,
-- rather than the active ones only: the embedded npm store rebuilds such an index once.
CREATE FUNCTION memloom_vector_index_holds_history() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT i.indpred IS NULL FROM pg_catalog.pg_index i
                     WHERE i.indexrelid = to_regclass('memloom_items_embedding')), false)
$$;
COMMENT ON FUNCTION memloom_vector_index_holds_history() IS
'whether the pool''s HNSW index exists and holds every stored version (built before schema 33) instead of the active ones only';
