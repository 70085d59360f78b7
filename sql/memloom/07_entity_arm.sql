-- memloom, the current definition, part 7: the entity arm.
--
-- score(item) = sum over anchored entities e it mentions of
--     ((sim(q, e) - gate) / (1 - gate))^2     similarity above the gate, sharpened
--   * strength(item, e)                       how much the item is about e
--   * ln(1 + N / df(e))                       rarity: N active items, df of them mention e
-- Anchored entities: among the lim nearest, those with sim >= gate and within 0.10 of the
-- nearest one. hash-v1 gives unrelated short names similarities of 0.6 to 0.8 through hash
-- collisions; when the query names an entity exactly (sim near 1) those are dropped, and
-- ubiquitous entities (javascript, node.js) weigh little against the rare ones a query names.
--
-- What it reads: per anchored entity only its per_entity strongest mentions of active items
-- (index memloom_mentions_strength, ties by item id as the final order): node.js is mentioned
-- by 68k items at 1M, and joining every mention took 1.4 s for a query naming it. df(e) comes
-- from memloom_entity_stats (04_statistics.sql); an entity without a row is counted on the
-- spot, up to df_cap mentions. Planned per call, like the keyword arm, but on a small pool without
-- the HNSW index (sql/0031).
--
-- Without the entities' HNSW index (the embedded store below EMBEDDED_HNSW_THRESHOLD items) the
-- nearest entities were an exact scan of every entity's vector: 8,604 rows and most of the arm's
-- time on the Node docs. With a gate above 0 only an entity that shares a non-zero dimension with
-- the query can pass it (no shared dimension: cosine 0), so the exact scan reads only those, found
-- by the GIN index memloom_entities_support over each vector's non-zero dimensions
-- (memloom_vector_support; their pairs since sql/0039): 4 to 32% of the entities on the Node
-- docs, with hash-v1. A store of any other embedder has dense vectors and no such index
-- (memloom_init_store drops it: every entity would qualify), and scans exactly as with a gate
-- of 0. Not every shared dimension lets an entity pass: the query's dimensions outside
-- memloom_gate_support(q, gate) hold less than gate^2 of its squared norm, so an entity sharing
-- none of those dimensions has cosine below the gate (Cauchy-Schwarz), and the search reads only
-- entities sharing one of them (sql/0030: 1,302 -> 503 entities per query on the Node docs, 12
-- of a hash-v1 query's 35 dimensions), and since sql/0039 only those sharing a pair of positions
-- with it (below: 648 -> 159). Same distances (pgvector's
-- <=> on the same vectors), and both exact searches take the nearest by (distance, id)
-- (sql/0041), so of several entities tied at the lim-th distance they keep the same ones, those
-- with the smallest ids, whatever order they read them in: the anchored entities are always the
-- full scan's. With the HNSW index (a server store) the nearest entities come from the index.
--
-- The nearest entities are found first, in a statement of their own, and when the nearest
-- fails the gate (so every one does) the arm returns no rows without planning the mentions'
-- statement: most queries name no entity (sql/0029: such a call 0.71 -> 0.43 ms at 100k items
-- on a server, 2.44 -> 1.69 ms on the Node docs in PGlite).

CREATE FUNCTION memloom_vector_support(v vector) RETURNS integer[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(u.i::integer ORDER BY u.i), '{}')
    FROM unnest(v::real[]) WITH ORDINALITY AS u(x, i)
    WHERE u.x <> 0
$$;
COMMENT ON FUNCTION memloom_vector_support(vector) IS
'the 1-based positions of v''s non-zero components, ascending (two vectors with no position in common have cosine similarity 0); memloom_entities_support indexes their pairs (memloom_vector_pairs)';

CREATE FUNCTION memloom_gate_support(v vector, gate double precision) RETURNS integer[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    -- v's non-zero positions by descending magnitude (ties by position), up to the first one
    -- after which the rest holds less than g^2 of v's squared norm, g = gate - 1e-4 (pgvector's
    -- cosine is computed in single precision: the slack keeps the bound safe). A vector e with
    -- no position in the result has its support inside that rest R, so cos(v, e) <= |v_R| / |v|
    -- < g: it cannot reach the gate. A gate of 0 or below prunes nothing (the whole support).
    SELECT coalesce(array_agg(t.i ORDER BY t.i), '{}')
    FROM (SELECT u.i::integer AS i,
                 coalesce(sum(u.x::double precision * u.x) OVER (ORDER BY abs(u.x) DESC, u.i
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before,
                 sum(u.x::double precision * u.x) OVER () AS total
          FROM unnest(v::real[]) WITH ORDINALITY AS u(x, i)
          WHERE u.x <> 0) t
    WHERE gate <= 1e-4 OR t.before <= (1 - (gate - 1e-4) ^ 2) * t.total
$$;
COMMENT ON FUNCTION memloom_gate_support(vector, double precision) IS
'the positions of v''s largest components that hold more than 1 - gate^2 of its squared norm (with a 1e-4 slack on the gate): a vector sharing no non-zero position with them has cosine similarity to v below gate; every non-zero position for a gate of 0 or below';

-- Sharing one gate dimension is not enough either (sql/0039). With C the positions q and e are
-- both non-zero in, cos(q, e) <= |q_C| / |q| (Cauchy-Schwarz over C). So an entity that reaches
-- the gate shares with q a position a of memloom_gate_support(q, gate) and either
-- (1) shares only a, and q_a^2 >= g^2 (a "heavy" position; rare: a query spreads its mass over a
-- few dozen features), or (2) shares some other non-zero position b of q too. The entities are
-- indexed by the pairs of their own non-zero positions (a, b), a <= b, the single (a, a)
-- included, and the query looks up its heavy singles and the pairs (a in the gate support, b
-- anywhere in its support): on the Node docs (hash-v1, 8,604 entities) 159 candidates per query
-- instead of 648, the same 3.5 that pass. An entity with more than 32 non-zero positions is
-- indexed under the code 0, which every query looks up: it stays a candidate, as before
-- (hash-v1's entity names have 4 non-zero positions at the median, 22 at most).
CREATE FUNCTION memloom_vector_pairs(v vector) RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    x     real[] := v::real[];
    p     integer[] := '{}';
    codes integer[] := '{}';
    i     integer;
    j     integer;
BEGIN
    -- Code of a pair of 1-based positions a <= b: a * 65536 + b (pgvector: at most 16,000
    -- dimensions). Loops, not unnest: in PGlite 0.6x the time of the same in SQL (an index build
    -- evaluates it for every entity). Built-ins only: an index expression is evaluated under a
    -- search_path of pg_catalog alone (CREATE INDEX, REINDEX), where memloom's are not found.
    FOR i IN 1 .. cardinality(x) LOOP
        IF x[i] <> 0 THEN p := p || i; END IF;
    END LOOP;
    IF cardinality(p) > 32 THEN RETURN ARRAY[0]; END IF;
    FOR i IN 1 .. cardinality(p) LOOP
        FOR j IN i .. cardinality(p) LOOP
            codes := codes || (p[i] * 65536 + p[j]);
        END LOOP;
    END LOOP;
    RETURN codes;
END
$$;
COMMENT ON FUNCTION memloom_vector_pairs(vector) IS
'the pairs (a, b), a <= b, of v''s non-zero positions as codes a * 65536 + b (the singles (a, a) included), or {0} when v has more than 32 of them (a candidate for every query); indexed on memloom_entities by memloom_entities_support for the entity arm''s exact search';

CREATE FUNCTION memloom_gate_pairs(v vector, gate double precision) RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    x     real[] := v::real[];
    p     integer[] := '{}';     -- v's non-zero positions
    total double precision := 0;  -- v's squared norm
    codes integer[] := ARRAY[0];
    a     integer;
    b     integer;
BEGIN
    -- The codes (memloom_vector_pairs) an entity must hold one of to reach the gate against v:
    -- 0; (a, a) for a position a of memloom_gate_support(v, gate) holding at least g^2 of v's
    -- squared norm, g = gate - 1e-4 (the slack of memloom_gate_support); (a, b) for a in the gate
    -- support and b another non-zero position of v.
    FOR b IN 1 .. cardinality(x) LOOP
        IF x[b] <> 0 THEN
            p := p || b;
            total := total + x[b]::double precision * x[b];
        END IF;
    END LOOP;
    FOREACH a IN ARRAY memloom_gate_support(v, gate) LOOP
        IF x[a]::double precision * x[a] >= (gate - 1e-4) ^ 2 * total THEN
            codes := codes || (a * 65536 + a);
        END IF;
        FOREACH b IN ARRAY p LOOP
            IF b <> a THEN codes := codes || (least(a, b) * 65536 + greatest(a, b)); END IF;
        END LOOP;
    END LOOP;
    RETURN codes;
END
$$;
COMMENT ON FUNCTION memloom_gate_pairs(vector, double precision) IS
'the position-pair codes (memloom_vector_pairs) of which a vector must hold one to have cosine similarity >= gate to v: 0, v''s heavy gate positions as singles, and the pairs of a gate position (memloom_gate_support) with another non-zero position of v; for a gate above 0';

CREATE INDEX memloom_entities_support ON memloom_entities USING gin (memloom_vector_pairs(embedding));
-- No planner statistics on it: gathering them evaluated the indexed function for every sampled
-- entity (285 of 291 ms of ANALYZE memloom_entities on the Node docs, PGlite), and the arm's
-- bitmap scan of this index needs none (sql/0026).
ALTER INDEX memloom_entities_support ALTER COLUMN 1 SET STATISTICS 0;

CREATE FUNCTION memloom_entity_arm(
    q     vector,
    ns    text,
    lim   integer,
    gate  double precision,
    kinds text[],
    as_of timestamptz DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL
) RETURNS TABLE (id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
SET plan_cache_mode = 'force_custom_plan'
AS $$
#variable_conflict use_column
DECLARE
    margin     constant double precision := 0.10;  -- anchored: within this of the nearest entity
    df_cap     constant integer := 10000;          -- live df count for entities without stats
    per_entity integer;
    n_items    double precision;
    q_support  integer[];         -- set: only entities holding one of these position-pair codes
    near_ids   bigint[];
    near_dist  double precision[];
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    -- The namespace's statistics: a primary-key read, the same plan whatever the values, so
    -- one generic plan per session on any pool (sql/0032). The function's SET clause restores
    -- plan_cache_mode when it returns.
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    -- The searches below are planned per call, but on a small pool searched exactly
    -- (memloom_small_pool, 03_pool.sql), where they keep their generic plans too. Not with the
    -- entities' HNSW index, where a plan made without the limit could prefer an exact scan and
    -- find other neighbours than the index's.
    IF to_regclass('memloom_entities_embedding') IS NOT NULL OR NOT memloom_small_pool() THEN
        PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
    END IF;
    IF gate > 0 AND to_regclass('memloom_entities_embedding') IS NULL
       AND to_regclass('memloom_entities_support') IS NOT NULL THEN
        -- Exact search without the HNSW index: the lim nearest by (distance, id) of the entities
        -- that can pass the gate (memloom_entities_support, memloom_gate_pairs). Every entity
        -- that passes is among them, and by (distance, id) all that pass come before any that
        -- fails, so those that pass among the first lim are a scan of every entity's (sql/0041:
        -- before, a tie across the lim-th place sent the search to that scan, 10 of the Node
        -- docs' 90 queries, to let its scan order choose).
        q_support := memloom_gate_pairs(q, gate);
        SELECT array_agg(n.id ORDER BY n.distance, n.id), array_agg(n.distance ORDER BY n.distance, n.id)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns AND memloom_vector_pairs(en.embedding) && q_support
              ORDER BY en.embedding <=> q, en.id
              LIMIT lim) n;
    ELSIF to_regclass('memloom_entities_embedding') IS NULL THEN
        -- Exact search of every entity (dense vectors: no support index), ties by id as above.
        SELECT array_agg(n.id ORDER BY n.distance, n.id), array_agg(n.distance ORDER BY n.distance, n.id)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns
              ORDER BY en.embedding <=> q, en.id
              LIMIT lim) n;
    ELSE
        -- Nearest entities first through HNSW, then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT array_agg(n.id ORDER BY n.distance), array_agg(n.distance ORDER BY n.distance)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns
              ORDER BY en.embedding <=> q
              LIMIT lim) n;
    END IF;
    -- The nearest entity fails the gate: none passes, no rows, and the mentions' statement is
    -- not planned at all (most queries name no entity).
    IF near_ids IS NULL OR NOT (1 - near_dist[1] >= gate) THEN RETURN; END IF;
    RETURN QUERY
    WITH near AS (
        SELECT u.id, 1 - u.distance AS sim FROM unnest(near_ids[1:lim], near_dist[1:lim]) AS u(id, distance)
    ), anchored AS (
        SELECT near.id, near.sim FROM near
        WHERE near.sim >= gate AND near.sim >= (SELECT max(x.sim) FROM near x) - margin
    ), weighted AS MATERIALIZED (  -- once per entity, not per mention
        SELECT a.id,
               power(greatest(a.sim - gate, 0) / greatest(1 - gate, 1e-6), 2)
                 * ln(1 + n_items / greatest(coalesce(
                       (SELECT s.df FROM memloom_entity_stats s WHERE s.entity_id = a.id),
                       (SELECT count(*) FROM (
                            SELECT 1 FROM memloom_mentions mt JOIN memloom_items m ON m.id = mt.item_id
                            WHERE mt.entity_id = a.id AND m.namespace = ns AND m.status = 'active'
                            LIMIT df_cap) c)), 1)) AS w
        FROM anchored a
    )
    SELECT e.item_id, sum(wt.w * e.strength) AS score
    FROM weighted wt
    CROSS JOIN LATERAL (
        SELECT mt.item_id, mt.strength::double precision AS strength
        FROM memloom_mentions mt
        JOIN memloom_items m ON m.id = mt.item_id
        WHERE mt.entity_id = wt.id AND m.namespace = ns
          AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY mt.strength DESC, mt.item_id
        LIMIT per_entity
    ) e
    GROUP BY e.item_id
    ORDER BY score DESC, e.item_id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[], timestamptz, timestamptz, timestamptz) IS
'the entity arm: the entities of the namespace nearest q (without HNSW exactly, ties by id) with cosine similarity >= gate and within 0.10 of the nearest, then, per entity, its strongest mentions by the items a recall sees (memloom_visible: active, or valid at as_of; event time between since and until; at most greatest(2 lim, 20)), ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df) (df from memloom_entity_stats, the current statistics also for an as_of in the past); no entity above the gate, no rows';

