-- memloom schema 33: the pool's HNSW index holds the active versions only.
--
-- memloom_ensure_vector_index builds memloom_items_embedding WHERE status = 'active': the rows
-- a recall without as_of searches. Every superseded version was in the graph too, where it
-- only took places among the search's candidates. On an embedded store that imported 25,000
-- keys x 4 versions (100,000 rows, 25,000 active), the vector arm's top 10 held 57% of the
-- exact top 10 with the full index and 87% with the partial one, in the same time; the build
-- took 13 to 14 s instead of 50, the index 33 MB instead of 130. A supersede no longer inserts
-- the old version's new row into the graph (remember of a new version 0.79x there).
-- memloom_vector_arm searches exactly when as_of is given (the versions valid then include
-- superseded ones the index does not hold), as it does without the index.
-- An index built before this schema keeps all rows and still works (as_of now searches
-- exactly with it too); DROP INDEX memloom_items_embedding, then SELECT
-- memloom_ensure_vector_index(), builds the partial one. docs/BENCHMARKS.md "The vector index
-- holds the active versions (schema 33)".

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
        -- supersede. An as_of recall searches exactly (memloom_vector_arm).
        CREATE INDEX memloom_items_embedding ON memloom_items USING hnsw (embedding vector_cosine_ops)
            WHERE status = 'active';
        built := true;
    END IF;
    IF to_regclass('memloom_entities_embedding') IS NULL THEN
        CREATE INDEX memloom_entities_embedding ON memloom_entities USING hnsw (embedding vector_cosine_ops);
        built := true;
    END IF;
    RETURN built;
END
$$;
COMMENT ON FUNCTION memloom_ensure_vector_index() IS
'builds the HNSW cosine indexes on memloom_items.embedding (its active rows) and memloom_entities.embedding when missing (the store must be initialised, at most 2000 dimensions); returns whether it built one';

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
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- Planned per call, so with as_of, since and until NULL the time filter folds to
    -- status = 'active' (memloom_visible, 03_pool.sql).
    -- The HNSW index holds the active versions only (sql/0033): a recall as of an instant,
    -- which sees versions superseded since, searches exactly.
    IF as_of IS NOT NULL OR to_regclass('memloom_items_embedding') IS NULL THEN
        -- Exact: the lim nearest by (distance, id), ties never by scan order.
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
END
$$;
COMMENT ON FUNCTION memloom_vector_arm(vector, text, integer, text[], timestamptz, timestamptz, timestamptz) IS
'the vector arm: the lim items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) nearest to q by cosine distance, through the HNSW index (the active rows) when there is one and as_of is NULL, else exactly (ties by id)';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 33);
