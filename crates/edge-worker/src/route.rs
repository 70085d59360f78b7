//! The worker's routes. A small match rather than workers-rs' `Router`, so that unknown paths
//! and wrong methods get the same JSON error envelope as everything else, and so the table is
//! testable natively.

use crate::ApiError;

/// The body of `GET /v1/openapi.json`: `openapi.json` as build.rs embeds it, without its
/// indentation (the same JSON; the file stays readable).
pub const OPENAPI_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Recall,
    Remember,
    Health,
    OpenApi,
    /// `POST /mcp`: the Model Context Protocol (streamable HTTP), see `mcp.rs`.
    Mcp,
}

impl Route {
    /// The name used in logs.
    pub fn name(self) -> &'static str {
        match self {
            Route::Recall => "recall",
            Route::Remember => "memories",
            Route::Health => "health",
            Route::OpenApi => "openapi",
            Route::Mcp => "mcp",
        }
    }

    /// Whether the route needs a bearer token.
    pub fn needs_auth(self) -> bool {
        matches!(self, Route::Recall | Route::Remember | Route::Mcp)
    }
}

/// Matches a method and a path (a trailing slash is accepted).
pub fn route(method: &str, path: &str) -> Result<Route, ApiError> {
    let trimmed = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    let (route, allowed) = match trimmed {
        "/v1/recall" => (Route::Recall, "POST"),
        "/v1/memories" => (Route::Remember, "POST"),
        "/v1/health" => (Route::Health, "GET"),
        "/v1/openapi.json" => (Route::OpenApi, "GET"),
        // No SSE stream: GET (and DELETE, for sessions) get 405, as the MCP spec allows.
        "/mcp" => (Route::Mcp, "POST"),
        _ => return Err(ApiError::not_found(path)),
    };
    let ok = method == allowed || (allowed == "GET" && method == "HEAD");
    if ok {
        Ok(route)
    } else {
        Err(ApiError::method_not_allowed(allowed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_method_and_path() {
        assert_eq!(route("POST", "/v1/recall"), Ok(Route::Recall));
        assert_eq!(route("POST", "/v1/recall/"), Ok(Route::Recall));
        assert_eq!(route("POST", "/v1/memories"), Ok(Route::Remember));
        assert_eq!(route("GET", "/v1/health"), Ok(Route::Health));
        assert_eq!(route("HEAD", "/v1/health"), Ok(Route::Health));
        assert_eq!(route("GET", "/v1/openapi.json"), Ok(Route::OpenApi));
        assert_eq!(route("POST", "/mcp"), Ok(Route::Mcp));
        assert_eq!(route("GET", "/mcp").unwrap_err().status, 405);
        assert_eq!(route("DELETE", "/mcp").unwrap_err().status, 405);
    }

    #[test]
    fn wrong_method_is_405_and_unknown_path_404() {
        assert_eq!(route("GET", "/v1/recall").unwrap_err().status, 405);
        assert_eq!(route("POST", "/v1/health").unwrap_err().status, 405);
        assert_eq!(route("POST", "/v2/recall").unwrap_err().status, 404);
        assert_eq!(route("GET", "/").unwrap_err().status, 404);
    }

    #[test]
    fn only_data_routes_need_a_token() {
        assert!(
            Route::Recall.needs_auth() && Route::Remember.needs_auth() && Route::Mcp.needs_auth()
        );
        assert!(!Route::Health.needs_auth() && !Route::OpenApi.needs_auth());
    }
}
