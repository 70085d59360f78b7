//! The Model Context Protocol at `POST /mcp` (streamable HTTP, stateless, JSON responses): the
//! JSON-RPC subset an MCP client needs (`initialize`, `notifications/initialized`, `ping`,
//! `tools/list`, `tools/call`) and memloom's four tools, with the names, schemas, text and
//! structured results of `memloom mcp` (npm/src/mcp.js; `mcp_tools.json` is its `tools/list`).
//!
//! No Rust MCP library is used: rmcp's streamable HTTP server is a tower service that spawns
//! Tokio tasks, and workerd has no Tokio runtime. This module is pure (it decides what to do
//! with a body and formats results); `worker/mcp_http.rs` runs the tools against the store.
//!
//! Errors follow the spec: a body that is not JSON-RPC gets HTTP 400 with a JSON-RPC error, an
//! unknown method -32601, an unknown tool -32602, and every failure of a known tool (bad
//! arguments, the store unavailable) a tool result with `isError: true` whose text says what to
//! do. No sessions (no `Mcp-Session-Id`) and no SSE: `GET /mcp` is 405, as the spec allows.

use serde_json::{Map, Value};

use memloom_core::recall_text;

use crate::api::{self, Memory, Recall, MAX_BODY_BYTES, MAX_KEY_CHARS};

/// The protocol versions this server speaks, newest first. An `initialize` asking for another
/// gets the newest (the client then decides whether it can go on).
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The MCP tools file: `memloom mcp`'s `tools/list` (`tools`) and `initialize` instructions
/// (`instructions`), generated from it by `scripts/gen-mcp-tools.mjs`; npm/test/mcp.test.js fails
/// while they differ, and the worker e2e test checks that this server serves them. Without its
/// indentation (build.rs; the same JSON); the tests read it whole, the replies paste its members
/// (below), so the wasm does not carry it twice.
pub const TOOLS_FILE: &str = include_str!(concat!(env!("OUT_DIR"), "/mcp_tools.json"));

/// `tools/list`'s tools and `initialize`'s instructions: the tools file's two members as JSON
/// text, cut out by build.rs (which fails on a file without them), pasted into the replies as
/// they are written.
const TOOLS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/mcp_tools.tools.json"));
const INSTRUCTIONS_JSON: &str =
    include_str!(concat!(env!("OUT_DIR"), "/mcp_tools.instructions.json"));

/// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one POST body.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A notification or a client's response: answer 202 with no body.
    Accepted,
    /// Answer with this HTTP status and JSON-RPC message.
    Reply { status: u16, body: String },
    /// Run a tool, then answer 200 with [`tool_reply`].
    Call { id: Value, call: ToolCall },
}

/// A validated `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    Recall(Recall),
    Remember(Memory),
    Forget(Forget),
    History(String),
    /// Arguments that failed validation: the tool error's text.
    Invalid {
        tool: &'static str,
        message: String,
    },
}

impl ToolCall {
    /// The name used in logs (`mcp/<tool>`).
    pub fn log_name(&self) -> &'static str {
        match self {
            ToolCall::Recall(_) => "mcp/recall",
            ToolCall::Remember(_) => "mcp/remember",
            ToolCall::Forget(_) => "mcp/forget",
            ToolCall::History(_) => "mcp/history",
            ToolCall::Invalid { tool, .. } => tool,
        }
    }
}

/// `forget`'s target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    Id(i64),
    Key(String),
}

/// Decides what to do with a POST body. `protocol_header` is `MCP-Protocol-Version`, if sent.
pub fn handle(body: &[u8], protocol_header: Option<&str>) -> Action {
    if body.len() > MAX_BODY_BYTES {
        return error_reply(
            413,
            Value::Null,
            INVALID_REQUEST,
            format!("the message is larger than {MAX_BODY_BYTES} bytes"),
        );
    }
    if let Some(v) = protocol_header {
        if !PROTOCOL_VERSIONS.contains(&v.trim()) {
            return error_reply(
                400,
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version {:?}; this server speaks {}",
                    crate::error::truncate(v, 40),
                    PROTOCOL_VERSIONS.join(", ")
                ),
            );
        }
    }
    let message: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return error_reply(
                400,
                Value::Null,
                PARSE_ERROR,
                format!("not valid JSON: {e}"),
            )
        }
    };
    let Value::Object(mut msg) = message else {
        let what = if message.is_array() {
            "JSON-RPC batches are not supported; send one message per request"
        } else {
            "a JSON-RPC message must be a JSON object"
        };
        return error_reply(400, Value::Null, INVALID_REQUEST, what.to_string());
    };
    // Taken, not cloned: the message is ours (a clone of a Value tree is code in the bundle).
    let id = msg.get_mut("id").map(Value::take);
    let params = msg
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let id_ok = matches!(id, Some(Value::String(_)) | Some(Value::Number(_)));
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return error_reply(
            400,
            if id_ok {
                id.unwrap_or_default()
            } else {
                Value::Null
            },
            INVALID_REQUEST,
            "\"jsonrpc\" must be \"2.0\"".to_string(),
        );
    }
    let Some(method) = msg.get("method") else {
        // A client's response (to a request this server never sends): nothing to do.
        if id.is_some() && (msg.contains_key("result") || msg.contains_key("error")) {
            return Action::Accepted;
        }
        return error_reply(
            400,
            Value::Null,
            INVALID_REQUEST,
            "a JSON-RPC request needs \"method\"".to_string(),
        );
    };
    let Some(method) = method.as_str() else {
        return error_reply(
            400,
            Value::Null,
            INVALID_REQUEST,
            "\"method\" must be a string".to_string(),
        );
    };
    let Some(id) = id else {
        // Notifications (notifications/initialized, cancelled, ...) need no answer.
        return Action::Accepted;
    };
    if !id_ok {
        return error_reply(
            400,
            Value::Null,
            INVALID_REQUEST,
            "\"id\" must be a string or a number".to_string(),
        );
    }
    match method {
        "initialize" => reply(&id, &initialize_result(&params)),
        "ping" => reply(&id, "{}"),
        "tools/list" => reply(&id, &format!(r#"{{"tools":{TOOLS_JSON}}}"#)),
        "tools/call" => match parse_call(&params) {
            Ok(call) => Action::Call { id, call },
            Err(message) => error_reply(200, id, INVALID_PARAMS, message),
        },
        other => error_reply(
            200,
            id,
            METHOD_NOT_FOUND,
            format!(
                "method {:?} is not supported; this server offers initialize, ping, tools/list and tools/call",
                crate::error::truncate(other, 60)
            ),
        ),
    }
}

/// `initialize`'s result (JSON).
fn initialize_result(params: &Value) -> String {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    // One of ours: needs no escaping.
    let version = asked
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(PROTOCOL_VERSIONS[0]);
    format!(
        r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{"listChanged":false}}}},"serverInfo":{{"name":"memloom","title":"memloom","version":"{}"}},"instructions":{INSTRUCTIONS_JSON}}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

/// `tools/call` params -> a tool call. Err: the tool does not exist (-32602).
fn parse_call(params: &Value) -> Result<ToolCall, String> {
    let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
        "tools/call needs params.name: one of recall, remember, forget, history".to_string()
    })?;
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => Ok(&empty),
        Some(Value::Object(a)) => Ok(a),
        Some(_) => Err(()),
    };
    let invalid = |tool: &'static str, message: String| ToolCall::Invalid { tool, message };
    let tool: &'static str = match name {
        "recall" => "mcp/recall",
        "remember" => "mcp/remember",
        "forget" => "mcp/forget",
        "history" => "mcp/history",
        other => {
            return Err(format!(
                "no tool {:?}; the tools are recall, remember, forget and history",
                crate::error::truncate(other, 60)
            ))
        }
    };
    let Ok(args) = args else {
        return Ok(invalid(tool, "arguments must be a JSON object".into()));
    };
    let checked = match name {
        "recall" => only(args, &["query", "limit", "kinds", "asOf", "since", "until"])
            .and_then(|()| reparse(args, api::parse_recall))
            .map(ToolCall::Recall),
        "remember" => only(args, &["text", "key", "at"])
            .and_then(|()| reparse(args, api::parse_memory))
            .map(ToolCall::Remember),
        "forget" => only(args, &["id", "key"]).and_then(|()| parse_forget(args)),
        _ => only(args, &["key"]).and_then(|()| {
            parse_key(args.get("key"), true).map(|k| ToolCall::History(k.unwrap_or_default()))
        }),
    };
    Ok(checked.unwrap_or_else(|message| invalid(tool, message)))
}

/// Rejects arguments the tool's schema does not have (its `additionalProperties: false`).
fn only(args: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unknown argument {:?}; the arguments are {}",
            crate::error::truncate(k, 40),
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

/// Validates with the REST API's parser, so both front doors accept exactly the same input.
fn reparse<T>(
    args: &Map<String, Value>,
    parse: fn(&[u8]) -> Result<T, crate::ApiError>,
) -> Result<T, String> {
    let bytes = serde_json::to_vec(args).map_err(|e| e.to_string())?;
    parse(&bytes).map_err(|e| e.message)
}

fn parse_forget(args: &Map<String, Value>) -> Result<ToolCall, String> {
    let both = "pass exactly one of id (one memory) or key (every version of a key)";
    match (args.get("id"), args.get("key")) {
        (Some(id), None) => match id.as_i64() {
            Some(n) if n > 0 => Ok(ToolCall::Forget(Forget::Id(n))),
            _ => Err(format!(
                "id must be a positive integer (a memory's id from remember or recall), not {}",
                json_text(id)
            )),
        },
        (None, Some(_)) => parse_key(args.get("key"), true)
            .map(|k| ToolCall::Forget(Forget::Key(k.unwrap_or_default()))),
        _ => Err(both.to_string()),
    }
}

fn parse_key(v: Option<&Value>, required: bool) -> Result<Option<String>, String> {
    let message =
        || format!("key must be 1 to {MAX_KEY_CHARS} characters without control characters");
    match v {
        None if required => Err("key is required: the memory key, as given to remember".into()),
        None => Ok(None),
        Some(Value::String(k)) => {
            if k.trim().is_empty()
                || k.chars().count() > MAX_KEY_CHARS
                || k.chars().any(char::is_control)
            {
                Err(message())
            } else {
                Ok(Some(k.clone()))
            }
        }
        Some(_) => Err(message()),
    }
}

// Replies -------------------------------------------------------------------------------------
// Written as JSON text around parts that are JSON already (the tools file's members, a tool's
// structured result serialized by serde from its type, as REST serializes it), not built as a
// `serde_json::Value` and serialized again (docs/WORKER.md, "Bundle size").

/// `v` as JSON text. Through serde_json's writer, not `Value`'s `Display`, which would compile
/// a second copy of the serializer for its formatter.
fn json_text(v: &Value) -> String {
    // Serializing a Value cannot fail.
    serde_json::to_string(v).unwrap_or_default()
}

/// `s` as a JSON string.
fn quoted(s: &str) -> String {
    // Serializing a str cannot fail.
    serde_json::to_string(s).unwrap_or_default()
}

fn reply(id: &Value, result: &str) -> Action {
    Action::Reply {
        status: 200,
        body: tool_reply(id, result),
    }
}

fn error_reply(status: u16, id: Value, code: i64, message: String) -> Action {
    Action::Reply {
        status,
        body: error_body(&id, code, &message),
    }
}

/// A JSON-RPC error message.
pub fn error_body(id: &Value, code: i64, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{code},"message":{}}}}}"#,
        json_text(id),
        quoted(message)
    )
}

/// The JSON-RPC response carrying `result` (JSON text: a tool's result, or another method's).
pub fn tool_reply(id: &Value, result: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
        json_text(id)
    )
}

/// A successful tool result (JSON): text for the model, `structured` (JSON) for programs.
pub fn tool_result(text: &str, structured: &str) -> String {
    format!(
        r#"{{"content":[{{"type":"text","text":{}}}],"structuredContent":{structured},"isError":false}}"#,
        quoted(text)
    )
}

/// A failed tool call the model can act on (JSON).
pub fn tool_error(message: &str) -> String {
    format!(
        r#"{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#,
        quoted(&format!("memloom: {message}"))
    )
}

// Text ----------------------------------------------------------------------------------------
// The words a model reads are memloom-core's (`recall_text`), as `memloom mcp`'s are.

/// The recall result as text, from the recall response.
pub fn format_recall(r: &api::RecallResponse<'_>) -> String {
    use std::borrow::Cow::Borrowed;
    // memloom_fuse's ranks count from 1; a rank that is not would not be a vote.
    let rank = |r: Option<i32>| r.and_then(|r| u32::try_from(r).ok());
    let hits: Vec<recall_text::Hit<'_>> = r
        .results
        .iter()
        .map(|h| recall_text::Hit {
            id: h.id,
            kind: Borrowed(h.kind),
            source: h.source.map(Borrowed),
            breadcrumb: h.breadcrumb.map(Borrowed),
            key: h.key.map(Borrowed),
            content: Borrowed(h.content),
            rrf_score: h.rrf_score,
            similarity: h.similarity,
            ranks: memloom_core::Ranks {
                vector: rank(h.ranks.vector),
                keyword: rank(h.ranks.keyword),
                entity: rank(h.ranks.entity),
            },
        })
        .collect();
    recall_text::format_recall(r.query, &hits)
}

/// `remember`'s text.
pub fn remembered_text(key: Option<&str>, id: i64, version: i32) -> String {
    recall_text::remembered_text(key, id, i64::from(version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(a: &Action) -> (u16, Value) {
        match a {
            Action::Reply { status, body } => (*status, serde_json::from_str(body).unwrap()),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn call(name: &str, args: Value) -> ToolCall {
        let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": args}});
        match handle(msg.to_string().as_bytes(), None) {
            Action::Call { id, call } => {
                assert_eq!(id, json!(7));
                call
            }
            other => panic!("expected a call, got {other:?}"),
        }
    }

    fn invalid(c: ToolCall) -> String {
        match c {
            ToolCall::Invalid { message, .. } => message,
            other => panic!("expected invalid arguments, got {other:?}"),
        }
    }

    #[test]
    fn initialize_negotiates_the_version_and_offers_tools() {
        let msg = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let (status, v) = body(&handle(msg, None));
        assert_eq!(status, 200);
        assert_eq!(v["id"], 1);
        assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(v["result"]["serverInfo"]["name"], "memloom");
        assert!(v["result"]["capabilities"]["tools"].is_object());
        let old = br#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#;
        assert_eq!(
            body(&handle(old, None)).1["result"]["protocolVersion"],
            PROTOCOL_VERSIONS[0]
        );
    }

    #[test]
    fn notifications_and_client_responses_are_accepted_without_a_body() {
        let n = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(handle(n, Some("2025-06-18")), Action::Accepted);
        let r = br#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        assert_eq!(handle(r, None), Action::Accepted);
    }

    #[test]
    fn tools_list_is_the_npm_servers_list() {
        let (_, v) = body(&handle(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            None,
        ));
        let names: Vec<&str> = v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["recall", "remember", "forget", "history"]);
        assert_eq!(
            v["result"]["tools"][0]["inputSchema"]["required"],
            json!(["query"])
        );
    }

    #[test]
    fn tools_list_carries_the_behaviour_annotations() {
        let (_, v) = body(&handle(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            None,
        ));
        let hints = |name: &str| -> (Value, Value, Value) {
            let tools = v["result"]["tools"].as_array().unwrap();
            let a = &tools.iter().find(|t| t["name"] == name).unwrap()["annotations"];
            (
                a["readOnlyHint"].clone(),
                a["destructiveHint"].clone(),
                a["idempotentHint"].clone(),
            )
        };
        // (readOnly, destructive, idempotent), as npm/src/tools.js declares them.
        assert_eq!(hints("recall"), (json!(true), json!(false), json!(true)));
        assert_eq!(
            hints("remember"),
            (json!(false), json!(false), json!(false))
        );
        assert_eq!(hints("forget"), (json!(false), json!(true), json!(true)));
        assert_eq!(hints("history"), (json!(true), json!(false), json!(true)));
    }

    #[test]
    fn protocol_errors_are_json_rpc_errors() {
        let cases: [(&[u8], u16, i64); 6] = [
            (b"{not json", 400, PARSE_ERROR),
            (b"[]", 400, INVALID_REQUEST),
            (b"42", 400, INVALID_REQUEST),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                400,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
                200,
                METHOD_NOT_FOUND,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#,
                200,
                INVALID_PARAMS,
            ),
        ];
        for (msg, status, code) in cases {
            let (s, v) = body(&handle(msg, None));
            assert_eq!(
                (s, v["error"]["code"].as_i64()),
                (status, Some(code)),
                "{}",
                String::from_utf8_lossy(msg)
            );
            assert_eq!(v["jsonrpc"], "2.0");
        }
        let (s, _) = body(&handle(
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            Some("1999-01-01"),
        ));
        assert_eq!(s, 400);
        let (s, v) = body(&handle(
            br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
            Some("2025-11-25"),
        ));
        assert_eq!((s, v["result"].clone()), (200, json!({})));
    }

    #[test]
    fn tool_arguments_are_validated_like_the_rest_api() {
        match call(
            "recall",
            json!({"query": " pg_hba.conf ", "limit": 3, "kinds": ["chunk"]}),
        ) {
            ToolCall::Recall(r) => {
                assert_eq!((r.query.as_str(), r.limit), ("pg_hba.conf", 3));
                assert_eq!(r.kinds, Some(vec!["chunk".to_string()]));
            }
            other => panic!("{other:?}"),
        }
        assert!(invalid(call("recall", json!({}))).contains("query"));
        assert!(invalid(call("recall", json!({"query": 5}))).contains("invalid type"));
        assert!(invalid(call("recall", json!({"query": "x", "limit": 0}))).contains("limit"));
        assert!(invalid(call("recall", json!({"query": "x", "kinds": ["docs"]}))).contains("kind"));
        assert!(
            invalid(call("recall", json!({"query": "x", "explain": true})))
                .contains("unknown argument \"explain\"")
        );
        assert!(invalid(call("remember", json!({"text": "  "}))).contains("text is empty"));
        assert!(
            invalid(call("remember", json!({"text": "x", "key": "a\nb"})))
                .contains("control characters")
        );
        match call("remember", json!({"text": "t", "key": "k"})) {
            ToolCall::Remember(m) => assert_eq!(m.key.as_deref(), Some("k")),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            call("forget", json!({"id": 4})),
            ToolCall::Forget(Forget::Id(4))
        );
        assert_eq!(
            call("forget", json!({"key": "k"})),
            ToolCall::Forget(Forget::Key("k".into()))
        );
        assert!(invalid(call("forget", json!({}))).contains("exactly one of id"));
        assert!(invalid(call("forget", json!({"id": 1, "key": "k"}))).contains("exactly one of id"));
        assert!(invalid(call("forget", json!({"id": -1}))).contains("positive integer"));
        assert!(invalid(call("forget", json!({"id": 1.5}))).contains("positive integer"));
        assert_eq!(
            call("history", json!({"key": "k"})),
            ToolCall::History("k".into())
        );
        assert!(invalid(call("history", json!({}))).contains("key is required"));
        assert!(invalid(call("history", json!({"key": 3}))).contains("key must be"));
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": [1]}});
        match handle(msg.to_string().as_bytes(), None) {
            Action::Call { call, .. } => assert!(invalid(call).contains("JSON object")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_tools_file_carries_the_tools_and_the_instructions() {
        let file: Value = serde_json::from_str(TOOLS_FILE).unwrap();
        let instructions = file["instructions"].as_str().unwrap();
        assert!(instructions.contains("Call recall"), "{instructions}");
        let msg = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        assert_eq!(
            body(&handle(msg, None)).1["result"]["instructions"],
            instructions
        );
        let (_, v) = body(&handle(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            None,
        ));
        assert_eq!(v["result"]["tools"], file["tools"]);
    }

    #[test]
    fn recall_text_is_the_cores_over_the_response() {
        // The text itself is tested in memloom-core (recall_text); this checks that each field
        // of the worker's response reaches it.
        let recall = api::parse_recall(br#"{"query":"q"}"#).unwrap();
        let rows = vec![memloom_sql::FusedRow {
            id: 3,
            kind: "chunk".into(),
            source: Some("pg.md".into()),
            breadcrumb: Some("PG > Limits".into()),
            key: None,
            content: "PG > Limits\n\nmax_connections is 200".into(),
            rrf_score: 0.049180327,
            similarity: 0.61234,
            vector_rank: Some(2),
            keyword_rank: Some(1),
            entity_rank: None,
        }];
        let t = format_recall(&api::recall_response(&recall, &rows, 1, None));
        assert_eq!(
            t,
            "1 result for \"q\", best first (cite the source or key):\n\n[1] pg.md › PG > Limits (id 3)\nrrfScore 0.0492 · similarity 0.612 · ranks: vector 2, keyword 1, entity -\nmax_connections is 200"
        );
        let e: Value = serde_json::from_str(&tool_error("x")).unwrap();
        assert_eq!(e["isError"], true);
        assert_eq!(e["content"][0]["text"], "memloom: x");
        assert_eq!(
            remembered_text(Some("k"), 5, 2),
            "remembered \"k\" version 2 (id 5); version 1 is superseded and no longer recalled"
        );
    }
}
