//! Redaction of sensitive fields in JSON values.
//!
//! [`redact`] returns a deep copy of a value in which every object entry
//! whose key matches one of the listed field names (case-insensitively,
//! using Unicode lowercase) has its value replaced by the string
//! [`REDACTED`]. Matching applies at any depth, including objects nested in
//! arrays. The replaced value is dropped whole: nothing beneath a redacted
//! key is walked or kept.

use serde_json::{Map, Value};

/// Placeholder that replaces a redacted value.
pub const REDACTED: &str = "[REDACTED]";

/// Deep copy of `v` with every value under a key listed in `fields`
/// (case-insensitive) replaced by `"[REDACTED]"`.
///
/// Fast path: with no fields, this is a plain clone without a walk.
pub fn redact(v: &Value, fields: &[String]) -> Value {
    if fields.is_empty() {
        return v.clone();
    }
    redact_value(v, &lowered(fields))
}

/// The field names as [`redact_value`] and [`key_matches`] take them.
pub(crate) fn lowered(fields: &[String]) -> Vec<String> {
    fields.iter().map(|f| f.to_lowercase()).collect()
}

/// Whether `v` holds, at any depth, an object entry whose key is redacted.
pub(crate) fn holds_redacted(v: &Value, lowered: &[String]) -> bool {
    match v {
        Value::Object(map) => map.iter().any(|(k, v)| key_matches(k, lowered) || holds_redacted(v, lowered)),
        Value::Array(items) => items.iter().any(|i| holds_redacted(i, lowered)),
        _ => false,
    }
}

pub(crate) fn redact_value(v: &Value, lowered: &[String]) -> Value {
    match v {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let replacement = if key_matches(key, lowered) {
                    Value::String(REDACTED.to_owned())
                } else {
                    redact_value(value, lowered)
                };
                out.insert(key.clone(), replacement);
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| redact_value(i, lowered)).collect())
        }
        other => other.clone(),
    }
}

/// `lowered` holds the field names already passed through `to_lowercase`.
pub(crate) fn key_matches(key: &str, lowered: &[String]) -> bool {
    if key.is_ascii() {
        // For ASCII keys, Unicode and ASCII lowercasing agree, and a
        // lowered field with non-ASCII bytes can never be equal anyway:
        // this avoids allocating for the common case.
        lowered.iter().any(|f| key.eq_ignore_ascii_case(f))
    } else {
        let key = key.to_lowercase();
        lowered.contains(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn empty_fields_returns_identical_clone() {
        let v = json!({"password": "x", "nested": [{"token": 1}]});
        assert_eq!(redact(&v, &[]), v);
    }

    #[test]
    fn top_level_and_case_insensitive() {
        let v = json!({"Password": "hunter2", "user": "bob", "API_KEY": "k"});
        let out = redact(&v, &fields(&["password", "api_key"]));
        assert_eq!(
            out,
            json!({"Password": "[REDACTED]", "user": "bob", "API_KEY": "[REDACTED]"})
        );
        // Field list case does not matter either.
        let out = redact(&json!({"token": 1}), &fields(&["TOKEN"]));
        assert_eq!(out, json!({"token": "[REDACTED]"}));
    }

    #[test]
    fn nested_objects_and_arrays() {
        let v = json!({
            "a": {"b": {"secret": {"deep": true}, "keep": 1}},
            "list": [{"secret": "s1"}, [{"Secret": "s2", "x": [1, 2]}], "secret"],
        });
        let out = redact(&v, &fields(&["secret"]));
        assert_eq!(
            out,
            json!({
                "a": {"b": {"secret": "[REDACTED]", "keep": 1}},
                "list": [{"secret": "[REDACTED]"}, [{"Secret": "[REDACTED]", "x": [1, 2]}], "secret"],
            })
        );
        // The input is untouched.
        assert_eq!(v["a"]["b"]["secret"], json!({"deep": true}));
    }

    #[test]
    fn values_and_scalars_are_not_matched() {
        // Only keys match; string values equal to a field name are kept.
        assert_eq!(
            redact(&json!("password"), &fields(&["password"])),
            json!("password")
        );
        assert_eq!(redact(&json!([1, null]), &fields(&["x"])), json!([1, null]));
        // No partial matches.
        let v = json!({"password_hint": "h", "pass": "p"});
        assert_eq!(redact(&v, &fields(&["password"])), v);
    }

    #[test]
    fn unicode_keys_match_case_insensitively() {
        let v = json!({"CLÉ": "v", "Straße": 1, "k": 2});
        let out = redact(&v, &fields(&["clé", "STRASSE", "\u{212A}"]));
        // "STRASSE".to_lowercase() is "strasse", not "straße": kept.
        // KELVIN SIGN lowercases to ASCII 'k': matched.
        assert_eq!(
            out,
            json!({"CLÉ": "[REDACTED]", "Straße": 1, "k": "[REDACTED]"})
        );
    }
}
