//! Provider-neutral tool calls (coming in) and tool replies (going out).

use serde_json::{Map, Value};

/// One tool call requested by a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The provider's call id (or a generated one for providers without ids).
    pub id: String,
    pub name: String,
    pub arguments: ToolCallArguments,
}

/// The arguments of a tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolCallArguments {
    /// Arguments that were valid JSON (or already structured by the provider).
    Parsed(Value),
    /// Argument text that is not valid JSON; `error` is the parser's message.
    Malformed { raw: String, error: String },
}

impl ToolCallArguments {
    /// Parses argument text sent by a model.
    ///
    /// Empty or whitespace-only text means "no arguments" and becomes `{}`
    /// (some OpenAI-compatible servers send `""` for parameterless tools).
    pub fn from_json_text(raw: &str) -> Self {
        if raw.trim().is_empty() {
            return ToolCallArguments::Parsed(Value::Object(Map::new()));
        }
        match serde_json::from_str(raw) {
            Ok(value) => ToolCallArguments::Parsed(value),
            Err(err) => ToolCallArguments::Malformed {
                raw: raw.to_string(),
                error: err.to_string(),
            },
        }
    }

    /// The parsed arguments, if they were valid JSON.
    pub fn parsed(&self) -> Option<&Value> {
        match self {
            ToolCallArguments::Parsed(value) => Some(value),
            ToolCallArguments::Malformed { .. } => None,
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
}

impl ToolReply {
    /// A successful reply.
    pub fn ok(call_id: impl Into<String>, name: impl Into<String>, result: Value) -> Self {
        ToolReply {
            call_id: call_id.into(),
            name: name.into(),
            outcome: Ok(result),
        }
    }

    /// A failed reply carrying error text for the model.
    pub fn err(
        call_id: impl Into<String>,
        name: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ToolReply {
            call_id: call_id.into(),
            name: name.into(),
            outcome: Err(text.into()),
        }
    }

    /// The reply as text: the error text, a string result as-is, or any
    /// other result as compact JSON text.
    pub fn content_text(&self) -> String {
        match &self.outcome {
            Ok(Value::String(text)) => text.clone(),
            Ok(value) => value.to_string(),
            Err(text) => text.clone(),
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
