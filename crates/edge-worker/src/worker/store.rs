//! The store layer (wasm32): every database call of the worker, for the REST routes and the MCP
//! tools alike. One request opens one connection (the configuration's Hyperdrive binding or
//! `DATABASE_URL`, within its deadlines), runs its statements in one transaction scoped to the
//! token's namespace, and closes it cleanly. Calls go through `memloom-sql`, the one owner of how
//! memloom's SQL functions are called; errors become [`ApiError`]s by SQLSTATE.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use futures_util::future::{join, select, Either};
use tokio_postgres::types::Type;
use tokio_postgres::Client;
use worker::postgres_tls::PassthroughTls;
use worker::{Context, Delay, SecureTransport, Socket};

use crate::api;
use crate::config::{sql_identity, Database, DbTarget, EmbedderConfig};
use crate::error::{self, ApiError};
use crate::log::RequestLog;
use memloom_core::StaticVersion;

use super::context::{now, timeout, RequestCx};
use super::embed::{embed_query, embed_static};

/// What [`forget`] removes: one memory by id, or every version of a key.
pub(crate) enum ForgetTarget {
    Id(i64),
    Key(String),
}

/// Recall for `/v1/recall` and the MCP `recall` tool: embed the query (timed), then one
/// `memloom_fuse` pipelined with the embedder check (one network round trip after the
/// startup). static-v1 embeds on the connection first ([`embed_static`], pipelined with the
/// check): one round trip more. Returns the rows, the embedder and the embedding time.
pub(crate) async fn recall(
    cx: &mut RequestCx<'_>,
    recall: &api::Recall,
    namespace: &str,
) -> Result<(Vec<memloom_sql::FusedRow>, EmbedderConfig, u64), ApiError> {
    cx.log.query_chars = Some(recall.query.chars().count());
    let embedder = embedder(cx)?;
    let t = now();
    let ready = embed_before_connecting(cx, &embedder, &recall.query).await?;
    let mut embed_ms = now().saturating_sub(t);
    let identity = sql_identity(&embedder);
    let (rows, static_ms) = with_db(cx, Some(namespace), |client| async move {
        let embedding = match ready {
            Ok(embedding) => embedding,
            Err(version) => {
                let t = now();
                let (checked, embedded) = join(
                    check_embedder(&client, &identity),
                    embed_static(&client, &recall.query, version),
                )
                .await;
                checked?;
                let embedding = embedded?;
                let ms = now().saturating_sub(t);
                let rows = memloom_sql::fuse(&client, &recall.fuse_params(embedding, namespace))
                    .await
                    .map_err(|e| store_error(&e))?;
                return Ok((rows, ms));
            }
        };
        let params = recall.fuse_params(embedding, namespace);
        let check = check_embedder(&client, &identity);
        let fuse = memloom_sql::fuse(&client, &params);
        let (checked, fused) = join(check, fuse).await;
        checked?;
        Ok((fused.map_err(|e| store_error(&e))?, 0))
    })
    .await?;
    embed_ms += static_ms;
    cx.log.embed_ms = Some(embed_ms);
    cx.log.results = Some(rows.len());
    Ok((rows, embedder, embed_ms))
}

/// The embedding of `text` when it needs no database (hash-v1, an API): `Ok(vector)`; else
/// the static embedder's version (`Err(version)`: [`embed_static`] on the request's connection).
async fn embed_before_connecting(
    cx: &mut RequestCx<'_>,
    embedder: &EmbedderConfig,
    text: &str,
) -> Result<Result<Vec<f32>, StaticVersion>, ApiError> {
    if let EmbedderConfig::Static(version) = embedder {
        return Ok(Err(*version));
    }
    let key = cx.config.embed_key.as_deref();
    Ok(Ok(embed_query(embedder, key, text, &mut cx.log).await?))
}

/// Remember for `/v1/memories` and the MCP `remember` tool: embed the text (timed), then
/// `memloom_remember` (superseding the key's active version) pipelined with the embedder check.
pub(crate) async fn remember(
    cx: &mut RequestCx<'_>,
    memory: &api::Memory,
    namespace: &str,
) -> Result<memloom_sql::Remembered, ApiError> {
    cx.log.query_chars = Some(memory.text.chars().count());
    let embedder = embedder(cx)?;
    let t = now();
    let ready = embed_before_connecting(cx, &embedder, &memory.text).await?;
    cx.log.embed_ms = Some(now().saturating_sub(t));
    let identity = sql_identity(&embedder);
    let ns = namespace.to_string();
    let (text, key, at) = (memory.text.clone(), memory.key.clone(), memory.at.clone());
    with_db_write(cx, namespace, |client| {
        let (identity, ns, key, text, ready, at) = (
            identity.clone(),
            ns.clone(),
            key.clone(),
            text.clone(),
            ready.clone(),
            at.clone(),
        );
        async move {
            let check = check_embedder(&client, &identity);
            // A query-side vector (hash-v1, an API): the check is pipelined with the write, one
            // round trip. static-v1 embeds from the store's table: the check first, so a store
            // built otherwise says so before its table is read.
            let (pipelined, embedding) = match ready {
                Ok(embedding) => (Some(check), embedding),
                Err(version) => {
                    check.await?;
                    (None, embed_static(&client, &text, version).await?)
                }
            };
            let save = memloom_sql::remember_at(
                &client,
                &ns,
                key.as_deref(),
                &text,
                &embedding,
                None,
                at.as_deref(),
            );
            let saved = match pipelined {
                Some(check) => {
                    let (checked, saved) = join(check, save).await;
                    checked?;
                    saved
                }
                None => save.await,
            };
            saved.map_err(|e| store_error(&e))
        }
    })
    .await
}

/// `memloom_forget` of a memory id or of every version of a key (retried as a write).
pub(crate) async fn forget(
    cx: &mut RequestCx<'_>,
    namespace: &str,
    target: &ForgetTarget,
) -> Result<memloom_sql::Forgotten, ApiError> {
    let ns = namespace.to_string();
    with_db_write(cx, namespace, |client| {
        let ns = ns.clone();
        async move {
            let target = match target {
                ForgetTarget::Id(id) => memloom_sql::ForgetTarget::Id(*id),
                ForgetTarget::Key(key) => memloom_sql::ForgetTarget::Key(key),
            };
            memloom_sql::forget(&client, &ns, &target)
                .await
                .map_err(|e| store_error(&e))
        }
    })
    .await
}

/// A key's versions, oldest first (`memloom_history`).
pub(crate) async fn history(
    cx: &mut RequestCx<'_>,
    namespace: &str,
    key: &str,
) -> Result<Vec<memloom_sql::MemoryVersion>, ApiError> {
    let (ns, k) = (namespace.to_string(), key.to_string());
    with_db(cx, Some(namespace), move |client| async move {
        memloom_sql::history(&client, &ns, &k)
            .await
            .map_err(|e| store_error(&e))
    })
    .await
}

/// The store's schema and embedder, for `/v1/health`: `(name, version, dims, schema_version)`.
pub(crate) async fn store_meta(
    cx: &mut RequestCx<'_>,
) -> Result<(String, i32, i32, i32), ApiError> {
    with_db(cx, None, |client| async move {
        let row = client
            .query_typed_one(
                "SELECT embedder_name, embedder_version, embedder_dims, schema_version FROM memloom_meta",
                &[],
            )
            .await
            .map_err(|e| pg_error(&e))?;
        let get = |i: usize| row.try_get::<_, i32>(i).map_err(|e| pg_error(&e));
        let name: String = row.try_get(0).map_err(|e| pg_error(&e))?;
        Ok((name, get(1)?, get(2)?, get(3)?))
    })
    .await
}

/// The configured embedder, or 500 `misconfigured`.
pub(crate) fn embedder(cx: &mut RequestCx<'_>) -> Result<EmbedderConfig, ApiError> {
    let config = cx.config;
    match &config.embedder {
        Ok(e) => Ok(e.clone()),
        Err(e) => Err(cx.misconfigured(e)),
    }
}

/// [`with_db`] for a write: a transaction that lost a race (deadlock, serialization failure:
/// [`ApiError::write_conflict`]) was rolled back whole, so it runs again on a new connection,
/// up to [`memloom_sql::WRITE_ATTEMPTS`] times with a short jittered pause; after the last,
/// the client gets 409 with Retry-After (never 500).
async fn with_db_write<T, F, Fut>(
    cx: &mut RequestCx<'_>,
    namespace: &str,
    work: F,
) -> Result<T, ApiError>
where
    F: Fn(Rc<Client>) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let seed = now();
    let mut attempt = 1;
    loop {
        match with_db(cx, Some(namespace), &work).await {
            Err(e) if e.code == error::WRITE_CONFLICT && attempt < memloom_sql::WRITE_ATTEMPTS => {
                let pause = memloom_sql::backoff(attempt, seed);
                Delay::from(pause).await;
                attempt += 1;
            }
            Err(e) if e.code == error::WRITE_CONFLICT => {
                cx.log.detail = Some(format!("write conflict on all {attempt} attempts"));
                return Err(e);
            }
            out => return out,
        }
    }
}

/// Opens a connection within the connect timeout, runs `work` with the client within the query
/// timeout while driving the connection in the same task, and closes it cleanly (the client is
/// dropped at the end of `work`, so tokio-postgres sends Terminate and shuts the socket).
///
/// With a `namespace`, the session is scoped to it first (`memloom.namespace`, which the
/// row-level security of sql/0005_rls.sql compares against): under a role bound by it, no
/// statement of this request can read or write another namespace's rows.
///
/// Only this wrapper is generic (it keeps `work`'s result): the connection, the transaction and
/// the deadlines ([`run_scoped`]) are compiled once, not once per caller (the worker's bundle
/// size, docs/WORKER.md).
async fn with_db<T, F, Fut>(
    cx: &mut RequestCx<'_>,
    namespace: Option<&str>,
    work: F,
) -> Result<T, ApiError>
where
    F: FnOnce(Rc<Client>) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let mut out = None;
    let slot = &mut out;
    run_scoped(
        cx,
        namespace,
        Box::new(move |client| {
            Box::pin(async move {
                *slot = Some(work(client).await?);
                Ok(())
            })
        }),
    )
    .await?;
    out.ok_or_else(ApiError::internal)
}

/// [`with_db`]'s work with its result kept aside: the client in, success or the error out.
type Work<'a> =
    Box<dyn FnOnce(Rc<Client>) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + 'a>> + 'a>;

/// [`with_db`] without its result type: connect, scope, run `work`, commit, close.
async fn run_scoped(
    cx: &mut RequestCx<'_>,
    namespace: Option<&str>,
    work: Work<'_>,
) -> Result<(), ApiError> {
    let config = cx.config;
    let Database { target, timeouts } = match &config.database {
        Ok(db) => db,
        Err(e) => return Err(cx.misconfigured(e)),
    };
    let (client, connection) = connect(target, timeouts.connect_ms, &mut cx.log).await?;
    let log = &mut cx.log;
    let t = now();
    let ctx = cx.ctx;
    // Drive the connection and the work in this task. When the work ends first (the usual
    // case) its client is gone, so the connection is sending Terminate and closing the socket:
    // let it finish after the response, under `wait_until`, instead of delaying the answer.
    let driven = async {
        // Scoped work runs in one transaction whose memloom.namespace is the token's (a
        // transaction, not the session: behind Hyperdrive or PgBouncer in transaction mode a
        // session setting would stay on another server connection). COMMIT before answering,
        // so a 2xx write is durable; a failed request's transaction dies with the connection.
        let scope = namespace.map(str::to_string);
        let scoped = async move {
            let client = Rc::new(client);
            if let Some(ns) = &scope {
                memloom_sql::begin_scoped(&client, ns)
                    .await
                    .map_err(|e| store_error(&e))?;
            }
            work(Rc::clone(&client)).await?;
            if scope.is_some() {
                client
                    .batch_execute("COMMIT")
                    .await
                    .map_err(|e| pg_error(&e))?;
            }
            Ok::<(), ApiError>(())
        };
        match select(connection, Box::pin(scoped)).await {
            Either::Left((conn, work)) => (conn.err(), work.await),
            Either::Right((result, connection)) => {
                close_later(ctx, connection);
                (None, result)
            }
        }
    };
    let done = timeout(timeouts.query_ms, driven).await;
    log.query_ms = Some(now().saturating_sub(t));
    match done {
        Some((conn_error, result)) => {
            if let Some(e) = &conn_error {
                log.detail = Some(format!("connection: {e}"));
            }
            if let Err(e) = &result {
                if log.detail.is_none() && e.status >= 500 {
                    log.detail = Some(format!("store: {}", e.message));
                }
            }
            result
        }
        None => {
            log.detail = Some(format!("queries timed out after {} ms", timeouts.query_ms));
            Err(ApiError::unavailable(format!(
                "the database did not answer within {} ms; retry shortly",
                timeouts.query_ms
            )))
        }
    }
}

/// The connection as [`with_db`] drives it.
type Connection = Pin<Box<tokio_postgres::Connection<Socket, Socket>>>;

/// Opens the socket and runs the Postgres startup within `connect_ms`; the time goes to the log.
async fn connect(
    target: &DbTarget,
    connect_ms: u32,
    log: &mut RequestLog,
) -> Result<(Client, Connection), ApiError> {
    let t = now();
    let transport = if target.tls {
        SecureTransport::StartTls
    } else {
        SecureTransport::Off
    };
    let socket = Socket::builder()
        .secure_transport(transport)
        .connect(target.host.clone(), target.port)
        .map_err(|e| {
            log.detail = Some(format!("opening the socket: {e}"));
            ApiError::unavailable("the database is unreachable; retry shortly")
        })?;
    let connected = timeout(
        connect_ms,
        target.config.connect_raw(socket, PassthroughTls),
    )
    .await;
    log.connect_ms = Some(now().saturating_sub(t));
    match connected {
        Some(Ok((client, connection))) => Ok((client, Box::pin(connection))),
        Some(Err(e)) => {
            log.detail = Some(format!("connecting: {e}"));
            Err(pg_error(&e))
        }
        None => {
            log.detail = Some(format!("connect timed out after {connect_ms} ms"));
            Err(ApiError::unavailable(format!(
                "the database did not accept a connection within {connect_ms} ms; retry shortly"
            )))
        }
    }
}

/// Lets a connection whose client is gone send Terminate and close after the response.
fn close_later(ctx: &Context, connection: Connection) {
    ctx.wait_until(async move {
        let _ = timeout(1_000, connection).await;
    });
}

/// `memloom_check_embedder`: 409 naming both embedders when the store was built differently.
async fn check_embedder(client: &Client, identity: &(String, i32, i32)) -> Result<(), ApiError> {
    let (name, version, dims) = identity;
    client
        .query_typed(
            "SELECT memloom_check_embedder($1, $2, $3)",
            &[
                (name, Type::TEXT),
                (version, Type::INT4),
                (dims, Type::INT4),
            ],
        )
        .await
        .map(|_| ())
        .map_err(|e| pg_error(&e))
}

fn pg_error(e: &tokio_postgres::Error) -> ApiError {
    match e.as_db_error() {
        Some(db) if db.code() == &tokio_postgres::error::SqlState::DATA_EXCEPTION => {
            error::embedder_mismatch(db.message())
        }
        _ => error::from_sqlstate(e.code().map(|c| c.code())),
    }
}

fn store_error(e: &memloom_sql::Error) -> ApiError {
    match (e.kind(), e.sqlstate()) {
        (memloom_sql::ErrorKind::InvalidInput, _) => {
            ApiError::bad_request("invalid_request", e.to_string())
        }
        (_, Some("22000")) => error::embedder_mismatch(&e.to_string()),
        (_, state) => error::from_sqlstate(state),
    }
}
