-- memloom schema 14: vectors stored in the heap row, so an exact vector scan reads no TOAST.
--
-- pgvector's `vector` type has storage EXTERNAL: once a row is over ~2 kB (a chunk's content,
-- its tsv, which 0006 keeps in the row, and a 256-d vector of 1,032 bytes) PostgreSQL moves the
-- vector out of line into the TOAST table. The vector arm without an HNSW index (the embedded
-- store below EMBEDDED_HNSW_THRESHOLD items, and embedders of more than 2000 dimensions) reads
-- every row's vector: on the Node docs (4,351 chunks) that was 22,500 buffer reads instead of
-- the heap's ~1,200 pages, a TOAST index lookup per row, and most of a small store's recall
-- (docs/BENCHMARKS.md "Embedded recall"). The stored values do not change: ranked results are
-- the same.
--
-- * memloom_vector_storage(dims): PLAIN (always in the row, never compressed) up to 1024
--   dimensions (4 kB, half a page: the row's other large columns go out of line first); MAIN
--   above (in the row unless it cannot fit a page). MAIN for small vectors measured slower:
--   hash-v1's sparse vectors compress, and every scan then decompresses them.
-- * memloom_init_store sets it after sizing the columns (ALTER COLUMN TYPE resets a column's
--   storage to its type's); this migration sets it on initialised stores (MAIN before init).
-- * Rows written before this migration keep their out-of-line vectors until rewritten; on a
--   store without the HNSW index (the ones that scan exactly) the migration rewrites them once,
--   with the pool's own triggers off (the content, statistics and entity index do not change).
--   A store with the HNSW index reads only the index's candidates' rows and is left as it is.

UPDATE memloom_meta SET schema_version = greatest(schema_version, 14);

CREATE OR REPLACE FUNCTION memloom_vector_storage(dims integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN dims <= 1024 THEN 'plain' ELSE 'main' END
$$;
COMMENT ON FUNCTION memloom_vector_storage(integer) IS
'the storage of the embedding columns for vectors of dims dimensions: plain (in the row, uncompressed) up to 1024, main (in the row unless the row cannot fit a page) above or while dims is unknown (NULL); set by memloom_init_store';

CREATE OR REPLACE FUNCTION memloom_init_store(
    embedder_name    text,
    embedder_version integer,
    dims             integer,
    vector_index     boolean DEFAULT true
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    m      memloom_meta;
    tab    text;
    typmod integer;
    other  integer;
BEGIN
    IF embedder_name IS NULL OR embedder_name = '' OR embedder_version IS NULL OR embedder_version < 1 THEN
        RAISE EXCEPTION 'memloom_init_store needs an embedder name and a version >= 1, not % and %',
            quote_nullable(embedder_name), coalesce(embedder_version::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF dims IS NULL OR dims NOT BETWEEN 1 AND 16000 THEN
        RAISE EXCEPTION 'expected 1 to 16000 embedding dimensions (pgvector), not %', coalesce(dims::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF vector_index AND dims > 2000 THEN
        RAISE EXCEPTION 'HNSW indexes vectors of at most 2000 dimensions, not %; pass vector_index => false to search exactly', dims
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pg_advisory_xact_lock(30792293106544493);  -- the migration lock: initialisers queue
    SELECT * INTO m FROM memloom_meta FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memloom store has no memloom_meta row; apply the memloom migrations'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF m.embedder_name IS NOT NULL
       AND (m.embedder_name, m.embedder_version, m.embedder_dims)
           IS DISTINCT FROM (memloom_init_store.embedder_name, memloom_init_store.embedder_version, dims) THEN
        RAISE EXCEPTION 'store built with %-v% (% dimensions), not %-v% (% dimensions); embed with %-v%, or make a new store',
            m.embedder_name, m.embedder_version, m.embedder_dims,
            memloom_init_store.embedder_name, memloom_init_store.embedder_version, dims,
            m.embedder_name, m.embedder_version
            USING ERRCODE = 'data_exception';
    END IF;
    FOREACH tab IN ARRAY ARRAY['memloom_items', 'memloom_entities'] LOOP
        SELECT a.atttypmod INTO typmod FROM pg_attribute a
        WHERE a.attrelid = tab::regclass AND a.attname = 'embedding';
        CONTINUE WHEN typmod = dims;
        EXECUTE format('SELECT vector_dims(embedding) FROM %I WHERE vector_dims(embedding) <> %s LIMIT 1', tab, dims)
            INTO other;
        IF other IS NOT NULL THEN
            RAISE EXCEPTION '% already holds %-dimension embeddings, not %; the dimensions can change only while it is empty: make a new store',
                tab, other, dims
                USING ERRCODE = 'data_exception';
        END IF;
        -- Re-typing resets a column's storage to the type's (pgvector: EXTERNAL): in the row again.
        EXECUTE format('ALTER TABLE %I ALTER COLUMN embedding TYPE vector(%s), ALTER COLUMN embedding SET STORAGE %s',
                       tab, dims, memloom_vector_storage(dims));
    END LOOP;
    UPDATE memloom_meta
       SET embedder_name = memloom_init_store.embedder_name,
           embedder_version = memloom_init_store.embedder_version,
           embedder_dims = dims;
    IF vector_index THEN
        PERFORM memloom_ensure_vector_index();
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'records the store''s embedder (refusing a different one), makes memloom_items.embedding and memloom_entities.embedding vector(dims) while they hold no other dimensions, stored in the row (memloom_vector_storage, sql/0014), and with vector_index builds the HNSW indexes (dims <= 2000); idempotent';

-- The storage on stores initialised before 0014, and the rows already written on a store that
-- searches exactly: the vector rebuilt from its floats is a new (inline) value, so the update
-- stores it in the row (re-assigning the column to itself would keep the TOAST pointer). USER
-- triggers are off meanwhile: the content does not change.
DO $$
DECLARE
    dims integer := (SELECT m.embedder_dims FROM memloom_meta m);
    tab  text;
BEGIN
    FOREACH tab IN ARRAY ARRAY['memloom_items', 'memloom_entities'] LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN embedding SET STORAGE %s', tab, memloom_vector_storage(dims));
        CONTINUE WHEN dims IS NULL OR to_regclass(tab || '_embedding') IS NOT NULL;
        EXECUTE format('ALTER TABLE %I DISABLE TRIGGER USER', tab);
        EXECUTE format('UPDATE %I SET embedding = embedding::real[]::vector', tab);
        EXECUTE format('ALTER TABLE %I ENABLE TRIGGER USER', tab);
    END LOOP;
END
$$;
