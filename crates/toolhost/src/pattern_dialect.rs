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
//! stall validation. Where that engine's meaning differs from ECMA-262's, the pattern
//! is first rewritten ([`ecma_semantics`]) so that it matches what `new RegExp(pattern,
//! 'u')` matches:
//! - `.` matches any character but the line terminators `\n`, `\r`, U+2028 and U+2029
//!   (the `regex` engine's `.` only leaves out `\n`); within a `(?s:...)` group, any
//!   character.
//! - `\b` and `\B` are word boundaries of ASCII word characters (`[A-Za-z0-9_]`, as
//!   `\w` is), where the `regex` engine's are Unicode-aware.
//! - `[\b]` is U+0008 (backspace), `\0` is U+0000, `[^]` is any character and `[]`
//!   none, which the translation would otherwise refuse.
//!
//! `\d`, `\w`, `\s` and their negations already follow ECMA-262 in the translation.
//!
//! The `regex` engine has no look-around and no backreferences, and compiles
//! each pattern within [`PATTERN_SIZE_LIMIT`] bytes: patterns needing more are refused,
//! saying which of these it is.

use std::borrow::Cow;

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
    let ecma = ecma_semantics(pattern);
    let Ok(translated) = jsonschema_regex::to_rust_regex(&ecma) else {
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

/// `pattern` (valid ECMA-262) rewritten so that the `regex` engine, after
/// `jsonschema_regex::to_rust_regex`, matches what ECMA-262 matches: see the module
/// documentation. Borrowed when nothing needs rewriting.
pub fn ecma_semantics(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains(['.', '\\', '[']) {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = false;
    // Whether `.` matches every character, in each open group (a `(?s:...)` modifier
    // turns it on, `(?-s:...)` off); the pattern's own level first.
    let mut dotall = vec![false];
    let mut chars = pattern.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'b')) if in_class => out.push_str("\\x08"),
                // Valid ECMA-262 has no digit after `\0`: it is U+0000, not a backreference.
                Some((_, '0')) => out.push_str("\\x00"),
                Some((_, e @ ('b' | 'B'))) => {
                    out.push_str("(?-u:\\");
                    out.push(e);
                    out.push(')');
                }
                // Any other escape is copied; what follows it (hex digits, a `{...}`
                // property or code point, a `<name>`) holds none of `.[]()`.
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ if in_class => out.push(c),
            '[' if pattern[at..].starts_with("[^]") => {
                chars.nth(1);
                out.push_str("(?s:.)");
            }
            '[' if pattern[at..].starts_with("[]") => {
                chars.next();
                out.push_str("[^\\x{0}-\\x{10FFFF}]");
            }
            '[' => {
                in_class = true;
                out.push(c);
            }
            '(' => {
                let inherited = dotall.last().copied().unwrap_or(false);
                dotall.push(modified_dotall(&pattern[at + 1..]).unwrap_or(inherited));
                out.push(c);
            }
            ')' => {
                if dotall.len() > 1 {
                    dotall.pop();
                }
                out.push(c);
            }
            '.' if !dotall.last().copied().unwrap_or(false) => out.push_str("[^\\n\\r\\u2028\\u2029]"),
            _ => out.push(c),
        }
    }
    if out == pattern {
        Cow::Borrowed(pattern)
    } else {
        Cow::Owned(out)
    }
}

/// For a group opening `(` followed by `after`: `Some(true)` for a modifier group that
/// adds `s` (`(?s:`, `(?is-m:`), `Some(false)` for one that removes it (`(?-s:`),
/// `None` for any other group.
fn modified_dotall(after: &str) -> Option<bool> {
    let flags = after.strip_prefix('?')?;
    let end = flags.find(|c: char| !matches!(c, 'i' | 'm' | 's' | '-'))?;
    if !flags[end..].starts_with(':') {
        return None;
    }
    let (added, removed) = flags[..end].split_once('-').unwrap_or((&flags[..end], ""));
    if added.contains('s') {
        Some(true)
    } else if removed.contains('s') {
        Some(false)
    } else {
        None
    }
}

/// `schema` with every `pattern` and `patternProperties` key rewritten by
/// [`ecma_semantics`] (the schema the validator is compiled from), and each rewritten
/// pattern paired with the schema's own; `None` when no pattern needs rewriting.
pub fn with_ecma_semantics(schema: &Value) -> Option<(Value, Vec<(String, String)>)> {
    let mut any = false;
    visit_patterns(schema, &mut |p| any |= matches!(ecma_semantics(p), Cow::Owned(_)));
    if !any {
        return None;
    }
    let mut copy = schema.clone();
    let mut rewritten = Vec::new();
    rewrite(&mut copy, &mut rewritten);
    Some((copy, rewritten))
}

/// Whether a key of a schema object holds data (`const`, `enum`, `default`, `examples`),
/// not schemas: patterns there are not read.
fn holds_data(key: &str) -> bool {
    matches!(key, "const" | "enum" | "default" | "examples")
}

fn visit_patterns(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter().filter(|(k, _)| !holds_data(k)) {
                match (k.as_str(), child) {
                    ("pattern", Value::String(p)) => f(p),
                    ("patternProperties", Value::Object(props)) => props.keys().for_each(|p| f(p)),
                    _ => {}
                }
                visit_patterns(child, f);
            }
        }
        Value::Array(items) => items.iter().for_each(|c| visit_patterns(c, f)),
        _ => {}
    }
}

fn rewrite(v: &mut Value, rewritten: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut().filter(|(k, _)| !holds_data(k)) {
                match (k.as_str(), &mut *child) {
                    ("pattern", Value::String(p)) => {
                        if let Cow::Owned(ecma) = ecma_semantics(p) {
                            rewritten.push((ecma.clone(), std::mem::replace(p, ecma)));
                        }
                    }
                    ("patternProperties", Value::Object(props)) => {
                        *props = std::mem::take(props)
                            .into_iter()
                            .map(|(p, schema)| match ecma_semantics(&p) {
                                Cow::Owned(ecma) => {
                                    rewritten.push((ecma.clone(), p));
                                    (ecma, schema)
                                }
                                Cow::Borrowed(_) => (p, schema),
                            })
                            .collect();
                    }
                    _ => {}
                }
                rewrite(child, rewritten);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| rewrite(c, rewritten)),
        _ => {}
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

    /// Whether the `regex` engine, after ECMA semantics and jsonschema's translation,
    /// matches `input` with `pattern`.
    fn matches(pattern: &str, input: &str) -> bool {
        let rust = jsonschema_regex::to_rust_regex(&ecma_semantics(pattern)).unwrap().into_owned();
        regex::Regex::new(&rust).unwrap_or_else(|e| panic!("{pattern} -> {rust}: {e}")).is_match(input)
    }

    #[test]
    fn dot_leaves_out_line_terminators_as_in_ecma() {
        for t in ["a\n", "a\r", "a\u{2028}", "a\u{2029}"] {
            assert!(!matches("^a.$", t), "{t:?}");
            assert!(!matches("^.*$", &format!("x{t}y")), "{t:?}");
        }
        assert!(matches("^a.$", "a\u{85}") && matches("^a.$", "a😀") && matches("^a.$", "a\u{b}"));
        // Literal dots are left alone: escaped, or in a class.
        assert!(matches("^\\.$", ".") && !matches("^\\.$", "x"));
        assert!(matches("^[.]$", ".") && !matches("^[.]$", "\r"));
        assert!(matches("^\\\\.$", "\\x") && !matches("^\\\\.$", "\\\r"));
        // `(?s:...)` makes `.` match everything, until the group closes.
        assert!(matches("^(?s:.)$", "\r") && matches("^(?s:a(?:.))$", "a\n"));
        assert!(!matches("^(?s:.)(.)$", "\n\n") && !matches("^(?s:(?-s:.))$", "\r"));
        assert!(!matches("^(?i:.)$", "\r"));
        assert_eq!(ecma_semantics("^[a-z]+\\d$"), "^[a-z]+\\d$");
        assert!(matches!(ecma_semantics("^[.]\\.$"), Cow::Borrowed(_)));
    }

    #[test]
    fn word_boundaries_are_ascii_as_in_ecma() {
        // ECMA-262's \b (u flag, no i) looks at [A-Za-z0-9_] only: é is not a word character.
        assert!(matches("\\bab", "éab") && matches("\\bab", " ab") && !matches("\\bab", "xab"));
        assert!(matches("ab\\b", "abé") && !matches("ab\\b", "abc"));
        assert!(!matches("\\Bab", "éab") && matches("\\Bab", "xab"));
        assert!(!matches("^\\w+\\b", "é") && matches("^\\w+\\b", "aé"));
        // In a class, \b is the backspace character.
        assert!(matches("^[\\b]$", "\u{8}") && !matches("^[\\b]$", "b"));
        assert!(matches("^[\\b-\\n]$", "\t"));
        assert_eq!(pattern_problem("^[\\b]$"), None);
    }

    #[test]
    fn empty_and_full_classes_and_nul_read_as_in_ecma() {
        assert!(matches("^[^]*$", "a\nb\r") && matches("^a[^]$", "a\u{2028}"));
        assert!(!matches("^a[]$", "a") && !matches("[]", "anything") && matches("^a[]?$", "a"));
        assert!(matches("^\\0$", "\0") && matches("^[\\0-\\x1f]$", "\u{1}") && !matches("^\\0$", "0"));
        for p in ["^[^]*$", "[]", "^\\0$", "[\\0]"] {
            assert_eq!(pattern_problem(p), None, "{p}");
        }
    }

    #[test]
    fn schemas_get_the_rewritten_patterns_and_keep_the_originals() {
        let s = json!({"properties": {"a": {"pattern": "^a.$"}, "b": {"patternProperties": {"\\bx": {"pattern": "^y$"}}}, "c": {"const": {"pattern": "."}}}});
        let (copy, rewritten) = with_ecma_semantics(&s).unwrap();
        assert_eq!(copy["properties"]["a"]["pattern"], "^a[^\\n\\r\\u2028\\u2029]$");
        assert!(copy["properties"]["b"]["patternProperties"].get("(?-u:\\b)x").is_some());
        assert_eq!(copy["properties"]["c"]["const"]["pattern"], ".");
        assert_eq!(rewritten, vec![("^a[^\\n\\r\\u2028\\u2029]$".to_string(), "^a.$".to_string()), ("(?-u:\\b)x".to_string(), "\\bx".to_string())]);
        assert_eq!(with_ecma_semantics(&json!({"properties": {"a": {"pattern": "^\\d+$"}}})), None);
    }
}
