//! OpenAI "strict mode" schema conversion.
//!
//! Strict function calling (Structured Outputs) requires every object schema,
//! at any depth, to list all of its properties in `required` and to set
//! `additionalProperties: false`. [`make_strict_schema`] rewrites a JSON
//! Schema to meet that without changing what it accepts:
//!
//! * properties that were optional become nullable — `type: T` becomes
//!   `type: [T, "null"]` (and `null` joins any `enum`), an `anyOf` gets a
//!   `{type: "null"}` branch, anything else is wrapped as
//!   `anyOf: [schema, {type: "null"}]`;
//! * `additionalProperties: false` is added where it was absent;
//! * nested schemas under `properties`, `items`, `prefixItems`, `anyOf`,
//!   `oneOf`, `$defs` and `definitions` are rewritten the same way.
//!
//! Two changes only affect what the model is told, not what toolhost accepts (calls are
//! validated against the original schema): `oneOf`, which strict mode does not permit,
//! becomes `anyOf` (a `oneOf` beside an `anyOf` is refused), and a `format` strict mode
//! does not support ([`STRICT_FORMATS`] are) is dropped. Nothing else is dropped. Schemas that strict mode cannot express are refused
//! with [`ProviderError::UnsupportedSchema`] naming the tool and schema path:
//! `additionalProperties` explicitly `true` or a schema, `patternProperties`,
//! a nested object without `properties` (a free-form map), a non-object root or one
//! with `anyOf`, `oneOf` or `allOf`,
//! and the keywords OpenAI documents as unsupported (`allOf`, `not`,
//! `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`,
//! `unevaluatedProperties`). A root `{type: "object"}` without `properties`
//! is read as a tool that takes no arguments and gets `properties: {}`.

use serde_json::{json, Map, Value};

use super::root_schema::refuse_root_applicators;
use super::ProviderError;

const TARGET: &str = "OpenAI strict mode";
const UNSUPPORTED: &[&str] = &[
    "patternProperties",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
];

/// The `format`s OpenAI strict mode supports; it answers 400 to any other.
pub const STRICT_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// Rewrites `schema` (the input schema of tool `tool`) for OpenAI strict mode.
pub fn make_strict_schema(tool: &str, schema: &Value) -> Result<Value, ProviderError> {
    let refuse = |reason: &str| ProviderError::UnsupportedSchema {
        target: TARGET,
        tool: tool.to_string(),
        schema_path: String::new(),
        reason: reason.to_string(),
    };
    match schema.as_object() {
        Some(map) if is_object_schema(map) => {
            refuse_root_applicators(TARGET, tool, schema)?;
            Strict { tool }.rewrite(schema, "")
        }
        _ => Err(refuse(
            "the root schema must be an object schema (`type: \"object\"`)",
        )),
    }
}

struct Strict<'a> {
    tool: &'a str,
}

impl Strict<'_> {
    fn refuse(&self, path: &str, reason: impl Into<String>) -> ProviderError {
        ProviderError::UnsupportedSchema {
            target: TARGET,
            tool: self.tool.to_string(),
            schema_path: path.to_string(),
            reason: reason.into(),
        }
    }

    fn rewrite(&self, schema: &Value, path: &str) -> Result<Value, ProviderError> {
        let Some(map) = schema.as_object() else {
            return Ok(schema.clone()); // boolean schemas have nothing to rewrite
        };
        if let Some(keyword) = UNSUPPORTED.iter().find(|k| map.contains_key(**k)) {
            return Err(self.refuse(path, format!("`{keyword}` is not supported in strict mode")));
        }
        if map.contains_key("oneOf") && map.contains_key("anyOf") {
            return Err(self.refuse(path, "`oneOf` beside `anyOf`: strict mode permits only `anyOf`, and one schema cannot hold two"));
        }
        let mut out = map.clone();
        if is_object_schema(map) {
            self.rewrite_object(map, &mut out, path)?;
        }
        if map.get("format").and_then(Value::as_str).is_some_and(|f| !STRICT_FORMATS.contains(&f)) {
            out.shift_remove("format");
        }
        for key in ["items", "prefixItems", "anyOf", "oneOf"] {
            match map.get(key) {
                Some(Value::Array(list)) => {
                    let list = list
                        .iter()
                        .enumerate()
                        .map(|(i, s)| self.rewrite(s, &format!("{path}/{key}/{i}")))
                        .collect::<Result<_, _>>()?;
                    // Strict mode does not permit `oneOf`; as `anyOf` it tells the model the same.
                    if key == "oneOf" {
                        out.shift_remove(key);
                    }
                    out.insert(if key == "oneOf" { "anyOf" } else { key }.to_string(), Value::Array(list));
                }
                Some(single) if key == "items" => {
                    out.insert(
                        key.to_string(),
                        self.rewrite(single, &format!("{path}/items"))?,
                    );
                }
                _ => {}
            }
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = map.get(key) {
                out.insert(
                    key.to_string(),
                    Value::Object(self.rewrite_map(defs, &format!("{path}/{key}"), None)?),
                );
            }
        }
        Ok(Value::Object(out))
    }

    fn rewrite_object(
        &self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
    ) -> Result<(), ProviderError> {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                return Err(self.refuse(path, "`additionalProperties: true` allows arbitrary keys; strict mode requires `additionalProperties: false`"));
            }
            Some(_) => {
                return Err(self.refuse(path, "`additionalProperties` is a schema (a free-form map); strict mode requires `additionalProperties: false` and fixed `properties`"));
            }
        }
        out.insert("additionalProperties".into(), Value::Bool(false));
        let empty = Map::new();
        let properties = match map.get("properties") {
            Some(Value::Object(props)) => props,
            None if path.is_empty() => &empty,
            None => {
                return Err(self.refuse(path, "object schema without `properties` is a free-form map, which strict mode cannot express"));
            }
            Some(_) => return Err(self.refuse(path, "`properties` must be an object")),
        };
        let required: Vec<String> = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| self.refuse(path, "`required` must be an array of strings"))?,
            Some(_) => return Err(self.refuse(path, "`required` must be an array of strings")),
        };
        let rewritten =
            self.rewrite_map(properties, &format!("{path}/properties"), Some(&required))?;
        let mut all_required = required.clone();
        all_required.extend(properties.keys().filter(|k| !required.contains(k)).cloned());
        out.insert("properties".into(), Value::Object(rewritten));
        out.insert("required".into(), json!(all_required));
        Ok(())
    }

    /// Rewrites each schema of a name -> schema map; with `required`, names
    /// missing from it become nullable.
    fn rewrite_map(
        &self,
        map: &Map<String, Value>,
        path: &str,
        required: Option<&[String]>,
    ) -> Result<Map<String, Value>, ProviderError> {
        let mut out = Map::new();
        for (name, schema) in map {
            let mut schema = self.rewrite(schema, &format!("{path}/{}", escape_pointer(name)))?;
            if required.is_some_and(|r| !r.contains(name)) {
                schema = make_nullable(schema);
            }
            out.insert(name.clone(), schema);
        }
        Ok(out)
    }
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    let typed_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    };
    typed_object
        || ["properties", "additionalProperties", "patternProperties"]
            .iter()
            .any(|k| map.contains_key(*k))
}

/// Makes a schema also accept `null`.
fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return if schema == Value::Bool(true) {
            schema
        } else {
            json!({"anyOf": [schema, {"type": "null"}]})
        };
    };
    let null = Value::String("null".into());
    let has_const = map.contains_key("const");
    match map.get_mut("type") {
        Some(Value::String(t)) if t == "null" => return Value::Object(map),
        Some(Value::String(t)) if !has_const => {
            let t = t.clone();
            map.insert("type".into(), json!([t, "null"]));
            add_null_to_enum(&mut map);
            return Value::Object(map);
        }
        Some(Value::Array(types)) if !has_const => {
            if !types.contains(&null) {
                types.push(null);
                add_null_to_enum(&mut map);
            }
            return Value::Object(map);
        }
        _ => {}
    }
    let untyped = !map.contains_key("type") && !has_const;
    if let (true, Some(Value::Array(branches))) = (untyped, map.get_mut("anyOf")) {
        if !branches.iter().any(|b| b.get("type") == Some(&null)) {
            branches.push(json!({"type": "null"}));
        }
        return Value::Object(map);
    }
    if untyped && map.contains_key("enum") && !map.contains_key("$ref") {
        add_null_to_enum(&mut map);
        return Value::Object(map);
    }
    json!({"anyOf": [Value::Object(map), {"type": "null"}]})
}

fn add_null_to_enum(map: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
}

/// Escapes a property name for use as a JSON pointer segment.
pub(crate) fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_nullable_picks_the_least_invasive_form() {
        assert_eq!(
            make_nullable(json!({"type": "string"})),
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            make_nullable(json!({"type": ["integer", "string"]})),
            json!({"type": ["integer", "string", "null"]})
        );
        assert_eq!(
            make_nullable(json!({"type": "string", "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(
            make_nullable(json!({"enum": ["a", "b"]})),
            json!({"enum": ["a", "b", null]})
        );
        assert_eq!(
            make_nullable(json!({"type": "null"})),
            json!({"type": "null"})
        );
        assert_eq!(
            make_nullable(json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"$ref": "#/$defs/a"})),
            json!({"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"type": "string", "const": "x"})),
            json!({"anyOf": [{"type": "string", "const": "x"}, {"type": "null"}]})
        );
    }

    #[test]
    fn pointer_segments_are_escaped() {
        assert_eq!(escape_pointer("a/b~c"), "a~1b~0c");
    }
}
