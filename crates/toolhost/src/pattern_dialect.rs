//! The regular expressions a schema's `pattern` and `patternProperties` may hold.
//!
//! JSON Schema patterns are ECMA-262 regular expressions. toolhost accepts the syntax
//! of ECMA-262's `u`-flag patterns (ES2025, with the `(?i:...)` modifiers), widened with
//! the identity escapes patterns without the flag allow (`\-`, `\/`, a backslash before
//! any character that is not a letter or digit), as `jsonschema_regex::is_valid_ecma_regex`
//! checks it. Syntax of other dialects is refused (POSIX classes `[[:alpha:]]`, inline
//! flags `(?i)`, `\A`, `\z`), where it used to be read by the Rust engine's own rules.
//!
//! A valid pattern is translated to the linear-time `regex` engine, so no pattern can
//! stall validation. That engine has no look-around and no backreferences, and compiles
//! each pattern within [`PATTERN_SIZE_LIMIT`] bytes: patterns needing more are refused,
//! saying which of these it is.

use serde_json::Value;

/// Most bytes one compiled pattern may take (the `regex` engine's `size_limit`).
pub const PATTERN_SIZE_LIMIT: usize = 10 * 1024 * 1024;

/// Why a pattern cannot be used, or `None` when it can.
pub fn pattern_problem(pattern: &str) -> Option<String> {
    if !jsonschema_regex::is_valid_ecma_regex(pattern) {
        return Some(format!(
            "{pattern:?} is not an ECMA-262 regular expression (JSON Schema patterns are ECMA-262: no POSIX classes like [[:alpha:]], no inline flags like (?i), no \\A or \\z)"
        ));
    }
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        let what = if ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|l| pattern.contains(l)) {
            "look-around ((?=, (?!, (?<=, (?<!)"
        } else if pattern.contains("\\k<") || has_backreference(pattern) {
            "a backreference (\\1, \\k<name>)"
        } else {
            "a construct toolhost's linear-time regex engine lacks"
        };
        return Some(format!(
            "{pattern:?} is valid ECMA-262 but uses {what}, which toolhost's linear-time regex engine does not run"
        ));
    };
    match regex::RegexBuilder::new(&translated).size_limit(PATTERN_SIZE_LIMIT).build() {
        Ok(_) => None,
        Err(regex::Error::CompiledTooBig(_)) => Some(format!(
            "{pattern:?} is valid ECMA-262 but compiles to more than the regex engine's {PATTERN_SIZE_LIMIT}-byte size limit (a large repetition count of a Unicode class, as in \\p{{L}}{{1000}}, does this): use a smaller count, or an ASCII class"
        )),
        Err(e) => Some(format!("{pattern:?} is valid ECMA-262 but the regex engine refuses it: {e}")),
    }
}

fn has_backreference(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            if matches!(b[i + 1], b'1'..=b'9') {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

/// The first pattern of `schema` that cannot be used: its schema path and why.
/// Values of `const`, `enum`, `default` and `examples` are data, not schemas, and are
/// not read.
pub fn first_pattern_problem(schema: &Value) -> Option<(String, String)> {
    let mut path = String::new();
    walk(schema, &mut path)
}

fn push(path: &mut String, key: &str) -> usize {
    let len = path.len();
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
    len
}

fn walk(v: &Value, path: &mut String) -> Option<(String, String)> {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if matches!(k.as_str(), "const" | "enum" | "default" | "examples") {
                    continue;
                }
                let len = push(path, k);
                let found = match (k.as_str(), child) {
                    ("pattern", Value::String(p)) => pattern_problem(p).map(|why| (path.clone(), why)),
                    ("patternProperties", Value::Object(props)) => props.keys().find_map(|p| {
                        pattern_problem(p).map(|why| {
                            let len = push(path, p);
                            let at = path.clone();
                            path.truncate(len);
                            (at, why)
                        })
                    }),
                    _ => None,
                };
                let found = found.or_else(|| walk(child, path));
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, c)| {
            let len = push(path, &i.to_string());
            let found = walk(c, path);
            path.truncate(len);
            found
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn other_dialects_are_refused_with_why() {
        for p in ["[[:alpha:]]", "(?i)abc", "a\\z", "\\Aa"] {
            assert!(pattern_problem(p).unwrap().contains("not an ECMA-262 regular expression"), "{p}");
        }
        for p in ["^\\p{L}+$", "^[a-z]{2,8}$", "\\u{1F600}", "(?<year>\\d{4})", "(?i:abc)", "\\-\\/"] {
            assert_eq!(pattern_problem(p), None, "{p}");
        }
        assert!(pattern_problem("^(?!admin)").unwrap().contains("look-around"));
        assert!(pattern_problem("(a)\\1").unwrap().contains("backreference"));
        assert!(pattern_problem("\\p{L}{1000}").unwrap().contains("size limit"));
    }

    #[test]
    fn finds_patterns_in_schemas_not_in_data() {
        let s = json!({"properties": {"a": {"pattern": "ok"}, "b": {"items": {"patternProperties": {"(?i)x": {}}}}}});
        let (at, _) = first_pattern_problem(&s).unwrap();
        assert_eq!(at, "/properties/b/items/patternProperties/(?i)x");
        assert_eq!(first_pattern_problem(&json!({"const": {"pattern": "[[:alpha:]]"}, "enum": [{"pattern": "(?i)"}]})), None);
    }
}
