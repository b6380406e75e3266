//! What a payload looks like, for the error a provider adapter gives when a response is
//! not in its format: "expected an Anthropic message ...; got an OpenAI Chat choice".
//!
//! A response that is not the provider's shape used to read as "no tool calls" in some
//! adapters, so the model's next turn failed at the provider with a 400 far from the
//! cause. Each adapter now accepts only its own shapes and refuses anything else with
//! [`ProviderError::WrongShape`], naming what it expected, what it was given (recognised
//! here by the fields each format is known by) and, when the payload is recognisably
//! another provider's, which provider to pass instead.

use serde_json::{Map, Value};

use super::payload::kind;
use super::{Provider, ProviderError};

/// What a payload was recognised as: a phrase, and the provider whose format it is when
/// that is known.
pub(crate) struct Recognised {
    pub what: String,
    pub provider: Option<Provider>,
    /// How to hand the payload over instead (a choice: its `message`).
    pub fix: Option<&'static str>,
}

impl Recognised {
    fn of(what: impl Into<String>, provider: Option<Provider>) -> Self {
        Self { what: what.into(), provider, fix: None }
    }
}

fn str_of<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// An AG-UI event type: upper-case words joined by `_` (`TOOL_CALL_START`).
pub(crate) fn is_ag_ui_type(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_uppercase()) && t.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Content block types of Anthropic messages that other formats never use.
const ANTHROPIC_BLOCKS: &[&str] = &["tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"];
/// Event types of an Anthropic Messages stream: a list of them is not a message.
pub(crate) const ANTHROPIC_STREAM_EVENTS: &[&str] = &[
    "message_start", "message_delta", "message_stop", "content_block_start", "content_block_delta", "content_block_stop",
];
/// Item and part types of OpenAI's formats that Anthropic never uses.
pub(crate) const OPENAI_TYPES: &[&str] = &[
    "function", "function_call", "function_call_output", "message", "output_text", "input_text", "refusal", "reasoning",
    "image_url", "input_audio",
];

/// A phrase for `value` and the provider it belongs to, when recognisable.
pub(crate) fn recognise(value: &Value) -> Recognised {
    match value {
        Value::Array(items) => match items.first() {
            None => Recognised::of("an empty array", None),
            Some(first) => {
                let r = recognise(first);
                Recognised { what: format!("an array whose first item is {}", r.what), ..r }
            }
        },
        Value::Object(o) => recognise_object(o),
        other => Recognised::of(kind(other), None),
    }
}

fn recognise_object(o: &Map<String, Value>) -> Recognised {
    use Provider::*;
    let t = str_of(o, "type");
    if o.get("choices").is_some_and(Value::is_array) || str_of(o, "object") == Some("chat.completion") {
        return Recognised::of("an OpenAI ChatCompletion ({ choices })", Some(OpenAi));
    }
    if o.get("message").is_some_and(Value::is_object) && (o.contains_key("finish_reason") || o.contains_key("index")) {
        return Recognised {
            what: "an OpenAI Chat choice ({ index, message, finish_reason })".into(),
            provider: Some(OpenAi),
            fix: Some("pass the choice's `message` (choices[0].message) or the whole completion"),
        };
    }
    if str_of(o, "object") == Some("response") || o.get("output").is_some_and(Value::is_array) {
        return Recognised::of("an OpenAI Responses response ({ output })", Some(OpenAiResponses));
    }
    if t == Some("function_call") {
        return Recognised::of("an OpenAI Responses function_call item", Some(OpenAiResponses));
    }
    if t == Some("message") {
        let parts: Vec<&str> = o.get("content").and_then(Value::as_array).map(|c| c.iter().filter_map(|p| p.get("type").and_then(Value::as_str)).collect()).unwrap_or_default();
        let responses_parts = ["output_text", "input_text", "refusal", "input_image", "input_file"];
        if o.contains_key("status") || parts.iter().any(|p| responses_parts.contains(p)) {
            return Recognised::of("an OpenAI Responses output message ({ type: 'message', content: [{ type: 'output_text' }] })", Some(OpenAiResponses));
        }
        return Recognised::of("an Anthropic message ({ type: 'message', role, content })", Some(Anthropic));
    }
    if let Some(t) = t.filter(|t| ANTHROPIC_STREAM_EVENTS.contains(t)) {
        return Recognised {
            what: format!("an Anthropic stream event ({t})"),
            provider: Some(Anthropic),
            fix: Some("raw stream events are not a message: pass the message the stream builds (`await stream.finalMessage()` with the Anthropic SDK)"),
        };
    }
    if let Some(t) = t.filter(|t| ANTHROPIC_BLOCKS.contains(t)) {
        return Recognised::of(format!("an Anthropic {t} content block"), Some(Anthropic));
    }
    if let Some(t) = t.filter(|t| is_ag_ui_type(t)) {
        return Recognised::of(format!("an AG-UI {t} event"), Some(AgUi));
    }
    if o.get("events").is_some_and(Value::is_array) {
        return Recognised::of("AG-UI events ({ events })", Some(AgUi));
    }
    if o.contains_key("candidates") || o.get("promptFeedback").is_some_and(Value::is_object) {
        return Recognised::of("a Gemini GenerateContentResponse ({ candidates })", Some(Gemini));
    }
    if o.get("parts").is_some_and(Value::is_array) {
        return Recognised::of("a Gemini Content ({ role, parts })", Some(Gemini));
    }
    if o.contains_key("functionCall") {
        return Recognised::of("a Gemini Part ({ functionCall })", Some(Gemini));
    }
    if str_of(o, "method").is_some() || o.contains_key("jsonrpc") {
        let method = str_of(o, "method").unwrap_or("?");
        return Recognised::of(format!("a JSON-RPC request (method `{method}`)"), (method == "tools/call").then_some(Mcp));
    }
    if o.contains_key("tool_calls") || (o.contains_key("role") && matches!(o.get("content"), Some(Value::String(_) | Value::Null))) {
        return Recognised::of("an OpenAI Chat message ({ role, content, tool_calls })", Some(OpenAi));
    }
    if o.get("function").is_some_and(Value::is_object) && o.contains_key("id") {
        return Recognised::of("an OpenAI Chat tool call ({ id, type: 'function', function })", Some(OpenAi));
    }
    // Items with a `type` of their own (a Responses `mcp_call` has `name` and `arguments`)
    // are not these.
    if t.is_none() && o.contains_key("name") && o.contains_key("args") {
        return Recognised::of("a Gemini FunctionCall ({ name, args })", Some(Gemini));
    }
    if t.is_none() && o.contains_key("name") && o.contains_key("arguments") {
        return Recognised::of("MCP tools/call params ({ name, arguments })", Some(Mcp));
    }
    if o.contains_key("role") && o.get("content").is_some_and(Value::is_array) {
        return Recognised::of("a message whose content is an array of parts", None);
    }
    if o.is_empty() {
        return Recognised::of("an empty object", None);
    }
    let mut keys: Vec<String> = o.keys().take(6).map(|k| format!("`{k}`")).collect();
    if o.len() > 6 {
        keys.push("...".into());
    }
    Recognised::of(format!("an object with keys {}", keys.join(", ")), None)
}

/// The error for a payload `provider` cannot read as one of `expected`: what it was
/// given instead, and the provider to pass when it is another's.
pub(crate) fn wrong_shape(provider: Provider, path: impl Into<String>, expected: &'static str, given: &Value) -> ProviderError {
    let r = recognise(given);
    let hint = match (r.fix, r.provider) {
        (Some(fix), _) => Some(fix.to_string()),
        (None, Some(p)) if p != provider => Some(format!("for that format pass {{ provider: '{p}' }}")),
        _ => None,
    };
    ProviderError::WrongShape { provider, path: path.into(), expected, given: r.what, hint }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recognises_each_format_by_its_fields() {
        let cases = [
            (json!({"choices": []}), Some(Provider::OpenAi)),
            (json!({"index": 0, "message": {}, "finish_reason": "stop"}), Some(Provider::OpenAi)),
            (json!({"role": "assistant", "content": "hi"}), Some(Provider::OpenAi)),
            (json!({"output": []}), Some(Provider::OpenAiResponses)),
            (json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}), Some(Provider::Anthropic)),
            (json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}), Some(Provider::OpenAiResponses)),
            (json!([{"type": "tool_use", "id": "a", "name": "t", "input": {}}]), Some(Provider::Anthropic)),
            (json!({"candidates": []}), Some(Provider::Gemini)),
            (json!({"name": "t", "args": {}}), Some(Provider::Gemini)),
            (json!([{"type": "TOOL_CALL_START"}]), Some(Provider::AgUi)),
            (json!({"jsonrpc": "2.0", "method": "tools/call", "params": {}}), Some(Provider::Mcp)),
            (json!({"a": 1}), None),
        ];
        for (value, provider) in cases {
            assert_eq!(recognise(&value).provider, provider, "{value}");
        }
        assert_eq!(recognise(&json!({"a": 1, "b": 2})).what, "an object with keys `a`, `b`");
    }

    #[test]
    fn the_error_names_what_was_expected_given_and_what_to_pass() {
        let e = wrong_shape(Provider::OpenAi, "", "an OpenAI Chat message", &json!({"type": "message", "role": "assistant", "content": []}));
        assert_eq!(
            e.to_string(),
            "the response is not in the openai format: expected an OpenAI Chat message; got an Anthropic message ({ type: 'message', role, content }): for that format pass { provider: 'anthropic' }"
        );
        let e = wrong_shape(Provider::OpenAi, "", "x", &json!({"index": 0, "message": {}, "finish_reason": "stop"}));
        assert!(e.to_string().ends_with("pass the choice's `message` (choices[0].message) or the whole completion"), "{e}");
    }
}
