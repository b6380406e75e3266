//! Anthropic Messages API: `tools`, `tool_use` blocks and `tool_result` blocks.
//!
//! Accepted call payloads: an assistant message `{role, content: [...]}` (a
//! full Messages API response has the same shape) or the bare content array.
//! Only `type: "tool_use"` blocks are read; text, thinking and server-tool
//! blocks are skipped.

use serde_json::{json, Value};

use super::model_output::{anthropic_blocks, ContentPart, ModelOutput};
use super::payload::{given, kind, str_field, structured_args};
use super::{Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::ToolDeclaration;

const P: Provider = Provider::Anthropic;

/// Anthropic tool definitions: `{name, description, input_schema}`.
pub fn anthropic_tools(tools: &[ToolDeclaration]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect()
}

pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let (blocks, base) = match payload {
        Value::Array(blocks) => (blocks, String::new()),
        Value::Object(map) => match map.get("content") {
            Some(Value::Array(blocks)) => (blocks, "/content".to_string()),
            // Plain-text content carries no tool calls.
            Some(Value::String(_)) => return Ok(Vec::new()),
            Some(other) => {
                return Err(ProviderError::payload(
                    P,
                    "/content",
                    format!("expected an array, found {}", kind(other)),
                ));
            }
            None => {
                return Err(ProviderError::payload(
                    P,
                    "",
                    "missing required field `content`",
                ))
            }
        },
        other => {
            return Err(ProviderError::payload(
                P,
                "",
                format!(
                    "expected a message or a content array, found {}",
                    kind(other)
                ),
            ));
        }
    };
    let mut calls = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let path = format!("{base}/{i}");
        let id = str_field(P, block, &path, "id")?;
        let name = str_field(P, block, &path, "name")?;
        let input = structured_args(block.get("input"));
        calls.push(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: ToolCallArguments::Parsed(input),
            arguments_at: given(block, "input").then(|| format!("{path}/input")),
        });
    }
    Ok(calls)
}

/// One user message holding a `tool_result` block per reply.
pub(super) fn format_replies(replies: &[ToolReply]) -> Vec<Value> {
    if replies.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<Value> = replies
        .iter()
        .map(|r| {
            let content = match (&r.outcome, &r.shown) {
                (Ok(_), Some(ModelOutput::Parts(parts))) if parts.iter().any(|p| matches!(p, ContentPart::Image { .. })) => {
                    Value::Array(anthropic_blocks(parts, |t| r.budget(t)))
                }
                _ => json!(r.content_text()),
            };
            json!({
                "type": "tool_result",
                "tool_use_id": r.call_id,
                "content": content,
                "is_error": r.is_error(),
            })
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}
