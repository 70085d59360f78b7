-- memloom, the current definition, part 4: statistics. The keyword arm's BM25
-- statistics (document frequency per lexeme, document count and length per namespace) and the
-- entity arm's entity frequencies, kept exact by the writes themselves.
--
-- How they stay exact: statement-level triggers with transition tables on memloom_items and
-- memloom_mentions record each statement's change, aggregated per lexeme, in the session's
-- temporary tables (pg_temp.memloom_pending_*, so a writing role needs the database's
-- TEMPORARY privilege); a deferred constraint trigger (memloom_stats_commit) applies the
-- transaction's sum once at commit:
-- * memloom_items: an item counts iff status = 'active'; its lexemes (tsvector_to_array(tsv))
--   add to their document frequency, its length(tsv) to the namespace's total length, 1 to its
--   document count. An UPDATE counts only rows whose status, tsv or namespace changed.
-- * entity frequencies: df(e) = mentions of e by active items, from the pairs the transaction
--   added or removed and the items whose status it changed.
-- The values are exactly those a full recompute (memloom_recompute_stats) gives; avg_doc_len
-- is computed as avg() computes it, so BM25's length norm is bit-identical too. A statement
-- inside a writing transaction reads the statistics as of the last commit.
--
-- Concurrency: at commit the transaction takes its namespaces' statistics locks
-- (memloom_stats_lock, in namespace order), the last lock a writer takes; its holders wait for
-- nothing else, so writers of a namespace queue for the commit's few milliseconds and never
-- deadlock.
--
-- Bulk loads: a transaction that sets memloom.stats_bulk to 'on' (set_config(..., true))
-- only records which namespaces it changed, and its commit marks them for recompute
-- (total_len NULL); the loader calls memloom_refresh_stats at the end, and if it never does,
-- the next transaction that changes the namespace recomputes it.

-- Statistics tables -----------------------------------------------------------------------------
-- Every write transaction updates its lexemes' rows in place: with half of each page free the
-- new version stays on its page (a HOT update, no index entry): fillfactor 50.
CREATE TABLE memloom_term_stats (
    namespace text    NOT NULL,
    lexeme    text    NOT NULL,
    df        integer NOT NULL,
    PRIMARY KEY (namespace, lexeme)
) WITH (fillfactor = 50);
COMMENT ON TABLE memloom_term_stats IS
'per namespace and lexeme: how many active items contain it (BM25''s df); rows with df 0 are deleted; kept by the statistics triggers (sql/0009), recomputed by memloom_refresh_stats';

CREATE TABLE memloom_namespace_stats (
    namespace    text PRIMARY KEY,
    doc_count    bigint           NOT NULL,
    avg_doc_len  double precision NOT NULL,
    refreshed_at timestamptz      NOT NULL DEFAULT now(),
    total_len    bigint  -- NULL: not exact, the next change of the namespace recomputes it
) WITH (fillfactor = 50);
COMMENT ON COLUMN memloom_namespace_stats.total_len IS
'sum of length(tsv) over the namespace''s active items (avg_doc_len = total_len / doc_count); NULL: not recomputed since 0009, the next change recomputes the namespace';
COMMENT ON TABLE memloom_namespace_stats IS
'per namespace: active items (doc_count), their total and average keyword length (BM25''s N and avgdl); kept by the statistics triggers (sql/0009), recomputed by memloom_refresh_stats';

-- df(e) = active items of the namespace that mention e.
CREATE TABLE memloom_entity_stats (
    entity_id bigint  PRIMARY KEY,
    namespace text    NOT NULL,
    df        integer NOT NULL,
    CONSTRAINT memloom_entity_stats_entity_id_fkey
        FOREIGN KEY (namespace, entity_id) REFERENCES memloom_entities (namespace, id) ON DELETE CASCADE
) WITH (fillfactor = 50);
CREATE INDEX memloom_entity_stats_namespace ON memloom_entity_stats (namespace);
COMMENT ON TABLE memloom_entity_stats IS
'per entity, how many active items of its namespace mention it (the entity arm''s inverse entity frequency); kept by the statistics triggers (sql/0009), recomputed by memloom_refresh_stats';

-- An entity statistic's key is its entity id alone (the statistics commit upserts on it), and a
-- unique violation is reported before a foreign-key one: a tenant inserting a row for another
-- namespace's entity id would learn from "duplicate key" that the id exists. The entity is
-- looked up first, as the session sees it, so that insert fails as for an id that does not
-- exist.
CREATE FUNCTION memloom_entity_stats_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM memloom_entities e WHERE e.id = NEW.entity_id AND e.namespace = NEW.namespace) THEN
        RAISE EXCEPTION 'no entity % in namespace %', NEW.entity_id, quote_literal(NEW.namespace)
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_entity_stats_check() IS
'trigger: an entity statistic must name an entity of its namespace that the session can see, checked before the row''s unique key (so no tenant learns another''s entity ids from a duplicate key)';
CREATE TRIGGER memloom_entity_stats_check BEFORE INSERT OR UPDATE OF entity_id, namespace ON memloom_entity_stats
    FOR EACH ROW EXECUTE FUNCTION memloom_entity_stats_check();

-- Locking and full recompute ----------------------------------------------------------------
CREATE FUNCTION memloom_stats_lock(ns text) RETURNS void
LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock(hashtextextended('memloom stats ' || ns, 0))
$$;
COMMENT ON FUNCTION memloom_stats_lock(text) IS
'takes the namespace''s statistics lock until the transaction ends: the statistics commit (memloom_stats_commit) and memloom_recompute_stats of a namespace queue on it';

CREATE FUNCTION memloom_avg_doc_len(total_len bigint, doc_count bigint) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- avg(integer) is numeric sum / numeric count; the same division gives the same double.
    SELECT CASE WHEN doc_count > 0 THEN (total_len::numeric / doc_count::numeric)::double precision ELSE 0 END
$$;
COMMENT ON FUNCTION memloom_avg_doc_len(bigint, bigint) IS
'the average keyword length of a namespace from its total and count, bit-identical to avg(length(tsv)); 0 for no documents';

CREATE FUNCTION memloom_refresh_entity_stats(ns text) RETURNS void
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

CREATE FUNCTION memloom_recompute_stats(ns text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM memloom_stats_lock(ns);
    -- What this transaction changed in ns so far is in what is recounted here: its pending
    -- changes must not be added again at commit (sql/0044: a repair called inside a writing
    -- transaction counted them twice). Later changes of the transaction record their own.
    IF to_regclass('pg_temp.memloom_pending_tx') IS NOT NULL THEN
        DELETE FROM pg_temp.memloom_pending_terms p WHERE p.namespace = ns;
        DELETE FROM pg_temp.memloom_pending_docs p WHERE p.namespace = ns;
        DELETE FROM pg_temp.memloom_pending_stale p WHERE p.namespace = ns;
        DELETE FROM pg_temp.memloom_pending_items p WHERE p.namespace = ns;
        DELETE FROM pg_temp.memloom_pending_mentions p USING memloom_entities e
        WHERE e.id = p.entity_id AND e.namespace = ns;
    END IF;
    DELETE FROM memloom_term_stats s WHERE s.namespace = ns;
    INSERT INTO memloom_term_stats (namespace, lexeme, df)
    SELECT ns, s.word, s.ndoc
    FROM ts_stat(format('SELECT tsv FROM memloom_items WHERE namespace = %L AND status = %L',
                        ns, 'active')) AS s;
    DELETE FROM memloom_namespace_stats s WHERE s.namespace = ns;
    INSERT INTO memloom_namespace_stats (namespace, doc_count, total_len, avg_doc_len)
    SELECT ns, t.n, t.len, memloom_avg_doc_len(t.len, t.n)
    FROM (SELECT count(*) AS n, coalesce(sum(length(m.tsv)), 0)::bigint AS len
          FROM memloom_items m WHERE m.namespace = ns AND m.status = 'active') t;
    PERFORM memloom_refresh_entity_stats(ns);
END
$$;
COMMENT ON FUNCTION memloom_recompute_stats(text) IS
'recomputes the namespace''s keyword statistics (df per lexeme, document count, total and average length) and entity frequencies from its active items, under memloom_stats_lock; the statistics triggers run it for a namespace without a statistics row';

CREATE FUNCTION memloom_refresh_stats(ns text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM memloom_recompute_stats(ns);
    -- Planner statistics too: PGlite has no autovacuum and a server's may lag a bulk load;
    -- without them the entity arm's join ran its HNSW scan once per mention row (26 s instead
    -- of 0.1 s per query on the Node docs). ANALYZE may run in a transaction (VACUUM may not).
    ANALYZE memloom_items, memloom_entities, memloom_mentions;
END
$$;
COMMENT ON FUNCTION memloom_refresh_stats(text) IS
'recomputes the namespace''s keyword statistics and entity frequencies in full (memloom_recompute_stats), then ANALYZEs memloom_items, memloom_entities and memloom_mentions; writes keep the statistics current by themselves (sql/0009): call it to repair, or use memloom_analyze_if_grown for planner statistics after a load';

CREATE FUNCTION memloom_analyze_if_grown() RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    tab   text;
    done  text[] := '{}';
    pages double precision;
    tuples double precision;
BEGIN
    -- Autovacuum's rule, on sizes the server keeps without a statistics collector (PGlite's
    -- counters are not flushed): a table never analyzed, or grown by more than 10% (+ 8 pages)
    -- since it was. Cheap: catalog reads and the files' sizes.
    FOREACH tab IN ARRAY ARRAY['memloom_items', 'memloom_entities', 'memloom_mentions'] LOOP
        SELECT c.relpages, c.reltuples INTO pages, tuples FROM pg_class c WHERE c.oid = tab::regclass;
        IF (tuples < 0 AND pg_relation_size(tab::regclass) > 0)
           OR pg_relation_size(tab::regclass) / current_setting('block_size')::double precision > 1.1 * pages + 8 THEN
            EXECUTE format('ANALYZE %I', tab);
            done := done || tab;
        END IF;
    END LOOP;
    RETURN done;
END
$$;
COMMENT ON FUNCTION memloom_analyze_if_grown() IS
'ANALYZEs memloom_items, memloom_entities and memloom_mentions when never analyzed or grown by more than 10% since (PGlite has no autovacuum; call after a write); returns the tables analyzed';

CREATE FUNCTION memloom_tables_to_vacuum() RETURNS text[]
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

-- Pending changes: per session, applied once per transaction ----------------------------------
-- The statement triggers only append their aggregated changes to temporary tables (no WAL, no
-- row shared with another session); memloom_stats_commit, a deferred constraint trigger,
-- applies the transaction's sum once at commit. So a transaction of 500 remembers updates each
-- statistics row once instead of 500 times, and the statistics lock is the last lock a writer
-- takes.
CREATE FUNCTION memloom_stats_pending() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF to_regclass('pg_temp.memloom_pending_tx') IS NULL THEN
        CREATE TEMP TABLE memloom_pending_terms (namespace text, lexeme text, df integer) ON COMMIT PRESERVE ROWS;
        CREATE TEMP TABLE memloom_pending_docs (namespace text, docs bigint, len bigint) ON COMMIT PRESERVE ROWS;
        CREATE TEMP TABLE memloom_pending_mentions (entity_id bigint, item_id bigint, sign integer) ON COMMIT PRESERVE ROWS;
        -- Items whose status the transaction changed (the first record holds the status before
        -- it), and deleted items that were not active.
        CREATE TEMP TABLE memloom_pending_items (seq bigint GENERATED ALWAYS AS IDENTITY, item_id bigint,
                                                namespace text, was_active boolean) ON COMMIT PRESERVE ROWS;
        -- Namespaces a bulk transaction changed (memloom.stats_bulk): recomputed, not summed.
        CREATE TEMP TABLE memloom_pending_stale (namespace text) ON COMMIT PRESERVE ROWS;
        -- The marker row whose deferred trigger runs the commit; emptied by each commit.
        CREATE TEMP TABLE memloom_pending_tx (started boolean) ON COMMIT DELETE ROWS;
        CREATE CONSTRAINT TRIGGER memloom_stats_commit AFTER INSERT ON memloom_pending_tx
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memloom_stats_commit();
    END IF;
    -- One commit trigger per transaction (the flag is transaction-local, and rolls back with a
    -- savepoint as the marker row does).
    IF current_setting('memloom.stats_pending', true) IS DISTINCT FROM 'on' THEN
        INSERT INTO pg_temp.memloom_pending_tx VALUES (true);
        PERFORM set_config('memloom.stats_pending', 'on', true);
    END IF;
END
$$;
COMMENT ON FUNCTION memloom_stats_pending() IS
'statistics triggers: makes sure this session''s pending-change tables exist and this transaction will apply them at commit (memloom_stats_commit)';

CREATE FUNCTION memloom_stats_prepare(nss text[], stale text[]) RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    ns         text;
    recomputed text[] := '{}';
BEGIN
    -- Locks in namespace order (one namespace in practice); a namespace a bulk transaction
    -- changed loses its exact base (total_len NULL: the next transaction or
    -- memloom_refresh_stats recomputes it); one without an exact base is recomputed. Returns
    -- both kinds, whose deltas the caller skips.
    FOR ns IN SELECT DISTINCT x FROM unnest(nss || stale) AS x WHERE x IS NOT NULL ORDER BY x LOOP
        PERFORM memloom_stats_lock(ns);
        IF ns = ANY (stale) THEN
            UPDATE memloom_namespace_stats s SET total_len = NULL WHERE s.namespace = ns;
            recomputed := recomputed || ns;
        ELSIF NOT EXISTS (SELECT 1 FROM memloom_namespace_stats s
                          WHERE s.namespace = ns AND s.total_len IS NOT NULL) THEN
            PERFORM memloom_recompute_stats(ns);
            recomputed := recomputed || ns;
        END IF;
    END LOOP;
    RETURN recomputed;
END
$$;
COMMENT ON FUNCTION memloom_stats_prepare(text[], text[]) IS
'statistics commit: takes the namespaces'' statistics locks in order, marks the namespaces of a bulk transaction for recompute and recomputes those without an exact statistics row; returns both';

CREATE FUNCTION memloom_stats_commit() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    skip    text[];
    z_ent   bigint[];
    big     boolean;
    commits bigint;
BEGIN
    PERFORM set_config('memloom.stats_pending', '', true);  -- later changes (after SET CONSTRAINTS) mark again
    -- Every namespace the transaction changed, locked in order. Taken here, at commit, after
    -- every other lock of the transaction: a writer holding it waits for nothing but
    -- statistics rows, which only its holders write, so writers cannot deadlock on it; and
    -- its previous holder has committed, so the reads below see every counted change so far.
    skip := memloom_stats_prepare(ARRAY(
        SELECT namespace FROM pg_temp.memloom_pending_docs
        UNION SELECT namespace FROM pg_temp.memloom_pending_items
        UNION SELECT e.namespace FROM pg_temp.memloom_pending_mentions p JOIN memloom_entities e ON e.id = p.entity_id),
        ARRAY(SELECT DISTINCT namespace FROM pg_temp.memloom_pending_stale));

    -- Keyword statistics: the sum of the statements' deltas.
    INSERT INTO memloom_term_stats AS s (namespace, lexeme, df)
    SELECT p.namespace, p.lexeme, sum(p.df)::integer FROM pg_temp.memloom_pending_terms p
    WHERE p.namespace <> ALL (skip) GROUP BY 1, 2 HAVING sum(p.df) <> 0
    ORDER BY 1, 2
    ON CONFLICT (namespace, lexeme) DO UPDATE SET df = s.df + EXCLUDED.df;
    IF EXISTS (SELECT 1 FROM pg_temp.memloom_pending_terms p WHERE p.df < 0) THEN
        -- Lexemes no active item holds any more (a row inserted here with a negative delta
        -- means a base that was not exact; it goes too).
        DELETE FROM memloom_term_stats s USING (SELECT DISTINCT p.namespace, p.lexeme FROM pg_temp.memloom_pending_terms p WHERE p.df < 0) z
        WHERE s.namespace = z.namespace AND s.lexeme = z.lexeme AND s.df <= 0;
    END IF;
    UPDATE memloom_namespace_stats s
       SET doc_count = s.doc_count + d.docs,
           total_len = s.total_len + d.len,
           avg_doc_len = memloom_avg_doc_len(s.total_len + d.len, s.doc_count + d.docs)
      FROM (SELECT p.namespace, sum(p.docs)::bigint AS docs, sum(p.len)::bigint AS len
            FROM pg_temp.memloom_pending_docs p GROUP BY 1) d
     WHERE s.namespace = d.namespace AND d.namespace <> ALL (skip);

    IF EXISTS (SELECT 1 FROM pg_temp.memloom_pending_mentions) OR EXISTS (SELECT 1 FROM pg_temp.memloom_pending_items) THEN
        -- Entity frequencies: df(e) = mentions of e by active items. Before this transaction (C)
        -- and now (S), per (entity, item) pair: a pair it added counts if the item is active now,
        -- a pair it removed counted if the item was active before, and a pair in both counts
        -- the change of its item's status. An item's status before is the first pending record
        -- of it; without one, its status now, or active when it is gone (this transaction deleted
        -- it, and records deleted items only when they were not active).
        WITH p AS (
            SELECT m.entity_id, m.item_id, sum(m.sign) AS s FROM pg_temp.memloom_pending_mentions m GROUP BY 1, 2
        ), first AS (
            SELECT DISTINCT ON (r.item_id) r.item_id, r.was_active FROM pg_temp.memloom_pending_items r ORDER BY r.item_id, r.seq
        ), st AS (
            SELECT x.item_id, coalesce(m.status = 'active', false) AS now_active,
                   coalesce(f.was_active, m.status = 'active', true) AS then_active
            FROM (SELECT p.item_id FROM p UNION SELECT first.item_id FROM first) x
            LEFT JOIN first f ON f.item_id = x.item_id
            LEFT JOIN memloom_items m ON m.id = x.item_id
        ), d AS (
            SELECT p.entity_id, CASE WHEN p.s > 0 THEN st.now_active::integer ELSE -st.then_active::integer END AS d
            FROM p JOIN st ON st.item_id = p.item_id WHERE p.s <> 0
            UNION ALL
            SELECT mt.entity_id, st.now_active::integer - st.then_active::integer
            FROM st JOIN memloom_mentions mt ON mt.item_id = st.item_id
            LEFT JOIN p ON p.entity_id = mt.entity_id AND p.item_id = mt.item_id
            WHERE st.now_active <> st.then_active AND coalesce(p.s, 0) = 0
        ), up AS (
            INSERT INTO memloom_entity_stats AS s (entity_id, namespace, df)
            SELECT g.entity_id, e.namespace, g.df
            FROM (SELECT d.entity_id, sum(d.d)::integer AS df FROM d GROUP BY 1 HAVING sum(d.d) <> 0) g
            JOIN memloom_entities e ON e.id = g.entity_id  -- an entity deleted since has no row to change
            WHERE e.namespace <> ALL (skip)
            ORDER BY g.entity_id
            ON CONFLICT (entity_id) DO UPDATE SET df = s.df + EXCLUDED.df
            RETURNING s.entity_id, s.df
        )
        SELECT array_agg(up.entity_id) INTO z_ent FROM up WHERE up.df <= 0;
        IF z_ent IS NOT NULL THEN
            DELETE FROM memloom_entity_stats s WHERE s.entity_id = ANY (z_ent) AND s.df <= 0;
        END IF;
        DELETE FROM pg_temp.memloom_pending_mentions;
        DELETE FROM pg_temp.memloom_pending_items;
    END IF;  -- (a remember that supersedes nothing has no entity part)

    -- Emptied by hand, not ON COMMIT DELETE ROWS: truncating them at every commit cost more
    -- than the whole remember (10 ms on PostgreSQL 15, the cached plans that read them
    -- replanned each time). Deleted rows of a temporary table are never vacuumed and its
    -- inserts only append, so when they have grown (looked at every 64th commit of the
    -- session, and after a large transaction) they are truncated.
    big := (SELECT count(*) > 5000 FROM pg_temp.memloom_pending_terms);
    commits := coalesce(nullif(current_setting('memloom.stats_commits', true), '')::bigint, 0) + 1;
    PERFORM set_config('memloom.stats_commits', commits::text, false);
    DELETE FROM pg_temp.memloom_pending_terms;
    DELETE FROM pg_temp.memloom_pending_docs;
    DELETE FROM pg_temp.memloom_pending_stale;
    IF (big OR commits % 64 = 0)
       AND pg_relation_size('pg_temp.memloom_pending_terms') + pg_relation_size('pg_temp.memloom_pending_mentions')
       + pg_relation_size('pg_temp.memloom_pending_docs') + pg_relation_size('pg_temp.memloom_pending_items') > 262144 THEN
        TRUNCATE pg_temp.memloom_pending_terms, pg_temp.memloom_pending_docs,
                 pg_temp.memloom_pending_mentions, pg_temp.memloom_pending_items;
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION memloom_stats_commit() IS
'trigger (deferred to commit): applies the transaction''s pending keyword and entity changes to the statistics under the namespaces'' statistics locks, recomputing a namespace without an exact base';

-- The triggers ------------------------------------------------------------------------------
CREATE FUNCTION memloom_items_stats() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- The statement's counted changes, (namespace, tsv, sign): +1 for an active row that
    -- appears, -1 for one that goes; an UPDATE counts only rows whose status, tsv or namespace
    -- moved. Static SQL per event (plans cached for the session: EXECUTE replanned each call,
    -- which a transaction of 500 remembers paid 500 times).
    IF TG_OP = 'INSERT' THEN
        PERFORM 1 FROM memloom_new_items n WHERE n.status = 'active' LIMIT 1;
        IF NOT FOUND THEN RETURN NULL; END IF;
        PERFORM memloom_stats_pending();
        IF current_setting('memloom.stats_bulk', true) = 'on' THEN
            -- A bulk load (an ingest rewriting most of the namespace): summing its lexemes
            -- per transaction costs more than one recompute at the end (memloom_refresh_stats).
            INSERT INTO pg_temp.memloom_pending_stale SELECT DISTINCT n.namespace FROM memloom_new_items n;
            RETURN NULL;
        END IF;
        INSERT INTO pg_temp.memloom_pending_docs (namespace, docs, len)
        SELECT n.namespace, count(*), sum(length(n.tsv)) FROM memloom_new_items n
        WHERE n.status = 'active' GROUP BY 1;
        INSERT INTO pg_temp.memloom_pending_terms (namespace, lexeme, df)
        SELECT n.namespace, l.lexeme, count(*)
        FROM memloom_new_items n CROSS JOIN LATERAL unnest(tsvector_to_array(n.tsv)) AS l(lexeme)
        WHERE n.status = 'active' GROUP BY 1, 2;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM 1 FROM memloom_old_items o LIMIT 1;
        IF NOT FOUND THEN RETURN NULL; END IF;  -- (ingest deletes a new file's no chunks)
        PERFORM memloom_stats_pending();
        IF current_setting('memloom.stats_bulk', true) = 'on' THEN
            INSERT INTO pg_temp.memloom_pending_stale SELECT DISTINCT o.namespace FROM memloom_old_items o;
            RETURN NULL;
        END IF;
        INSERT INTO pg_temp.memloom_pending_docs (namespace, docs, len)
        SELECT o.namespace, -count(*), -sum(length(o.tsv)) FROM memloom_old_items o
        WHERE o.status = 'active' GROUP BY 1;
        INSERT INTO pg_temp.memloom_pending_terms (namespace, lexeme, df)
        SELECT o.namespace, l.lexeme, -count(*)
        FROM memloom_old_items o CROSS JOIN LATERAL unnest(tsvector_to_array(o.tsv)) AS l(lexeme)
        WHERE o.status = 'active' GROUP BY 1, 2;
        -- Deleted items that were not active: their mentions, deleted with them, counted nothing.
        INSERT INTO pg_temp.memloom_pending_items (item_id, namespace, was_active)
        SELECT o.id, o.namespace, false FROM memloom_old_items o WHERE o.status <> 'active';
    ELSE
        -- Counted, not LIMIT 1: with a limit the planner joined the two transition tables by a
        -- nested loop (n x n comparisons when nothing matches: 0.28 s for an UPDATE of 500 rows,
        -- an index batch's indexed_at or a bulk remember's superseded versions), without by a hash.
        PERFORM 1 FROM (SELECT count(*) AS c FROM memloom_old_items o JOIN memloom_new_items n ON n.id = o.id
                        WHERE o.status <> n.status OR o.tsv <> n.tsv OR o.namespace <> n.namespace) x
        WHERE x.c > 0;
        IF NOT FOUND THEN
            RETURN NULL;  -- nothing counted changed (e.g. the indexer's indexed_at updates)
        END IF;
        PERFORM memloom_stats_pending();
        IF current_setting('memloom.stats_bulk', true) = 'on' THEN
            INSERT INTO pg_temp.memloom_pending_stale
            SELECT o.namespace FROM memloom_old_items o UNION SELECT n.namespace FROM memloom_new_items n;
            RETURN NULL;
        END IF;
        WITH c AS (
            SELECT x.namespace, x.tsv, x.sign
            FROM memloom_old_items o JOIN memloom_new_items n ON n.id = o.id
            CROSS JOIN LATERAL (VALUES (o.namespace, o.tsv, -1, o.status = 'active'),
                                       (n.namespace, n.tsv, 1, n.status = 'active')) AS x(namespace, tsv, sign, counted)
            WHERE x.counted AND (o.status <> n.status OR o.tsv <> n.tsv OR o.namespace <> n.namespace)
        ), docs AS (
            INSERT INTO pg_temp.memloom_pending_docs (namespace, docs, len)
            SELECT c.namespace, sum(c.sign), sum(c.sign * length(c.tsv)) FROM c GROUP BY 1
        )
        INSERT INTO pg_temp.memloom_pending_terms (namespace, lexeme, df)
        SELECT c.namespace, l.lexeme, sum(c.sign)
        FROM c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS l(lexeme)
        GROUP BY 1, 2 HAVING sum(c.sign) <> 0;
        -- What the entity frequencies need at commit: status changes between active and not.
        INSERT INTO pg_temp.memloom_pending_items (item_id, namespace, was_active)
        SELECT o.id, o.namespace, o.status = 'active'
        FROM memloom_old_items o JOIN memloom_new_items n ON n.id = o.id
        WHERE (o.status = 'active') <> (n.status = 'active');
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION memloom_items_stats() IS
'trigger (statement level, transition tables): records a statement''s inserted, deleted and updated items as pending keyword statistics changes (and status changes for the entity frequencies), applied at commit';

CREATE FUNCTION memloom_mentions_stats() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM 1 FROM memloom_new_mentions n LIMIT 1;
    ELSE
        PERFORM 1 FROM memloom_old_mentions o LIMIT 1;
    END IF;
    IF NOT FOUND THEN RETURN NULL; END IF;  -- (the indexer clears a new item's no mentions)
    PERFORM memloom_stats_pending();
    IF current_setting('memloom.stats_bulk', true) = 'on' THEN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            INSERT INTO pg_temp.memloom_pending_stale
            SELECT DISTINCT e.namespace FROM memloom_old_mentions o JOIN memloom_entities e ON e.id = o.entity_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO pg_temp.memloom_pending_stale
            SELECT DISTINCT e.namespace FROM memloom_new_mentions n JOIN memloom_entities e ON e.id = n.entity_id;
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO pg_temp.memloom_pending_mentions (entity_id, item_id, sign)
        SELECT o.entity_id, o.item_id, -1 FROM memloom_old_mentions o;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO pg_temp.memloom_pending_mentions (entity_id, item_id, sign)
        SELECT n.entity_id, n.item_id, 1 FROM memloom_new_mentions n;
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION memloom_mentions_stats() IS
'trigger (statement level, transition tables): records a statement''s inserted and deleted mentions as pending entity frequency changes, applied at commit';

CREATE TRIGGER memloom_items_stats_insert AFTER INSERT ON memloom_items
    REFERENCING NEW TABLE AS memloom_new_items
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_items_stats();
CREATE TRIGGER memloom_items_stats_delete AFTER DELETE ON memloom_items
    REFERENCING OLD TABLE AS memloom_old_items
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_items_stats();
CREATE TRIGGER memloom_items_stats_update AFTER UPDATE ON memloom_items
    REFERENCING OLD TABLE AS memloom_old_items NEW TABLE AS memloom_new_items
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_items_stats();

CREATE TRIGGER memloom_mentions_stats_insert AFTER INSERT ON memloom_mentions
    REFERENCING NEW TABLE AS memloom_new_mentions
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_mentions_stats();
CREATE TRIGGER memloom_mentions_stats_delete AFTER DELETE ON memloom_mentions
    REFERENCING OLD TABLE AS memloom_old_mentions
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_mentions_stats();
CREATE TRIGGER memloom_mentions_stats_update AFTER UPDATE ON memloom_mentions
    REFERENCING OLD TABLE AS memloom_old_mentions NEW TABLE AS memloom_new_mentions
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_mentions_stats();
