//! OpenAI Responses API: function tools, `function_call` output items and
//! `function_call_output` input items.
//!
//! Accepted call payloads: a Response `{output: [...]}` or the bare output
//! array. Only `type: "function_call"` items are read; messages, reasoning
//! and built-in tool items are skipped. An item without a `type`, or another format's
//! payload, is refused, naming what it is.

use serde_json::{json, Value};

use super::openai::parameters;
use super::payload::{kind, str_field};
use super::shape::{recognise, wrong_shape};
use super::{Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::ToolDeclaration;

const P: Provider = Provider::OpenAiResponses;

/// Responses API tool definitions:
/// `{type: "function", name, description, parameters, strict}`.
///
/// `strict` is always written because the Responses API defaults it to
/// `true`; with `strict`, schemas are rewritten by
/// [`make_strict_schema`](super::make_strict_schema).
pub fn openai_responses_tools(
    tools: &[ToolDeclaration],
    strict: bool,
) -> Result<Vec<Value>, ProviderError> {
    tools
        .iter()
        .map(|tool| {
            Ok(json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": parameters(tool, strict)?,
                "strict": strict,
            }))
        })
        .collect()
}

/// The shapes [`parse_tool_calls`] reads, for its refusals.
const EXPECTED: &str = "an OpenAI Responses response ({ output: [...] }) or its output array of items ({ type, ... })";

pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let (items, base) = match payload {
        Value::Array(items) => (items, String::new()),
        Value::Object(map) => match map.get("output") {
            Some(Value::Array(items)) => (items, "/output".to_string()),
            Some(other) => {
                return Err(ProviderError::payload(
                    P,
                    "/output",
                    format!("expected an array, found {}", kind(other)),
                ));
            }
            None => return Err(wrong_shape(P, "", EXPECTED, payload)),
        },
        other => return Err(wrong_shape(P, "", EXPECTED, other)),
    };
    // Every output item has a `type`; Chat messages, Anthropic blocks and AG-UI events
    // are not items.
    for (i, item) in items.iter().enumerate() {
        let typed = item.get("type").is_some_and(Value::is_string);
        if !typed || recognise(item).provider.is_some_and(|p| p != P) {
            let at = if base.is_empty() { String::new() } else { format!("{base}/{i}") };
            return Err(wrong_shape(P, at, EXPECTED, if base.is_empty() { payload } else { item }));
        }
    }
    let mut calls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            continue;
        }
        let path = format!("{base}/{i}");
        let id = str_field(P, item, &path, "call_id")?;
        let name = str_field(P, item, &path, "name")?;
        let arguments_at = matches!(item.get("arguments"), Some(Value::String(_))).then(|| format!("{path}/arguments"));
        let arguments = match item.get("arguments") {
            Some(Value::String(text)) => ToolCallArguments::from_json_text(text),
            None | Some(Value::Null) => ToolCallArguments::Parsed(json!({})),
            Some(other) => {
                return Err(ProviderError::payload(
                    P,
                    format!("{path}/arguments"),
                    format!("expected JSON text, found {}", kind(other)),
                ));
            }
        };
        calls.push(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments,
            arguments_at,
        });
    }
    Ok(calls)
}

pub(super) fn format_replies(replies: &[ToolReply]) -> Vec<Value> {
    replies
        .iter()
        .map(|r| json!({"type": "function_call_output", "call_id": r.call_id, "output": r.content_text()}))
        .collect()
}
