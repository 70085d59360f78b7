//! The fetch handler (wasm32 only): routes, auth, the query embedding, and Postgres over a
//! workerd TCP socket. Every failure becomes an [`ApiError`] response; nothing here unwraps
//! data, because a panic in workerd hangs the request and resets the module.

use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use futures_util::future::{join, select, Either};
use futures_util::StreamExt;
use tokio_postgres::types::Type;
use tokio_postgres::Client;
use worker::postgres_tls::PassthroughTls;
use worker::{
    event, Context, Date, Delay, Env, Headers, Request, Response, SecureTransport, Socket,
};

use crate::api::{self, DatabaseHealth, EmbedderHealth, Explain, HealthResponse, MemoryResponse};
use crate::auth::{self, TokenMap};
use crate::config::{self, DbTarget, EmbedderConfig, Timeouts, DEFAULT_EMBED_TIMEOUT_MS};
use crate::error::{self, ApiError};
use crate::log::RequestLog;
use crate::route::{route, Route};

mod mcp_http;

const OPENAPI: &str = include_str!("../openapi.json");

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let start = now();
    let method = req.method().to_string();
    let mut log = RequestLog {
        method: method.clone(),
        route: "unknown",
        ..RequestLog::default()
    };
    let outcome = match route(&method, &req.path()) {
        Ok(r) => {
            log.route = r.name();
            dispatch(r, req, &env, &ctx, &mut log, start).await
        }
        Err(e) => Err(e),
    };
    let response = match outcome {
        Ok(resp) => Ok(resp),
        Err(e) => {
            log.code = Some(e.code);
            error_response(&e)
        }
    };
    let status = response.as_ref().map_or(500, Response::status_code);
    log.total_ms = now().saturating_sub(start);
    worker::console_log!("{}", log.finish(status).line());
    response
}

async fn dispatch(
    r: Route,
    mut req: Request,
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
    start: u64,
) -> Result<Response, ApiError> {
    if r == Route::OpenApi {
        return respond(200, OPENAPI.to_string());
    }
    if r == Route::Health {
        return handle_health(env, ctx, log, start).await;
    }
    let namespace = authenticate(&req, env, log)?;
    log.namespace = Some(namespace.clone());
    if r == Route::Mcp {
        return mcp_http::handle_mcp(req, &namespace, env, ctx, log, start).await;
    }
    let body = read_body(&mut req, log).await?;
    match r {
        Route::Recall => handle_recall(&body, &namespace, env, ctx, log, start).await,
        _ => handle_remember(&body, &namespace, env, ctx, log, start).await,
    }
}

/// `POST /v1/recall`: embed the query, then one `memloom_fuse` (pipelined with the embedder
/// check, so one network round trip after the startup).
async fn handle_recall(
    body: &[u8],
    namespace: &str,
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
    start: u64,
) -> Result<Response, ApiError> {
    let recall = api::parse_recall(body)?;
    let (rows, embedder, embed_ms) = recall_rows(&recall, namespace, env, ctx, log).await?;
    let explain = recall.explain.then(|| Explain {
        embedder: embedder.label(),
        k: f64::from(memloom_core::fuse::DEFAULT_RRF_K),
        weights: recall.effective_weights(),
        embed_ms,
        connect_ms: log.connect_ms.unwrap_or(0),
        query_ms: log.query_ms.unwrap_or(0),
    });
    let took = now().saturating_sub(start);
    let out = api::recall_response(&recall, &rows, took, explain);
    respond(200, to_json(&out)?)
}

/// `POST /v1/memories`: embed the text, then `memloom_remember` (which supersedes the key's
/// active version in the same transaction).
async fn handle_remember(
    body: &[u8],
    namespace: &str,
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
    start: u64,
) -> Result<Response, ApiError> {
    let memory = api::parse_memory(body)?;
    let saved = save_memory(&memory, namespace, env, ctx, log).await?;
    let out = MemoryResponse {
        id: saved.id,
        version: saved.version,
        key: memory.key.as_deref(),
        took_ms: now().saturating_sub(start),
    };
    respond(201, to_json(&out)?)
}

/// Recall for `/v1/recall` and the MCP `recall` tool: embed the query (timed), then one
/// `memloom_fuse` pipelined with the embedder check. Returns the rows, the embedder and the
/// embedding time.
async fn recall_rows(
    recall: &api::Recall,
    namespace: &str,
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
) -> Result<(Vec<memloom_sql::FusedRow>, EmbedderConfig, u64), ApiError> {
    log.query_chars = Some(recall.query.chars().count());
    let embedder = embedder_config(env, log)?;
    let t = now();
    let embedding = embed_query(&embedder, &recall.query, env, log).await?;
    let embed_ms = now().saturating_sub(t);
    log.embed_ms = Some(embed_ms);
    let params = recall.fuse_params(embedding, namespace);
    let identity = embedder.identity();
    let rows = with_db(env, ctx, log, Some(namespace), move |client| async move {
        let check = check_embedder(&client, &identity);
        let fuse = memloom_sql::fuse(&client, &params);
        let (checked, fused) = join(check, fuse).await;
        checked?;
        fused.map_err(|e| store_error(&e))
    })
    .await?;
    log.results = Some(rows.len());
    Ok((rows, embedder, embed_ms))
}

/// Remember for `/v1/memories` and the MCP `remember` tool: embed the text (timed), then
/// `memloom_remember` (superseding the key's active version) pipelined with the embedder check.
async fn save_memory(
    memory: &api::Memory,
    namespace: &str,
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
) -> Result<memloom_sql::Remembered, ApiError> {
    log.query_chars = Some(memory.text.chars().count());
    let embedder = embedder_config(env, log)?;
    let t = now();
    let embedding = embed_query(&embedder, &memory.text, env, log).await?;
    log.embed_ms = Some(now().saturating_sub(t));
    let identity = embedder.identity();
    let ns = namespace.to_string();
    let (text, key) = (memory.text.clone(), memory.key.clone());
    with_db_write(env, ctx, log, namespace, |client| {
        let (identity, ns, key, text, embedding) = (
            identity.clone(),
            ns.clone(),
            key.clone(),
            text.clone(),
            embedding.clone(),
        );
        async move {
            let check = check_embedder(&client, &identity);
            let save = memloom_sql::remember(&client, &ns, key.as_deref(), &text, &embedding, None);
            let (checked, saved) = join(check, save).await;
            checked?;
            saved.map_err(|e| store_error(&e))
        }
    })
    .await
}

/// [`with_db`] for a write: a transaction that lost a race (deadlock, serialization failure:
/// [`ApiError::write_conflict`]) was rolled back whole, so it runs again on a new connection,
/// up to [`memloom_sql::WRITE_ATTEMPTS`] times with a short jittered pause; after the last,
/// the client gets 409 with Retry-After (never 500).
async fn with_db_write<T, F, Fut>(
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
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
        match with_db(env, ctx, log, Some(namespace), &work).await {
            Err(e) if e.code == error::WRITE_CONFLICT && attempt < memloom_sql::WRITE_ATTEMPTS => {
                let pause = memloom_sql::backoff(attempt, seed);
                Delay::from(pause).await;
                attempt += 1;
            }
            Err(e) if e.code == error::WRITE_CONFLICT => {
                log.detail = Some(format!("write conflict on all {attempt} attempts"));
                return Err(e);
            }
            out => return out,
        }
    }
}

/// `GET /v1/health`: can the database be reached, which schema and embedder does it have.
async fn handle_health(
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
    start: u64,
) -> Result<Response, ApiError> {
    let embedder = embedder_config(env, log)?;
    let via = if env.hyperdrive("DB").is_ok() {
        "hyperdrive"
    } else {
        "database_url"
    };
    let meta = with_db(env, ctx, log, None, |client| async move {
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
    .await;
    let took_ms = now().saturating_sub(start);
    let (status, body) = match meta {
        Ok((name, version, dims, schema)) => {
            let store = (name, version, dims);
            let matches = store == embedder.identity();
            let health = HealthResponse {
                status: "ok",
                database: DatabaseHealth {
                    reachable: true,
                    via,
                    schema_version: Some(schema),
                },
                embedder: EmbedderHealth {
                    worker: embedder.label(),
                    store: Some(format!("{}-v{} ({} dimensions)", store.0, store.1, store.2)),
                    matches: Some(matches),
                },
                took_ms,
            };
            (200, to_json(&health)?)
        }
        Err(e) if e.status == 503 => {
            let health = HealthResponse {
                status: "unavailable",
                database: DatabaseHealth {
                    reachable: false,
                    via,
                    schema_version: None,
                },
                embedder: EmbedderHealth {
                    worker: embedder.label(),
                    store: None,
                    matches: None,
                },
                took_ms,
            };
            let resp = respond(503, to_json(&health)?)?;
            return with_retry_after(resp, &e);
        }
        Err(e) => return Err(e),
    };
    respond(status, body)
}

/// The namespace of the request's bearer token.
fn authenticate(req: &Request, env: &Env, log: &mut RequestLog) -> Result<String, ApiError> {
    let header = req.headers().get("authorization").ok().flatten();
    let token = auth::bearer_token(header.as_deref())?;
    let raw = binding(env, "MEMLOOM_TOKENS")
        .ok_or_else(|| ApiError::misconfigured("the MEMLOOM_TOKENS secret is not set"))?;
    let map = TokenMap::parse(&raw).map_err(|e| {
        log.detail = Some(e);
        ApiError::misconfigured("the MEMLOOM_TOKENS secret is not a valid token map")
    })?;
    map.namespace(token)
        .map(str::to_string)
        .ok_or_else(auth::unknown_token)
}

fn embedder_config(env: &Env, log: &mut RequestLog) -> Result<EmbedderConfig, ApiError> {
    EmbedderConfig::from_vars(
        binding(env, "MEMLOOM_EMBED_URL").as_deref(),
        binding(env, "MEMLOOM_EMBED_MODEL").as_deref(),
        binding(env, "MEMLOOM_EMBED_DIMS").as_deref(),
    )
    .map_err(|e| {
        log.detail = Some(e);
        ApiError::misconfigured("the embedder settings (MEMLOOM_EMBED_*) are invalid")
    })
}

/// hash-v1 in WebAssembly (bit-identical to the npm build), or one call of the configured API.
async fn embed_query(
    embedder: &EmbedderConfig,
    text: &str,
    env: &Env,
    log: &mut RequestLog,
) -> Result<Vec<f32>, ApiError> {
    let EmbedderConfig::Api { endpoint, dims, .. } = embedder else {
        return Ok(memloom_core::embed(text));
    };
    let failed = |detail: String, log: &mut RequestLog| {
        log.detail = Some(detail);
        ApiError::new(
            502,
            "embedding_failed",
            "the embeddings API did not return a usable embedding; retry, or check the worker's MEMLOOM_EMBED_* settings",
        )
    };
    let body = embedder.request_body(text).unwrap_or_default();
    let key = binding(env, "MEMLOOM_EMBED_KEY");
    let (status, bytes) = match timeout(
        DEFAULT_EMBED_TIMEOUT_MS,
        post_json(endpoint, &body, key.as_deref()),
    )
    .await
    {
        Some(Ok(answer)) => answer,
        Some(Err(e)) => return Err(failed(format!("embeddings API: {e}"), log)),
        None => return Err(failed("embeddings API timed out".into(), log)),
    };
    if status != 200 {
        let detail = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).to_string();
        return Err(failed(
            format!("embeddings API answered {status}: {detail}"),
            log,
        ));
    }
    config::parse_embedding(&bytes, *dims).map_err(|e| failed(e, log))
}

/// POSTs JSON with the platform's `fetch` (web-sys directly: workers-rs' `RequestInit` carries
/// Cloudflare's image-resizing options and their serializers, which cost bundle size).
async fn post_json(url: &str, body: &str, key: Option<&str>) -> Result<(u16, Vec<u8>), String> {
    use worker::wasm_bindgen::{JsCast, JsValue};
    use worker::wasm_bindgen_futures::JsFuture;
    use worker::{js_sys, web_sys};
    let js = |e: JsValue| {
        e.as_string()
            .unwrap_or_else(|| "a JavaScript error".to_string())
    };
    let headers = web_sys::Headers::new().map_err(js)?;
    headers
        .set("content-type", "application/json")
        .map_err(js)?;
    if let Some(key) = key {
        headers
            .set("authorization", &format!("Bearer {key}"))
            .map_err(js)?;
    }
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(body));
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let resp: web_sys::Response = JsFuture::from(global.fetch_with_str_and_init(url, &init))
        .await
        .map_err(js)?
        .dyn_into()
        .map_err(js)?;
    let buffer = JsFuture::from(resp.array_buffer().map_err(js)?)
        .await
        .map_err(js)?;
    Ok((resp.status(), js_sys::Uint8Array::new(&buffer).to_vec()))
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

/// Where to connect: the Hyperdrive binding `DB` when present, else the `DATABASE_URL` secret.
fn db_target(env: &Env) -> Result<DbTarget, ApiError> {
    if let Ok(hd) = env.hyperdrive("DB") {
        let mut t = config::db_target(&hd.connection_string(), "the Hyperdrive binding DB")
            .map_err(|e| ApiError::misconfigured(&e))?;
        // As Cloudflare's example: StartTLS to Hyperdrive, which answers the SSLRequest.
        t.host = hd.host();
        t.port = hd.port();
        t.config.ssl_mode(tokio_postgres::config::SslMode::Prefer);
        t.tls = true;
        return Ok(t);
    }
    let url = binding(env, "DATABASE_URL").ok_or_else(|| {
        ApiError::misconfigured("neither a Hyperdrive binding DB nor a DATABASE_URL secret is set")
    })?;
    config::db_target(&url, "DATABASE_URL").map_err(|e| ApiError::misconfigured(&e))
}

/// Opens a connection within the connect timeout, runs `work` with the client within the query
/// timeout while driving the connection in the same task, and closes it cleanly (the client is
/// dropped at the end of `work`, so tokio-postgres sends Terminate and shuts the socket).
///
/// With a `namespace`, the session is scoped to it first (`memloom.namespace`, which the
/// row-level security of sql/memloom/10_security.sql compares against): under a role bound by it, no
/// statement of this request can read or write another namespace's rows.
async fn with_db<T, F, Fut>(
    env: &Env,
    ctx: &Context,
    log: &mut RequestLog,
    namespace: Option<&str>,
    work: F,
) -> Result<T, ApiError>
where
    F: FnOnce(Rc<Client>) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let target = db_target(env)?;
    let timeouts = Timeouts::from_vars(
        binding(env, "MEMLOOM_CONNECT_TIMEOUT_MS").as_deref(),
        binding(env, "MEMLOOM_QUERY_TIMEOUT_MS").as_deref(),
    )
    .map_err(|e| ApiError::misconfigured(&e))?;
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
        timeouts.connect_ms,
        target.config.connect_raw(socket, PassthroughTls),
    )
    .await;
    log.connect_ms = Some(now().saturating_sub(t));
    let (client, connection) = match connected {
        Some(Ok(pair)) => pair,
        Some(Err(e)) => {
            log.detail = Some(format!("connecting: {e}"));
            return Err(pg_error(&e));
        }
        None => {
            log.detail = Some(format!(
                "connect timed out after {} ms",
                timeouts.connect_ms
            ));
            return Err(ApiError::unavailable(format!(
                "the database did not accept a connection within {} ms; retry shortly",
                timeouts.connect_ms
            )));
        }
    };
    let t = now();
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
            let out = work(Rc::clone(&client)).await?;
            if scope.is_some() {
                client
                    .batch_execute("COMMIT")
                    .await
                    .map_err(|e| pg_error(&e))?;
            }
            Ok::<T, ApiError>(out)
        };
        match select(Box::pin(connection), Box::pin(scoped)).await {
            Either::Left((conn, work)) => (conn.err(), work.await),
            Either::Right((result, connection)) => {
                ctx.wait_until(async move {
                    let _ = timeout(1_000, connection).await;
                });
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

/// The request body as it streams in, within the request limits of [`api`]: 413 when it is
/// over [`api::MAX_BODY_BYTES`] (by `Content-Length` at once; a body sent without one is kept
/// only up to the limit and the rest read and dropped), 408 `body_timeout` when it has not all
/// arrived within [`api::BODY_TIMEOUT_MS`].
async fn read_body(req: &mut Request, log: &mut RequestLog) -> Result<Vec<u8>, ApiError> {
    let length = req.headers().get("content-length").ok().flatten();
    api::check_size(length.as_deref())?;
    if req.inner().body().is_none() {
        return Ok(Vec::new());
    }
    if length.is_some() {
        // The size is known and checked: read it whole, under the deadline.
        return match timeout(api::BODY_TIMEOUT_MS, req.bytes()).await {
            Some(Ok(body)) => Ok(body),
            Some(Err(e)) => {
                log.detail = Some(format!("reading the body: {e}"));
                Err(ApiError::bad_request(
                    "invalid_body",
                    "the request body could not be read",
                ))
            }
            None => {
                log.detail = Some(format!(
                    "the body was not complete after {} ms",
                    api::BODY_TIMEOUT_MS
                ));
                Err(ApiError::body_timeout(api::BODY_TIMEOUT_MS))
            }
        };
    }
    let unreadable = |e: worker::Error| {
        (
            ApiError::bad_request("invalid_body", "the request body could not be read"),
            format!("reading the body: {e}"),
        )
    };
    let mut stream = match req.stream() {
        Ok(stream) => stream,
        Err(e) => {
            let (e, detail) = unreadable(e);
            log.detail = Some(detail);
            return Err(e);
        }
    };
    let mut over = 0usize;
    let read = async {
        let mut body = Vec::new();
        while let Some(piece) = stream.next().await {
            let piece = piece.map_err(unreadable)?;
            if over > 0 || body.len() + piece.len() > api::MAX_BODY_BYTES {
                // Past the limit: nothing more is kept, but the rest is read (within the
                // deadline) so the client gets its 413 instead of a reset connection.
                over += piece.len();
                continue;
            }
            body.extend_from_slice(&piece);
        }
        Ok(body)
    };
    let outcome = timeout(api::BODY_TIMEOUT_MS, read).await;
    if over > 0 {
        log.detail = Some(format!("body over the limit by {over} bytes or more"));
        return Err(ApiError::too_large(api::MAX_BODY_BYTES));
    }
    match outcome {
        Some(Ok(body)) => Ok(body),
        Some(Err((e, detail))) => {
            log.detail = Some(detail);
            Err(e)
        }
        None => {
            log.detail = Some(format!(
                "the body was not complete after {} ms",
                api::BODY_TIMEOUT_MS
            ));
            Err(ApiError::body_timeout(api::BODY_TIMEOUT_MS))
        }
    }
}

/// `fut`'s output, or `None` when `ms` pass first.
async fn timeout<F: Future>(ms: u32, fut: F) -> Option<F::Output> {
    let fut = std::pin::pin!(fut);
    let delay = std::pin::pin!(Delay::from(Duration::from_millis(u64::from(ms))));
    match select(fut, delay).await {
        Either::Left((out, _)) => Some(out),
        Either::Right(_) => None,
    }
}

/// A string var or secret.
fn binding(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
}

fn now() -> u64 {
    Date::now().as_millis()
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|_| ApiError::internal())
}

fn respond(status: u16, body: String) -> Result<Response, ApiError> {
    let headers = Headers::new();
    let _ = headers.set("content-type", "application/json; charset=utf-8");
    let _ = headers.set("cache-control", "no-store");
    Response::from_bytes(body.into_bytes())
        .map(|r| r.with_status(status).with_headers(headers))
        .map_err(|_| ApiError::internal())
}

fn with_retry_after(resp: Response, e: &ApiError) -> Result<Response, ApiError> {
    let mut resp = resp;
    if let Some(secs) = e.retry_after {
        let _ = resp.headers_mut().set("retry-after", &secs.to_string());
    }
    Ok(resp)
}

fn error_response(e: &ApiError) -> worker::Result<Response> {
    let mut resp = match respond(e.status, e.body()) {
        Ok(r) => r,
        Err(_) => return Response::error("internal error", 500),
    };
    if let Some(secs) = e.retry_after {
        let _ = resp.headers_mut().set("retry-after", &secs.to_string());
    }
    if e.status == 401 {
        let _ = resp
            .headers_mut()
            .set("www-authenticate", "Bearer realm=\"memloom\"");
    }
    Ok(resp)
}
