-- memloom, the current definition, part 2 of 12: lexemes. The keyword index of a text, used
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
    -- Same token boundaries as memloom_tokens, but only tokens holding a character that some
    -- identifier pattern needs (- _ . / : digit capital) are extracted: 3x faster on prose.
    SELECT coalesce(array_agg(DISTINCT lower(p)), '{}')
    FROM (SELECT regexp_replace(m[1], '[.:]+$', '') AS t
          FROM regexp_matches(doc, '([^][[:space:](){}<>,;"''`=|*!?&+\\]*[-_./:0-9A-Z][^][[:space:](){}<>,;"''`=|*!?&+\\]*)', 'g') AS m) s,
         unnest(CASE WHEN t ~ '[/:.]'
                     THEN ARRAY[t] || regexp_split_to_array(t, '[/:]+') || regexp_split_to_array(t, '[/:.]+')
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

