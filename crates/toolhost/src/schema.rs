//! Input schemas: checked and compiled once at registration, then used to validate
//! every call's arguments.
//!
//! - Drafts: 2020-12 by default; `$schema` selects draft 7 or 2019-09.
//! - `format` is asserted in every draft: a tool's arguments should honour it.
//! - `pattern` and `patternProperties` are ECMA-262. They run on the linear-time `regex`
//!   engine, or, for look-around and backreferences, on a backtracking engine with a step
//!   limit, so no pattern can stall validation (see [`crate::pattern_dialect`]).
//! - A `$ref` cycle with no constraint between is refused (see [`crate::ref_cycles`]).
//! - A validation lists at most [`MAX_VALIDATION_ERRORS`] failures, and quotes at most
//!   [`MAX_QUOTED_CHARS`] characters of a value in a message; values under redacted
//!   fields are never quoted ([`CompiledSchema::validate_redacting`]).
//! - `$ref` never leaves the schema: there is no HTTP or file retrieval compiled in, and
//!   a reference to an http, https or file URI the schema does not itself define is refused.

use std::collections::HashSet;
use std::fmt;

use jsonschema::{Draft, PatternOptions, Validator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::RegistryError;
use crate::pattern_dialect::Engine;
use crate::redaction::{self, REDACTED};
use crate::truncation::{preview, ELLIPSIS};

/// Most failures one validation lists (in `validationErrors`, the error message and the
/// model's reply). When there are more, one more entry follows, with keyword `more`,
/// empty paths, and a message saying how many more failed: `"99980 more failures not
/// listed (only the first 20 are)"`. Validation stops counting at
/// [`MAX_COUNTED_ERRORS`] ("more than 100000 more failures not listed").
pub const MAX_VALIDATION_ERRORS: usize = 20;
/// Most failures counted past the listed ones.
pub const MAX_COUNTED_ERRORS: usize = 100_000;
/// Most characters of a value a validation message quotes; a longer one is cut with `…`.
pub const MAX_QUOTED_CHARS: usize = 200;

/// One way the arguments fail the schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationIssue {
    /// JSON Pointer into the arguments (`""` is the root).
    pub path: String,
    /// JSON Pointer into the schema, to the keyword that failed.
    pub schema_path: String,
    /// The keyword that failed (`type`, `required`, `pattern`, ...).
    pub keyword: String,
    /// A readable explanation.
    pub message: String,
}

/// A schema checked against its meta-schema and compiled for validation.
pub struct CompiledSchema {
    validator: Validator,
    draft: Draft,
    /// Patterns the validator was compiled with in ECMA-262's meaning, each with the
    /// schema's own, which messages and schema paths show (see
    /// [`crate::pattern_dialect::ecma_semantics`]); empty for most schemas.
    rewritten_patterns: Vec<(String, String)>,
    /// The schema path of each `pattern` keyword and its pattern, for a schema whose
    /// patterns run on the backtracking engine: a value over its step limit names it.
    backtracking_patterns: Vec<(String, String)>,
    /// For a schema held to a cost bound: (its steps per value path, the most steps one
    /// validation may take in all). See [`Self::bound_work`].
    work: Option<(u64, u64)>,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema").field("draft", &self.draft).finish()
    }
}

impl CompiledSchema {
    /// Checks and compiles a tool's input schema.
    ///
    /// # Errors
    /// `INVALID_SCHEMA` with the schema path of the problem when the root is not an
    /// object type, the schema breaks its meta-schema, a `$ref` points outside the
    /// schema, or a keyword cannot be compiled (an unsupported regex, say).
    pub fn compile(tool: &str, schema: &Value) -> Result<Self, RegistryError> {
        let Some(root) = schema.as_object() else {
            return Err(RegistryError::invalid_schema(
                format!("tool '{tool}': inputSchema must be a JSON object with type \"object\""),
                "",
            ));
        };
        let root_is_object = match root.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.len() == 1 && ts[0] == "object",
            _ => false,
        };
        if !root_is_object {
            return Err(RegistryError::invalid_schema(
                format!(
                    "tool '{tool}': the root of inputSchema must declare type \"object\" (tool arguments are a JSON object)"
                ),
                "/type",
            ));
        }
        Self::build(tool, schema, "inputSchema")
    }

    /// Checks and compiles a tool's output schema: any JSON Schema (the result need not
    /// be an object).
    ///
    /// # Errors
    /// As [`CompiledSchema::compile`], but for the root's type.
    pub fn compile_output(tool: &str, schema: &Value) -> Result<Self, RegistryError> {
        if !schema.is_object() && !schema.is_boolean() {
            return Err(RegistryError::invalid_schema(format!("tool '{tool}': outputSchema must be a JSON Schema object"), ""));
        }
        Self::build(tool, schema, "outputSchema")
    }

    fn build(tool: &str, schema: &Value, what: &str) -> Result<Self, RegistryError> {
        let draft = draft_of(tool, schema)?;
        refuse_external_refs(tool, schema)?;
        let engine = crate::pattern_dialect::schema_engine(schema)
            .map_err(|(path, why)| RegistryError::invalid_schema(format!("tool '{tool}': invalid {what} at {path}: {why}"), path))?;
        if let Some((path, cycle)) = crate::ref_cycles::find_cycle(schema) {
            let chain = cycle.iter().chain(std::iter::once(&cycle[0])).map(String::as_str).collect::<Vec<_>>().join(" -> ");
            return Err(RegistryError::invalid_schema(
                format!("tool '{tool}': invalid {what} at {path}: $ref cycle with no constraint between ({chain}), which would accept any value; give the schema a constraint (a type, say) or point the $ref elsewhere"),
                path,
            ));
        }
        let ecma = crate::pattern_dialect::with_ecma_semantics(schema, engine);
        let (compiled_from, rewritten_patterns) = match &ecma {
            Some((copy, rewritten)) => (copy, rewritten.clone()),
            None => (schema, Vec::new()),
        };
        let options = jsonschema::options().with_draft(draft).should_validate_formats(true);
        let size = crate::pattern_dialect::PATTERN_SIZE_LIMIT;
        let options = match engine {
            Engine::Linear => options.with_pattern_options(PatternOptions::regex().size_limit(size)),
            Engine::Backtracking => options
                .with_pattern_options(PatternOptions::fancy_regex().backtrack_limit(crate::pattern_dialect::BACKTRACK_LIMIT).size_limit(size)),
        };
        let validator = options
            .offline()
            .build(compiled_from)
            .map_err(|e| {
                let path = e.instance_path().as_str().to_string();
                let at = if path.is_empty() { "the root".to_string() } else { path.clone() };
                RegistryError::invalid_schema(format!("tool '{tool}': invalid {what} at {at}: {e}"), path)
            })?;
        let backtracking_patterns = if engine == Engine::Backtracking { crate::pattern_dialect::patterns_at(schema) } else { Vec::new() };
        Ok(Self { validator, draft, rewritten_patterns, backtracking_patterns, work: None })
    }

    /// Bounds the work of one validation by this schema, whose cost along any path of a
    /// value is `steps` ([`crate::schema_cost`]), to `limit` steps in all: a value of more
    /// than `limit / steps` values (objects, arrays and scalars, the root included) fails
    /// before it is validated. The cost bounds one path, and each element of an array
    /// runs its path again.
    pub fn bound_work(&mut self, steps: u64, limit: u64) {
        self.work = Some((steps.max(1), limit));
    }

    /// The refusal of a value with more values than the work bound lets through (none
    /// for a schema with no bound, at once).
    fn over_work(&self, value: &Value) -> Option<ValidationIssue> {
        let (steps, limit) = self.work?;
        let most = usize::try_from(limit / steps).unwrap_or(usize::MAX);
        let mut seen = 0usize;
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            seen += 1;
            if seen > most {
                return Some(ValidationIssue {
                    path: String::new(),
                    schema_path: String::new(),
                    keyword: "cost".into(),
                    message: format!(
                        "more than {most} values: each may take up to {steps} validation steps with this schema, and one validation may take {limit} in all; send fewer at once"
                    ),
                });
            }
            match v {
                Value::Array(items) => stack.extend(items),
                Value::Object(members) => stack.extend(members.values()),
                _ => {}
            }
        }
        None
    }

    /// The draft the schema is validated under.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// True when the arguments satisfy the schema. Cheaper than [`Self::validate`].
    pub fn is_valid(&self, args: &Value) -> bool {
        self.over_work(args).is_none() && self.validator.is_valid(args)
    }

    /// The failures, at most [`MAX_VALIDATION_ERRORS`] and a count of the rest.
    pub fn validate(&self, args: &Value) -> Vec<ValidationIssue> {
        self.validate_redacting(args, &[])
    }

    /// As [`Self::validate`], with messages that never quote a value under a key named in
    /// `redact` (case-insensitive, as [`crate::redaction::redact`] matches): a failure
    /// under such a key quotes `"[REDACTED]"`, one above it quotes the value redacted.
    /// Validation stops once [`MAX_VALIDATION_ERRORS`] are listed and
    /// [`MAX_COUNTED_ERRORS`] more counted.
    pub fn validate_redacting(&self, args: &Value, redact: &[String]) -> Vec<ValidationIssue> {
        if let Some(issue) = self.over_work(args) {
            return vec![issue];
        }
        if self.validator.is_valid(args) {
            return Vec::new();
        }
        let lowered = redaction::lowered(redact);
        let mut errors = self.validator.iter_errors(args);
        let mut issues: Vec<ValidationIssue> =
            errors.by_ref().take(MAX_VALIDATION_ERRORS).map(|e| self.original_patterns(issue(&e, &lowered, &self.backtracking_patterns))).collect();
        let more = errors.take(MAX_COUNTED_ERRORS).count();
        if more > 0 {
            let message = if more == MAX_COUNTED_ERRORS {
                format!("more than {MAX_COUNTED_ERRORS} more failures not listed (only the first {MAX_VALIDATION_ERRORS} are)")
            } else {
                format!("{more} more failures not listed (only the first {MAX_VALIDATION_ERRORS} are)")
            };
            issues.push(ValidationIssue { path: String::new(), schema_path: String::new(), keyword: "more".into(), message });
        }
        issues
    }

    /// `issue` as the schema reads: a rewritten pattern in its message or schema path
    /// (a `patternProperties` key) shown as the schema has it.
    fn original_patterns(&self, mut issue: ValidationIssue) -> ValidationIssue {
        if self.rewritten_patterns.is_empty() {
            return issue;
        }
        let original = |p: &str| self.rewritten_patterns.iter().find(|(r, _)| r == p).map(|(_, o)| o.as_str());
        if issue.keyword == "pattern" {
            if let Some((rewritten, schema_has)) = self.rewritten_patterns.iter().find(|(r, _)| issue.message.ends_with(&format!("\"{r}\""))) {
                let at = issue.message.len() - rewritten.len() - 1;
                issue.message.replace_range(at..issue.message.len() - 1, schema_has);
            }
        }
        if issue.schema_path.contains("/patternProperties/") {
            let segments: Vec<&str> = issue.schema_path.split('/').collect();
            let mut path = String::new();
            for (i, segment) in segments.iter().enumerate().skip(1) {
                path.push('/');
                let key = segment.replace("~1", "/").replace("~0", "~");
                match (segments[i - 1], original(&key)) {
                    ("patternProperties", Some(o)) => path.push_str(&o.replace('~', "~0").replace('/', "~1")),
                    _ => path.push_str(segment),
                }
            }
            issue.schema_path = path;
        }
        issue
    }
}

/// One failure, its message quoting at most [`MAX_QUOTED_CHARS`] of the value and
/// nothing redacted.
fn issue(e: &jsonschema::ValidationError<'_>, lowered: &[String], patterns: &[(String, String)]) -> ValidationIssue {
    let path = e.instance_path().as_str().to_string();
    let instance: &Value = e.instance();
    let under_redacted = !lowered.is_empty()
        && path.split('/').skip(1).any(|key| redaction::key_matches(&key.replace("~1", "/").replace("~0", "~"), lowered));
    let over_limit = matches!(e.kind(), jsonschema::error::ValidationErrorKind::BacktrackLimitExceeded { .. });
    let message = if over_limit {
        let quoted = if under_redacted {
            format!("\"{REDACTED}\"")
        } else if !lowered.is_empty() && redaction::holds_redacted(instance, lowered) {
            preview(&redaction::redact_value(instance, lowered), MAX_QUOTED_CHARS)
        } else {
            preview(instance, MAX_QUOTED_CHARS)
        };
        let at = e.schema_path().as_str();
        let pattern = patterns.iter().find(|(path, _)| path == at).map_or_else(|| "its pattern".to_string(), |(_, p)| format!("\"{p}\""));
        format!(
            "{quoted} could not be matched against {pattern} within {} backtracking steps, so it is refused (look-around and backreferences run on a backtracking engine, which stops there; a value it can decide within the limit passes)",
            crate::pattern_dialect::BACKTRACK_LIMIT
        )
    } else if under_redacted {
        e.masked_with(format!("\"{REDACTED}\"")).to_string()
    } else if !lowered.is_empty() && redaction::holds_redacted(instance, lowered) {
        e.masked_with(preview(&redaction::redact_value(instance, lowered), MAX_QUOTED_CHARS)).to_string()
    } else {
        let quoted = preview(instance, MAX_QUOTED_CHARS);
        if quoted.ends_with(ELLIPSIS) {
            e.masked_with(quoted).to_string()
        } else {
            e.to_string()
        }
    };
    ValidationIssue { path, schema_path: e.schema_path().as_str().to_string(), keyword: e.kind().keyword().to_string(), message }
}

pub(crate) fn draft_of(tool: &str, schema: &Value) -> Result<Draft, RegistryError> {
    let Some(uri) = schema.get("$schema") else {
        return Ok(Draft::Draft202012);
    };
    let Some(uri) = uri.as_str() else {
        return Err(RegistryError::invalid_schema(format!("tool '{tool}': $schema must be a string"), "/$schema"));
    };
    let bare = uri.trim_end_matches('#').trim_start_matches("https://").trim_start_matches("http://");
    match bare {
        "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        "json-schema.org/draft/2019-09/schema" => Ok(Draft::Draft201909),
        "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        _ => Err(RegistryError::invalid_schema(
            format!("tool '{tool}': unsupported $schema {uri:?}; use draft 2020-12 (default), 2019-09 or 7"),
            "/$schema",
        )),
    }
}

/// Refuses `$ref`s to http, https or file URIs that no `$id` inside the schema defines.
/// Relative `$id`s and `$ref`s are resolved against the enclosing resource's base.
fn refuse_external_refs(tool: &str, schema: &Value) -> Result<(), RegistryError> {
    let mut ids = HashSet::new();
    collect_ids(schema, "", &mut ids);
    let mut path = String::new();
    check_refs(tool, schema, "", &ids, &mut path)
}

fn strip_fragment(uri: &str) -> &str {
    uri.split('#').next().unwrap_or(uri).trim_end_matches('/')
}

fn has_scheme(uri: &str) -> bool {
    uri.split_once(':').is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
}

/// Resolves a URI reference against a base (enough of RFC 3986 for `$id`/`$ref`).
fn resolve(base: &str, reference: &str) -> String {
    if has_scheme(reference) || base.is_empty() {
        return reference.to_string();
    }
    let base = strip_fragment(base);
    if reference.is_empty() || reference.starts_with('#') {
        return format!("{base}{reference}");
    }
    if let Some(rest) = reference.strip_prefix('/') {
        let origin_end = base.find("://").and_then(|i| base[i + 3..].find('/').map(|j| i + 3 + j)).unwrap_or(base.len());
        return format!("{}/{rest}", &base[..origin_end]);
    }
    let reference = reference.strip_prefix("./").unwrap_or(reference);
    match base.rfind('/') {
        Some(i) if i > base.find("://").map_or(0, |j| j + 2) => format!("{}/{reference}", &base[..i]),
        _ => format!("{base}/{reference}"),
    }
}

fn id_of(map: &serde_json::Map<String, Value>) -> Option<&str> {
    map.get("$id").or_else(|| map.get("id")).and_then(Value::as_str)
}

fn collect_ids(v: &Value, base: &str, ids: &mut HashSet<String>) {
    match v {
        Value::Object(map) => {
            let here = match id_of(map) {
                Some(id) => {
                    let resolved = resolve(base, id);
                    ids.insert(strip_fragment(&resolved).to_string());
                    resolved
                }
                None => base.to_string(),
            };
            map.values().for_each(|child| collect_ids(child, &here, ids));
        }
        Value::Array(items) => items.iter().for_each(|c| collect_ids(c, base, ids)),
        _ => {}
    }
}

fn check_refs(tool: &str, v: &Value, base: &str, ids: &HashSet<String>, path: &mut String) -> Result<(), RegistryError> {
    match v {
        Value::Object(map) => {
            let here = id_of(map).map_or_else(|| base.to_string(), |id| resolve(base, id));
            for (k, child) in map {
                let _ = &here;
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef") {
                    // Only absolute references are checked here: relative ones are
                    // resolved by jsonschema itself, which has no retriever compiled
                    // in and fails them at build time if they leave the schema.
                    if let Value::String(r) = child {
                        let lower = r.to_ascii_lowercase();
                        let external = ["http://", "https://", "file:"].iter().any(|p| lower.starts_with(p));
                        if external && !ids.contains(strip_fragment(r)) {
                            return Err(RegistryError::invalid_schema(
                                format!(
                                    "tool '{tool}': $ref {r:?} at {path} points outside the schema; toolhost never fetches remote or file schemas, so inline it under $defs"
                                ),
                                path.clone(),
                            ));
                        }
                    }
                }
                check_refs(tool, child, &here, ids, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                check_refs(tool, child, base, ids, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather() -> CompiledSchema {
        CompiledSchema::compile(
            "get_weather",
            &json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}, "required": ["city"]}),
        )
        .unwrap()
    }

    #[test]
    fn reports_every_failure_with_paths_and_keywords() {
        let issues = weather().validate(&json!({"city": 7, "days": 0}));
        assert_eq!(issues.len(), 2, "{issues:?}");
        let city = issues.iter().find(|i| i.path == "/city").unwrap();
        assert_eq!(city.schema_path, "/properties/city/type");
        assert_eq!(city.keyword, "type");
        assert!(city.message.contains("string"), "{}", city.message);
        let days = issues.iter().find(|i| i.path == "/days").unwrap();
        assert_eq!(days.keyword, "minimum");
        assert!(weather().validate(&json!({"city": "Paris"})).is_empty());
    }

    #[test]
    fn refuses_non_object_roots() {
        for s in [json!(true), json!({"type": "string"}), json!({"properties": {}}), json!([1])] {
            let e = CompiledSchema::compile("t", &s).unwrap_err();
            assert_eq!(e.code(), "INVALID_SCHEMA", "{s}");
        }
    }

    #[test]
    fn refuses_schemas_that_break_the_meta_schema_with_a_path() {
        let e = CompiledSchema::compile("t", &json!({"type": "object", "properties": {"a": {"type": "strin"}}})).unwrap_err();
        assert_eq!(e.code(), "INVALID_SCHEMA");
        assert!(e.schema_path.as_deref().unwrap().starts_with("/properties/a"), "{e:?}");
        assert!(e.message.contains("tool 't'"));
    }

    #[test]
    fn refuses_external_refs_but_resolves_internal_ones() {
        for r in ["https://example.com/s.json", "http://example.com/s.json#/x", "file:///etc/passwd"] {
            let e = CompiledSchema::compile("t", &json!({"type": "object", "properties": {"a": {"$ref": r}}})).unwrap_err();
            assert_eq!(e.code(), "INVALID_SCHEMA", "{r}");
            assert_eq!(e.schema_path.as_deref(), Some("/properties/a/$ref"));
        }
        let s = CompiledSchema::compile(
            "t",
            &json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/pos"}}, "$defs": {"pos": {"type": "integer", "minimum": 1}}}),
        )
        .unwrap();
        assert!(s.is_valid(&json!({"a": 2})));
        assert!(!s.is_valid(&json!({"a": 0})));
        // An embedded resource with a relative $id, referenced by its absolute URI.
        let embedded = json!({
            "$id": "http://example.com/root.json", "type": "object",
            "properties": {"a": {"$ref": "http://example.com/item.json"}, "b": {"$ref": "item.json"}},
            "$defs": {"item": {"$id": "item.json", "type": "integer"}}
        });
        let s = CompiledSchema::compile("t", &embedded).unwrap();
        assert!(s.is_valid(&json!({"a": 1, "b": 2})));
        assert!(!s.is_valid(&json!({"a": "x"})));
        assert_eq!(resolve("http://example.com/a/root.json", "item.json"), "http://example.com/a/item.json");
        assert_eq!(resolve("http://example.com/a/root.json", "/x.json"), "http://example.com/x.json");
        assert_eq!(resolve("http://example.com/a/root.json", "#/$defs/x"), "http://example.com/a/root.json#/$defs/x");
    }

    #[test]
    fn selects_drafts_and_asserts_format_in_each() {
        for (uri, draft) in [
            (None, Draft::Draft202012),
            (Some("http://json-schema.org/draft-07/schema#"), Draft::Draft7),
            (Some("https://json-schema.org/draft/2019-09/schema"), Draft::Draft201909),
        ] {
            let mut s = json!({"type": "object", "properties": {"when": {"type": "string", "format": "date"}}});
            if let Some(uri) = uri {
                s["$schema"] = json!(uri);
            }
            let c = CompiledSchema::compile("t", &s).unwrap();
            assert_eq!(c.draft(), draft);
            assert!(c.is_valid(&json!({"when": "2026-11-21"})));
            assert!(!c.is_valid(&json!({"when": "yesterday"})), "format asserted under {draft:?}");
        }
        let e = CompiledSchema::compile("t", &json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"})).unwrap_err();
        assert_eq!(e.schema_path.as_deref(), Some("/$schema"));
    }

    #[test]
    fn failures_are_capped_and_counted() {
        let s = CompiledSchema::compile("t", &json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string"}}}})).unwrap();
        let issues = s.validate(&json!({ "xs": vec![0; 1000] }));
        assert_eq!(issues.len(), MAX_VALIDATION_ERRORS + 1);
        assert_eq!(issues[19].path, "/xs/19");
        assert_eq!(issues[20].keyword, "more");
        assert_eq!(issues[20].message, "980 more failures not listed (only the first 20 are)");
        assert_eq!(s.validate(&json!({ "xs": vec![0; 20] })).len(), 20);
    }

    #[test]
    fn messages_never_quote_redacted_values_nor_huge_ones() {
        let s = CompiledSchema::compile(
            "t",
            &json!({"type": "object", "maxProperties": 1, "properties": {"user": {"type": "string"}, "Password": {"type": "string", "minLength": 12}}}),
        )
        .unwrap();
        let args = json!({"user": "bob", "Password": "hunter2"});
        let issues = s.validate_redacting(&args, &["password".to_string()]);
        assert_eq!(issues.len(), 2, "{issues:?}");
        for i in &issues {
            assert!(!i.message.contains("hunter2"), "{}", i.message);
        }
        assert_eq!(issues.iter().find(|i| i.path == "/Password").unwrap().message, r#""[REDACTED]" is shorter than 12 characters"#);
        assert!(issues.iter().any(|i| i.message.contains(r#""user":"bob""#)), "{issues:?}");
        // Without redaction the value is quoted, as before.
        assert!(s.validate(&args).iter().any(|i| i.message.contains("hunter2")));
        let long = s.validate(&json!({"user": "x".repeat(100_000)}));
        assert!(long.is_empty());
        let long = s.validate(&json!({"user": 1, "Password": "y".repeat(100_000)}));
        assert!(long.iter().all(|i| i.message.len() < 1000), "{long:?}");
    }

    #[test]
    fn refuses_ref_cycles_and_other_regex_dialects_with_a_path() {
        let e = CompiledSchema::compile("t", &json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}})).unwrap_err();
        assert_eq!((e.code(), e.schema_path.as_deref()), ("INVALID_SCHEMA", Some("/$defs/a")));
        assert!(e.message.contains("$ref cycle") && e.message.contains("tool 't'"), "{}", e.message);
        let e = CompiledSchema::compile("t", &json!({"type": "object", "properties": {"a": {"pattern": "[[:alpha:]]"}}})).unwrap_err();
        assert_eq!(e.schema_path.as_deref(), Some("/properties/a/pattern"));
        assert!(e.message.contains("not an ECMA-262 regular expression"), "{}", e.message);
    }

    #[test]
    fn catastrophic_patterns_run_in_linear_time() {
        let s = CompiledSchema::compile("t", &json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}})).unwrap();
        let evil = format!("{}!", "a".repeat(100_000));
        let started = std::time::Instant::now();
        assert!(!s.is_valid(&json!({ "s": evil })));
        // A backtracking engine takes longer than the age of the universe here.
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn look_around_runs_and_a_value_over_the_step_limit_fails_with_a_clear_message() {
        let s = CompiledSchema::compile(
            "t",
            &json!({"type": "object", "properties": {
                "password": {"type": "string", "pattern": "^(?=.*[A-Z])(?=.*\\d).{8,}$"},
                "slug": {"type": "string", "pattern": "^[a-z-]+\\b"},
                "evil": {"type": "string", "pattern": "^(?:(?=a)a+)+$"},
                "not_evil": {"not": {"pattern": "^(?:(?=a)a+)+$"}},
            }}),
        )
        .unwrap();
        assert!(s.is_valid(&json!({"password": "Secret123", "slug": "a-b", "evil": "aaa"})));
        let issues = s.validate(&json!({"password": "secret123", "slug": "-"}));
        assert_eq!(issues.iter().map(|i| (i.path.as_str(), i.keyword.as_str())).collect::<Vec<_>>(), [("/password", "pattern"), ("/slug", "pattern")]);
        assert!(issues[0].message.ends_with(r#"does not match "^(?=.*[A-Z])(?=.*\d).{8,}$""#), "{}", issues[0].message);
        let value = format!("{}!", "a".repeat(40));
        for args in [json!({ "evil": value }), json!({ "not_evil": value })] {
            let started = std::time::Instant::now();
            assert!(!s.is_valid(&args), "undecided is invalid, even under `not`: {args}");
            let issues = s.validate(&args);
            assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
            assert_eq!(issues.len(), 1, "{issues:?}");
            assert_eq!(issues[0].keyword, "pattern");
            assert!(issues[0].message.contains(r#"could not be matched against "^(?:(?=a)a+)+$" within 100000 backtracking steps"#), "{}", issues[0].message);
        }
        let redacted = s.validate_redacting(&json!({ "evil": value }), &["evil".to_string()]);
        assert!(redacted[0].message.starts_with(r#""[REDACTED]" could not be matched"#), "{}", redacted[0].message);
    }

    #[test]
    fn patterns_mean_what_ecma_262_means_and_read_as_the_schema_has_them() {
        let s = CompiledSchema::compile(
            "t",
            &json!({"type": "object", "properties": {"s": {"pattern": "^a.\\bz$"}, "o": {"patternProperties": {"^k.$": {"type": "number"}}}}}),
        )
        .unwrap();
        assert!(!s.is_valid(&json!({"s": "a\rz"})));
        assert!(s.is_valid(&json!({"s": "a-z"})));
        // é is not an ECMA-262 word character: there is a boundary between it and z.
        assert!(s.is_valid(&json!({"s": "aéz"})));
        assert!(!s.is_valid(&json!({"s": "abz"})));
        let issues = s.validate(&json!({"s": "a\rz", "o": {"k-": "x", "k\n": "x"}}));
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert_eq!(issues[0].schema_path, "/properties/s/pattern");
        assert!(issues[0].message.ends_with(r#"does not match "^a.\bz$""#), "{}", issues[0].message);
        assert_eq!(issues[1].schema_path, "/properties/o/patternProperties/^k.$/type");
        assert_eq!(issues[1].path, "/o/k-");
    }
}
