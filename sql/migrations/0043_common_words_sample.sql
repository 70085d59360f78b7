-- memloom schema 43: a capped keyword tier of common words can take its candidates from a
-- fixed 1-in-16 sample of the items (issue 13, the common-word tail at 1M items).
--
-- A capped tier (all of the query's words together, any of them, identifiers in more than
-- scan_cap documents) scores its first scan_cap matches in heap order. Since sql/0034 it reads
-- the heap from its start when that is cheaper than decoding the GIN index's postings, but for
-- words that are common apart and rarer together the heap holds few matches per row: 'default &
-- valu' at 1M items reads about 25,000 rows for its 1,000 (45 ms of the keyword arm alone on
-- the bench database), and the index would decode 380k postings. The new partial GIN index
-- memloom_items_tsv_sample holds the items whose hashint8(id) & 15 is 0 (a hash, so that no
-- pattern of ids, such as two namespaces writing in turn, gives a namespace more or none of
-- the sample); memloom_keyword_arm takes such a tier's first scan_cap matches in heap order
-- among those when postings / 16 + 20 * scan_cap < 6 * (the heap rows it would read), and the
-- sample should hold at least scan_cap / 2 matches. Other candidates than before for those
-- tiers (another arbitrary subset of the matches, as heap order was), and at times fewer than
-- scan_cap; no change below memloom_small_pool (10,000 rows), where the arm keeps generic
-- plans and never caps this way, so not on the dev sets' stores. memloom.keyword_sample = off
-- keeps the rows of schema 42. Measured (docs/BENCHMARKS.md, "Common words from a sample
-- (schema 43)").

CREATE INDEX memloom_items_tsv_sample ON memloom_items USING gin (tsv) WHERE (hashint8(id) & 15) = 0;

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
    dfs      double precision[];
    tier     tsquery;
    sel      double precision;
    postings double precision;
    reltuples double precision;
    relpages  double precision;
    seq       boolean;
    seq_bound tid;
    samp      boolean;                -- a capped tier's candidates come from the sample index
    heap_rows double precision;       -- what a heap scan reads to find scan_cap matches
    share     double precision;
    j         integer;
    tiers    tsquery[] := '{}';
    tier_kind text[] := '{}';       -- exact (identifiers), rare, all (every word), any
    capped   boolean[] := '{}';
    i        integer;
    tier_lex text[];                -- an uncapped tier's words, rarest first
    part     integer;               -- how many of them the scored candidates hold (MaxScore)
    need     integer;
    tier_df  double precision;
    part_df  double precision;
    bound    double precision;      -- what a candidate without the first part words can score
    floor_sc double precision;      -- the lim-th score among the first part's candidates
    got_ids  bigint[];
    got_sc   double precision[];
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
           array_agg(q.df ORDER BY df, q.lexeme),
           array_agg(ln(1 + (greatest(n_docs, df) - df + 0.5) / (df + 0.5)) ORDER BY df, q.lexeme),
           array_agg(memloom_tsquery_any(ARRAY[q.lexeme]) ORDER BY df, q.lexeme),
           array_agg(q.lexeme ORDER BY df, q.lexeme) FILTER (WHERE q.exact),
           array_agg(q.lexeme ORDER BY df, q.lexeme) FILTER (WHERE NOT q.exact AND q.cum_df <= scan_cap),
           sum(q.df) FILTER (WHERE q.exact)
      INTO lexemes, dfs, idfs, terms, exact, rare, exact_df
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
        tier_kind := tier_kind || 'exact'::text;
    END IF;
    IF rare IS NOT NULL THEN
        tiers := tiers || memloom_tsquery_any(rare); capped := capped || false; tier_kind := tier_kind || 'rare'::text;
    END IF;
    IF cardinality(lexemes) > 1 THEN
        tiers := tiers || memloom_tsquery_any(lexemes, '&'); capped := capped || true; tier_kind := tier_kind || 'all'::text;
    END IF;
    tiers := tiers || memloom_tsquery_any(lexemes); capped := capped || true; tier_kind := tier_kind || 'any'::text;

    FOR i IN 1 .. cardinality(tiers) LOOP
        tier := tiers[i];
        -- A capped tier takes its first scan_cap matches in heap order. Through the GIN index
        -- that means decoding every posting of its words first (a bitmap cannot stop early):
        -- 'method & return' at 1M items decoded 472k postings in 28 ms to keep 1,000 rows. A
        -- scan of the heap stops at the scan_cap-th match, after about scan_cap / selectivity
        -- rows (selectivity from the words' document frequencies, taken as independent): for
        -- common words that is far fewer rows, each costing about 20 postings' decoding. Then
        -- the heap is read from its start up to twice that estimate, and only past that
        -- bound, if the words were rarer together than estimated, does the index take over:
        -- the same first scan_cap matches in heap order either way, so the same rows.
        -- memloom.keyword_heap_scan = off keeps every tier on the index (the same rows).
        -- When even the heap is dear (words common apart but rarer together: 'default & valu'
        -- at 1M items reads some 25,000 rows, 45 ms), the tier's candidates are instead its
        -- first scan_cap matches in heap order among a fixed sample of the items, the 1 in 16
        -- that memloom_items_tsv_sample holds (a hash of the id picks them): a sixteenth of the
        -- postings to decode, then a row read per candidate. Measured at 1M items (sql/0043),
        -- a posting decoded costs about 1/6 of a heap row scanned and a sampled candidate about
        -- 20 postings: the sample is taken when postings / 16 + 20 * scan_cap < 6 * heap_rows,
        -- and only when the sample should hold at least scan_cap / 2 matches. Fewer candidates
        -- than scan_cap then, at times; none (the words were rarer together than their
        -- frequencies said) and the next tier is tried. memloom.keyword_sample = off never
        -- samples (the rows of sql/0042).
        seq := false;
        seq_bound := '(0,0)';
        samp := false;
        IF capped[i] AND current_setting('plan_cache_mode') = 'force_custom_plan' THEN
            sel := 1;         -- every word: the product of their shares; any word: 1 - none
            postings := 0;
            FOR j IN 1 .. cardinality(lexemes) LOOP
                CONTINUE WHEN tier_kind[i] = 'exact' AND NOT lexemes[j] = ANY (exact);
                share := dfs[j] / greatest(n_docs, dfs[j], 1);
                sel := CASE WHEN tier_kind[i] = 'all' THEN sel * share ELSE sel * (1 - share) END;
                postings := postings + dfs[j];
            END LOOP;
            IF tier_kind[i] <> 'all' THEN sel := 1 - sel; END IF;
            IF sel > 0 THEN
                IF reltuples IS NULL THEN
                    SELECT c.reltuples, c.relpages INTO reltuples, relpages FROM pg_class c
                    WHERE c.oid = 'memloom_items'::regclass;
                END IF;
                -- The rows to read hold the namespace's matches among every namespace's rows.
                heap_rows := scan_cap / sel / greatest(n_docs / greatest(reltuples, 1), 1e-9);
                IF sel * n_docs >= 16 * scan_cap / 2.0
                   AND postings / 16 + 20 * scan_cap < 6 * heap_rows
                   AND coalesce(current_setting('memloom.keyword_sample', true), '') <> 'off' THEN
                    samp := true;
                ELSIF 20 * scan_cap / sel < postings AND reltuples > 0 AND relpages > 0
                      AND coalesce(current_setting('memloom.keyword_heap_scan', true), '') <> 'off' THEN
                    seq := true;
                    seq_bound := format('(%s,0)', least(ceil(2 * heap_rows * relpages / reltuples) + 1,
                                                        4294967294)::bigint)::tid;
                END IF;
            END IF;
        END IF;
        -- MaxScore on an uncapped tier: every candidate holds one of its words, and a word adds
        -- less than idf * (k1 + 1) to a score (tf / (tf + k1 * norm) < 1). Score first only the
        -- candidates holding the rarest words (`part` of them: the fewest whose document
        -- frequencies reach lim); their lim-th score is a floor. A candidate holding none of the
        -- first `need` words scores below the bound of the others and of the words outside the
        -- tier; once that bound is under the floor, the candidates holding one of the first
        -- `need` words hold the top lim, in the same order: the rest are never read. The second
        -- statement costs one more call of the scoring statement, so only when the whole tier
        -- has at least 3 times the first part's postings and 100 in all.
        -- memloom.keyword_maxscore = off scores the whole tier at once (the same rows).
        tier_lex := CASE tier_kind[i] WHEN 'exact' THEN exact WHEN 'rare' THEN rare ELSE lexemes END;
        part := cardinality(tier_lex);
        IF NOT capped[i] AND part > 1
           AND coalesce(current_setting('memloom.keyword_maxscore', true), '') <> 'off' THEN
            tier_df := 0;
            part_df := 0;
            FOR j IN 1 .. cardinality(tier_lex) LOOP
                tier_df := tier_df + dfs[array_position(lexemes, tier_lex[j])];
                IF part_df < lim THEN
                    part_df := part_df + dfs[array_position(lexemes, tier_lex[j])];
                    part := j;
                END IF;
            END LOOP;
            -- Worth a try only when the words outside the tier and the tier's most common one
            -- weigh less than half its rarest word: the floor is about one occurrence of the
            -- rarest word (tf 1 gives about half a word's bound) and must clear them. Without
            -- this test the second step scored the whole tier in 26 of 28 tries at 100k items
            -- (the Node docs' queries: common words outside the tier).
            bound := 0;
            FOR j IN 1 .. cardinality(lexemes) LOOP
                IF NOT lexemes[j] = ANY (tier_lex) THEN bound := bound + idfs[j]; END IF;
            END LOOP;
            bound := bound + idfs[array_position(lexemes, tier_lex[cardinality(tier_lex)])];
            IF part < cardinality(tier_lex) AND tier_df >= 3 * greatest(part_df, lim) AND tier_df >= 100
               AND bound < 0.5 * idfs[array_position(lexemes, tier_lex[1])] THEN
                tier := memloom_tsquery_any(tier_lex[1:part]);
            ELSE
                part := cardinality(tier_lex);
            END IF;
        END IF;
        LOOP
            SELECT array_agg(s.id ORDER BY s.score DESC, s.id), array_agg(s.score ORDER BY s.score DESC, s.id)
              INTO got_ids, got_sc
            FROM (
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
                        (SELECT h.* FROM (
                            -- The sample (memloom_items_tsv_sample's predicate), and then nothing else;
                            -- or the heap from its start up to seq_bound (ts_match_vq is @@ written so
                            -- that the GIN index cannot serve it), then the rest through the index.
                            -- Append reads its parts in order, and under the LIMIT a later one never
                            -- starts once an earlier one has filled it.
                            (SELECT m.id, m.tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                             WHERE samp AND (hashint8(m.id) & 15) = 0 AND m.tsv @@ tier AND m.namespace = ns
                               AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                               AND (kinds IS NULL OR m.kind = ANY (kinds))
                             LIMIT CASE WHEN capped[i] THEN scan_cap END)
                            UNION ALL
                            (SELECT m.id, m.tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                             WHERE seq AND NOT samp AND m.ctid < seq_bound AND ts_match_vq(m.tsv, tier) AND m.namespace = ns
                               AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                               AND (kinds IS NULL OR m.kind = ANY (kinds))
                             LIMIT CASE WHEN capped[i] THEN scan_cap END)
                            UNION ALL
                            (SELECT m.id, m.tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                             WHERE m.tsv @@ tier AND NOT samp AND (NOT seq OR m.ctid >= seq_bound) AND m.namespace = ns
                               AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                               AND (kinds IS NULL OR m.kind = ANY (kinds))
                             LIMIT CASE WHEN capped[i] THEN scan_cap END)  -- each part planned for its limit
                         ) h
                         LIMIT CASE WHEN capped[i] THEN scan_cap END)
                        UNION ALL
                        (SELECT m.id, m.tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                         WHERE capped[i] AND m.id = ANY (boost_ids) AND m.tsv @@ tier AND m.namespace = ns
                           AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                           AND (kinds IS NULL OR m.kind = ANY (kinds)))
                    ) u
                    ORDER BY u.id
                ) c
                -- Only the (candidate, term) pairs where the term occurs, in the text or the heading:
                -- the others add nothing (tf 0, filtered below), and a candidate holds few of a long
                -- query's terms (748 candidates x 8 terms at 100k items: 1,253 of 5,984 pairs), so the
                -- cheap match test spares most ts_rank calls (sql/0035). The same pairs are summed.
                CROSS JOIN LATERAL unnest(terms, idfs) AS t(term, idf)
                -- ts_rank once per (candidate, term) (OFFSET 0 keeps it a column: memloom_tf_from_rank
                -- inlined uses its argument twice), then tf once.
                CROSS JOIN LATERAL (SELECT ts_rank(c.tsv, t.term, 0)::double precision AS r
                                    WHERE c.tsv @@ t.term OR c.htsv @@ t.term OFFSET 0) rk
                CROSS JOIN LATERAL (SELECT memloom_tf_from_rank(rk.r)
                                           + CASE WHEN c.htsv @@ t.term THEN heading_w ELSE 0 END AS f OFFSET 0) tf
                WHERE tf.f > 0
                GROUP BY c.id
                ORDER BY score DESC, c.id
                LIMIT lim
            ) s;
            EXIT WHEN part >= cardinality(tier_lex);
            IF coalesce(cardinality(got_ids), 0) < lim THEN  -- no floor: the whole tier
                part := cardinality(tier_lex);
                tier := tiers[i];
                CONTINUE;
            END IF;
            floor_sc := got_sc[lim];
            bound := 0;
            FOR j IN 1 .. cardinality(lexemes) LOOP
                bound := bound + idfs[j] * (bm25_k1 + 1);
            END LOOP;
            need := 0;
            FOR j IN 1 .. cardinality(tier_lex) LOOP
                -- 1e-9: a margin for rounding; a word's share is at least 1e-3 below its bound.
                EXIT WHEN bound < floor_sc * (1 - 1e-9);
                bound := bound - idfs[array_position(lexemes, tier_lex[j])] * (bm25_k1 + 1);
                need := j;
            END LOOP;
            EXIT WHEN need <= part;
            part := need;
            tier := CASE WHEN part >= cardinality(tier_lex) THEN tiers[i] ELSE memloom_tsquery_any(tier_lex[1:part]) END;
        END LOOP;
        IF got_ids IS NOT NULL THEN
            RETURN QUERY SELECT u.id, u.score FROM unnest(got_ids, got_sc) WITH ORDINALITY AS u(id, score, pos) ORDER BY u.pos;
            RETURN;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION memloom_keyword_arm(text, text, integer, text[], integer, bigint[], timestamptz, timestamptz, timestamptz) IS
'the keyword arm: the items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) matching the query''s terms, best BM25 first (idf from memloom_refresh_stats); scores only the most selective matching tier; no match, no rows. The idf and lengths are the namespace''s current statistics, also for an as_of in the past';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 43);
