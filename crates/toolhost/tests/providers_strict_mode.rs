//! OpenAI strict-mode schema rewriting and refusals.

use toolhost::providers::{
    make_strict_schema, openai_chat_tools, openai_responses_tools, ProviderError,
};
use serde_json::json;

mod common;

#[test]
fn refs_defs_and_any_of_are_rewritten_recursively() {
    let schema = json!({
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["street"]
            }
        },
        "properties": {
            "contact": {
                "anyOf": [
                    {"type": "object", "properties": {"email": {"type": "string"}}},
                    {"type": "object", "properties": {"phone": {"type": "string"}}, "required": ["phone"]}
                ]
            },
            "home": {"$ref": "#/$defs/address", "description": "Home address"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"const": "fast"}
        },
        "required": ["tags"]
    });
    let strict = make_strict_schema("save_contact", &schema).unwrap();
    assert_eq!(
        strict,
        json!({
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "zip": {"type": ["string", "null"]}},
                    "required": ["street", "zip"],
                    "additionalProperties": false
                }
            },
            "properties": {
                "home": {"anyOf": [{"$ref": "#/$defs/address", "description": "Home address"}, {"type": "null"}]},
                "contact": {
                    "anyOf": [
                        {"type": "object", "properties": {"email": {"type": ["string", "null"]}},
                         "required": ["email"], "additionalProperties": false},
                        {"type": "object", "properties": {"phone": {"type": "string"}},
                         "required": ["phone"], "additionalProperties": false},
                        {"type": "null"}
                    ]
                },
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"anyOf": [{"const": "fast"}, {"type": "null"}]}
            },
            "required": ["tags", "contact", "home", "mode"],
            "additionalProperties": false
        })
    );
}

#[test]
fn already_nullable_and_required_fields_are_left_alone() {
    let schema = json!({
        "type": "object",
        "properties": {"note": {"type": ["string", "null"]}, "count": {"type": "integer"}},
        "required": ["count"],
        "additionalProperties": false
    });
    assert_eq!(
        make_strict_schema("t", &schema).unwrap(),
        json!({
            "type": "object",
            "properties": {"note": {"type": ["string", "null"]}, "count": {"type": "integer"}},
            "required": ["count", "note"],
            "additionalProperties": false
        })
    );
}

#[test]
fn root_object_without_properties_is_a_tool_without_arguments() {
    assert_eq!(
        make_strict_schema("ping", &json!({"type": "object"})).unwrap(),
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

fn refusal(schema: serde_json::Value) -> ProviderError {
    make_strict_schema("search_docs", &schema).unwrap_err()
}

#[test]
fn explicit_additional_properties_schema_is_refused_with_tool_and_path() {
    let err = refusal(json!({
        "type": "object",
        "properties": {
            "filters": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}
        }
    }));
    assert_eq!(
        err,
        ProviderError::UnsupportedSchema {
            target: "OpenAI strict mode",
            tool: "search_docs".into(),
            schema_path: "/properties/filters".into(),
            reason: "`additionalProperties` is a schema (a free-form map); strict mode requires `additionalProperties: false` and fixed `properties`".into(),
        }
    );
    assert!(err.to_string().starts_with("tool `search_docs`: input schema at `#/properties/filters` cannot be converted for OpenAI strict mode"));
}

#[test]
fn other_unrepresentable_schemas_are_refused() {
    let cases = [
        (
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
            "",
            "additionalProperties: true",
        ),
        (
            json!({"type": "object", "properties": {"meta": {"type": "object", "patternProperties": {"^x-": {}}}}}),
            "/properties/meta",
            "`patternProperties` is not supported",
        ),
        (
            json!({"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}),
            "/properties/rows/items",
            "free-form map",
        ),
        (
            json!({"type": "object", "properties": {"x": {"allOf": [{"type": "string"}]}}}),
            "/properties/x",
            "`allOf`",
        ),
        (
            json!({"type": "string"}),
            "",
            "root schema must be an object",
        ),
    ];
    for (schema, path, reason) in cases {
        match refusal(schema.clone()) {
            ProviderError::UnsupportedSchema {
                schema_path,
                reason: why,
                tool,
                ..
            } => {
                assert_eq!(tool, "search_docs");
                assert_eq!(schema_path, path, "{schema}");
                assert!(why.contains(reason), "{why} should mention {reason}");
            }
            other => panic!("unexpected error {other:?}"),
        }
    }
}

#[test]
fn refusals_propagate_from_declaration_builders() {
    let bad = common::tool(
        "kv_put",
        "Store values.",
        json!({
            "type": "object", "properties": {"values": {"type": "object", "additionalProperties": {"type": "string"}}}
        }),
    );
    let one = std::slice::from_ref(&bad);
    for err in [
        openai_chat_tools(one, true).unwrap_err(),
        openai_responses_tools(one, true).unwrap_err(),
    ] {
        assert!(
            err.to_string()
                .contains("tool `kv_put`: input schema at `#/properties/values`"),
            "{err}"
        );
    }
    // Without strict mode the same schema is fine.
    assert!(openai_chat_tools(one, false).is_ok());
}

/// Each call is valid under the strict schema toolhost exports for its tool; with the
/// nulls strict mode made the model send dropped, it is valid under the original one.
#[test]
fn strict_mode_nulls_are_dropped_through_refs_unions_and_untyped_values() {
    use toolhost::providers::drop_optional_nulls;
    use toolhost::schema::CompiledSchema;
    let addr = json!({"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string"}}, "required": ["street"]});
    let cases = [
        (
            json!({"type": "object", "properties": {"addr": {"$ref": "#/$defs/Addr"}}, "required": ["addr"], "$defs": {"Addr": addr}}),
            json!({"addr": {"street": "Main", "zip": null}}),
            json!({"addr": {"street": "Main"}}),
        ),
        (
            json!({"type": "object", "properties": {"target": {"anyOf": [
                {"type": "object", "properties": {"id": {"type": "string"}, "note": {"type": "string"}}, "required": ["id"]},
                {"type": "string"}
            ]}}, "required": ["target"]}),
            json!({"target": {"id": "x", "note": null}}),
            json!({"target": {"id": "x"}}),
        ),
        (
            json!({"type": "object", "properties": {"pay": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "card"}, "last4": {"type": "string"}}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "iban"}, "iban": {"type": "string"}}, "required": ["kind"]}
            ]}}, "required": ["pay"]}),
            json!({"pay": {"kind": "iban", "iban": null}}),
            json!({"pay": {"kind": "iban"}}),
        ),
        (
            json!({"type": "object", "properties": {"addr": {"$ref": "#/$defs/Addr"}}, "$defs": {"Addr": addr}}),
            json!({"addr": null}),
            json!({}),
        ),
        (json!({"type": "object", "properties": {"mode": {"const": "fast"}}}), json!({"mode": null}), json!({})),
        (json!({"type": "object", "properties": {"mode": {"enum": ["a", "b"]}}}), json!({"mode": null}), json!({})),
        // What allows null keeps it.
        (json!({"type": "object", "properties": {"mode": {"enum": ["a", null]}}}), json!({"mode": null}), json!({"mode": null})),
        (json!({"type": "object", "properties": {"any": {"description": "anything"}}}), json!({"any": null}), json!({"any": null})),
    ];
    for (schema, mut args, dropped) in cases {
        let strict = make_strict_schema("t", &schema).unwrap();
        assert!(CompiledSchema::compile("t", &strict).unwrap().is_valid(&args), "{args} under {strict}");
        drop_optional_nulls(&schema, &mut args);
        assert_eq!(args, dropped, "{schema}");
        assert!(CompiledSchema::compile("t", &schema).unwrap().is_valid(&args), "{args} under {schema}");
    }
}

/// OpenAI answers 400 to `oneOf` ("'oneOf' is not permitted") and to a `format` it does
/// not support ("'uri' is not a valid format") in a strict tool.
#[test]
fn one_of_becomes_any_of_and_unsupported_formats_are_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "method": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "card"}, "last4": {"type": "string"}}, "required": ["kind", "last4"]},
                {"type": "object", "properties": {"kind": {"const": "iban"}, "iban": {"type": "string"}}, "required": ["kind", "iban"]}
            ]},
            "url": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"},
            "owner": {"type": "string", "format": "email"}
        },
        "required": ["method", "url", "when", "owner"]
    });
    let strict = make_strict_schema("pay", &schema).unwrap();
    let props = &strict["properties"];
    assert!(props["method"].get("oneOf").is_none(), "{strict}");
    assert_eq!(props["method"]["anyOf"][1]["properties"]["kind"], json!({"const": "iban"}));
    assert_eq!(props["url"], json!({"type": "string"}));
    assert_eq!(props["when"], json!({"type": "string", "format": "date-time"}));
    assert_eq!(props["owner"], json!({"type": "string", "format": "email"}));
    // An optional `oneOf` gets its null branch beside the others.
    let optional = json!({"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}});
    assert_eq!(
        make_strict_schema("t", &optional).unwrap()["properties"]["v"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
    // One schema cannot hold both as `anyOf`.
    let both = json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}], "oneOf": [{"minLength": 1}]}}});
    assert!(refusal(both).to_string().contains("`oneOf` beside `anyOf`"));
}
