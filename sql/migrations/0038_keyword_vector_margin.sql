-- memloom schema 38: the keyword arm does not vote for an item the vector arm finds unrelated.
--
-- A keyword vote claims a precise match, and with weight 2.0 it outweighs the vector arm's
-- best. With an embedder that has meaning, the keyword arm's partial matches of common words
-- ("how much RAM is my app using": chunks about memory and apps) pushed the vector arm's
-- paraphrase hits out of the top 5. memloom_fuse now drops the keyword vote of an item whose
-- cosine similarity to the query is more than memloom_keyword_vector_margin() (0.2) below the
-- vector arm's last voting candidate's, when the vector arm gave all its candidates; a turn
-- indexed with its context (sql/0036) is exempt, its embedding does not hold the words the
-- keyword arm matched there, and so is a query naming an identifier (an exact match). Measured (docs/EVAL.md, 2026-12-06): all-MiniLM-L6-v2 on the Node
-- docs S@5 .800 -> .835, MRR .758 -> .769; static-v2 S@5 .788 -> .800; hash-v1 S@1 and S@5
-- unchanged on every type, MRR .696 -> .695; locomo-dev the same lists with all three.

CREATE FUNCTION memloom_keyword_vector_margin() RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- memloom_core::fuse::KEYWORD_VECTOR_MARGIN (a test in crates/memloom-sql pins it).
    SELECT 0.2::double precision
$$;
COMMENT ON FUNCTION memloom_keyword_vector_margin() IS
'how far below the vector arm''s last voting candidate (in cosine similarity) an item may lie and still get the keyword arm''s vote in memloom_fuse (0.2); items indexed with a context (turns of a thread) and the items of a query naming an identifier are not held to it';

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
    held        bigint[];           -- keyword candidates the vector arm finds unrelated (sql/0038)
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
        -- A keyword vote claims a precise match. An item whose embedding the vector arm finds
        -- far from the query (below its own last candidate's similarity by more than the
        -- margin) shares words with it by coincidence: "how much RAM is my app using" matches
        -- chunks on memory and apps that an embedder with meaning ranks nowhere near. With a
        -- lexical embedder (hash-v1) a keyword hit shares the query's words and is seldom that
        -- far (docs/EVAL.md, 2026-12-06). Only when the vector arm gave its full `candidates`; a
        -- turn indexed with its context is exempt (its embedding holds its own words, not the
        -- question's the keyword arm matched), and so is every item of a query that names an
        -- identifier: its tier holds the identifier, a match no embedding judges better (on
        -- a corpus of near-copies the vector arm's band is narrow and high).
        IF keyword_ids IS NOT NULL AND candidates > 0 AND cardinality(vector_dist) >= candidates THEN
            held := ARRAY(
                SELECT m.id FROM memloom_items m
                WHERE m.id = ANY (keyword_ids) AND m.context IS NULL
                  AND 1 - (m.embedding <=> query_embedding) < 1 - vector_dist[candidates] - memloom_keyword_vector_margin());
            IF cardinality(held) > 0
               AND NOT EXISTS (SELECT 1 FROM memloom_query_terms(query_text) AS t WHERE t.exact) THEN
                keyword_ids := ARRAY(SELECT u.id FROM unnest(keyword_ids) WITH ORDINALITY AS u(id, pos)
                                     WHERE u.id <> ALL (held) ORDER BY u.pos);
            END IF;
        END IF;
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
COMMENT ON FUNCTION memloom_fuse(text, vector, text, integer, double precision, double precision, double precision, double precision, double precision, integer, text[], integer, text[], double precision, timestamptz, timestamptz, timestamptz) IS
'recall in one call: the vector, keyword and entity arms (or only those named in arms) over the namespace''s active items (as_of NULL) or the versions valid at as_of (valid_from <= as_of < valid_to; chunks ingested at or before it; the keyword idf and entity frequencies are the current statistics), optionally only items whose event time (event_at, else valid_from) lies between since and until inclusive (a hard filter inside every arm), fused by memloom_rrf; best first, with each arm''s rank (null where it did not vote). Runs as the tables'' owner (SECURITY DEFINER) after checking that ns is the caller''s bound namespace (memloom_assert_namespace). Defaults: k 60, weights 1.0 / 2.0 / 0.5, entity gate 0.60, candidates per arm NULL = memloom_default_candidates(lim) = 10 whatever the limit; the keyword arm votes for items scoring >= keyword_floor x its best score (0.3) unless the vector arm, when it gave all its candidates, finds the item more than memloom_keyword_vector_margin() (0.2) below its last candidate''s cosine (turns with a context and queries naming an identifier excepted), the vector arm for items with cosine > 0; past the voted items, the vector and keyword arms'' further items follow unscored (rrf_score 0, null ranks) by their position, so the first results never depend on lim';

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

UPDATE memloom_meta SET schema_version = greatest(schema_version, 38);
