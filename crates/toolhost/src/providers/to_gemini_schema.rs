//! JSON Schema -> Gemini `Schema` (the OpenAPI 3.0 subset Gemini accepts).
//!
//! [`json_schema_to_gemini_schema`] keeps only the keywords of the Gemini API
//! `Schema` object:
//!
//! `type`, `format`, `title`, `description`, `nullable`, `enum`, `items`,
//! `properties`, `required`, `propertyOrdering`, `minItems`, `maxItems`,
//! `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`,
//! `minimum`, `maximum`, `anyOf`, `default`, `example`.
//!
//! Everything else is dropped (`$schema`, `additionalProperties`,
//! `exclusiveMinimum`, `uniqueItems`, `patternProperties`, ...), after these
//! rewrites:
//!
//! * `type` is upper-cased (`STRING`, `INTEGER`, `NUMBER`, `BOOLEAN`,
//!   `ARRAY`, `OBJECT`, `NULL`); `type: [T, "null"]` becomes `type: T,
//!   nullable: true`; several non-null types become an `anyOf` of types;
//! * an `anyOf` (or, without `anyOf`, a `oneOf`) with a `null` branch loses
//!   the branch and gains `nullable: true`; a single remaining branch is
//!   merged into the schema; `null` in `enum` likewise becomes `nullable`;
//! * local `$ref`s (`#/$defs/X`, `#/definitions/X`, any `#/` pointer) are
//!   inlined, sibling keywords overriding the target's; a recursive `$ref`,
//!   a non-local `$ref` or a dangling one is an error;
//! * `allOf` branches are converted and merged (properties and `required`
//!   united, other keywords taken from the first branch that has them);
//! * a string `const` becomes `enum: [const]` (with `type: STRING` if it
//!   had no type; other `const`s are dropped,
//!   Gemini enums being strings); `examples[0]` becomes `example`;
//! * what Gemini refuses is dropped, the engine still validating calls against
//!   the original schema: an `enum` unless the type is `STRING` (or absent with
//!   string values), and a `format` other than `enum` and `date-time` on a
//!   `STRING` and `int32`, `int64`, `float` and `double` on an `INTEGER` or
//!   `NUMBER` (none on other types).

use serde_json::{json, Map, Value};

use super::strict::escape_pointer;
use super::ProviderError;

const KEEP: &[&str] = &[
    "format",
    "title",
    "description",
    "nullable",
    "required",
    "propertyOrdering",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
    "example",
    "enum",
];

/// The most subschemas a converted schema may have. Inlining copies a shared `$ref`
/// at each use, so a 2 KB schema whose levels each use the next one twice inlines to
/// millions of subschemas (L levels: 2^L); real tool schemas stay far below this.
pub const MAX_GEMINI_SUBSCHEMAS: usize = 10_000;

/// Converts the JSON Schema `schema` of tool `tool` to a Gemini `Schema`.
pub fn json_schema_to_gemini_schema(tool: &str, schema: &Value) -> Result<Value, ProviderError> {
    ToGemini {
        tool,
        root: schema,
        expanding: Vec::new(),
        subschemas: 0,
    }
    .convert(schema, "")
}

struct ToGemini<'a> {
    tool: &'a str,
    root: &'a Value,
    /// `$ref`s being inlined, outermost first, to detect recursion.
    expanding: Vec<String>,
    /// Subschemas converted so far, held to [`MAX_GEMINI_SUBSCHEMAS`].
    subschemas: usize,
}

impl ToGemini<'_> {
    fn refuse(&self, path: &str, reason: String) -> ProviderError {
        ProviderError::UnsupportedSchema {
            target: "Gemini",
            tool: self.tool.to_string(),
            schema_path: path.to_string(),
            reason,
        }
    }

    fn convert(&mut self, schema: &Value, path: &str) -> Result<Value, ProviderError> {
        self.subschemas += 1;
        if self.subschemas > MAX_GEMINI_SUBSCHEMAS {
            return Err(self.refuse(
                path,
                format!(
                    "with its `$ref`s inlined (Gemini has no references) the schema has more than {MAX_GEMINI_SUBSCHEMAS} subschemas"
                ),
            ));
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => return Ok(json!({})),
            _ => {
                return Err(self.refuse(
                    path,
                    format!("`{schema}` is not a schema Gemini can express"),
                ))
            }
        };
        if let Some(reference) = map.get("$ref") {
            return self.inline_ref(map, reference, path);
        }
        let mut out = Map::new();
        for key in KEEP {
            if let Some(value) = map.get(*key) {
                out.insert((*key).to_string(), value.clone());
            }
        }
        if let (Some(Value::String(c)), false) = (map.get("const"), out.contains_key("enum")) {
            out.insert("enum".into(), json!([c]));
            if !map.contains_key("type") {
                out.insert("type".into(), json!("STRING"));
            }
        }
        if let (Some(Value::Array(examples)), false) =
            (map.get("examples"), out.contains_key("example"))
        {
            if let Some(first) = examples.first() {
                out.insert("example".into(), first.clone());
            }
        }
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            if values.contains(&Value::Null) {
                values.retain(|v| !v.is_null());
                out.insert("nullable".into(), Value::Bool(true));
            }
        }
        self.convert_type(map.get("type"), &mut out);
        drop_what_gemini_refuses(&mut out);
        if let Some(Value::Object(props)) = map.get("properties") {
            let mut converted = Map::new();
            for (name, prop) in props {
                let prop_path = format!("{path}/properties/{}", escape_pointer(name));
                converted.insert(name.clone(), self.convert(prop, &prop_path)?);
            }
            out.insert("properties".into(), Value::Object(converted));
        }
        match map.get("items") {
            Some(Value::Array(list)) if list.len() == 1 => {
                out.insert(
                    "items".into(),
                    self.convert(&list[0], &format!("{path}/items/0"))?,
                );
            }
            Some(Value::Array(list)) => {
                let branches = self.convert_list(list, &format!("{path}/items"))?;
                out.insert("items".into(), json!({ "anyOf": branches }));
            }
            Some(Value::Bool(true)) | None => {}
            Some(items) => {
                out.insert(
                    "items".into(),
                    self.convert(items, &format!("{path}/items"))?,
                );
            }
        }
        let union = ["anyOf", "oneOf"]
            .into_iter()
            .find_map(|k| map.get(k).and_then(Value::as_array).map(|l| (k, l)));
        if let Some((key, list)) = union {
            let branches = self.convert_list(list, &format!("{path}/{key}"))?;
            add_union(&mut out, branches);
        }
        if let Some(Value::Array(list)) = map.get("allOf") {
            for branch in self.convert_list(list, &format!("{path}/allOf"))? {
                merge_into(&mut out, branch);
            }
        }
        Ok(Value::Object(out))
    }

    fn convert_list(&mut self, list: &[Value], path: &str) -> Result<Vec<Value>, ProviderError> {
        list.iter()
            .enumerate()
            .map(|(i, s)| self.convert(s, &format!("{path}/{i}")))
            .collect()
    }

    fn convert_type(&self, ty: Option<&Value>, out: &mut Map<String, Value>) {
        let types: Vec<&str> = match ty {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => return,
        };
        let non_null: Vec<String> = types
            .iter()
            .filter(|t| **t != "null")
            .map(|t| t.to_ascii_uppercase())
            .collect();
        let has_null = types.contains(&"null");
        match non_null.as_slice() {
            [] if has_null => {
                out.insert("type".into(), json!("NULL"));
                return;
            }
            [] => {}
            [single] => {
                out.insert("type".into(), json!(single));
            }
            many => {
                let branches = many.iter().map(|t| json!({ "type": t })).collect();
                out.insert("anyOf".into(), Value::Array(branches));
            }
        }
        if has_null {
            out.insert("nullable".into(), Value::Bool(true));
        }
    }

    fn inline_ref(
        &mut self,
        map: &Map<String, Value>,
        reference: &Value,
        path: &str,
    ) -> Result<Value, ProviderError> {
        let Some(reference) = reference.as_str() else {
            return Err(self.refuse(path, "`$ref` must be a string".into()));
        };
        if self.expanding.iter().any(|r| r == reference) {
            return Err(self.refuse(
                path,
                format!(
                    "`$ref` \"{reference}\" is recursive; Gemini schemas cannot express recursion"
                ),
            ));
        }
        let target = match reference.strip_prefix('#') {
            Some(pointer) if pointer.is_empty() || pointer.starts_with('/') => {
                self.root.pointer(pointer)
            }
            _ => {
                return Err(self.refuse(
                    path,
                    format!("`$ref` \"{reference}\" is not a local reference (`#/$defs/...`)"),
                ))
            }
        };
        let Some(target) = target else {
            return Err(self.refuse(path, format!("`$ref` \"{reference}\" points at nothing")));
        };
        let mut merged = target.as_object().cloned().unwrap_or_default();
        for (key, value) in map.iter().filter(|(k, _)| *k != "$ref") {
            merged.insert(key.clone(), value.clone());
        }
        self.expanding.push(reference.to_string());
        let result = self.convert(&Value::Object(merged), path);
        self.expanding.pop();
        result
    }
}

/// Drops the `format` and `enum` values Gemini answers 400 to, for the converted
/// `type` in `out`: Gemini's enums are strings, and its formats are `enum` and
/// `date-time` for strings and `int32`, `int64`, `float` and `double` for numbers.
fn drop_what_gemini_refuses(out: &mut Map<String, Value>) {
    let ty = out.get("type").and_then(Value::as_str);
    let formats: &[&str] = match ty {
        Some("STRING") => &["enum", "date-time"],
        Some("INTEGER" | "NUMBER") => &["int32", "int64", "float", "double"],
        _ => &[],
    };
    let bad_format = out.get("format").is_some_and(|f| f.as_str().is_none_or(|f| !formats.contains(&f)));
    let bad_enum = match (ty, out.get("enum")) {
        (_, None) | (Some("STRING"), _) => false,
        (None, Some(Value::Array(values))) => !values.iter().all(Value::is_string),
        _ => true,
    };
    if bad_format {
        out.shift_remove("format");
    }
    if bad_enum {
        out.shift_remove("enum");
    }
}

/// Adds converted union branches: `null` branches become `nullable`, a single
/// remaining branch is merged in, several become `anyOf`.
fn add_union(out: &mut Map<String, Value>, branches: Vec<Value>) {
    let (nulls, mut rest): (Vec<Value>, Vec<Value>) = branches.into_iter().partition(|b| {
        b.get("type") == Some(&json!("NULL")) && b.as_object().is_some_and(|m| m.len() == 1)
    });
    if !nulls.is_empty() {
        out.insert("nullable".into(), Value::Bool(true));
    }
    match rest.len() {
        0 => {}
        1 => merge_into(out, rest.remove(0)),
        _ => {
            out.insert("anyOf".into(), Value::Array(rest));
        }
    }
}

/// Merges a converted schema into `out`: properties and `required` are
/// united, other keywords are only taken where `out` lacks them.
fn merge_into(out: &mut Map<String, Value>, branch: Value) {
    let Value::Object(branch) = branch else {
        return;
    };
    for (key, value) in branch {
        match (key.as_str(), out.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, schema) in theirs {
                    mine.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                out.insert(key, value);
            }
        }
    }
}
