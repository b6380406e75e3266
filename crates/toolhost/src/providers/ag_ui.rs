//! AG-UI: tool definitions, `TOOL_CALL_*` events and tool messages.
//!
//! Accepted call payloads: an array of events (or `{events: [...]}`).
//! `TOOL_CALL_START {toolCallId, toolCallName}` opens a call,
//! `TOOL_CALL_ARGS {toolCallId, delta}` appends argument text and
//! `TOOL_CALL_END {toolCallId}` closes it. `TOOL_CALL_CHUNK` events (the
//! protocol's convenience form) are also read: a chunk with a new
//! `toolCallId` and a `toolCallName` opens a call, later chunks append their
//! `delta` to it, and no END is needed. Other event types are ignored; an item that is
//! not an event (no upper-case `type`), or another format's payload, is refused.
//! A call that is started but never ended is an error naming it.

use std::sync::atomic::{AtomicU64, Ordering};
use crate::clock::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::payload::str_field;
use super::shape::{is_ag_ui_type, wrong_shape};
use super::{Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::ToolDeclaration;

const P: Provider = Provider::AgUi;

/// AG-UI tool definitions: `{name, description, parameters}`.
pub fn ag_ui_tools(tools: &[ToolDeclaration]) -> Vec<Value> {
    tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "parameters": t.input_schema}),
        )
        .collect()
}

struct Pending {
    id: String,
    name: String,
    args: String,
    ended: bool,
}

/// The shapes [`parse_tool_calls`] reads, for its refusals.
const EXPECTED: &str = "an array of AG-UI events ({ type: 'TOOL_CALL_START' | 'TOOL_CALL_ARGS' | ..., ... }) or { events: [...] }";

pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let (events, base) = match payload {
        Value::Array(events) => (events, ""),
        Value::Object(map) => match map.get("events") {
            Some(Value::Array(events)) => (events, "/events"),
            _ => return Err(wrong_shape(P, "", EXPECTED, payload)),
        },
        other => return Err(wrong_shape(P, "", EXPECTED, other)),
    };
    // Every event has an upper-case `type` (`TEXT_MESSAGE_START`, `RUN_FINISHED`, ...):
    // other formats' items are not events.
    for (i, event) in events.iter().enumerate() {
        if !event.get("type").and_then(Value::as_str).is_some_and(is_ag_ui_type) {
            let at = format!("{base}/{i}");
            return Err(wrong_shape(P, at, EXPECTED, if base.is_empty() { payload } else { event }));
        }
    }
    let mut calls: Vec<Pending> = Vec::new();
    let mut chunk_call: Option<usize> = None;
    for (i, event) in events.iter().enumerate() {
        let path = format!("{base}/{i}");
        let event_type = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if event_type != "TOOL_CALL_CHUNK" {
            chunk_call = None;
        }
        // The latest call with this id: an id a model reuses after a call ended starts a new call.
        let find = |calls: &[Pending], id: &str| calls.iter().rposition(|c| c.id == id);
        match event_type {
            "TOOL_CALL_START" => {
                let id = str_field(P, event, &path, "toolCallId")?;
                let name = str_field(P, event, &path, "toolCallName")?;
                if find(&calls, id).is_some_and(|k| !calls[k].ended) {
                    return Err(ProviderError::payload(
                        P,
                        path,
                        format!("tool call `{id}` was started again before it ended"),
                    ));
                }
                calls.push(Pending {
                    id: id.into(),
                    name: name.into(),
                    args: String::new(),
                    ended: false,
                });
            }
            "TOOL_CALL_ARGS" | "TOOL_CALL_END" => {
                let id = str_field(P, event, &path, "toolCallId")?;
                let Some(index) = find(&calls, id) else {
                    return Err(ProviderError::payload(
                        P,
                        path,
                        format!("{event_type} for tool call `{id}`, which was never started"),
                    ));
                };
                if calls[index].ended {
                    return Err(ProviderError::payload(
                        P,
                        path,
                        format!("{event_type} for tool call `{id}` after it ended"),
                    ));
                }
                if event_type == "TOOL_CALL_END" {
                    calls[index].ended = true;
                } else {
                    calls[index]
                        .args
                        .push_str(str_field(P, event, &path, "delta")?);
                }
            }
            "TOOL_CALL_CHUNK" => {
                let id = event.get("toolCallId").and_then(Value::as_str);
                let index = match (id, chunk_call) {
                    (Some(id), Some(open)) if calls[open].id == id => open,
                    (Some(id), _) => {
                        if find(&calls, id).is_some_and(|k| !calls[k].ended) {
                            return Err(ProviderError::payload(
                                P,
                                path,
                                format!("tool call `{id}` was started again before it ended"),
                            ));
                        }
                        let name = str_field(P, event, &path, "toolCallName")?;
                        calls.push(Pending {
                            id: id.into(),
                            name: name.into(),
                            args: String::new(),
                            ended: true,
                        });
                        calls.len() - 1
                    }
                    (None, Some(open)) => open,
                    (None, None) => {
                        return Err(ProviderError::payload(
                            P,
                            path,
                            "TOOL_CALL_CHUNK without `toolCallId` and no open chunked call",
                        ));
                    }
                };
                if let Some(delta) = event.get("delta").and_then(Value::as_str) {
                    calls[index].args.push_str(delta);
                }
                chunk_call = Some(index);
            }
            _ => {}
        }
    }
    if let Some(open) = calls.iter().find(|c| !c.ended) {
        return Err(ProviderError::UnterminatedToolCall {
            call_id: open.id.clone(),
            name: open.name.clone(),
        });
    }
    Ok(calls
        .into_iter()
        .map(|c| ToolCall {
            arguments: ToolCallArguments::from_json_text(&c.args),
            arguments_at: None,
            id: c.id,
            name: c.name,
        })
        .collect())
}

/// One AG-UI `ToolMessage` per reply: `{id, role: "tool", toolCallId, content, error?}`.
pub(super) fn format_replies(replies: &[ToolReply]) -> Vec<Value> {
    replies
        .iter()
        .map(|reply| {
            let mut message = json!({
                "id": message_id(),
                "role": "tool",
                "toolCallId": reply.call_id,
                "content": reply.content_text(),
            });
            if let Err(text) = &reply.outcome {
                message["error"] = json!(text);
            }
            message
        })
        .collect()
}

/// A message id unique within this process (and, through the clock, very
/// likely across processes).
fn message_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("toolhost-msg-{nanos:x}-{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_are_unique() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| message_id()).collect();
        assert_eq!(ids.len(), 1000);
    }
}
