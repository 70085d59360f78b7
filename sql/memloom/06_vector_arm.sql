-- memloom, the current definition, part 6 of 12: the vector arm. The nearest active items by
-- cosine distance, through the HNSW index when the store has one (memloom_ensure_vector_index,
-- 01_store.sql), exactly otherwise.

CREATE FUNCTION memloom_vector_arm(q vector, ns text, lim integer, kinds text[])
RETURNS TABLE (id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
AS $$
#variable_conflict use_column
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- ef_search bounds how many neighbours HNSW returns; the iterative scan keeps going when
    -- the namespace/status/kind filter removes rows. Both are reset when the function returns.
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    RETURN QUERY
    SELECT a.id, a.distance FROM (
        SELECT m.id, m.embedding <=> q AS distance
        FROM memloom_items m
        WHERE m.namespace = ns AND m.status = 'active' AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY m.embedding <=> q
        LIMIT lim
    ) a
    ORDER BY a.distance, a.id;  -- relaxed_order may return neighbours slightly out of order
END
$$;
COMMENT ON FUNCTION memloom_vector_arm(vector, text, integer, text[]) IS
'the vector arm: the lim active items of the namespace (and kinds) nearest to q by cosine distance, through the HNSW index when there is one (exact otherwise)';

