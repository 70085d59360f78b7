-- memloom, the current definition, part 6: the vector arm. The nearest active items by
-- cosine distance, through the HNSW index when the store has one (memloom_ensure_vector_index,
-- 01_store.sql; it holds the active rows), exactly otherwise (through the one-list IVFFlat
-- index memloom_items_exact when it can serve, memloom_ensure_exact_index: sql/0040).
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
        -- The index path's statements keep one generic plan per session: they name no time
        -- filter to fold, and planning them per call cost the arm about 0.3 ms of 2.8 (sql/0042).
        -- The function's SET clause restores plan_cache_mode when it returns.
        PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
        -- Exact: the lim nearest by (distance, id), ties never by scan order. Through the
        -- one-list IVFFlat index when the store has it (memloom_ensure_exact_index, 01_store.sql):
        -- it computes every active row's distance from the vectors alone and the heap is read
        -- only for the rows taken here (the Node docs: 628 pages instead of 1,213, the vector arm
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
        PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
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

