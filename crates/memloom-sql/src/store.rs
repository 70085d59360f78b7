//! Initialising a store: `memloom_init_store` records the embedder and sizes the vector
//! columns to its dimensions; `memloom_ensure_vector_index` builds the HNSW indexes later.

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::Error;

/// The embedder a store is built with, as `memloom_meta` records it (`hash`, 1, 256 for hash-v1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreEmbedder<'a> {
    pub name: &'a str,
    pub version: i32,
    /// Vector dimensions: 1 to 16,000 (pgvector), at most 2,000 with an HNSW index.
    pub dims: i32,
}

/// Records the embedder and makes the vector columns `vector(dims)` (while the tables are
/// empty); with `vector_index`, also builds the HNSW indexes. Idempotent for the same
/// embedder; a different one is refused with the database's error, which names both.
/// Call after [`crate::migrate`], before the first write.
pub async fn init_store(
    client: &Client,
    embedder: &StoreEmbedder<'_>,
    vector_index: bool,
) -> Result<(), Error> {
    client
        .query_typed(
            "SELECT memloom_init_store($1, $2, $3, $4)",
            &[
                (&embedder.name, Type::TEXT),
                (&embedder.version, Type::INT4),
                (&embedder.dims, Type::INT4),
                (&vector_index, Type::BOOL),
            ],
        )
        .await
        .map_err(|e| Error::db("cannot initialise the store", e))?;
    Ok(())
}

/// Builds the HNSW indexes of an initialised store that lacks them (a store initialised with
/// `vector_index = false`). Returns whether it built one.
pub async fn ensure_vector_index(client: &Client) -> Result<bool, Error> {
    let row = client
        .query_typed_one("SELECT memloom_ensure_vector_index()", &[])
        .await
        .map_err(|e| Error::db("cannot build the vector index", e))?;
    row.try_get(0)
        .map_err(|e| Error::db("memloom_ensure_vector_index returned an unexpected row", e))
}
