-- sql/migrations/0014_inline_vectors.sql: vectors stay in the heap row (memloom_vector_storage: PLAIN up to 1024 dimensions,
-- MAIN above or before init), so an exact vector scan reads no TOAST.
SELECT d, memloom_vector_storage(d) FROM (VALUES (NULL::integer), (256), (1024), (1025), (3072)) v(d);
CREATE FUNCTION pg_temp.toasted_values(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
    RETURN n;
END $$;
SELECT attrelid::regclass AS tab, attstorage FROM pg_attribute
WHERE attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass) AND attname = 'embedding' ORDER BY 1;

-- memloom_init_store re-types the columns (which resets a column's storage), then sets it: PLAIN.
SELECT memloom_init_store('toy-256', 1, 256, vector_index => false);
SELECT attrelid::regclass AS tab, attstorage, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid IN ('memloom_items'::regclass, 'memloom_entities'::regclass) AND attname = 'embedding' ORDER BY 1;

-- A row over 2 kB: its other large columns go out of line (two TOAST values), its vector stays.
CREATE TEMP TABLE long_row AS
SELECT (SELECT string_agg(md5(i::text), ' ') FROM generate_series(1, 80) i) AS content,
       (SELECT array_agg(sin(i)::real) FROM generate_series(1, 256) i)::vector AS embedding;
INSERT INTO memloom_items (namespace, kind, content, embedding) SELECT 'ns', 'chunk', content, embedding FROM long_row;
SELECT pg_temp.toasted_values('memloom_items') AS toast_values;

-- A store written before 0014 (vectors EXTERNAL, as pgvector's type declares): the same row
-- adds three TOAST values, its vector being the third. Applying 0014 rewrites it into the row
-- (two values per row left), bit for bit the same vector, the keyword statistics untouched.
ALTER TABLE memloom_items ALTER COLUMN embedding SET STORAGE EXTERNAL;
INSERT INTO memloom_items (namespace, kind, content, embedding) SELECT 'ns', 'chunk', content || ' old', embedding FROM long_row;
SELECT pg_temp.toasted_values('memloom_items') AS toast_values;
SELECT doc_count FROM memloom_namespace_stats WHERE namespace = 'ns';
\set ECHO none
\i sql/migrations/0014_inline_vectors.sql
\set ECHO all
SELECT attstorage FROM pg_attribute WHERE attrelid = 'memloom_items'::regclass AND attname = 'embedding';
SELECT pg_temp.toasted_values('memloom_items') AS toast_values;
SELECT count(*) AS same_vector FROM memloom_items m, long_row l WHERE m.embedding = l.embedding;
SELECT doc_count FROM memloom_namespace_stats WHERE namespace = 'ns';
SELECT id FROM memloom_fuse('zzz', (SELECT embedding FROM long_row), 'ns', 5, arms => '{vector}');
