-- Identifier lexemes: kept whole and lowercased, with the parts of paths and dotted names.
SELECT memloom_identifiers('Edit /etc/nginx/nginx.conf and pg_hba.conf; raise max_connections.');
SELECT memloom_identifiers('require() throws ERR_REQUIRE_ESM; run with --dry-run=true; SQLSTATE 40P01.');
SELECT memloom_identifiers('fs.readFile(), is_active, node:fs, v18.0.0 and e.g. plain words.');
SELECT memloom_identifiers('no identifiers at all here.');
SELECT memloom_identifiers('');
SELECT memloom_identifiers(NULL);

-- The extraction that runs on every write (sql/0023) gives exactly the lexemes of the plain
-- definition below (every token with a capital, a . or a :, three expressions on each), on
-- every text made of three of these fragments: capitals, camelCase, digits, separators,
-- trailing dots and colons, sentence ends, leading flags and dots, paths, URLs, backslashes.
CREATE FUNCTION pg_temp.identifiers_reference(doc text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(DISTINCT lower(p)), '{}')
    FROM (SELECT regexp_replace(m[1], '[.:]+$', '') AS t
          FROM regexp_matches(doc, '([^][[:space:](){}<>,;"''`=|*!?&+\\]*[-_./:0-9A-Z][^][[:space:](){}<>,;"''`=|*!?&+\\]*)', 'g') AS m) s,
         unnest(CASE WHEN t ~ '[/:.]'
                     THEN ARRAY[t] || regexp_split_to_array(t, '[/:]+') || regexp_split_to_array(t, '[/:.]+')
                     ELSE ARRAY[t] END) AS p
    WHERE memloom_is_identifier(p)
$$;
WITH f(x) AS (VALUES ('a'), ('Ab'), ('aB'), ('ABC'), ('x1'), ('7'), ('.'), ('..'), (':'), ('/'), ('-'), ('--'),
                     ('_'), (' '), ('. '), (': '), ('e.g'), ('fs.readFile'), ('v18.0.0'), ('node:fs'),
                     ('/etc/x.conf'), ('http://h.io/p'), ('\'), ('('), ('É'), ('ß.x')),
     docs AS (SELECT a.x || b.x || c.x AS doc FROM f a, f b, f c)
SELECT count(*) AS texts,
       count(*) FILTER (WHERE memloom_identifiers(doc) IS DISTINCT FROM pg_temp.identifiers_reference(doc)) AS different,
       count(*) FILTER (WHERE cardinality(memloom_identifiers(doc)) > 0) AS with_identifiers
FROM docs;

-- The english stems stay next to them.
SELECT memloom_tsvector('Raise max_connections in /etc/nginx/nginx.conf');

-- Query terms: identifiers are exact lexemes only; other words are stems; stop words vanish.
SELECT * FROM memloom_query_terms('max_connections') ORDER BY lexeme;
SELECT * FROM memloom_query_terms('what throws ERR_HTTP_HEADERS_SENT?') ORDER BY lexeme;
SELECT * FROM memloom_query_terms('SQLSTATE 40P01') ORDER BY lexeme;
SELECT * FROM memloom_query_terms('the of and') ORDER BY lexeme;

-- Lexemes go into a tsquery verbatim, even with quotes and backslashes.
SELECT memloom_tsquery_any(ARRAY['pg_hba.conf', 'it''s', 'a\b']);
SELECT memloom_tsquery_any(ARRAY['a', 'b'], '&');
SELECT memloom_tsquery_any('{}');
-- A space or a quote inside a lexeme stays in it, wherever it stands; a repeat counts once.
SELECT memloom_tsquery_any(ARRAY['a b', 'x'' ''y', 'c', 'c']);
SELECT memloom_tsquery_any(ARRAY['x'' ''y'], '&');
-- The same lexemes as the definition (each quoted and escaped, joined by op) over random
-- lexemes of letters, quotes, spaces and backslashes; the same node count (no lexeme split).
SELECT setseed(0.32);
WITH cases AS (
    SELECT g, ARRAY(SELECT string_agg(substr('ab'' \x', 1 + floor(random() * 6)::int, 1), '')
                    FROM generate_series(1, 1 + floor(random() * 5)::int) k,
                         generate_series(1, 1 + floor(random() * 4)::int) w
                    WHERE g > 0 GROUP BY w) AS a
    FROM generate_series(1, 500) g),
defined AS (
    SELECT c.a, op,
           (SELECT string_agg('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''', ' ' || op || ' ')
            FROM unnest(c.a) AS l)::tsquery AS q
    FROM cases c, (VALUES ('|'), ('&')) o(op))
SELECT count(*) AS cases,
       count(*) FILTER (WHERE NOT (memloom_tsquery_any(a, op) @> q AND q @> memloom_tsquery_any(a, op)))
           AS other_lexemes,
       count(*) FILTER (WHERE numnode(memloom_tsquery_any(a, op))
                              <> 2 * (SELECT count(DISTINCT x) FROM unnest(a) x) - 1) AS other_nodes,
       count(*) FILTER (WHERE position((CASE op WHEN '|' THEN '&' ELSE '|' END) IN memloom_tsquery_any(a, op)::text) > 0
                              AND position((CASE op WHEN '|' THEN '&' ELSE '|' END) IN array_to_string(a, '')) = 0)
           AS other_op
FROM defined;
-- Inlined into the statement that calls it (sql/0032): no call of its own in the plan.
DO $$
DECLARE
    line text;
    inlined boolean := false;
BEGIN
    FOR line IN EXPLAIN (VERBOSE, COSTS OFF) SELECT memloom_tsquery_any(ARRAY[m.key]) FROM memloom_items m LOOP
        inlined := inlined OR (line LIKE '%regexp_replace%' AND line NOT LIKE '%memloom_tsquery_any%');
    END LOOP;
    IF NOT inlined THEN
        RAISE EXCEPTION 'memloom_tsquery_any is not inlined';
    END IF;
END
$$;

-- Term frequency recovered from ts_rank: exact up to 255 occurrences (a tsvector keeps no more
-- positions per lexeme); an exact identifier lexeme (no positions) counts once; absent is 0.
SELECT count(*) FILTER (WHERE memloom_term_freq(to_tsvector('simple', repeat('apple ', n)), 'apple') = least(n, 255)) AS exact,
       count(*) AS total
FROM generate_series(1, 300) n;
SELECT memloom_term_freq(array_to_tsvector('{max_connections}'), 'max_connections');
SELECT memloom_term_freq(to_tsvector('simple', 'pear'), 'apple');
-- The keyword arm's form of it: the count from a rank computed once (sql/0028).
SELECT memloom_tf_from_rank(0) AS absent, memloom_tf_from_rank(ts_rank(to_tsvector('simple', 'apple pear apple apple'), 'apple', 0)) AS three;

-- Fusion: ranks are positions, a repeated id keeps its first rank, absent arms add 0.
SELECT * FROM memloom_rrf('{10,20,10}', '{20}', '{}', 60, 1.0, 2.0, 0.5);
SELECT * FROM memloom_rrf('{}', '{}', '{}', 60, 1.0, 2.0, 0.5);
SELECT * FROM memloom_rrf('{1,2}', NULL, '{2,1}', 60, 1.0, 2.0, 0.5);

-- Errors say expected versus actual (on a store initialised for hash-v1).
SELECT memloom_init_store('hash', 1, 256);
SELECT * FROM memloom_fuse('x', '[1,2,3]', 'ns', 5);
SELECT memloom_check_embedder('hash', 2, 256);
SELECT * FROM memloom_remember('ns', 'k', 'text', NULL);

-- Every public function declares its volatility and has a comment.
SELECT p.proname, p.provolatile, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc p WHERE p.proname LIKE 'memloom\_%' ORDER BY 1;
