-- memloom schema 45: an index run's prune reads indexes, not the tables' rows.
--
-- Every entity index run (`memloom index`, `ingest --index`, an import's index step) ends with
-- memloom_prune_index, which deletes the mentions of superseded items and the entities nothing
-- mentions any more. Most runs have nothing to remove, yet it read the namespace's whole items
-- heap to find the superseded items, and every entity row (each holds its vector) to find the
-- orphans: on the Node docs store (4,405 items, 8,644 entities) 2,601 pages for a run that
-- indexed nothing, more than the rest of the run. Now a superseded item is found through
-- memloom_items_valid_to (status <> 'active' is valid_to IS NOT NULL, by the items' CHECK), and
-- the orphans' ids through the entities' (namespace, id) index before their rows are deleted:
-- 249 pages for the same run. The same rows are deleted.

CREATE OR REPLACE FUNCTION memloom_prune_index(ns text) RETURNS TABLE (mentions integer, entities integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n_ment integer;
    n_ent  integer;
BEGIN
    -- Superseded items keep no mentions, and entities nothing mentions go. Every run pays
    -- this, most with nothing to remove, so it reads indexes, not the tables' rows (sql/0045):
    -- a superseded item is one with a valid_to (the items' CHECK), found through
    -- memloom_items_valid_to; the entities' ids come from memloom_entities_namespace_id and
    -- only the orphans' rows are read (an entity row holds its vector: scanning them read
    -- 1,235 pages of the Node docs store to delete none).
    DELETE FROM memloom_mentions mt USING memloom_items m
    WHERE m.id = mt.item_id AND m.namespace = ns AND m.valid_to IS NOT NULL AND m.status <> 'active';
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    DELETE FROM memloom_entities e WHERE e.namespace = ns AND e.id = ANY (ARRAY(
        SELECT x.id FROM memloom_entities x WHERE x.namespace = ns
          AND NOT EXISTS (SELECT 1 FROM memloom_mentions mt WHERE mt.entity_id = x.id)));
    GET DIAGNOSTICS n_ent = ROW_COUNT;
    RETURN QUERY SELECT n_ment, n_ent;
END
$$;
COMMENT ON FUNCTION memloom_prune_index(text) IS
'after an index run: deletes the mentions of the namespace''s superseded items and the entities nothing mentions any more. Returns the mentions and entities removed.';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 45);
