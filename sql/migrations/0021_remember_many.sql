-- memloom schema 21: several memories in one call (issue 18). memloom_remember_many does what
-- one memloom_remember call per record in array order did in Store#rememberMany's transaction
-- (the same ids, versions, intervals and errors), as one statement: through a PL/Proxy front,
-- where each routed call commits on its own partition, the batch is now atomic too (a failing
-- record writes none of it). It takes every key's lock first, in key order. No table changes.
CREATE FUNCTION memloom_remember_many(
    ns         text,
    keys       text[],
    contents   text[],
    embeddings vector[],
    metadata   jsonb[]       DEFAULT NULL,
    event_at   timestamptz[] DEFAULT NULL
) RETURNS TABLE (ord integer, id bigint, version integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    n integer := coalesce(cardinality(contents), 0);
BEGIN
    IF ns IS NULL OR contents IS NULL THEN
        RAISE EXCEPTION 'memloom_remember_many needs a namespace and the contents' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF (keys IS NOT NULL AND cardinality(keys) <> n) OR coalesce(cardinality(embeddings), 0) <> n
       OR (metadata IS NOT NULL AND cardinality(metadata) <> n) OR (event_at IS NOT NULL AND cardinality(event_at) <> n) THEN
        RAISE EXCEPTION 'memloom_remember_many: expected one embedding (and key, metadata, event time when given) per content (% contents: % keys, % embeddings, % metadata, % event times)',
            n, coalesce(cardinality(keys)::text, 'no'), coalesce(cardinality(embeddings)::text, 'no'),
            coalesce(cardinality(metadata)::text, 'no'), coalesce(cardinality(event_at)::text, 'no')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Every key's lock before the first write, in the one order (memloom_lock_keys), not each
    -- as its record comes: two batches naming the same keys in different orders queue instead
    -- of deadlocking. memloom_remember takes them again (advisory locks are re-entrant).
    PERFORM memloom_lock_keys(ns, coalesce(keys, '{}'));
    FOR i IN 1 .. n LOOP
        RETURN QUERY SELECT i, r.id, r.version
          FROM memloom_remember(ns, keys[i], contents[i], embeddings[i], metadata[i], event_at[i]) AS r;
    END LOOP;
END
$$;
COMMENT ON FUNCTION memloom_remember_many(text, text[], text[], vector[], jsonb[], timestamptz[]) IS
'remembers several memories in one call, as one memloom_remember call per record in array order in one transaction would (keys[i] NULL or keys NULL: unkeyed; metadata[i] NULL: {}; event_at[i] NULL: none), after taking every key''s lock in key order (memloom_lock_keys); one statement, so a failing record writes none of the batch, through a PL/Proxy front too. Returns each record''s ord (1-based position), id and version, in input order.';

COMMENT ON FUNCTION memloom_lock_keys(text, text[]) IS
'takes the locks a write of memory keys holds to the end of its transaction, in the one order every writer uses: the namespace''s key lock shared, then each distinct key''s advisory lock in key order (memloom_remember, memloom_remember_many, memloom_remember_batch, memloom_forget, memloom_memory_states); keys NULL: the namespace''s key lock exclusively, which stands for every key (memloom_forget_namespace)';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 21);
