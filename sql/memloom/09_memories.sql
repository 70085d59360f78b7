-- memloom, the current definition, part 9 of 12: memories. remember (a new version of a key,
-- superseding the active one) and forget (a key's every version, or one item by id), the one
-- implementation every client calls (npm store and CLI, MCP, the edge worker through
-- crates/memloom-sql).
--
-- Lock order, the same for every write of a key: the key's advisory lock
-- (hashtextextended(ns || chr(31) || key, 7)), then its rows, then at commit the namespace's
-- statistics lock (04_statistics.sql). Forget's DELETE runs after the advisory lock is
-- granted, so its snapshot contains every version a writer of the key committed before: it
-- deletes the whole chain, never a row a surviving version still points at.

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

CREATE FUNCTION memloom_forget(
    ns            text,
    key           text    DEFAULT NULL,
    item_id       bigint  DEFAULT NULL,
    memories_only boolean DEFAULT true
) RETURNS TABLE (items integer, mentions integer, entities integer, not_a_memory boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    k        text := memloom_forget.key;
    the_kind text;
    ids      bigint[];
    ents     bigint[];
    n_items  integer := 0;
    n_ment   integer := 0;
    n_ent    integer := 0;
BEGIN
    IF ns IS NULL OR (k IS NULL) = (item_id IS NULL) THEN
        RAISE EXCEPTION 'memloom_forget needs a namespace and exactly one of key or item_id'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF k = '' THEN
        RAISE EXCEPTION 'a memory key cannot be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    IF item_id IS NOT NULL THEN
        -- Resolve the id's key first (unlocked: a memory's key never changes), then lock the
        -- key as remember does and read the row again: a writer may have deleted it meanwhile.
        SELECT i.kind, i.key INTO the_kind, k FROM memloom_items i
        WHERE i.namespace = ns AND i.id = item_id;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 0, 0, 0, false;
            RETURN;
        END IF;
        IF the_kind <> 'memory' AND memories_only THEN
            RETURN QUERY SELECT 0, 0, 0, true;
            RETURN;
        END IF;
        IF k IS NOT NULL THEN
            PERFORM pg_advisory_xact_lock(hashtextextended(ns || chr(31) || k, 7));
        END IF;
        SELECT array_agg(i.id) INTO ids FROM (
            SELECT i.id FROM memloom_items i
            WHERE i.namespace = ns AND i.id = item_id
            FOR UPDATE) i;
        IF ids IS NULL THEN
            RETURN QUERY SELECT 0, 0, 0, false;
            RETURN;
        END IF;
        -- The versions on either side of it are linked to each other instead, so the chain
        -- stays whole (every supersedes / superseded_by names an existing row). The active
        -- version stays active; forgetting the active one leaves no active version (the
        -- earlier ones stay superseded: forget never brings back older content).
        UPDATE memloom_items n SET supersedes = d.supersedes
          FROM memloom_items d
         WHERE d.id = item_id AND n.namespace = ns AND n.supersedes = item_id;
        UPDATE memloom_items p SET superseded_by = d.superseded_by
          FROM memloom_items d
         WHERE d.id = item_id AND p.namespace = ns AND p.superseded_by = item_id;
    ELSE
        PERFORM pg_advisory_xact_lock(hashtextextended(ns || chr(31) || k, 7));
        -- Under the lock, in a snapshot taken after it: every committed version of the key.
        SELECT array_agg(i.id ORDER BY i.id) INTO ids FROM (
            SELECT i.id FROM memloom_items i
            WHERE i.namespace = ns AND i.kind = 'memory' AND i.key = k
            ORDER BY i.id
            FOR UPDATE) i;
        IF ids IS NULL THEN
            RETURN QUERY SELECT 0, 0, 0, false;
            RETURN;
        END IF;
        -- A version of the key only links to others of it; a row outside the set that points
        -- in (written by hand) is unlinked, so the DELETE cannot violate the foreign keys.
        UPDATE memloom_items o SET supersedes = NULL
         WHERE o.supersedes = ANY (ids) AND NOT (o.id = ANY (ids));
        UPDATE memloom_items o SET superseded_by = NULL
         WHERE o.superseded_by = ANY (ids) AND NOT (o.id = ANY (ids));
    END IF;

    -- Mentions first (counted, and their entities collected), then the items (the chain in
    -- one statement: the foreign keys are checked at its end), then the entities nothing
    -- mentions any more. The statistics triggers (sql/0009) take each statement's change.
    WITH gone AS (
        DELETE FROM memloom_mentions m WHERE m.item_id = ANY (ids) RETURNING m.entity_id
    )
    SELECT count(*)::integer, array_agg(DISTINCT gone.entity_id) INTO n_ment, ents FROM gone;
    DELETE FROM memloom_items i WHERE i.id = ANY (ids);
    GET DIAGNOSTICS n_items = ROW_COUNT;
    IF ents IS NOT NULL THEN
        DELETE FROM memloom_entities e
         WHERE e.id = ANY (ents) AND e.namespace = ns
           AND NOT EXISTS (SELECT 1 FROM memloom_mentions m WHERE m.entity_id = e.id);
        GET DIAGNOSTICS n_ent = ROW_COUNT;
    END IF;
    RETURN QUERY SELECT n_items, n_ment, n_ent, false;
END
$$;
COMMENT ON FUNCTION memloom_forget(text, text, bigint, boolean) IS
'forgets a memory key (every version) or one item by id in namespace ns, under the key''s advisory lock (the lock memloom_remember takes, so writers of a key queue in one order): deletes the items, their mentions and the entities no longer mentioned, keeping the other versions'' links valid; returns the counts removed (not_a_memory: the id names a document chunk and memories_only is set, nothing deleted)';

-- Forgetting a whole namespace (docs/SECURITY.md, "Erasure").
CREATE FUNCTION memloom_forget_namespace(ns text)
RETURNS TABLE (items integer, mentions integer, entities integer, statistics integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    k       text;
    n_items integer := 0;
    n_ment  integer := 0;
    n_ent   integer := 0;
    n_stat  integer := 0;
    n       integer;
    prev_bulk text;
BEGIN
    IF ns IS NULL OR ns = '' THEN
        RAISE EXCEPTION 'memloom_forget_namespace needs a namespace' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Only the caller's bound namespace (a tenant role's other namespaces are out of reach
    -- anyway, row-level security would just delete nothing: say so instead).
    PERFORM memloom_assert_namespace(ns);
    -- Every key's advisory lock, in key order, as memloom_remember and memloom_forget take
    -- one: a concurrent remember of a key either committed before (its rows are deleted
    -- below, in snapshots taken after the locks) or starts after this commits.
    FOR k IN SELECT DISTINCT i.key FROM memloom_items i
             WHERE i.namespace = ns AND i.key IS NOT NULL ORDER BY i.key LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(ns || chr(31) || k, 7));
    END LOOP;
    -- The statistics go with the namespace: deleted here, while the triggers only mark it (a
    -- bulk write, sql/0009) instead of recording every lexeme it held; the commit then finds
    -- no statistics row to mark. The caller's setting is restored for the rest of its
    -- transaction.
    prev_bulk := current_setting('memloom.stats_bulk', true);
    PERFORM set_config('memloom.stats_bulk', 'on', true);
    DELETE FROM memloom_term_stats s WHERE s.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    n_stat := n_stat + n;
    DELETE FROM memloom_entity_stats s WHERE s.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    n_stat := n_stat + n;
    DELETE FROM memloom_namespace_stats s WHERE s.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    n_stat := n_stat + n;
    DELETE FROM memloom_mentions m WHERE m.namespace = ns;
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    DELETE FROM memloom_items i WHERE i.namespace = ns;  -- the version chains in one statement
    GET DIAGNOSTICS n_items = ROW_COUNT;
    DELETE FROM memloom_entities e WHERE e.namespace = ns;
    GET DIAGNOSTICS n_ent = ROW_COUNT;
    PERFORM set_config('memloom.stats_bulk', coalesce(prev_bulk, ''), true);
    -- The planner's statistics sample values and lexemes of the pool (pg_statistic, most
    -- common elements of tsv): sampled again here, in this transaction's snapshot, so they
    -- hold nothing of the namespace once it commits. Only the owner may ANALYZE; under a
    -- tenant role the next ANALYZE (autovacuum) does it.
    IF pg_catalog.pg_has_role(current_user,
           (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = 'memloom_items'::regclass), 'USAGE')
       OR coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) THEN
        ANALYZE memloom_items, memloom_entities, memloom_mentions;
    END IF;
    RETURN QUERY SELECT n_items, n_ment, n_ent, n_stat;
END
$$;
COMMENT ON FUNCTION memloom_forget_namespace(text) IS
'forgets namespace ns entirely in one transaction: its items (every version), mentions, entities and keyword and entity statistics, under every key''s advisory lock, then ANALYZEs the pool tables when the caller owns them (the planner''s samples); returns the rows removed (statistics: memloom_term_stats, memloom_entity_stats and memloom_namespace_stats rows). Only the caller''s bound namespace (memloom_assert_namespace). The grants (memloom_namespace_grants) stay: revoke them with memloom_revoke_namespace';
