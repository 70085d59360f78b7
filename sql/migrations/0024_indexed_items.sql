-- memloom schema 24: which items the entity indexer has seen is a table of its own,
-- memloom_indexed (item_id, namespace, indexed_at), instead of memloom_items.indexed_at.
-- Marking an item indexed updated its pool row: PostgreSQL wrote a new version of the whole row
-- (content, vector, tsvector) and, with no room on the page and a partial index on indexed_at,
-- a new entry in every index of the pool, GIN included. On PGlite that was 1.3 to 2.2 s of a
-- 4.5 s index run of the Node docs, and left the heap twice its size. An index batch now
-- inserts one narrow row per item (memloom_index_batch, under FOR SHARE on the items so that a
-- concurrent in-place content change is ordered against it, as the row update was); the
-- content-change trigger deletes the row; memloom_unindexed, memloom_reset_index, memloom_stats,
-- export and import read and write the table. Row-level security as on the pool. The marks of
-- existing stores move over with their times.

CREATE TABLE memloom_indexed (
    item_id    bigint      PRIMARY KEY,
    namespace  text        NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT memloom_indexed_item_id_fkey
        FOREIGN KEY (namespace, item_id) REFERENCES memloom_items (namespace, id) ON DELETE CASCADE
);
COMMENT ON TABLE memloom_indexed IS
'the items the entity indexer has seen (memloom_index_batch), and when; an item without a row is indexed by the next index run; a content change in place deletes the row';

INSERT INTO memloom_indexed (item_id, namespace, indexed_at)
SELECT i.id, i.namespace, i.indexed_at FROM memloom_items i WHERE i.indexed_at IS NOT NULL ORDER BY i.id;

CREATE OR REPLACE FUNCTION memloom_items_reindex_on_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.content IS DISTINCT FROM OLD.content THEN
        DELETE FROM memloom_indexed x WHERE x.item_id = NEW.id;
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_items_reindex_on_change() IS
'trigger: an item whose content changes in place is no longer indexed (its memloom_indexed row goes), so the next index run re-extracts its entities';

DROP INDEX memloom_items_unindexed;
ALTER TABLE memloom_items DROP COLUMN indexed_at;

CREATE OR REPLACE FUNCTION memloom_index_batch(
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

CREATE OR REPLACE FUNCTION memloom_reset_index(ns text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n integer;
BEGIN
    DELETE FROM memloom_indexed x WHERE x.namespace = ns;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
COMMENT ON FUNCTION memloom_reset_index(text) IS
'marks every indexed item of namespace ns for re-indexing (deletes its memloom_indexed rows); returns how many';

CREATE OR REPLACE FUNCTION memloom_unindexed(ns text, after_id bigint, lim integer)
RETURNS TABLE (id bigint, breadcrumb text, content text, content_hash text)
LANGUAGE sql STABLE AS $$
    SELECT i.id, i.breadcrumb, i.content, i.content_hash
      FROM memloom_items i
     WHERE i.namespace = ns AND i.status = 'active' AND i.id > after_id
       AND NOT EXISTS (SELECT 1 FROM memloom_indexed x WHERE x.item_id = i.id)
     ORDER BY i.id
     LIMIT lim
$$;
COMMENT ON FUNCTION memloom_unindexed(text, bigint, integer) IS
'the next at most lim active items of namespace ns not indexed yet with an id above after_id, in id order (an index run''s batches)';

CREATE OR REPLACE FUNCTION memloom_stats(ns text)
RETURNS TABLE (chunks integer, active_memories integer, superseded_memories integer, keys integer,
               files integer, entities integer, unindexed integer)
LANGUAGE sql STABLE AS $$
    SELECT (count(*) FILTER (WHERE i.kind = 'chunk'))::integer,
           (count(*) FILTER (WHERE i.kind = 'memory' AND i.status = 'active'))::integer,
           (count(*) FILTER (WHERE i.kind = 'memory' AND i.status = 'superseded'))::integer,
           (count(DISTINCT i.key))::integer,
           (count(DISTINCT (i.metadata->>'root', i.source)) FILTER (WHERE i.kind = 'chunk'))::integer,
           (SELECT count(*)::integer FROM memloom_entities e WHERE e.namespace = ns),
           (count(*) FILTER (WHERE x.item_id IS NULL AND i.status = 'active'))::integer
      FROM memloom_items i
      LEFT JOIN memloom_indexed x ON x.item_id = i.id
     WHERE i.namespace = ns
$$;
COMMENT ON FUNCTION memloom_stats(text) IS
'namespace ns in counts: chunks (every version), active and superseded memories, distinct keys, files (distinct root and source of its chunks), entities, active items not indexed yet';

CREATE OR REPLACE FUNCTION memloom_export_items(ns text, after_id bigint DEFAULT 0, lim integer DEFAULT 1000)
RETURNS TABLE (id bigint, line json)
LANGUAGE sql STABLE AS $$
    SELECT i.id, json_build_object(
        'type', 'item',
        'namespace', i.namespace,
        'kind', i.kind,
        'key', i.key,
        'version', i.version,
        'status', i.status,
        'source', i.source,
        'breadcrumb', i.breadcrumb,
        'content', i.content,
        'metadata', i.metadata,
        'createdAt', memloom_json_time(i.created_at),
        'updatedAt', memloom_json_time(i.updated_at),
        'indexedAt', memloom_json_time((SELECT x.indexed_at FROM memloom_indexed x WHERE x.item_id = i.id)),
        'validFrom', memloom_json_time(i.valid_from),
        'validTo', memloom_json_time(i.valid_to),
        'eventAt', memloom_json_time(i.event_at),
        'supersedes', (SELECT json_build_object('key', p.key, 'version', p.version)
                       FROM memloom_items p WHERE p.namespace = i.namespace AND p.id = i.supersedes),
        'supersededBy', (SELECT json_build_object('key', s.key, 'version', s.version)
                         FROM memloom_items s WHERE s.namespace = i.namespace AND s.id = i.superseded_by),
        'mentions', coalesce((SELECT json_agg(json_build_object('name', e.name, 'kind', e.kind, 'strength', m.strength)
                                              ORDER BY e.name, e.kind)
                              FROM memloom_mentions m
                              JOIN memloom_entities e ON e.namespace = m.namespace AND e.id = m.entity_id
                              WHERE m.namespace = i.namespace AND m.item_id = i.id), '[]'::json),
        'embedding', memloom_vector_base64(i.embedding))
    FROM memloom_items i
    WHERE i.namespace = ns AND i.id > after_id
    ORDER BY i.id
    LIMIT lim
$$;
COMMENT ON FUNCTION memloom_export_items(text, bigint, integer) IS
'export lines of namespace ns''s items (type item: every stored field, supersession links as {key, version}, mentions as {name, kind, strength}, the embedding as memloom_vector_base64) with id above after_id, at most lim, in id order (page with the last id returned); docs/EXPORT.md';

CREATE OR REPLACE FUNCTION memloom_import_batch(
    ns             text,
    export_id      text,
    last_line      bigint,
    entities       jsonb,
    items          jsonb,
    entity_vectors vector[],
    item_vectors   vector[]
) RETURNS TABLE (entities_written integer, items_written integer, mentions_written integer, skipped integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    mark    bigint;
    n_ent   integer := 0;
    n_items integer := 0;
    n_ment  integer := 0;
    n_want  integer;
    n_all   integer := coalesce(jsonb_array_length(entities), 0) + coalesce(jsonb_array_length(items), 0);
    ids     bigint[];
BEGIN
    IF ns IS NULL OR ns = '' OR export_id IS NULL OR export_id = '' OR last_line IS NULL THEN
        RAISE EXCEPTION 'memloom_import_batch needs a namespace, an export id and the batch''s last line'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF coalesce(jsonb_array_length(entities), 0) <> coalesce(cardinality(entity_vectors), 0)
       OR coalesce(jsonb_array_length(items), 0) <> coalesce(cardinality(item_vectors), 0) THEN
        RAISE EXCEPTION 'memloom_import_batch: expected one vector per entity and per item (% entities, % vectors; % items, % vectors)',
            jsonb_array_length(entities), cardinality(entity_vectors), jsonb_array_length(items), cardinality(item_vectors)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- One importer of a (namespace, dump) at a time; the record says what is committed.
    PERFORM pg_advisory_xact_lock(hashtextextended('memloom import ' || ns || chr(31) || export_id, 0));
    SELECT m.last_line INTO mark FROM memloom_imports m
    WHERE m.namespace = ns AND m.export_id = memloom_import_batch.export_id;
    IF mark IS NULL THEN
        -- A restore writes versions, links and ids of its own: into an empty namespace only.
        IF EXISTS (SELECT 1 FROM memloom_items i WHERE i.namespace = ns)
           OR EXISTS (SELECT 1 FROM memloom_entities e WHERE e.namespace = ns) THEN
            RAISE EXCEPTION 'namespace % already holds items or entities that are not from this dump (export %); import into an empty namespace (--namespace NEW), or empty this one first (memloom forget --namespace % --yes)',
                ns, export_id, ns
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        INSERT INTO memloom_imports (namespace, export_id, last_line)
        VALUES (ns, memloom_import_batch.export_id, 0);
        mark := 0;
    END IF;
    -- A bulk load: the statistics are marked and recomputed once (memloom_refresh_stats at the end).
    PERFORM set_config('memloom.stats_bulk', 'on', true);

    INSERT INTO memloom_entities (namespace, name, kind, embedding, created_at)
    SELECT ns, t.j->>'name', t.j->>'kind', entity_vectors[t.o],
           coalesce((t.j->>'createdAt')::timestamptz, now())
    FROM jsonb_array_elements(entities) WITH ORDINALITY AS t(j, o)
    WHERE (t.j->>'line')::bigint > mark
    ORDER BY t.o
    ON CONFLICT (namespace, name, kind) DO NOTHING;
    GET DIAGNOSTICS n_ent = ROW_COUNT;

    -- Ids drawn first, in line order, so the rows keep the dump's relative order (recall
    -- breaks score ties by id) and each line knows its row; then the supersession links, by
    -- (key, version), to a row of this batch or one already stored, so the INSERT writes them
    -- (the foreign keys are checked at the statement's end) and no row is updated after.
    CREATE TEMP TABLE IF NOT EXISTS memloom_import_rows (
        o       integer PRIMARY KEY,
        id      bigint  NOT NULL,
        key     text,
        version integer,
        sup     bigint,
        sup_by  bigint,
        j       jsonb   NOT NULL
    ) ON COMMIT DROP;
    TRUNCATE memloom_import_rows;
    INSERT INTO memloom_import_rows (o, id, key, version, j)
    SELECT t.o, nextval(pg_get_serial_sequence('memloom_items', 'id')), t.j->>'key',
           coalesce((t.j->>'version')::integer, 1), t.j
    FROM jsonb_array_elements(items) WITH ORDINALITY AS t(j, o)
    WHERE (t.j->>'line')::bigint > mark
    ORDER BY t.o;
    CREATE INDEX IF NOT EXISTS memloom_import_rows_key ON memloom_import_rows (key, version);
    ANALYZE memloom_import_rows;
    UPDATE memloom_import_rows r SET
        sup = CASE WHEN jsonb_typeof(r.j->'supersedes') = 'object' THEN coalesce(
                  (SELECT b.id FROM memloom_import_rows b
                   WHERE b.key = r.j->'supersedes'->>'key' AND b.version = (r.j->'supersedes'->>'version')::integer),
                  (SELECT p.id FROM memloom_items p
                   WHERE p.namespace = ns AND p.key = r.j->'supersedes'->>'key'
                     AND p.version = (r.j->'supersedes'->>'version')::integer)) END,
        sup_by = CASE WHEN jsonb_typeof(r.j->'supersededBy') = 'object' THEN coalesce(
                  (SELECT b.id FROM memloom_import_rows b
                   WHERE b.key = r.j->'supersededBy'->>'key' AND b.version = (r.j->'supersededBy'->>'version')::integer),
                  (SELECT p.id FROM memloom_items p
                   WHERE p.namespace = ns AND p.key = r.j->'supersededBy'->>'key'
                     AND p.version = (r.j->'supersededBy'->>'version')::integer)) END
    WHERE jsonb_typeof(r.j->'supersedes') = 'object' OR jsonb_typeof(r.j->'supersededBy') = 'object';
    -- The validity interval: the dump's, else (a dump without it, mem0's) from when the row was
    -- saved and, for a superseded version, when it was last updated (memloom_remember updates
    -- a version when it supersedes it).
    INSERT INTO memloom_items (id, namespace, kind, source, breadcrumb, key, version, content, status,
                               supersedes, superseded_by, embedding, metadata, created_at, updated_at,
                               valid_from, valid_to, event_at)
    OVERRIDING SYSTEM VALUE
    SELECT r.id, ns, r.j->>'kind', r.j->>'source', r.j->>'breadcrumb', r.key, r.version,
           r.j->>'content', coalesce(r.j->>'status', 'active'), r.sup, r.sup_by,
           item_vectors[r.o], coalesce(r.j->'metadata', '{}'),
           coalesce((r.j->>'createdAt')::timestamptz, now()),
           coalesce((r.j->>'updatedAt')::timestamptz, (r.j->>'createdAt')::timestamptz, now()),
           coalesce((r.j->>'validFrom')::timestamptz, (r.j->>'createdAt')::timestamptz, date_trunc('milliseconds', now())),
           CASE WHEN coalesce(r.j->>'status', 'active') <> 'active' THEN
               greatest(coalesce((r.j->>'validTo')::timestamptz, (r.j->>'updatedAt')::timestamptz, (r.j->>'createdAt')::timestamptz, date_trunc('milliseconds', now())),
                        coalesce((r.j->>'validFrom')::timestamptz, (r.j->>'createdAt')::timestamptz, date_trunc('milliseconds', now())))
           END,
           (r.j->>'eventAt')::timestamptz
    FROM memloom_import_rows r
    ORDER BY r.o;
    GET DIAGNOSTICS n_items = ROW_COUNT;
    INSERT INTO memloom_indexed (item_id, namespace, indexed_at)
    SELECT r.id, ns, (r.j->>'indexedAt')::timestamptz FROM memloom_import_rows r
    WHERE r.j->>'indexedAt' IS NOT NULL
    ORDER BY r.id;
    -- A version stored by an earlier batch whose successor arrives now (its supersededBy named
    -- a row that did not exist yet): linked from this end.
    UPDATE memloom_items p SET superseded_by = r.id
      FROM memloom_import_rows r
     WHERE r.sup IS NOT NULL AND p.namespace = ns AND p.id = r.sup AND p.superseded_by IS NULL;

    -- Mentions by their entity's (name, kind): every one must name an entity of the namespace.
    SELECT count(*)::integer INTO n_want
    FROM memloom_import_rows r, jsonb_array_elements(coalesce(r.j->'mentions', '[]')) m;
    INSERT INTO memloom_mentions (entity_id, item_id, strength, namespace)
    SELECT e.id, r.id, (m->>'strength')::real, ns
    FROM memloom_import_rows r
    CROSS JOIN LATERAL jsonb_array_elements(coalesce(r.j->'mentions', '[]')) m
    JOIN memloom_entities e ON e.namespace = ns AND e.name = m->>'name' AND e.kind = m->>'kind';
    GET DIAGNOSTICS n_ment = ROW_COUNT;
    IF n_ment <> n_want THEN
        RAISE EXCEPTION 'memloom_import_batch: % of the batch''s % mentions name no entity of namespace % (an entity line must come before the items that mention it)',
            n_want - n_ment, n_want, ns
            USING ERRCODE = 'foreign_key_violation';
    END IF;

    UPDATE memloom_imports m SET last_line = greatest(m.last_line, memloom_import_batch.last_line), updated_at = now()
    WHERE m.namespace = ns AND m.export_id = memloom_import_batch.export_id;
    RETURN QUERY SELECT n_ent, n_items, n_ment, n_all - n_ent - n_items;
END
$$;
COMMENT ON FUNCTION memloom_import_batch(text, text, bigint, jsonb, jsonb, vector[], vector[]) IS
'restores a batch of export lines (docs/EXPORT.md; each element carries its dump line number as "line") into namespace ns, in one statement: entities (by name and kind), items with the ids drawn in line order, their supersession links by key and version, their mentions by entity name and kind, then records last_line for (ns, export_id) in memloom_imports. Lines at or below the recorded line are skipped (a re-run resumes); the first batch of an export refuses a namespace that already holds items or entities. A bulk load: call memloom_refresh_stats(ns) after the last batch. Returns the rows written and the lines skipped.';

CREATE OR REPLACE FUNCTION memloom_hide_planner_statistics() RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    tabs text[] := ARRAY['memloom_items', 'memloom_items', 'memloom_items', 'memloom_items',
                         'memloom_items', 'memloom_items', 'memloom_entities', 'memloom_entities',
                         'memloom_mentions', 'memloom_term_stats', 'memloom_term_stats',
                         'memloom_namespace_stats', 'memloom_entity_stats',
                         'memloom_namespace_grants', 'memloom_namespace_grants', 'memloom_indexed'];
    cols text[] := ARRAY['namespace', 'key', 'source', 'breadcrumb', 'content', 'content_hash',
                         'namespace', 'name', 'namespace', 'namespace', 'lexeme', 'namespace',
                         'namespace', 'namespace', 'role_name', 'namespace'];
    i integer;
BEGIN
    IF NOT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) THEN
        RAISE EXCEPTION 'memloom_hide_planner_statistics changes pg_statistic, which only a superuser may; run it as one'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR i IN 1 .. cardinality(tabs) LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS 0', tabs[i], cols[i]);
    END LOOP;
    -- ANALYZE skips such a column but keeps what it gathered before: removed here.
    DELETE FROM pg_catalog.pg_statistic s
     USING unnest(tabs, cols) AS x(t, c)
     JOIN pg_catalog.pg_attribute a ON a.attrelid = x.t::regclass AND a.attname = x.c
     WHERE s.starelid = a.attrelid AND s.staattnum = a.attnum;
    -- The arms filter by namespace; with no statistics at all the planner would take
    -- `namespace = ns` for 0.5% of the rows and prefer a namespace index and a sort to the
    -- HNSW and GIN indexes (12x slower on a large namespace). One fixed estimate instead,
    -- derived from no data: one distinct value, so every namespace is estimated at the whole
    -- table, the plans a store of one large namespace had. ANALYZE leaves these rows alone
    -- (statistics target 0).
    INSERT INTO pg_catalog.pg_statistic
        (starelid, staattnum, stainherit, stanullfrac, stawidth, stadistinct,
         stakind1, stakind2, stakind3, stakind4, stakind5,
         staop1, staop2, staop3, staop4, staop5, stacoll1, stacoll2, stacoll3, stacoll4, stacoll5)
    SELECT a.attrelid, a.attnum, false, 0, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    FROM pg_catalog.pg_attribute a
    WHERE a.attname = 'namespace'
      AND a.attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass, 'memloom_mentions'::regclass,
                         'memloom_indexed'::regclass);
    RETURN cardinality(tabs);
END
$$;
COMMENT ON FUNCTION memloom_hide_planner_statistics() IS
'superuser only: stops ANALYZE from gathering statistics on the memloom columns that name tenants or their content (namespace, key, source, breadcrumb, content, entity names, lexemes, grants), deletes those gathered before, and gives the namespace columns one fixed estimate (every namespace = the whole table), so EXPLAIN shows a tenant nothing about other namespaces and recall keeps its index plans; returns the columns hidden. sql/0012 runs it when migrating as a superuser';

ALTER TABLE memloom_indexed ENABLE ROW LEVEL SECURITY;
CREATE POLICY memloom_indexed_namespace ON memloom_indexed
    USING (namespace = (SELECT memloom_current_namespace()))
    WITH CHECK (namespace = (SELECT memloom_current_namespace()));
COMMENT ON POLICY memloom_indexed_namespace ON memloom_indexed IS
'a session sees and writes only the index marks of its namespace; the foreign key (namespace, item_id) keeps them on its items';

DO $$
BEGIN
    IF coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false) THEN
        PERFORM memloom_hide_planner_statistics();
    ELSE
        RAISE WARNING 'memloom 0024: EXPLAIN row estimates of memloom_indexed may show tenants which namespaces exist; a superuser hides them with: SELECT memloom_hide_planner_statistics()';
    END IF;
END
$$;

-- Roles provisioned before this migration (GRANT ... ON ALL TABLES, docs/SECURITY.md) hold
-- privileges on the pool but not on a table created after it: they get the same ones here, or a
-- tenant's index run, stats and export would fail with "permission denied".
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT a.privilege_type, a.grantee
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = 'memloom_items'::regclass AND a.grantee <> c.relowner
                AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
    LOOP
        EXECUTE format('GRANT %s ON memloom_indexed TO %s', g.privilege_type,
                       CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;

UPDATE memloom_meta SET schema_version = greatest(schema_version, 24);
