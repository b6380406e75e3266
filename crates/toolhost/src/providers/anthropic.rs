//! Anthropic Messages API: `tools`, `tool_use` blocks and `tool_result` blocks.
//!
//! Accepted call payloads: an assistant message `{role, content: [...]}` (a
//! full Messages API response has the same shape) or the bare content array.
//! Only `type: "tool_use"` blocks are read; text, thinking and server-tool
//! blocks are skipped. A block without a `type`, or another format's payload (an OpenAI
//! message, a single block), is refused, naming what it is; so are raw stream events
//! (`content_block_start`, ...), which carry a tool_use in pieces: the message the stream
//! builds is what to pass.

use serde_json::{json, Value};

use super::model_output::{anthropic_blocks, ContentPart, ModelOutput};
use super::payload::{given, str_field, structured_args};
use super::root_schema::refuse_root_applicators;
use super::shape::{is_ag_ui_type, wrong_shape, ANTHROPIC_STREAM_EVENTS, OPENAI_TYPES};
use super::{Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::ToolDeclaration;

const P: Provider = Provider::Anthropic;

/// Anthropic tool definitions: `{name, description, input_schema}`.
///
/// # Errors
/// [`ProviderError::UnsupportedSchema`] for a schema with `anyOf`, `oneOf` or `allOf`
/// at its root, which Anthropic refuses.
pub fn anthropic_tools(tools: &[ToolDeclaration]) -> Result<Vec<Value>, ProviderError> {
    tools
        .iter()
        .map(|t| {
            refuse_root_applicators("Anthropic", &t.name, &t.input_schema)?;
            Ok(json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        })
        .collect()
}

/// The shapes [`parse_tool_calls`] reads, for its refusals.
const EXPECTED: &str = "an Anthropic message ({ role, content }) or its content array of blocks ({ type, ... })";

pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let (blocks, base) = match payload {
        Value::Array(blocks) => (blocks, String::new()),
        // A message: `{ role, content }`, and a response's `type: "message"`. An OpenAI
        // message (`tool_calls`), a single block (`type: "tool_use"`) or another
        // provider's response is not one.
        Value::Object(map) if map.contains_key("tool_calls") || map.get("type").is_some_and(|t| t != "message") => {
            return Err(wrong_shape(P, "", EXPECTED, payload));
        }
        Value::Object(map) => match map.get("content") {
            Some(Value::Array(blocks)) => (blocks, "/content".to_string()),
            // Plain-text content carries no tool calls.
            Some(Value::String(_)) if map.contains_key("role") => return Ok(Vec::new()),
            _ => return Err(wrong_shape(P, "", EXPECTED, payload)),
        },
        other => return Err(wrong_shape(P, "", EXPECTED, other)),
    };
    // Every content block has a `type`; OpenAI tool calls and items, AG-UI events and
    // Anthropic's own stream events (whose tool_use blocks come in pieces) are not blocks.
    for (i, block) in blocks.iter().enumerate() {
        let t = block.get("type").and_then(Value::as_str);
        if t.is_some_and(|t| ANTHROPIC_STREAM_EVENTS.contains(&t)) {
            return Err(wrong_shape(P, format!("{base}/{i}"), EXPECTED, block));
        }
        if t.is_none_or(|t| OPENAI_TYPES.contains(&t) || is_ag_ui_type(t)) {
            let at = if base.is_empty() { String::new() } else { format!("{base}/{i}") };
            return Err(wrong_shape(P, at, EXPECTED, if base.is_empty() { payload } else { block }));
        }
    }
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
