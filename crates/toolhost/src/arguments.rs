//! Call arguments as they arrive: JSON text from a model, or a value built in code.
//!
//! Limits keep a hostile or broken input from exhausting the process: at most
//! [`MAX_ARGUMENT_BYTES`] of text and [`MAX_ARGUMENT_DEPTH`] levels of nesting.

use serde_json::Value;

use crate::error::{RegistryError, RegistryErrorCode};

/// Largest argument text accepted (16 MiB).
pub const MAX_ARGUMENT_BYTES: usize = 16 * 1024 * 1024;
/// Nesting refused: arguments may nest one level less (serde_json's own recursion limit).
pub const MAX_ARGUMENT_DEPTH: usize = 128;

fn refuse(tool: &str, why: impl std::fmt::Display) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidArguments, format!("invalid arguments for tool '{tool}': {why}"))
}

/// Parses argument JSON text (a lone surrogate escape reads as U+FFFD: see
/// [`crate::json_text`]).
///
/// # Errors
/// `INVALID_ARGUMENTS` when the text is too large, too deep or not JSON.
pub fn parse_arguments(tool: &str, text: &str) -> Result<Value, RegistryError> {
    arguments_of(text).map_err(|why| refuse(tool, why))
}

/// Parses argument JSON text as [`parse_arguments`] does; the error says why it cannot,
/// for a caller that names the arguments otherwise than by their tool.
///
/// # Errors
/// Why the text is too large, too deep or not JSON.
pub fn arguments_of(text: &str) -> Result<Value, String> {
    if text.len() > MAX_ARGUMENT_BYTES {
        return Err(too_large(text.len()));
    }
    crate::json_text::from_str(text).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            too_deep()
        } else {
            format!("malformed JSON: {e}")
        }
    })
}

fn too_large(bytes: usize) -> String {
    format!("{bytes} bytes of JSON exceed {}", over_limit())
}

/// The end of every refusal of arguments over [`MAX_ARGUMENT_BYTES`].
fn over_limit() -> String {
    format!("the {MAX_ARGUMENT_BYTES}-byte argument limit")
}

/// Whether `message`, an `INVALID_ARGUMENTS` error's, refused arguments for being over
/// [`MAX_ARGUMENT_BYTES`] (from [`check_size`] or [`oversized_part`]).
/// Whether two argument texts hold the same JSON value (key order and spacing aside): an
/// approver who hands the arguments back unchanged has not edited them.
pub fn same_arguments(a: &str, b: &str) -> bool {
    a == b || matches!((arguments_of(a), arguments_of(b)), (Ok(x), Ok(y)) if x == y)
}

pub fn is_over_limit(message: &str) -> bool {
    message.contains(&over_limit())
}

/// Checks the length of argument text, in bytes, before it is read.
///
/// # Errors
/// `INVALID_ARGUMENTS` when it is over [`MAX_ARGUMENT_BYTES`].
pub fn check_size(tool: &str, bytes: usize) -> Result<(), RegistryError> {
    if bytes > MAX_ARGUMENT_BYTES {
        return Err(refuse(tool, too_large(bytes)));
    }
    Ok(())
}

/// The refusal of arguments whose `part` (a JSON pointer in them, or "the root") alone
/// is more text than [`MAX_ARGUMENT_BYTES`], found before they were read in full.
pub fn oversized_part(tool: &str, part: &str) -> RegistryError {
    refuse(tool, format!("the value at {part} alone is more JSON than {}", over_limit()))
}

/// Reads argument text as a host hands it over: blank text means no arguments (`{}`).
///
/// # Errors
/// As [`parse_arguments`].
pub fn read_arguments(tool: &str, text: &str) -> Result<Value, RegistryError> {
    if text.trim().is_empty() {
        Ok(Value::Object(Default::default()))
    } else {
        parse_arguments(tool, text)
    }
}

/// Checks a value built in code against the depth limit, without recursion.
///
/// Why arguments nested [`MAX_ARGUMENT_DEPTH`] levels or more are refused.
fn too_deep() -> String {
    format!("nested more than {} levels deep", MAX_ARGUMENT_DEPTH - 1)
}

/// # Errors
/// `INVALID_ARGUMENTS` when it nests [`MAX_ARGUMENT_DEPTH`] levels or more.
pub fn check_depth(tool: &str, value: &Value) -> Result<(), RegistryError> {
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        // The root is level 1: a container at level MAX_ARGUMENT_DEPTH is refused, as
        // serde_json refuses it in text.
        if depth + 1 >= MAX_ARGUMENT_DEPTH {
            return Err(refuse(tool, too_deep()));
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_values_share_one_depth_limit_and_its_message_says_it() {
        let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        for levels in [126, 127, 128, 129] {
            let text = parse_arguments("t", &nested(levels)).map(|_| ()).map_err(|e| e.message);
            let value: Value = serde_json::from_str(&nested(levels.min(127))).unwrap();
            let value = if levels > 127 { (127..levels).fold(value, |v, _| Value::Array(vec![v])) } else { value };
            let checked = check_depth("t", &value).map_err(|e| e.message);
            assert_eq!(text.is_ok(), levels <= 127, "text, {levels} levels: {text:?}");
            assert_eq!(checked.is_ok(), levels <= 127, "value, {levels} levels: {checked:?}");
            if let Err(m) = text {
                assert!(m.ends_with("nested more than 127 levels deep"), "{m}");
            }
        }
    }

    #[test]
    fn refuses_malformed_deep_and_huge_text() {
        assert!(parse_arguments("t", r#"{"city":"Paris"}"#).is_ok());
        let e = parse_arguments("t", r#"{"city":"#).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENTS");
        assert!(e.message.contains("malformed JSON") && e.message.contains("'t'"), "{}", e.message);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse_arguments("t", &deep).unwrap_err().message.contains("nested more than 127 levels deep"));
        let huge = format!("\"{}\"", "x".repeat(MAX_ARGUMENT_BYTES));
        assert!(parse_arguments("t", &huge).unwrap_err().message.contains("limit"));
        assert!(parse_arguments("t", "NaN").is_err());
    }

    #[test]
    fn checks_depth_of_built_values() {
        let mut v = Value::Null;
        for _ in 0..200 {
            v = Value::Array(vec![v]);
        }
        assert!(check_depth("t", &v).is_err());
        assert!(check_depth("t", &serde_json::json!({"a": [[1]]})).is_ok());
    }
}
