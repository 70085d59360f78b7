-- memloom, the current definition, part 10: security. Namespaces bound to database
-- roles, row-level security on every table that holds a namespace's rows, and the pinned
-- search paths of the functions that run as the owner. The trust model and how to provision a
-- tenant role: docs/SECURITY.md.
--
-- Every client sets the namespace it works in, once per session or per transaction, before
-- anything else: SELECT set_config('memloom.namespace', 'team-a', false). The setting counts
-- only when the session's login role (session_user) is granted that namespace
-- (memloom_namespace_grants; '*' = every namespace), is a superuser or BYPASSRLS, or is a
-- member of the tables' owner (memloom_unrestricted). Every other role then sees and writes
-- only that namespace's rows, whatever a statement says: a query that forgets
-- `WHERE namespace = ...` reads nothing of anyone else's, and a write of another namespace's
-- row fails. No setting, or no grant: no rows at all.
--
-- Who is bound: every role but the owner, superusers and BYPASSRLS roles (the embedded PGlite
-- store runs as its superuser: one process, one user, nothing to isolate). The owner is not
-- bound (NO FORCE: it could turn row-level security off at will), which is what lets
-- memloom_fuse (SECURITY DEFINER, 08_fusion.sql) run its arms with the owner's plans after
-- memloom_assert_namespace(ns): under a policy PostgreSQL never uses the full-text match (`@@`,
-- not leakproof) as a GIN index condition. A migration that rewrites rows of every namespace
-- must run as the owner, a superuser or a BYPASSRLS role.

-- Who may work in which namespace -------------------------------------------------------------
CREATE TABLE memloom_namespace_grants (
    role_name  name        NOT NULL,
    namespace  text        NOT NULL CHECK (namespace <> ''),
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (role_name, namespace)
);
COMMENT ON TABLE memloom_namespace_grants IS
'the namespaces each database role may work in (namespace ''*'': every namespace, for a trusted gateway such as the edge worker); written by the tables'' owner (memloom_grant_namespace), read by memloom_current_namespace; a login role is granted what any role it is a member of is granted';
-- Row-level security with no policy at all: a role other than the owner (or a superuser) reads
-- no row and writes none, even with table privileges (GRANT ... ON ALL TABLES gives those).
ALTER TABLE memloom_namespace_grants ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON memloom_namespace_grants FROM PUBLIC;

-- The session's standing ------------------------------------------------------------------
-- By the login role (session_user), not current_user: inside memloom_fuse (SECURITY DEFINER)
-- current_user is the owner, and SET ROLE reaches only roles the login is a member of anyway.
CREATE FUNCTION memloom_unrestricted() RETURNS boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED AS $$
    SELECT coalesce((SELECT r.rolsuper OR r.rolbypassrls FROM pg_catalog.pg_roles r
                     WHERE r.rolname = session_user), false)
        OR pg_catalog.pg_has_role(session_user,
               (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = 'memloom_items'::regclass),
               'MEMBER')
$$;
COMMENT ON FUNCTION memloom_unrestricted() IS
'true when the session''s login role is a superuser, BYPASSRLS, or a member of the role owning the memloom tables: it may work in any namespace';

-- SECURITY DEFINER to read the grants (a tenant cannot); restricted to the leader process (a
-- function with SET clauses cannot run in a parallel worker).
CREATE FUNCTION memloom_current_namespace() RETURNS text
LANGUAGE sql STABLE PARALLEL RESTRICTED SECURITY DEFINER AS $$
    SELECT s.ns
    FROM (SELECT nullif(pg_catalog.current_setting('memloom.namespace', true), '') AS ns) s
    WHERE s.ns IS NOT NULL
      AND (memloom_unrestricted()
           OR EXISTS (SELECT 1
                      FROM memloom_namespace_grants g
                      JOIN pg_catalog.pg_roles r ON r.rolname = g.role_name  -- a dropped role grants nothing
                      WHERE g.namespace IN (s.ns, '*')
                        AND pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER')))
$$;
COMMENT ON FUNCTION memloom_current_namespace() IS
'the namespace this session works in: the memloom.namespace setting when the login role is granted it (memloom_namespace_grants) or is unrestricted (memloom_unrestricted), else NULL; the row-level security policies compare against it';

CREATE FUNCTION memloom_assert_namespace(ns text) RETURNS void
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED AS $$
DECLARE
    setting text := nullif(pg_catalog.current_setting('memloom.namespace', true), '');
    bound   text;
BEGIN
    IF memloom_unrestricted() THEN RETURN; END IF;
    bound := memloom_current_namespace();
    IF setting IS NULL THEN
        RAISE EXCEPTION 'this session has no namespace: run SELECT set_config(''memloom.namespace'', %, false) first (or with true, per transaction)',
            quote_literal(coalesce(ns, 'NAMESPACE'))
            USING ERRCODE = 'insufficient_privilege';
    ELSIF bound IS NULL THEN
        RAISE EXCEPTION 'role % is not granted namespace %; the store''s owner grants it with SELECT memloom_grant_namespace(%, %)',
            session_user, quote_literal(setting), quote_literal(session_user), quote_literal(setting)
            USING ERRCODE = 'insufficient_privilege';
    ELSIF ns IS DISTINCT FROM bound THEN
        RAISE EXCEPTION 'namespace % is not this session''s (%): recall in the namespace set with memloom.namespace',
            quote_literal(coalesce(ns, '')), quote_literal(bound)
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_assert_namespace(text) IS
'raises insufficient_privilege unless ns is the session''s bound namespace (memloom_current_namespace); unrestricted sessions pass; the SECURITY DEFINER entry points call it before reading anything';

CREATE FUNCTION memloom_grant_namespace(role_name name, ns text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF NOT memloom_unrestricted() THEN
        RAISE EXCEPTION 'only the owner of the memloom tables (or a superuser) grants namespaces; role % is neither', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM role_name::text::regrole;  -- an unknown role: a clear error now, not a silent no-op
    INSERT INTO memloom_namespace_grants (role_name, namespace) VALUES (role_name, ns)
    ON CONFLICT DO NOTHING;
END
$$;
COMMENT ON FUNCTION memloom_grant_namespace(name, text) IS
'lets role_name (and the login roles that are its members) work in namespace ns (''*'': every namespace); only the tables'' owner or a superuser can (row-level security refuses anyone else)';

CREATE FUNCTION memloom_revoke_namespace(role_name name, ns text) RETURNS boolean
LANGUAGE sql VOLATILE AS $$
    WITH d AS (DELETE FROM memloom_namespace_grants g
               WHERE g.role_name = memloom_revoke_namespace.role_name AND g.namespace = ns
               RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION memloom_revoke_namespace(name, text) IS
'removes the grant of ns to role_name; true when there was one. Open sessions of the role lose the namespace at their next statement';

-- Row-level security: the namespace once per statement ((SELECT ...), an InitPlan) -----------
ALTER TABLE memloom_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_items_namespace ON memloom_items
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_items_namespace ON memloom_items IS
'a session sees and writes only the rows of its memloom.namespace';

ALTER TABLE memloom_entities ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_entities_namespace ON memloom_entities
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_entities_namespace ON memloom_entities IS
'a session sees and writes only the entities of its memloom.namespace';

-- memloom_mentions has no namespace column: a mention is visible when its item is (the item's
-- own policy applies inside the subquery), and may be written only between an item and an
-- entity both visible, so an edge never crosses namespaces.
ALTER TABLE memloom_mentions ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_mentions_namespace ON memloom_mentions
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_mentions_namespace ON memloom_mentions IS
'a session sees and writes only the mentions of its namespace; the foreign keys (namespace, item_id) and (namespace, entity_id) keep both ends in it';

ALTER TABLE memloom_indexed ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_indexed_namespace ON memloom_indexed
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_indexed_namespace ON memloom_indexed IS
'a session sees and writes only the index marks of its namespace; the foreign key (namespace, item_id) keeps them on its items';

-- The statistics too: one tenant must not learn which words another's documents use.
ALTER TABLE memloom_entity_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_entity_stats_namespace ON memloom_entity_stats
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_entity_stats_namespace ON memloom_entity_stats IS
'rows of the session''s namespace only (the memloom.namespace setting), like memloom_items';

ALTER TABLE memloom_term_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_term_stats_namespace ON memloom_term_stats
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_term_stats_namespace ON memloom_term_stats IS
'a session sees and writes only the keyword statistics of its memloom.namespace';

ALTER TABLE memloom_namespace_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_namespace_stats_namespace ON memloom_namespace_stats
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_namespace_stats_namespace ON memloom_namespace_stats IS
'a session sees and writes only the document count and length of its memloom.namespace';

-- Pinned search paths ----------------------------------------------------------------------------
-- The functions that run as the owner or that the policies call: the schema holding the memloom
-- tables, then pgvector's (its type and operators), then pg_temp last, so that no object a
-- tenant creates elsewhere (a temporary table or function, another schema) is found instead of
-- memloom's. pg_catalog comes first implicitly.
DO $$
DECLARE
    path text;
BEGIN
    SELECT string_agg(quote_ident(s.nspname), ', ' ORDER BY s.pos) || ', pg_temp' INTO path
    FROM (SELECT n.nspname, min(x.pos) AS pos
          FROM (SELECT c.relnamespace AS oid, 1 AS pos FROM pg_class c WHERE c.oid = 'memloom_items'::regclass
                UNION ALL
                SELECT e.extnamespace, 2 FROM pg_extension e WHERE e.extname = 'vector') x
          JOIN pg_namespace n ON n.oid = x.oid
          GROUP BY n.nspname) s;
    EXECUTE format('ALTER FUNCTION memloom_current_namespace() SET search_path = %s', path);
    EXECUTE format('ALTER FUNCTION memloom_unrestricted() SET search_path = %s', path);
    EXECUTE format('ALTER FUNCTION memloom_assert_namespace(text) SET search_path = %s', path);
    EXECUTE format('ALTER FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision, timestamptz, timestamptz, timestamptz) SET search_path = %s', path);
END
$$;

-- No planner statistics that name a tenant ---------------------------------------------------------
-- Under row-level security PostgreSQL still estimates leakproof comparisons (text =) from the
-- table's statistics, so EXPLAIN would show a tenant which namespaces exist and their sizes.
CREATE FUNCTION memloom_hide_planner_statistics() RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    tabs text[] := ARRAY['memloom_items', 'memloom_items', 'memloom_items', 'memloom_items',
                         'memloom_items', 'memloom_items', 'memloom_entities', 'memloom_entities',
                         'memloom_mentions', 'memloom_term_stats', 'memloom_term_stats',
                         'memloom_namespace_stats', 'memloom_entity_stats',
                         'memloom_namespace_grants', 'memloom_namespace_grants', 'memloom_indexed'];
    cols text[] := ARRAY['namespace', 'key', 'source', 'breadcrumb', 'content', 'content_hash',
                         'namespace', 'name', 'namespace', 'namespace', 'lexeme', 'namespace',
                         'namespace', 'namespace', 'role_name', 'namespace'];
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
      AND a.attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass, 'memloom_mentions'::regclass,
                         'memloom_indexed'::regclass);
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
