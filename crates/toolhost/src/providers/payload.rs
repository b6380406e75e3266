//! Reading provider payloads with errors that point at the offending field.
//!
//! Paths are JSON pointers into the payload handed to `parse_tool_calls`.

use serde_json::Value;

use super::{Provider, ProviderError};

/// A required string field of the object at `path`.
pub(crate) fn str_field<'a>(
    provider: Provider,
    object: &'a Value,
    path: &str,
    key: &str,
) -> Result<&'a str, ProviderError> {
    match object.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ProviderError::payload(
            provider,
            format!("{path}/{key}"),
            format!("expected a string, found {}", kind(other)),
        )),
        None => Err(ProviderError::payload(
            provider,
            path,
            format!("missing required field `{key}`"),
        )),
    }
}

/// An optional array field of the object at `path`; `null` counts as absent.
pub(crate) fn opt_array_field<'a>(
    provider: Provider,
    object: &'a Value,
    path: &str,
    key: &str,
) -> Result<Option<&'a [Value]>, ProviderError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(ProviderError::payload(
            provider,
            format!("{path}/{key}"),
            format!("expected an array, found {}", kind(other)),
        )),
    }
}

/// A short name for a JSON value's kind, for error messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether the object has `key` with a value other than `null`.
pub(crate) fn given(object: &Value, key: &str) -> bool {
    object.get(key).is_some_and(|v| !v.is_null())
}

/// Structured arguments as sent by Anthropic/Gemini: absent or `null` = `{}`.
pub(crate) fn structured_args(value: Option<&Value>) -> Value {
    match value {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v) => v.clone(),
    }
}
