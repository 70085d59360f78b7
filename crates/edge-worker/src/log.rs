//! One structured log line per request: route, status, timings and sizes. Never a token, a
//! database URL, or the query / memory text (only its length).

use serde::Serialize;

/// The fields of a request's log line.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestLog {
    pub level: &'static str,
    pub route: &'static str,
    pub method: String,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// The token's namespace (not secret; says whose traffic this is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_chars: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<usize>,
    pub total_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_ms: Option<u64>,
    /// Internal detail of a failure (database or socket error text); never sent to clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl RequestLog {
    /// `info` for answers below 500, `error` otherwise.
    pub fn finish(mut self, status: u16) -> RequestLog {
        self.status = status;
        self.level = if status >= 500 { "error" } else { "info" };
        self
    }

    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"level\":\"error\"}".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_carries_lengths_not_text() {
        let log = RequestLog {
            route: "recall",
            method: "POST".into(),
            namespace: Some("a".into()),
            query_chars: Some(15),
            total_ms: 12,
            ..RequestLog::default()
        }
        .finish(200);
        let v: serde_json::Value = serde_json::from_str(&log.line()).unwrap();
        assert_eq!(v["level"], "info");
        assert_eq!(v["queryChars"], 15);
        assert!(v.get("detail").is_none());
        assert_eq!(log.finish(503).level, "error");
    }
}
