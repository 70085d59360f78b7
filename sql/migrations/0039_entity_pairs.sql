-- memloom schema 39: the entity arm's exact search reads the entities that can reach the gate
-- by a tighter bound (issue 19: a small store's recall).
--
-- Without the entities' HNSW index (the embedded store below 20,000 items) the arm searched the
-- entities sharing a position of memloom_gate_support(q, gate) with the query: 648 of 8,604 on
-- the Node docs (hash-v1), read from the heap, their cosines computed, to find the 3.5 per query
-- that pass the gate. With C the positions q and e share, cos(q, e) <= |q_C| / |q|, so
-- one that passes shares a gate position a and either a second non-zero position of q or only a,
-- when q_a^2 alone reaches gate^2. memloom_entities_support now indexes each entity's pairs of
-- non-zero positions (memloom_vector_pairs) and the arm looks up the query's
-- (memloom_gate_pairs): 159 candidates per query. The entities that can pass are all among them,
-- so the nearest that pass the gate, the anchored entities and the arm's rows are the same.

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

COMMENT ON FUNCTION memloom_vector_support(vector) IS
'the 1-based positions of v''s non-zero components, ascending (two vectors with no position in common have cosine similarity 0); memloom_entities_support indexes their pairs (memloom_vector_pairs)';

DO $$
BEGIN
    -- Only a hash-v1 store has the index (memloom_init_store drops it for dense embedders).
    IF to_regclass('memloom_entities_support') IS NOT NULL THEN
        DROP INDEX memloom_entities_support;
        CREATE INDEX memloom_entities_support ON memloom_entities USING gin (memloom_vector_pairs(embedding));
        ALTER INDEX memloom_entities_support ALTER COLUMN 1 SET STATISTICS 0;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION memloom_entity_arm(
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
        -- Exact search without the HNSW index: the lim + 1 nearest of the entities that can pass
        -- the gate (memloom_entities_support, memloom_gate_pairs). A tie across the lim-th
        -- place that passes the gate would make the choice depend on the scan order: then the
        -- full scan below decides.
        q_support := memloom_gate_pairs(q, gate);
        SELECT array_agg(n.id ORDER BY n.distance), array_agg(n.distance ORDER BY n.distance)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns AND memloom_vector_pairs(en.embedding) && q_support
              ORDER BY en.embedding <=> q
              LIMIT lim + 1) n;
        IF cardinality(near_ids) > lim AND near_dist[lim + 1] = near_dist[lim] AND 1 - near_dist[lim] >= gate THEN
            q_support := NULL;
        END IF;
    END IF;
    IF q_support IS NULL THEN
        -- Nearest entities first (HNSW, else an exact scan of every entity), then the gate: a
        -- distance filter inside the index scan would make the iterative scan walk the whole
        -- graph when nothing passes.
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
'the entity arm: the entities of the namespace nearest q with cosine similarity >= gate and within 0.10 of the nearest, then, per entity, its strongest mentions by the items a recall sees (memloom_visible: active, or valid at as_of; event time between since and until; at most greatest(2 lim, 20)), ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df) (df from memloom_entity_stats, the current statistics also for an as_of in the past); no entity above the gate, no rows';


UPDATE memloom_meta SET schema_version = greatest(schema_version, 39);
