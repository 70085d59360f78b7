-- memloom schema 15: time. Validity intervals on memory versions, recall as of an instant,
-- and the time of the event a memory describes (docs/TIME.md).
--
-- * memloom_items.valid_from (NOT NULL, default now() in milliseconds; existing rows:
--   created_at), valid_to (NULL while the version is active; existing superseded rows:
--   updated_at, which memloom_remember set when it superseded them, i.e. the successor's
--   creation) and event_at (NULL: not given). A CHECK keeps valid_to NULL exactly for the
--   active rows and never before valid_from. The backfill is a table rewrite in heap order
--   (below): no triggers, the same ranking.
-- * memloom_remember gains event_at (last, DEFAULT NULL); a version is valid from the clock once
--   the key's lock is held (a queued writer's now() predates the version it supersedes), and
--   closes the superseded version's interval there. memloom_forget is unchanged: it erases (deletes
--   every version, or one by id), so it leaves no interval to close.
-- * memloom_history(ns, key): a key's versions with their intervals, the one query every
--   client's `history` makes.
-- * memloom_visible: which rows a recall sees, inlined into the three arms; the arms and
--   memloom_fuse gain as_of, since and until (last, DEFAULT NULL). NULL as_of is today's
--   predicate, status = 'active', with the same plans (the arms are planned per call; the
--   vector arm now too, so the NULLs fold away).

UPDATE memloom_meta SET schema_version = greatest(schema_version, 15);

ALTER TABLE memloom_items
    ADD COLUMN valid_from timestamptz,
    ADD COLUMN valid_to   timestamptz,
    ADD COLUMN event_at   timestamptz;
-- The backfill as a table rewrite (ALTER COLUMN TYPE ... USING), not an UPDATE: it fires no
-- trigger (the content does not change: no statistics, no re-index) and keeps the rows in their
-- heap order, which decides between items at exactly the same distance at the vector arm's
-- cut, so the upgraded store ranks exactly as before (an UPDATE moved rows and changed such
-- ties). The indexes are rebuilt with it.
ALTER TABLE memloom_items
    ALTER COLUMN valid_from TYPE timestamptz USING date_trunc('milliseconds', created_at),
    ALTER COLUMN valid_to TYPE timestamptz
        USING CASE WHEN status = 'superseded' THEN date_trunc('milliseconds', greatest(created_at, updated_at)) END;
ALTER TABLE memloom_items
    ALTER COLUMN valid_from SET DEFAULT date_trunc('milliseconds', now()),
    ALTER COLUMN valid_from SET NOT NULL,
    ADD CONSTRAINT memloom_items_valid_interval
        CHECK ((valid_to IS NULL) = (status = 'active') AND (valid_to IS NULL OR valid_to >= valid_from));
COMMENT ON COLUMN memloom_items.valid_from IS
'when this version became the belief: the write (memloom_remember, a chunk''s ingest), in milliseconds (a JavaScript Date''s precision, so an instant read from history names exactly its version); docs/TIME.md';
COMMENT ON COLUMN memloom_items.valid_to IS
'when this version stopped being the belief: its successor''s valid_from (set by memloom_remember when it supersedes it); NULL while it is active';
COMMENT ON COLUMN memloom_items.event_at IS
'when the event the memory describes happened (remember --at), distinct from when it was saved; NULL when not given (the time filters then use valid_from)';

DROP FUNCTION memloom_remember(text, text, text, vector, jsonb);
DROP FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision);
DROP FUNCTION memloom_keyword_arm(text, text, integer, text[], integer, bigint[]);
DROP FUNCTION memloom_vector_arm(vector, text, integer, text[]);
DROP FUNCTION memloom_entity_arm(vector, text, integer, double precision, text[]);

CREATE FUNCTION memloom_visible(
    status     text,
    valid_from timestamptz,
    valid_to   timestamptz,
    event_at   timestamptz,
    as_of      timestamptz,
    since      timestamptz,
    until      timestamptz
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN as_of IS NULL THEN status = 'active'
                ELSE valid_from <= as_of AND (valid_to IS NULL OR valid_to > as_of) END
           AND (since IS NULL OR coalesce(event_at, valid_from) >= since)
           AND (until IS NULL OR coalesce(event_at, valid_from) <= until)
$$;
COMMENT ON FUNCTION memloom_visible(text, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz) IS
'whether a recall sees an item: as_of NULL, the active ones; else those valid at as_of (valid_from <= as_of < valid_to, or no valid_to); and, when given, coalesce(event_at, valid_from) between since and until (inclusive). Inlined into the arms';

CREATE FUNCTION memloom_keyword_arm(
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
            -- Each candidate once (by id: comparing whole tsvectors is slow), its tsv detoasted
            -- once (|| copies it) instead of once per term; tf computed once per term (OFFSET 0).
            SELECT DISTINCT ON (u.id) u.id, u.tsv, u.htsv, length(u.tsv)::double precision AS len
            FROM (
                (SELECT m.id, m.tsv || ''::tsvector AS tsv, m.heading_tsv AS htsv FROM memloom_items m
                 WHERE m.tsv @@ tier AND m.namespace = ns
                   AND memloom_visible(m.status, m.valid_from, m.valid_to, m.event_at, as_of, since, until)
                   AND (kinds IS NULL OR m.kind = ANY (kinds))
                 LIMIT CASE WHEN capped[i] THEN scan_cap END)
                UNION ALL
                (SELECT m.id, m.tsv || ''::tsvector AS tsv, m.heading_tsv AS htsv FROM memloom_items m
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
COMMENT ON FUNCTION memloom_keyword_arm(text, text, integer, text[], integer, bigint[], timestamptz, timestamptz, timestamptz) IS
'the keyword arm: the items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) matching the query''s terms, best BM25 first (idf from memloom_refresh_stats); scores only the most selective matching tier; no match, no rows. The idf and lengths are the namespace''s current statistics, also for an as_of in the past';

CREATE FUNCTION memloom_vector_arm(
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
    -- ef_search bounds how many neighbours HNSW returns; the iterative scan keeps going when
    -- the namespace/time/kind filter removes rows. Both are reset when the function returns.
    -- Planned per call, so with as_of, since and until NULL the time filter folds to
    -- status = 'active' (memloom_visible, 03_pool.sql).
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
'the vector arm: the lim items of the namespace (and kinds) a recall sees (memloom_visible: the active ones, or those valid at as_of; event time between since and until) nearest to q by cosine distance, through the HNSW index when there is one (exact otherwise)';

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

-- SECURITY DEFINER with the pinned search path (10_security.sql), set again below.
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
    IF since > until THEN
        RAISE EXCEPTION 'since (%) is after until (%): nothing can match', since, until
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lim IS NULL OR lim <= 0 THEN RETURN; END IF;
    candidates := coalesce(candidates, memloom_default_candidates(lim));
    -- An arm left out of arms does not run: no votes, and no boost ids for the keyword arm.
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        SELECT array_agg(a.id ORDER BY a.distance, a.id), array_agg(a.distance ORDER BY a.distance, a.id)
          INTO vector_ids, vector_dist
        FROM memloom_vector_arm(query_embedding, ns, candidates, kinds, as_of, since, until) a;
        -- The keyword arm still scores every vector candidate (boost ids); only the votes are cut.
        vector_seen := vector_ids;
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        keyword_ids := ARRAY(
            SELECT a.id FROM (
                SELECT a.id, a.score, max(a.score) OVER () AS best
                FROM memloom_keyword_arm(query_text, ns, candidates, kinds, keyword_scan_cap, vector_seen,
                                         as_of, since, until) a
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
    IF arms IS NULL OR 'vector' = ANY (arms) THEN
        SELECT array_agg(a.id ORDER BY a.distance, a.id) INTO deep_vector
        FROM memloom_vector_arm(query_embedding, ns, lim, kinds, as_of, since, until) a WHERE a.distance < 1;
    END IF;
    IF arms IS NULL OR 'keyword' = ANY (arms) THEN
        deep_keyword := ARRAY(SELECT a.id FROM memloom_keyword_arm(query_text, ns, lim, kinds,
                                                                  keyword_scan_cap, vector_seen,
                                                                  as_of, since, until) a);
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
COMMENT ON FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision, timestamptz, timestamptz, timestamptz) IS
'recall in one call: the vector, keyword and entity arms (or only those named in arms) over the namespace''s active items (as_of NULL) or the versions valid at as_of (valid_from <= as_of < valid_to; chunks ingested at or before it; the keyword idf and entity frequencies are the current statistics), optionally only items whose event time (event_at, else valid_from) lies between since and until inclusive (a hard filter inside every arm), fused by memloom_rrf; best first, with each arm''s rank (null where it did not vote). Runs as the tables'' owner (SECURITY DEFINER) after checking that ns is the caller''s bound namespace (memloom_assert_namespace). Defaults: k 60, weights 1.0 / 2.0 / 0.5, entity gate 0.60, candidates per arm NULL = memloom_default_candidates(lim) = 10 whatever the limit; the keyword arm votes for items scoring >= keyword_floor x its best score (0.3), the vector arm for items with cosine > 0; past the voted items, the vector and keyword arms'' further items follow unscored (rrf_score 0, null ranks) by their position, so the first results never depend on lim';

CREATE FUNCTION memloom_remember(
    ns        text,
    key       text,
    content   text,
    embedding vector,
    metadata  jsonb DEFAULT '{}',
    event_at  timestamptz DEFAULT NULL
) RETURNS TABLE (id bigint, version integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    old_id      bigint;
    old_version integer;
    old_hash    text;
    old_meta    jsonb;
    old_event   timestamptz;
    old_from    timestamptz;
    t           timestamptz;
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
        SELECT i.id, i.version, i.content_hash, i.metadata, i.event_at, i.valid_from
          INTO old_id, old_version, old_hash, old_meta, old_event, old_from
        FROM memloom_items i
        WHERE i.namespace = ns AND i.key = memloom_remember.key AND i.status = 'active'
        FOR UPDATE;
        IF old_id IS NOT NULL AND old_hash = md5(content) AND old_meta = coalesce(metadata, '{}')
           AND old_event IS NOT DISTINCT FROM memloom_remember.event_at THEN
            RETURN QUERY SELECT old_id, old_version;  -- unchanged: no new version
            RETURN;
        END IF;
        SELECT coalesce(max(i.version), 0) + 1 INTO new_version
        FROM memloom_items i WHERE i.namespace = ns AND i.key = memloom_remember.key;
    END IF;
    -- The instant this version becomes the belief: the clock once the key's lock is held (not
    -- now(), the transaction's start: a writer that queued behind another began before that
    -- one's version existed), in milliseconds (valid_from's precision, 03_pool.sql), never
    -- before the version it supersedes.
    t := greatest(date_trunc('milliseconds', clock_timestamp()), old_from);
    IF old_id IS NOT NULL THEN
        -- Its interval ends where the new version's begins.
        UPDATE memloom_items SET status = 'superseded', valid_to = t, updated_at = now() WHERE id = old_id;
    END IF;
    INSERT INTO memloom_items (namespace, kind, key, version, content, embedding, metadata, supersedes,
                               valid_from, event_at)
    VALUES (ns, 'memory', memloom_remember.key, new_version, memloom_remember.content,
            memloom_remember.embedding, coalesce(memloom_remember.metadata, '{}'), old_id,
            t, memloom_remember.event_at)
    RETURNING memloom_items.id INTO new_id;
    IF old_id IS NOT NULL THEN
        UPDATE memloom_items SET superseded_by = new_id WHERE id = old_id;
    END IF;
    RETURN QUERY SELECT new_id, new_version;
END
$$;
COMMENT ON FUNCTION memloom_remember(text, text, text, vector, jsonb, timestamptz) IS
'stores a memory, valid from the clock once the key''s lock is held (milliseconds), with the time of the event it describes (event_at, NULL when not given); with a key, supersedes the key''s active version in the same transaction, closing its interval (valid_to = the new version''s valid_from; versions 1, 2, ... without gaps; concurrent writers of one key queue on an advisory lock). Remembering the active content, metadata and event time again returns the active version unchanged.';

CREATE FUNCTION memloom_history(ns text, key text)
RETURNS TABLE (id bigint, version integer, status text, content text, created_at timestamptz,
               valid_from timestamptz, valid_to timestamptz, event_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT i.id, i.version, i.status, i.content, i.created_at, i.valid_from, i.valid_to, i.event_at
    FROM memloom_items i
    WHERE i.namespace = memloom_history.ns AND i.key = memloom_history.key AND i.kind = 'memory'
    ORDER BY i.version
$$;
COMMENT ON FUNCTION memloom_history(text, text) IS
'every version of memory key in namespace ns, oldest first, with its validity interval (valid_from, valid_to: NULL while active) and event time; forgotten versions are gone (forget erases)';

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
