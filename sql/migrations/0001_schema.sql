-- memloom schema 1: the pool (memories and chunks), entities and mentions, keyword statistics
-- and the store's embedder record. Applied by a runner that follows sql/README.md. Never edit
-- a released migration: add a new numbered file.

CREATE EXTENSION IF NOT EXISTS vector;

-- One row: the schema version and the embedder that built this store (name 'hash', version 1,
-- 256 dims = hash-v1, as memloom_core::EmbedderInfo). The embedder is NULL until
-- memloom_init_store (sql/0002) records it and sizes the vector columns; queries embedded
-- differently are refused.
CREATE TABLE memloom_meta (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    embedder_name    text    CHECK (embedder_name <> ''),
    embedder_version integer CHECK (embedder_version >= 1),
    embedder_dims    integer CHECK (embedder_dims BETWEEN 1 AND 16000),
    schema_version   integer NOT NULL,
    CHECK (num_nulls(embedder_name, embedder_version, embedder_dims) IN (0, 3))
);
INSERT INTO memloom_meta (schema_version) VALUES (1);

-- Exact identifier lexemes -------------------------------------------------------------------
-- to_tsvector('english') splits max_connections into max + connect, drops "is" from is_active
-- and keeps /etc/nginx/nginx.conf as one token. memloom_tsvector adds every identifier
-- (lowercased, whole) as an extra lexeme next to the stemmed words, so a query made of an
-- identifier matches it exactly and nothing that merely shares its words.

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

-- The pool ---------------------------------------------------------------------------------
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
    supersedes    bigint      REFERENCES memloom_items (id),
    superseded_by bigint      REFERENCES memloom_items (id),
    content_hash  text        NOT NULL GENERATED ALWAYS AS (md5(content)) STORED,
    embedding     vector      NOT NULL,  -- vector(dims) once memloom_init_store has run
    metadata      jsonb       NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    indexed_at    timestamptz,
    tsv           tsvector    NOT NULL GENERATED ALWAYS AS (memloom_tsvector(content)) STORED
);
COMMENT ON TABLE memloom_items IS
'the pool: memories (kind memory, optional key, versioned) and document chunks (kind chunk); every read and write is scoped to one namespace';

-- At most one active version per (namespace, key), even under concurrent writers.
CREATE UNIQUE INDEX memloom_items_active_key ON memloom_items (namespace, key)
    WHERE status = 'active' AND key IS NOT NULL;
CREATE UNIQUE INDEX memloom_items_key_version ON memloom_items (namespace, key, version)
    WHERE key IS NOT NULL;
CREATE INDEX memloom_items_source ON memloom_items (namespace, source);
CREATE INDEX memloom_items_unindexed ON memloom_items (namespace, id) WHERE indexed_at IS NULL;
-- The HNSW index (memloom_items_embedding) needs the dimensions: memloom_ensure_vector_index.
CREATE INDEX memloom_items_tsv ON memloom_items USING gin (tsv);

-- Entities and mention edges ---------------------------------------------------------------
CREATE TABLE memloom_entities (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace  text        NOT NULL,
    name       text        NOT NULL,
    kind       text        NOT NULL,
    embedding  vector      NOT NULL,  -- vector(dims) once memloom_init_store has run
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (namespace, name, kind)
);

CREATE TABLE memloom_mentions (
    entity_id bigint NOT NULL REFERENCES memloom_entities (id) ON DELETE CASCADE,
    item_id   bigint NOT NULL REFERENCES memloom_items (id) ON DELETE CASCADE,
    strength  real   NOT NULL CHECK (strength > 0 AND strength <= 1),
    PRIMARY KEY (entity_id, item_id)
);
CREATE INDEX memloom_mentions_item ON memloom_mentions (item_id);

-- Keyword statistics (BM25 document frequencies), refreshed by memloom_refresh_stats ------
CREATE TABLE memloom_term_stats (
    namespace text    NOT NULL,
    lexeme    text    NOT NULL,
    df        integer NOT NULL,
    PRIMARY KEY (namespace, lexeme)
);
CREATE TABLE memloom_namespace_stats (
    namespace    text PRIMARY KEY,
    doc_count    bigint           NOT NULL,
    avg_doc_len  double precision NOT NULL,
    refreshed_at timestamptz      NOT NULL DEFAULT now()
);
