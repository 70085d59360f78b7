//! memloom's edge worker: `POST /v1/recall`, `POST /v1/memories` and `GET /v1/health` on
//! Cloudflare Workers (workerd), reaching PostgreSQL over a TCP socket (a Hyperdrive binding or
//! a `DATABASE_URL` secret) and answering each recall with ONE `memloom_fuse` call.
//!
//! The modules below are pure and build natively, so `cargo test -p edge-worker` tests request
//! parsing, validation, auth and error mapping without workerd. Only [`worker`] (wasm32) touches
//! workers-rs: the fetch handler, the socket, timers and logging.

pub mod api;
pub mod auth;
pub mod config;
#[cfg(test)]
mod contracts;
pub mod error;
pub mod limits;
pub mod log;
pub mod mcp;
pub mod route;

#[cfg(target_arch = "wasm32")]
mod worker;

pub use error::ApiError;
