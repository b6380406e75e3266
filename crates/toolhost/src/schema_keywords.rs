//! Strict schemas: a keyword JSON Schema does not know is refused at registration, as
//! ajv's `strict: true` refuses it, because the spec says to ignore it, and an ignored
//! `requried` or `minLenght` makes validation pass everything it was meant to stop.
//!
//! Only keywords at a schema position are read (the keys of `properties` are names, the
//! values of `enum`, `const`, `default` and `examples` are data). Allowed besides the
//! keywords of the schema's draft:
//! - annotations of your own, named `x-...`;
//! - annotations other tools write and no validator reads: OpenAPI's `example`,
//!   `discriminator`, `externalDocs` and `xml`, Gemini's `propertyOrdering`, editors'
//!   `markdownDescription`, ajv-errors' `errorMessage`.
//!
//! Keywords of another draft are refused naming the draft (`unevaluatedProperties` in a
//! draft-07 schema checks nothing), and OpenAPI 3.0's `nullable`, which JSON Schema
//! ignores, with how to write it. A registry created with `strictSchemas: false` skips
//! this check (tools a mounted MCP server declares are never checked: their schemas are
//! not yours to fix).

use jsonschema::Draft;
use serde_json::{Map, Value};

use crate::error::RegistryError;

/// Keywords every supported draft validates or reads (the validator also honours
/// `dependencies` in 2020-12, and `$defs` in draft 7).
const COMMON: &[&str] = &[
    "$schema", "$id", "$ref", "$comment", "$defs", "definitions", "title", "description", "default", "examples", "readOnly",
    "writeOnly", "deprecated", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "items", "maxItems", "minItems",
    "uniqueItems", "contains", "maxProperties", "minProperties", "required", "properties", "patternProperties",
    "additionalProperties", "dependencies", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not", "format",
    "contentMediaType", "contentEncoding",
];
/// Keywords 2019-09 and 2020-12 add.
const MODERN: &[&str] = &[
    "$anchor", "$vocabulary", "dependentRequired", "dependentSchemas", "maxContains", "minContains", "unevaluatedItems",
    "unevaluatedProperties", "contentSchema",
];
/// Keywords 2020-12 dropped. `additionalItems` applies only beside an array of `items`,
/// which 2020-12 writes as `prefixItems`: there it would check nothing.
const BEFORE_2020: &[&str] = &["additionalItems"];
const ONLY_2019: &[&str] = &["$recursiveRef", "$recursiveAnchor"];
const ONLY_2020: &[&str] = &["$dynamicRef", "$dynamicAnchor", "prefixItems"];

/// Annotations other tools write that no validator reads: allowed, as `x-...` is.
const FOREIGN_ANNOTATIONS: &[&str] =
    &["example", "discriminator", "externalDocs", "xml", "propertyOrdering", "markdownDescription", "errorMessage"];

/// Keywords whose value is one schema.
const SCHEMA: &[&str] = &[
    "not", "if", "then", "else", "contains", "propertyNames", "additionalProperties", "additionalItems", "unevaluatedItems",
    "unevaluatedProperties", "contentSchema", "items",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

fn draft_name(draft: Draft) -> &'static str {
    match draft {
        Draft::Draft7 => "draft-07",
        Draft::Draft201909 => "draft 2019-09",
        _ => "draft 2020-12",
    }
}

/// The keywords `draft` knows.
fn known(draft: Draft) -> Vec<&'static str> {
    let mut k = COMMON.to_vec();
    match draft {
        Draft::Draft201909 => k.extend(MODERN.iter().chain(ONLY_2019).chain(BEFORE_2020)),
        Draft::Draft7 => k.extend(BEFORE_2020),
        _ => k.extend(MODERN.iter().chain(ONLY_2020)),
    }
    k
}

/// The first keyword of `schema` that `draft` does not know: its schema path and why it
/// is refused.
pub fn first_unknown_keyword(schema: &Value, draft: Draft) -> Option<(String, String)> {
    let known = known(draft);
    let mut path = String::new();
    walk(schema, draft, &known, &mut path)
}

/// Refuses a schema holding a keyword its draft does not know (see the module docs).
///
/// # Errors
/// `INVALID_SCHEMA` with the keyword's schema path, naming the tool, the keyword and the
/// closest known one.
pub fn check(tool: &str, schema: &Value, what: &str) -> Result<(), RegistryError> {
    let draft = crate::schema::draft_of(tool, schema)?;
    match first_unknown_keyword(schema, draft) {
        None => Ok(()),
        Some((path, why)) => Err(RegistryError::invalid_schema(format!("tool '{tool}': invalid {what} at {path}: {why}"), path)),
    }
}

fn push(path: &mut String, key: &str) -> usize {
    let len = path.len();
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
    len
}

fn walk(v: &Value, draft: Draft, known: &[&str], path: &mut String) -> Option<(String, String)> {
    let Value::Object(map) = v else { return None };
    for (key, child) in map {
        let len = push(path, key);
        let found = if known.contains(&key.as_str()) {
            children(key, child, draft, known, path)
        } else if key.starts_with("x-") || FOREIGN_ANNOTATIONS.contains(&key.as_str()) {
            None
        } else {
            Some((path.clone(), refusal(key, map, draft, known)))
        };
        path.truncate(len);
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The subschemas under a known keyword.
fn children(key: &str, child: &Value, draft: Draft, known: &[&str], path: &mut String) -> Option<(String, String)> {
    let mut each = |key: &str, v: &Value| {
        let len = push(path, key);
        let found = walk(v, draft, known, path);
        path.truncate(len);
        found
    };
    match child {
        Value::Object(m) if SCHEMA_MAP.contains(&key) => m.iter().find_map(|(k, v)| each(k, v)),
        Value::Object(_) if SCHEMA.contains(&key) => walk(child, draft, known, path),
        Value::Array(items) if SCHEMA_ARRAY.contains(&key) => items.iter().enumerate().find_map(|(i, v)| each(&i.to_string(), v)),
        _ => None,
    }
}

fn refusal(key: &str, _schema: &Map<String, Value>, draft: Draft, known: &[&str]) -> String {
    let ignored = "JSON Schema ignores a keyword it does not know, so it would check nothing";
    let escape = "(name annotations of your own `x-...`, or create the registry with new ToolRegistry({ strictSchemas: false }))";
    if key == "nullable" {
        return format!("`nullable` is OpenAPI 3.0, not JSON Schema: {ignored}; allow null in the type instead (type: ['string', 'null'])");
    }
    if key == "additionalItems" && draft == Draft::Draft202012 {
        return format!("`additionalItems` is not a draft 2020-12 keyword (this schema's draft): {ignored}; write `items` after `prefixItems` (`items: false` allows no more)");
    }
    let other_drafts = [Draft::Draft202012, Draft::Draft201909, Draft::Draft7];
    if let Some(other) = other_drafts.into_iter().find(|d| *d != draft && self::known(*d).contains(&key)) {
        let select = if draft == Draft::Draft7 { "remove the draft-07 $schema to use 2020-12" } else { "use this draft's keywords" };
        return format!("`{key}` is a {} keyword, not a {} one (this schema's draft): {ignored}; {select}", draft_name(other), draft_name(draft));
    }
    match crate::host::options::closest(key, known) {
        Some(k) => format!("unknown keyword `{key}`; did you mean `{k}`? {ignored} {escape}"),
        None => format!("unknown keyword `{key}`: {ignored} {escape}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn unknown(schema: Value) -> Option<(String, String)> {
        first_unknown_keyword(&schema, Draft::Draft202012)
    }

    #[test]
    fn typos_are_found_at_their_path_with_the_keyword_meant() {
        let (at, why) = unknown(json!({"type": "object", "requried": ["a"]})).unwrap();
        assert_eq!(at, "/requried");
        assert!(why.starts_with("unknown keyword `requried`; did you mean `required`? JSON Schema ignores"), "{why}");
        assert_eq!(unknown(json!({"type": "object", "proprties": {}})).unwrap().1.split(';').next(), Some("unknown keyword `proprties`"));
        let (at, why) = unknown(json!({"properties": {"name": {"type": "string", "minLenght": 1}}})).unwrap();
        assert_eq!(at, "/properties/name/minLenght");
        assert!(why.contains("did you mean `minLength`?"), "{why}");
        let (at, _) = unknown(json!({"anyOf": [{}, {"items": {"maxItem": 1}}], "$defs": {"a": {"not": {"foo": 1}}}})).unwrap();
        assert_eq!(at, "/anyOf/1/items/maxItem");
    }

    #[test]
    fn additional_items_is_refused_in_2020_12_where_it_would_check_nothing() {
        let (at, why) = unknown(json!({"properties": {"t": {"prefixItems": [{"type": "integer"}], "additionalItems": false}}})).unwrap();
        assert_eq!(at, "/properties/t/additionalItems");
        assert!(why.contains("write `items` after `prefixItems`"), "{why}");
        let tuple = json!({"items": [{"type": "string"}], "additionalItems": false});
        assert_eq!(first_unknown_keyword(&tuple, Draft::Draft7), None);
        assert_eq!(first_unknown_keyword(&tuple, Draft::Draft201909), None);
    }

    #[test]
    fn names_data_and_annotations_are_not_keywords() {
        let schema = json!({
            "type": "object", "x-internal": {"anything": 1}, "$comment": "c", "examples": [{"requried": 1}],
            "properties": {"requried": {"const": {"proprties": 1}, "enum": [{"x": 1}], "default": {"y": 2}, "example": 3}},
            "discriminator": {"propertyName": "kind"}, "$defs": {"minLenght": {"type": "string"}},
        });
        assert_eq!(unknown(schema), None);
    }

    #[test]
    fn other_drafts_keywords_and_openapi_nullable_say_what_to_do() {
        let why = first_unknown_keyword(&json!({"unevaluatedProperties": false}), Draft::Draft7).unwrap().1;
        assert!(why.starts_with("`unevaluatedProperties` is a draft 2020-12 keyword, not a draft-07 one"), "{why}");
        let why = unknown(json!({"$recursiveRef": "#"})).unwrap().1;
        assert!(why.starts_with("`$recursiveRef` is a draft 2019-09 keyword"), "{why}");
        assert!(unknown(json!({"type": "string", "nullable": true})).unwrap().1.contains("type: ['string', 'null']"));
        assert_eq!(first_unknown_keyword(&json!({"prefixItems": [{}]}), Draft::Draft202012), None);
    }
}
