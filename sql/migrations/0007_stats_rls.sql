-- memloom schema 7: the keyword statistics are per tenant too.
-- 0005 bound the pool tables to the session's memloom.namespace; the BM25 statistics
-- (memloom_term_stats: document frequency per word; memloom_namespace_stats: document count and
-- average length) were still readable across namespaces by raw SQL under an application role,
-- which told one tenant which words another's documents use. The same policy now applies to
-- them: memloom_refresh_stats(ns) and the keyword arm only ever touch the session's namespace.

ALTER TABLE memloom_term_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE memloom_term_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY memloom_term_stats_namespace ON memloom_term_stats
    USING (namespace = memloom_current_namespace())
    WITH CHECK (namespace = memloom_current_namespace());
COMMENT ON POLICY memloom_term_stats_namespace ON memloom_term_stats IS
'a session sees and writes only the keyword statistics of its memloom.namespace';

ALTER TABLE memloom_namespace_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE memloom_namespace_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY memloom_namespace_stats_namespace ON memloom_namespace_stats
    USING (namespace = memloom_current_namespace())
    WITH CHECK (namespace = memloom_current_namespace());
COMMENT ON POLICY memloom_namespace_stats_namespace ON memloom_namespace_stats IS
'a session sees and writes only the document count and length of its memloom.namespace';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 7);
