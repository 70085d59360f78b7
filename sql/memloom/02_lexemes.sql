-- memloom, the current definition, part 2: lexemes. The keyword index of a text, used
-- by the pool's generated columns (tsv, heading_tsv) and, for queries, by the keyword arm
-- (05_keyword_arm.sql).
--
-- to_tsvector('english') splits max_connections into max + connect, drops "is" from is_active
-- and keeps /etc/nginx/nginx.conf as one token. memloom_tsvector adds every identifier
-- (lowercased, whole) as an extra lexeme next to the stemmed words, so a query made of an
-- identifier matches it exactly and nothing that merely shares its words. Changing
-- memloom_identifiers in a migration must also recompute the stored tsv
-- (UPDATE memloom_items SET content = content).

CREATE FUNCTION memloom_is_identifier(token text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT length(token) BETWEEN 2 AND 200
       AND token ~ '^--?[A-Za-z]|[A-Za-z0-9]_|_[A-Za-z0-9]|[A-Za-z0-9]\.[A-Za-z0-9]|^\.[A-Za-z]|[A-Za-z0-9.]/[A-Za-z0-9.]|^/[A-Za-z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[a-z][A-Z]|[A-Za-z0-9]:[A-Za-z0-9]'
$$;
COMMENT ON FUNCTION memloom_is_identifier(text) IS
'true when a token is identifier-like: snake_case, dotted, a path, a --flag, camelCase, letters mixed with digits, a:b';

CREATE FUNCTION memloom_tokens(doc text) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT t FROM (
        SELECT regexp_replace(m[1], '[.:]+$', '') AS t
        FROM regexp_matches(doc, '([^][[:space:](){}<>,;"''`=|*!?&+\\]+)', 'g') AS m
    ) s
    WHERE t <> ''
$$;
COMMENT ON FUNCTION memloom_tokens(text) IS
'splits text on whitespace and punctuation that never belongs to an identifier, trimming trailing . and :; shared by documents and queries';

CREATE FUNCTION memloom_identifiers(doc text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- Same token boundaries as memloom_tokens, but only tokens that can hold an identifier are
    -- extracted: one with - _ / or a digit, a lower-case letter before a capital (camelCase), or
    -- a . or : that is not part of the trailing run the trim removes (memloom_is_identifier needs
    -- one of these; a capitalised word or a sentence's last word has none). Each distinct token
    -- once; a token is split into parts only when it has a separator. The write path computes
    -- this for every chunk: 2x faster than extracting every token with a capital, . or :
    -- (sql/0023; the lexemes are the same, tests/sql/keyword.sql compares them).
    SELECT coalesce(array_agg(DISTINCT lower(p)), '{}')
    FROM (SELECT DISTINCT regexp_replace(m[1], '[.:]+$', '') AS t
          FROM regexp_matches(doc, '([^][[:space:](){}<>,;"''`=|*!?&+\\]*(?:[-_/0-9]|[a-z][A-Z]|[.:][^][[:space:](){}<>,;"''`=|*!?&+\\.:])[^][[:space:](){}<>,;"''`=|*!?&+\\]*)', 'g') AS m) s,
         unnest(CASE WHEN translate(t, '/:', '') <> t
                     THEN ARRAY[t] || regexp_split_to_array(t, '[/:]+') || regexp_split_to_array(t, '[/:.]+')
                     WHEN strpos(t, '.') > 0 THEN ARRAY[t] || string_to_array(t, '.')
                     ELSE ARRAY[t] END) AS p
    WHERE memloom_is_identifier(p)
$$;
COMMENT ON FUNCTION memloom_identifiers(text) IS
'the exact identifier lexemes of a document: each identifier token lowercased, plus the identifier-like parts of paths and dotted names (nginx.conf from /etc/nginx/nginx.conf, readfile from fs.readFile)';

CREATE FUNCTION memloom_tsvector(doc text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, doc) || array_to_tsvector(memloom_identifiers(doc))
$$;
COMMENT ON FUNCTION memloom_tsvector(text) IS
'the keyword index of a document: english stems plus exact identifier lexemes (memloom_identifiers)';

-- The text a row's tsv indexes: its content, and for a turn of a thread the turn it replies to
-- (memloom_items.context, 03_pool.sql). A question and its answer are two turns: the answer
-- rarely repeats the question's words ("5 years already!" to "How long have you been
-- married?"), so an answer turn is found by the words of the question it answers.
CREATE FUNCTION memloom_indexed_text(content text, context text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN context IS NULL THEN content ELSE content || E'\n' || context END
$$;
COMMENT ON FUNCTION memloom_indexed_text(text, text) IS
'what an item''s keyword index (tsv) holds: its content, then on a new line its context (the turn it replies to) when it has one';

-- The heading field (BM25F) ------------------------------------------------------------------
-- A chunk's heading (the last segment of its breadcrumb) or a memory's key names what the item
-- is about: a query term found there is worth more than one found in passing in the text (web
-- and site search weight titles the same way). Kept as its own small tsvector, beside tsv.
CREATE FUNCTION memloom_heading(breadcrumb text, key text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(nullif(regexp_replace(breadcrumb, '^.* > ', ''), ''), key, '')
$$;
COMMENT ON FUNCTION memloom_heading(text, text) IS
'an item''s heading for the keyword arm: the last segment of a chunk''s breadcrumb, else a memory''s key';

