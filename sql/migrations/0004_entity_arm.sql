-- memloom schema 4: the entity arm ranks items by entity similarity, mention strength and entity
-- rarity (inverse frequency across the namespace), and anchors only to the entities nearest
-- the query; an in-place change of an item's content marks it for re-indexing.
-- (0003 is reserved for the edge worker's tokens; the two are independent.)

UPDATE memloom_meta SET schema_version = greatest(schema_version, 4);

-- Re-indexing ----------------------------------------------------------------------------------
CREATE FUNCTION memloom_items_reindex_on_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.content IS DISTINCT FROM OLD.content THEN
        NEW.indexed_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_items_reindex_on_change() IS
'trigger: an item whose content changes in place loses indexed_at, so the next index run re-extracts its entities';

CREATE TRIGGER memloom_items_reindex_on_change
    BEFORE UPDATE OF content ON memloom_items
    FOR EACH ROW EXECUTE FUNCTION memloom_items_reindex_on_change();

-- Entity arm -----------------------------------------------------------------------------------
-- score(item) = sum over anchored entities e it mentions of
--     ((sim(q, e) - gate) / (1 - gate))^2     similarity above the gate, sharpened
--   * strength(item, e)                       how much the item is about e
--   * ln(1 + N / df(e))                       rarity: N active items, df of them mention e
-- Anchored entities: among the lim nearest, those with sim >= gate and within 0.10 of the
-- nearest one. hash-v1 gives unrelated short names similarities of 0.6 to 0.8 through hash
-- collisions; when the query names an entity exactly (sim near 1) those are dropped, and
-- ubiquitous entities (javascript, node.js) weigh little against the rare ones a query names.
CREATE OR REPLACE FUNCTION memloom_entity_arm(q vector, ns text, lim integer, gate double precision, kinds text[])
RETURNS TABLE (id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
AS $$
#variable_conflict use_column
DECLARE
    margin  constant double precision := 0.10;  -- anchored: within this of the nearest entity
    n_items double precision;
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
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
    ), edges AS (
        SELECT mt.item_id, m.kind, a.sim, mt.strength,
               count(*) OVER (PARTITION BY mt.entity_id) AS df
        FROM anchored a
        JOIN memloom_mentions mt ON mt.entity_id = a.id
        JOIN memloom_items m ON m.id = mt.item_id
        WHERE m.namespace = ns AND m.status = 'active'
    )
    SELECT e.item_id,
           sum(power(greatest(e.sim - gate, 0) / greatest(1 - gate, 1e-6), 2)
               * e.strength * ln(1 + n_items / e.df)) AS score
    FROM edges e
    WHERE kinds IS NULL OR e.kind = ANY (kinds)
    GROUP BY e.item_id
    ORDER BY score DESC, e.item_id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[]) IS
'the entity arm: the entities of the namespace nearest q with cosine similarity >= gate and within 0.10 of the nearest, then the active items mentioning them, ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df); no entity above the gate, no rows';
