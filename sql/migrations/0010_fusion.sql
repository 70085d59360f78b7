-- memloom schema 10: votes that mean what they claim, and a top of the list that does not
-- depend on how many results are asked for (docs/EVAL.md, "Fusion").
--
-- The fusion itself is unchanged (memloom_rrf: sum of w / (k + rank), k 60, weights 1.0 / 2.0 /
-- 0.5, entity gate 0.60). What changes is which candidates each arm puts to the vote:
-- * every arm takes the same number of candidates whatever the limit
--   (memloom_default_candidates), so the first n results of a call are the first n of any call
--   with a larger limit; before, each arm took greatest(limit, 10), and asking for 20 results
--   changed the top 5 of most LoCoMo questions;
-- * the keyword arm votes only for items that score at least keyword_floor times its best
--   item's BM25 score: an item that shares one minor word of the query is not a precise match,
--   and with weight 2.0 its vote would outweigh the vector arm's best (2 / (60 + r) > 1 / 61
--   for every r < 62);
-- * the vector arm never votes for an item with cosine <= 0: it shares no meaning with the query
--   (the preview showed nine such "hits" under a one-hit pg_hba.conf query);
-- * the keyword arm scores a query term found in an item's heading (a chunk's last breadcrumb
--   segment, a memory's key) as if it occurred heading_w more times (BM25F).

UPDATE memloom_meta SET schema_version = greatest(schema_version, 10);

CREATE OR REPLACE FUNCTION memloom_default_candidates(lim integer) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- memloom_core::fuse::DEFAULT_CANDIDATES (a test in crates/memloom-sql pins it). lim is
    -- ignored on purpose: candidates that grew with the limit made the top of the list depend
    -- on how many results were asked for.
    SELECT 10
$$;
COMMENT ON FUNCTION memloom_default_candidates(integer) IS
'the candidates each arm contributes to memloom_fuse when the call does not say: 10, whatever the limit (so the first n results never depend on the limit)';

-- The heading field (BM25F) ------------------------------------------------------------------
-- A chunk's heading (the last segment of its breadcrumb) or a memory's key names what the item
-- is about: a query term found there is worth more than one found in passing in the text (web
-- and site search weight titles the same way). Kept as its own small tsvector, beside tsv.
CREATE FUNCTION memloom_heading(breadcrumb text, key text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(nullif(regexp_replace(breadcrumb, '^.* > ', ''), ''), key, '')
$$;
COMMENT ON FUNCTION memloom_heading(text, text) IS
'an item''s heading for the keyword arm: the last segment of a chunk''s breadcrumb, else a memory''s key';
ALTER TABLE memloom_items ADD COLUMN heading_tsv tsvector NOT NULL
    GENERATED ALWAYS AS (memloom_tsvector(memloom_heading(breadcrumb, key))) STORED;
COMMENT ON COLUMN memloom_items.heading_tsv IS
'memloom_tsvector of memloom_heading(breadcrumb, key): the keyword arm''s heading field';

-- Keyword arm: 0006's, with the heading field (and 0008's SET clauses) -----------------------
CREATE OR REPLACE FUNCTION memloom_keyword_arm(
    query_text text,
    ns         text,
    lim        integer,
    kinds      text[],
    scan_cap   integer,
    boost_ids  bigint[] DEFAULT NULL
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
            -- Each candidate once (by id: comparing whole tsvectors is slow), its tsv detoasted
            -- once (|| copies it) instead of once per term; tf computed once per term (OFFSET 0).
            SELECT DISTINCT ON (u.id) u.id, u.tsv, u.htsv, length(u.tsv)::double precision AS len
            FROM (
                (SELECT m.id, m.tsv || ''::tsvector AS tsv, m.heading_tsv AS htsv FROM memloom_items m
                 WHERE m.tsv @@ tier AND m.namespace = ns AND m.status = 'active'
                   AND (kinds IS NULL OR m.kind = ANY (kinds))
                 LIMIT CASE WHEN capped[i] THEN scan_cap END)
                UNION ALL
                (SELECT m.id, m.tsv || ''::tsvector AS tsv, m.heading_tsv AS htsv FROM memloom_items m
                 WHERE capped[i] AND m.id = ANY (boost_ids) AND m.tsv @@ tier AND m.namespace = ns
                   AND m.status = 'active' AND (kinds IS NULL OR m.kind = ANY (kinds)))
            ) u
            ORDER BY u.id
        ) c
        CROSS JOIN LATERAL unnest(terms, idfs) AS t(term, idf)
        CROSS JOIN LATERAL (SELECT memloom_term_freq(c.tsv, t.term)
                                   + CASE WHEN c.htsv @@ t.term THEN heading_w ELSE 0 END AS f OFFSET 0) tf
        WHERE tf.f > 0
        GROUP BY c.id
        ORDER BY score DESC, c.id
        LIMIT lim;
        IF FOUND THEN RETURN; END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION memloom_keyword_arm(text, text, integer, text[], integer, bigint[]) IS
'the keyword arm: active items of the namespace (and kinds) matching the query''s terms, best BM25 first (idf from memloom_refresh_stats); scores only the most selective matching tier; no match, no rows';

-- Recall: 0008's memloom_fuse (SECURITY DEFINER after memloom_assert_namespace), with the
-- fixed candidate depth and the vote floors. A new argument means a new signature: the old
-- function goes, and its attributes are set again below.
DROP FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision,
                           double precision, double precision, double precision, integer, text[],
                           integer, text[]);

CREATE FUNCTION memloom_fuse(
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
    keyword_floor    double precision DEFAULT 0.3
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
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    vector_ids  bigint[];
    vector_dist double precision[];
    vector_seen bigint[];
    keyword_ids bigint[];
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
    IF lim IS NULL OR lim <= 0 THEN RETURN; END IF;
    candidates := coalesce(candidates, memloom_default_candidates(lim));
    -- An arm left out of arms does not run: no votes, and no boost ids for the keyword arm.
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        SELECT array_agg(a.id ORDER BY a.distance, a.id), array_agg(a.distance ORDER BY a.distance, a.id)
          INTO vector_ids, vector_dist
        FROM memloom_vector_arm(query_embedding, ns, candidates, kinds) a;
        -- The keyword arm still scores every vector candidate (boost ids); only the votes are cut.
        vector_seen := vector_ids;
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        keyword_ids := ARRAY(
            SELECT a.id FROM (
                SELECT a.id, a.score, max(a.score) OVER () AS best
                FROM memloom_keyword_arm(query_text, ns, candidates, kinds, keyword_scan_cap, vector_seen) a
            ) a
            WHERE a.score >= keyword_floor * a.best
            ORDER BY a.score DESC, a.id);
    END IF;
    IF vector_ids IS NOT NULL THEN
        vector_ids := ARRAY(
            SELECT u.id FROM unnest(vector_ids, vector_dist) WITH ORDINALITY AS u(id, distance, pos)
            WHERE u.distance < 1
            ORDER BY u.pos);
    END IF;
    IF arms IS NULL OR 'entity' = ANY (arms) THEN
        entity_ids := ARRAY(SELECT a.id FROM memloom_entity_arm(query_embedding, ns, candidates,
                                                               entity_gate, kinds) a);
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
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        SELECT array_agg(a.id ORDER BY a.distance, a.id) INTO deep_vector
        FROM memloom_vector_arm(query_embedding, ns, lim, kinds) a WHERE a.distance < 1;
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        deep_keyword := ARRAY(SELECT a.id FROM memloom_keyword_arm(query_text, ns, lim, kinds,
                                                                  keyword_scan_cap, vector_seen) a);
    END IF;
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
COMMENT ON FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision) IS
'recall in one call: the vector, keyword and entity arms (or only those named in arms) over the namespace''s active items, fused by memloom_rrf; best first, with each arm''s rank (null where it did not vote). Runs as the tables'' owner (SECURITY DEFINER) after checking that ns is the caller''s bound namespace (memloom_assert_namespace). Defaults: k 60, weights 1.0 / 2.0 / 0.5, entity gate 0.60, candidates per arm NULL = memloom_default_candidates(lim) = 10 whatever the limit; the keyword arm votes for items scoring >= keyword_floor x its best score (0.3), the vector arm for items with cosine > 0; past the voted items, the vector and keyword arms'' further items follow unscored (rrf_score 0, null ranks) by their position, so the first results never depend on lim';

-- As in 0008: run as the owner with the pinned search path (the one 0008 gave
-- memloom_current_namespace, so both always agree).
DO $$
DECLARE
    path text;
BEGIN
    SELECT substr(c, length('search_path=') + 1) INTO path
    FROM pg_proc p, unnest(p.proconfig) AS c
    WHERE p.oid = 'memloom_current_namespace()'::regprocedure AND c LIKE 'search_path=%';
    EXECUTE format('ALTER FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision) SECURITY DEFINER SET search_path = %s', path);
END
$$;
