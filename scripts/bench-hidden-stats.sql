-- Recall with the planner statistics hidden (sql/0012) against PostgreSQL's defaults, in one
-- session: 30,000 items in namespaces a (90%) and b (10%), HNSW; memloom_fuse ms per call over
-- 50 queries x 3, alternating hidden / default twice. Run on a migrated database as a superuser:
--   psql -X -q URL -f scripts/bench-hidden-stats.sql   (a few minutes of loading; docs/BENCHMARKS.md)
SELECT memloom_init_store('hash', 1, 256, true);
INSERT INTO memloom_items (namespace, kind, source, content, embedding)
SELECT CASE WHEN g % 10 = 0 THEN 'b' ELSE 'a' END, 'chunk', 'doc' || g || '.md',
       'section ' || g || ' about the connection pool and '
         || (ARRAY['buffers','vacuum','replication','indexes','locks'])[1 + g % 5]
         || ' with setting_' || (g % 3000) || ' in the worker',
       v.e
FROM generate_series(1, 30000) g,
     LATERAL (SELECT l2_normalize(array_agg(random() - 0.5)::real[]::vector) AS e
              FROM generate_series(1, 256) WHERE g > 0) v;
SELECT memloom_refresh_stats('a');
SELECT memloom_refresh_stats('b');
CREATE TABLE bench_q AS SELECT row_number() OVER () AS n, embedding, (ARRAY['connection pool worker','setting_42','vacuum buffers section','the worker','replication locks'])[1 + (id % 5)::int] AS q FROM memloom_items WHERE id % 600 = 1;
CREATE FUNCTION bench(ns text, reps int) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; r record; x bigint; BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..reps LOOP FOR r IN SELECT * FROM bench_q LOOP
    SELECT count(*) INTO x FROM memloom_fuse(r.q, r.embedding, ns, 10);
  END LOOP; END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000 / (reps * (SELECT count(*) FROM bench_q));
END $$;
SELECT 'warm', bench('a', 1), bench('b', 1);
SELECT 'hidden 1', round(bench('a', 3)::numeric, 2), round(bench('b', 3)::numeric, 2);
ALTER TABLE memloom_items ALTER COLUMN namespace SET STATISTICS -1; ALTER TABLE memloom_entities ALTER COLUMN namespace SET STATISTICS -1; ANALYZE memloom_items; ANALYZE memloom_entities;
SELECT 'default 1', round(bench('a', 3)::numeric, 2), round(bench('b', 3)::numeric, 2);
SELECT memloom_hide_planner_statistics();
SELECT 'hidden 2', round(bench('a', 3)::numeric, 2), round(bench('b', 3)::numeric, 2);
ALTER TABLE memloom_items ALTER COLUMN namespace SET STATISTICS -1; ALTER TABLE memloom_entities ALTER COLUMN namespace SET STATISTICS -1; ANALYZE memloom_items; ANALYZE memloom_entities;
SELECT 'default 2', round(bench('a', 3)::numeric, 2), round(bench('b', 3)::numeric, 2);
SELECT memloom_hide_planner_statistics();
