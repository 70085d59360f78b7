//! The platform's request and response (web-sys) directly: workers-rs' `Request` and
//! `Response` convert through a body enum whose streaming variant links wasm-streams, which the
//! worker never uses and which costs bundle size. Responses are JSON; the error envelope
//! carries `Retry-After` and `WWW-Authenticate` where the error asks for them.

use worker::wasm_bindgen::JsValue;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{js_sys, web_sys};

use crate::log::RequestLog;
use crate::{api, ApiError};

/// A request, as workerd hands it over: a method, a URL, headers and a body are all we read.
pub(crate) type Request = web_sys::Request;
/// A response: `web_sys::Response`, the type workerd answers with.
pub(crate) type Response = web_sys::Response;

/// The path of a serialized URL (`Request.url` is absolute: scheme, host, path, query).
pub(crate) fn path_of(url: &str) -> String {
    let rest = match url.find("://") {
        Some(i) => &url[i + 3..],
        None => return url.to_string(),
    };
    let path = match rest.find('/') {
        Some(i) => &rest[i..],
        None => "/",
    };
    let end = path.find(['?', '#']).unwrap_or(path.len());
    path[..end].to_string()
}

/// A request header's value.
pub(crate) fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// The request body within the request limits of [`api`]: 413 when it is over
/// [`api::MAX_BODY_BYTES`] (by `Content-Length` before reading; a body sent without one once
/// it has arrived), 408 `body_timeout` when it has not all arrived within
/// [`api::BODY_TIMEOUT_MS`] (a body trickled slowly is not waited for).
pub(crate) async fn read_body(req: &Request, log: &mut RequestLog) -> Result<Vec<u8>, ApiError> {
    let length = header(req, "content-length");
    api::check_size(length.as_deref())?;
    let body = match super::context::timeout(api::BODY_TIMEOUT_MS, body_bytes(req)).await {
        Some(Ok(body)) => body,
        Some(Err(e)) => {
            log.detail = Some(format!("reading the body: {e}"));
            return Err(ApiError::bad_request(
                "invalid_body",
                "the request body could not be read",
            ));
        }
        None => {
            log.detail = Some(format!(
                "the body was not complete after {} ms",
                api::BODY_TIMEOUT_MS
            ));
            return Err(ApiError::body_timeout(api::BODY_TIMEOUT_MS));
        }
    };
    if body.len() > api::MAX_BODY_BYTES {
        log.detail = Some(format!(
            "a body of {} bytes without a Content-Length",
            body.len()
        ));
        return Err(ApiError::too_large(api::MAX_BODY_BYTES));
    }
    Ok(body)
}

/// The whole request body, as the platform reads it.
async fn body_bytes(req: &Request) -> Result<Vec<u8>, String> {
    let js = |e: JsValue| {
        e.as_string()
            .unwrap_or_else(|| "a JavaScript error".to_string())
    };
    let buffer = JsFuture::from(req.array_buffer().map_err(js)?)
        .await
        .map_err(js)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|_| ApiError::internal())
}

/// A JSON response (`no-store`), with extra headers.
fn build(status: u16, body: Option<String>, extra: &[(&str, &str)]) -> Result<Response, JsValue> {
    let headers = web_sys::Headers::new()?;
    if body.is_some() {
        headers.set("content-type", "application/json; charset=utf-8")?;
        headers.set("cache-control", "no-store")?;
    }
    for (name, value) in extra {
        headers.set(name, value)?;
    }
    let init = web_sys::ResponseInit::new();
    init.set_status(status);
    init.set_headers_headers(&headers);
    match body {
        Some(body) => {
            let mut bytes = body.into_bytes();
            Response::new_with_opt_u8_array_and_init(Some(&mut bytes), &init)
        }
        None => Response::new_with_opt_str_and_init(None, &init),
    }
}

pub(crate) fn respond(status: u16, body: String) -> Result<Response, ApiError> {
    build(status, Some(body), &[]).map_err(|_| ApiError::internal())
}

/// A response with no body (`202 Accepted` for an MCP notification).
pub(crate) fn empty(status: u16) -> Result<Response, ApiError> {
    build(status, None, &[]).map_err(|_| ApiError::internal())
}

/// A JSON response with `Retry-After` when `e` asks for one.
pub(crate) fn respond_retry(status: u16, body: String, e: &ApiError) -> Result<Response, ApiError> {
    let secs = e.retry_after.map(|s| s.to_string());
    let extra: Vec<(&str, &str)> = secs.iter().map(|s| ("retry-after", s.as_str())).collect();
    build(status, Some(body), &extra).map_err(|_| ApiError::internal())
}

pub(crate) fn error_response(e: &ApiError) -> Result<Response, JsValue> {
    let secs = e.retry_after.map(|s| s.to_string());
    let mut extra: Vec<(&str, &str)> = secs.iter().map(|s| ("retry-after", s.as_str())).collect();
    if e.status == 401 {
        extra.push(("www-authenticate", "Bearer realm=\"memloom\""));
    }
    build(e.status, Some(e.body()), &extra)
}
