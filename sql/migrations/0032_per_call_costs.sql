-- memloom schema 32: less fixed work per keyword and entity arm call.
--
-- 1. The arms' statistics reads keep one plan per session on every pool. Both arms run with
--    plan_cache_mode = force_custom_plan (sql/0006), so on a server every statement in them was
--    planned again on every call, the primary-key reads of the namespace's statistics and of
--    the query terms' document frequencies too: their plan is the same whatever the values, and
--    on the 100k-item bench database planning the terms' statement cost about 0.2 ms a call,
--    more than it ran. They now run under force_generic_plan on every pool; the arms switch back
--    to force_custom_plan for their searches (the keyword tiers, the nearest entities and their
--    mentions), except on a small pool searched exactly, where schema 31 keeps those generic too.
-- 2. memloom_tsquery_any is one expression the planner inlines. With a FROM it ran as a separate
--    SQL function, parsed and planned again in every transaction, up to five times per keyword
--    arm call. The same tsquery but for the order of its lexemes (tsvector order) and repeats
--    (once each), neither of which changes what it matches.
-- The same rows and scores. docs/BENCHMARKS.md "Less fixed work per arm call (schema 32)".

CREATE OR REPLACE FUNCTION memloom_tsquery_any(lexemes text[], op text DEFAULT '|') RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- One expression, no FROM, so the planner inlines it (sql/0032). As a function with a FROM
    -- it ran as a separate SQL function, parsed and planned again in every transaction: up to
    -- five times per keyword arm call. array_to_tsvector quotes and escapes each lexeme
    -- verbatim (and drops repeats), its text separating them with single spaces; the pattern
    -- matches each whole quoted lexeme from its opening quote (the longest match: a quote or a
    -- space inside one stays in it) and puts op after it, and the last op is cut off.
    SELECT nullif(regexp_replace(regexp_replace(array_to_tsvector(lexemes)::text,
                                                '(''(?:[^''\\]|''''|\\.)*'')(?: |$)', '\1 ' || op || ' ', 'g'),
                                 ' [^ ]+ $', ''), '')::tsquery
$$;
COMMENT ON FUNCTION memloom_tsquery_any(text[], text) IS
'a tsquery of the given lexemes taken verbatim (no parsing or stemming; each once, in tsvector order), joined by op (| or &); null for none; the lexemes must not be null';

CREATE OR REPLACE FUNCTION memloom_keyword_arm(
    query_text text,
    ns         text,
    lim        integer,
    kinds      text[],
    scan_cap   integer,
    boost_ids  bigint[] DEFAULT NULL,
    as_of      timestamptz DEFAULT NULL,
    since      timestamptz DEFAULT NULL,
    until      timestamptz DEFAULT NULL
) RETURNS TABLE (id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = 'force_custom_plan'
SET synchronize_seqscans = off
SET max_parallel_workers_per_gather = 0
AS $$
#variable_conflict use_column
DECLARE
    bm25_k1  CONSTANT double precision := 1.2;
    bm25_b   CONSTANT double precision := 0.75;
    -- BM25F: a query term in the item's heading counts as this many more occurrences before
    -- saturation (docs/EVAL.md, "Fusion").
    heading_w CONSTANT double precision := 2.0;
    n_docs   double precision;
    avg_len  double precision;
    lexemes  text[];
    idfs     double precision[];
    terms    tsquery[];
    exact    text[];
    rare     text[];
    exact_df double precision;
    tier     tsquery;
    tiers    tsquery[] := '{}';
    capped   boolean[] := '{}';
    i        integer;
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- The namespace's and the terms' statistics are primary-key reads, the same plan whatever
    -- the values: one generic plan per session on any pool (sql/0032; planned per call, they
    -- cost about 0.2 ms a call on a server, more than they ran). The function's SET clause
    -- restores plan_cache_mode when it returns.
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    SELECT s.doc_count, s.avg_doc_len INTO n_docs, avg_len
    FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_docs := coalesce(n_docs, 0);
    -- BM25 idf from the namespace's document frequencies (stale stats degrade gracefully).
    SELECT array_agg(q.lexeme ORDER BY df, q.lexeme),
           array_agg(ln(1 + (greatest(n_docs, df) - df + 0.5) / (df + 0.5)) ORDER BY df, q.lexeme),
           array_agg(memloom_tsquery_any(ARRAY[q.lexeme]) ORDER BY df, q.lexeme),
           array_agg(q.lexeme ORDER BY df, q.lexeme) FILTER (WHERE q.exact),
           array_agg(q.lexeme ORDER BY df, q.lexeme) FILTER (WHERE NOT q.exact AND q.cum_df <= scan_cap),
           sum(q.df) FILTER (WHERE q.exact)
      INTO lexemes, idfs, terms, exact, rare, exact_df
    FROM (SELECT w.*, sum(CASE WHEN w.exact THEN 0 ELSE w.df END) OVER (ORDER BY w.df, w.lexeme) AS cum_df
          FROM (SELECT t.lexeme, t.exact, coalesce(st.df, 0) AS df
                FROM memloom_query_terms(query_text) t
                LEFT JOIN memloom_term_stats st ON st.namespace = ns AND st.lexeme = t.lexeme
                ORDER BY coalesce(st.df, 0), t.lexeme
                LIMIT 32) w) q;
    IF lexemes IS NULL THEN RETURN; END IF;  -- no terms: abstain
    -- The tiers' statement is planned per call, for the tier's values (a generic plan of the
    -- tier scan cost 150 ms at 1M items, sql/0006), but on a small pool without the HNSW index
    -- (memloom_small_pool, 03_pool.sql; the index is checked first, so a server store reads no
    -- catalog row), where it keeps its generic plan too.
    IF to_regclass('memloom_items_embedding') IS NOT NULL OR NOT memloom_small_pool() THEN
        PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
    END IF;

    -- Which documents get scored, most selective first; the first tier that matches wins:
    -- 1. the exact identifiers of the query (an identifier query matches only its documents),
    --    capped like tier 3 when they occur in more than scan_cap documents (node.js, fs);
    -- 2. its rarest words, as many as occur in at most scan_cap documents together (by df), so
    --    a common word never drags in 100k matches and many rare words not 32 x scan_cap;
    -- 3. all words together, then any word, each capped at scan_cap scanned rows (plus the
    --    caller's boost_ids, the vector arm's candidates) to keep p95 bounded.
    IF exact IS NOT NULL THEN
        tiers := tiers || memloom_tsquery_any(exact); capped := capped || (exact_df > scan_cap);
    END IF;
    IF rare IS NOT NULL THEN tiers := tiers || memloom_tsquery_any(rare); capped := capped || false; END IF;
    IF cardinality(lexemes) > 1 THEN
        tiers := tiers || memloom_tsquery_any(lexemes, '&'); capped := capped || true;
    END IF;
    tiers := tiers || memloom_tsquery_any(lexemes); capped := capped || true;

    FOR i IN 1 .. cardinality(tiers) LOOP
        tier := tiers[i];
        RETURN QUERY
        SELECT c.id,
               sum(t.idf * (tf.f * (bm25_k1 + 1))
                   / (tf.f + bm25_k1 * (1 - bm25_b + bm25_b * c.len / coalesce(nullif(avg_len, 0), c.len))))
                   AS score
        FROM (
            -- Each candidate once (by id: comparing whole tsvectors is slow). tsv is read in
            -- place (storage MAIN: in the row, sql/0006); heading_tsv is copied once (||)
            -- because rows written before sql/0028 keep it out of line, where each term would
            -- fetch it from TOAST again (sql/0019); tf computed once per term (OFFSET 0).
            SELECT DISTINCT ON (u.id) u.id, u.tsv, u.htsv, length(u.tsv)::double precision AS len
            FROM (
                (SELECT m.id, m.tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                 WHERE m.tsv @@ tier AND m.namespace = ns
                   AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                   AND (kinds IS NULL OR m.kind = ANY (kinds))
                 LIMIT CASE WHEN capped[i] THEN scan_cap END)
                UNION ALL
                (SELECT m.id, m.tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                 WHERE capped[i] AND m.id = ANY (boost_ids) AND m.tsv @@ tier AND m.namespace = ns
                   AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                   AND (kinds IS NULL OR m.kind = ANY (kinds)))
            ) u
            ORDER BY u.id
        ) c
        CROSS JOIN LATERAL unnest(terms, idfs) AS t(term, idf)
        -- ts_rank once per (candidate, term) (OFFSET 0 keeps it a column: memloom_tf_from_rank
        -- inlined uses its argument twice), then tf once.
        CROSS JOIN LATERAL (SELECT ts_rank(c.tsv, t.term, 0)::double precision AS r OFFSET 0) rk
        CROSS JOIN LATERAL (SELECT memloom_tf_from_rank(rk.r)
                                   + CASE WHEN c.htsv @@ t.term THEN heading_w ELSE 0 END AS f OFFSET 0) tf
        WHERE tf.f > 0
        GROUP BY c.id
        ORDER BY score DESC, c.id
        LIMIT lim;
        IF FOUND THEN RETURN; END IF;
    END LOOP;
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
    q_support  integer[];         -- set: only entities sharing one of these dimensions with q
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

UPDATE memloom_meta SET schema_version = greatest(schema_version, 32);
