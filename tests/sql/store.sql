-- memloom_init_store: the migrations leave the vector columns untyped and unindexed; the
-- embedder recorded at init sizes them and builds the HNSW indexes.
SELECT embedder_name, embedder_version, embedder_dims FROM memloom_meta;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass) AND attname = 'embedding';
SELECT count(*) AS hnsw_indexes FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%';

-- Before init: recall and the index build say what to do.
SELECT * FROM memloom_fuse('x', '[1,0,0]', 'ns', 5);
SELECT memloom_ensure_vector_index();

-- Bad arguments.
SELECT memloom_init_store('api:mini', 1, 0);
SELECT memloom_init_store('api:big', 1, 3072);
SELECT memloom_init_store(NULL, 1, 3);

-- A 3-dimension embedder, exact search first (no index), then the deferred index build.
SELECT memloom_defer_vector_index();  -- no index yet: nothing to drop
SELECT memloom_init_store('toy', 1, 3, vector_index => false);
SELECT embedder_name, embedder_version, embedder_dims FROM memloom_meta;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass) AND attname = 'embedding';
SELECT count(*) AS hnsw_indexes FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%';
SELECT id, version FROM memloom_remember('ns', NULL, 'alpha', '[1,0,0]');
SELECT id, version FROM memloom_remember('ns', NULL, 'beta', '[0,1,0]');
SELECT id, vector_rank FROM memloom_fuse('zzz', '[1,0.1,0]', 'ns', 5, arms => '{vector}');
SELECT memloom_ensure_vector_index();
SELECT memloom_ensure_vector_index();
SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%' ORDER BY 1;

-- Before a bulk write, an index goes only from a table that has no row: the pool has two, the
-- entities none (sql/0025); memloom_ensure_vector_index builds it again.
SELECT memloom_defer_vector_index();
SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%' ORDER BY 1;
SELECT memloom_ensure_vector_index();
SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%' ORDER BY 1;

-- The index path is used (pgvector style: sequential scans off) by a search of the active
-- versions, which are what the pool's index holds (sql/0033); not by one over every version.
SELECT pg_get_indexdef('memloom_items_embedding'::regclass);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM memloom_items WHERE status = 'active' ORDER BY embedding <=> '[1,0,0]' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM memloom_items ORDER BY embedding <=> '[1,0,0]' LIMIT 5;
RESET enable_seqscan;
-- An index built before schema 33 (every version) is told apart from the partial one.
SELECT memloom_vector_index_holds_history();
DROP INDEX memloom_items_embedding;
CREATE INDEX memloom_items_embedding ON memloom_items USING hnsw (embedding vector_cosine_ops);
SELECT memloom_vector_index_holds_history();
DROP INDEX memloom_items_embedding;
SELECT memloom_vector_index_holds_history();
SELECT memloom_ensure_vector_index();
SELECT memloom_vector_index_holds_history();

-- A store of any embedder but hash (dense vectors) has no non-zero-dimension index (sql/0022).
SELECT to_regclass('memloom_entities_support') IS NULL AS dense_store_has_no_support_index;

-- Idempotent for the same embedder; another one, or other dimensions, refused.
SELECT memloom_init_store('toy', 1, 3);
SELECT memloom_init_store('toy', 2, 3);
SELECT memloom_init_store('toy', 1, 4);
SELECT memloom_check_embedder('toy', 1, 3);
INSERT INTO memloom_items (namespace, kind, content, embedding) VALUES ('ns', 'chunk', 'x', '[1,2]');
