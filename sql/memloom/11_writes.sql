-- memloom, the current definition, part 11: the write path's batches. A batch of files'
-- chunk replacement (memloom_replace_chunks) and an entity index batch (memloom_index_batch,
-- memloom_prune_index) as SQL functions, so every client writes them the same way, in one
-- statement per batch, under one lock discipline: the advisory lock per (namespace, root,
-- source), taken for a batch in key order before any row is touched, so two batches that share
-- files cannot deadlock and concurrent ingests of one folder never store a file's chunks twice.
-- The statistics follow by the triggers of 04_statistics.sql; `bulk` sets memloom.stats_bulk
-- for the transaction (the caller then runs memloom_refresh_stats at the end of its load).

CREATE FUNCTION memloom_replace_chunks(
    ns          text,
    root        text,
    sources     text[],
    file_hashes text[],
    chunk_files integer[],
    breadcrumbs text[],
    contents    text[],
    embeddings  vector[],
    bulk        boolean DEFAULT false
) RETURNS TABLE (deleted integer, inserted integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_key bigint;
    n_del    integer;
    n_ins    integer;
    n        integer := coalesce(cardinality(contents), 0);
BEGIN
    IF ns IS NULL OR root IS NULL OR sources IS NULL THEN
        RAISE EXCEPTION 'memloom_replace_chunks needs a namespace, a root and the sources'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(file_hashes) IS DISTINCT FROM cardinality(sources)
       OR coalesce(cardinality(chunk_files), 0) <> n OR coalesce(cardinality(breadcrumbs), 0) <> n
       OR coalesce(cardinality(embeddings), 0) <> n THEN
        RAISE EXCEPTION 'memloom_replace_chunks: expected one file hash per source (% sources, % hashes) and one file, breadcrumb and embedding per chunk (% chunks: % files, % breadcrumbs, % embeddings)',
            cardinality(sources), cardinality(file_hashes), n, cardinality(chunk_files),
            cardinality(breadcrumbs), cardinality(embeddings)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(chunk_files) f WHERE f IS NULL OR f < 1 OR f > cardinality(sources)) THEN
        RAISE EXCEPTION 'memloom_replace_chunks: every chunk_files entry must be a 1-based index into sources (1..%)', cardinality(sources)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF bulk THEN
        PERFORM set_config('memloom.stats_bulk', 'on', true);
    END IF;
    -- The files' locks, in key order (no deadlock between batches that share files).
    FOR lock_key IN
        SELECT DISTINCT hashtextextended('memloom ingest ' || ns || ' ' || root || ' ' || s, 0) AS k
        FROM unnest(sources) AS s ORDER BY k
    LOOP
        PERFORM pg_advisory_xact_lock(lock_key);
    END LOOP;
    DELETE FROM memloom_items i
    WHERE i.namespace = ns AND i.kind = 'chunk' AND i.metadata->>'root' = root AND i.source = ANY (sources);
    GET DIAGNOSTICS n_del = ROW_COUNT;
    INSERT INTO memloom_items (namespace, kind, source, breadcrumb, content, embedding, metadata)
    SELECT ns, 'chunk', sources[t.f], t.b, t.c, t.e,
           jsonb_build_object('root', root, 'fileHash', file_hashes[t.f])
    FROM unnest(chunk_files, breadcrumbs, contents, embeddings) WITH ORDINALITY AS t(f, b, c, e, o)
    ORDER BY t.o;
    GET DIAGNOSTICS n_ins = ROW_COUNT;
    RETURN QUERY SELECT n_del, n_ins;
END
$$;
COMMENT ON FUNCTION memloom_replace_chunks(text, text, text[], text[], integer[], text[], text[], vector[], boolean) IS
'replaces the chunks of a batch of files of one ingested root: under each file''s advisory lock (taken in key order), deletes their chunks and inserts the given ones in order (chunk_files: 1-based index into sources; a file with no chunks is emptied), metadata {root, fileHash}; bulk marks the transaction a bulk load (memloom.stats_bulk). Returns the chunks deleted and inserted.';

CREATE FUNCTION memloom_index_batch(
    ns              text,
    item_ids        bigint[],
    content_hashes  text[],
    entity_names    text[],
    entity_kinds    text[],
    entity_vectors  vector[],
    mention_items   bigint[],
    mention_entities integer[],
    strengths       real[],
    bulk            boolean DEFAULT false
) RETURNS TABLE (entities integer, mentions integer, indexed integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n_ent  integer;
    n_ment integer;
    n_idx  integer;
    ids    bigint[];
    gone   bigint[];
    ne     integer := coalesce(cardinality(entity_names), 0);
    nm     integer := coalesce(cardinality(mention_items), 0);
BEGIN
    IF ns IS NULL OR item_ids IS NULL THEN
        RAISE EXCEPTION 'memloom_index_batch needs a namespace and the item ids'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(content_hashes) IS DISTINCT FROM cardinality(item_ids)
       OR coalesce(cardinality(entity_kinds), 0) <> ne OR coalesce(cardinality(entity_vectors), 0) <> ne
       OR coalesce(cardinality(mention_entities), 0) <> nm OR coalesce(cardinality(strengths), 0) <> nm THEN
        RAISE EXCEPTION 'memloom_index_batch: expected one content hash per item (% items, % hashes), one kind and vector per entity (% entities: % kinds, % vectors) and one entity and strength per mention (% mentions: % entities, % strengths)',
            cardinality(item_ids), cardinality(content_hashes), ne, cardinality(entity_kinds),
            cardinality(entity_vectors), nm, cardinality(mention_entities), cardinality(strengths)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF bulk THEN
        PERFORM set_config('memloom.stats_bulk', 'on', true);
    END IF;
    -- Entities the namespace lacks (the caller embedded those it did not find; a NULL vector
    -- names one it found). A concurrent run may add the same one: it is kept once.
    INSERT INTO memloom_entities (namespace, name, kind, embedding)
    SELECT ns, t.n, t.k, t.v FROM unnest(entity_names, entity_kinds, entity_vectors) WITH ORDINALITY AS t(n, k, v, o)
    WHERE t.v IS NOT NULL
    ORDER BY t.o
    ON CONFLICT (namespace, name, kind) DO NOTHING;
    GET DIAGNOSTICS n_ent = ROW_COUNT;
    -- Each given entity's id, by position (NULL: it is gone, pruned by a concurrent run).
    SELECT array_agg(e.id ORDER BY t.o) INTO ids
    FROM unnest(entity_names, entity_kinds) WITH ORDINALITY AS t(n, k, o)
    LEFT JOIN memloom_entities e ON e.namespace = ns AND e.name = t.n AND e.kind = t.k;
    -- Re-indexing replaces the items' edges.
    DELETE FROM memloom_mentions mt WHERE mt.item_id = ANY (item_ids);
    INSERT INTO memloom_mentions (namespace, entity_id, item_id, strength)
    SELECT ns, ids[t.e], t.i, t.s FROM unnest(mention_items, mention_entities, strengths) AS t(i, e, s)
    WHERE ids[t.e] IS NOT NULL;
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    SELECT array_agg(DISTINCT t.i) INTO gone FROM unnest(mention_items, mention_entities) AS t(i, e)
    WHERE ids[t.e] IS NULL;
    -- Indexed: the items whose content is still what was extracted and whose every entity
    -- exists (one pruned meanwhile: the next run adds it again). FOR SHARE orders this against
    -- a concurrent in-place change of an item's content: one that committed first fails the
    -- hash check here, one that comes after waits and its trigger then deletes the row.
    INSERT INTO memloom_indexed AS x (item_id, namespace)
    SELECT m.id, ns FROM memloom_items m
    JOIN unnest(item_ids, content_hashes) AS t(id, h) ON m.id = t.id AND m.content_hash = t.h
    WHERE m.namespace = ns AND t.id <> ALL (coalesce(gone, '{}'))
    ORDER BY m.id
    FOR SHARE OF m
    ON CONFLICT (item_id) DO UPDATE SET indexed_at = EXCLUDED.indexed_at;
    GET DIAGNOSTICS n_idx = ROW_COUNT;
    RETURN QUERY SELECT n_ent, n_ment, n_idx;
END
$$;
COMMENT ON FUNCTION memloom_index_batch(text, bigint[], text[], text[], text[], vector[], bigint[], integer[], real[], boolean) IS
'writes one entity index batch: adds the given entities the namespace lacks (entity_vectors NULL for those the caller found), replaces the items'' mentions (mention_entities: 1-based index into the entities) and marks indexed the items whose content_hash is still the given one. Returns entities added, mentions written, items marked.';

CREATE FUNCTION memloom_prune_index(ns text) RETURNS TABLE (mentions integer, entities integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n_ment integer;
    n_ent  integer;
BEGIN
    -- Superseded items keep no mentions, and entities nothing mentions go. Every run pays
    -- this, most with nothing to remove, so it reads indexes, not the tables' rows (sql/0045):
    -- a superseded item is one with a valid_to (the items' CHECK), found through
    -- memloom_items_valid_to; the entities' ids come from memloom_entities_namespace_id and
    -- only the orphans' rows are read (an entity row holds its vector: scanning them read
    -- 1,235 pages of the Node docs store to delete none).
    DELETE FROM memloom_mentions mt USING memloom_items m
    WHERE m.id = mt.item_id AND m.namespace = ns AND m.valid_to IS NOT NULL AND m.status <> 'active';
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    DELETE FROM memloom_entities e WHERE e.namespace = ns AND e.id = ANY (ARRAY(
        SELECT x.id FROM memloom_entities x WHERE x.namespace = ns
          AND NOT EXISTS (SELECT 1 FROM memloom_mentions mt WHERE mt.entity_id = x.id)));
    GET DIAGNOSTICS n_ent = ROW_COUNT;
    RETURN QUERY SELECT n_ment, n_ent;
END
$$;
COMMENT ON FUNCTION memloom_prune_index(text) IS
'after an index run: deletes the mentions of the namespace''s superseded items and the entities nothing mentions any more. Returns the mentions and entities removed.';
