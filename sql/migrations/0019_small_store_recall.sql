-- memloom schema 19: a small store's recall without the reads that do not depend on the query
-- (issue 19 item 2; docs/BENCHMARKS.md "Embedded recall: the entity scan and the headings").
-- Same ranked results: only what is read changes, never a score or an order.
--
-- * memloom_vector_support(v): the positions of a vector's non-zero components, and the GIN
--   index memloom_entities_support over them. Without the entities' HNSW index (the embedded
--   store below EMBEDDED_HNSW_THRESHOLD items) the entity arm found the nearest entities by an
--   exact scan of every entity's vector (8,604 on the Node docs, most of the arm's time); with a
--   gate above 0 only an entity that shares a non-zero dimension with the query can pass it, so
--   the exact search reads only those (4 to 32% of the entities there). When entities tied at
--   the lim-th distance pass the gate, which of them a top-lim sort keeps depends on the order it
--   reads them in: then the arm runs the full scan, as before. With the HNSW index (a server
--   store) the arm runs the statement it ran before.
-- * memloom_keyword_arm reads each candidate's heading_tsv once instead of once per query term
--   (it is out of line in most chunk rows: a TOAST lookup per candidate and term).
-- * memloom_tables_to_vacuum(): the pool tables most of whose pages are not all-visible; the
--   embedded store (PGlite has no autovacuum) VACUUMs them after a write. Never vacuumed, the
--   GIN index on tsv had no recorded size and the planner read every row for the keyword arm
--   instead of the index; and every scan checked each row's visibility.

UPDATE memloom_meta SET schema_version = greatest(schema_version, 19);

CREATE OR REPLACE FUNCTION memloom_tables_to_vacuum() RETURNS text[]
LANGUAGE sql STABLE AS $$
    -- Autovacuum's insert rule, on the counts the last ANALYZE or VACUUM left in pg_class (PGlite
    -- has no autovacuum): a pool table most of whose pages are not marked all-visible. Without a
    -- VACUUM the GIN indexes' sizes stay unrecorded (the planner then scanned every row for the
    -- keyword arm of a small store) and every scan checks each row's visibility (sql/0019).
    SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
    FROM pg_class c
    WHERE c.oid IN ('memloom_items'::regclass, 'memloom_entities'::regclass, 'memloom_mentions'::regclass)
      AND c.relpages > 0 AND c.relallvisible < 0.9 * c.relpages
$$;
COMMENT ON FUNCTION memloom_tables_to_vacuum() IS
'the pool tables (memloom_items, memloom_entities, memloom_mentions) most of whose pages are not marked all-visible by the counts of their last ANALYZE or VACUUM; the embedded store VACUUMs them after a write (PGlite has no autovacuum)';

CREATE OR REPLACE FUNCTION memloom_vector_support(v vector) RETURNS integer[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(u.i::integer ORDER BY u.i), '{}')
    FROM unnest(v::real[]) WITH ORDINALITY AS u(x, i)
    WHERE u.x <> 0
$$;
COMMENT ON FUNCTION memloom_vector_support(vector) IS
'the 1-based positions of v''s non-zero components, ascending (two vectors with no position in common have cosine similarity 0); indexed on memloom_entities by memloom_entities_support for the entity arm''s exact search';

CREATE INDEX memloom_entities_support ON memloom_entities USING gin (memloom_vector_support(embedding));

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
            -- Each candidate once (by id: comparing whole tsvectors is slow), its tsv and heading_tsv
            -- detoasted once (|| copies them) instead of once per term (heading_tsv is out of line
            -- in most chunk rows: 2,214 TOAST buffer reads for 543 candidates x 3 terms on the
            -- Node docs, sql/0019); tf computed once per term (OFFSET 0).
            SELECT DISTINCT ON (u.id) u.id, u.tsv, u.htsv, length(u.tsv)::double precision AS len
            FROM (
                (SELECT m.id, m.tsv || ''::tsvector AS tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                 WHERE m.tsv @@ tier AND m.namespace = ns
                   AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                   AND (kinds IS NULL OR m.kind = ANY (kinds))
                 LIMIT CASE WHEN capped[i] THEN scan_cap END)
                UNION ALL
                (SELECT m.id, m.tsv || ''::tsvector AS tsv, m.heading_tsv || ''::tsvector AS htsv FROM memloom_items m
                 WHERE capped[i] AND m.id = ANY (boost_ids) AND m.tsv @@ tier AND m.namespace = ns
                   AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                   AND (kinds IS NULL OR m.kind = ANY (kinds)))
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
    q_support  integer[];         -- set: only entities sharing a non-zero dimension with q
    near_ids   bigint[];
    near_dist  double precision[];
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    IF gate > 0 AND to_regclass('memloom_entities_embedding') IS NULL THEN
        -- Exact search without the HNSW index: the lim + 1 nearest of the entities that can pass
        -- the gate (memloom_entities_support). A tie across the lim-th place that passes the gate
        -- would make the choice depend on the scan order: then the full scan below decides.
        q_support := memloom_vector_support(q);
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
    RETURN QUERY
    WITH near AS (
        -- Nearest entities first (HNSW), then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT n.id, 1 - n.distance AS sim FROM (
            SELECT en.id, en.embedding <=> q AS distance
            FROM memloom_entities en
            WHERE q_support IS NULL AND en.namespace = ns
            ORDER BY en.embedding <=> q
            LIMIT lim
        ) n
        UNION ALL
        SELECT u.id, 1 - u.distance FROM unnest(near_ids[1:lim], near_dist[1:lim]) AS u(id, distance)
        WHERE q_support IS NOT NULL
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
