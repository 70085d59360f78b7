//! `POST /mcp` (wasm32): runs the tool calls that [`crate::mcp`] parsed on the store layer, the
//! same calls as `/v1/recall` and `/v1/memories` (the query embedding, the embedder check, one
//! `memloom_fuse`, `memloom_remember`) plus forget (`memloom_forget`) and history, in the bearer
//! token's namespace.

use super::context::RequestCx;
use super::http::{empty, header, read_body, respond, to_json, Request, Response};
use super::store::{self, ForgetTarget};
use crate::api;
use crate::mcp::{self, Action, Forget, ToolCall};
use crate::ApiError;
use serde::Serialize;

/// Answers one MCP message; the caller has authenticated the token as `namespace`.
pub(super) async fn handle_mcp(
    req: Request,
    namespace: &str,
    cx: &mut RequestCx<'_>,
) -> Result<Response, ApiError> {
    let version = header(&req, "mcp-protocol-version");
    let body = read_body(&req, &mut cx.log).await?;
    match mcp::handle(&body, version.as_deref()) {
        Action::Accepted => empty(202),
        Action::Reply { status, body } => respond(status, body),
        Action::Call { id, call } => {
            cx.log.route = call.log_name();
            let result = match run(call, namespace, cx).await {
                Ok(result) => result,
                // Client-safe messages only (ApiError never carries internal detail).
                Err(e) => {
                    cx.log.code = Some(e.code);
                    mcp::tool_error(&e.message)
                }
            };
            respond(200, mcp::tool_reply(&id, &result))
        }
    }
}

/// The tool's result, as JSON text.
async fn run(call: ToolCall, namespace: &str, cx: &mut RequestCx<'_>) -> Result<String, ApiError> {
    match call {
        ToolCall::Invalid { message, .. } => Ok(mcp::tool_error(&message)),
        ToolCall::Recall(recall) => {
            let (rows, _, _) = store::recall(cx, &recall, namespace).await?;
            let out = api::recall_response(&recall, &rows, cx.elapsed(), None);
            Ok(mcp::tool_result(&mcp::format_recall(&out), &to_json(&out)?))
        }
        ToolCall::Remember(memory) => {
            let saved = store::remember(cx, &memory, namespace).await?;
            let key = memory.key.as_deref();
            Ok(mcp::tool_result(
                &mcp::remembered_text(key, saved.id, saved.version),
                &to_json(&Remembered {
                    id: saved.id,
                    key,
                    version: saved.version,
                })?,
            ))
        }
        ToolCall::Forget(target) => {
            let which = match &target {
                Forget::Id(id) => ForgetTarget::Id(*id),
                Forget::Key(key) => ForgetTarget::Key(key.clone()),
            };
            let done = store::forget(cx, namespace, &which).await?;
            let n = done.deleted;
            let deleted = to_json(&Deleted { deleted: n })?;
            Ok(match target {
                Forget::Id(id) if done.not_a_memory => mcp::tool_error(&format!(
                    "item {id} is a document chunk, not a memory; chunks are removed by deleting the file and ingesting again"
                )),
                Forget::Id(id) if n == 0 => mcp::tool_error(&format!(
                    "no memory with id {id}; recall or history show the ids of memories"
                )),
                Forget::Key(key) if n == 0 => mcp::tool_error(&format!(
                    "no memory with key \"{key}\"; nothing was deleted (history shows what a key holds)"
                )),
                Forget::Id(id) => {
                    mcp::tool_result(&format!("forgot memory {id}"), &deleted)
                }
                Forget::Key(key) => mcp::tool_result(
                    &format!(
                        "forgot key \"{key}\" ({n} version{})",
                        if n == 1 { "" } else { "s" }
                    ),
                    &deleted,
                ),
            })
        }
        ToolCall::History(key) => {
            let versions = store::history(cx, namespace, &key).await?;
            if versions.is_empty() {
                return Ok(mcp::tool_error(&format!(
                    "no memory with key \"{key}\"; remember creates one"
                )));
            }
            let lines: Vec<String> = versions
                .iter()
                .map(|v| {
                    format!(
                        "v{} (id {}, {}, held {} .. {}{}): {}",
                        v.version,
                        v.id,
                        v.status,
                        v.valid_from,
                        v.valid_to.as_deref().unwrap_or("now"),
                        v.event_at
                            .as_deref()
                            .map(|e| format!(", event {e}"))
                            .unwrap_or_default(),
                        v.content
                    )
                })
                .collect();
            let text = format!("history of \"{key}\", oldest first:\n{}", lines.join("\n"));
            let versions: Vec<Version> = versions
                .iter()
                .map(|v| Version {
                    id: v.id,
                    version: v.version,
                    status: &v.status,
                    content: &v.content,
                    created_at: &v.created_at,
                    valid_from: &v.valid_from,
                    valid_to: v.valid_to.as_deref(),
                    event_at: v.event_at.as_deref(),
                })
                .collect();
            Ok(mcp::tool_result(
                &text,
                &to_json(&History {
                    key: &key,
                    versions,
                })?,
            ))
        }
    }
}

#[derive(Serialize)]
struct Remembered<'a> {
    id: i64,
    key: Option<&'a str>,
    version: i32,
}

#[derive(Serialize)]
struct Deleted {
    deleted: i64,
}

#[derive(Serialize)]
struct History<'a> {
    key: &'a str,
    versions: Vec<Version<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Version<'a> {
    id: i64,
    version: i32,
    status: &'a str,
    content: &'a str,
    created_at: &'a str,
    valid_from: &'a str,
    valid_to: Option<&'a str>,
    event_at: Option<&'a str>,
}
