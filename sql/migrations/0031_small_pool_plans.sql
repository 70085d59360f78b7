-- memloom schema 31: a small pool's keyword arm keeps one generic plan per session.
--
-- memloom_keyword_arm runs with plan_cache_mode = force_custom_plan (sql/0006): at 1M items
-- PL/pgSQL's generic plan ANDed the GIN match with a bitmap of the whole namespace, 150 ms per
-- tier, so every statement of the arm is planned again on every call. On a small pool that
-- costs more than it saves: on the embedded store (PGlite, the Node docs' 4,375 items) the
-- scoring statement planned in 0.7 to 1.2 ms and ran in 0.3 to 0.6 ms. Below 10,000 rows
-- (pg_class.reltuples of memloom_items, the planner's own count) the arm now sets
-- force_generic_plan for the call: the plans are made once per session, and the worst of them
-- is bounded by the pool's size. Above, nothing changes. A capped tier's first scan_cap
-- matches are in heap order under either plan (a sequential or a bitmap heap scan), so the
-- same rows. docs/BENCHMARKS.md "A small pool's keyword arm plans once (schema 31)".

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
    -- Where a plan that ignores the query's values stays cheap: PL/pgSQL's generic plan at 1M
    -- items cost 150 ms per tier (a bitmap of the namespace, sql/0006), about 1.5 ms at this size.
    generic_max_rows CONSTANT real := 10000;
    pool_rows real;
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
    SELECT s.doc_count, s.avg_doc_len,
           (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'memloom_items'::regclass)
      INTO n_docs, avg_len, pool_rows
    FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_docs := coalesce(n_docs, 0);
    -- A small pool (reltuples: the planner's own count, -1 before the first VACUUM or ANALYZE):
    -- one generic plan per session for the statements below instead of one plan per call. The
    -- function's SET clause restores plan_cache_mode when it returns.
    IF pool_rows BETWEEN 0 AND generic_max_rows THEN
        PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    END IF;
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

UPDATE memloom_meta SET schema_version = greatest(schema_version, 31);
