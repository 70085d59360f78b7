-- memloom, the current definition, part 6: the vector arm. The nearest active items by
-- cosine distance, through the HNSW index when the store has one (memloom_ensure_vector_index,
-- 01_store.sql; its active rows), exactly otherwise and as of an instant.
--
-- The exact search takes the lim nearest by (distance, id): which of several items at one
-- distance (the same text saved twice, duplicate chunks) make the cut then never depends on
-- the order the scan meets them in, so a deeper search starts with a shallower one's rows and
-- memloom_fuse takes its votes and its tail from one call (sql/0030). Before, a top-lim by
-- distance alone kept the ties met first, and a limit of 21 and one of 50 could end in
-- different copies.

CREATE FUNCTION memloom_vector_arm(
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

