-- memloom schema 25: memloom_defer_vector_index(), so that a bulk write into a new server store
-- builds the HNSW indexes once at its end instead of inserting every row into them: the Node
-- docs' first ingest into a server store spent 1.7 to 2.1 s of its 3.4 s write in HNSW inserts,
-- against about 0.3 s for one build over the same rows. It drops an index only on a table with no page yet,
-- that the caller owns and can lock at once; the npm store calls it before an ingest or an index
-- run on a server and memloom_ensure_vector_index after (also when the write fails). No table
-- changes.

CREATE FUNCTION memloom_defer_vector_index() RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    r       record;
    dropped text[] := '{}';
BEGIN
    FOR r IN SELECT v.tab, v.idx FROM (VALUES ('memloom_items', 'memloom_items_embedding'),
                                              ('memloom_entities', 'memloom_entities_embedding')) AS v(tab, idx) LOOP
        CONTINUE WHEN to_regclass(r.idx) IS NULL OR pg_relation_size(r.tab) > 0;
        BEGIN
            EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE NOWAIT', r.tab);
            IF pg_relation_size(r.tab) = 0 THEN
                EXECUTE format('DROP INDEX %I', r.idx);
                dropped := dropped || r.idx;
            END IF;
        EXCEPTION WHEN insufficient_privilege OR lock_not_available THEN
            NULL;  -- not the owner (a tenant role), or the table is in use: the index stays
        END;
    END LOOP;
    RETURN dropped;
END
$$;
COMMENT ON FUNCTION memloom_defer_vector_index() IS
'before a bulk write: drops the HNSW index of memloom_items and of memloom_entities when the table has no page yet (a new store), the caller owns it and can lock it at once; returns the indexes dropped, which the caller rebuilds with memloom_ensure_vector_index after its write';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 25);
