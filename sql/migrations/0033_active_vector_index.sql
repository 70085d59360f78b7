-- memloom schema 33: the pool's HNSW index holds the active versions only.
--
-- memloom_ensure_vector_index builds memloom_items_embedding WHERE status = 'active': the rows
-- a recall without as_of searches. Every superseded version was in the graph too, where it
-- only took places among the search's candidates. On an embedded store that imported 25,000
-- keys x 4 versions (100,000 rows, 25,000 active), the vector arm's top 10 held 57% of the
-- exact top 10 with the full index and 87% with the partial one, in the same time; the build
-- took 13 to 14 s instead of 50, the index 33 MB instead of 130. A supersede no longer inserts
-- the old version's new row into the graph (remember of a new version 0.78x there).
-- A recall as of an instant sees versions the index no longer holds: memloom_vector_arm takes
-- those valid then but not now through the new memloom_items_valid_to (namespace, valid_to),
-- searched exactly, and the active ones saved by then through the index, nearest first, until
-- it is past the lim-th nearest of the others.
-- An index built before this schema keeps all rows and still works (rebuilding it here would
-- hold a server's pool locked for minutes): memloom_vector_index_holds_history() tells, the
-- embedded npm store rebuilds it once, and on a server DROP INDEX memloom_items_embedding, then
-- SELECT memloom_ensure_vector_index(), builds the partial one.
-- docs/BENCHMARKS.md "The vector index holds the active versions (schema 33)".

-- The versions that stopped being valid (superseded, forgotten, removed chunks), by when.
CREATE INDEX memloom_items_valid_to ON memloom_items (namespace, valid_to) WHERE valid_to IS NOT NULL;

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
DECLARE
    cand_ids  bigint[];            -- as of an instant: those no longer valid, then the active
    cand_dist double precision[];
    bound     double precision;
    kept      integer := 0;
    r         record;
    seqscan   text;
    sort      text;
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- Planned per call, so with as_of, since and until NULL the time filter folds to
    -- status = 'active' (memloom_visible, 03_pool.sql).
    IF to_regclass('memloom_items_embedding') IS NULL THEN
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
'the vector arm: the lim items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) nearest to q by cosine distance, through the HNSW index when there is one (it holds the active rows; as of an instant, the versions no longer valid now but valid then are searched exactly beside it), else exactly (ties by id)';

-- Whether the pool's HNSW index holds every stored version, as one built before schema 33 does,
-- rather than the active ones only: the embedded npm store rebuilds such an index once.
CREATE FUNCTION memloom_vector_index_holds_history() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT i.indpred IS NULL FROM pg_catalog.pg_index i
                     WHERE i.indexrelid = to_regclass('memloom_items_embedding')), false)
$$;
COMMENT ON FUNCTION memloom_vector_index_holds_history() IS
'whether the pool''s HNSW index exists and holds every stored version (built before schema 33) instead of the active ones only';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 33);
