-- memloom, the current definition, part 7 of 12: the entity arm.
--
-- score(item) = sum over anchored entities e it mentions of
--     ((sim(q, e) - gate) / (1 - gate))^2     similarity above the gate, sharpened
--   * strength(item, e)                       how much the item is about e
--   * ln(1 + N / df(e))                       rarity: N active items, df of them mention e
-- Anchored entities: among the lim nearest, those with sim >= gate and within 0.10 of the
-- nearest one. hash-v1 gives unrelated short names similarities of 0.6 to 0.8 through hash
-- collisions; when the query names an entity exactly (sim near 1) those are dropped, and
-- ubiquitous entities (javascript, node.js) weigh little against the rare ones a query names.
--
-- What it reads: per anchored entity only its per_entity strongest mentions of active items
-- (index memloom_mentions_strength, ties by item id as the final order): node.js is mentioned
-- by 68k items at 1M, and joining every mention took 1.4 s for a query naming it. df(e) comes
-- from memloom_entity_stats (04_statistics.sql); an entity without a row is counted on the
-- spot, up to df_cap mentions. Planned per call, like the keyword arm.

CREATE FUNCTION memloom_entity_arm(q vector, ns text, lim integer, gate double precision, kinds text[])
RETURNS TABLE (id bigint, score double precision)
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
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    RETURN QUERY
    WITH near AS (
        -- Nearest entities first (HNSW), then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT n.id, 1 - n.distance AS sim FROM (
            SELECT en.id, en.embedding <=> q AS distance
            FROM memloom_entities en
            WHERE en.namespace = ns
            ORDER BY en.embedding <=> q
            LIMIT lim
        ) n
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
        WHERE mt.entity_id = wt.id AND m.namespace = ns AND m.status = 'active'
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY mt.strength DESC, mt.item_id
        LIMIT per_entity
    ) e
    GROUP BY e.item_id
    ORDER BY score DESC, e.item_id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[]) IS
'the entity arm: the entities of the namespace nearest q with cosine similarity >= gate and within 0.10 of the nearest, then, per entity, its strongest mentions by active items (at most greatest(2 lim, 20)), ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df) (df from memloom_entity_stats); no entity above the gate, no rows';

