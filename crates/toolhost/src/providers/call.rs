//! Provider-neutral tool calls (coming in) and tool replies (going out).

use serde_json::{Map, Value};

use super::model_output::{parts_text, within_budget, ModelOutput};

/// One tool call requested by a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The provider's call id (or a generated one for providers without ids).
    pub id: String,
    pub name: String,
    pub arguments: ToolCallArguments,
    /// Where the arguments are in the payload (a JSON pointer): a structured value
    /// (Anthropic, Gemini, MCP, OpenAI-compatible servers that decode them) or the JSON
    /// text OpenAI sends. A host holding the payload can hand on the value or text
    /// exactly where a [`Value`] could not (a lone surrogate in a string; see
    /// [`crate::json_text`]).
    pub arguments_at: Option<String>,
}

/// The arguments of a tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolCallArguments {
    /// Arguments that were valid JSON (or already structured by the provider).
    Parsed(Value),
    /// Argument text that is not valid JSON; `error` is the parser's message.
    Malformed { raw: String, error: String },
    /// Valid JSON text that a [`Value`] cannot hold exactly: its strings have lone
    /// surrogates, which `value` holds as U+FFFD (see [`crate::json_text`]). `raw` is the
    /// model's text, which `JSON.parse` reads exactly.
    Lossy { raw: String, value: Value },
    /// Arguments over [`crate::MAX_ARGUMENT_BYTES`], refused without being read in full
    /// (20 MB of small values took seconds to read, copy and write out again): text of
    /// `bytes` bytes, never parsed; or structured arguments whose `part` (a JSON pointer
    /// in them, or "the root") alone is over the limit, cut as the response was read
    /// (see [`crate::json_text::payload_cutting_from_str`]).
    Oversized { bytes: usize, part: Option<String> },
}

impl ToolCallArguments {
    /// Parses argument text sent by a model.
    ///
    /// Empty or whitespace-only text means "no arguments" and becomes `{}`
    /// (some OpenAI-compatible servers send `""` for parameterless tools); text over
    /// the argument limit is [`ToolCallArguments::Oversized`].
    pub fn from_json_text(raw: &str) -> Self {
        if raw.len() > crate::MAX_ARGUMENT_BYTES {
            return ToolCallArguments::Oversized { bytes: raw.len(), part: None };
        }
        if raw.trim().is_empty() {
            return ToolCallArguments::Parsed(Value::Object(Map::new()));
        }
        // Numbers as JS reads them: the value validated is the one a handler gets.
        match crate::json_text::parse(raw) {
            Ok(value) => ToolCallArguments::Parsed(value),
            Err(err) => match crate::json_text::without_lone_surrogates(raw).map(|t| crate::json_text::parse(&t)) {
                Some(Ok(value)) => ToolCallArguments::Lossy { raw: raw.to_string(), value },
                _ => ToolCallArguments::Malformed { raw: raw.to_string(), error: err.to_string() },
            },
        }
    }

    /// The parsed arguments, if they were valid JSON.
    pub fn parsed(&self) -> Option<&Value> {
        match self {
            ToolCallArguments::Parsed(value) | ToolCallArguments::Lossy { value, .. } => Some(value),
            ToolCallArguments::Malformed { .. } | ToolCallArguments::Oversized { .. } => None,
        }
    }
}

/// The outcome of one tool call, to be sent back to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolReply {
    pub call_id: String,
    pub name: String,
    /// `Ok` = the tool's result; `Err` = error text written for the model.
    pub outcome: Result<Value, String>,
    /// What the tool's `toModelOutput` made of the result, shown instead of its JSON.
    pub shown: Option<ModelOutput>,
    /// The most characters of text the model is sent (`maxOutputChars`).
    pub max_chars: Option<usize>,
    /// Where the full result is kept, for the note of a cut reply.
    pub execution_id: Option<String>,
    /// MCP: send the result as `structuredContent` too (the tool declares an output schema).
    pub structured: bool,
}

impl ToolReply {
    /// A successful reply.
    pub fn ok(call_id: impl Into<String>, name: impl Into<String>, result: Value) -> Self {
        ToolReply { call_id: call_id.into(), name: name.into(), outcome: Ok(result), shown: None, max_chars: None, execution_id: None, structured: false }
    }

    /// A failed reply carrying error text for the model.
    pub fn err(
        call_id: impl Into<String>,
        name: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ToolReply { call_id: call_id.into(), name: name.into(), outcome: Err(text.into()), shown: None, max_chars: None, execution_id: None, structured: false }
    }

    /// The reply as text: the error text, what `toModelOutput` made of the result, a
    /// string result as-is, or any other result as compact JSON text; kept within
    /// `max_chars` (see [`within_budget`]).
    pub fn content_text(&self) -> String {
        let text = match (&self.outcome, &self.shown) {
            (Err(text), _) => text.clone(),
            (Ok(_), Some(ModelOutput::Text(text))) => text.clone(),
            (Ok(_), Some(ModelOutput::Parts(parts))) => parts_text(parts),
            (Ok(Value::String(text)), None) => text.clone(),
            (Ok(value), None) => value.to_string(),
        };
        self.budget(&text)
    }

    /// `text` within this reply's budget.
    pub fn budget(&self, text: &str) -> String {
        match self.max_chars {
            Some(max) => within_budget(text, max, self.execution_id.as_deref()),
            None => text.to_string(),
        }
    }

    /// Whether the model-facing text of the result exceeds the budget (providers that
    /// send structured results then send the cut text instead).
    pub fn over_budget(&self) -> bool {
        match (&self.outcome, self.max_chars) {
            (Ok(v), Some(max)) if self.shown.is_none() => v.to_string().chars().count() > max,
            _ => false,
        }
    }

    /// Whether this reply reports a failure.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn argument_text_parses_or_is_kept_as_malformed() {
        assert_eq!(
            ToolCallArguments::from_json_text(r#"{"a":1}"#),
            ToolCallArguments::Parsed(json!({"a": 1}))
        );
        assert_eq!(
            ToolCallArguments::from_json_text("  "),
            ToolCallArguments::Parsed(json!({}))
        );
        match ToolCallArguments::from_json_text(r#"{"a":"#) {
            ToolCallArguments::Malformed { raw, error } => {
                assert_eq!(raw, r#"{"a":"#);
                assert!(error.contains("EOF"), "{error}");
            }
            other => panic!("expected malformed, got {other:?}"),
        }
        let huge = format!("[{}0]", "0,".repeat(crate::MAX_ARGUMENT_BYTES / 2));
        assert_eq!(ToolCallArguments::from_json_text(&huge), ToolCallArguments::Oversized { bytes: huge.len(), part: None });
        match ToolCallArguments::from_json_text(r#"{"s":"\uD800"}"#) {
            ToolCallArguments::Lossy { raw, value } => {
                assert_eq!(raw, r#"{"s":"\uD800"}"#);
                assert_eq!(value, json!({"s": "\u{FFFD}"}));
            }
            other => panic!("expected lossy, got {other:?}"),
        }
    }

    #[test]
    fn content_text_keeps_strings_raw_and_serializes_the_rest() {
        assert_eq!(ToolReply::ok("1", "t", json!("hi")).content_text(), "hi");
        assert_eq!(
            ToolReply::ok("1", "t", json!({"n": 2})).content_text(),
            r#"{"n":2}"#
        );
        assert_eq!(ToolReply::err("1", "t", "boom").content_text(), "boom");
    }
}
