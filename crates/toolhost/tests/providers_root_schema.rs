//! Root schemas a provider cannot take as a tool's parameters are refused at export,
//! naming the tool, while registration and the formats that take them (MCP, AG-UI) keep
//! them.

use serde_json::{json, Value};
use toolhost::providers::{
    ag_ui_tools, anthropic_tools, gemini_tools, mcp_tools, openai_chat_tools, openai_responses_tools, ProviderError,
};

mod common;

/// `lookup` takes an `id` or an `email`, with the alternatives at the root.
fn by_id_or_email(keyword: &str) -> toolhost::ToolDeclaration {
    let branches = json!([
        {"properties": {"id": {"type": "string"}}, "required": ["id"]},
        {"properties": {"email": {"type": "string"}}, "required": ["email"]}
    ]);
    common::tool("lookup", "By id or by email", json!({"type": "object", keyword: branches}))
}

/// Every export that refuses `tool`, with where it says the problem is and why.
fn exports(tool: &toolhost::ToolDeclaration) -> Vec<(&'static str, Result<Value, ProviderError>)> {
    let one = std::slice::from_ref(tool);
    vec![
        ("openai", openai_chat_tools(one, false).map(Value::Array)),
        ("openai strict", openai_chat_tools(one, true).map(Value::Array)),
        ("responses", openai_responses_tools(one, false).map(Value::Array)),
        ("responses strict", openai_responses_tools(one, true).map(Value::Array)),
        ("anthropic", anthropic_tools(one).map(Value::Array)),
        ("gemini", gemini_tools(one)),
    ]
}

#[test]
fn root_any_of_one_of_and_all_of_are_refused_by_the_providers_that_reject_them() {
    for keyword in ["anyOf", "oneOf", "allOf"] {
        let tool = by_id_or_email(keyword);
        for (export, out) in exports(&tool) {
            if (export, keyword) == ("gemini", "allOf") {
                // Gemini gets the members merged: one object with both properties.
                let parameters = &out.unwrap()["functionDeclarations"][0]["parameters"];
                assert_eq!(parameters["properties"], json!({"id": {"type": "STRING"}, "email": {"type": "STRING"}}));
                continue;
            }
            match out {
                Err(ProviderError::UnsupportedSchema { tool, schema_path, reason, .. }) => {
                    assert_eq!((tool.as_str(), schema_path.as_str()), ("lookup", format!("/{keyword}").as_str()), "{export}");
                    assert!(reason.contains(&format!("`{keyword}`")) && reason.contains("top level"), "{export}: {reason}");
                }
                other => panic!("{export} took a root {keyword}: {other:?}"),
            }
        }
        // MCP and AG-UI take any JSON Schema.
        assert_eq!(mcp_tools(std::slice::from_ref(&tool))[0]["inputSchema"], tool.input_schema);
        assert_eq!(ag_ui_tools(std::slice::from_ref(&tool))[0]["parameters"], tool.input_schema);
    }
}

#[test]
fn gemini_refuses_a_root_map_rather_than_dropping_its_parameters() {
    let set_env = common::tool(
        "set_env",
        "Sets environment variables",
        json!({"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1}),
    );
    let err = gemini_tools(std::slice::from_ref(&set_env)).unwrap_err();
    assert!(
        err.to_string().starts_with("tool `set_env`: input schema at `#/additionalProperties` cannot be converted for Gemini: an object without named `properties`"),
        "{err}"
    );
    // OpenAI without strict mode and Anthropic take a map.
    assert!(openai_chat_tools(std::slice::from_ref(&set_env), false).is_ok());
    assert!(anthropic_tools(std::slice::from_ref(&set_env)).is_ok());
    // A tool that takes no arguments is still declared without `parameters`.
    for schema in [json!({"type": "object"}), json!({"type": "object", "properties": {}, "additionalProperties": false})] {
        let ping = common::tool("ping", "Pings", schema);
        assert_eq!(gemini_tools(&[ping]).unwrap(), json!({"functionDeclarations": [{"name": "ping", "description": "Pings"}]}));
    }
}
