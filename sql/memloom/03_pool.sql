-- memloom, the current definition, part 3: the pool. Memories and document chunks in
-- one table (memloom_items), the entities the indexer extracts from them and the mention edges
-- between the two. Every row belongs to one namespace; row-level security binds other roles
-- to theirs (10_security.sql); the statistics triggers on these tables are in
-- 04_statistics.sql.

CREATE TABLE memloom_items (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace     text        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('memory', 'chunk')),
    source        text,
    breadcrumb    text,
    key           text,
    version       integer     NOT NULL DEFAULT 1 CHECK (version >= 1),
    content       text        NOT NULL,
    status        text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded')),
    supersedes    bigint,
    superseded_by bigint,
    content_hash  text        NOT NULL GENERATED ALWAYS AS (md5(content)) STORED,
    embedding     vector      NOT NULL,  -- vector(dims) once memloom_init_store has run
    metadata      jsonb       NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    heading_tsv   tsvector    NOT NULL GENERATED ALWAYS AS (memloom_tsvector(memloom_heading(breadcrumb, key))) STORED,
    valid_from    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
    valid_to      timestamptz,
    event_at      timestamptz,
    context       text,
    tsv           tsvector    NOT NULL GENERATED ALWAYS AS (memloom_tsvector(memloom_indexed_text(content, context))) STORED,
    CONSTRAINT memloom_items_valid_interval
        CHECK ((valid_to IS NULL) = (status = 'active') AND (valid_to IS NULL OR valid_to >= valid_from))
);
-- Every reference between rows names its namespace as well as the id (the targets' unique
-- (namespace, id) keys): a row can only point at a row of its own namespace, and a foreign-key
-- check fails alike for another namespace's id and for one that does not exist, so no tenant
-- learns another's ids from it (sql/migrations/0012_integrity.sql).
ALTER TABLE memloom_items
    ADD CONSTRAINT memloom_items_namespace_id UNIQUE (namespace, id),
    ADD CONSTRAINT memloom_items_supersedes_fkey
        FOREIGN KEY (namespace, supersedes) REFERENCES memloom_items (namespace, id),
    ADD CONSTRAINT memloom_items_superseded_by_fkey
        FOREIGN KEY (namespace, superseded_by) REFERENCES memloom_items (namespace, id);
COMMENT ON TABLE memloom_items IS
'the pool: memories (kind memory, optional key, versioned) and document chunks (kind chunk); every read and write is scoped to one namespace';
COMMENT ON COLUMN memloom_items.valid_from IS
'when this version became the belief: the write (memloom_remember, a chunk''s ingest), in milliseconds (a JavaScript Date''s precision, so an instant read from history names exactly its version); docs/TIME.md';
COMMENT ON COLUMN memloom_items.valid_to IS
'when this version stopped being the belief: its successor''s valid_from (set by memloom_remember when it supersedes it); NULL while it is active';
COMMENT ON COLUMN memloom_items.event_at IS
'when the event the memory describes happened (remember --at), distinct from when it was saved; NULL when not given (the time filters then use valid_from)';
COMMENT ON COLUMN memloom_items.context IS
'the text a turn replies to: for an active memory keyed <thread>:<n>, the content of <thread>:<n-1>''s active version (memloom_turn_context), kept by triggers; indexed with the content (tsv), never returned';
COMMENT ON COLUMN memloom_items.heading_tsv IS
'memloom_tsvector of memloom_heading(breadcrumb, key): the keyword arm''s heading field';

-- Keyword candidates' tsvectors in the heap: a row of text + a 256-dim embedding + its
-- tsvector passes the 2 kB TOAST threshold, and the toaster moved the largest value, usually
-- tsv, out of line: every keyword candidate then cost a TOAST index lookup and 1 to 6 TOAST
-- pages (3x the keyword arm's time at 1M items). MAIN keeps tsv in the row (compressed if need
-- be) and moves the embedding or the content out instead, which are read only for the rows the
-- HNSW scan and memloom_fuse return.
ALTER TABLE memloom_items ALTER COLUMN tsv SET STORAGE MAIN;
-- heading_tsv too (sql/0028): about 60 bytes, yet the first value the toaster moved out of line
-- in most chunk rows, so every keyword candidate cost a TOAST lookup for its heading.
ALTER TABLE memloom_items ALTER COLUMN heading_tsv SET STORAGE MAIN;
-- The embedding stays in the row too (memloom_vector_storage: MAIN until memloom_init_store
-- knows the dimensions, then PLAIN up to 1024), so an exact vector scan reads no TOAST.
ALTER TABLE memloom_items ALTER COLUMN embedding SET STORAGE MAIN;

-- At most one active version per (namespace, key), even under concurrent writers.
CREATE UNIQUE INDEX memloom_items_active_key ON memloom_items (namespace, key)
    WHERE status = 'active' AND key IS NOT NULL;
CREATE UNIQUE INDEX memloom_items_key_version ON memloom_items (namespace, key, version)
    WHERE key IS NOT NULL;
CREATE INDEX memloom_items_source ON memloom_items (namespace, source);
-- The HNSW index (memloom_items_embedding) needs the dimensions: memloom_ensure_vector_index.
CREATE INDEX memloom_items_tsv ON memloom_items USING gin (tsv);
-- The same over a fixed 1-in-16 sample of the items (by a hash of the id, so no pattern of ids,
-- such as namespaces writing in turn, skews a namespace's share): a capped keyword tier of common
-- words takes its candidates from here when reading the heap would read many rows to find them
-- (memloom_keyword_arm, sql/0043). A sixteenth of the postings to decode, and of the writes.
CREATE INDEX memloom_items_tsv_sample ON memloom_items USING gin (tsv) WHERE (hashint8(id) & 15) = 0;
-- Deleting an item checks that no other version links to it (the supersedes / superseded_by
-- foreign keys): without an index each deleted row cost two sequential scans of the pool.
-- Only memories link.
CREATE INDEX memloom_items_supersedes ON memloom_items (supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX memloom_items_superseded_by ON memloom_items (superseded_by) WHERE superseded_by IS NOT NULL;
-- The versions that stopped being valid (superseded, forgotten, removed chunks), by when: a
-- recall as of an instant finds those still valid then here, the active ones through the HNSW
-- index (which holds only those, sql/0033; memloom_vector_arm).
CREATE INDEX memloom_items_valid_to ON memloom_items (namespace, valid_to) WHERE valid_to IS NOT NULL;

-- Which rows a recall sees (docs/TIME.md). as_of NULL: the active versions (status, the path
-- of today's plans: the arms are planned per call, so the NULL folds away and the predicate is
-- exactly status = 'active'); otherwise the versions valid at that instant, valid_from <= as_of
-- < valid_to (chunks: ingested at or before it). since / until (inclusive) bound the event time,
-- or the saved time where the item has none. One SQL expression without FROM, so the planner
-- inlines it into the arms' queries.
CREATE FUNCTION memloom_visible(
    status     text,
    valid_from timestamptz,
    valid_to   timestamptz,
    event_at   timestamptz,
    as_of      timestamptz,
    since      timestamptz,
    until      timestamptz
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN as_of IS NULL THEN status = 'active'
                ELSE valid_from <= as_of AND (valid_to IS NULL OR valid_to > as_of) END
           AND (since IS NULL OR coalesce(event_at, valid_from) >= since)
           AND (until IS NULL OR coalesce(event_at, valid_from) <= until)
$$;
COMMENT ON FUNCTION memloom_visible(text, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz) IS
'whether a recall sees an item: as_of NULL, the active ones; else those valid at as_of (valid_from <= as_of < valid_to, or no valid_to); and, when given, coalesce(event_at, valid_from) between since and until (inclusive). Inlined into the arms';

-- A small pool: the keyword and entity arms keep one generic plan per session there instead of
-- planning every statement on every call (sql/0031), when it has no HNSW index either (an
-- embedded store below its threshold; a server builds the index after its first load, and the
-- arms check for it first, so a server pays one catalog cache lookup). Planning costs the same
-- whatever the pool's size (in PGlite the keyword arm's scoring statement planned in 0.7 to 1.2
-- ms, more than it ran on the Node docs); a plan made without the query's values costs what the
-- pool's size lets it: at 1M items the keyword arm's generic plan cost 150 ms per tier (a bitmap
-- of the whole namespace, sql/0006), about 1.5 ms at 10,000 rows. The count is pg_class.reltuples
-- (the planner's own; -1 before the first VACUUM or ANALYZE).
CREATE FUNCTION memloom_small_pool() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'memloom_items'::regclass)
                    BETWEEN 0 AND 10000, false)
$$;
COMMENT ON FUNCTION memloom_small_pool() IS
'whether the pool is small enough (at most 10,000 rows by pg_class.reltuples) for the keyword and entity arms to keep one generic plan per session when it has no HNSW index';

-- Re-indexing: an item whose content changes in place is indexed again.
CREATE FUNCTION memloom_items_reindex_on_change() RETURNS trigger
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

CREATE TRIGGER memloom_items_reindex_on_change
    BEFORE UPDATE OF content ON memloom_items
    FOR EACH ROW EXECUTE FUNCTION memloom_items_reindex_on_change();

-- Turns of a thread ---------------------------------------------------------------------------
-- A conversation saved as memories, one turn each, keyed <thread>:<n> (the number after the
-- last colon: "chat-7:12", "conv-26/D3:16"): each active turn's context is the content of the
-- active version of <thread>:<n-1>, the turn it replies to, and its keyword index holds both
-- (memloom_indexed_text). The answer to "How long have you been married?" is "5 years
-- already!": without the question beside it, no query word matches it. Only the keyword index
-- changes: the content, its embedding and what recall returns stay the turn's own. A key of
-- any other form has no context. docs/EVAL.md, "Turns indexed with the turn they answer".
CREATE FUNCTION memloom_turn_before(key text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- n-1 at n's width first ("t:10" -> "t:09"), then unpadded ("t:9"); "t:0" has none. One
    -- expression (inlined into the write triggers' statements), one regular expression: the
    -- number is the part after the last colon, split_part's, which needs none.
    SELECT CASE WHEN split_part(key, ':', -1) ~ '^[0-9]{1,18}$' AND length(key) > length(split_part(key, ':', -1)) + 1 AND split_part(key, ':', -1)::numeric >= 1
                THEN ARRAY[left(key, -length(split_part(key, ':', -1))) || lpad((split_part(key, ':', -1)::numeric - 1)::text, length(split_part(key, ':', -1)), '0'),
                           left(key, -length(split_part(key, ':', -1))) || (split_part(key, ':', -1)::numeric - 1)::text] END
$$;
COMMENT ON FUNCTION memloom_turn_before(text) IS
'the keys the turn before a turn keyed <thread>:<n> may have: <thread>:<n-1> at n''s width (zero-padded), then unpadded; NULL for other keys and for n = 0';

CREATE FUNCTION memloom_turn_after(key text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN split_part(key, ':', -1) ~ '^[0-9]{1,18}$' AND length(key) > length(split_part(key, ':', -1)) + 1
                THEN left(key, -length(split_part(key, ':', -1)))
                     || CASE WHEN split_part(key, ':', -1) LIKE '0%' THEN lpad((split_part(key, ':', -1)::numeric + 1)::text, length(split_part(key, ':', -1)), '0')
                             ELSE (split_part(key, ':', -1)::numeric + 1)::text END END
$$;
COMMENT ON FUNCTION memloom_turn_after(text) IS
'the key of the turn after a turn keyed <thread>:<n>: <thread>:<n+1> (zero padding kept); NULL for other keys';

CREATE FUNCTION memloom_turn_context(ns text, turn_key text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    keys text[] := memloom_turn_before(turn_key);
BEGIN
    IF keys IS NULL THEN
        RETURN NULL;
    END IF;
    -- PL/pgSQL keeps this plan for the session: a write trigger calls it once per turn. At
    -- most 10,000 characters: a tsvector holds at most 1 MB, and a turn is short.
    RETURN (SELECT left(p.content, 10000) FROM memloom_items p
            WHERE p.namespace = ns AND p.key = ANY (keys) AND p.key IS NOT NULL
              AND p.status = 'active' AND p.kind = 'memory'
            ORDER BY p.key = keys[1] DESC
            LIMIT 1);
END
$$;
COMMENT ON FUNCTION memloom_turn_context(text, text) IS
'the context of the turn keyed turn_key in ns: the content (first 10,000 characters) of the active memory keyed by the first of memloom_turn_before(turn_key) that has one, or NULL';

CREATE FUNCTION memloom_items_turn_context() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Rows earlier in the same statement are visible here: an import in turn order finds each
    -- turn's predecessor in its own batch.
    NEW.context := memloom_turn_context(NEW.namespace, NEW.key);
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_items_turn_context() IS
'trigger: an active memory keyed <thread>:<n> gets, as it is written, the content of the turn before it as its context';

CREATE TRIGGER memloom_items_turn_context
    BEFORE INSERT ON memloom_items
    FOR EACH ROW WHEN (NEW.kind = 'memory' AND NEW.status = 'active' AND NEW.key ~ ':[0-9]+$')
    EXECUTE FUNCTION memloom_items_turn_context();

CREATE FUNCTION memloom_items_turn_followers() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    f_ns  text[];
    f_key text[];
BEGIN
    -- A turn written, superseded, forgotten or deleted changes the context of the turn after
    -- it: that one's context follows (a forgotten turn's words leave its reply's index).
    IF TG_OP = 'INSERT' THEN
        -- Not the turns this statement wrote after their predecessor with its text as their
        -- context (an import in turn order: their own insert already read it). EXCEPT, not NOT
        -- EXISTS: a transition table has no statistics, and the anti join was a nested loop.
        SELECT array_agg(f.namespace), array_agg(f.key) INTO f_ns, f_key
        FROM (SELECT DISTINCT x.namespace, x.key
              FROM (SELECT n.namespace, memloom_turn_after(n.key) AS key, left(n.content, 10000) AS context
                    FROM memloom_turns_new n
                    WHERE n.kind = 'memory' AND n.status = 'active' AND n.key ~ ':[0-9]+$'
                    EXCEPT
                    SELECT s.namespace, s.key, s.context FROM memloom_turns_new s
                    WHERE s.kind = 'memory' AND s.status = 'active' AND s.context IS NOT NULL) x) f;
    ELSIF TG_OP = 'DELETE' THEN
        -- Any version deleted (forget by key or by id): its text may be in the context of any
        -- version of the turn after it.
        SELECT array_agg(f.namespace), array_agg(f.key) INTO f_ns, f_key
        FROM (SELECT DISTINCT o.namespace, memloom_turn_after(o.key) AS key FROM memloom_turns_old o
              WHERE o.kind = 'memory' AND o.key ~ ':[0-9]+$') f;
    ELSE
        -- Only rows whose content, key, status or namespace moved: the context UPDATE below
        -- fires this trigger again and, changing none of them, ends here.
        WITH c AS (SELECT o.namespace AS ons, o.key AS okey, n.namespace AS nns, n.key AS nkey
                   FROM memloom_turns_old o JOIN memloom_turns_new n ON n.id = o.id
                   WHERE n.kind = 'memory'
                     AND (o.content IS DISTINCT FROM n.content OR o.key IS DISTINCT FROM n.key
                          OR o.status IS DISTINCT FROM n.status OR o.namespace IS DISTINCT FROM n.namespace))
        SELECT array_agg(f.namespace), array_agg(f.key) INTO f_ns, f_key
        FROM (SELECT c.ons AS namespace, memloom_turn_after(c.okey) AS key FROM c WHERE c.okey ~ ':[0-9]+$'
              UNION
              SELECT c.nns, memloom_turn_after(c.nkey) FROM c WHERE c.nkey ~ ':[0-9]+$') f;
    END IF;
    IF f_key IS NULL THEN
        RETURN NULL;  -- (an UPDATE of no rows still fires statement triggers: none is run)
    END IF;
    UPDATE memloom_items t SET context = f.context
    FROM (SELECT u.namespace, u.key, memloom_turn_context(u.namespace, u.key) AS context
          FROM unnest(f_ns, f_key) AS u(namespace, key)) f
    WHERE t.namespace = f.namespace AND t.key = f.key AND t.status = 'active'
      AND t.context IS DISTINCT FROM f.context;
    IF TG_OP = 'DELETE' THEN
        -- Forgotten means gone: the superseded versions of the turn after it lose the context
        -- they were written with (it may hold the deleted text; they are history, searched only
        -- as_of an instant).
        UPDATE memloom_items t SET context = NULL
        FROM unnest(f_ns, f_key) AS f(namespace, key)
        WHERE t.namespace = f.namespace AND t.key = f.key AND t.status <> 'active' AND t.context IS NOT NULL;
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION memloom_items_turn_followers() IS
'trigger (statement level, transition tables): after turns are written, superseded, forgotten or deleted, the active turn after each (<thread>:<n+1>) gets the context it now has';

CREATE TRIGGER memloom_items_turn_followers_insert AFTER INSERT ON memloom_items
    REFERENCING NEW TABLE AS memloom_turns_new
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_items_turn_followers();
CREATE TRIGGER memloom_items_turn_followers_update AFTER UPDATE ON memloom_items
    REFERENCING OLD TABLE AS memloom_turns_old NEW TABLE AS memloom_turns_new
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_items_turn_followers();
CREATE TRIGGER memloom_items_turn_followers_delete AFTER DELETE ON memloom_items
    REFERENCING OLD TABLE AS memloom_turns_old
    FOR EACH STATEMENT EXECUTE FUNCTION memloom_items_turn_followers();

-- Entities and mention edges ---------------------------------------------------------------
-- Written by the indexer: entities are embedded from `name (kind words)` with the store's
-- embedder, strength in (0, 1] says how much an item is about an entity.
CREATE TABLE memloom_entities (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace  text        NOT NULL,
    name       text        NOT NULL,
    kind       text        NOT NULL,
    embedding  vector      NOT NULL,  -- vector(dims) once memloom_init_store has run
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (namespace, name, kind),
    CONSTRAINT memloom_entities_namespace_id UNIQUE (namespace, id)
);

ALTER TABLE memloom_entities ALTER COLUMN embedding SET STORAGE MAIN;

CREATE TABLE memloom_mentions (
    entity_id bigint NOT NULL,
    item_id   bigint NOT NULL,
    strength  real   NOT NULL CHECK (strength > 0 AND strength <= 1),
    namespace text   NOT NULL,
    PRIMARY KEY (entity_id, item_id),
    CONSTRAINT memloom_mentions_entity_id_fkey
        FOREIGN KEY (namespace, entity_id) REFERENCES memloom_entities (namespace, id) ON DELETE CASCADE,
    CONSTRAINT memloom_mentions_item_id_fkey
        FOREIGN KEY (namespace, item_id) REFERENCES memloom_items (namespace, id) ON DELETE CASCADE
);
COMMENT ON COLUMN memloom_mentions.namespace IS
'the namespace of the mention''s item and entity (both foreign keys include it); filled from the item when an insert leaves it out';

-- A mention's namespace when the writer leaves it out: its item's, as this session sees it.
CREATE FUNCTION memloom_mentions_namespace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.namespace := (SELECT i.namespace FROM memloom_items i WHERE i.id = NEW.item_id);
    IF NEW.namespace IS NULL THEN
        -- As the foreign key would say, whether the item is another namespace's or gone.
        RAISE EXCEPTION 'no item % to mention in this session''s namespace', NEW.item_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION memloom_mentions_namespace() IS
'trigger: a mention inserted without a namespace gets its item''s; an item the session cannot see (another namespace''s, or deleted) fails the insert as a foreign-key violation';
CREATE TRIGGER memloom_mentions_namespace BEFORE INSERT ON memloom_mentions
    FOR EACH ROW WHEN (NEW.namespace IS NULL) EXECUTE FUNCTION memloom_mentions_namespace();
CREATE INDEX memloom_mentions_item ON memloom_mentions (item_id);
-- The entity arm reads an entity's strongest mentions first (07_entity_arm.sql).
CREATE INDEX memloom_mentions_strength
    ON memloom_mentions (entity_id, strength DESC, item_id);

-- Which items the indexer has seen, and when: a row per indexed item, beside the pool rather
-- than a column of it. Marking a pool row rewrote the whole row (content, vector, tsvector), and
-- the new version went to another page with a new entry in every index, GIN included: 1.3 to
-- 2.2 s of a 4.5 s index run of the Node docs on PGlite, and a heap twice its size
-- (sql/migrations/0024_indexed_items.sql). No row: not indexed yet (memloom_unindexed).
CREATE TABLE memloom_indexed (
    item_id    bigint      PRIMARY KEY,
    namespace  text        NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT memloom_indexed_item_id_fkey
        FOREIGN KEY (namespace, item_id) REFERENCES memloom_items (namespace, id) ON DELETE CASCADE
);
COMMENT ON TABLE memloom_indexed IS
'the items the entity indexer has seen (memloom_index_batch), and when; an item without a row is indexed by the next index run; a content change in place deletes the row';
