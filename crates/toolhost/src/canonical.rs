//! Canonical JSON serialisation and input hashing.
//!
//! [`canonical_json`] renders a [`serde_json::Value`] in one fixed textual
//! form so that semantically equal inputs hash equal via [`input_hash`].
//!
//! Rules:
//! - **Objects**: keys sorted by Unicode code point, recursively. Rust's
//!   `str` ordering is byte-wise UTF-8, which is exactly code-point order
//!   (note: this differs from RFC 8785/JCS, which sorts by UTF-16 units).
//!   The sort is explicit, so it does not depend on serde_json's
//!   `preserve_order` feature.
//! - **Arrays**: element order is kept.
//! - **Whitespace**: none.
//! - **Strings**: minimal JSON escaping, matching serde_json: `"` and `\`
//!   are backslash-escaped, `\b \f \n \r \t` use their short forms, other
//!   control characters below U+0020 become `\u00xx` (lowercase hex).
//!   Everything else, including non-ASCII and U+007F, is emitted as raw
//!   UTF-8.
//! - **Numbers**: integers (`u64`/`i64`) print as serde_json prints them.
//!   A float that is finite, integral and within ±2^53 (the range where
//!   every integer is exactly representable) prints as an integer, so
//!   `1.0`, `1` and `1e0` hash equal and `-0.0` prints as `0`. All other
//!   floats print in serde_json's shortest round-trip form (e.g. `0.1`,
//!   `1e+21`, `1e-7`, `9007199254740994.0`).
//!
//! Stability caveat: that last form is serde_json's. serde_json 1.0.154
//! (float formatting by `zmij`) prints `1e+21`; older releases (`ryu`)
//! printed `1e21`. The hash of a non-integral or out-of-range float is
//! therefore only stable for a given serde_json formatter; the `numbers`
//! test pins the current forms so that an upgrade changing them fails.

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// 2^53: floats whose magnitude is at most this are printed as integers
/// when they have no fractional part.
const MAX_EXACT_INT_F64: f64 = 9_007_199_254_740_992.0;

/// Render `v` as canonical JSON (see the module docs for the rules).
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

/// Lowercase hex SHA-256 of [`canonical_json`]`(v)`.
pub fn input_hash(v: &Value) -> String {
    let digest = Sha256::digest(canonical_json(v).as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, value);
            }
            out.push('}');
        }
    }
}

fn write_number(out: &mut String, n: &Number) {
    let integral = n
        .as_f64()
        .filter(|f| n.is_f64() && f.is_finite() && f.fract() == 0.0)
        .filter(|f| f.abs() <= MAX_EXACT_INT_F64);
    match integral {
        // Exact: |f| <= 2^53 fits i64 without loss; -0.0 becomes 0.
        Some(f) => {
            let _ = write!(out, "{}", f as i64);
        }
        None => {
            let _ = write!(out, "{n}");
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn key_order_is_irrelevant_at_every_depth() {
        let a = parse(r#"{"b":1,"a":{"z":[{"y":1,"x":2}],"m":null},"c":true}"#);
        let b = parse(r#"{"c":true,"a":{"m":null,"z":[{"x":2,"y":1}]},"b":1}"#);
        let expected = r#"{"a":{"m":null,"z":[{"x":2,"y":1}]},"b":1,"c":true}"#;
        assert_eq!(canonical_json(&a), expected);
        assert_eq!(canonical_json(&b), expected);
        assert_eq!(input_hash(&a), input_hash(&b));
    }

    #[test]
    fn keys_sort_by_code_point() {
        let v = json!({"é": 1, "z": 2, "Z": 3, "😀": 4, "a": 5, "": 6});
        assert_eq!(
            canonical_json(&v),
            r#"{"":6,"Z":3,"a":5,"z":2,"é":1,"😀":4}"#
        );
    }

    #[test]
    fn arrays_keep_order() {
        let v = json!([3, 1, 2, {"b": 0, "a": 0}]);
        assert_eq!(canonical_json(&v), r#"[3,1,2,{"a":0,"b":0}]"#);
        assert_ne!(input_hash(&json!([1, 2])), input_hash(&json!([2, 1])));
    }

    #[test]
    fn unicode_and_escapes() {
        let v = json!({"s": "é😀 \u{0000}\u{001f}\"\\/\n\r\t\u{08}\u{0C}\u{7f}"});
        assert_eq!(
            canonical_json(&v),
            "{\"s\":\"é😀 \\u0000\\u001f\\\"\\\\/\\n\\r\\t\\b\\f\u{7f}\"}"
        );
        // Escaped and raw input forms of the same string are canonicalised alike.
        let escaped = parse(r#"{"s":"\u00e9\ud83d\ude00"}"#);
        assert_eq!(canonical_json(&escaped), "{\"s\":\"é😀\"}");
        assert_eq!(input_hash(&escaped), input_hash(&json!({"s": "é😀"})));
    }

    #[test]
    fn string_escaping_matches_serde_json() {
        let mut all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        all.push_str("é\u{2028}\u{2029}😀\u{FFFF}");
        let v = Value::String(all);
        assert_eq!(canonical_json(&v), serde_json::to_string(&v).unwrap());
    }

    #[test]
    fn numbers() {
        let cases = [
            ("1", "1"),
            ("1.0", "1"),
            ("1e0", "1"),
            ("-1.0", "-1"),
            ("-0.0", "0"),
            ("0", "0"),
            ("0.5", "0.5"),
            ("0.1", "0.1"),
            ("1e-7", "1e-7"),
            ("5e-324", "5e-324"),
            ("1e21", "1e+21"),
            ("1e16", "1e+16"),
            ("1.5e300", "1.5e+300"),
            ("18446744073709551615", "18446744073709551615"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("9007199254740992.0", "9007199254740992"),
            ("-9007199254740992.0", "-9007199254740992"),
            ("9007199254740994.0", "9007199254740994.0"),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical_json(&parse(input)), expected, "input {input}");
        }
        assert_eq!(input_hash(&json!({"n": 1})), input_hash(&json!({"n": 1.0})));
        assert_eq!(input_hash(&json!(0)), input_hash(&json!(-0.0)));
        assert_ne!(input_hash(&json!(1)), input_hash(&json!(1.5)));
    }

    #[test]
    fn scalars() {
        assert_eq!(canonical_json(&json!(null)), "null");
        assert_eq!(canonical_json(&json!(true)), "true");
        assert_eq!(canonical_json(&json!(false)), "false");
        assert_eq!(canonical_json(&json!({})), "{}");
        assert_eq!(canonical_json(&json!([])), "[]");
    }

    #[test]
    fn known_sha256_vector() {
        // printf '%s' '{"a":1}' | sha256sum
        let expected = "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862";
        assert_eq!(input_hash(&json!({"a": 1})), expected);
        assert_eq!(input_hash(&parse(r#"{ "a" : 1.0 }"#)), expected);
    }
}
