//! memloom's pure core: everything that decides *what* is stored and *how* results are ordered,
//! with no I/O, no async and no logging, so that the same code runs natively, in Node, in the
//! browser and in the edge worker (WebAssembly) and gives bit-identical answers everywhere.
//!
//! The modules follow the pipeline:
//! - [`chunk`]: markdown / plain text -> chunks with heading breadcrumbs;
//! - [`embed`]: the deterministic offline embedders, `hash-v1` and `static-v1`, and the rules
//!   of an OpenAI-compatible embeddings API (which embedder the settings select, its request
//!   and response);
//! - [`fuse`]: weighted reciprocal-rank fusion of the recall arms, and each arm's explain term;
//! - [`instant`]: the ISO 8601 instants a recall (`asOf`, `since`, `until`) and a memory
//!   (`at`) take, in UTC milliseconds;
//! - [`recall_text`]: a recall as the text an agent reads (citations), and remember's answer;
//! - [`vector_text`]: pgvector's text form of a vector, as the front doors that bind text write
//!   it into SQL (the edge worker, memloom-sql);
//! - [`vector_binary`]: vectors in PostgreSQL's binary parameter form, as the npm package sends
//!   them.

pub mod chunk;
pub mod embed;
pub mod entity;
mod error;
pub mod fuse;
pub mod instant;
pub mod recall_text;
pub mod vector_binary;
pub mod vector_text;

pub use chunk::{chunk_document, chunk_markdown, chunk_plain_text, Chunk, ChunkOptions};
pub use embed::{
    choose_embedder, embed, unknown_embedder, ApiEmbedder, EmbedderChoice, EmbedderInfo,
    EmbedderSettings, StaticModel, StaticVersion, HASH_V1, STATIC_V1, STATIC_V2,
};
pub use entity::{extract_entities, extract_entities_batch, EntityKind, Mention};
pub use error::{Error, ErrorKind};
pub use fuse::{
    explain_terms, fuse, ArmRankings, ArmTerm, ArmTerms, FuseParams, Fused, Ranks, Weights,
};
pub use instant::{check_window, not_an_instant, parse_instant, Instant, InstantForms};
