-- memloom, the current definition, part 9: memories. remember (a new version of a key,
-- superseding the active one; several in one call, memloom_remember_many; an import's batch,
-- memloom_remember_batch) and forget (a key's every version, one item by id, or a whole
-- namespace), the one implementation every client calls (npm store and CLI, MCP, the edge
-- worker through crates/memloom-sql).
--
-- Lock order, the same for every write of a key (memloom_lock_keys): the namespace's key lock
-- in shared mode, then the keys' advisory locks in key order
-- (hashtextextended(ns || chr(31) || key, 7)), then their rows, then at commit the namespace's
-- statistics lock (04_statistics.sql). Forget's DELETE runs after the advisory lock is
-- granted, so its snapshot contains every version a writer of the key committed before: it
-- deletes the whole chain, never a row a surviving version still points at. Forgetting a
-- namespace takes the namespace's key lock exclusively instead: one lock, not one per key
-- (500k keys ran out of shared memory: max_locks_per_transaction).

CREATE FUNCTION memloom_lock_keys(ns text, keys text[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF keys IS NULL THEN
        -- Every key of the namespace: waits for the writers holding it shared to finish, and
        -- new ones wait for this transaction.
        PERFORM pg_advisory_xact_lock(hashtextextended('memloom keys ' || ns, 0));
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('memloom keys ' || ns, 0));
    PERFORM pg_advisory_xact_lock(hashtextextended(ns || chr(31) || k, 7))
       FROM (SELECT DISTINCT k FROM unnest(keys) AS k WHERE k IS NOT NULL) d
      ORDER BY k;
END
$$;
COMMENT ON FUNCTION memloom_lock_keys(text, text[]) IS
'takes the locks a write of memory keys holds to the end of its transaction, in the one order every writer uses: the namespace''s key lock shared, then each distinct key''s advisory lock in key order (memloom_remember, memloom_remember_many, memloom_remember_batch, memloom_forget, memloom_memory_states); keys NULL: the namespace''s key lock exclusively, which stands for every key (memloom_forget_namespace)';

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
        PERFORM memloom_lock_keys(ns, ARRAY[key]);
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

-- Several memories in one call (Store#rememberMany): exactly what one memloom_remember call per
-- record in array order gives in one transaction (the same ids, versions, intervals and
-- unchanged-content answers, the same errors), as ONE statement. Through a PL/Proxy front each
-- routed call commits on its own partition (docs/SCALING.md), so a batch of separate calls was
-- not atomic there; one call is, on one server and through the proxy alike. Not the import
-- (memloom_remember_batch): no seq, no skips, and the caller gets each record's id and version.
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

-- A batch of memories in one call (memloom remember --file, Store#importMemories): what the
-- records would give one memloom_remember call each, in their order, with an import's
-- resumability, in a few set-based statements instead of one call per record.
CREATE FUNCTION memloom_remember_batch(
    ns         text,
    keys       text[],
    seqs       double precision[],
    contents   text[],
    embeddings vector[],
    metadata   jsonb[]       DEFAULT NULL,
    event_at   timestamptz[] DEFAULT NULL
) RETURNS TABLE (written integer, skipped integer, superseding integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    n        integer := coalesce(cardinality(contents), 0);
    dims     integer;
    keep     boolean[];
    r        record;
    cur_key  text;
    cur_seq  double precision;
    cur_text text;
    t        timestamptz;
    w_o      bigint[];
    w_key    text[];
    w_version integer[];
    w_id     bigint[];
    w_sup    bigint[];
    w_sup_by bigint[];
    w_t      timestamptz[];
    w_t_to   timestamptz[];
    w_old    bigint[];
    n_w      integer;
    n_sup    integer;
BEGIN
    IF ns IS NULL OR contents IS NULL THEN
        RAISE EXCEPTION 'memloom_remember_batch needs a namespace and the contents' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF coalesce(cardinality(keys), 0) <> n OR coalesce(cardinality(embeddings), 0) <> n
       OR (seqs IS NOT NULL AND cardinality(seqs) <> n) OR (metadata IS NOT NULL AND cardinality(metadata) <> n)
       OR (event_at IS NOT NULL AND cardinality(event_at) <> n) THEN
        RAISE EXCEPTION 'memloom_remember_batch: expected one key, embedding (and seq, metadata, event time when given) per content (% contents: % keys, % embeddings, % seqs, % metadata, % event times)',
            n, cardinality(keys), cardinality(embeddings), cardinality(seqs), cardinality(metadata), cardinality(event_at)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF n = 0 THEN
        RETURN QUERY SELECT 0, 0, 0;
        RETURN;
    END IF;
    IF array_position(contents, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'memloom_remember_batch: record % has no content', array_position(contents, NULL)
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(keys) AS k WHERE k = '') THEN
        RAISE EXCEPTION 'a memory key cannot be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Every vector as memloom_remember checks one (the first bad one names the problem).
    PERFORM memloom_check_vector(embeddings[1]);
    SELECT m.embedder_dims INTO dims FROM memloom_meta m;
    PERFORM memloom_check_vector(v)
       FROM (SELECT v FROM unnest(embeddings) AS v WHERE v IS NULL OR vector_dims(v) <> dims LIMIT 1) bad;

    PERFORM memloom_lock_keys(ns, keys);

    -- Which records are written, as the per-record import decided it, in file order per key:
    -- a keyed record is skipped when its seq (NULL: 0) is at or below the newest seq stored or
    -- written for its key (metadata seq: imported before), or its content is the key's active
    -- content at that point (unchanged). Under the keys' locks, so the read of the stored
    -- state (memloom_memory_states, 14_reads.sql) sees every version committed before.
    keep := array_fill(true, ARRAY[n]);
    FOR r IN
        SELECT b.o, b.k, coalesce(b.s, 0) AS s, b.c, st.seq AS st_seq, st.active AS st_active
          FROM unnest(keys, seqs, contents) WITH ORDINALITY AS b(k, s, c, o)
          LEFT JOIN memloom_memory_states(ns, keys) st ON st.key = b.k
         WHERE b.k IS NOT NULL
         ORDER BY b.k, b.o
    LOOP
        IF r.k IS DISTINCT FROM cur_key THEN
            cur_key := r.k;
            cur_seq := r.st_seq;
            cur_text := r.st_active;
        END IF;
        IF (cur_seq IS NOT NULL AND r.s <= cur_seq) OR cur_text = r.c THEN
            keep[r.o] := false;
        ELSE
            cur_seq := r.s;
            cur_text := r.c;
        END IF;
    END LOOP;

    -- The instant the batch's versions become the belief: the clock once the keys' locks are
    -- held, in milliseconds (memloom_remember's rule), never before the version a key's first
    -- new version supersedes. A key's later versions within one batch follow 1 ms apart (each
    -- version holds for an instant of its own, so as_of can name it, as one remember per
    -- record gave).
    t := date_trunc('milliseconds', clock_timestamp());
    -- The written records in order, each with its id (drawn in the records' order: recall
    -- breaks score ties by id), key, version, links (the version before it: the key's previous
    -- record here, else its stored active version; the one after it, here), valid_from, and
    -- for a key's first record the stored active version it supersedes. Each key's stored
    -- state by an index lookup (as memloom_memory_states reads it).
    SELECT array_agg(y.o ORDER BY y.o), array_agg(y.k ORDER BY y.o), array_agg(y.v ORDER BY y.o),
           array_agg(y.id ORDER BY y.o), array_agg(y.sup ORDER BY y.o), array_agg(y.sup_by ORDER BY y.o),
           array_agg(y.t ORDER BY y.o), array_agg(y.t_to ORDER BY y.o), array_agg(y.old ORDER BY y.o)
      INTO w_o, w_key, w_version, w_id, w_sup, w_sup_by, w_t, w_t_to, w_old
      FROM (SELECT z.*, CASE WHEN z.k IS NOT NULL THEN lead(z.t) OVER (PARTITION BY z.k ORDER BY z.o) END AS t_to
      FROM (SELECT q.o, q.k, q.id,
                   CASE WHEN q.k IS NULL THEN 1 ELSE coalesce(q.max_version, 0) + row_number() OVER w END::integer AS v,
                   CASE WHEN q.k IS NOT NULL THEN coalesce(lag(q.id) OVER w, q.active_id) END AS sup,
                   CASE WHEN q.k IS NOT NULL THEN lead(q.id) OVER w END AS sup_by,
                   CASE WHEN q.k IS NOT NULL AND row_number() OVER w = 1 THEN q.active_id END AS old,
                   CASE WHEN q.k IS NULL THEN t
                        ELSE greatest(t, q.active_from) + (row_number() OVER w - 1) * interval '1 millisecond' END AS t
              FROM (SELECT p.*, nextval(pg_get_serial_sequence('memloom_items', 'id')) AS id
                      FROM (SELECT b.o, b.k, st.max_version, st.active_id, st.active_from
                              FROM unnest(keys) WITH ORDINALITY AS b(k, o)
                              LEFT JOIN LATERAL (
                                  SELECT max(i.version) AS max_version,
                                         max(i.id) FILTER (WHERE i.status = 'active') AS active_id,
                                         max(i.valid_from) FILTER (WHERE i.status = 'active') AS active_from
                                    FROM memloom_items i
                                   WHERE i.namespace = ns AND i.key = b.k) st ON b.k IS NOT NULL
                             WHERE keep[b.o]
                             ORDER BY b.o) p) q
            WINDOW w AS (PARTITION BY q.k ORDER BY q.o)) z) y;
    IF w_o IS NULL THEN
        RETURN QUERY SELECT 0, n, 0;
        RETURN;
    END IF;

    -- One statement: the stored active versions superseded (their intervals end where their
    -- successors' begin, linked to them), then the new versions, all of a key's but its last
    -- already superseded. The UPDATE runs to completion before the first row is inserted (the
    -- INSERT's filter is an InitPlan reading it), so the one-active-version index never sees
    -- two; the foreign keys are checked at the statement's end, when every row exists. The
    -- statistics triggers (04_statistics.sql) take each part as a whole.
    WITH old AS (
        UPDATE memloom_items i
           SET status = 'superseded', valid_to = r.t, updated_at = now(), superseded_by = r.id
          FROM unnest(w_old, w_id, w_t) AS r(old, id, t)
         WHERE i.id = ANY (w_old) AND i.id = r.old  -- (the ANY: an index scan, not a scan of the pool)
        RETURNING i.id
    )
    INSERT INTO memloom_items (id, namespace, kind, key, version, content, status, supersedes, superseded_by,
                               embedding, metadata, valid_from, valid_to, event_at)
    OVERRIDING SYSTEM VALUE
    SELECT r.id, ns, 'memory', r.k, r.v, contents[r.o],
           CASE WHEN r.sup_by IS NULL THEN 'active' ELSE 'superseded' END, r.sup, r.sup_by, embeddings[r.o],
           CASE WHEN r.k IS NULL THEN coalesce(metadata[r.o], '{}')
                ELSE coalesce(metadata[r.o], '{}') || jsonb_build_object('seq', coalesce(seqs[r.o], 0)) END,
           r.t, CASE WHEN r.sup_by IS NULL THEN NULL ELSE r.t_to END, event_at[r.o]
      FROM unnest(w_o, w_key, w_version, w_id, w_sup, w_sup_by, w_t, w_t_to) AS r(o, k, v, id, sup, sup_by, t, t_to)
     WHERE (SELECT count(*) FROM old) >= 0
     ORDER BY r.o;
    GET DIAGNOSTICS n_w = ROW_COUNT;
    n_sup := (SELECT count(*)::integer FROM unnest(w_version) AS v WHERE v > 1);
    RETURN QUERY SELECT n_w, n - n_w, n_sup;
END
$$;
COMMENT ON FUNCTION memloom_remember_batch(text, text[], double precision[], text[], vector[], jsonb[], timestamptz[]) IS
'remembers a batch of memories (keys[i] NULL: unkeyed) in one call, as one memloom_remember call per record in array order would, under the keys'' locks (memloom_lock_keys): a key''s records become its next versions, the last active, each superseding the one before (valid from the batch''s instant, the clock once the locks are held, in milliseconds; a key''s later versions in the batch 1 ms apart; each interval closed where the next begins). Resumable like an import: a keyed record whose seq (NULL: 0) is at or below the newest seq stored or written for its key, or whose content is the key''s active content, is skipped; a written keyed record''s metadata gains {"seq": seq}. The statistics follow by the triggers. Returns the records written, those skipped and the written ones that are a version above 1.';

-- A key's versions with their intervals, oldest first (docs/TIME.md): what `history` shows in
-- every client.
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
            PERFORM memloom_lock_keys(ns, ARRAY[k]);
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
        PERFORM memloom_lock_keys(ns, ARRAY[k]);
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
    -- Every key at once: the namespace's key lock exclusively (memloom_lock_keys), which every
    -- writer of a key holds shared: a concurrent remember of a key either committed before
    -- (its rows are deleted below, in snapshots taken after the lock) or starts after this
    -- commits. One lock whatever the number of keys.
    PERFORM memloom_lock_keys(ns, NULL);
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
'forgets namespace ns entirely in one transaction: its items (every version), mentions, entities and keyword and entity statistics, under the namespace''s key lock taken exclusively (memloom_lock_keys: one lock, which every writer of a key holds shared), then ANALYZEs the pool tables when the caller owns them (the planner''s samples); returns the rows removed (statistics: memloom_term_stats, memloom_entity_stats and memloom_namespace_stats rows). Only the caller''s bound namespace (memloom_assert_namespace). The grants (memloom_namespace_grants) stay: revoke them with memloom_revoke_namespace';
