-- memloom's PL/Proxy front (docs/SCALING.md): the database the clients connect to when the
-- namespaces are spread over several partitions. Each partition is an ordinary memloom store
-- (sql/memloom/, the unchanged schema); this database holds no memloom table, only:
--   * the routing: memloom_shard_routes (a namespace pinned to a partition, written by
--     `scripts/memloom-shard.mjs move`) and memloom_route_hash(ns), which every routed function
--     calls (RUN ON memloom_route_hash(ns)), hashtext(ns) for a namespace without a row;
--     memloom_route(ns) names the partition that gives (for people and tools);
--   * the routed functions, one per partition function taking `ns`, GENERATED from a
--     partition's catalog by sql/plproxy/generate.sql (never written by hand, so a changed
--     signature follows with `scripts/memloom-shard.mjs migrate`);
--   * what the clients read besides those (below): the migrations ledger and memloom_meta as
--     views over the partitions, and the few calls without a namespace, run on every partition.
-- Run by scripts/memloom-shard.mjs (setup, migrate) as the proxy database's owner, after
-- `CREATE EXTENSION plproxy` and the SERVER memloom (the partitions' connection strings).

CREATE EXTENSION IF NOT EXISTS vector;  -- the routed functions take and return pgvector types

-- Routing -------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS memloom_shard_routes (
    namespace text    PRIMARY KEY,
    partition integer NOT NULL CHECK (partition >= 0),
    moved_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE memloom_shard_routes IS
'namespaces pinned to a partition (p0, p1, ... of SERVER memloom); a namespace without a row lives on partition hashtext(namespace) & (partitions - 1). Written by scripts/memloom-shard.mjs move';
GRANT SELECT ON memloom_shard_routes TO PUBLIC;

-- The number of partitions of the cluster (the SERVER memloom's p0, p1, ... options).
CREATE OR REPLACE FUNCTION memloom_shard_partitions() RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT count(*)::integer
      FROM pg_catalog.pg_foreign_server s, unnest(s.srvoptions) AS o
     WHERE s.srvname = 'memloom' AND o ~ '^p[0-9]+='
$$;
COMMENT ON FUNCTION memloom_shard_partitions() IS
'how many partitions the memloom cluster has (SERVER memloom''s p0, p1, ... options; PL/Proxy needs a power of 2)';

-- Where a namespace lives, for PL/Proxy's RUN ON, which maps the value to a partition itself
-- (value & (partitions - 1), SERVER memloom having no modular_mapping): the pinned partition, else
-- hashtext(ns). So the routed call needs no partition count: reading it from the SERVER's
-- options (memloom_shard_partitions, an SQL function parsed and planned again on every call)
-- was most of the routing's cost, about 0.1 ms of every routed call (docs/BENCHMARKS.md).
-- Every routed call first takes the namespace's routing lock SHARED, to the end of the
-- proxy's transaction (a routed call's remote statement has committed by then): a move takes
-- it EXCLUSIVE, so it waits for the calls in flight and new calls wait for it; no call can
-- write to the old partition after the copy started, none reads the new one before it ends.
-- plpgsql and VOLATILE on purpose: the route is read by a statement after the lock is held,
-- with a snapshot taken then, so a call that waited for a move sees the move's new route.
CREATE OR REPLACE FUNCTION memloom_route_hash(ns text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    p integer;
BEGIN
    IF ns IS NULL THEN
        RAISE EXCEPTION 'a routed memloom call needs a namespace (ns is NULL)' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pg_advisory_xact_lock_shared(30792293, hashtext(ns));
    SELECT r.partition INTO p FROM memloom_shard_routes r WHERE r.namespace = ns;
    RETURN coalesce(p, hashtext(ns));
END
$$;
COMMENT ON FUNCTION memloom_route_hash(text) IS
'PL/Proxy''s RUN ON value for namespace ns (every routed call): its partition in memloom_shard_routes, else hashtext(ns); PL/Proxy takes it modulo the partitions (memloom_route names the result). Takes the namespace''s routing lock shared to the end of the transaction (a move takes it exclusive)';

-- The partition PL/Proxy sends a call of ns to, by the same mapping (scripts/memloom-shard.mjs
-- where and move, the tests).
CREATE OR REPLACE FUNCTION memloom_route(ns text) RETURNS integer
LANGUAGE sql VOLATILE AS $$
    SELECT memloom_route_hash(ns) & (memloom_shard_partitions() - 1)
$$;
COMMENT ON FUNCTION memloom_route(text) IS
'the partition that holds namespace ns (memloom_shard_routes, else hashtext(ns) modulo the partitions: where PL/Proxy sends its calls, memloom_route_hash); takes the namespace''s routing lock shared to the end of the transaction (a move takes it exclusive)';

-- The ledger and the store's record, as the clients' open reads them ------------------------
-- A migration counts as applied when EVERY partition has it with the same checksum, so a
-- client that ships a newer one sees it missing and stops with the runner's error (the proxy
-- refuses DDL, below) instead of believing the cluster current.
CREATE OR REPLACE FUNCTION memloom_shard_ledger()
RETURNS TABLE (version integer, name text, checksum text, applied_at timestamptz) LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT m.version, m.name, m.checksum, m.applied_at FROM memloom_migrations m;
$$;
COMMENT ON FUNCTION memloom_shard_ledger() IS
'every partition''s memloom_migrations rows (version, name, checksum, applied_at)';

CREATE OR REPLACE VIEW memloom_migrations AS
    SELECT l.version, min(l.name) AS name, l.checksum, max(l.applied_at) AS applied_at
      FROM memloom_shard_ledger() AS l
     GROUP BY l.version, l.checksum
    HAVING count(*) = memloom_shard_partitions();
COMMENT ON VIEW memloom_migrations IS
'the migrations every partition has applied with the same checksum (the clients'' migrate-on-open reads it; migrations run on the partitions: scripts/memloom-shard.mjs migrate)';
GRANT SELECT ON memloom_migrations TO PUBLIC;

CREATE OR REPLACE FUNCTION memloom_shard_meta()
RETURNS TABLE (singleton boolean, embedder_name text, embedder_version integer, embedder_dims integer,
               schema_version integer)
LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON 0;
    SELECT m.singleton, m.embedder_name, m.embedder_version, m.embedder_dims, m.schema_version FROM memloom_meta m;
$$;
COMMENT ON FUNCTION memloom_shard_meta() IS
'partition 0''s memloom_meta row (setup and migrate keep the partitions'' embedders equal)';

CREATE OR REPLACE VIEW memloom_meta AS SELECT * FROM memloom_shard_meta();
COMMENT ON VIEW memloom_meta IS
'the partitions'' store record (schema version, embedder), read from partition 0';
GRANT SELECT ON memloom_meta TO PUBLIC;

-- The calls without a namespace: run on every partition ------------------------------------
-- (PL/Proxy's RUN ON ALL needs a set-returning function: each is a routed SETOF function
-- wrapped by one with the partitions' signature that combines the answers.)
CREATE OR REPLACE FUNCTION memloom_shard_all_check_embedder(name text, version integer, dims integer)
RETURNS SETOF text LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT memloom_check_embedder(name, version, dims)::text AS r;
$$;
COMMENT ON FUNCTION memloom_shard_all_check_embedder(text, integer, integer) IS
'memloom_check_embedder on every partition';
CREATE OR REPLACE FUNCTION memloom_check_embedder(name text, version integer, dims integer) RETURNS void
LANGUAGE sql VOLATILE AS $$ SELECT FROM memloom_shard_all_check_embedder(name, version, dims) $$;
COMMENT ON FUNCTION memloom_check_embedder(text, integer, integer) IS
'the partitions'' memloom_check_embedder, on every partition (any refusal is the error)';

CREATE OR REPLACE FUNCTION memloom_shard_all_init_store(embedder_name text, embedder_version integer, dims integer,
                                                        vector_index boolean)
RETURNS SETOF text LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT memloom_init_store(embedder_name, embedder_version, dims, vector_index)::text AS r;
$$;
COMMENT ON FUNCTION memloom_shard_all_init_store(text, integer, integer, boolean) IS
'memloom_init_store on every partition';
CREATE OR REPLACE FUNCTION memloom_init_store(embedder_name text, embedder_version integer, dims integer,
                                              vector_index boolean DEFAULT true) RETURNS void
LANGUAGE sql VOLATILE AS $$ SELECT FROM memloom_shard_all_init_store(embedder_name, embedder_version, dims, vector_index) $$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'the partitions'' memloom_init_store, on every partition (each in its own transaction: a failure on one leaves the others initialised; run it again)';

CREATE OR REPLACE FUNCTION memloom_shard_all_ensure_vector_index() RETURNS SETOF boolean
LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT memloom_ensure_vector_index() AS r;
$$;
COMMENT ON FUNCTION memloom_shard_all_ensure_vector_index() IS 'memloom_ensure_vector_index on every partition';
CREATE OR REPLACE FUNCTION memloom_ensure_vector_index() RETURNS boolean
LANGUAGE sql VOLATILE AS $$ SELECT coalesce(bool_or(r), false) FROM memloom_shard_all_ensure_vector_index() AS r $$;
COMMENT ON FUNCTION memloom_ensure_vector_index() IS
'the partitions'' memloom_ensure_vector_index on every partition: true when it built an index on any';

CREATE OR REPLACE FUNCTION memloom_shard_all_defer_vector_index() RETURNS SETOF text[]
LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT memloom_defer_vector_index() AS r;
$$;
COMMENT ON FUNCTION memloom_shard_all_defer_vector_index() IS 'memloom_defer_vector_index on every partition';
CREATE OR REPLACE FUNCTION memloom_defer_vector_index() RETURNS text[]
LANGUAGE sql VOLATILE AS $$ SELECT coalesce(array_agg(DISTINCT i ORDER BY i), '{}') FROM memloom_shard_all_defer_vector_index() AS r, unnest(r) AS i $$;
COMMENT ON FUNCTION memloom_defer_vector_index() IS
'the partitions'' memloom_defer_vector_index on every partition (each drops only the indexes of its own empty tables): the indexes dropped on any';

CREATE OR REPLACE FUNCTION memloom_shard_all_vector_index_exists() RETURNS SETOF boolean
LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT memloom_vector_index_exists() AS r;
$$;
COMMENT ON FUNCTION memloom_shard_all_vector_index_exists() IS 'memloom_vector_index_exists on every partition';
CREATE OR REPLACE FUNCTION memloom_vector_index_exists() RETURNS boolean
LANGUAGE sql VOLATILE AS $$ SELECT coalesce(bool_and(r), false) FROM memloom_shard_all_vector_index_exists() AS r $$;
COMMENT ON FUNCTION memloom_vector_index_exists() IS
'whether every partition has the HNSW index (memloom_vector_index_exists there)';

CREATE OR REPLACE FUNCTION memloom_shard_all_analyze_if_grown() RETURNS SETOF text[]
LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON ALL;
    SELECT memloom_analyze_if_grown() AS r;
$$;
COMMENT ON FUNCTION memloom_shard_all_analyze_if_grown() IS 'memloom_analyze_if_grown on every partition';
CREATE OR REPLACE FUNCTION memloom_analyze_if_grown() RETURNS text[]
LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(array_agg(DISTINCT t ORDER BY t), '{}') FROM memloom_shard_all_analyze_if_grown() AS r, unnest(r) AS t
$$;
COMMENT ON FUNCTION memloom_analyze_if_grown() IS
'memloom_analyze_if_grown on every partition: the pool tables analyzed on any';

-- The namespace binding (sql/memloom/10_security.sql) is the partitions': this session's
-- memloom.namespace setting, checked on the partition that holds it. Routed calls carry the
-- setting themselves (generate.sql: each sets memloom.namespace to its ns on the partition).
CREATE OR REPLACE FUNCTION memloom_shard_current_namespace(ns text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'memloom';
    RUN ON memloom_route_hash(ns);
    SELECT memloom_current_namespace() AS r FROM (SELECT set_config('memloom.namespace', ns, false) AS bound) AS memloom_b;
$$;
COMMENT ON FUNCTION memloom_shard_current_namespace(text) IS
'memloom_current_namespace() on the partition of namespace ns, with the setting ns there';
CREATE OR REPLACE FUNCTION memloom_current_namespace() RETURNS text
LANGUAGE sql VOLATILE AS $$
    SELECT CASE WHEN coalesce(current_setting('memloom.namespace', true), '') = '' THEN NULL
                ELSE memloom_shard_current_namespace(current_setting('memloom.namespace', true)) END
$$;
COMMENT ON FUNCTION memloom_current_namespace() IS
'this session''s memloom.namespace setting when the login role may use it (memloom_current_namespace on the partition that holds the namespace), else NULL';

-- No schema here: a client whose migrations are newer than the partitions' gets a clear error
-- instead of creating memloom tables in the proxy database. CREATE TABLE passes (the runners'
-- `CREATE TABLE IF NOT EXISTS memloom_migrations`, which finds the view and does nothing).
CREATE OR REPLACE FUNCTION memloom_shard_guard() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('memloom.shard_admin', true), '') <> 'on' AND tg_tag <> 'CREATE TABLE' THEN
        RAISE EXCEPTION 'this database is a memloom PL/Proxy front: it holds no memloom schema (% refused); migrate the partitions with: node scripts/memloom-shard.mjs migrate --proxy URL (docs/SCALING.md)', tg_tag
            USING ERRCODE = 'feature_not_supported';
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_shard_guard() IS
'event trigger of the proxy database: refuses DDL other than CREATE TABLE unless memloom.shard_admin is on (scripts/memloom-shard.mjs sets it)';
DROP EVENT TRIGGER IF EXISTS memloom_shard_guard;
CREATE EVENT TRIGGER memloom_shard_guard ON ddl_command_start EXECUTE FUNCTION memloom_shard_guard();
