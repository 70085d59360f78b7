-- memloom schema 12: references that stay inside their namespace, planner estimates that say
-- nothing about other tenants, and forgetting a whole namespace (issue 15).
--
-- 1. Composite (namespace, id) keys for every cross-row reference. Until now supersedes /
--    superseded_by, a mention's item and entity and an entity statistic's entity named a bare
--    id, and foreign-key checks ignore row-level security: a tenant could learn whether an id
--    of another namespace exists (the check passed or failed) and point a row of its own at
--    it, after which the other tenant's forget failed. Each reference now includes the
--    namespace: a row of namespace a can only reference a row of namespace a, and the check
--    fails alike for an id of another namespace and for one that does not exist.
--    memloom_mentions gains a namespace column (its policy now compares it, like the other
--    tables'); a writer that leaves it out gets the item's (a trigger, as the session sees it:
--    under row-level security another namespace's item is not found, and the insert fails as
--    a foreign-key violation, like one naming a deleted item).
--    Existing rows: mentions get their item's namespace; references that crossed namespaces
--    (only hand-written or hostile SQL made them) are unlinked or deleted, with a NOTICE of
--    the counts, before the new constraints validate every row.
-- 2. No planner statistics on the columns that name a tenant or its content (namespace, key,
--    source, breadcrumb, content, entity names, lexemes, grants). Under row-level security
--    PostgreSQL still estimates leakproof comparisons (text =) from the table's statistics, so
--    a tenant's `EXPLAIN SELECT ... WHERE namespace = 'team-b'` showed whether team-b exists
--    and roughly how large it is. memloom_hide_planner_statistics() sets their statistics
--    target to 0 (ANALYZE gathers nothing for them), deletes what was gathered, and gives the
--    namespace columns one fixed estimate derived from no data (every namespace = the whole
--    table), so the recall arms keep their HNSW and GIN plans. pg_statistic is a superuser's:
--    this migration runs it when it runs as one (PGlite, most servers) and otherwise warns,
--    changing nothing (statistics target 0 alone would make recall 12x slower).
-- 3. memloom_forget_namespace(ns): a whole namespace in one transaction (docs/SECURITY.md,
--    "Erasure").

UPDATE memloom_meta SET schema_version = greatest(schema_version, 12);

-- 1. Composite keys ----------------------------------------------------------------------------
-- The targets: (namespace, id) is unique because id is.
ALTER TABLE memloom_items ADD CONSTRAINT memloom_items_namespace_id UNIQUE (namespace, id);
ALTER TABLE memloom_entities ADD CONSTRAINT memloom_entities_namespace_id UNIQUE (namespace, id);

ALTER TABLE memloom_mentions ADD COLUMN namespace text;
COMMENT ON COLUMN memloom_mentions.namespace IS
'the namespace of the mention''s item and entity (both foreign keys include it); filled from the item when an insert leaves it out';

-- Existing data. The backfill changes no counted value, so the statistics trigger is off for
-- it (it would record every mention twice for nothing); the repairs below are counted.
DO $$
DECLARE
    n_sup  bigint;
    n_supb bigint;
    n_ment bigint;
    n_stat bigint;
    nss    text[];
BEGIN
    UPDATE memloom_items i SET supersedes = NULL
      FROM memloom_items o WHERE o.id = i.supersedes AND o.namespace <> i.namespace;
    GET DIAGNOSTICS n_sup = ROW_COUNT;
    UPDATE memloom_items i SET superseded_by = NULL
      FROM memloom_items o WHERE o.id = i.superseded_by AND o.namespace <> i.namespace;
    GET DIAGNOSTICS n_supb = ROW_COUNT;
    ALTER TABLE memloom_mentions DISABLE TRIGGER memloom_mentions_stats_update;
    UPDATE memloom_mentions mt SET namespace = i.namespace FROM memloom_items i WHERE i.id = mt.item_id;
    ALTER TABLE memloom_mentions ENABLE TRIGGER memloom_mentions_stats_update;
    DELETE FROM memloom_mentions mt USING memloom_entities e
     WHERE e.id = mt.entity_id AND e.namespace <> mt.namespace;
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    WITH d AS (
        DELETE FROM memloom_entity_stats s USING memloom_entities e
         WHERE e.id = s.entity_id AND e.namespace <> s.namespace
        RETURNING e.namespace
    )
    SELECT count(*), array_agg(DISTINCT d.namespace) INTO n_stat, nss FROM d;
    IF nss IS NOT NULL THEN  -- the entities whose row was planted get theirs back
        PERFORM memloom_refresh_entity_stats(x) FROM unnest(nss) AS x;
    END IF;
    IF n_sup + n_supb + n_ment + n_stat > 0 THEN
        RAISE NOTICE 'memloom 0012: removed references across namespaces: % supersedes, % superseded_by, % mentions, % entity statistics',
            n_sup, n_supb, n_ment, n_stat;
    END IF;
END
$$;
ALTER TABLE memloom_mentions ALTER COLUMN namespace SET NOT NULL;

-- The references, under their old names (a violation reads as before), validated here.
ALTER TABLE memloom_items
    DROP CONSTRAINT memloom_items_supersedes_fkey,
    DROP CONSTRAINT memloom_items_superseded_by_fkey,
    ADD CONSTRAINT memloom_items_supersedes_fkey
        FOREIGN KEY (namespace, supersedes) REFERENCES memloom_items (namespace, id),
    ADD CONSTRAINT memloom_items_superseded_by_fkey
        FOREIGN KEY (namespace, superseded_by) REFERENCES memloom_items (namespace, id);
ALTER TABLE memloom_mentions
    DROP CONSTRAINT memloom_mentions_entity_id_fkey,
    DROP CONSTRAINT memloom_mentions_item_id_fkey,
    ADD CONSTRAINT memloom_mentions_entity_id_fkey
        FOREIGN KEY (namespace, entity_id) REFERENCES memloom_entities (namespace, id) ON DELETE CASCADE,
    ADD CONSTRAINT memloom_mentions_item_id_fkey
        FOREIGN KEY (namespace, item_id) REFERENCES memloom_items (namespace, id) ON DELETE CASCADE;
ALTER TABLE memloom_entity_stats
    DROP CONSTRAINT memloom_entity_stats_entity_id_fkey,
    ADD CONSTRAINT memloom_entity_stats_entity_id_fkey
        FOREIGN KEY (namespace, entity_id) REFERENCES memloom_entities (namespace, id) ON DELETE CASCADE;

-- An entity statistic's key is its entity id alone (the statistics commit upserts on it), and a
-- unique violation is reported before a foreign-key one: a tenant inserting a row for another
-- namespace's entity id would learn from "duplicate key" that the id exists. The entity is
-- looked up first, as the session sees it, so that insert fails as for an id that does not
-- exist.
CREATE FUNCTION memloom_entity_stats_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM memloom_entities e WHERE e.id = NEW.entity_id AND e.namespace = NEW.namespace) THEN
        RAISE EXCEPTION 'no entity % in namespace %', NEW.entity_id, quote_literal(NEW.namespace)
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_entity_stats_check() IS
'trigger: an entity statistic must name an entity of its namespace that the session can see, checked before the row''s unique key (so no tenant learns another''s entity ids from a duplicate key)';
CREATE TRIGGER memloom_entity_stats_check BEFORE INSERT OR UPDATE OF entity_id, namespace ON memloom_entity_stats
    FOR EACH ROW EXECUTE FUNCTION memloom_entity_stats_check();

-- A mention's namespace when the writer leaves it out: its item's, as this session sees it.
CREATE FUNCTION memloom_mentions_namespace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.namespace := (SELECT i.namespace FROM memloom_items i WHERE i.id = NEW.item_id);
    IF NEW.namespace IS NULL THEN
        -- As the foreign key would say, whether the item is another namespace's or gone.
        RAISE EXCEPTION 'no item % to mention in this session''s namespace', NEW.item_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_mentions_namespace() IS
'trigger: a mention inserted without a namespace gets its item''s; an item the session cannot see (another namespace''s, or deleted) fails the insert as a foreign-key violation';
CREATE TRIGGER memloom_mentions_namespace BEFORE INSERT ON memloom_mentions
    FOR EACH ROW WHEN (NEW.namespace IS NULL) EXECUTE FUNCTION memloom_mentions_namespace();

-- The mention's own namespace, like every other table's; the keys keep item and entity in it.
ALTER POLICY memloom_mentions_namespace ON memloom_mentions
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_mentions_namespace ON memloom_mentions IS
'a session sees and writes only the mentions of its namespace; the foreign keys (namespace, item_id) and (namespace, entity_id) keep both ends in it';

-- 2. No planner statistics that name a tenant ----------------------------------------------------
CREATE FUNCTION memloom_hide_planner_statistics() RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    tabs text[] := ARRAY['memloom_items', 'memloom_items', 'memloom_items', 'memloom_items',
                         'memloom_items', 'memloom_items', 'memloom_entities', 'memloom_entities',
                         'memloom_mentions', 'memloom_term_stats', 'memloom_term_stats',
                         'memloom_namespace_stats', 'memloom_entity_stats',
                         'memloom_namespace_grants', 'memloom_namespace_grants'];
    cols text[] := ARRAY['namespace', 'key', 'source', 'breadcrumb', 'content', 'content_hash',
                         'namespace', 'name', 'namespace', 'namespace', 'lexeme', 'namespace',
                         'namespace', 'namespace', 'role_name'];
    i integer;
BEGIN
    IF NOT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) THEN
        RAISE EXCEPTION 'memloom_hide_planner_statistics changes pg_statistic, which only a superuser may; run it as one'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR i IN 1 .. cardinality(tabs) LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS 0', tabs[i], cols[i]);
    END LOOP;
    -- ANALYZE skips such a column but keeps what it gathered before: removed here.
    DELETE FROM pg_catalog.pg_statistic s
     USING unnest(tabs, cols) AS x(t, c)
     JOIN pg_catalog.pg_attribute a ON a.attrelid = x.t::regclass AND a.attname = x.c
     WHERE s.starelid = a.attrelid AND s.staattnum = a.attnum;
    -- The arms filter by namespace; with no statistics at all the planner would take
    -- `namespace = ns` for 0.5% of the rows and prefer a namespace index and a sort to the
    -- HNSW and GIN indexes (12x slower on a large namespace). One fixed estimate instead,
    -- derived from no data: one distinct value, so every namespace is estimated at the whole
    -- table, the plans a store of one large namespace had. ANALYZE leaves these rows alone
    -- (statistics target 0).
    INSERT INTO pg_catalog.pg_statistic
        (starelid, staattnum, stainherit, stanullfrac, stawidth, stadistinct,
         stakind1, stakind2, stakind3, stakind4, stakind5,
         staop1, staop2, staop3, staop4, staop5, stacoll1, stacoll2, stacoll3, stacoll4, stacoll5)
    SELECT a.attrelid, a.attnum, false, 0, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    FROM pg_catalog.pg_attribute a
    WHERE a.attname = 'namespace'
      AND a.attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass, 'memloom_mentions'::regclass);
    RETURN cardinality(tabs);
END
$$;
COMMENT ON FUNCTION memloom_hide_planner_statistics() IS
'superuser only: stops ANALYZE from gathering statistics on the memloom columns that name tenants or their content (namespace, key, source, breadcrumb, content, entity names, lexemes, grants), deletes those gathered before, and gives the namespace columns one fixed estimate (every namespace = the whole table), so EXPLAIN shows a tenant nothing about other namespaces and recall keeps its index plans; returns the columns hidden. sql/0012 runs it when migrating as a superuser';

DO $$
BEGIN
    IF coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false) THEN
        PERFORM memloom_hide_planner_statistics();
    ELSE
        -- Statistics target 0 alone would lose the namespace estimates the recall plans need:
        -- without a superuser nothing changes, and the store says so.
        RAISE WARNING 'memloom 0012: EXPLAIN row estimates still show tenants which namespaces exist and their sizes; a superuser hides them with: SELECT memloom_hide_planner_statistics()';
    END IF;
END
$$;

-- 3. Forgetting a whole namespace ----------------------------------------------------------------
CREATE FUNCTION memloom_forget_namespace(ns text)
RETURNS TABLE (items integer, mentions integer, entities integer, statistics integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    k       text;
    n_items integer := 0;
    n_ment  integer := 0;
    n_ent   integer := 0;
    n_stat  integer := 0;
    n       integer;
    prev_bulk text;
BEGIN
    IF ns IS NULL OR ns = '' THEN
        RAISE EXCEPTION 'memloom_forget_namespace needs a namespace' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Only the caller's bound namespace (a tenant role's other namespaces are out of reach
    -- anyway, row-level security would just delete nothing: say so instead).
    PERFORM memloom_assert_namespace(ns);
    -- Every key's advisory lock, in key order, as memloom_remember and memloom_forget take
    -- one: a concurrent remember of a key either committed before (its rows are deleted
    -- below, in snapshots taken after the locks) or starts after this commits.
    FOR k IN SELECT DISTINCT i.key FROM memloom_items i
             WHERE i.namespace = ns AND i.key IS NOT NULL ORDER BY i.key LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(ns || chr(31) || k, 7));
    END LOOP;
    -- The statistics go with the namespace: deleted here, while the triggers only mark it (a
    -- bulk write, sql/0009) instead of recording every lexeme it held; the commit then finds
    -- no statistics row to mark. The caller's setting is restored for the rest of its
    -- transaction.
    prev_bulk := current_setting('memloom.stats_bulk', true);
    PERFORM set_config('memloom.stats_bulk', 'on', true);
    DELETE FROM memloom_term_stats s WHERE s.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    n_stat := n_stat + n;
    DELETE FROM memloom_entity_stats s WHERE s.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    n_stat := n_stat + n;
    DELETE FROM memloom_namespace_stats s WHERE s.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    n_stat := n_stat + n;
    DELETE FROM memloom_mentions m WHERE m.namespace = ns;
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    DELETE FROM memloom_items i WHERE i.namespace = ns;  -- the version chains in one statement
    GET DIAGNOSTICS n_items = ROW_COUNT;
    DELETE FROM memloom_entities e WHERE e.namespace = ns;
    GET DIAGNOSTICS n_ent = ROW_COUNT;
    PERFORM set_config('memloom.stats_bulk', coalesce(prev_bulk, ''), true);
    -- The planner's statistics sample values and lexemes of the pool (pg_statistic, most
    -- common elements of tsv): sampled again here, in this transaction's snapshot, so they
    -- hold nothing of the namespace once it commits. Only the owner may ANALYZE; under a
    -- tenant role the next ANALYZE (autovacuum) does it.
    IF pg_catalog.pg_has_role(current_user,
           (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = 'memloom_items'::regclass), 'USAGE')
       OR coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) THEN
        ANALYZE memloom_items, memloom_entities, memloom_mentions;
    END IF;
    RETURN QUERY SELECT n_items, n_ment, n_ent, n_stat;
END
$$;
COMMENT ON FUNCTION memloom_forget_namespace(text) IS
'forgets namespace ns entirely in one transaction: its items (every version), mentions, entities and keyword and entity statistics, under every key''s advisory lock, then ANALYZEs the pool tables when the caller owns them (the planner''s samples); returns the rows removed (statistics: memloom_term_stats, memloom_entity_stats and memloom_namespace_stats rows). Only the caller''s bound namespace (memloom_assert_namespace). The grants (memloom_namespace_grants) stay: revoke them with memloom_revoke_namespace';
