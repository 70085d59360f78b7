//! The query embedding: hash-v1 compiled into the module (bit-identical to the npm build), or
//! one call of the configured OpenAI-compatible API (its key from the configuration read at the
//! door).

use crate::config::{self, EmbedderConfig, DEFAULT_EMBED_TIMEOUT_MS};
use crate::log::RequestLog;
use crate::ApiError;

use super::store::timeout;

/// Embeds `text`; an API failure is 502 `embedding_failed`, its detail logged.
pub(crate) async fn embed_query(
    embedder: &EmbedderConfig,
    key: Option<&str>,
    text: &str,
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
    let (status, bytes) =
        match timeout(DEFAULT_EMBED_TIMEOUT_MS, post_json(endpoint, &body, key)).await {
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
