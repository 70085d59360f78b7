-- memloom schema 8: namespaces bound to database roles; recall under them at the owner's speed.
--
-- Until 0007 the row-level security policies compared each row's namespace with the
-- memloom.namespace setting, which any session may set: an application role's raw SQL
-- connection could `SET memloom.namespace = 'team-b'` and read team-b. And under a policy
-- PostgreSQL never uses the full-text match (`@@`, not leakproof) as a GIN index condition, so
-- the keyword arm read the whole namespace under an application role (12x the owner's time at
-- 100k items, 44x at 1M, and different results from call to call once those scans were
-- synchronized). This migration:
--
-- 1. binds namespaces to roles: memloom_namespace_grants (role, namespace; '*' = every
--    namespace) lists who may work in which namespace. memloom_current_namespace() returns the
--    memloom.namespace setting only when the session's login role (session_user) is granted it,
--    is a superuser or BYPASSRLS, or is a member of the tables' owner; otherwise NULL, and the
--    policies match nothing. The setting still selects the namespace per session or per
--    transaction (set_config(..., true) behind poolers); it no longer decides who may.
-- 2. makes memloom_fuse, the recall entry point, SECURITY DEFINER (runs as the tables' owner,
--    with a pinned search_path): it first checks that its ns argument is the caller's bound
--    namespace (memloom_assert_namespace), then its arms run unbound by row-level security,
--    with the same plans as for the owner, filtering by ns as they always did.
-- 3. drops FORCE ROW LEVEL SECURITY, so the owner (who could always turn it off) is not bound,
--    which is what lets (2) get the owner's plans. Every other role stays bound for every
--    statement: direct SELECT / INSERT / UPDATE / DELETE, memloom_remember, memloom_refresh_stats
--    and the arm functions called directly (SECURITY INVOKER).
-- 4. evaluates the namespace once per statement in every policy ((SELECT ...), an InitPlan),
--    now that it is a lookup rather than an inlined setting read.
-- 5. plans the keyword arm's capped scans without synchronized or parallel sequential scans:
--    `LIMIT scan_cap` over a scan that starts where the previous one stopped returned a
--    different candidate set on each call.
-- The trust model, and how to provision a tenant role: docs/SECURITY.md.

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

-- Replaces 0005's: the setting counts only when the login role may use that namespace.
-- SECURITY DEFINER to read the grants (a tenant cannot); restricted to the leader process (a
-- function with SET clauses cannot run in a parallel worker).
CREATE OR REPLACE FUNCTION memloom_current_namespace() RETURNS text
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

-- Policies: the namespace once per statement ---------------------------------------------------
ALTER POLICY memloom_items_namespace ON memloom_items
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
ALTER POLICY memloom_entities_namespace ON memloom_entities
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
ALTER POLICY memloom_entity_stats_namespace ON memloom_entity_stats
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
ALTER POLICY memloom_term_stats_namespace ON memloom_term_stats
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
ALTER POLICY memloom_namespace_stats_namespace ON memloom_namespace_stats
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
-- memloom_mentions' policy goes through memloom_items' (unchanged).

-- The owner is not bound (it can ALTER TABLE ... DISABLE ROW LEVEL SECURITY at will) ----------
ALTER TABLE memloom_items NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memloom_entities NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memloom_mentions NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memloom_entity_stats NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memloom_term_stats NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memloom_namespace_stats NO FORCE ROW LEVEL SECURITY;

-- Recall: one call, as the owner, in the caller's bound namespace -----------------------------
-- 0002's body; the only change is memloom_assert_namespace(ns) before anything is read.
-- SECURITY DEFINER and the search_path are set below. A later CREATE OR REPLACE of this
-- function must repeat all three (it resets SECURITY DEFINER and SET clauses).
CREATE OR REPLACE FUNCTION memloom_fuse(
    query_text       text,
    query_embedding  vector,
    ns               text,
    lim              integer,
    k                double precision DEFAULT 60,
    w_vector         double precision DEFAULT 1.0,
    w_keyword        double precision DEFAULT 2.0,
    w_entity         double precision DEFAULT 0.5,
    entity_gate      double precision DEFAULT 0.60,
    candidates       integer          DEFAULT NULL,
    kinds            text[]           DEFAULT NULL,
    keyword_scan_cap integer          DEFAULT 1000,
    arms             text[]           DEFAULT NULL
) RETURNS TABLE (
    id           bigint,
    kind         text,
    source       text,
    breadcrumb   text,
    key          text,
    content      text,
    rrf_score    double precision,
    similarity   double precision,
    vector_rank  integer,
    keyword_rank integer,
    entity_rank  integer
)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    vector_ids  bigint[];
    keyword_ids bigint[];
    entity_ids  bigint[];
BEGIN
    PERFORM memloom_check_vector(query_embedding);
    IF ns IS NULL THEN
        RAISE EXCEPTION 'memloom_fuse needs a namespace' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Runs as the owner, whom row-level security does not bind: only the caller's namespace.
    PERFORM memloom_assert_namespace(ns);
    IF arms IS NOT NULL AND NOT arms <@ ARRAY['vector', 'keyword', 'entity'] THEN
        RAISE EXCEPTION 'unknown arm in %; arms are vector, keyword, entity', arms
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lim IS NULL OR lim <= 0 THEN RETURN; END IF;
    candidates := coalesce(candidates, memloom_default_candidates(lim));
    -- An arm left out of arms does not run: no votes, and no boost ids for the keyword arm.
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        vector_ids := ARRAY(SELECT a.id FROM memloom_vector_arm(query_embedding, ns, candidates, kinds) a);
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        keyword_ids := ARRAY(SELECT a.id FROM memloom_keyword_arm(query_text, ns, candidates, kinds,
                                                                 keyword_scan_cap, vector_ids) a);
    END IF;
    IF arms IS NULL OR 'entity' = ANY (arms) THEN
        entity_ids := ARRAY(SELECT a.id FROM memloom_entity_arm(query_embedding, ns, candidates,
                                                               entity_gate, kinds) a);
    END IF;
    RETURN QUERY
    SELECT m.id, m.kind, m.source, m.breadcrumb, m.key, m.content, f.rrf_score,
           1 - (m.embedding <=> query_embedding), f.vector_rank, f.keyword_rank, f.entity_rank
    FROM memloom_rrf(vector_ids, keyword_ids, entity_ids, k, w_vector, w_keyword, w_entity) f
    JOIN memloom_items m ON m.id = f.id
    ORDER BY f.rrf_score DESC, f.id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[]) IS
'recall in one call: the vector, keyword and entity arms (or only those named in arms) over the namespace''s active items, fused by memloom_rrf; best first, with each arm''s rank (null where it did not vote). Runs as the tables'' owner (SECURITY DEFINER) after checking that ns is the caller''s bound namespace (memloom_assert_namespace). Defaults: k 60, weights 1.0 / 2.0 / 0.5, entity gate 0.60, candidates per arm NULL = memloom_default_candidates(lim) = greatest(lim, 10)';

-- Pinned search paths: the schema holding the memloom tables, then pgvector's (its type and
-- operators), then pg_temp last, so that no object a tenant creates elsewhere (a temporary
-- table or function, another schema) is found instead of memloom's. pg_catalog comes first
-- implicitly.
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
    EXECUTE format('ALTER FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[]) SECURITY DEFINER SET search_path = %s', path);
    EXECUTE format('ALTER FUNCTION memloom_current_namespace() SET search_path = %s', path);
    EXECUTE format('ALTER FUNCTION memloom_unrestricted() SET search_path = %s', path);
    EXECUTE format('ALTER FUNCTION memloom_assert_namespace(text) SET search_path = %s', path);
END
$$;

-- Deterministic keyword candidates --------------------------------------------------------------
-- A capped tier takes the first scan_cap matches a scan yields. A sequential scan of a table
-- larger than a quarter of shared_buffers starts where the last one stopped
-- (synchronize_seqscans), and a parallel one in whatever order its workers run: both made the
-- candidate set, hence the ranking, differ between identical calls. Heap order, always.
-- (A later CREATE OR REPLACE of the arm must repeat these SET clauses.)
ALTER FUNCTION memloom_keyword_arm(text, text, integer, text[], integer, bigint[])
    SET synchronize_seqscans = off;
ALTER FUNCTION memloom_keyword_arm(text, text, integer, text[], integer, bigint[])
    SET max_parallel_workers_per_gather = 0;

UPDATE memloom_meta SET schema_version = greatest(schema_version, 8);
