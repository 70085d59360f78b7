-- The proxy's routed functions, generated from a partition's catalog (docs/SCALING.md). Run
-- on a PARTITION (any: they run the same schema); it returns one row per memloom_ function
-- that takes a namespace argument named `ns`, holding the DDL that defines it in the proxy
-- database (sql/plproxy/front.sql): the same name, arguments (with their defaults) and result,
-- LANGUAGE plproxy, routed by memloom_route_hash(ns), with the partition's comment. On the partition
-- the call first sets memloom.namespace to ns (the namespace binding of
-- sql/memloom/10_security.sql, as a client sets it on a single server), then calls the
-- function with that namespace. scripts/memloom-shard.mjs drops the proxy's previous routed
-- functions and runs these rows in one transaction, so a signature change on the partitions
-- (a migration) follows without a hand edit.
SELECT p.proname AS name,
       format($fmt$CREATE FUNCTION %I(%s) RETURNS %s LANGUAGE plproxy AS $memloom$
    CLUSTER 'memloom';
    RUN ON memloom_route_hash(ns);
    SELECT memloom_r.* FROM (SELECT set_config('memloom.namespace', ns, false) AS bound) AS memloom_b,
           LATERAL %I(%s) AS memloom_r;
$memloom$;
COMMENT ON FUNCTION %I(%s) IS %L;$fmt$,
           p.proname, pg_catalog.pg_get_function_arguments(p.oid), pg_catalog.pg_get_function_result(p.oid),
           p.proname, args.call,
           p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid),
           'routed by PL/Proxy to the partition of namespace ns (memloom_route_hash): '
               || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), p.proname)) AS ddl
  FROM pg_catalog.pg_proc p
  CROSS JOIN LATERAL (
      SELECT string_agg(CASE WHEN a.name = 'ns' THEN 'memloom_b.bound' ELSE quote_ident(a.name) END, ', ' ORDER BY a.n) AS call
        FROM unnest(p.proargnames, coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[cardinality(p.proargnames)])))
             WITH ORDINALITY AS a(name, mode, n)
       WHERE a.mode IN ('i', 'b', 'v')
  ) AS args
 WHERE p.pronamespace = 'public'::regnamespace
   AND p.proname LIKE 'memloom\_%'
   AND p.prokind = 'f'
   AND p.prorettype <> 'trigger'::regtype
   AND 'ns' = ANY (p.proargnames)
 ORDER BY p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid);
