//! Request bodies (parsed strictly: unknown fields are rejected, so a typo never silently falls
//! back to a default) and response bodies (the recall JSON contract of DESIGN.md).

use memloom_core::fuse::{
    self, ArmTerms, Weights, DEFAULT_RRF_K, DEFAULT_WEIGHT_ENTITY, DEFAULT_WEIGHT_KEYWORD,
    DEFAULT_WEIGHT_VECTOR,
};
use memloom_core::{check_window, parse_instant, Instant, InstantForms};
use memloom_sql::{FuseParams, FusedRow};
use serde::{Deserialize, Serialize};

use crate::ApiError;

/// The request limits, from their one definition (schema/limits.json, crate::limits).
pub use crate::limits::{
    BODY_TIMEOUT_MS, DEFAULT_LIMIT, MAX_BODY_BYTES, MAX_KEY_CHARS, MAX_LIMIT, MAX_MEMORY_BYTES,
    MAX_QUERY_CHARS, MAX_WEIGHT,
};

/// `POST /v1/recall`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    pub query: String,
    #[serde(default)]
    pub limit: Option<i64>,
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    #[serde(default)]
    pub weights: Option<WeightsRequest>,
    #[serde(default)]
    pub explain: Option<bool>,
    /// Recall as of this instant (ISO 8601): the memory versions valid then (docs/TIME.md).
    #[serde(default, rename = "asOf")]
    pub as_of: Option<String>,
    /// Only items whose event time is at or after this instant.
    #[serde(default)]
    pub since: Option<String>,
    /// Only items whose event time is at or before this instant (a date: its whole day).
    #[serde(default)]
    pub until: Option<String>,
}

/// Per-arm weight overrides.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WeightsRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<f64>,
}

/// A validated recall.
#[derive(Debug, Clone, PartialEq)]
pub struct Recall {
    pub query: String,
    pub limit: i32,
    pub kinds: Option<Vec<String>>,
    pub weights: WeightsRequest,
    pub explain: bool,
    /// RFC 3339 UTC instants, validated by [`memloom_core::instant`].
    pub as_of: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

impl Recall {
    /// The `memloom_fuse` call for this recall in `namespace`.
    pub fn fuse_params(&self, embedding: Vec<f32>, namespace: &str) -> FuseParams {
        FuseParams {
            w_vector: self.weights.vector,
            w_keyword: self.weights.keyword,
            w_entity: self.weights.entity,
            kinds: self.kinds.clone(),
            as_of: self.as_of.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            ..FuseParams::new(self.query.clone(), embedding, namespace, self.limit)
        }
    }
}

/// `POST /v1/memories`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryRequest {
    pub text: String,
    #[serde(default)]
    pub key: Option<String>,
    /// When the event the memory describes happened (ISO 8601).
    #[serde(default)]
    pub at: Option<String>,
}

/// An instant (`asOf`, `since`, `until`, a memory's `at`) by memloom-core's rule, the npm
/// store's too (`memloom_core::instant`): 400 `invalid_time` with the core's message otherwise.
fn optional_instant(
    field: &str,
    v: Option<&str>,
    end_of_day: bool,
) -> Result<Option<Instant>, ApiError> {
    v.map(|v| parse_instant(field, v, end_of_day, InstantForms::Text))
        .transpose()
        .map_err(|e| ApiError::bad_request("invalid_time", e.to_string()))
}

/// PostgreSQL text cannot hold U+0000 (SQLSTATE 22021, which would be a 500): refused up front.
const NUL_MESSAGE: &str =
    "the text contains a NUL character (\\u0000), which PostgreSQL cannot store; remove it";

/// Parses a JSON body into `T`, mapping every failure to a 400 that says what is wrong.
fn parse_json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "invalid_json",
            "the request body is empty; send a JSON object",
        ));
    }
    // serde accepts a struct written as an array (`["q"]`); the API takes objects only.
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() {
        return Err(ApiError::bad_request(
            "invalid_request",
            "the request body must be a JSON object",
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Data => ApiError::bad_request("invalid_request", e.to_string()),
            Category::Syntax | Category::Eof | Category::Io => ApiError::bad_request(
                "invalid_json",
                format!("the request body is not valid JSON: {e}"),
            ),
        }
    })
}

/// Checks the body size before parsing: `content_length` is the header's value when sent.
pub fn check_size(content_length: Option<&str>) -> Result<(), ApiError> {
    if let Some(len) = content_length.and_then(|v| v.trim().parse::<u64>().ok()) {
        if len > MAX_BODY_BYTES as u64 {
            return Err(ApiError::too_large(MAX_BODY_BYTES));
        }
    }
    Ok(())
}

/// Parses and validates a recall body.
pub fn parse_recall(body: &[u8]) -> Result<Recall, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::too_large(MAX_BODY_BYTES));
    }
    let req: RecallRequest = parse_json(body)?;
    let query = req.query.trim();
    if query.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_query",
            "query is empty; send the text to recall",
        ));
    }
    if query.contains('\0') {
        return Err(ApiError::bad_request("invalid_query", NUL_MESSAGE));
    }
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("query has {chars} characters; the limit is {MAX_QUERY_CHARS}"),
        ));
    }
    let limit = match req.limit {
        None => DEFAULT_LIMIT,
        Some(l) if (1..=i64::from(MAX_LIMIT)).contains(&l) => l as i32,
        Some(l) => {
            return Err(ApiError::bad_request(
                "invalid_limit",
                format!("limit must be between 1 and {MAX_LIMIT}, not {l}"),
            ))
        }
    };
    let kinds = match req.kinds {
        None => None,
        Some(kinds) => {
            if kinds.is_empty() {
                return Err(ApiError::bad_request(
                    "invalid_kinds",
                    "kinds is empty; omit it for all kinds, or list \"memory\" and/or \"chunk\"",
                ));
            }
            let mut out: Vec<String> = Vec::with_capacity(2);
            for k in kinds {
                if k != "memory" && k != "chunk" {
                    return Err(ApiError::bad_request(
                        "invalid_kinds",
                        format!(
                            "unknown kind {:?}; kinds are \"memory\" and \"chunk\"",
                            crate::error::truncate(&k, 40)
                        ),
                    ));
                }
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            Some(out)
        }
    };
    let weights = req.weights.unwrap_or_default();
    for (name, w) in [
        ("vector", weights.vector),
        ("keyword", weights.keyword),
        ("entity", weights.entity),
    ] {
        if let Some(w) = w {
            if !w.is_finite() || !(0.0..=MAX_WEIGHT).contains(&w) {
                return Err(ApiError::bad_request(
                    "invalid_weights",
                    format!("weights.{name} must be between 0 and {MAX_WEIGHT}, not {w}"),
                ));
            }
        }
    }
    let as_of = optional_instant("asOf", req.as_of.as_deref(), false)?;
    let since = optional_instant("since", req.since.as_deref(), false)?;
    let until = optional_instant("until", req.until.as_deref(), true)?;
    check_window(since, until).map_err(|e| ApiError::bad_request("invalid_time", e.to_string()))?;
    Ok(Recall {
        query: query.to_string(),
        limit,
        kinds,
        weights,
        explain: req.explain.unwrap_or(false),
        as_of: as_of.map(Instant::iso),
        since: since.map(Instant::iso),
        until: until.map(Instant::iso),
    })
}

/// A validated memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    pub text: String,
    pub key: Option<String>,
    /// The event time, RFC 3339 UTC ([`memloom_core::instant`]).
    pub at: Option<String>,
}

/// Parses and validates a memory body.
pub fn parse_memory(body: &[u8]) -> Result<Memory, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::too_large(MAX_BODY_BYTES));
    }
    let req: MemoryRequest = parse_json(body)?;
    if req.text.trim().is_empty() {
        return Err(ApiError::bad_request(
            "invalid_text",
            "text is empty; send the memory's text",
        ));
    }
    if req.text.contains('\0') {
        return Err(ApiError::bad_request("invalid_text", NUL_MESSAGE));
    }
    if req.text.len() > MAX_MEMORY_BYTES {
        return Err(ApiError::bad_request(
            "invalid_text",
            format!(
                "text has {} bytes; the limit is {MAX_MEMORY_BYTES}",
                req.text.len()
            ),
        ));
    }
    let key = match req.key {
        None => None,
        Some(k) => {
            let chars = k.chars().count();
            if k.trim().is_empty() || chars > MAX_KEY_CHARS || k.chars().any(char::is_control) {
                return Err(ApiError::bad_request(
                    "invalid_key",
                    format!("key must be 1 to {MAX_KEY_CHARS} characters without control characters; omit it for an unkeyed memory"),
                ));
            }
            Some(k)
        }
    };
    let at = optional_instant("at", req.at.as_deref(), false)?.map(Instant::iso);
    Ok(Memory {
        text: req.text,
        key,
        at,
    })
}

/// The recall response: the Rust form of `schema/recall-response.json`, the one definition every
/// door answers with (the worker's native tests validate these structs' JSON against it, on the
/// golden cases of `tests/golden/recall-response.json`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallResponse<'a> {
    pub query: &'a str,
    pub results: Vec<RecallHit<'a>>,
    pub took_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallHit<'a> {
    pub id: i64,
    pub kind: &'a str,
    pub source: Option<&'a str>,
    pub breadcrumb: Option<&'a str>,
    pub key: Option<&'a str>,
    pub content: &'a str,
    pub rrf_score: f64,
    pub similarity: f64,
    pub ranks: Ranks,
    /// The item's fusion terms (only with `explain: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplain>,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Ranks {
    pub vector: Option<i32>,
    pub keyword: Option<i32>,
    pub entity: Option<i32>,
}

/// A hit's fusion terms: `k` and each voting arm's `weight / (k + rank)` (memloom-core's
/// [`ArmTerms`], null where the arm did not vote); they add up to `rrfScore`.
#[derive(Debug, Serialize, PartialEq)]
pub struct HitExplain {
    pub k: f64,
    pub terms: ArmTerms,
}

/// Why the results are what they are: the fusion settings used and where the time went.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explain {
    pub embedder: String,
    pub k: f64,
    pub weights: Weights,
    pub embed_ms: u64,
    pub query_ms: u64,
    /// Opening this request's connection (the worker has one per request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<u64>,
}

impl Recall {
    /// The weights in effect: the request's overrides over memloom's defaults.
    pub fn effective_weights(&self) -> Weights {
        Weights {
            vector: self.weights.vector.unwrap_or(DEFAULT_WEIGHT_VECTOR),
            keyword: self.weights.keyword.unwrap_or(DEFAULT_WEIGHT_KEYWORD),
            entity: self.weights.entity.unwrap_or(DEFAULT_WEIGHT_ENTITY),
        }
    }

    /// The response's `explain` (with `explain: true`): the embedder's label, the fusion
    /// settings in effect and the request's times.
    pub fn explain(
        &self,
        embedder: String,
        embed_ms: u64,
        query_ms: u64,
        connect_ms: Option<u64>,
    ) -> Option<Explain> {
        self.explain.then(|| Explain {
            embedder,
            k: f64::from(DEFAULT_RRF_K),
            weights: self.effective_weights(),
            embed_ms,
            query_ms,
            connect_ms,
        })
    }
}

/// Builds the response body from `memloom_fuse` rows.
pub fn recall_response<'a>(
    recall: &'a Recall,
    rows: &'a [FusedRow],
    took_ms: u64,
    explain: Option<Explain>,
) -> RecallResponse<'a> {
    let weights = recall.effective_weights();
    let k = f64::from(DEFAULT_RRF_K);
    // memloom_fuse's ranks count from 1; a rank that is not would not be a vote.
    let rank = |r: Option<i32>| r.and_then(|r| u32::try_from(r).ok());
    let results = rows
        .iter()
        .map(|r| RecallHit {
            id: r.id,
            kind: &r.kind,
            source: r.source.as_deref(),
            breadcrumb: r.breadcrumb.as_deref(),
            key: r.key.as_deref(),
            content: &r.content,
            rrf_score: r.rrf_score,
            similarity: r.similarity,
            ranks: Ranks {
                vector: r.vector_rank,
                keyword: r.keyword_rank,
                entity: r.entity_rank,
            },
            explain: recall.explain.then(|| HitExplain {
                k,
                terms: fuse::explain_terms(
                    &fuse::Ranks {
                        vector: rank(r.vector_rank),
                        keyword: rank(r.keyword_rank),
                        entity: rank(r.entity_rank),
                    },
                    &weights,
                    k,
                ),
            }),
        })
        .collect();
    RecallResponse {
        query: &recall.query,
        results,
        took_ms,
        explain,
    }
}

/// `POST /v1/memories` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryResponse<'a> {
    pub id: i64,
    pub version: i32,
    pub key: Option<&'a str>,
    pub took_ms: u64,
}

/// `GET /v1/health` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthResponse {
    /// `ok`, or `unavailable` (503) when the database cannot be reached.
    pub status: &'static str,
    pub database: DatabaseHealth,
    pub embedder: EmbedderHealth,
    pub took_ms: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseHealth {
    pub reachable: bool,
    /// `hyperdrive` or `database_url` (never the URL itself).
    pub via: &'static str,
    pub schema_version: Option<i32>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedderHealth {
    /// The worker's query embedder, e.g. `hash-v1`.
    pub worker: String,
    /// The store's, from `memloom_meta` (None when unreachable).
    pub store: Option<String>,
    pub matches: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recall(body: &str) -> Result<Recall, ApiError> {
        parse_recall(body.as_bytes())
    }

    // The rule itself is memloom-core's (instant.rs, tested there); these are the doors.
    #[test]
    fn instants_reach_sql_in_utc_milliseconds_or_are_400s() {
        let r = recall(r#"{"query": "q", "asOf": "2026-03-01T12:00Z", "since": "2023-05-01", "until": "2023-05-31"}"#).unwrap();
        assert_eq!(r.as_of.as_deref(), Some("2026-03-01T12:00:00.000Z"));
        assert_eq!(r.until.as_deref(), Some("2023-05-31T23:59:59.999Z"));
        let p = r.fuse_params(vec![0.0], "ns");
        assert_eq!(p.since.as_deref(), Some("2023-05-01T00:00:00.000Z"));
        let e = recall(r#"{"query": "q", "asOf": "last tuesday"}"#).unwrap_err();
        assert_eq!((e.status, e.code), (400, "invalid_time"));
        assert_eq!(
            e.message,
            "asOf must be an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not \"last tuesday\""
        );
        let e = recall(r#"{"query": "q", "until": "2023-02-30"}"#).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "invalid_time",
                "until is not a valid date or time: \"2023-02-30\""
            )
        );
        let e =
            recall(r#"{"query": "q", "since": "2023-06-01", "until": "2023-05-01"}"#).unwrap_err();
        assert!(e.message.contains("is after until"), "{}", e.message);
        let m = parse_memory(br#"{"text": "t", "at": "2023-05-08"}"#).unwrap();
        assert_eq!(m.at.as_deref(), Some("2023-05-08T00:00:00.000Z"));
        let e = parse_memory(br#"{"text": "t", "at": "May 8"}"#).unwrap_err();
        assert_eq!((e.status, e.code), (400, "invalid_time"));
    }

    #[test]
    fn minimal_recall_takes_defaults() {
        let r = recall(r#"{"query": "  max_connections  "}"#).unwrap();
        assert_eq!(r.query, "max_connections");
        assert_eq!(r.limit, DEFAULT_LIMIT);
        assert_eq!(r.kinds, None);
        assert!(!r.explain);
        let p = r.fuse_params(vec![0.0; 4], "ns");
        assert_eq!(
            (p.namespace.as_str(), p.limit, p.w_keyword),
            ("ns", 10, None)
        );
    }

    #[test]
    fn full_recall() {
        let r = recall(
            r#"{"query":"q","limit":50,"kinds":["chunk","chunk"],"weights":{"keyword":0},"explain":true}"#,
        )
        .unwrap();
        assert_eq!(r.limit, 50);
        assert_eq!(r.kinds, Some(vec!["chunk".to_string()]));
        assert_eq!(r.weights.keyword, Some(0.0));
        assert_eq!(r.effective_weights().vector, DEFAULT_WEIGHT_VECTOR);
        assert!(r.explain);
    }

    #[test]
    fn rejects_bad_queries() {
        assert_eq!(
            recall(r#"{"query":"   "}"#).unwrap_err().code,
            "invalid_query"
        );
        let long = format!(r#"{{"query":"{}"}}"#, "a".repeat(MAX_QUERY_CHARS + 1));
        let e = recall(&long).unwrap_err();
        assert_eq!(e.code, "invalid_query");
        assert!(e.message.contains("1001"), "{}", e.message);
        assert_eq!(
            recall(r#"{"limit":3}"#).unwrap_err().code,
            "invalid_request"
        );
        assert_eq!(
            recall(r#"{"query":3}"#).unwrap_err().code,
            "invalid_request"
        );
    }

    #[test]
    fn rejects_out_of_range_options() {
        for (body, code) in [
            (r#"{"query":"q","limit":0}"#, "invalid_limit"),
            (r#"{"query":"q","limit":51}"#, "invalid_limit"),
            (r#"{"query":"q","limit":-1}"#, "invalid_limit"),
            (r#"{"query":"q","limit":1.5}"#, "invalid_request"),
            (r#"{"query":"q","kinds":[]}"#, "invalid_kinds"),
            (r#"{"query":"q","kinds":["doc"]}"#, "invalid_kinds"),
            (
                r#"{"query":"q","weights":{"vector":-1}}"#,
                "invalid_weights",
            ),
            (
                r#"{"query":"q","weights":{"vector":1e9}}"#,
                "invalid_weights",
            ),
            (
                r#"{"query":"q","weights":{"semantic":1}}"#,
                "invalid_request",
            ),
            (r#"{"query":"q","explain":"yes"}"#, "invalid_request"),
        ] {
            let e = recall(body).unwrap_err();
            assert_eq!((e.status, e.code), (400, code), "{body}: {}", e.message);
        }
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = recall(r#"{"query":"q","lmit":3}"#).unwrap_err();
        assert_eq!(e.code, "invalid_request");
        assert!(e.message.contains("lmit"), "{}", e.message);
    }

    #[test]
    fn malformed_and_empty_bodies() {
        assert_eq!(recall("{").unwrap_err().code, "invalid_json");
        assert_eq!(recall("not json").unwrap_err().code, "invalid_json");
        assert_eq!(recall("").unwrap_err().code, "invalid_json");
        assert_eq!(recall("[]").unwrap_err().code, "invalid_request");
        assert_eq!(recall(r#"["q"]"#).unwrap_err().code, "invalid_request");
        assert_eq!(recall("\"q\"").unwrap_err().code, "invalid_request");
    }

    #[test]
    fn nul_characters_are_400_not_a_database_error() {
        let e = parse_recall(br#"{"query":"a\u0000b"}"#).unwrap_err();
        assert_eq!((e.status, e.code), (400, "invalid_query"));
        assert!(e.message.contains("NUL"), "{}", e.message);
        let e = parse_memory(br#"{"text":"a\u0000b"}"#).unwrap_err();
        assert_eq!((e.status, e.code), (400, "invalid_text"));
        let e = parse_memory(br#"{"text":"t","key":"a\u0000"}"#).unwrap_err();
        assert_eq!(e.code, "invalid_key");
    }

    #[test]
    fn oversized_bodies_are_413() {
        assert_eq!(check_size(Some("65537")).unwrap_err().status, 413);
        assert!(check_size(Some("65536")).is_ok());
        assert!(check_size(Some("garbage")).is_ok());
        assert!(check_size(None).is_ok());
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(parse_recall(&big).unwrap_err().status, 413);
        assert_eq!(parse_memory(&big).unwrap_err().status, 413);
    }

    #[test]
    fn memories() {
        let m = parse_memory(br#"{"text":"deploy on fridays is banned","key":"deploy-policy"}"#)
            .unwrap();
        assert_eq!(m.key.as_deref(), Some("deploy-policy"));
        assert_eq!(
            parse_memory(br#"{"text":""}"#).unwrap_err().code,
            "invalid_text"
        );
        assert_eq!(
            parse_memory(br#"{"text":"t","key":""}"#).unwrap_err().code,
            "invalid_key"
        );
        assert_eq!(
            parse_memory(br#"{"text":"t","key":"a\nb"}"#)
                .unwrap_err()
                .code,
            "invalid_key"
        );
        assert_eq!(
            parse_memory(br#"{"text":"t","tags":[]}"#).unwrap_err().code,
            "invalid_request"
        );
        let long = format!(r#"{{"text":"{}"}}"#, "x".repeat(MAX_MEMORY_BYTES + 1));
        assert_eq!(
            parse_memory(long.as_bytes()).unwrap_err().code,
            "invalid_text"
        );
    }

    #[test]
    fn response_is_the_design_contract() {
        let r = recall(r#"{"query":"q"}"#).unwrap();
        let rows = vec![FusedRow {
            id: 7,
            kind: "chunk".into(),
            source: Some("a.md".into()),
            breadcrumb: Some("A > B".into()),
            key: None,
            content: "A > B\n\ntext".into(),
            rrf_score: 0.5,
            similarity: 0.25,
            vector_rank: Some(1),
            keyword_rank: None,
            entity_rank: Some(2),
        }];
        let v = serde_json::to_value(recall_response(&r, &rows, 12, None)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "query": "q",
                "results": [{
                    "id": 7, "kind": "chunk", "source": "a.md", "breadcrumb": "A > B",
                    "key": null, "content": "A > B\n\ntext", "rrfScore": 0.5, "similarity": 0.25,
                    "ranks": {"vector": 1, "keyword": null, "entity": 2}
                }],
                "tookMs": 12
            })
        );
    }

    #[test]
    fn explain_terms_follow_the_score_formula() {
        let r = recall(r#"{"query":"q","explain":true,"weights":{"entity":1}}"#).unwrap();
        let rows = vec![FusedRow {
            id: 1,
            kind: "memory".into(),
            source: None,
            breadcrumb: None,
            key: Some("k".into()),
            content: "c".into(),
            rrf_score: 0.0,
            similarity: 0.0,
            vector_rank: Some(1),
            keyword_rank: Some(3),
            entity_rank: None,
        }];
        let resp = recall_response(&r, &rows, 0, None);
        let e = resp.results[0].explain.as_ref().unwrap();
        assert_eq!(e.k, 60.0);
        let (v, kw) = (
            e.terms.vector.as_ref().unwrap(),
            e.terms.keyword.as_ref().unwrap(),
        );
        assert_eq!((v.rank, v.weight, v.term), (1, 1.0, 1.0 / 61.0));
        assert_eq!((kw.rank, kw.weight, kw.term), (3, 2.0, 2.0 / 63.0));
        assert_eq!(e.terms.entity, None, "the entity arm did not vote");
    }
}
