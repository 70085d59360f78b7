//! JSON responses: the success bodies and the error envelope (with `Retry-After` and
//! `WWW-Authenticate` where the error asks for them).

use worker::{Headers, Response};

use crate::ApiError;

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|_| ApiError::internal())
}

pub(crate) fn respond(status: u16, body: String) -> Result<Response, ApiError> {
    let headers = Headers::new();
    let _ = headers.set("content-type", "application/json; charset=utf-8");
    let _ = headers.set("cache-control", "no-store");
    Response::from_bytes(body.into_bytes())
        .map(|r| r.with_status(status).with_headers(headers))
        .map_err(|_| ApiError::internal())
}

pub(crate) fn with_retry_after(resp: Response, e: &ApiError) -> Result<Response, ApiError> {
    let mut resp = resp;
    if let Some(secs) = e.retry_after {
        let _ = resp.headers_mut().set("retry-after", &secs.to_string());
    }
    Ok(resp)
}

pub(crate) fn error_response(e: &ApiError) -> worker::Result<Response> {
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
