-- memloom schema 2: writing (memloom_remember), keyword statistics (memloom_refresh_stats),
-- the three recall arms, weighted reciprocal rank fusion (memloom_rrf) and the one-call
-- recall function memloom_fuse. Plain SQL and PL/pgSQL only: it runs unchanged on
-- PostgreSQL 15 + pgvector 0.8.0 and on PGlite (PostgreSQL 18 + pgvector 0.8.x).

UPDATE memloom_meta SET schema_version = 2;

-- Store initialisation: the embedder and its dimensions -------------------------------------
-- The migrations leave the vector columns untyped (`vector`) and without HNSW indexes, so one
-- schema serves any embedder: hash-v1 (256), all-MiniLM (384), OpenAI (1536), ...
-- memloom_init_store records the embedder and sizes the columns; the HNSW indexes (at most
-- 2000 dimensions for `vector`) come with it or later (the embedded store searches exactly
-- until it is large: memloom_ensure_vector_index).
CREATE FUNCTION memloom_ensure_vector_index() RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    dims integer;
    built boolean := false;
BEGIN
    SELECT m.embedder_dims INTO dims FROM memloom_meta m;
    IF dims IS NULL THEN
        RAISE EXCEPTION 'memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF dims > 2000 THEN
        RAISE EXCEPTION 'HNSW indexes vectors of at most 2000 dimensions, this store''s have %; it searches exactly (sequential scan) instead', dims
            USING ERRCODE = 'feature_not_supported';
    END IF;
    PERFORM pg_advisory_xact_lock(30792293106544493);  -- the migration lock: builders queue
    IF to_regclass('memloom_items_embedding') IS NULL THEN
        CREATE INDEX memloom_items_embedding ON memloom_items USING hnsw (embedding vector_cosine_ops);
        built := true;
    END IF;
    IF to_regclass('memloom_entities_embedding') IS NULL THEN
        CREATE INDEX memloom_entities_embedding ON memloom_entities USING hnsw (embedding vector_cosine_ops);
        built := true;
    END IF;
    RETURN built;
END
$$;
COMMENT ON FUNCTION memloom_ensure_vector_index() IS
'builds the HNSW cosine indexes on memloom_items.embedding and memloom_entities.embedding when missing (the store must be initialised, at most 2000 dimensions); returns whether it built one';

CREATE FUNCTION memloom_init_store(
    embedder_name    text,
    embedder_version integer,
    dims             integer,
    vector_index     boolean DEFAULT true
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    m      memloom_meta;
    tab    text;
    typmod integer;
    other  integer;
BEGIN
    IF embedder_name IS NULL OR embedder_name = '' OR embedder_version IS NULL OR embedder_version < 1 THEN
        RAISE EXCEPTION 'memloom_init_store needs an embedder name and a version >= 1, not % and %',
            quote_nullable(embedder_name), coalesce(embedder_version::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF dims IS NULL OR dims NOT BETWEEN 1 AND 16000 THEN
        RAISE EXCEPTION 'expected 1 to 16000 embedding dimensions (pgvector), not %', coalesce(dims::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF vector_index AND dims > 2000 THEN
        RAISE EXCEPTION 'HNSW indexes vectors of at most 2000 dimensions, not %; pass vector_index => false to search exactly', dims
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pg_advisory_xact_lock(30792293106544493);  -- the migration lock: initialisers queue
    SELECT * INTO m FROM memloom_meta FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memloom store has no memloom_meta row; apply the memloom migrations'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF m.embedder_name IS NOT NULL
       AND (m.embedder_name, m.embedder_version, m.embedder_dims)
           IS DISTINCT FROM (memloom_init_store.embedder_name, memloom_init_store.embedder_version, dims) THEN
        RAISE EXCEPTION 'store built with %-v% (% dimensions), not %-v% (% dimensions); embed with %-v%, or make a new store',
            m.embedder_name, m.embedder_version, m.embedder_dims,
            memloom_init_store.embedder_name, memloom_init_store.embedder_version, dims,
            m.embedder_name, m.embedder_version
            USING ERRCODE = 'data_exception';
    END IF;
    FOREACH tab IN ARRAY ARRAY['memloom_items', 'memloom_entities'] LOOP
        SELECT a.atttypmod INTO typmod FROM pg_attribute a
        WHERE a.attrelid = tab::regclass AND a.attname = 'embedding';
        CONTINUE WHEN typmod = dims;
        EXECUTE format('SELECT vector_dims(embedding) FROM %I WHERE vector_dims(embedding) <> %s LIMIT 1', tab, dims)
            INTO other;
        IF other IS NOT NULL THEN
            RAISE EXCEPTION '% already holds %-dimension embeddings, not %; the dimensions can change only while it is empty: make a new store',
                tab, other, dims
                USING ERRCODE = 'data_exception';
        END IF;
        EXECUTE format('ALTER TABLE %I ALTER COLUMN embedding TYPE vector(%s)', tab, dims);
    END LOOP;
    UPDATE memloom_meta
       SET embedder_name = memloom_init_store.embedder_name,
           embedder_version = memloom_init_store.embedder_version,
           embedder_dims = dims;
    IF vector_index THEN
        PERFORM memloom_ensure_vector_index();
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_init_store(text, integer, integer, boolean) IS
'records the store''s embedder (refusing a different one), makes memloom_items.embedding and memloom_entities.embedding vector(dims) while they hold no other dimensions, and with vector_index builds the HNSW indexes (dims <= 2000); idempotent';

-- Embedder checks ----------------------------------------------------------------------------
CREATE FUNCTION memloom_check_embedder(name text, version integer, dims integer) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    m memloom_meta;
BEGIN
    SELECT * INTO m FROM memloom_meta;
    IF m.embedder_name IS NULL THEN
        RAISE EXCEPTION 'memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF name IS DISTINCT FROM m.embedder_name OR version IS DISTINCT FROM m.embedder_version
       OR dims IS DISTINCT FROM m.embedder_dims THEN
        RAISE EXCEPTION 'query embedded with %-v% (% dimensions), store built with %-v% (% dimensions); re-embed the query with %-v%, or re-embed the store',
            name, version, dims, m.embedder_name, m.embedder_version, m.embedder_dims,
            m.embedder_name, m.embedder_version
            USING ERRCODE = 'data_exception';
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_check_embedder(text, integer, integer) IS
'raises a clear error unless (name, version, dims) is the embedder recorded in memloom_meta';

CREATE FUNCTION memloom_check_vector(v vector) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    m memloom_meta;
BEGIN
    SELECT * INTO m FROM memloom_meta;
    IF m.embedder_name IS NULL THEN
        RAISE EXCEPTION 'memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF v IS NULL THEN
        RAISE EXCEPTION 'embedding is null; embed the text with %-v% first', m.embedder_name, m.embedder_version
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF vector_dims(v) <> m.embedder_dims THEN
        RAISE EXCEPTION 'query embedded with % dimensions, store built with %-v% (% dimensions); re-embed the query with %-v%, or re-embed the store',
            vector_dims(v), m.embedder_name, m.embedder_version, m.embedder_dims,
            m.embedder_name, m.embedder_version
            USING ERRCODE = 'data_exception';
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_check_vector(vector) IS
'raises a clear error unless the vector has the dimensions of the store''s embedder';

-- Writing ------------------------------------------------------------------------------------
CREATE FUNCTION memloom_remember(
    ns        text,
    key       text,
    content   text,
    embedding vector,
    metadata  jsonb DEFAULT '{}'
) RETURNS TABLE (id bigint, version integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    old_id      bigint;
    old_version integer;
    old_hash    text;
    old_meta    jsonb;
    new_id      bigint;
    new_version integer := 1;
BEGIN
    PERFORM memloom_check_vector(embedding);
    IF ns IS NULL OR content IS NULL THEN
        RAISE EXCEPTION 'memloom_remember needs a namespace and content' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF key IS NOT NULL THEN
        -- Writers of one key queue here instead of failing on the unique index.
        PERFORM pg_advisory_xact_lock(hashtextextended(ns || chr(31) || key, 7));
        SELECT i.id, i.version, i.content_hash, i.metadata INTO old_id, old_version, old_hash, old_meta
        FROM memloom_items i
        WHERE i.namespace = ns AND i.key = memloom_remember.key AND i.status = 'active'
        FOR UPDATE;
        IF old_id IS NOT NULL AND old_hash = md5(content) AND old_meta = coalesce(metadata, '{}') THEN
            RETURN QUERY SELECT old_id, old_version;  -- unchanged: no new version
            RETURN;
        END IF;
        SELECT coalesce(max(i.version), 0) + 1 INTO new_version
        FROM memloom_items i WHERE i.namespace = ns AND i.key = memloom_remember.key;
        IF old_id IS NOT NULL THEN
            UPDATE memloom_items SET status = 'superseded', updated_at = now() WHERE id = old_id;
        END IF;
    END IF;
    INSERT INTO memloom_items (namespace, kind, key, version, content, embedding, metadata, supersedes)
    VALUES (ns, 'memory', memloom_remember.key, new_version, memloom_remember.content,
            memloom_remember.embedding, coalesce(memloom_remember.metadata, '{}'), old_id)
    RETURNING memloom_items.id INTO new_id;
    IF old_id IS NOT NULL THEN
        UPDATE memloom_items SET superseded_by = new_id WHERE id = old_id;
    END IF;
    RETURN QUERY SELECT new_id, new_version;
END
$$;
COMMENT ON FUNCTION memloom_remember(text, text, text, vector, jsonb) IS
'stores a memory; with a key, supersedes the key''s active version in the same transaction (versions 1, 2, ... without gaps; concurrent writers of one key queue on an advisory lock). Remembering the active content and metadata again returns the active version unchanged.';

-- Keyword statistics (like ANALYZE: call after loading) --------------------------------------
CREATE FUNCTION memloom_refresh_stats(ns text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    -- Concurrent refreshes of one namespace (two ingests finishing together) queue here: else
    -- the second one's INSERT collides with the first one's uncommitted rows (duplicate key).
    PERFORM pg_advisory_xact_lock(hashtextextended('memloom_refresh_stats:' || ns, 0));
    DELETE FROM memloom_term_stats WHERE namespace = ns;
    INSERT INTO memloom_term_stats (namespace, lexeme, df)
    SELECT ns, s.word, s.ndoc
    FROM ts_stat(format('SELECT tsv FROM memloom_items WHERE namespace = %L AND status = %L',
                        ns, 'active')) AS s;
    DELETE FROM memloom_namespace_stats WHERE namespace = ns;
    INSERT INTO memloom_namespace_stats (namespace, doc_count, avg_doc_len)
    SELECT ns, count(*), coalesce(avg(length(tsv)), 0)
    FROM memloom_items WHERE namespace = ns AND status = 'active';
    -- Planner statistics too: PGlite has no autovacuum and a server's may lag a bulk load;
    -- without them the entity arm's join ran its HNSW scan once per mention row (26 s instead
    -- of 0.1 s per query on the Node docs). ANALYZE may run in a transaction (VACUUM may not).
    ANALYZE memloom_items, memloom_entities, memloom_mentions;
END
$$;
COMMENT ON FUNCTION memloom_refresh_stats(text) IS
'recomputes the namespace''s keyword statistics (document frequency per lexeme, document count, average length) used by BM25 in the keyword arm, then ANALYZEs memloom_items, memloom_entities and memloom_mentions; call after loading or indexing';

-- Keyword arm --------------------------------------------------------------------------------
CREATE FUNCTION memloom_query_terms(query_text text)
RETURNS TABLE (lexeme text, exact boolean)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- Identifier tokens become one exact lexeme each (never their english parts, so
    -- max_connections does not match "max connections"); the other words are english stems.
    WITH toks AS (SELECT t, memloom_is_identifier(t) AS ident FROM memloom_tokens(query_text) AS t)
    SELECT DISTINCT ON (lexeme) lexeme, exact FROM (
        SELECT lower(t) AS lexeme, true AS exact FROM toks WHERE ident
        UNION ALL
        SELECT unnest(tsvector_to_array(to_tsvector('english'::regconfig,
                   coalesce(string_agg(t, ' '), '')))), false
        FROM toks WHERE NOT ident
    ) terms
    ORDER BY lexeme, exact DESC
$$;
COMMENT ON FUNCTION memloom_query_terms(text) IS
'the keyword terms of a query: exact lexemes for identifier tokens, english stems for the other words';

CREATE FUNCTION memloom_tsquery_any(lexemes text[], op text DEFAULT '|') RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT nullif(string_agg('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''', ' ' || op || ' '), '')::tsquery
    FROM unnest(lexemes) AS l
$$;
COMMENT ON FUNCTION memloom_tsquery_any(text[], text) IS
'a tsquery of the given lexemes taken verbatim (no parsing or stemming), joined by op (| or &); null for none';

CREATE FUNCTION memloom_term_freq(tsv tsvector, term tsquery) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- For a one-lexeme query, ts_rank (weights D = 0.1, normalization 0) is
    -- 0.1 * H(tf) / zeta(2), where H(tf) = sum_{j=1..tf} 1/j^2; since zeta(2) - H(tf) is close
    -- to 1 / (tf + 1/2), tf = 1 / (zeta(2) - H) - 1/2 recovers the count (tests/sql pins it).
    -- A lexeme without positions (an exact identifier) counts once; a tsvector keeps at most
    -- 255 positions per lexeme, so counts saturate there (BM25 saturates long before).
    -- One expression, no FROM: the planner inlines it into the keyword arm's query (a SQL
    -- function with a sub-select runs as a separate call per row and term, 10x slower).
    SELECT CASE WHEN ts_rank(tsv, term, 0) <= 0 THEN 0::double precision
                ELSE greatest(1, round(1 / (1.6449340668482264 - ts_rank(tsv, term, 0)::double precision / 0.060792710185402663) - 0.5)) END
$$;
COMMENT ON FUNCTION memloom_term_freq(tsvector, tsquery) IS
'how often the single lexeme of term occurs in tsv (0 when absent), recovered from ts_rank';

CREATE FUNCTION memloom_keyword_arm(
    query_text text,
    ns         text,
    lim        integer,
    kinds      text[],
    scan_cap   integer,
    boost_ids  bigint[] DEFAULT NULL
) RETURNS TABLE (id bigint, score double precision)
LANGUAGE plpgsql STABLE AS $$
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

-- Vector arm ---------------------------------------------------------------------------------
CREATE FUNCTION memloom_vector_arm(q vector, ns text, lim integer, kinds text[])
RETURNS TABLE (id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
AS $$
#variable_conflict use_column
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    -- ef_search bounds how many neighbours HNSW returns; the iterative scan keeps going when
    -- the namespace/status/kind filter removes rows. Both are reset when the function returns.
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    RETURN QUERY
    SELECT a.id, a.distance FROM (
        SELECT m.id, m.embedding <=> q AS distance
        FROM memloom_items m
        WHERE m.namespace = ns AND m.status = 'active' AND (kinds IS NULL OR m.kind = ANY (kinds))
        ORDER BY m.embedding <=> q
        LIMIT lim
    ) a
    ORDER BY a.distance, a.id;  -- relaxed_order may return neighbours slightly out of order
END
$$;
COMMENT ON FUNCTION memloom_vector_arm(vector, text, integer, text[]) IS
'the vector arm: the lim active items of the namespace (and kinds) nearest to q by cosine distance, through the HNSW index when there is one (exact otherwise)';

-- Entity arm ---------------------------------------------------------------------------------
CREATE FUNCTION memloom_entity_arm(q vector, ns text, lim integer, gate double precision, kinds text[])
RETURNS TABLE (id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 40
AS $$
#variable_conflict use_column
BEGIN
    IF lim <= 0 THEN RETURN; END IF;
    PERFORM set_config('hnsw.ef_search', least(greatest(lim, 40), 1000)::text, true);
    RETURN QUERY
    SELECT mt.item_id, sum(e.similarity * mt.strength) AS score
    FROM (
        -- Nearest entities first (HNSW), then the gate: a distance filter inside the index
        -- scan would make the iterative scan walk the whole graph when nothing passes.
        SELECT n.id, 1 - n.distance AS similarity FROM (
            SELECT en.id, en.embedding <=> q AS distance
            FROM memloom_entities en
            WHERE en.namespace = ns
            ORDER BY en.embedding <=> q
            LIMIT lim
        ) n
        WHERE 1 - n.distance >= gate
    ) e
    JOIN memloom_mentions mt ON mt.entity_id = e.id
    JOIN memloom_items m ON m.id = mt.item_id
    WHERE m.namespace = ns AND m.status = 'active' AND (kinds IS NULL OR m.kind = ANY (kinds))
    GROUP BY mt.item_id
    ORDER BY score DESC, mt.item_id
    LIMIT lim;
END
$$;
COMMENT ON FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[]) IS
'the entity arm: entities of the namespace whose cosine similarity to q is >= gate, then the active items mentioning them, ranked by the sum of similarity x mention strength; no entity above the gate, no rows';

-- Fusion -------------------------------------------------------------------------------------
CREATE FUNCTION memloom_rrf(
    vector_ids  bigint[],
    keyword_ids bigint[],
    entity_ids  bigint[],
    k           double precision,
    w_vector    double precision,
    w_keyword   double precision,
    w_entity    double precision
) RETURNS TABLE (id bigint, rrf_score double precision, vector_rank integer, keyword_rank integer, entity_rank integer)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- Rank = 1-based position in the arm's array; a later duplicate is ignored. The score sums
    -- the arms in this order (vector, keyword, entity) in double precision, as the Rust core does.
    WITH v AS (SELECT u.id, min(u.pos)::integer AS r FROM unnest(vector_ids) WITH ORDINALITY AS u(id, pos)
               WHERE u.id IS NOT NULL GROUP BY u.id),
         kw AS (SELECT u.id, min(u.pos)::integer AS r FROM unnest(keyword_ids) WITH ORDINALITY AS u(id, pos)
               WHERE u.id IS NOT NULL GROUP BY u.id),
         en AS (SELECT u.id, min(u.pos)::integer AS r FROM unnest(entity_ids) WITH ORDINALITY AS u(id, pos)
               WHERE u.id IS NOT NULL GROUP BY u.id)
    SELECT ids.id,
           coalesce(w_vector / (k + v.r), 0)
             + coalesce(w_keyword / (k + kw.r), 0)
             + coalesce(w_entity / (k + en.r), 0) AS rrf_score,
           v.r, kw.r, en.r
    FROM (SELECT v.id FROM v UNION SELECT kw.id FROM kw UNION SELECT en.id FROM en) ids
    LEFT JOIN v ON v.id = ids.id
    LEFT JOIN kw ON kw.id = ids.id
    LEFT JOIN en ON en.id = ids.id
    ORDER BY rrf_score DESC, ids.id
$$;
COMMENT ON FUNCTION memloom_rrf(bigint[], bigint[], bigint[], double precision, double precision, double precision, double precision) IS
'weighted reciprocal rank fusion of three ranked id lists: score = w_vector/(k+vector_rank) + w_keyword/(k+keyword_rank) + w_entity/(k+entity_rank), missing arms add 0; best first, ties by id';

-- Recall: one call -----------------------------------------------------------------------------
CREATE FUNCTION memloom_default_candidates(lim integer) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- 10 = memloom_core::fuse::DEFAULT_CANDIDATES (a test in crates/memloom-sql pins it). Deep
    -- ranks of a weak arm add RRF noise: rank 16 in two arms outscores rank 1 in one.
    SELECT greatest(lim, 10)
$$;
COMMENT ON FUNCTION memloom_default_candidates(integer) IS
'the candidates each arm contributes to memloom_fuse when the call does not say: greatest(lim, 10)';

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
    arms             text[]           DEFAULT NULL
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
    keyword_ids bigint[];
    entity_ids  bigint[];
BEGIN
    PERFORM memloom_check_vector(query_embedding);
    IF ns IS NULL THEN
        RAISE EXCEPTION 'memloom_fuse needs a namespace' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF arms IS NOT NULL AND NOT arms <@ ARRAY['vector', 'keyword', 'entity'] THEN
        RAISE EXCEPTION 'unknown arm in %; arms are vector, keyword, entity', arms
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lim IS NULL OR lim <= 0 THEN RETURN; END IF;
    candidates := coalesce(candidates, memloom_default_candidates(lim));
    -- An arm left out of arms does not run: no votes, and no boost ids for the keyword arm.
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        vector_ids := ARRAY(SELECT a.id FROM memloom_vector_arm(query_embedding, ns, candidates, kinds) a);
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        keyword_ids := ARRAY(SELECT a.id FROM memloom_keyword_arm(query_text, ns, candidates, kinds,
                                                                 keyword_scan_cap, vector_ids) a);
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
END
$$;
COMMENT ON FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[]) IS
'recall in one call: the vector, keyword and entity arms (or only those named in arms) over the namespace''s active items, fused by memloom_rrf; best first, with each arm''s rank (null where it did not vote). Defaults: k 60, weights 1.0 / 2.0 / 0.5, entity gate 0.60, candidates per arm NULL = memloom_default_candidates(lim) = greatest(lim, 10)';
