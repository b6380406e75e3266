//! MCP (Model Context Protocol): `Tool` objects for `tools/list`, `tools/call`
//! requests in, `CallToolResult`s out.

use serde_json::{json, Map, Value};

use super::model_output::{mcp_content, ModelOutput};
use super::payload::str_field;
use super::shape::wrong_shape;
use super::{Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::ToolDeclaration;

/// An MCP `Tool`: `{name, title?, description, inputSchema, outputSchema?,
/// annotations?}`.
///
/// `annotations` carries `title`, `readOnlyHint`, `destructiveHint`,
/// `idempotentHint` and `openWorldHint` from the metadata, each only when
/// set (the hints also from `effect`); it is omitted when none is set.
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
    // `effect` maps onto the hints when they are not set themselves: `read` is
    // readOnlyHint, `idempotent` idempotentHint (a mount reads them back the same way).
    use crate::journal::Effect;
    let hints = [
        ("readOnlyHint", meta.read_only.or(meta.effect.filter(|e| *e == Effect::Read).map(|_| true))),
        ("destructiveHint", meta.destructive),
        ("idempotentHint", meta.idempotent.or(meta.effect.filter(|e| *e == Effect::Idempotent).map(|_| true))),
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

/// The shapes [`parse_tool_calls`] reads, for its refusals.
const EXPECTED: &str = "an MCP tools/call request ({ method: 'tools/call', params: { name, arguments } }), its params ({ name, arguments }), or an array of either";

/// Keys other formats' calls have and MCP's never do (a Gemini call's `args`, an
/// Anthropic block's `input`): such an object is not read as a call with no arguments.
const FOREIGN_KEYS: &[&str] = &["type", "args", "input", "function", "call_id", "toolCallId"];

/// Tool calls in MCP's own shape: a `tools/call` request (`{ method, params: { name,
/// arguments }, id }`), its `params` alone (`{ name, arguments }`), or an array of
/// either. A call without a JSON-RPC id gets `mcp_<n>` (its position). Another method's
/// request, or another format's call, is refused, naming what it is.
pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let items: Vec<&Value> = match payload {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let path = if payload.is_array() { format!("/{i}") } else { String::new() };
            let shown = if payload.is_array() { item } else { payload };
            let (params, params_path) = match (item.get("method"), item.get("params")) {
                (Some(m), _) if m != "tools/call" => return Err(wrong_shape(Provider::Mcp, path, EXPECTED, shown)),
                (_, Some(p)) if p.is_object() => (p, format!("{path}/params")),
                (Some(_), _) | (_, Some(_)) => return Err(wrong_shape(Provider::Mcp, path, EXPECTED, shown)),
                (None, None) => (item, path.clone()),
            };
            if !params.get("name").is_some_and(Value::is_string) || FOREIGN_KEYS.iter().any(|k| params.get(*k).is_some()) {
                return Err(wrong_shape(Provider::Mcp, path, EXPECTED, shown));
            }
            let name = str_field(Provider::Mcp, params, &params_path, "name")?.to_string();
            let id = match item.get("id") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => format!("mcp_{i}"),
            };
            let (arguments, arguments_at) = match params.get("arguments") {
                None | Some(Value::Null) => (ToolCallArguments::Parsed(Value::Object(Map::new())), None),
                Some(Value::String(text)) => (ToolCallArguments::from_json_text(text), None),
                Some(v) => (ToolCallArguments::Parsed(v.clone()), Some(format!("{params_path}/arguments"))),
            };
            Ok(ToolCall { id, name, arguments, arguments_at })
        })
        .collect()
}

/// One MCP `CallToolResult` per reply: `{ content, structuredContent?, isError }`. The
/// content is the model-facing text (or `toModelOutput`'s parts), within the budget; a
/// tool that declares an output schema also gets its result as `structuredContent`.
pub(super) fn format_replies(replies: &[ToolReply]) -> Vec<Value> {
    replies
        .iter()
        .map(|r| {
            let content = match (&r.outcome, &r.shown) {
                (Ok(_), Some(ModelOutput::Parts(parts))) => Value::Array(mcp_content(parts, |t| r.budget(t))),
                _ => json!([{ "type": "text", "text": r.content_text() }]),
            };
            let mut result = json!({ "content": content, "isError": r.is_error() });
            if let (Ok(value @ Value::Object(_)), true) = (&r.outcome, r.structured) {
                result["structuredContent"] = value.clone();
            }
            result
        })
        .collect()
}
