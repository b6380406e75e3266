//! The regular expressions a schema's `pattern` and `patternProperties` may hold, and the
//! engine each runs on.
//!
//! JSON Schema patterns are ECMA-262 regular expressions. toolhost accepts the syntax
//! of ECMA-262's `u`-flag patterns (ES2025, with the `(?i:...)` modifiers), widened with
//! the identity escapes patterns without the flag allow (`\-`, `\/`, a backslash before
//! any character that is not a letter or digit), as `jsonschema_regex::is_valid_ecma_regex`
//! checks it. Syntax of other dialects is refused (POSIX classes `[[:alpha:]]`, inline
//! flags `(?i)`, `\A`, `\z`), where it used to be read by the Rust engine's own rules.
//!
//! Each pattern runs with ECMA-262's meaning ([`crate::pattern_rewrite`]) on one of two
//! engines:
//! - the linear-time `regex` engine, whenever it can: no pattern can stall it, and it
//!   compiles each pattern within [`PATTERN_SIZE_LIMIT`] bytes (a pattern needing more is
//!   refused, saying so);
//! - `fancy-regex`, a backtracking engine, for look-around (password rules, zod's
//!   `z.emoji()`), backreferences, and the two meanings the linear engine cannot give
//!   (`\b` within `(?i:...)`, `^` and `$` within `(?m:...)`). Each match may take at most
//!   [`BACKTRACK_LIMIT`] backtracking steps: a value it cannot decide within them fails
//!   validation, so a model's input cannot hang the thread. Easy parts of such a pattern
//!   still run on `regex` inside it.
//!
//! A schema holding a pattern of the second kind is compiled with `fancy-regex` for all
//! its patterns: it hands each pattern without look-around or backreferences to `regex`
//! whole, so those keep linear time (`\b` and `\B`, written as look-around there, are
//! the exception). `fancy-regex` was chosen over `regress`, which implements ECMA-262
//! itself but has no step limit (ridiculousfish/regress#140), and because `jsonschema`
//! already builds it in: it costs the binaries nothing.

use std::borrow::Cow;

use serde_json::Value;

pub use crate::pattern_rewrite::Engine;
use crate::pattern_rewrite::rewrite;

/// Most bytes one compiled pattern may take (the `regex` engine's `size_limit`).
pub const PATTERN_SIZE_LIMIT: usize = 10 * 1024 * 1024;

/// Most backtracking steps one match of a pattern on the backtracking engine may take
/// (about a millisecond of matching natively): a value it cannot decide within them
/// fails validation.
pub const BACKTRACK_LIMIT: usize = 100_000;

/// `pattern` rewritten for the linear engine (see [`crate::pattern_rewrite`]).
pub fn ecma_semantics(pattern: &str) -> Cow<'_, str> {
    rewrite(pattern, Engine::Linear).text
}

/// Why a pattern cannot be used, or `None` when it can.
pub fn pattern_problem(pattern: &str) -> Option<String> {
    pattern_engine(pattern).err()
}

/// The engine `pattern` runs on, or why it cannot be used.
///
/// # Errors
/// The reason, naming the pattern: not ECMA-262, too large for the linear engine, or
/// refused by the backtracking engine (a reference to a group that comes later, say).
pub fn pattern_engine(pattern: &str) -> Result<Engine, String> {
    if !jsonschema_regex::is_valid_ecma_regex(pattern) {
        return Err(format!(
            "{pattern:?} is not an ECMA-262 regular expression (JSON Schema patterns are ECMA-262: no POSIX classes like [[:alpha:]], no inline flags like (?i), no \\A or \\z)"
        ));
    }
    let linear = rewrite(pattern, Engine::Linear);
    if !linear.needs_backtracking {
        if let Ok(translated) = jsonschema_regex::to_rust_regex(&linear.text) {
            match regex::RegexBuilder::new(&translated).size_limit(PATTERN_SIZE_LIMIT).build() {
                Ok(_) => return Ok(Engine::Linear),
                Err(regex::Error::CompiledTooBig(_)) => return Err(format!(
                    "{pattern:?} is valid ECMA-262 but compiles to more than the regex engine's {PATTERN_SIZE_LIMIT}-byte size limit (a large repetition count of a Unicode class, as in \\p{{L}}{{1000}}, does this): use a smaller count, or an ASCII class"
                )),
                // A construct the linear translation lacks: the backtracking engine may run it.
                Err(_) => {}
            }
        }
    }
    let translated = jsonschema_regex::to_rust_regex(&rewrite(pattern, Engine::Backtracking).text)
        .map_err(|()| format!("{pattern:?} is valid ECMA-262 but toolhost cannot translate it for its regex engines"))?
        .into_owned();
    fancy_regex::RegexBuilder::new(&translated)
        .backtrack_limit(BACKTRACK_LIMIT)
        .delegate_size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map(|_| Engine::Backtracking)
        .map_err(|e| format!("{pattern:?} is valid ECMA-262 but the backtracking regex engine refuses it: {e}"))
}

/// `schema` with every `pattern` and `patternProperties` key rewritten for `engine`
/// (the schema the validator is compiled from), and each rewritten pattern paired with
/// the schema's own; `None` when no pattern needs rewriting.
pub fn with_ecma_semantics(schema: &Value, engine: Engine) -> Option<(Value, Vec<(String, String)>)> {
    let mut any = false;
    visit_patterns(schema, &mut |p| any |= matches!(rewrite(p, engine).text, Cow::Owned(_)));
    if !any {
        return None;
    }
    let mut copy = schema.clone();
    let mut rewritten = Vec::new();
    rewrite_schema(&mut copy, engine, &mut rewritten);
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

fn rewrite_schema(v: &mut Value, engine: Engine, rewritten: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut().filter(|(k, _)| !holds_data(k)) {
                match (k.as_str(), &mut *child) {
                    ("pattern", Value::String(p)) => {
                        if let Cow::Owned(ecma) = rewrite(p, engine).text {
                            rewritten.push((ecma.clone(), std::mem::replace(p, ecma)));
                        }
                    }
                    ("patternProperties", Value::Object(props)) => {
                        *props = std::mem::take(props)
                            .into_iter()
                            .map(|(p, schema)| match rewrite(&p, engine).text {
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
                rewrite_schema(child, engine, rewritten);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| rewrite_schema(c, engine, rewritten)),
        _ => {}
    }
}

/// The first pattern of `schema` that cannot be used: its schema path and why.
/// Values of `const`, `enum`, `default` and `examples` are data, not schemas, and are
/// not read.
pub fn first_pattern_problem(schema: &Value) -> Option<(String, String)> {
    schema_engine(schema).err()
}

/// The engine `schema`'s patterns need: [`Engine::Backtracking`] when any one does, or
/// the first pattern that cannot be used, with its schema path.
///
/// # Errors
/// The schema path of the first unusable pattern and why.
pub fn schema_engine(schema: &Value) -> Result<Engine, (String, String)> {
    let mut path = String::new();
    let mut engine = Engine::Linear;
    match walk(schema, &mut path, &mut engine) {
        Some(problem) => Err(problem),
        None => Ok(engine),
    }
}

/// Every `pattern` keyword of `schema` (not in data), with its schema path.
pub fn patterns_at(schema: &Value) -> Vec<(String, String)> {
    fn visit(v: &Value, path: &mut String, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter().filter(|(k, _)| !holds_data(k)) {
                    let len = push(path, k);
                    if let ("pattern", Value::String(p)) = (k.as_str(), child) {
                        out.push((path.clone(), p.clone()));
                    }
                    visit(child, path, out);
                    path.truncate(len);
                }
            }
            Value::Array(items) => items.iter().enumerate().for_each(|(i, c)| {
                let len = push(path, &i.to_string());
                visit(c, path, out);
                path.truncate(len);
            }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    visit(schema, &mut String::new(), &mut out);
    out
}

fn push(path: &mut String, key: &str) -> usize {
    let len = path.len();
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
    len
}

fn walk(v: &Value, path: &mut String, engine: &mut Engine) -> Option<(String, String)> {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if matches!(k.as_str(), "const" | "enum" | "default" | "examples") {
                    continue;
                }
                let len = push(path, k);
                let mut check = |p: &str, path: &str| match pattern_engine(p) {
                    Ok(e) => {
                        *engine = (*engine).max(e);
                        None
                    }
                    Err(why) => Some((path.to_string(), why)),
                };
                let found = match (k.as_str(), child) {
                    ("pattern", Value::String(p)) => check(p, path),
                    ("patternProperties", Value::Object(props)) => props.keys().find_map(|p| {
                        let len = push(path, p);
                        let found = check(p, path);
                        path.truncate(len);
                        found
                    }),
                    _ => None,
                };
                let found = found.or_else(|| walk(child, path, engine));
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, c)| {
            let len = push(path, &i.to_string());
            let found = walk(c, path, engine);
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
        assert!(pattern_problem("\\p{L}{1000}").unwrap().contains("size limit"));
    }

    #[test]
    fn each_pattern_gets_the_engine_it_needs() {
        for p in ["^[a-z]+$", "\\bword\\b", "(?i:abc)", "^(a+)+$", "(?<year>\\d{4})"] {
            assert_eq!(pattern_engine(p), Ok(Engine::Linear), "{p}");
        }
        let zod_emoji = "^(?=[\\s\\S]*[\\p{Extended_Pictographic}\\p{Regional_Indicator}\\u20E3])[\\p{Extended_Pictographic}\\p{Emoji_Component}]+$";
        for p in ["^(?!admin)", "(?<=\\$)\\d+", "(a)\\1", "(?<q>['\"]).*\\k<q>", "^(?=.*[A-Z])(?=.*\\d).{8,}$", zod_emoji, "(?i:\\bk)", "(?m:^a$)"] {
            assert_eq!(pattern_engine(p), Ok(Engine::Backtracking), "{p}");
        }
        // Valid ECMA-262 (a reference to a group that comes later), which fancy-regex refuses.
        assert!(pattern_problem("\\k<n>(?<n>a)").unwrap().contains("the backtracking regex engine refuses it"));
        let s = json!({"properties": {"a": {"pattern": "^a$"}, "b": {"pattern": "(?=b)"}}});
        assert_eq!(schema_engine(&s), Ok(Engine::Backtracking));
        assert_eq!(schema_engine(&json!({"pattern": "^a$"})), Ok(Engine::Linear));
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

    /// The same on the backtracking engine, as a schema with a look-around compiles it.
    fn backtracking(pattern: &str) -> fancy_regex::Regex {
        let rust = jsonschema_regex::to_rust_regex(&rewrite(pattern, Engine::Backtracking).text).unwrap().into_owned();
        fancy_regex::RegexBuilder::new(&rust).backtrack_limit(BACKTRACK_LIMIT).build().unwrap_or_else(|e| panic!("{pattern} -> {rust}: {e}"))
    }

    fn matches_backtracking(pattern: &str, input: &str) -> bool {
        backtracking(pattern).is_match(input).unwrap()
    }

    #[test]
    fn both_engines_agree_on_ecma_meanings() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("^a.$", &["a\u{85}", "a😀"], &["a\n", "a\r", "a\u{2028}", "a\u{2029}"]),
            ("\\bab", &["éab", " ab"], &["xab"]),
            ("^\\w+$", &["a_1"], &["é", "ſ"]),
            ("^\\d$", &["7"], &["٣"]),
            ("^\\s$", &["\u{3000}", "\u{feff}"], &["\u{85}"]),
            ("^[\\W\\d]$", &["-", "5"], &["a"]),
            ("^[\\b]$", &["\u{8}"], &["b"]),
            ("^[^]*$", &["a\nb"], &[]),
            ("^(?s:.)$", &["\n"], &[]),
        ];
        for (p, yes, no) in cases {
            for y in *yes {
                assert!(matches(p, y) && matches_backtracking(p, y), "{p} {y:?}");
            }
            for n in *no {
                assert!(!matches(p, n) && !matches_backtracking(p, n), "{p} {n:?}");
            }
        }
    }

    #[test]
    fn the_backtracking_engine_runs_what_the_linear_one_cannot() {
        let pw = "^(?=.*[A-Z])(?=.*\\d)(?!.*\\s).{8,}$";
        assert!(matches_backtracking(pw, "Secret123") && !matches_backtracking(pw, "secret123") && !matches_backtracking(pw, "Secret 123"));
        assert!(matches_backtracking("(?<=\\$)\\d+", "cost $12") && !matches_backtracking("(?<=\\$)\\d+", "cost 12"));
        assert!(matches_backtracking("^(\\w)\\1$", "aa") && !matches_backtracking("^(\\w)\\1$", "ab"));
        // A backreference to a group that did not take part matches nothing, as in ECMA-262.
        assert!(matches_backtracking("^(a)?\\1b$", "b") && matches_backtracking("^(?<x>a)?\\k<x>b$", "b"));
        let emoji = "^(?=[\\s\\S]*[\\p{Extended_Pictographic}\\p{Regional_Indicator}\\u20E3])[\\p{Extended_Pictographic}\\p{Emoji_Component}]+$";
        assert!(matches_backtracking(emoji, "😀👍🏽") && !matches_backtracking(emoji, "abc") && !matches_backtracking(emoji, "123"));
    }

    #[test]
    fn word_boundaries_within_i_and_line_ends_within_m_are_ecmas() {
        // ECMA-262 (u and i flags): ſ and the Kelvin sign are word characters, as their
        // case folds s and k are.
        assert!(!matches_backtracking("(?i:^.\\bs)", "ſs") && matches_backtracking("(?i:^.\\bs)", "-s"));
        assert!(matches_backtracking("^.\\bs", "ſs"), "without i, ſ is not a word character");
        assert!(matches_backtracking("(?i:a\\B\u{212A})", "a\u{212A}") && !matches_backtracking("a\\B\u{212A}", "a\u{212A}"));
        // (?m:...): ^ and $ at \n, \r, U+2028 and U+2029; outside it, only the ends.
        for t in ["\n", "\r", "\u{2028}", "\u{2029}", "\r\n"] {
            assert!(matches_backtracking("(?m:^b$)", &format!("a{t}b{t}c")), "{t:?}");
        }
        assert!(!matches_backtracking("(?m:^b$)", "abc") && !matches_backtracking("^b$", "a\nb\nc"));
        assert!(matches_backtracking("(?m:a$)\\r", "a\r"), "$ before \\r");
    }

    #[test]
    fn a_pathological_value_ends_at_the_step_limit() {
        let evil = backtracking("^(?:(?=a)a+)+$");
        let value = format!("{}!", "a".repeat(40));
        let started = std::time::Instant::now();
        assert!(evil.is_match(&value).is_err(), "over the limit: an error, not an answer");
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
        assert_eq!(evil.is_match("aaaa").ok(), Some(true));
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
        let (copy, rewritten) = with_ecma_semantics(&s, Engine::Linear).unwrap();
        assert_eq!(copy["properties"]["a"]["pattern"], "^a[^\\n\\r\\u2028\\u2029]$");
        assert!(copy["properties"]["b"]["patternProperties"].get("(?-u:\\b)x").is_some());
        assert_eq!(copy["properties"]["c"]["const"]["pattern"], ".");
        assert_eq!(rewritten, vec![("^a[^\\n\\r\\u2028\\u2029]$".to_string(), "^a.$".to_string()), ("(?-u:\\b)x".to_string(), "\\bx".to_string())]);
        assert_eq!(with_ecma_semantics(&json!({"properties": {"a": {"pattern": "^\\d+$"}}}), Engine::Linear), None);
    }
}
