-- memloom, the current definition, part 13: static-v1's token table in the database, for
-- runtimes that cannot carry it (crates/memloom-core/src/embed/static_v1.rs has the algorithm).
--
-- static-v1 embeds a text as the integer sum of its WordPiece tokens' int8 rows (steps 2 and 3
-- of the algorithm), then normalises (steps 4 and 5). The table is 7.8 MB: the npm package ships
-- it as a file, but the edge worker's bundle must stay small (Cloudflare: 3 MB gzipped on the
-- free plan). So a server store made with static-v1 also holds the table here, loaded once by
-- memloom_load_static_table from the same file, and the worker tokenizes the query itself (its
-- vocabulary from memloom_static_vocabulary, read once per isolate), reads its tokens' rows
-- (memloom_static_rows_for: 256 bytes each) and sums and finishes them with the core's own
-- code, so the vector is the same bits as everywhere else.
--
-- Model data, not a tenant's: readable by every role, written only by the owner.

CREATE TABLE memloom_static_table (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    format     integer NOT NULL,
    dims       integer NOT NULL,
    vocab_size integer NOT NULL,
    first_id   integer NOT NULL,
    unk_id     integer NOT NULL,
    checksum   numeric NOT NULL,   -- the header's XXH64 of the body (u64), as the core's STATIC_V1_TABLE_CHECKSUM
    vocabulary text    NOT NULL,   -- the tokens in id order, one per line (no final newline)
    loaded_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE memloom_static_table IS
'static-v1''s table header and vocabulary (one row, once loaded by memloom_load_static_table); its rows are memloom_static_rows';

CREATE TABLE memloom_static_rows (
    token_id integer PRIMARY KEY,
    weight   integer NOT NULL CHECK (weight BETWEEN 0 AND 65535),
    vals     bytea   NOT NULL CHECK (length(vals) = 256)   -- int8 per dimension, two's complement
);
COMMENT ON TABLE memloom_static_rows IS
'static-v1''s token rows: the u16 weight and 256 int8 values of every token id >= first_id';

GRANT SELECT ON memloom_static_table, memloom_static_rows TO PUBLIC;

-- Loads (or replaces) the table from the bytes of static-v1.bin (format 1: a 48-byte header,
-- the vocabulary, the u16 weights, the int8 rows; scripts/distill-static.py writes it). The
-- caller checks the body's XXH64 before (memloom_core::StaticModel::from_bytes; the npm package
-- loads it into its wasm module first): this function checks the layout and the sizes.
CREATE FUNCTION memloom_load_static_table(bin bytea) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    u32 CONSTANT text := 'SELECT get_byte($1, $2) + (get_byte($1, $2 + 1) << 8) + (get_byte($1, $2 + 2) << 16) + (get_byte($1, $2 + 3)::bigint << 24)';
    fmt bigint; dims bigint; vocab_size bigint; first_id bigint; unk bigint; vocab_len bigint;
    checksum numeric := 0;
    nrows bigint; wbase bigint; rbase bigint; vocab text;
BEGIN
    IF bin IS NULL OR length(bin) < 48 OR substring(bin FROM 1 FOR 8) <> '\x4d4c535441544943'::bytea THEN
        RAISE EXCEPTION 'not a static embedding table (bad magic): pass the bytes of static-v1.bin as shipped with memloom'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE u32 INTO fmt USING bin, 8;
    EXECUTE u32 INTO dims USING bin, 12;
    EXECUTE u32 INTO vocab_size USING bin, 16;
    EXECUTE u32 INTO first_id USING bin, 20;
    EXECUTE u32 INTO unk USING bin, 24;
    EXECUTE u32 INTO vocab_len USING bin, 28;
    FOR i IN REVERSE 7..0 LOOP
        checksum := checksum * 256 + get_byte(bin, 32 + i);
    END LOOP;
    nrows := vocab_size - first_id;
    IF fmt <> 1 OR dims <> 256 OR nrows < 0 OR unk >= first_id
       OR length(bin) <> 48 + vocab_len + nrows * 2 + nrows * dims THEN
        RAISE EXCEPTION 'static embedding table: format %, % dimensions, % bytes: expected format 1, 256 dimensions and the sizes its header gives (truncated?)',
            fmt, dims, length(bin) USING ERRCODE = 'invalid_parameter_value';
    END IF;
    vocab := convert_from(substring(bin FROM 49 FOR vocab_len::integer), 'UTF8');
    IF right(vocab, 1) <> E'\n' THEN
        RAISE EXCEPTION 'static embedding table: the vocabulary does not end in a newline'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    vocab := left(vocab, -1);
    wbase := 48 + vocab_len;
    rbase := wbase + nrows * 2;
    DELETE FROM memloom_static_rows;
    DELETE FROM memloom_static_table;
    INSERT INTO memloom_static_table (format, dims, vocab_size, first_id, unk_id, checksum, vocabulary)
    VALUES (fmt, dims, vocab_size, first_id, unk, checksum, vocab);
    INSERT INTO memloom_static_rows (token_id, weight, vals)
    SELECT first_id + r,
           get_byte(bin, (wbase + 2 * r)::integer) + (get_byte(bin, (wbase + 2 * r + 1)::integer) << 8),
           substring(bin FROM (rbase + r * 256 + 1)::integer FOR 256)
    FROM generate_series(0, nrows - 1) r;
    RETURN nrows::integer;
END
$$;
COMMENT ON FUNCTION memloom_load_static_table(bytea) IS
'loads static-v1''s token table from the bytes of static-v1.bin (replacing any loaded one); returns the number of token rows. The npm package calls it when it initialises a server store with static-v1';

-- The rows of a tokenized text's tokens (each id once; the ids without a row, [UNK] and the
-- other ids below first_id, have none): the caller sums them (memloom_core's
-- accumulate_static_rows, exact integers) and finishes the vector.
CREATE FUNCTION memloom_static_rows_for(ids integer[])
RETURNS TABLE (token_id integer, weight integer, vals bytea)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT r.token_id, r.weight, r.vals FROM memloom_static_rows r
    WHERE r.token_id = ANY (ids)
$$;
COMMENT ON FUNCTION memloom_static_rows_for(integer[]) IS
'static-v1''s token rows (weight, 256 int8 values as bytea) for the given WordPiece ids, each id once; the caller sums them (static-v1 steps 2 and 3)';

-- What a runtime needs to tokenize and to check it has the table it was built for.
CREATE FUNCTION memloom_static_vocabulary()
RETURNS TABLE (checksum numeric, unk_id integer, first_id integer, vocabulary text)
LANGUAGE sql STABLE AS $$
    SELECT t.checksum, t.unk_id, t.first_id, t.vocabulary FROM memloom_static_table t
$$;
COMMENT ON FUNCTION memloom_static_vocabulary() IS
'static-v1''s loaded table: its checksum (compare with memloom_core::STATIC_V1_TABLE_CHECKSUM), the [UNK] id, the first id with a row and the vocabulary in id order, one token per line; no row when none is loaded';
