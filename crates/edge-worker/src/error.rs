//! Every failure a client can see: an HTTP status, a stable machine-readable `code` and a
//! message that says what to do. Internal details (database errors, socket errors) are logged by
//! the worker and never put in a response body, except the store's own embedder-mismatch text,
//! which names both embedders and nothing else.

use serde::Serialize;

/// Seconds a client should wait before retrying when the database is unavailable.
pub const RETRY_AFTER_SECS: u32 = 5;

/// The `code` of [`ApiError::write_conflict`].
pub const WRITE_CONFLICT: &str = "write_conflict";

/// Seconds a client should wait before retrying a write that collided: the others' locks are
/// held for milliseconds.
pub const WRITE_CONFLICT_RETRY_SECS: u32 = 1;

/// A client-visible error: `{"error": {"code", "message"}}` with `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    /// Sent as `Retry-After` (seconds) when set.
    pub retry_after: Option<u32>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: &'a str,
    message: &'a str,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, code, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(401, "unauthorized", message)
    }

    pub fn too_large(limit: usize) -> ApiError {
        ApiError::new(
            413,
            "payload_too_large",
            format!("request body is larger than {limit} bytes; send a smaller body"),
        )
    }

    /// The body did not arrive within `ms` milliseconds.
    pub fn body_timeout(ms: u32) -> ApiError {
        ApiError::new(
            408,
            "body_timeout",
            format!("the request body did not arrive within {ms} ms; send the whole body at once"),
        )
    }

    pub fn not_found(path: &str) -> ApiError {
        ApiError::new(
            404,
            "not_found",
            format!(
                "no route {}; the routes are POST /v1/recall, POST /v1/memories, GET /v1/health, GET /v1/openapi.json, POST /mcp",
                truncate(path, 100)
            ),
        )
    }

    pub fn method_not_allowed(allowed: &'static str) -> ApiError {
        ApiError::new(
            405,
            "method_not_allowed",
            format!("this route accepts {allowed} only"),
        )
    }

    /// The database could not be reached, or did not answer in time: retry later.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError {
            retry_after: Some(RETRY_AFTER_SECS),
            ..ApiError::new(503, "database_unavailable", message)
        }
    }

    /// The write lost a race with other writers (a deadlock or serialization failure) on
    /// every attempt the worker made ([`memloom_sql::WRITE_ATTEMPTS`]); nothing was changed.
    pub fn write_conflict() -> ApiError {
        ApiError {
            retry_after: Some(WRITE_CONFLICT_RETRY_SECS),
            ..ApiError::new(
                409,
                WRITE_CONFLICT,
                "the write collided with concurrent writes of the same memory and was not applied; retry it",
            )
        }
    }

    /// A fault of the deployment or the worker; details are in the worker's log.
    pub fn internal() -> ApiError {
        ApiError::new(
            500,
            "internal",
            "the worker failed to answer; the details are in its log",
        )
    }

    /// The worker is deployed without what it needs (a database, the token map).
    pub fn misconfigured(what: &str) -> ApiError {
        ApiError::new(
            500,
            "misconfigured",
            format!("the worker is misconfigured: {what}; see docs/WORKER.md"),
        )
    }

    /// The JSON body.
    pub fn body(&self) -> String {
        serde_json::to_string(&Body {
            error: Inner {
                code: self.code,
                message: &self.message,
            },
        })
        // Serializing two strings cannot fail; keep a literal fallback rather than a panic.
        .unwrap_or_else(|_| r#"{"error":{"code":"internal","message":"error"}}"#.to_string())
    }
}

/// How a store error looks to a client, decided from its SQLSTATE (`None`: no answer from the
/// server at all: a refused, reset or closed connection).
pub fn from_sqlstate(sqlstate: Option<&str>) -> ApiError {
    let Some(state) = sqlstate else {
        return ApiError::unavailable("the database is unreachable; retry shortly");
    };
    match state {
        // connection_exception class, admin/crash shutdown, cannot_connect_now,
        // too_many_connections, query_canceled (statement timeout), lock timeout.
        s if s.starts_with("08") => {
            ApiError::unavailable("the database connection failed; retry shortly")
        }
        "57P01" | "57P02" | "57P03" => {
            ApiError::unavailable("the database is restarting; retry shortly")
        }
        "53300" | "53400" => ApiError::unavailable("the database is at capacity; retry shortly"),
        "57014" | "55P03" => ApiError::unavailable("the database did not answer in time; retry"),
        // serialization_failure, deadlock_detected: retried by the worker before it gets here.
        s if memloom_sql::is_transient_sqlstate(s) => ApiError::write_conflict(),
        // undefined_function / undefined_table: the migrations were not applied.
        "42883" | "42P01" => ApiError::new(
            500,
            "store_not_migrated",
            "the database has no memloom schema; apply the migrations in sql/ (see sql/README.md)",
        ),
        // insufficient_privilege: the worker's role lacks a table privilege or (sql/0008) a
        // namespace grant; memloom_fuse refuses a namespace the role is not granted.
        "42501" => ApiError::new(
            500,
            "store_role_not_granted",
            "the worker's database role may not work in this namespace: the store's owner grants it with SELECT memloom_grant_namespace('<worker role>', '*') (docs/SECURITY.md)",
        ),
        _ => ApiError::internal(),
    }
}

/// The store refused the worker's embedder: `message` is the store's own text, which names
/// both embedders (`query embedded with hash-v2 (256 dimensions), store built with hash-v1 ...`).
/// A worker built without the static embedders facing a static-v1 or -v2 store adds that
/// setting the worker's embedder cannot help: it needs the other build.
pub fn embedder_mismatch(message: &str) -> ApiError {
    let mut message = truncate(message, 400);
    if !cfg!(feature = "static-v1") {
        let store = message
            .split("store built with ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .filter(|id| id.starts_with("static-v"))
            .map(str::to_string);
        if let Some(id) = store {
            message.push_str(STATIC_STORE_HINT);
            message.push_str(&id);
        }
    }
    ApiError::new(409, "embedder_mismatch", message)
}

/// The hint [`embedder_mismatch`] adds in a build without the `static-v1` feature, before the
/// store's embedder.
const STATIC_STORE_HINT: &str = "; this worker was built without static-v1 and static-v2 (scripts/build-worker.sh --no-static): deploy the default build (bash scripts/build-worker.sh) with MEMLOOM_EMBEDDER=";

/// At most `max` bytes of `s`, cut on a character boundary.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_the_error_envelope() {
        let e = ApiError::bad_request("invalid_request", "query is \"empty\"");
        let v: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_request");
        assert_eq!(v["error"]["message"], "query is \"empty\"");
        assert_eq!(v.as_object().unwrap().len(), 1);
    }

    #[test]
    fn no_answer_means_unavailable_with_retry() {
        let e = from_sqlstate(None);
        assert_eq!(
            (e.status, e.code, e.retry_after),
            (503, "database_unavailable", Some(5))
        );
    }

    #[test]
    fn connection_class_and_shutdowns_are_503() {
        for s in ["08006", "08001", "57P01", "57P03", "53300", "57014"] {
            assert_eq!(from_sqlstate(Some(s)).status, 503, "{s}");
            assert!(from_sqlstate(Some(s)).retry_after.is_some(), "{s}");
        }
    }

    #[test]
    fn lost_races_are_409_with_retry_after_never_500() {
        for s in ["40001", "40P01"] {
            let e = from_sqlstate(Some(s));
            assert_eq!(
                (e.status, e.code, e.retry_after),
                (409, WRITE_CONFLICT, Some(WRITE_CONFLICT_RETRY_SECS)),
                "{s}"
            );
        }
    }

    #[test]
    fn a_slow_body_is_408_and_names_the_limit() {
        let e = ApiError::body_timeout(crate::api::BODY_TIMEOUT_MS);
        assert_eq!(
            (e.status, e.code, e.retry_after),
            (408, "body_timeout", None)
        );
        assert!(e.message.contains("within 5000 ms"), "{}", e.message);
        assert!(
            e.body().contains("\"code\":\"body_timeout\""),
            "{}",
            e.body()
        );
    }

    #[test]
    fn missing_schema_says_migrate() {
        let e = from_sqlstate(Some("42883"));
        assert_eq!((e.status, e.code), (500, "store_not_migrated"));
        assert!(e.message.contains("migrations"));
    }

    #[test]
    fn other_database_errors_are_internal_and_say_nothing() {
        let e = from_sqlstate(Some("42501"));
        assert_eq!((e.status, e.code), (500, "store_role_not_granted"));
        assert!(e.message.contains("memloom_grant_namespace"));
        let e = from_sqlstate(Some("XX000"));
        assert_eq!((e.status, e.code), (500, "internal"));
        assert!(!e.message.contains("XX000"));
    }

    #[test]
    fn embedder_mismatch_is_409_and_keeps_the_store_text() {
        let e = embedder_mismatch("query embedded with hash-v1 (256 dimensions), store built with api:m-v1 (1536 dimensions)");
        assert_eq!(e.status, 409);
        assert!(e.message.contains("hash-v1") && e.message.contains("api:m-v1"));
    }

    // `cargo test -p edge-worker --no-default-features` takes the other branch.
    #[test]
    fn a_static_v1_store_tells_a_worker_without_it_which_build_to_deploy() {
        let store = "query embedded with hash-v1 (256 dimensions), store built with static-v1 (512 dimensions); re-embed the query with static-v1, or re-embed the store";
        let e = embedder_mismatch(store);
        assert_eq!((e.status, e.code), (409, "embedder_mismatch"));
        assert!(e.message.starts_with(store), "{}", e.message);
        let hinted = e.message.contains("built without static-v1")
            && e.message.contains("bash scripts/build-worker.sh")
            && e.message.ends_with("MEMLOOM_EMBEDDER=static-v1");
        assert_eq!(hinted, !cfg!(feature = "static-v1"), "{}", e.message);
        let v2 = store.replace("static-v1", "static-v2");
        let hinted = embedder_mismatch(&v2)
            .message
            .ends_with("MEMLOOM_EMBEDDER=static-v2");
        assert_eq!(hinted, !cfg!(feature = "static-v1"));
        let other = "query embedded with hash-v1 (256 dimensions), store built with api:m-v1 (3 dimensions); re-embed the query with api:m-v1, or re-embed the store";
        assert_eq!(embedder_mismatch(other).message, other);
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h...");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
