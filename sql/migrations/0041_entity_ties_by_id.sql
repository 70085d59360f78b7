-- memloom schema 41: the entity arm's exact search breaks ties by id (issue 19: a small store's
-- recall, and results that do not depend on the scan order).
--
-- Without the entities' HNSW index the arm took the lim nearest entities by distance alone: of
-- several tied across the lim-th place, a top-lim sort kept those it happened to read first. The
-- search over the entities that can pass the gate (sql/0039) reads other rows than a scan of every
-- entity, so when a tie across the lim-th place passed the gate it ran that full scan to keep its
-- choice: 10 of the Node docs' 90 queries (hash-v1: short entity names share vectors), each
-- reading all 8,604 entities. Both exact searches now order by (distance, id): every entity that
-- passes the gate is among the candidates and comes before every one that fails, so the
-- candidates give the full scan's entities, ties included, and the fallback is gone. The choice
-- among tied entities is now the smallest ids, the same on any copy of the store (a dump
-- reloaded, a VACUUM FULL), not the heap order's. With HNSW nothing changes.

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
    q_support  integer[];         -- set: only entities holding one of these position-pair codes
    near_ids   bigint[];
    near_dist  double precision[];
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    -- The namespace's statistics: a primary-key read, the same plan whatever the values, so
    -- one generic plan per session on any pool (sql/0032). The function's SET clause restores
    -- plan_cache_mode when it returns.
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    -- The searches below are planned per call, but on a small pool searched exactly
    -- (memloom_small_pool, 03_pool.sql), where they keep their generic plans too. Not with the
    -- entities' HNSW index, where a plan made without the limit could prefer an exact scan and
    -- find other neighbours than the index's.
    IF to_regclass('memloom_entities_embedding') IS NOT NULL OR NOT memloom_small_pool() THEN
        PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
    END IF;
    IF gate > 0 AND to_regclass('memloom_entities_embedding') IS NULL
       AND to_regclass('memloom_entities_support') IS NOT NULL THEN
        -- Exact search without the HNSW index: the lim nearest by (distance, id) of the entities
        -- that can pass the gate (memloom_entities_support, memloom_gate_pairs). Every entity
        -- that passes is among them, and by (distance, id) all that pass come before any that
        -- fails, so those that pass among the first lim are a scan of every entity's (sql/0041:
        -- before, a tie across the lim-th place sent the search to that scan, 10 of the Node
        -- docs' 90 queries, to let its scan order choose).
        q_support := memloom_gate_pairs(q, gate);
        SELECT array_agg(n.id ORDER BY n.distance, n.id), array_agg(n.distance ORDER BY n.distance, n.id)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns AND memloom_vector_pairs(en.embedding) && q_support
              ORDER BY en.embedding <=> q, en.id
              LIMIT lim) n;
    ELSIF to_regclass('memloom_entities_embedding') IS NULL THEN
        -- Exact search of every entity (dense vectors: no support index), ties by id as above.
        SELECT array_agg(n.id ORDER BY n.distance, n.id), array_agg(n.distance ORDER BY n.distance, n.id)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns
              ORDER BY en.embedding <=> q, en.id
              LIMIT lim) n;
    ELSE
        -- Nearest entities first through HNSW, then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT array_agg(n.id ORDER BY n.distance), array_agg(n.distance ORDER BY n.distance)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns
              ORDER BY en.embedding <=> q
              LIMIT lim) n;
    END IF;
    -- The nearest entity fails the gate: none passes, no rows, and the mentions' statement is
    -- not planned at all (most queries name no entity).
    IF near_ids IS NULL OR NOT (1 - near_dist[1] >= gate) THEN RETURN; END IF;
    RETURN QUERY
    WITH near AS (
        SELECT u.id, 1 - u.distance AS sim FROM unnest(near_ids[1:lim], near_dist[1:lim]) AS u(id, distance)
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
'the entity arm: the entities of the namespace nearest q (without HNSW exactly, ties by id) with cosine similarity >= gate and within 0.10 of the nearest, then, per entity, its strongest mentions by the items a recall sees (memloom_visible: active, or valid at as_of; event time between since and until; at most greatest(2 lim, 20)), ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df) (df from memloom_entity_stats, the current statistics also for an as_of in the past); no entity above the gate, no rows';


UPDATE memloom_meta SET schema_version = greatest(schema_version, 41);
