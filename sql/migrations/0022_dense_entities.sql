-- memloom schema 22: no non-zero-dimension index for dense vectors. 0019 indexed each entity's
-- non-zero dimensions (memloom_entities_support) so that the entity arm's exact search (no HNSW
-- index: the embedded store) reads only the entities sharing one with the query. That narrows
-- the search for hash-v1, whose features touch a few dozen of 256 dimensions; static-v1 and
-- static-v2 vectors have 256 non-zero dimensions of 512 and an API model's all of them, so the
-- index selected every entity and cost its upkeep: on the Node docs with static-v2, `index`
-- took 11.3 s with it and 6.1 s without. memloom_init_store now drops it for every embedder but
-- hash, stores already built with one drop it here, and the entity arm takes the exact scan
-- when the index is absent. Same results (the index only ever narrowed to entities that could
-- pass the gate). No table changes.

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
    IF memloom_init_store.embedder_name <> 'hash' AND to_regclass('memloom_entities_support') IS NOT NULL THEN
        DROP INDEX memloom_entities_support;
    END IF;
    IF vector_index THEN
        PERFORM memloom_ensure_vector_index();
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'records the store''s embedder (refusing a different one), makes memloom_items.embedding and memloom_entities.embedding vector(dims) while they hold no other dimensions, stored in the row (memloom_vector_storage, sql/0014), drops the entities'' non-zero-dimension index memloom_entities_support for any embedder but hash (dense vectors: it would select every entity), and with vector_index builds the HNSW indexes (dims <= 2000); idempotent';


CREATE OR REPLACE FUNCTION memloom_entity_arm(
    q     vector,
    ns    text,
    lim   integer,
    gate  double precision,
    kinds text[],
    as_of timestamptz DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL
) RETURNS TABLE (id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
SET plan_cache_mode = 'force_custom_plan'
AS $$
#variable_conflict use_column
DECLARE
    margin     constant double precision := 0.10;  -- anchored: within this of the nearest entity
    df_cap     constant integer := 10000;          -- live df count for entities without stats
    per_entity integer;
    n_items    double precision;
    q_support  integer[];         -- set: only entities sharing a non-zero dimension with q
    near_ids   bigint[];
    near_dist  double precision[];
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    IF gate > 0 AND to_regclass('memloom_entities_embedding') IS NULL
       AND to_regclass('memloom_entities_support') IS NOT NULL THEN
        -- Exact search without the HNSW index: the lim + 1 nearest of the entities that can pass
        -- the gate (memloom_entities_support). A tie across the lim-th place that passes the gate
        -- would make the choice depend on the scan order: then the full scan below decides.
        q_support := memloom_vector_support(q);
        SELECT array_agg(n.id ORDER BY n.distance), array_agg(n.distance ORDER BY n.distance)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns AND memloom_vector_support(en.embedding) && q_support
              ORDER BY en.embedding <=> q
              LIMIT lim + 1) n;
        IF cardinality(near_ids) > lim AND near_dist[lim + 1] = near_dist[lim] AND 1 - near_dist[lim] >= gate THEN
            q_support := NULL;
        END IF;
    END IF;
    RETURN QUERY
    WITH near AS (
        -- Nearest entities first (HNSW), then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT n.id, 1 - n.distance AS sim FROM (
            SELECT en.id, en.embedding <=> q AS distance
            FROM memloom_entities en
            WHERE q_support IS NULL AND en.namespace = ns
            ORDER BY en.embedding <=> q
            LIMIT lim
        ) n
        UNION ALL
        SELECT u.id, 1 - u.distance FROM unnest(near_ids[1:lim], near_dist[1:lim]) AS u(id, distance)
        WHERE q_support IS NOT NULL
    ), anchored AS (
        SELECT near.id, near.sim FROM near
        WHERE near.sim >= gate AND near.sim >= (SELECT max(x.sim) FROM near x) - margin
    ), weighted AS MATERIALIZED (  -- once per entity, not per mention
        SELECT a.id,
               power(greatest(a.sim - gate, 0) / greatest(1 - gate, 1e-6), 2)
                 * ln(1 + n_items / greatest(coalesce(
                       (SELECT s.df FROM memloom_entity_stats s WHERE s.entity_id = a.id),
                       (SELECT count(*) FROM (
                            SELECT 1 FROM memloom_mentions mt JOIN memloom_items m ON m.id = mt.item_id
                            WHERE mt.entity_id = a.id AND m.namespace = ns AND m.status = 'active'
                            LIMIT df_cap) c)), 1)) AS w
        FROM anchored a
    )
    SELECT e.item_id, sum(wt.w * e.strength) AS score
    FROM weighted wt
    CROSS JOIN LATERAL (
        SELECT mt.item_id, mt.strength::double precision AS strength
        FROM memloom_mentions mt
        JOIN memloom_items m ON m.id = mt.item_id
        WHERE mt.entity_id = wt.id AND m.namespace = ns
          AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY mt.strength DESC, mt.item_id
        LIMIT per_entity
    ) e
    GROUP BY e.item_id
    ORDER BY score DESC, e.item_id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[], timestamptz, timestamptz, timestamptz) IS
'the entity arm: the entities of the namespace nearest q with cosine similarity >= gate and within 0.10 of the nearest, then, per entity, its strongest mentions by the items a recall sees (memloom_visible: active, or valid at as_of; event time between since and until; at most greatest(2 lim, 20)), ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df) (df from memloom_entity_stats, the current statistics also for an as_of in the past); no entity above the gate, no rows';


DO $$
BEGIN
    IF (SELECT m.embedder_name FROM memloom_meta m) <> 'hash' AND to_regclass('memloom_entities_support') IS NOT NULL THEN
        DROP INDEX memloom_entities_support;
    END IF;
END
$$;

UPDATE memloom_meta SET schema_version = greatest(schema_version, 22);
