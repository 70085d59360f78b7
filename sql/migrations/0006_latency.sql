-- memloom schema 6: recall latency at 1M items (docs/BENCHMARKS.md, "Latency fixes").
-- Same signatures and ranking as before; what changes is how much each arm reads:
-- * the entity arm reads at most a few mentions per anchored entity, strongest first, from a
--   new index, and takes each entity's document frequency from memloom_entity_stats (kept by
--   memloom_refresh_stats through a trigger) instead of counting every mention per query;
-- * both arms are always planned for the call's values (plan_cache_mode): after five calls
--   on one connection PL/pgSQL's generic plan ANDed the GIN match with a bitmap of the whole
--   namespace;
-- * tsv stays in the heap row (storage MAIN), so scoring a keyword candidate no longer fetches
--   its tsvector from TOAST.

UPDATE memloom_meta SET schema_version = greatest(schema_version, 6);

-- Keyword candidates' tsvectors in the heap ---------------------------------------------------
-- A row of text + a 256-dim embedding + its tsvector passes the 2 kB TOAST threshold, and the
-- toaster moved the largest value, usually tsv, out of line: every keyword candidate then cost
-- a TOAST index lookup and 1 to 6 TOAST pages (1,000 candidates of err_assertion at 1M: 2,293
-- instead of 658 buffers, 3x the time). MAIN keeps tsv in the row (compressed if need be) and
-- moves the embedding or the content out instead, which are read only for the rows the HNSW
-- scan and memloom_fuse return. Applies to rows written from now on (VACUUM FULL memloom_items
-- rewrites the old ones).
ALTER TABLE memloom_items ALTER COLUMN tsv SET STORAGE MAIN;

-- Mentions strongest first ------------------------------------------------------------------
CREATE INDEX IF NOT EXISTS memloom_mentions_strength
    ON memloom_mentions (entity_id, strength DESC, item_id);

-- Entity document frequencies ---------------------------------------------------------------
-- df(e) = active items of the namespace that mention e, as of the last memloom_refresh_stats.
CREATE TABLE IF NOT EXISTS memloom_entity_stats (
    entity_id bigint  PRIMARY KEY REFERENCES memloom_entities (id) ON DELETE CASCADE,
    namespace text    NOT NULL,
    df        integer NOT NULL
);
CREATE INDEX IF NOT EXISTS memloom_entity_stats_namespace ON memloom_entity_stats (namespace);
COMMENT ON TABLE memloom_entity_stats IS
'per entity, how many active items of its namespace mention it (the entity arm''s inverse entity frequency); refreshed with the namespace''s keyword statistics';
-- Tenant isolation as for the pool tables (0005): a session sees and writes only its namespace.
ALTER TABLE memloom_entity_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE memloom_entity_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY memloom_entity_stats_namespace ON memloom_entity_stats
    USING (namespace = memloom_current_namespace())
    WITH CHECK (namespace = memloom_current_namespace());
COMMENT ON POLICY memloom_entity_stats_namespace ON memloom_entity_stats IS
'rows of the session''s namespace only (the memloom.namespace setting), like memloom_items';

CREATE OR REPLACE FUNCTION memloom_refresh_entity_stats(ns text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    DELETE FROM memloom_entity_stats s WHERE s.namespace = ns;
    INSERT INTO memloom_entity_stats (entity_id, namespace, df)
    SELECT mt.entity_id, ns, count(*)
    FROM memloom_mentions mt
    JOIN memloom_items m ON m.id = mt.item_id
    WHERE m.namespace = ns AND m.status = 'active'
    GROUP BY mt.entity_id;
END
$$;
COMMENT ON FUNCTION memloom_refresh_entity_stats(text) IS
'recomputes memloom_entity_stats for the namespace (mentions of active items per entity); memloom_refresh_stats runs it through a trigger';

-- memloom_refresh_stats (re)writes the namespace's row of memloom_namespace_stats: refresh the
-- entity frequencies with it, so every runner that refreshes statistics gets them.
CREATE OR REPLACE FUNCTION memloom_entity_stats_on_refresh() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memloom_refresh_entity_stats(NEW.namespace);
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION memloom_entity_stats_on_refresh() IS
'trigger: when memloom_refresh_stats writes a namespace''s statistics, recompute its entity frequencies too';

CREATE TRIGGER memloom_entity_stats_on_refresh
    AFTER INSERT OR UPDATE ON memloom_namespace_stats
    FOR EACH ROW EXECUTE FUNCTION memloom_entity_stats_on_refresh();

-- Stores that already have statistics get entity frequencies now (under row-level security,
-- those of the migrating session's namespace; the others at their next refresh).
DO $$
DECLARE
    ns text;
BEGIN
    FOR ns IN SELECT s.namespace FROM memloom_namespace_stats s LOOP
        PERFORM memloom_refresh_entity_stats(ns);
    END LOOP;
END
$$;

-- Keyword arm --------------------------------------------------------------------------------
-- As in 0002, planned per call.
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
AS $$
#variable_conflict use_column
DECLARE
    bm25_k1  CONSTANT double precision := 1.2;
    bm25_b   CONSTANT double precision := 0.75;
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
            SELECT DISTINCT ON (u.id) u.id, u.tsv, length(u.tsv)::double precision AS len
            FROM (
                (SELECT m.id, m.tsv || ''::tsvector AS tsv FROM memloom_items m
                 WHERE m.tsv @@ tier AND m.namespace = ns AND m.status = 'active'
                   AND (kinds IS NULL OR m.kind = ANY (kinds))
                 LIMIT CASE WHEN capped[i] THEN scan_cap END)
                UNION ALL
                (SELECT m.id, m.tsv || ''::tsvector AS tsv FROM memloom_items m
                 WHERE capped[i] AND m.id = ANY (boost_ids) AND m.tsv @@ tier AND m.namespace = ns
                   AND m.status = 'active' AND (kinds IS NULL OR m.kind = ANY (kinds)))
            ) u
            ORDER BY u.id
        ) c
        CROSS JOIN LATERAL unnest(terms, idfs) AS t(term, idf)
        CROSS JOIN LATERAL (SELECT memloom_term_freq(c.tsv, t.term) AS f OFFSET 0) tf
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

-- Entity arm ---------------------------------------------------------------------------------
-- Ranking as in 0004: score(item) = sum over anchored entities e it mentions of
--     ((sim(q, e) - gate) / (1 - gate))^2 * strength(item, e) * ln(1 + N / df(e)).
-- What it reads: per anchored entity only its per_entity strongest mentions of active items
-- (index memloom_mentions_strength, ties by item id as the final order), not all of them:
-- node.js is mentioned by 68k items at 1M, and joining every mention to memloom_items took
-- 1.4 s for a query naming it. For one anchored entity the top lim are exactly 0004's; with
-- several, an item outside an entity's strongest per_entity loses that entity's share.
-- df(e) comes from memloom_entity_stats; an entity indexed since the last refresh is counted
-- on the spot, up to df_cap mentions.
CREATE OR REPLACE FUNCTION memloom_entity_arm(q vector, ns text, lim integer, gate double precision, kinds text[])
RETURNS TABLE (id bigint, score double precision)
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
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    per_entity := greatest(2 * lim, 20);
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    SELECT s.doc_count INTO n_items FROM memloom_namespace_stats s WHERE s.namespace = ns;
    n_items := greatest(coalesce(n_items, 1), 1);
    RETURN QUERY
    WITH near AS (
        -- Nearest entities first (HNSW), then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT n.id, 1 - n.distance AS sim FROM (
            SELECT en.id, en.embedding <=> q AS distance
            FROM memloom_entities en
            WHERE en.namespace = ns
            ORDER BY en.embedding <=> q
            LIMIT lim
        ) n
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
        WHERE mt.entity_id = wt.id AND m.namespace = ns AND m.status = 'active'
          AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY mt.strength DESC, mt.item_id
        LIMIT per_entity
    ) e
    GROUP BY e.item_id
    ORDER BY score DESC, e.item_id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[]) IS
'the entity arm: the entities of the namespace nearest q with cosine similarity >= gate and within 0.10 of the nearest, then, per entity, its strongest mentions by active items (at most greatest(2 lim, 20)), ranked by the sum of ((sim - gate) / (1 - gate))^2 x mention strength x ln(1 + N / df) (df from memloom_entity_stats); no entity above the gate, no rows';
