-- memloom schema 36: a turn of a thread is indexed with the turn it replies to.
--
-- A conversation saved as memories, one turn each, keyed <thread>:<n>: the answer to a question
-- rarely repeats its words ("5 years already!" to "How long have you been married?"), so the
-- keyword arm found the question and missed the answer. Now an active memory keyed <thread>:<n>
-- has a context, the content of <thread>:<n-1>'s active version, kept by triggers as turns
-- are written, superseded, forgotten or deleted, and its tsv indexes content and context
-- (memloom_indexed_text). Content, embeddings and what recall returns are unchanged. On
-- locomo-dev (offline, hash-v1) fused R@5 .575 -> .687, R@10 .642 -> .779; docs/EVAL.md.
--
-- tsv is a generated column; PostgreSQL 15 cannot change a generation expression, so the
-- column is dropped and added again (last, after context): the pool is rewritten and every
-- row's keyword index recomputed once, with its GIN index. The rows without context get the
-- same tsvector as before, so the keyword statistics stand; the backfill of the existing
-- turns' context below updates them through the statistics triggers.

CREATE FUNCTION memloom_indexed_text(content text, context text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN context IS NULL THEN content ELSE content || E'\n' || context END
$$;
COMMENT ON FUNCTION memloom_indexed_text(text, text) IS
'what an item''s keyword index (tsv) holds: its content, then on a new line its context (the turn it replies to) when it has one';

ALTER TABLE memloom_items ADD COLUMN context text;
ALTER TABLE memloom_items DROP COLUMN tsv;
ALTER TABLE memloom_items ADD COLUMN tsv tsvector NOT NULL
    GENERATED ALWAYS AS (memloom_tsvector(memloom_indexed_text(content, context))) STORED;
ALTER TABLE memloom_items ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX memloom_items_tsv ON memloom_items USING gin (tsv);
COMMENT ON COLUMN memloom_items.context IS
'the text a turn replies to: for an active memory keyed <thread>:<n>, the content of <thread>:<n-1>''s active version (memloom_turn_context), kept by triggers; indexed with the content (tsv), never returned';

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

-- The turns already stored get their context (the statistics triggers count the change).
UPDATE memloom_items t SET context = memloom_turn_context(t.namespace, t.key)
WHERE t.kind = 'memory' AND t.status = 'active' AND t.key ~ ':[0-9]+$'
  AND memloom_turn_context(t.namespace, t.key) IS NOT NULL;

UPDATE memloom_meta SET schema_version = greatest(schema_version, 36);
