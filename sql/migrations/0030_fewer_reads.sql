-- memloom schema 30: a recall that reads less; the same rows, but for ties now always by id.
--
-- * The entity arm's exact search (the embedded store below its HNSW threshold, hash-v1: the
--   entities' non-zero-dimension index) read every entity sharing any non-zero dimension with
--   the query. Only one sharing a dimension of memloom_gate_support(q, gate) can reach the gate
--   (the rest of the query's dimensions hold less than gate^2 of its squared norm): on the Node
--   docs 503 entities per query instead of 1,302. The same nearest entities pass the gate, so
--   the same rows.
-- * memloom_fuse called the keyword arm twice when the limit was above the candidates per arm
--   (10) and fewer items voted than asked for (179 of 199 questions of a LoCoMo conversation at
--   limit 20): once for the votes, once more for the unscored tail. The arm ranks a candidate
--   set that does not depend on its limit, in a total order, so one call as deep as the larger
--   of the two gives both lists.
-- * The same for the vector arm when its search is exact (no HNSW index), which now takes the
--   lim nearest by (distance, id): by distance alone, which of several items at one distance
--   (the same text saved twice) made the cut depended on the order the scan met them in, so a
--   limit of 21 and one of 50 could end in different copies, and a deeper call did not start
--   with a shallower one's rows. HNSW's relaxed-order scan keeps two calls.
-- docs/BENCHMARKS.md "A recall that reads less (schema 30)".

CREATE OR REPLACE FUNCTION memloom_vector_arm(
    q     vector,
    ns    text,
    lim   integer,
    kinds text[],
    as_of timestamptz DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL
) RETURNS TABLE (id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = 'force_custom_plan'
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
AS $$
#variable_conflict use_column
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- Planned per call, so with as_of, since and until NULL the time filter folds to
    -- status = 'active' (memloom_visible, 03_pool.sql).
    IF to_regclass('memloom_items_embedding') IS NULL THEN
        -- Exact: the lim nearest by (distance, id), ties never by scan order.
        RETURN QUERY
        SELECT m.id, m.embedding <=> q AS distance
        FROM memloom_items m
        WHERE m.namespace = ns AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY m.embedding <=> q, m.id
        LIMIT lim;
        RETURN;
    END IF;
    -- ef_search bounds how many neighbours HNSW returns; the iterative scan keeps going when
    -- the namespace/time/kind filter removes rows. Both are reset when the function returns.
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    RETURN QUERY
    SELECT a.id, a.distance FROM (
        SELECT m.id, m.embedding <=> q AS distance
        FROM memloom_items m
        WHERE m.namespace = ns AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY m.embedding <=> q
        LIMIT lim
    ) a
    ORDER BY a.distance, a.id;  -- relaxed_order may return neighbours slightly out of order
END
$$;
COMMENT ON FUNCTION memloom_vector_arm(vector, text, integer, text[], timestamptz, timestamptz, timestamptz) IS
'the vector arm: the lim items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) nearest to q by cosine distance, through the HNSW index when there is one, else exactly (ties by id)';

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
    q_support  integer[];         -- set: only entities sharing one of these dimensions with q
    near_ids   bigint[];
    near_dist  double precision[];
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    IF gate > 0 AND to_regclass('memloom_entities_embedding') IS NULL
       AND to_regclass('memloom_entities_support') IS NOT NULL THEN
        -- Exact search without the HNSW index: the lim + 1 nearest of the entities that can pass
        -- the gate (memloom_entities_support, memloom_gate_support). A tie across the lim-th
        -- place that passes the gate would make the choice depend on the scan order: then the
        -- full scan below decides.
        q_support := memloom_gate_support(q, gate);
        SELECT array_agg(n.id ORDER BY n.distance), array_agg(n.distance ORDER BY n.distance)
          INTO near_ids, near_dist
        FROM (SELECT en.id, en.embedding <=> q AS distance
              FROM memloom_entities en
              WHERE en.namespace = ns AND memloom_vector_support(en.embedding) && q_support
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
    arms             text[]           DEFAULT NULL,
    keyword_floor    double precision DEFAULT 0.3,
    as_of            timestamptz      DEFAULT NULL,
    since            timestamptz      DEFAULT NULL,
    until            timestamptz      DEFAULT NULL
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
LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
#variable_conflict use_column
DECLARE
    vector_ids  bigint[];
    vector_dist double precision[];
    vector_seen bigint[];
    vector_all  bigint[];           -- the vector arm's list, lim deep when the search is exact
    vector_alld double precision[];
    keyword_ids bigint[];
    keyword_all bigint[];           -- the keyword arm's list, greatest(candidates, lim) deep
    keyword_sc  double precision[];
    entity_ids  bigint[];
    deep_vector  bigint[];
    deep_keyword bigint[];
    fused_n      bigint;
BEGIN
    PERFORM memloom_check_vector(query_embedding);
    IF ns IS NULL THEN
        RAISE EXCEPTION 'memloom_fuse needs a namespace' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Runs as the owner, whom row-level security does not bind: only the caller's namespace (0008).
    PERFORM memloom_assert_namespace(ns);
    IF arms IS NOT NULL AND NOT arms <@ ARRAY['vector', 'keyword', 'entity'] THEN
        RAISE EXCEPTION 'unknown arm in %; arms are vector, keyword, entity', arms
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF keyword_floor IS NULL OR keyword_floor NOT BETWEEN 0 AND 1 THEN
        RAISE EXCEPTION 'keyword_floor is a fraction of the best keyword score, 0 to 1, not %',
            coalesce(keyword_floor::text, 'NULL') USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF since > until THEN
        RAISE EXCEPTION 'since (%) is after until (%): nothing can match', since, until
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lim IS NULL OR lim <= 0 THEN RETURN; END IF;
    candidates := coalesce(candidates, memloom_default_candidates(lim));
    -- An arm left out of arms does not run: no votes, and no boost ids for the keyword arm.
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        -- Without the HNSW index the search is exact, by (distance, id): a call lim deep (for
        -- the tail below) starts with the votes' `candidates` rows, so one call serves both
        -- (sql/0030). HNSW scans in relaxed order, and its votes keep a call of their own.
        IF lim > candidates AND to_regclass('memloom_items_embedding') IS NULL THEN
            SELECT array_agg(a.id ORDER BY a.distance, a.id), array_agg(a.distance ORDER BY a.distance, a.id)
              INTO vector_all, vector_alld
            FROM memloom_vector_arm(query_embedding, ns, lim, kinds, as_of, since, until) a;
            vector_ids := vector_all[1:greatest(candidates, 0)];
            vector_dist := vector_alld[1:greatest(candidates, 0)];
        ELSE
            SELECT array_agg(a.id ORDER BY a.distance, a.id), array_agg(a.distance ORDER BY a.distance, a.id)
              INTO vector_ids, vector_dist
            FROM memloom_vector_arm(query_embedding, ns, candidates, kinds, as_of, since, until) a;
        END IF;
        -- The keyword arm still scores every vector candidate (boost ids); only the votes are cut.
        vector_seen := vector_ids;
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        -- Called once, as deep as the votes or the tail below need: the arm ranks a candidate set
        -- that does not depend on lim, in a total order (score, then id), so its first
        -- `candidates` rows are those of a call with lim = candidates, and its first lim those
        -- the tail would ask for (sql/0030: the tail called it again).
        SELECT array_agg(a.id ORDER BY a.pos), array_agg(a.score ORDER BY a.pos)
          INTO keyword_all, keyword_sc
        FROM memloom_keyword_arm(query_text, ns, greatest(candidates, lim), kinds, keyword_scan_cap,
                                 vector_seen, as_of, since, until) WITH ORDINALITY AS a(id, score, pos);
        keyword_ids := ARRAY(
            SELECT u.id FROM unnest(keyword_all[1:candidates], keyword_sc[1:candidates]) AS u(id, score)
            WHERE u.score >= keyword_floor * keyword_sc[1]
            ORDER BY u.score DESC, u.id);
    END IF;
    IF vector_ids IS NOT NULL THEN
        vector_ids := ARRAY(
            SELECT u.id FROM unnest(vector_ids, vector_dist) WITH ORDINALITY AS u(id, distance, pos)
            WHERE u.distance < 1
            ORDER BY u.pos);
    END IF;
    IF arms IS NULL OR 'entity' = ANY (arms) THEN
        entity_ids := ARRAY(SELECT a.id FROM memloom_entity_arm(query_embedding, ns, candidates,
                                                               entity_gate, kinds, as_of, since, until) a);
    END IF;
    RETURN QUERY
    SELECT m.id, m.kind, m.source, m.breadcrumb, m.key, m.content, f.rrf_score,
           1 - (m.embedding <=> query_embedding), f.vector_rank, f.keyword_rank, f.entity_rank
    FROM memloom_rrf(vector_ids, keyword_ids, entity_ids, k, w_vector, w_keyword, w_entity) f
    JOIN memloom_items m ON m.id = f.id
    ORDER BY f.rrf_score DESC, f.id
    LIMIT lim;
    GET DIAGNOSTICS fused_n = ROW_COUNT;
    IF fused_n >= lim THEN RETURN; END IF;
    -- More asked for than the candidates voted for: the vector and keyword arms' further items
    -- follow, unscored (rrf_score 0, no ranks), by their position in the deeper lists, then id.
    -- The voting calls above are untouched (the keyword arm keeps the same boost ids), so the
    -- first results never depend on the limit; only this tail grows with it.
    IF vector_all IS NOT NULL THEN  -- the vector arm's lim-deep list, from the call above
        deep_vector := ARRAY(SELECT u.id FROM unnest(vector_all, vector_alld) WITH ORDINALITY AS u(id, distance, pos)
                             WHERE u.distance < 1 ORDER BY u.pos);
    ELSIF arms IS NULL OR 'vector' = ANY (arms) THEN
        SELECT array_agg(a.id ORDER BY a.distance, a.id) INTO deep_vector
        FROM memloom_vector_arm(query_embedding, ns, lim, kinds, as_of, since, until) a WHERE a.distance < 1;
    END IF;
    deep_keyword := keyword_all[1:lim];  -- the keyword arm's first lim (the call above)
    RETURN QUERY
    SELECT m.id, m.kind, m.source, m.breadcrumb, m.key, m.content, 0::double precision,
           1 - (m.embedding <=> query_embedding), NULL::integer, NULL::integer, NULL::integer
    FROM (SELECT d.id, min(d.pos) AS best
          FROM (SELECT u.id, u.pos FROM unnest(deep_vector) WITH ORDINALITY AS u(id, pos)
                UNION ALL
                SELECT u.id, u.pos FROM unnest(deep_keyword) WITH ORDINALITY AS u(id, pos)) d
          WHERE d.id <> ALL (coalesce(vector_ids, '{}') || coalesce(keyword_ids, '{}') || coalesce(entity_ids, '{}'))
          GROUP BY d.id) t
    JOIN memloom_items m ON m.id = t.id
    ORDER BY t.best, t.id
    LIMIT lim - fused_n;
END
$$;

-- memloom_fuse's pinned search path, as 10_security.sql sets it.
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
    EXECUTE format('ALTER FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision, timestamptz, timestamptz, timestamptz) SET search_path = %s', path);
END
$$;

UPDATE memloom_meta SET schema_version = greatest(schema_version, 30);
