//! OpenAI Chat Completions: `tools`, `tool_calls` and `role: "tool"` messages.
//!
//! Accepted call payloads: an assistant message
//! `{role: "assistant", tool_calls: [{id, type: "function", function: {name, arguments}}]}`,
//! a full ChatCompletion `{choices: [{message}]}` of one choice (several are
//! alternative answers, and are refused), or the bare `tool_calls` array. Anything else (a choice instead of its
//! message, another provider's response, a message with the legacy `function_call`)
//! is refused, naming what it is.

use serde_json::{json, Map, Value};

use super::payload::{kind, opt_array_field, str_field};
use super::root_schema::refuse_root_applicators;
use super::shape::{recognise, wrong_shape};
use super::{make_strict_schema, Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::ToolDeclaration;

const P: Provider = Provider::OpenAi;

/// Chat Completions tool definitions:
/// `{type: "function", function: {name, description, parameters, strict?}}`.
///
/// With `strict`, each schema is rewritten by [`make_strict_schema`] and
/// `strict: true` is set; without it, schemas pass through and `strict` is omitted.
pub fn openai_chat_tools(
    tools: &[ToolDeclaration],
    strict: bool,
) -> Result<Vec<Value>, ProviderError> {
    tools
        .iter()
        .map(|tool| {
            let mut function = json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": parameters(tool, strict)?,
            });
            if strict {
                function["strict"] = Value::Bool(true);
            }
            Ok(json!({"type": "function", "function": function}))
        })
        .collect()
}

/// The `parameters` schema for a tool, made strict-compatible when asked. A root
/// `anyOf`, `oneOf` or `allOf` is refused either way: OpenAI rejects it.
pub(crate) fn parameters(tool: &ToolDeclaration, strict: bool) -> Result<Value, ProviderError> {
    if strict {
        make_strict_schema(&tool.name, &tool.input_schema)
    } else {
        refuse_root_applicators("OpenAI", &tool.name, &tool.input_schema)?;
        Ok(tool.input_schema.clone())
    }
}

/// The shapes [`parse_tool_calls`] reads, for its refusals.
const EXPECTED: &str = "an OpenAI Chat assistant message ({ role: 'assistant', content, tool_calls? }), a ChatCompletion ({ choices }) or a tool_calls array";

/// Content part types of Chat messages.
const PART_TYPES: &[&str] = &["text", "refusal", "image_url", "input_audio", "file"];

pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    if let Value::Array(calls) = payload {
        return calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // A tool call has `function` (or a `type` of its own, refused by name below);
                // another format's item is not one.
                // OpenAI's tool calls are `{ id, type: t, [t]: {...} }`: `function`, or a
                // type of their own that is refused by name below (`custom`).
                let own_type = c.get("type").and_then(Value::as_str).is_some_and(|t| t == "function" || c.get(t).is_some_and(Value::is_object));
                let foreign = recognise(c).provider.is_some_and(|p| p != P);
                if foreign || !(c.get("function").is_some_and(Value::is_object) || own_type) {
                    return Err(wrong_shape(P, "", EXPECTED, payload));
                }
                parse_call(c, &format!("/{i}"))
            })
            .collect();
    }
    let Value::Object(object) = payload else {
        return Err(wrong_shape(P, "", EXPECTED, payload));
    };
    let Some(choices) = opt_array_field(P, payload, "", "choices")? else {
        if !is_message(object) {
            return Err(wrong_shape(P, "", EXPECTED, payload));
        }
        return message_calls(payload, "");
    };
    if choices.len() > 1 {
        return Err(ProviderError::payload(
            P,
            "/choices",
            format!("the completion has {} choices (a request with n > 1): they are alternative answers, and running the calls of each would run them once per choice; pass the chosen choice's message (choices[i].message)", choices.len()),
        ));
    }
    let mut calls = Vec::new();
    for (i, choice) in choices.iter().enumerate() {
        let path = format!("/choices/{i}");
        let message = choice
            .get("message")
            .filter(|m| m.is_object())
            .ok_or_else(|| {
                ProviderError::payload(P, path.as_str(), "choice has no `message` object")
            })?;
        calls.extend(message_calls(message, &format!("{path}/message"))?);
    }
    Ok(calls)
}

/// Whether `o` is a Chat message: it has `tool_calls`, or a `role` and no `type` (which
/// Anthropic messages and Responses items have), with `content` that is text, null or
/// Chat content parts (a Gemini Content has `role` and `parts`). A plain-text answer is one, and holds no tool calls.
fn is_message(o: &Map<String, Value>) -> bool {
    if o.contains_key("tool_calls") {
        return true;
    }
    let content_is_chat = match o.get("content") {
        Some(Value::Null | Value::String(_)) => true,
        Some(Value::Array(parts)) => parts.iter().all(|p| p.get("type").and_then(Value::as_str).is_some_and(|t| PART_TYPES.contains(&t))),
        None | Some(_) => false,
    };
    o.get("role").is_some_and(Value::is_string) && !o.contains_key("type") && content_is_chat
}

fn message_calls(message: &Value, path: &str) -> Result<Vec<ToolCall>, ProviderError> {
    if message.get("function_call").is_some_and(Value::is_object) {
        return Err(ProviderError::payload(
            P,
            format!("{path}/function_call"),
            "the message calls a function through the legacy `function_call` field (the deprecated `functions` request option), which has no call id to reply to: send the tools as `tools` (toOpenAITools()) so the model answers with `tool_calls`, and pass that message",
        ));
    }
    let calls = opt_array_field(P, message, path, "tool_calls")?.unwrap_or_default();
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| parse_call(c, &format!("{path}/tool_calls/{i}")))
        .collect()
}

fn parse_call(call: &Value, path: &str) -> Result<ToolCall, ProviderError> {
    let id = str_field(P, call, path, "id")?;
    match call.get("type").and_then(Value::as_str) {
        None | Some("function") => {}
        Some(other) => {
            return Err(ProviderError::payload(
                P,
                format!("{path}/type"),
                format!("unsupported tool call type `{other}` (call `{id}`); only `function` calls are supported"),
            ));
        }
    }
    let function_path = format!("{path}/function");
    let function = call
        .get("function")
        .filter(|f| f.is_object())
        .ok_or_else(|| {
            ProviderError::payload(
                P,
                path,
                format!("tool call `{id}` has no `function` object"),
            )
        })?;
    let name = str_field(P, function, &function_path, "name")?;
    let mut arguments_at = None;
    let arguments = match function.get("arguments") {
        Some(Value::String(text)) => {
            arguments_at = Some(format!("{function_path}/arguments"));
            ToolCallArguments::from_json_text(text)
        }
        None | Some(Value::Null) => ToolCallArguments::Parsed(json!({})),
        // Some OpenAI-compatible servers send the arguments already decoded.
        Some(value @ Value::Object(_)) => {
            arguments_at = Some(format!("{function_path}/arguments"));
            ToolCallArguments::Parsed(value.clone())
        }
        Some(other) => {
            return Err(ProviderError::payload(
                P,
                format!("{function_path}/arguments"),
                format!("expected JSON text, found {}", kind(other)),
            ));
        }
    };
    Ok(ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments,
        arguments_at,
    })
}

pub(super) fn format_replies(replies: &[ToolReply]) -> Vec<Value> {
    replies
        .iter()
        .map(|r| json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content_text()}))
        .collect()
}
