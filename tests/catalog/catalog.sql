-- The memloom catalog as rows of (section, object, detail): everything a migration can change
-- that a store's behaviour depends on. crates/memloom-sql/tests/catalog.rs (PostgreSQL) and
-- npm/test/catalog.test.js (PGlite) run it on a store upgraded through every frozen migration
-- of sql/migrations/ and on a fresh install of sql/memloom/, and require the same rows
-- (sql/README.md, "Changing the schema"). One statement, no parameters; the objects of the
-- schema holding memloom_items.
WITH s AS (
    SELECT c.relnamespace AS nsp FROM pg_catalog.pg_class c WHERE c.oid = 'memloom_items'::regclass
), rel AS (
    SELECT c.oid, c.relname, c.relkind FROM pg_catalog.pg_class c, s
    WHERE c.relnamespace = s.nsp AND c.relname LIKE 'memloom\_%'
), fn AS (
    SELECT p.oid, p.oid::regprocedure::text AS sig FROM pg_catalog.pg_proc p, s
    WHERE p.pronamespace = s.nsp AND p.proname LIKE 'memloom\_%'
)
SELECT section, object, detail FROM (
    -- Functions: the whole definition (arguments, defaults, result, language, volatility,
    -- parallel safety, SECURITY DEFINER, SET clauses, body), owner, grants, comment.
    SELECT 'function' AS section, fn.sig AS object,
           pg_catalog.pg_get_functiondef(fn.oid) AS detail
    FROM fn JOIN pg_catalog.pg_proc p ON p.oid = fn.oid WHERE p.prokind IN ('f', 'p')
    UNION ALL
    SELECT 'function attributes', fn.sig,
           concat_ws(' | ', 'kind ' || p.prokind::text, 'owner ' || pg_catalog.pg_get_userbyid(p.proowner),
                     'acl ' || coalesce(p.proacl::text, 'default'), 'cost ' || p.procost,
                     'rows ' || p.prorows, 'leakproof ' || p.proleakproof, 'strict ' || p.proisstrict)
    FROM fn JOIN pg_catalog.pg_proc p ON p.oid = fn.oid
    UNION ALL
    SELECT 'function comment', fn.sig, coalesce(pg_catalog.obj_description(fn.oid, 'pg_proc'), '(none)')
    FROM fn
    UNION ALL
    -- Relations (tables, indexes, sequences): kind, persistence, options, row-level security,
    -- owner, grants, comment.
    SELECT 'relation', rel.relname,
           concat_ws(' | ', 'kind ' || c.relkind::text, 'persistence ' || c.relpersistence::text,
                     'options ' || coalesce(c.reloptions::text, '{}'),
                     'rls ' || c.relrowsecurity, 'force rls ' || c.relforcerowsecurity,
                     'owner ' || pg_catalog.pg_get_userbyid(c.relowner),
                     'acl ' || coalesce(c.relacl::text, 'default'),
                     'access method ' || coalesce(am.amname, '-'),
                     'comment ' || coalesce(pg_catalog.obj_description(c.oid, 'pg_class'), '(none)'))
    FROM rel JOIN pg_catalog.pg_class c ON c.oid = rel.oid
    LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
    UNION ALL
    -- Columns of tables, in order (a dropped column leaves a gap in attnum, not in this order):
    -- type, nullability, default or generated expression, identity, storage, statistics
    -- target, collation, comment.
    SELECT 'column', rel.relname || '.' || lpad(row_number() OVER (PARTITION BY rel.oid ORDER BY a.attnum)::text, 3, '0'),
           concat_ws(' | ', a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                     CASE WHEN a.attnotnull THEN 'not null' ELSE 'null' END,
                     'default ' || coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '-'),
                     'generated ' || coalesce(nullif(a.attgenerated::text, ''), '-'),
                     'identity ' || coalesce(nullif(a.attidentity::text, ''), '-'),
                     'storage ' || a.attstorage::text,
                     'statistics ' || coalesce(a.attstattarget::text, 'default'),
                     'collation ' || coalesce(co.collname, '-'),
                     'comment ' || coalesce(pg_catalog.col_description(rel.oid, a.attnum), '(none)'))
    FROM rel
    JOIN pg_catalog.pg_attribute a ON a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = rel.oid AND d.adnum = a.attnum
    LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0
    WHERE rel.relkind IN ('r', 'p')
    UNION ALL
    -- Constraints (primary keys, unique, checks, foreign keys) by name.
    SELECT 'constraint', rel.relname || '.' || con.conname,
           concat_ws(' | ', con.contype::text, pg_catalog.pg_get_constraintdef(con.oid),
                     'deferrable ' || con.condeferrable, 'deferred ' || con.condeferred,
                     'comment ' || coalesce(pg_catalog.obj_description(con.oid, 'pg_constraint'), '(none)'))
    FROM rel JOIN pg_catalog.pg_constraint con ON con.conrelid = rel.oid
    UNION ALL
    -- Indexes, as CREATE INDEX statements, with their columns' statistics targets (which the
    -- statement does not say: ALTER INDEX ... SET STATISTICS).
    SELECT 'index', rel.relname,
           pg_catalog.pg_get_indexdef(rel.oid) || ' | statistics '
             || (SELECT string_agg(coalesce(nullif(a.attstattarget::text, '-1'), 'default'), ',' ORDER BY a.attnum)
                 FROM pg_catalog.pg_attribute a WHERE a.attrelid = rel.oid AND a.attnum > 0)
    FROM rel WHERE rel.relkind = 'i'
    UNION ALL
    -- Sequences (the identity columns').
    SELECT 'sequence', rel.relname,
           concat_ws(' | ', pg_catalog.format_type(sq.seqtypid, NULL), 'start ' || sq.seqstart,
                     'increment ' || sq.seqincrement, 'min ' || sq.seqmin, 'max ' || sq.seqmax,
                     'cache ' || sq.seqcache, 'cycle ' || sq.seqcycle)
    FROM rel JOIN pg_catalog.pg_sequence sq ON sq.seqrelid = rel.oid
    UNION ALL
    -- Triggers (not the foreign keys' internal ones), as CREATE TRIGGER statements.
    SELECT 'trigger', rel.relname || '.' || t.tgname,
           concat_ws(' | ', pg_catalog.pg_get_triggerdef(t.oid), 'enabled ' || t.tgenabled::text,
                     'comment ' || coalesce(pg_catalog.obj_description(t.oid, 'pg_trigger'), '(none)'))
    FROM rel JOIN pg_catalog.pg_trigger t ON t.tgrelid = rel.oid AND NOT t.tgisinternal
    UNION ALL
    -- Row-level security policies.
    SELECT 'policy', rel.relname || '.' || pol.polname,
           concat_ws(' | ', 'command ' || pol.polcmd::text, 'permissive ' || pol.polpermissive,
                     'roles ' || (SELECT string_agg(CASE WHEN r = 0 THEN 'public' ELSE pg_catalog.pg_get_userbyid(r) END, ',' ORDER BY r)
                                  FROM unnest(pol.polroles) AS r),
                     'using ' || coalesce(pg_catalog.pg_get_expr(pol.polqual, pol.polrelid), '-'),
                     'check ' || coalesce(pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid), '-'),
                     'comment ' || coalesce(pg_catalog.obj_description(pol.oid, 'pg_policy'), '(none)'))
    FROM rel JOIN pg_catalog.pg_policy pol ON pol.polrelid = rel.oid
    UNION ALL
    -- Types of their own (not the row types of tables).
    SELECT 'type', t.typname, t.typtype::text
    FROM pg_catalog.pg_type t, s
    WHERE t.typnamespace = s.nsp AND t.typname LIKE 'memloom\_%' AND t.typrelid = 0
      AND t.typelem = 0
    UNION ALL
    -- The extension it needs.
    SELECT 'extension', e.extname, 'schema ' || n.nspname
    FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'vector'
    UNION ALL
    -- The rows a store starts with: its record, and the ledger of frozen migrations.
    SELECT 'row', 'memloom_meta',
           concat_ws(' | ', 'schema_version ' || m.schema_version,
                     'embedder ' || coalesce(m.embedder_name, 'NULL'))
    FROM memloom_meta m
    UNION ALL
    SELECT 'row', 'memloom_migrations.' || lpad(g.version::text, 4, '0'), g.name || ' ' || g.checksum
    FROM memloom_migrations g
) catalog
ORDER BY section, object, detail
