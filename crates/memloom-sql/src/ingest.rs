//! Ingest's write: a batch of files' chunks replaced by `memloom_replace_chunks`
//! (sql/migrations/0013_bulk_writes.sql), the same function and lock discipline the npm store uses: each
//! file's advisory lock in key order, then its chunks deleted and the given ones inserted in
//! order, in one statement.

use memloom_core::vector_text::vector_text;

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::{Error, ErrorKind};

/// One chunk to store: its heading path, its content (breadcrumb line included, as the chunker
/// makes it) and its embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChunk {
    pub breadcrumb: Option<String>,
    pub content: String,
    pub embedding: Vec<f32>,
}

/// One file of a batch: its source (path relative to the root), the SHA-256 of its text
/// (`metadata.fileHash`, hex) and its chunks in order (none: the file's chunks are removed).
#[derive(Debug, Clone, PartialEq)]
pub struct FileChunks {
    pub source: String,
    pub file_hash: String,
    pub chunks: Vec<NewChunk>,
}

/// What a replacement did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    pub deleted: i64,
    pub inserted: i64,
}

const REPLACE: &str = "SELECT deleted::bigint, inserted::bigint
  FROM memloom_replace_chunks($1, $2, $3, $4, $5, $6, $7, $8::text[]::vector[], $9)";

/// Replaces the chunks of `files` (one ingested `root`) in `namespace`: one statement, atomic
/// on its own or part of the caller's transaction. `bulk` marks the transaction a bulk load
/// (`memloom.stats_bulk`: call `memloom_refresh_stats` at the end of the load).
pub async fn replace_chunks(
    client: &Client,
    namespace: &str,
    root: &str,
    files: &[FileChunks],
    bulk: bool,
) -> Result<Replaced, Error> {
    let mut sources = Vec::with_capacity(files.len());
    let mut hashes = Vec::with_capacity(files.len());
    let (mut file_of, mut breadcrumbs, mut contents, mut vectors) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, f) in files.iter().enumerate() {
        if f.source.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "file {} has an empty source; name it by its path relative to the root",
                    i + 1
                ),
            ));
        }
        sources.push(f.source.as_str());
        hashes.push(f.file_hash.as_str());
        for c in &f.chunks {
            file_of.push(i as i32 + 1);
            breadcrumbs.push(c.breadcrumb.as_deref());
            contents.push(c.content.as_str());
            vectors.push(vector_text(&c.embedding));
        }
    }
    let row = client
        .query_typed_one(
            REPLACE,
            &[
                (&namespace, Type::TEXT),
                (&root, Type::TEXT),
                (&sources, Type::TEXT_ARRAY),
                (&hashes, Type::TEXT_ARRAY),
                (&file_of, Type::INT4_ARRAY),
                (&breadcrumbs, Type::TEXT_ARRAY),
                (&contents, Type::TEXT_ARRAY),
                (&vectors, Type::TEXT_ARRAY),
                (&bulk, Type::BOOL),
            ],
        )
        .await
        .map_err(|e| Error::db("replacing chunks failed", e))?;
    let bad = |e: tokio_postgres::Error| {
        Error::db("memloom_replace_chunks returned an unexpected row", e)
    };
    Ok(Replaced {
        deleted: row.try_get(0).map_err(bad)?,
        inserted: row.try_get(1).map_err(bad)?,
    })
}
