-- memloom, the current definition, part 1: the store. A fresh database runs the files of
-- sql/memloom/ in name order, in one transaction, and the runner records every frozen
-- migration of sql/migrations/ in memloom_migrations (sql/README.md). An existing store is
-- upgraded by those migrations instead; a test proves that both give the same catalog.
--
-- The pgvector extension, the store's one-row record (schema version, embedder), and the
-- embedder checks every write and recall makes.

CREATE EXTENSION IF NOT EXISTS vector;

-- One row: the schema version (the newest frozen migration: keep it equal to the last file of
-- sql/migrations/) and the embedder that built this store (name 'hash', version 1, 256 dims =
-- hash-v1, as memloom_core::EmbedderInfo). The embedder is NULL until memloom_init_store
-- records it and sizes the vector columns; queries embedded differently are refused.
CREATE TABLE memloom_meta (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    embedder_name    text    CHECK (embedder_name <> ''),
    embedder_version integer CHECK (embedder_version >= 1),
    embedder_dims    integer CHECK (embedder_dims BETWEEN 1 AND 16000),
    schema_version   integer NOT NULL,
    CHECK (num_nulls(embedder_name, embedder_version, embedder_dims) IN (0, 3))
);
INSERT INTO memloom_meta (schema_version) VALUES (45);

-- Store initialisation: the embedder and its dimensions -------------------------------------
-- The schema leaves the vector columns untyped (`vector`) and without HNSW indexes, so one
-- schema serves any embedder: hash-v1 (256), all-MiniLM (384), OpenAI (1536), ...
-- memloom_init_store records the embedder and sizes the columns; the HNSW indexes (at most
-- 2000 dimensions for `vector`) come with it or later (the embedded store searches exactly
-- until it is large: memloom_ensure_vector_index). Both take the migration lock.
CREATE FUNCTION memloom_ensure_vector_index() RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    dims integer;
    built boolean := false;
BEGIN
    SELECT m.embedder_dims INTO dims FROM memloom_meta m;
    IF dims IS NULL THEN
        RAISE EXCEPTION 'memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF dims > 2000 THEN
        RAISE EXCEPTION 'HNSW indexes vectors of at most 2000 dimensions, this store''s have %; it searches exactly (sequential scan) instead', dims
            USING ERRCODE = 'feature_not_supported';
    END IF;
    PERFORM pg_advisory_xact_lock(30792293106544493);  -- the migration lock: builders queue
    IF to_regclass('memloom_items_embedding') IS NULL THEN
        -- Only the active versions (sql/0033): the rows a recall without as_of searches. A
        -- superseded version in the graph only took a place in the search's candidates (on an
        -- import of 25,000 keys x 4 versions the vector arm's top 10 held 57% of the exact
        -- one's, 87% over the active rows alone) and cost its build and an insert per
        -- supersede. A recall as of an instant finds the versions valid then but no longer
        -- through memloom_items_valid_to (memloom_vector_arm).
        CREATE INDEX memloom_items_embedding ON memloom_items USING hnsw (embedding vector_cosine_ops)
            WHERE status = 'active';
        built := true;
    END IF;
    IF to_regclass('memloom_entities_embedding') IS NULL THEN
        CREATE INDEX memloom_entities_embedding ON memloom_entities USING hnsw (embedding vector_cosine_ops);
        built := true;
    END IF;
    -- The exact search's index is for a store without HNSW (memloom_ensure_exact_index).
    IF to_regclass('memloom_items_exact') IS NOT NULL THEN
        DROP INDEX memloom_items_exact;
    END IF;
    RETURN built;
END
$$;
COMMENT ON FUNCTION memloom_ensure_vector_index() IS
'builds the HNSW cosine indexes on memloom_items.embedding (its active rows) and memloom_entities.embedding when missing (the store must be initialised, at most 2000 dimensions) and drops the exact search''s index memloom_items_exact; returns whether it built one';

-- The exact search without HNSW (the embedded store below 20,000 items) through an IVFFlat
-- index of one list (sql/0040): every active vector sits in that list, so a scan of it computes
-- every distance, as a sequential scan of the pool does, but reads the vectors alone: 628
-- index pages for the Node docs' 4,377 rows instead of 1,213 heap pages of whole rows (each
-- about 2 kB: the text, its tsvector and the vector), and fetches from the heap only the rows
-- it returns. memloom_vector_arm reads it in distance order and stops once no further row can
-- make its top (it decides ties by id itself). Not with HNSW (that index serves then) or past
-- its 2000 dimensions (sequential scan).
CREATE FUNCTION memloom_ensure_exact_index() RETURNS boolean
LANGUAGE plpgsql VOLATILE
-- pgvector notes "ivfflat index created with little data" when a table holds fewer rows than
-- lists: about k-means' centres, which one list does not use.
SET client_min_messages = 'warning'
AS $$
DECLARE
    dims integer;
BEGIN
    SELECT m.embedder_dims INTO dims FROM memloom_meta m;
    IF dims IS NULL OR dims > 2000 OR to_regclass('memloom_items_embedding') IS NOT NULL
       OR to_regclass('memloom_items_exact') IS NOT NULL THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(30792293106544493);  -- the migration lock: builders queue
    IF to_regclass('memloom_items_exact') IS NOT NULL THEN RETURN false; END IF;
    CREATE INDEX memloom_items_exact ON memloom_items USING ivfflat (embedding vector_cosine_ops) WITH (lists = 1)
        WHERE status = 'active';
    RETURN true;
END
$$;
COMMENT ON FUNCTION memloom_ensure_exact_index() IS
'builds memloom_items_exact, a one-list IVFFlat cosine index of the active rows through which memloom_vector_arm searches exactly, when the store is initialised (at most 2000 dimensions), has no HNSW index and no such index yet; returns whether it built it';

-- A bulk write into an empty table builds its HNSW index once at the end instead of inserting
-- every row into it (pgvector's advice: create the index after loading the initial data). On
-- a server the Node docs' 4,351 chunks cost 1.7 to 2.1 s of HNSW inserts against about 0.3 s
-- for one build over them. Only a table with no page at all (pg_relation_size 0: no row of any namespace,
-- committed or not, whatever the caller's row-level security lets it see), locked without
-- waiting, by its owner; the caller rebuilds with memloom_ensure_vector_index when its write is
-- done, also when it fails (npm: withVectorIndexDeferred).
CREATE FUNCTION memloom_defer_vector_index() RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    r       record;
    dropped text[] := '{}';
BEGIN
    FOR r IN SELECT v.tab, v.idx FROM (VALUES ('memloom_items', 'memloom_items_embedding'),
                                              ('memloom_entities', 'memloom_entities_embedding')) AS v(tab, idx) LOOP
        CONTINUE WHEN to_regclass(r.idx) IS NULL OR pg_relation_size(r.tab) > 0;
        BEGIN
            EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE NOWAIT', r.tab);
            IF pg_relation_size(r.tab) = 0 THEN
                EXECUTE format('DROP INDEX %I', r.idx);
                dropped := dropped || r.idx;
            END IF;
        EXCEPTION WHEN insufficient_privilege OR lock_not_available THEN
            NULL;  -- not the owner (a tenant role), or the table is in use: the index stays
        END;
    END LOOP;
    RETURN dropped;
END
$$;
COMMENT ON FUNCTION memloom_defer_vector_index() IS
'before a bulk write: drops the HNSW index of memloom_items and of memloom_entities when the table has no page yet (a new store), the caller owns it and can lock it at once; returns the indexes dropped, which the caller rebuilds with memloom_ensure_vector_index after its write';

-- Vectors stay in the heap row (pgvector's type is EXTERNAL: past a ~2 kB row it went to TOAST,
-- and an exact vector scan then paid a TOAST lookup per row): PLAIN up to 1024 dimensions,
-- MAIN above and while the dimensions are unknown.
CREATE FUNCTION memloom_vector_storage(dims integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN dims <= 1024 THEN 'plain' ELSE 'main' END
$$;
COMMENT ON FUNCTION memloom_vector_storage(integer) IS
'the storage of the embedding columns for vectors of dims dimensions: plain (in the row, uncompressed) up to 1024, main (in the row unless the row cannot fit a page) above or while dims is unknown (NULL); set by memloom_init_store';

CREATE FUNCTION memloom_init_store(
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
    ELSE
        PERFORM memloom_ensure_exact_index();
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'records the store''s embedder (refusing a different one), makes memloom_items.embedding and memloom_entities.embedding vector(dims) while they hold no other dimensions, stored in the row (memloom_vector_storage, sql/0014), drops the entities'' non-zero-dimension index memloom_entities_support for any embedder but hash (dense vectors: it would select every entity) and keeps it without planner statistics for hash, and with vector_index builds the HNSW indexes (dims <= 2000), without it the exact search''s index (memloom_ensure_exact_index); idempotent';

-- Embedder checks ----------------------------------------------------------------------------
CREATE FUNCTION memloom_check_embedder(name text, version integer, dims integer) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    m memloom_meta;
BEGIN
    SELECT * INTO m FROM memloom_meta;
    IF m.embedder_name IS NULL THEN
        RAISE EXCEPTION 'memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF name IS DISTINCT FROM m.embedder_name OR version IS DISTINCT FROM m.embedder_version
       OR dims IS DISTINCT FROM m.embedder_dims THEN
        RAISE EXCEPTION 'query embedded with %-v% (% dimensions), store built with %-v% (% dimensions); re-embed the query with %-v%, or re-embed the store',
            name, version, dims, m.embedder_name, m.embedder_version, m.embedder_dims,
            m.embedder_name, m.embedder_version
            USING ERRCODE = 'data_exception';
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_check_embedder(text, integer, integer) IS
'raises a clear error unless (name, version, dims) is the embedder recorded in memloom_meta';

CREATE FUNCTION memloom_check_vector(v vector) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    m memloom_meta;
BEGIN
    SELECT * INTO m FROM memloom_meta;
    IF m.embedder_name IS NULL THEN
        RAISE EXCEPTION 'memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF v IS NULL THEN
        RAISE EXCEPTION 'embedding is null; embed the text with %-v% first', m.embedder_name, m.embedder_version
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF vector_dims(v) <> m.embedder_dims THEN
        RAISE EXCEPTION 'query embedded with % dimensions, store built with %-v% (% dimensions); re-embed the query with %-v%, or re-embed the store',
            vector_dims(v), m.embedder_name, m.embedder_version, m.embedder_dims,
            m.embedder_name, m.embedder_version
            USING ERRCODE = 'data_exception';
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_check_vector(vector) IS
'raises a clear error unless the vector has the dimensions of the store''s embedder';

