//! memloom's PostgreSQL layer: the schema of `sql/` embedded at compile time (the current
//! definition and the frozen migrations), a runner that applies it under the contract in
//! `sql/README.md`, [`init_store`] (the embedder and its vector dimensions, chosen once per
//! store), and typed calls of
//! `memloom_fuse` (recall, one statement), `memloom_remember` (versioned memories) and the
//! memories' `forget` (`memloom_forget`), `forget_namespace` and `history`, and bounded retries of writes that lost
//! a race ([`retry_transient`]).
//!
//! The crate needs only a connected [`tokio_postgres::Client`]: it has no runtime of its own,
//! so the edge worker can use it on wasm32 over `Config::connect_raw`. Vectors travel as
//! `real[]` (binary `f32`, cast to `vector` in SQL), so every call is one round trip with
//! explicitly typed parameters and needs no lookup of pgvector's type oid.

mod error;
mod ingest;
mod memories;
mod migrate;
mod recall;
mod retry;
mod scope;
mod static_table;
mod store;

pub use error::{Error, ErrorKind};
pub use ingest::{replace_chunks, FileChunks, NewChunk, Replaced};
pub use memories::{
    forget, forget_namespace, history, ForgetTarget, Forgotten, MemoryVersion, NamespaceForgotten,
};
pub use migrate::{
    apply_migration, migrate, Migration, CURRENT_DEFINITION, MIGRATIONS, MIGRATION_LOCK_KEY,
};
pub use recall::{fuse, remember, remember_at, FuseParams, FusedRow, Remembered};
pub use retry::{backoff, is_transient, is_transient_sqlstate, retry_transient, WRITE_ATTEMPTS};
pub use scope::{begin_scoped, set_namespace, SCOPE_SQL};
pub use static_table::{
    load_static_table, static_rows, static_vocabulary, StaticRow, StaticVocabulary,
};
pub use store::{ensure_vector_index, init_store, StoreEmbedder};
