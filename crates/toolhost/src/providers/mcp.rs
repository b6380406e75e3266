//! MCP (Model Context Protocol) `Tool` objects for `tools/list`.

use serde_json::{json, Map, Value};

use crate::declaration::ToolDeclaration;

/// An MCP `Tool`: `{name, title?, description, inputSchema, outputSchema?,
/// annotations?}`.
///
/// `annotations` carries `title`, `readOnlyHint`, `destructiveHint`,
/// `idempotentHint` and `openWorldHint` from the metadata, each only when
/// set; it is omitted when none is set.
pub fn mcp_tool(tool: &ToolDeclaration) -> Value {
    let mut out = json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
    });
    let meta = &tool.metadata;
    if let Some(title) = &meta.title {
        out["title"] = json!(title);
    }
    if let Some(schema) = &tool.output_schema {
        out["outputSchema"] = schema.clone();
    }
    let mut annotations = Map::new();
    if let Some(title) = &meta.title {
        annotations.insert("title".into(), json!(title));
    }
    let hints = [
        ("readOnlyHint", meta.read_only),
        ("destructiveHint", meta.destructive),
        ("idempotentHint", meta.idempotent),
        ("openWorldHint", meta.open_world),
    ];
    for (key, hint) in hints {
        if let Some(hint) = hint {
            annotations.insert(key.into(), json!(hint));
        }
    }
    if !annotations.is_empty() {
        out["annotations"] = Value::Object(annotations);
    }
    out
}

/// [`mcp_tool`] for each declaration.
pub fn mcp_tools(tools: &[ToolDeclaration]) -> Vec<Value> {
    tools.iter().map(mcp_tool).collect()
}
