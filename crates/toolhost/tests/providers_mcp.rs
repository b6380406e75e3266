//! MCP tool listing.

mod common;

use toolhost::providers::{mcp_tool, mcp_tools};
use serde_json::json;

#[test]
fn metadata_becomes_title_and_annotations() {
    assert_eq!(
        mcp_tool(&common::get_weather()),
        json!({
            "name": "get_weather",
            "title": "Weather",
            "description": "Get the current weather for a city.",
            "inputSchema": common::get_weather().input_schema,
            "outputSchema": common::get_weather().output_schema.unwrap(),
            "annotations": {"title": "Weather", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": true}
        })
    );
}

#[test]
fn absent_hints_and_schemas_are_omitted() {
    let mut tool = common::create_event();
    assert_eq!(
        mcp_tools(std::slice::from_ref(&tool)),
        vec![
            json!({"name": "create_event", "description": "Create a calendar event.", "inputSchema": tool.input_schema})
        ]
    );
    tool.metadata.destructive = Some(false);
    assert_eq!(
        mcp_tool(&tool)["annotations"],
        json!({"destructiveHint": false})
    );
}
