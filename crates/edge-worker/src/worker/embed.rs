//! The query embedding: hash-v1 compiled into the module (bit-identical to the npm build),
//! static-v1 with its token rows in the store (`embed/static_v1.rs`, the crate's `static-v1`
//! feature: the table is 7.8 MB, too big for the bundle, so the worker tokenizes, reads the
//! tokens' rows and the core sums and finishes them, the same bits as the npm build's), or one
//! call of the configured OpenAI-compatible API (its key from the configuration read at the door;
//! the request body and the answer's checks are memloom-core's `ApiEmbedder`, the npm package's
//! too: this file only does the call).

use crate::config::{EmbedderConfig, DEFAULT_EMBED_TIMEOUT_MS};
use crate::log::RequestLog;
use crate::ApiError;

use super::context::timeout;

/// Embeds `text`; an API failure is 502 `embedding_failed`, its detail logged.
pub(crate) async fn embed_query(
    embedder: &EmbedderConfig,
    key: Option<&str>,
    text: &str,
    log: &mut RequestLog,
) -> Result<Vec<f32>, ApiError> {
    let api = match embedder {
        EmbedderConfig::Hash => return Ok(memloom_core::embed(text)),
        EmbedderConfig::Static(_) => {
            unreachable!("the static embedders embed with the store's table: embed_static")
        }
        EmbedderConfig::Api(api) => api,
    };
    let failed = |detail: String, log: &mut RequestLog| {
        log.detail = Some(detail);
        ApiError::new(
            502,
            "embedding_failed",
            "the embeddings API did not return a usable embedding; retry, or check the worker's MEMLOOM_EMBED_* settings",
        )
    };
    let body = serde_json::to_string(&api.request(&[text])).unwrap_or_default();
    let (status, bytes) = match timeout(
        DEFAULT_EMBED_TIMEOUT_MS,
        post_json(api.endpoint(), &body, key),
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
    match api.parse_response(&mut serde_json::Deserializer::from_slice(&bytes), 1) {
        Ok(mut vectors) => Ok(vectors.swap_remove(0)),
        Err(e) => Err(failed(e.to_string(), log)),
    }
}

// static-v1 only with the crate's feature (on by default): its tokenizer and character tables
// are the bytes the small build (scripts/build-worker.sh --no-static) leaves out.
#[cfg(feature = "static-v1")]
mod static_v1;
#[cfg(feature = "static-v1")]
pub(crate) use static_v1::embed_static;

/// Without the `static-v1` feature [`crate::config::WorkerConfig::read`] refuses
/// `MEMLOOM_EMBEDDER=static-v1` at the door, so no request gets here; if one did, it gets the
/// same answer.
#[cfg(not(feature = "static-v1"))]
pub(crate) async fn embed_static(
    _client: &tokio_postgres::Client,
    _text: &str,
    _version: memloom_core::StaticVersion,
) -> Result<Vec<f32>, ApiError> {
    Err(ApiError::misconfigured(crate::config::STATIC_NOT_BUILT))
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
