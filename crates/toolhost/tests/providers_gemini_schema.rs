//! Gemini schema dialect: `$ref` inlining, unions, recursion errors, reverse conversion.

mod common;

use toolhost::providers::{
    gemini_schema_to_json_schema, gemini_tools, json_schema_to_gemini_schema, ProviderError,
};
use serde_json::json;

#[test]
fn definitions_refs_all_of_and_multi_type_unions_convert() {
    let schema = json!({
        "type": "object",
        "definitions": {"base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
        "properties": {
            "item": {"allOf": [{"$ref": "#/definitions/base"}, {"properties": {"size": {"type": "number"}}, "required": ["size"]}]},
            "value": {"type": ["string", "number"], "description": "Text or number"}
        }
    });
    assert_eq!(
        json_schema_to_gemini_schema("t", &schema).unwrap(),
        json!({
            "type": "OBJECT",
            "properties": {
                "item": {
                    "type": "OBJECT",
                    "properties": {"id": {"type": "STRING"}, "size": {"type": "NUMBER"}},
                    "required": ["id", "size"]
                },
                "value": {"description": "Text or number", "anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}
            }
        })
    );
}

#[test]
fn recursive_and_dangling_refs_are_errors() {
    let tree = common::tool(
        "save_tree",
        "Save a tree.",
        json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}
        }),
    );
    assert_eq!(
        gemini_tools(&[tree]).unwrap_err(),
        ProviderError::UnsupportedSchema {
            target: "Gemini",
            tool: "save_tree".into(),
            schema_path: "/properties/root/properties/children/items".into(),
            reason: "`$ref` \"#/$defs/node\" is recursive; Gemini schemas cannot express recursion"
                .into(),
        }
    );
    let dangling = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}});
    let err = json_schema_to_gemini_schema("t", &dangling).unwrap_err();
    assert!(
        err.to_string()
            .contains("`$ref` \"#/$defs/missing\" points at nothing"),
        "{err}"
    );
    let remote =
        json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}});
    assert!(json_schema_to_gemini_schema("t", &remote)
        .unwrap_err()
        .to_string()
        .contains("not a local reference"));
}

#[test]
fn gemini_schema_converts_back_to_json_schema() {
    let gemini = json!({
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING", "description": "City name"},
            "days": {"type": "INTEGER", "nullable": true},
            "unit": {"type": "STRING", "format": "enum", "enum": ["C", "F"], "nullable": true},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}},
            "either": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}], "nullable": true}
        },
        "required": ["city"],
        "propertyOrdering": ["city", "days", "unit", "tags", "either"]
    });
    assert_eq!(
        gemini_schema_to_json_schema(&gemini),
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": ["integer", "null"]},
                "unit": {"type": ["string", "null"], "format": "enum", "enum": ["C", "F", null]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "either": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}]}
            },
            "required": ["city"],
            "propertyOrdering": ["city", "days", "unit", "tags", "either"]
        })
    );
}

/// Levels that each use the next level twice: `2^levels` copies once inlined.
fn doubling(levels: usize) -> serde_json::Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(format!("d{i}"), json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}));
    }
    defs.insert(format!("d{levels}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs})
}

#[test]
fn shared_refs_that_inline_to_too_many_subschemas_are_an_error_not_a_blowup() {
    // 2 KB of schema that used to take 18 s and 4.7 GB of memory at 20 levels.
    let err = json_schema_to_gemini_schema("tree", &doubling(20)).unwrap_err();
    assert!(err.to_string().contains("more than 10000 subschemas"), "{err}");
    assert!(err.to_string().contains("tree"), "{err}");
    // Sharing within the limit still inlines: 2^8 leaves.
    let ok = json_schema_to_gemini_schema("tree", &doubling(8)).unwrap();
    let mut leaf = &ok["properties"]["root"];
    for _ in 0..8 {
        leaf = &leaf["properties"]["b"];
    }
    assert_eq!(leaf, &json!({"type": "STRING"}));
}

/// Gemini answers 400 to a `format` it does not know for the type and to an `enum` on a
/// type other than `STRING`; they are dropped (calls are validated against the original).
#[test]
fn formats_and_enums_gemini_refuses_are_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri"},
            "owner": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "format": "int64"},
            "ratio": {"type": "number", "format": "percent"},
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "mixed": {"enum": ["a", 1]},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "flag": {"type": "boolean", "format": "yes-no"}
        }
    });
    assert_eq!(
        json_schema_to_gemini_schema("t", &schema).unwrap()["properties"],
        json!({
            "url": {"type": "STRING"},
            "owner": {"type": "STRING"},
            "when": {"type": "STRING", "format": "date-time"},
            "count": {"type": "INTEGER", "format": "int64"},
            "ratio": {"type": "NUMBER"},
            "level": {"type": "INTEGER"},
            "mixed": {},
            "unit": {"type": "STRING", "enum": ["c", "f"]},
            "flag": {"type": "BOOLEAN"}
        })
    );
}
