-- memloom schema 26: ANALYZE gathers no statistics on the expression of memloom_entities_support
-- (the hash-v1 entities' non-zero dimensions, sql/0019). To gather them ANALYZE evaluated
-- memloom_vector_support, a SQL function that casts the vector to real[] and aggregates its
-- non-zero positions, for every sampled entity: 285 of 291 ms of ANALYZE memloom_entities for
-- the Node docs' 8,604 entities on PGlite, paid at the end of every bulk ingest and index run
-- (memloom_refresh_stats) and whenever the table has grown by 10% (memloom_analyze_if_grown).
-- Nothing needs them: the entity arm's search keeps its bitmap scan of that GIN index and gives
-- the same rows. A store of any other embedder has no such index. memloom_init_store, whose
-- re-typing of the embedding column rebuilds the index without its target, sets it again.
-- No table changes.

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
    -- The entities' non-zero-dimension index (07_entity_arm.sql) narrows the exact entity search
    -- only where vectors are sparse: hash-v1's features touch a few dozen of its 256 dimensions.
    -- Every other embedder's vectors are dense (static-v1/v2: 256 of 512 non-zero; an API model:
    -- all), so every entity shares a dimension with every query: the index would select them
    -- all, and keeping it doubled the entity index time (sql/0022). Without it the entity arm
    -- scans exactly, with the same results.
    IF to_regclass('memloom_entities_support') IS NOT NULL THEN
        IF memloom_init_store.embedder_name <> 'hash' THEN
            DROP INDEX memloom_entities_support;
        ELSE
            -- Re-typing the column above rebuilt the index from its definition, without its
            -- statistics target: none again (07_entity_arm.sql, sql/0026).
            ALTER INDEX memloom_entities_support ALTER COLUMN 1 SET STATISTICS 0;
        END IF;
    END IF;
    IF vector_index THEN
        PERFORM memloom_ensure_vector_index();
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'records the store''s embedder (refusing a different one), makes memloom_items.embedding and memloom_entities.embedding vector(dims) while they hold no other dimensions, stored in the row (memloom_vector_storage, sql/0014), drops the entities'' non-zero-dimension index memloom_entities_support for any embedder but hash (dense vectors: it would select every entity) and keeps it without planner statistics for hash, and with vector_index builds the HNSW indexes (dims <= 2000); idempotent';

DO $$
BEGIN
    IF to_regclass('memloom_entities_support') IS NOT NULL THEN
        ALTER INDEX memloom_entities_support ALTER COLUMN 1 SET STATISTICS 0;
        -- ANALYZE keeps what it gathered before; only a superuser may remove it (the estimate it
        -- gives stays about right: the share of entities sharing a dimension with a query).
        IF coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false) THEN
            DELETE FROM pg_catalog.pg_statistic s WHERE s.starelid = 'memloom_entities_support'::regclass;
        END IF;
    END IF;
END
$$;

UPDATE memloom_meta SET schema_version = greatest(schema_version, 26);
