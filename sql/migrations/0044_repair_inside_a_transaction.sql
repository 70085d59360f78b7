-- memloom schema 44: a statistics repair inside a writing transaction counts each change once.
--
-- The writes keep the keyword and entity statistics exact by recording each statement's change
-- in the session's pending tables and applying their sum at commit (sql/0009). A recompute
-- (memloom_refresh_stats, memloom_recompute_stats) inside a transaction that had already
-- written to the namespace recounted those changes from the rows, and the commit then added
-- them again: a namespace's document count, total length and document frequencies counted the
-- transaction's writes twice (found by a test that loaded 12,000 items and refreshed in one
-- transaction: doc_count 17,840 for 8,920 items). memloom_recompute_stats now drops this
-- transaction's pending changes of the namespace it recounts; later changes of the transaction
-- record their own. A repair in a transaction of its own (every caller in memloom: the CLI's
-- import and ingest, the bench's load) was and is exact. Stores whose statistics a repair
-- inside a transaction doubled get them right at the next memloom_refresh_stats.

CREATE OR REPLACE FUNCTION memloom_recompute_stats(ns text) RETURNS void
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

UPDATE memloom_meta SET schema_version = greatest(schema_version, 44);
