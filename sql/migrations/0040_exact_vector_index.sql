-- memloom schema 40: the exact vector search reads the vectors, not the rows (issue 19: a small
-- store's recall).
--
-- Without HNSW (the embedded store below 20,000 active items) memloom_vector_arm searched by a
-- sequential scan of the pool: the Node docs' 4,377 active rows on 1,213 heap pages, each row
-- about 2 kB of text, tsvector and vector, to compute 4,377 cosine distances. A store without
-- HNSW now has memloom_items_exact, an IVFFlat index of one list over the active rows
-- (memloom_ensure_exact_index, built by memloom_init_store without vector_index and here for
-- an existing store): its scan computes every distance from the vectors alone (638 pages),
-- sorts them and reads the heap only for the rows it returns. The arm reads it in distance
-- order until no later row can enter its top (a margin for the float rounding between the
-- index's normalised inner product and the cosine distance), then takes the lim nearest by
-- (distance, id): the sequential scan's rows, ties included. memloom_ensure_vector_index drops
-- it when it builds HNSW. Measured (docs/BENCHMARKS.md "The exact vector search reads the
-- vectors (schema 40)"): the same ranked results; recall over the Node docs 0.88x paired.

CREATE OR REPLACE FUNCTION memloom_ensure_vector_index() RETURNS boolean
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
    ELSE
        PERFORM memloom_ensure_exact_index();
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'records the store''s embedder (refusing a different one), makes memloom_items.embedding and memloom_entities.embedding vector(dims) while they hold no other dimensions, stored in the row (memloom_vector_storage, sql/0014), drops the entities'' non-zero-dimension index memloom_entities_support for any embedder but hash (dense vectors: it would select every entity) and keeps it without planner statistics for hash, and with vector_index builds the HNSW indexes (dims <= 2000), without it the exact search''s index (memloom_ensure_exact_index); idempotent';


CREATE OR REPLACE FUNCTION memloom_vector_arm(
    q     vector,
    ns    text,
    lim   integer,
    kinds text[],
    as_of timestamptz DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL
) RETURNS TABLE (id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = 'force_custom_plan'
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
AS $$
#variable_conflict use_column
DECLARE
    cand_ids  bigint[];            -- as of an instant: those no longer valid, then the active
    cand_dist double precision[];
    bound     double precision;
    kept      integer := 0;
    r         record;
    seqscan   text;
    sort      text;
    bitmap    text;
    margin    double precision;
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- Planned per call, so with as_of, since and until NULL the time filter folds to
    -- status = 'active' (memloom_visible, 03_pool.sql).
    IF to_regclass('memloom_items_embedding') IS NULL THEN
        -- Exact: the lim nearest by (distance, id), ties never by scan order. Through the
        -- one-list IVFFlat index when the store has it (memloom_ensure_exact_index, 01_store.sql):
        -- it computes every active row's distance from the vectors alone and the heap is read
        -- only for the rows taken here (the Node docs: 638 pages instead of 1,213, the vector arm
        -- 0.9x). It serves a recall of today's active rows (no as_of, since, until or kinds: the
        -- sequential scan filters those as cheaply) in a namespace holding at least 500 of them
        -- (below, the two ways cost the same) and half of the store's (else most of what the
        -- index holds is another namespace's), for a query vector that is not zero (the index
        -- cannot normalise it).
        IF as_of IS NULL AND since IS NULL AND until IS NULL AND kinds IS NULL
           AND to_regclass('memloom_items_exact') IS NOT NULL AND vector_norm(q) > 0
           AND (SELECT s.doc_count >= 500 AND s.doc_count * 2 >= (SELECT sum(t.doc_count) FROM memloom_namespace_stats t)
                FROM memloom_namespace_stats s WHERE s.namespace = ns) THEN
            -- The index orders by the inner product of the normalised vectors, the same order
            -- as the cosine distance up to float rounding: at most about 3 n 2^-24 apart for n
            -- dimensions (float sums of n products). So once a row's distance is more than the
            -- margin (twice that, and 2.8x to spare) past the largest distance taken, no later
            -- row can come before what was taken: the lim nearest by (distance, id) are among
            -- the rows taken, ties included, and are those of the sequential scan.
            margin := vector_dims(q) * 1e-6;
            seqscan := current_setting('enable_seqscan');
            sort := current_setting('enable_sort');
            bitmap := current_setting('enable_bitmapscan');
            PERFORM set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true),
                    set_config('enable_bitmapscan', 'off', true);
            cand_ids := '{}';
            cand_dist := '{}';
            FOR r IN SELECT m.id, m.embedding <=> q AS distance
                     FROM memloom_items m
                     WHERE m.namespace = ns AND m.status = 'active'
                     ORDER BY m.embedding <=> q LOOP
                EXIT WHEN kept >= lim AND r.distance - margin > bound;
                cand_ids := cand_ids || r.id;
                cand_dist := cand_dist || r.distance;
                bound := greatest(bound, r.distance);
                kept := kept + 1;
            END LOOP;
            PERFORM set_config('enable_seqscan', seqscan, true), set_config('enable_sort', sort, true),
                    set_config('enable_bitmapscan', bitmap, true);
            IF kept >= lim THEN
                RETURN QUERY
                SELECT u.id, u.distance FROM unnest(cand_ids, cand_dist) AS u(id, distance)
                ORDER BY u.distance, u.id
                LIMIT lim;
                RETURN;
            END IF;
            -- Fewer than lim: the namespace has fewer rows than that, or rows whose vector is
            -- zero (the index does not hold them): the sequential scan below finds them all.
        END IF;
        RETURN QUERY
        SELECT m.id, m.embedding <=> q AS distance
        FROM memloom_items m
        WHERE m.namespace = ns AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY m.embedding <=> q, m.id
        LIMIT lim;
        RETURN;
    END IF;
    -- ef_search bounds how many neighbours HNSW returns; the iterative scan keeps going when
    -- the namespace/time/kind filter removes rows. Both are reset when the function returns.
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    IF as_of IS NULL THEN
        RETURN QUERY
        SELECT a.id, a.distance FROM (
            SELECT m.id, m.embedding <=> q AS distance
            FROM memloom_items m
            WHERE m.namespace = ns AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
              AND (kinds IS NULL OR m.kind = ANY (kinds))
            ORDER BY m.embedding <=> q
            LIMIT lim
        ) a
        ORDER BY a.distance, a.id;  -- relaxed_order may return neighbours slightly out of order
        RETURN;
    END IF;
    -- As of an instant, the versions valid then are those that stopped being valid after it
    -- (superseded, forgotten or removed since: memloom_items_valid_to finds them by when; searched
    -- exactly) and the active ones saved by then, which the HNSW index holds (only those,
    -- sql/0033). The two are disjoint: valid_to is NULL exactly for the active rows. The index
    -- gives the active versions nearest first, and those saved after the instant are skipped
    -- here rather than filtered inside its scan, so the walk ends once it is past the lim-th
    -- nearest of the others: filtered to a few old rows, the scan walked up to
    -- hnsw.max_scan_tuples rows before it gave up (0.3 s on an embedded store).
    SELECT coalesce(array_agg(h.id ORDER BY h.distance, h.id), '{}'),
           coalesce(array_agg(h.distance ORDER BY h.distance, h.id), '{}')
      INTO cand_ids, cand_dist
    FROM (SELECT m.id, m.embedding <=> q AS distance
          FROM memloom_items m
          WHERE m.namespace = ns AND m.valid_to > as_of
            AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
            AND (kinds IS NULL OR m.kind = ANY (kinds))
          ORDER BY m.embedding <=> q, m.id
          LIMIT lim) h;
    bound := CASE WHEN cardinality(cand_ids) >= lim THEN cand_dist[lim] END;  -- NULL: no bound
    -- The walk below is read a row at a time: through the index, never a sort of every active
    -- row (the planner's choice for a large LIMIT); the caller's settings are put back after.
    seqscan := current_setting('enable_seqscan');
    sort := current_setting('enable_sort');
    PERFORM set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true);
    FOR r IN SELECT m.id, m.embedding <=> q AS distance, m.valid_from
             FROM memloom_items m
             WHERE m.namespace = ns AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, NULL, since, until)
               AND (kinds IS NULL OR m.kind = ANY (kinds))
             ORDER BY m.embedding <=> q
             LIMIT 20000 LOOP  -- pgvector's hnsw.max_scan_tuples: an iterative scan stops there
        EXIT WHEN r.distance > bound;
        CONTINUE WHEN r.valid_from > as_of;
        cand_ids := cand_ids || r.id;
        cand_dist := cand_dist || r.distance;
        kept := kept + 1;
        EXIT WHEN kept >= lim;
    END LOOP;
    PERFORM set_config('enable_seqscan', seqscan, true), set_config('enable_sort', sort, true);
    RETURN QUERY
    SELECT u.id, u.distance FROM unnest(cand_ids, cand_dist) AS u(id, distance)
    ORDER BY u.distance, u.id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_vector_arm(vector, text, integer, text[], timestamptz, timestamptz, timestamptz) IS
'the vector arm: the lim items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) nearest to q by cosine distance, through the HNSW index when there is one (it holds the active rows; as of an instant, the versions no longer valid now but valid then are searched exactly beside it), else exactly (ties by id; today''s active rows of a namespace holding most of them through the one-list IVFFlat index memloom_items_exact when the store has it)';


-- An existing store without HNSW (below 20,000 active items on the embedded store) gets the
-- index now: about 0.2 s for the Node docs' 4,377 rows on PGlite.
SELECT memloom_ensure_exact_index();

UPDATE memloom_meta SET schema_version = greatest(schema_version, 40);
