-- The exact vector search through the one-list IVFFlat index (sql/0040): memloom_vector_arm
-- must return what a sequential scan ordered by (distance, id) returns, for every limit, with
-- duplicate vectors tied across the cut, zero vectors the index does not hold, and a second
-- namespace, and the index must be what served it.
SELECT setseed(0.40);
SELECT memloom_init_store('toy', 1, 8, vector_index => false);
SELECT indexname, indexdef ~ 'ivfflat' AS ivfflat FROM pg_indexes WHERE indexname = 'memloom_items_exact';

-- 900 items in namespace a: 840 random vectors, 40 copies of 20 of them (ties at distance 0 and
-- across every cut), 20 zero vectors; 300 in namespace b (too few to take the index: a holds
-- 900 of 1,200).
CREATE TEMP TABLE v AS
SELECT i, ('[' || array_to_string(ARRAY(SELECT round((random() * 2 - 1)::numeric, 3) FROM generate_series(1, 8) WHERE i > 0), ',') || ']')::vector AS v
FROM generate_series(1, 840) AS i;
INSERT INTO v SELECT 840 + g.n, (SELECT x.v FROM v x WHERE x.i = 1 + g.n % 20) FROM generate_series(1, 40) AS g(n);
INSERT INTO v SELECT 880 + i, '[0,0,0,0,0,0,0,0]' FROM generate_series(1, 20) AS i;
SELECT count(*) FROM (SELECT memloom_remember('a', NULL, 'item ' || i, v) FROM v ORDER BY i) r;
SELECT count(*) FROM (SELECT memloom_remember('b', NULL, 'other ' || i, v) FROM v WHERE i <= 300 ORDER BY i) r;
-- One superseded version: the index holds the active rows only.
SELECT count(*) FROM memloom_remember('a', 'k', 'first', '[1,1,1,1,1,1,1,1]');
SELECT count(*) FROM memloom_remember('a', 'k', 'second', '[1,1,1,1,1,1,1,0.9]');
VACUUM ANALYZE memloom_items;

-- Queries: 30 random vectors, 10 of the duplicated ones, one zero vector.
CREATE TEMP TABLE q AS
SELECT i, ('[' || array_to_string(ARRAY(SELECT round((random() * 2 - 1)::numeric, 3) FROM generate_series(1, 8) WHERE i > 0), ',') || ']')::vector AS v
FROM generate_series(1, 30) AS i;
INSERT INTO q SELECT 30 + g.n, (SELECT x.v FROM v x WHERE x.i = g.n) FROM generate_series(1, 10) AS g(n);
INSERT INTO q VALUES (41, '[0,0,0,0,0,0,0,0]');
CREATE TEMP TABLE lims AS SELECT unnest(ARRAY[1, 2, 5, 10, 19, 37, 50, 200, 1000]) AS lim;

-- The reference: every active row of the namespace, by (distance, id), from the heap alone.
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE expected AS
SELECT q.i, l.lim, ns,
       (SELECT array_agg(x.id ORDER BY x.d, x.id) FROM (
            SELECT m.id, m.embedding <=> q.v AS d FROM memloom_items m
            WHERE m.namespace = ns AND m.status = 'active'
            ORDER BY 2, 1 LIMIT l.lim) x) AS ids
FROM q, lims l, unnest(ARRAY['a', 'b']) AS ns;
RESET enable_indexscan;
RESET enable_bitmapscan;

SELECT pg_stat_force_next_flush();
SELECT idx_scan AS scans_before FROM pg_stat_user_indexes WHERE indexrelname = 'memloom_items_exact' \gset
SELECT e.ns, count(*) AS calls,
       count(*) FILTER (WHERE e.ids IS NOT DISTINCT FROM
           (SELECT array_agg(a.id ORDER BY a.distance, a.id) FROM memloom_vector_arm(q.v, e.ns, e.lim, NULL) a)) AS same
FROM expected e JOIN q ON q.i = e.i
GROUP BY e.ns ORDER BY e.ns;
-- The index served namespace a's calls: one scan per call with a non-zero query (40 queries
-- x 9 limits), none for b or for the zero query.
SELECT pg_stat_force_next_flush();
SELECT pg_sleep(0.1);
SELECT pg_stat_clear_snapshot();
SELECT idx_scan - :scans_before AS index_scans FROM pg_stat_user_indexes WHERE indexrelname = 'memloom_items_exact';

-- The duplicates tie across the cut: the index returns them in its own order, the arm by id.
SELECT array_agg(a.id ORDER BY a.distance, a.id) = (SELECT ids FROM expected WHERE i = 31 AND lim = 2 AND ns = 'a') AS tie_by_id,
       count(*) FILTER (WHERE a.distance < 1e-6) AS at_zero
FROM memloom_vector_arm((SELECT v FROM q WHERE i = 31), 'a', 2, NULL) a;

-- With kinds, a time filter or as of an instant the sequential scan serves, with the same rows.
SELECT (SELECT array_agg(a.id ORDER BY a.distance, a.id) FROM memloom_vector_arm(q.v, 'a', 10, '{memory}') a)
       = (SELECT ids FROM expected WHERE i = 1 AND lim = 10 AND ns = 'a') AS kinds_same
FROM q WHERE q.i = 1;

-- Past HNSW's threshold the store builds HNSW, which replaces the exact index; ensure does not
-- build it again then, and builds it when the HNSW index is gone.
SELECT memloom_ensure_vector_index();
SELECT to_regclass('memloom_items_exact') IS NULL AS exact_dropped;
SELECT memloom_ensure_exact_index();
DROP INDEX memloom_items_embedding;
SELECT memloom_ensure_exact_index();
SELECT memloom_ensure_exact_index();
