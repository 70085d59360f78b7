//! The fetch handler (wasm32 only). It reads the configuration once, at the door
//! ([`WorkerConfig::read`]: vars, secrets and the Hyperdrive binding), routes, authenticates and
//! hands each route a small [`RequestCx`]; nothing below this file reads `env`.
//!
//! - `store`: every database call (one scoped connection per request), for REST and MCP alike;
//! - `embed`: the query embedding (hash-v1, or the configured API);
//! - `mcp_http`: `POST /mcp`, on the store layer;
//! - `http`: the platform's request and response (web-sys), `context`: the request context.
//!
//! Every failure becomes an [`ApiError`] response; nothing here unwraps data, because a panic
//! in workerd hangs the request and resets the module.

use worker::wasm_bindgen::{self, prelude::wasm_bindgen, JsValue};
use worker::{Context, Env};

use crate::api::{self, DatabaseHealth, EmbedderHealth, HealthResponse, MemoryResponse};
use crate::auth;
use crate::config::{sql_identity, HyperdriveBinding, WorkerConfig};
use crate::error::ApiError;
use crate::log::RequestLog;
use crate::route::{route, Route, OPENAPI_JSON};

mod context;
mod embed;
mod http;
mod mcp_http;
mod store;

use context::{now, RequestCx};
use http::{
    error_response, header, path_of, read_body, respond, respond_retry, to_json, Request, Response,
};

/// The module's `fetch` export, which `js/entry.mjs` forwards every request to (what workers-rs'
/// `#[event(fetch)]` generates, minus its conversion to and from workers-rs' `Request` and
/// `Response`, which links their streaming bodies).
#[wasm_bindgen(
    wasm_bindgen = wasm_bindgen,
    wasm_bindgen_futures = worker::wasm_bindgen_futures,
    js_sys = worker::js_sys
)]
pub async fn fetch(
    req: Request,
    env: Env,
    ctx: worker::worker_sys::Context,
) -> Result<JsValue, JsValue> {
    let ctx = Context::new(ctx);
    handle(req, env, ctx).await.map(JsValue::from)
}

async fn handle(req: Request, env: Env, ctx: Context) -> Result<Response, JsValue> {
    let start = now();
    let config = read_config(&env);
    let method = req.method();
    let mut cx = RequestCx {
        config: &config,
        ctx: &ctx,
        start,
        log: RequestLog {
            method: method.clone(),
            route: "unknown",
            ..RequestLog::default()
        },
    };
    let outcome = match route(&method, &path_of(&req.url())) {
        Ok(r) => {
            cx.log.route = r.name();
            dispatch(r, req, &mut cx).await
        }
        Err(e) => Err(e),
    };
    let response = match outcome {
        Ok(resp) => Ok(resp),
        Err(e) => {
            cx.log.code = Some(e.code);
            error_response(&e)
        }
    };
    let status = response.as_ref().map_or(500, Response::status);
    cx.log.total_ms = cx.elapsed();
    worker::console_log!("{}", cx.log.finish(status).line());
    response
}

/// The one place that reads `env`: every var and secret the worker knows, and the `DB`
/// Hyperdrive binding.
fn read_config(env: &Env) -> WorkerConfig {
    let hyperdrive = env.hyperdrive("DB").ok().map(|hd| HyperdriveBinding {
        connection_string: hd.connection_string(),
        host: hd.host(),
        port: hd.port(),
    });
    WorkerConfig::read(
        |name| {
            env.var(name)
                .ok()
                .map(|v| v.to_string())
                .filter(|v| !v.is_empty())
        },
        hyperdrive,
    )
}

async fn dispatch(r: Route, req: Request, cx: &mut RequestCx<'_>) -> Result<Response, ApiError> {
    if r == Route::OpenApi {
        return respond(200, OPENAPI_JSON.to_string());
    }
    if r == Route::Health {
        return handle_health(cx).await;
    }
    let namespace = authenticate(&req, cx)?;
    cx.log.namespace = Some(namespace.clone());
    if r == Route::Mcp {
        return mcp_http::handle_mcp(req, &namespace, cx).await;
    }
    let body = read_body(&req, &mut cx.log).await?;
    match r {
        Route::Recall => handle_recall(&body, &namespace, cx).await,
        _ => handle_remember(&body, &namespace, cx).await,
    }
}

/// `POST /v1/recall`: embed the query, then one `memloom_fuse` (pipelined with the embedder
/// check, so one network round trip after the startup).
async fn handle_recall(
    body: &[u8],
    namespace: &str,
    cx: &mut RequestCx<'_>,
) -> Result<Response, ApiError> {
    let recall = api::parse_recall(body)?;
    let (rows, embedder, embed_ms) = store::recall(cx, &recall, namespace).await?;
    let explain = recall.explain(
        embedder.id(),
        embed_ms,
        cx.log.query_ms.unwrap_or(0),
        Some(cx.log.connect_ms.unwrap_or(0)),
    );
    let out = api::recall_response(&recall, &rows, cx.elapsed(), explain);
    respond(200, to_json(&out)?)
}

/// `POST /v1/memories`: embed the text, then `memloom_remember` (which supersedes the key's
/// active version in the same transaction).
async fn handle_remember(
    body: &[u8],
    namespace: &str,
    cx: &mut RequestCx<'_>,
) -> Result<Response, ApiError> {
    let memory = api::parse_memory(body)?;
    let saved = store::remember(cx, &memory, namespace).await?;
    let out = MemoryResponse {
        id: saved.id,
        version: saved.version,
        key: memory.key.as_deref(),
        took_ms: cx.elapsed(),
    };
    respond(201, to_json(&out)?)
}

/// `GET /v1/health`: can the database be reached, which schema and embedder does it have.
async fn handle_health(cx: &mut RequestCx<'_>) -> Result<Response, ApiError> {
    let embedder = store::embedder(cx)?;
    let via = cx.config.via;
    let meta = store::store_meta(cx).await;
    let took_ms = cx.elapsed();
    let (status, body) = match meta {
        Ok((name, version, dims, schema)) => {
            let store = (name, version, dims);
            let matches = store == sql_identity(&embedder);
            let health = HealthResponse {
                status: "ok",
                database: DatabaseHealth {
                    reachable: true,
                    via,
                    schema_version: Some(schema),
                },
                embedder: EmbedderHealth {
                    worker: embedder.id(),
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
                    worker: embedder.id(),
                    store: None,
                    matches: None,
                },
                took_ms,
            };
            return respond_retry(503, to_json(&health)?, &e);
        }
        Err(e) => return Err(e),
    };
    respond(status, body)
}

/// The namespace of the request's bearer token.
fn authenticate(req: &Request, cx: &mut RequestCx<'_>) -> Result<String, ApiError> {
    let authorization = header(req, "authorization");
    let token = auth::bearer_token(authorization.as_deref())?;
    let config = cx.config;
    let map = match &config.tokens {
        Ok(map) => map,
        Err(e) => return Err(cx.misconfigured(e)),
    };
    map.namespace(token)
        .map(str::to_string)
        .ok_or_else(auth::unknown_token)
}
