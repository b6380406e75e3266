//! Gemini `Schema` -> JSON Schema, for reading Gemini function declarations.

use serde_json::{json, Map, Value};

/// Converts a Gemini `Schema` back to JSON Schema: types are lower-cased
/// (`TYPE_UNSPECIFIED` removed) and `nullable: true` becomes a `"null"` in
/// `type` (and in `enum`), or a `{type: "null"}` branch of `anyOf`. Other
/// keywords are kept.
pub fn gemini_schema_to_json_schema(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let converted = match key.as_str() {
            "nullable" => continue,
            "type" => match value.as_str() {
                Some("TYPE_UNSPECIFIED") | None => continue,
                Some(t) => json!(t.to_ascii_lowercase()),
            },
            "properties" => match value {
                Value::Object(props) => Value::Object(
                    props
                        .iter()
                        .map(|(k, v)| (k.clone(), gemini_schema_to_json_schema(v)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" => gemini_schema_to_json_schema(value),
            "anyOf" => match value {
                Value::Array(list) => {
                    Value::Array(list.iter().map(gemini_schema_to_json_schema).collect())
                }
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        if let Some(Value::String(t)) = out.get("type").cloned() {
            if t != "null" {
                out.insert("type".into(), json!([t, "null"]));
                if let Some(Value::Array(values)) = out.get_mut("enum") {
                    values.push(Value::Null);
                }
            }
        } else if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
            branches.push(json!({"type": "null"}));
        }
    }
    Value::Object(out)
}
