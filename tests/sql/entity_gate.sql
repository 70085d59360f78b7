-- memloom_gate_support (sql/0030): the query dimensions an entity must share to reach the
-- entity arm's gate. An entity sharing none of them has cosine similarity below the gate, so
-- the arm's exact search may skip it; the test checks that bound on many random sparse pairs
-- (no pair at or above the gate is ever pruned) and that the pruning is real (pairs sharing a
-- non-zero dimension but none of the gate's).
SELECT memloom_gate_support('[0,0,0]', 0.6) AS zero_vector;
SELECT memloom_gate_support('[0.1,0,-0.9,0.3]', 0) AS gate_0_keeps_all;
SELECT memloom_gate_support('[0.1,0,-0.9,0.3]', 0.6) AS gate_06;
SELECT memloom_gate_support('[0.5,0.5,0.5,0.5]', 0.6) AS ties_by_position;
SELECT memloom_gate_support('[0.5,0.5,0.5,0.5]', 1) AS gate_1;

SELECT setseed(0.3);
-- 150 sparse vectors in 48 dimensions: hash-v1-like (a few non-zero components, signed), and
-- each one's neighbours: the same vector with some components dropped, rescaled or added, so
-- that many cosines fall near every gate.
CREATE TEMP TABLE base AS
SELECT b, array_agg(CASE WHEN random() < 0.25 THEN (random() * 2 - 1)::real ELSE 0 END ORDER BY d) AS x
FROM generate_series(1, 150) b, generate_series(1, 48) d GROUP BY b;
CREATE TEMP TABLE vecs AS
SELECT row_number() OVER () AS id, v::vector AS v FROM (
    SELECT x AS v FROM base
    UNION ALL
    SELECT (SELECT array_agg(CASE WHEN random() < 0.15 THEN 0
                                  WHEN random() < 0.1 THEN (random() * 2 - 1)::real
                                  ELSE x[d] * (0.7 + 0.6 * random())::real END ORDER BY d)
            FROM generate_series(1, 48) d)
    FROM base, generate_series(1, 3)
) s WHERE v::vector <> array_fill(0::real, ARRAY[48])::vector;
SELECT count(*) AS vectors FROM vecs;

CREATE TEMP TABLE sup AS SELECT id, v, memloom_vector_support(v) AS s FROM vecs;
CREATE TEMP TABLE pairs AS
SELECT g.gate, 1 - (q.v <=> e.v) AS sim, e.s && q.s AS shares_any, e.s && q.gs AS shares_gate
FROM (SELECT sup.*, g.gate, memloom_gate_support(sup.v, g.gate) AS gs
      FROM sup, (VALUES (0.3::double precision), (0.6), (0.8)) g(gate) WHERE sup.id % 6 = 0) q
JOIN (VALUES (0.3::double precision), (0.6), (0.8)) g(gate) ON g.gate = q.gate
JOIN sup e ON e.id <> q.id;

-- Every pair at or above its gate shares one of the gate's dimensions (0 pruned wrongly), and
-- many pairs below it that share some dimension are pruned.
SELECT gate,
       count(*) FILTER (WHERE sim >= gate) > 50 AS many_reach_the_gate,
       count(*) FILTER (WHERE sim >= gate AND NOT shares_gate) AS pruned_but_reach_the_gate,
       count(*) FILTER (WHERE shares_any AND NOT shares_gate) > 1000 AS many_pruned
FROM pairs GROUP BY gate ORDER BY gate;

-- memloom_vector_pairs / memloom_gate_pairs (sql/0039): an entity reaching the gate shares a
-- gate position a with the query and another non-zero position, or only a when a alone holds
-- gate^2 of the query's squared norm; the index holds each entity's position pairs (the singles
-- included) and the query looks up its pairs. A vector with more than 32 non-zero positions is
-- indexed under 0, which every query holds.
SELECT memloom_vector_pairs('[0,1,0,2]') AS pairs_of_2_and_4;
SELECT memloom_vector_pairs('[0,0,0]') AS zero_vector_pairs;
SELECT memloom_vector_pairs(array_fill(0.5::real, ARRAY[33])::vector) AS dense_33,
       memloom_vector_pairs(array_fill(0.5::real, ARRAY[32])::vector) = (
           SELECT array_agg(a * 65536 + b ORDER BY a, b) FROM generate_series(1, 32) a, generate_series(1, 32) b WHERE a <= b
       ) AS all_pairs_of_32;
SELECT memloom_gate_pairs('[0.9,0.1,0,0.1]', 0.6) AS heavy_first;
-- The single matters: a one-position entity near the query shares no pair (a, b), b <> a, with it.
SELECT 1 - ('[1,0,0,0]'::vector <=> '[0.9,0.1,0,0.1]') >= 0.6 AS reaches_the_gate,
       memloom_vector_pairs('[1,0,0,0]') && memloom_gate_pairs('[0.9,0.1,0,0.1]', 0.6) AS found;
-- The random pairs above, and 40 dense vectors (more than 32 non-zero positions) among them.
CREATE TEMP TABLE vecs2 AS
SELECT id, v FROM vecs
UNION ALL
SELECT 10000 + b, (SELECT array_agg(CASE WHEN d % 12 = b % 12 THEN 0 ELSE (random() * 2 - 1)::real END ORDER BY d)
                   FROM generate_series(1, 48) d)::vector
FROM generate_series(1, 40) b;
CREATE TEMP TABLE codes AS
SELECT id, v, memloom_vector_support(v) AS s, memloom_vector_pairs(v) AS p FROM vecs2;
CREATE TEMP TABLE pair_bound AS
SELECT g.gate, 1 - (q.v <=> e.v) AS sim, e.s && q.gs AS shares_gate, e.p && q.gp AS shares_pair,
       e.p = '{0}' AS dense
FROM (SELECT codes.*, g.gate, memloom_gate_support(codes.v, g.gate) AS gs, memloom_gate_pairs(codes.v, g.gate) AS gp
      FROM codes, (VALUES (0.3::double precision), (0.6), (0.8)) g(gate) WHERE codes.id % 6 = 0) q
JOIN (VALUES (0.3::double precision), (0.6), (0.8)) g(gate) ON g.gate = q.gate
JOIN codes e ON e.id <> q.id;
-- No pair at or above its gate is pruned; many that share a gate position are (the bound is
-- tighter than the gate support's); dense vectors are always candidates.
SELECT gate,
       count(*) FILTER (WHERE sim >= gate AND NOT shares_pair) AS pruned_but_reach_the_gate,
       count(*) FILTER (WHERE shares_gate AND NOT shares_pair) > 500 AS many_more_pruned,
       bool_and(shares_pair) FILTER (WHERE dense) AS dense_always_candidates
FROM pair_bound GROUP BY gate ORDER BY gate;
