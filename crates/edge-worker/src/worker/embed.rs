//! The query embedding: hash-v1 compiled into the module (bit-identical to the npm build),
//! static-v1 with its token rows in the store (the table is 7.8 MB, too big for the bundle: the
//! worker tokenizes, `memloom_static_accumulate` sums exactly, the core finishes, so the vector
//! is the same bits as the npm build's), or one call of the configured OpenAI-compatible API
//! (its key from the configuration read at the door; the request body and the answer's checks are
//! memloom-core's `ApiEmbedder`, the npm package's too: this file only does the call).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use memloom_core::embed::{
    accumulate_static_rows, finish_static, StaticTokenizer, STATIC_V1_TABLE_CHECKSUM,
};
use tokio_postgres::Client;

use crate::config::{EmbedderConfig, DEFAULT_EMBED_TIMEOUT_MS};
use crate::error::embedder_mismatch;
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
        EmbedderConfig::Static => {
            unreachable!("static-v1 embeds with the store's table: embed_static")
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

thread_local! {
    /// static-v1's tokenizer, built from the store's vocabulary by the isolate's first static-v1
    /// request (one read of ~230 kB) and kept: a worker serves one database.
    static STATIC_TOKENIZER: RefCell<Option<Rc<(StaticTokenizer, u32)>>> = const { RefCell::new(None) };
}

/// Embeds `text` with static-v1 on `client`'s store: tokenize (the vocabulary read once per
/// isolate), read those tokens' rows (`memloom_static_rows_for`), sum and finish in the core. 409
/// `embedder_mismatch` when the store holds no table or another one.
pub(crate) async fn embed_static(client: &Client, text: &str) -> Result<Vec<f32>, ApiError> {
    let missing = || {
        embedder_mismatch(
            "the worker embeds with static-v1 but the store holds no static-v1 table; load it with `memloom init --database-url URL --embedder static-v1` (the npm CLI), or set the worker's MEMLOOM_EMBEDDER to the store's embedder",
        )
    };
    let failed = |e: memloom_sql::Error| {
        ApiError::unavailable(format!(
            "reading the static-v1 table failed: {e}; retry shortly"
        ))
    };
    let cached = STATIC_TOKENIZER.with(|t| t.borrow().clone());
    let tokenizer = match cached {
        Some(t) => t,
        None => {
            let vocab = memloom_sql::static_vocabulary(client)
                .await
                .map_err(failed)?
                .ok_or_else(missing)?;
            if vocab.checksum != STATIC_V1_TABLE_CHECKSUM {
                return Err(embedder_mismatch(&format!(
                    "the store's static-v1 table has checksum {:016x}, this worker was built for {STATIC_V1_TABLE_CHECKSUM:016x}; load the table shipped with this memloom version (memloom init --embedder static-v1)",
                    vocab.checksum
                )));
            }
            let t = Rc::new((
                StaticTokenizer::from_vocabulary(&vocab.vocabulary, vocab.unk_id),
                vocab.first_id,
            ));
            STATIC_TOKENIZER.with(|c| *c.borrow_mut() = Some(Rc::clone(&t)));
            t
        }
    };
    let (tokenizer, first_id) = &*tokenizer;
    let ids = tokenizer.tokenize(text);
    let rows: HashMap<u32, memloom_sql::StaticRow> = memloom_sql::static_rows(client, &ids)
        .await
        .map_err(failed)?
        .into_iter()
        .collect();
    // Tokens that should have rows but none came back: the table was removed since.
    if rows.is_empty() && ids.iter().any(|id| id >= first_id) {
        return Err(missing());
    }
    let acc = accumulate_static_rows(&ids, |id| rows.get(&id).map(|(w, r)| (*w, r)));
    Ok(finish_static(&acc, text))
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
