//! What a mounted MCP server's tools become here, as JSON in and out: the declaration
//! a listed tool is registered with, the value of a `tools/call` result, the error of an
//! `isError` one. The JS mount (`js/mcp-mount.mjs`) takes its declarations from
//! [`declaration_of`] too; it reads results and errors in JS, the same way, which
//! `tests/mcp_serve.rs` checks by mounting a Rust server from JS.
//!
//! The other way, what a served tool is listed as and what a call of it answers is
//! here too, as JS `createMcpServer` does it.
//!
//! With the `mcp` feature, [`mount`] and [`serve`] connect these to a live peer through `rmcp`.

use serde_json::{Map, Value};

use crate::declaration::{ToolDeclaration, ToolMetadata, MAX_TOOL_NAME_LEN};
use crate::error::{ErrorCategory, ToolError};
use crate::providers::{self, Provider, ToolReply};

#[cfg(feature = "mcp")]
pub mod mount;
#[cfg(feature = "mcp")]
pub use mount::{mount_mcp, mount_mcp_with, McpMount, MountChanges, MountOptions, Skipped};
#[cfg(feature = "mcp")]
pub mod serve;
#[cfg(feature = "mcp")]
pub use serve::{Approval, McpServer, ServeOptions};
/// The `rmcp` this crate mounts with: its transports are what [`mount_mcp`] takes.
#[cfg(feature = "mcp")]
pub use rmcp;

/// `_meta` keys a toolhost server (JS `serveMcp`, `createMcpServer`) adds, and a mount reads.
pub mod meta {
    /// On a result whose text is JSON of a non-object value (a number, an array, null).
    pub const JSON: &str = "toolhost/json";
    /// On a result whose text is not the value itself: the value.
    pub const VALUE: &str = "toolhost/value";
    /// On an `isError` result: the execution's error `{ category, code, message, retryable }`.
    pub const ERROR: &str = "toolhost/error";
    /// On a listed tool: metadata MCP has no field for (`category`, `tags`).
    pub const METADATA: &str = "toolhost/metadata";
    /// On a listed tool: the key order of a schema's root, where the SDK's parsing changed it.
    pub const KEY_ORDER: &str = "toolhost/keyOrder";
    /// On a `tools/call`: the calling execution's idempotency key.
    pub const IDEMPOTENCY_KEY: &str = "toolhost/idempotencyKey";
}

/// What a mount takes from its server at most, by default (as JS `MOUNT_DEFAULTS`).
pub mod defaults {
    pub const MAX_TOOLS: usize = 1000;
    pub const LIST_TIMEOUT_MS: u64 = 30_000;
    pub const CONNECT_TIMEOUT_MS: u64 = 10_000;
    pub const MAX_DESCRIPTION_CHARS: usize = 8192;
    pub const MAX_SCHEMA_CHARS: usize = 131_072;
    pub const MAX_SCHEMA_COST: u64 = 10_000;
}

/// A local name for remote tool `remote`: `prefix`, then the name with each character a
/// tool name may not have replaced by `_`.
pub fn local_name(prefix: &str, remote: &str) -> String {
    let mut name = String::with_capacity(prefix.len() + remote.len());
    name.push_str(prefix);
    // JS replaces per UTF-16 unit: a character outside the BMP becomes two `_`.
    for c in remote.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            name.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                name.push('_');
            }
        }
    }
    name
}

/// Whether `name` is a name a mounted tool may have here: 1 to 64 letters, digits, `_`, `-`.
pub fn is_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME_LEN && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `schema` with its root keys in `order` (keys it has that `order` lacks go last).
fn in_order(schema: &Value, order: Option<&Value>) -> Value {
    let (Some(Value::Array(order)), Value::Object(map)) = (order, schema) else {
        return schema.clone();
    };
    let mut out = Map::new();
    for key in order.iter().filter_map(Value::as_str) {
        if let Some(v) = map.get(key) {
            out.entry(key).or_insert_with(|| v.clone());
        }
    }
    for (k, v) in map {
        out.entry(k.as_str()).or_insert_with(|| v.clone());
    }
    Value::Object(out)
}

/// The declaration a listed MCP tool (its JSON, as `tools/list` gave it) is registered
/// with under `name`, from server `server`: its title, hints and toolhost metadata as
/// metadata, and where it lives under `metadata.custom.mcp` (`{ server, tool }`).
pub fn declaration_of(tool: &Value, name: &str, server: &str) -> ToolDeclaration {
    let empty = Map::new();
    let fields = tool.as_object().unwrap_or(&empty);
    let remote = fields.get("name").and_then(Value::as_str).unwrap_or_default();
    let annotations = fields.get("annotations").and_then(Value::as_object).unwrap_or(&empty);
    let mut metadata = ToolMetadata::default();
    let title = match fields.get("title") {
        Some(t) if !t.is_null() => t.as_str(),
        _ => annotations.get("title").and_then(Value::as_str),
    };
    metadata.title = title.map(str::to_string);
    let hint = |key: &str| annotations.get(key).and_then(Value::as_bool);
    metadata.read_only = hint("readOnlyHint");
    metadata.destructive = hint("destructiveHint");
    metadata.idempotent = hint("idempotentHint");
    metadata.open_world = hint("openWorldHint");
    let tool_meta = fields.get("_meta").and_then(Value::as_object);
    if let Some(kept) = tool_meta.and_then(|m| m.get(meta::METADATA)).and_then(Value::as_object) {
        metadata.category = kept.get("category").and_then(Value::as_str).map(str::to_string);
        if let Some(Value::Array(tags)) = kept.get("tags") {
            metadata.tags = tags.iter().filter_map(Value::as_str).map(str::to_string).collect();
        }
    }
    let mut mcp = Map::new();
    mcp.insert("server".into(), server.into());
    mcp.insert("tool".into(), remote.into());
    let mut custom = Map::new();
    custom.insert("mcp".into(), Value::Object(mcp));
    metadata.extra.insert("custom".into(), Value::Object(custom));
    let description = match (fields.get("description").and_then(Value::as_str), title) {
        (Some(d), _) if !d.trim().is_empty() => d.to_string(),
        (_, Some(t)) => t.to_string(),
        _ => format!("The tool {remote} of MCP server {server}"),
    };
    let order = tool_meta.and_then(|m| m.get(meta::KEY_ORDER));
    let input = fields.get("inputSchema").cloned().unwrap_or(Value::Null);
    let mut declaration = ToolDeclaration::new(name, description, in_order(&input, order.and_then(|o| o.get("inputSchema"))));
    declaration.output_schema = fields.get("outputSchema").filter(|s| !s.is_null()).map(|s| in_order(s, order.and_then(|o| o.get("outputSchema"))));
    declaration.metadata = metadata;
    declaration
}

/// The value of a successful `tools/call` result (its JSON): `structuredContent`, else
/// the value a toolhost server kept in `_meta`, else one text's text (parsed when the
/// server marked it JSON), else `{ content }`; `null` for no content.
pub fn value_of_result(result: &Value) -> Value {
    if let Some(v) = result.get("structuredContent").filter(|v| !v.is_null()) {
        return v.clone();
    }
    let result_meta = result.get("_meta").and_then(Value::as_object);
    if let Some(v) = result_meta.and_then(|m| m.get(meta::VALUE)) {
        return v.clone();
    }
    let content = match result.get("content") {
        Some(Value::Array(c)) if !c.is_empty() => c,
        _ => return Value::Null,
    };
    if let [only] = content.as_slice() {
        if only.get("type").and_then(Value::as_str) == Some("text") {
            let text = only.get("text").and_then(Value::as_str).unwrap_or_default();
            if result_meta.and_then(|m| m.get(meta::JSON)) == Some(&Value::Bool(true)) {
                if let Ok(v) = serde_json::from_str(text) {
                    return v;
                }
            }
            return Value::String(text.to_string());
        }
    }
    let mut out = Map::new();
    out.insert("content".into(), Value::Array(content.clone()));
    Value::Object(out)
}

/// The error an `isError` result of remote tool `remote` fails its attempt with: category
/// `execution`, not retried, code `MCP_TOOL_ERROR` (or the code a toolhost server sent),
/// the result's text as the message. The result (JSON) is the error's `cause`.
pub fn remote_error(result: &Value, remote: &str) -> ToolError {
    let texts: Vec<&str> = match result.get("content") {
        Some(Value::Array(c)) => c.iter().filter(|c| c.get("type").and_then(Value::as_str) == Some("text")).filter_map(|c| c.get("text").and_then(Value::as_str)).collect(),
        _ => Vec::new(),
    };
    let text = texts.join("\n");
    let mut message = if text.is_empty() { "the remote tool failed without a message".to_string() } else { text };
    let mut code = "MCP_TOOL_ERROR".to_string();
    let facts = result.get("_meta").and_then(|m| m.get(meta::ERROR)).and_then(Value::as_object);
    if let Some(facts) = facts {
        if let Some(m) = facts.get("message").and_then(Value::as_str) {
            // A toolhost server's message names its tool; the local engine names the local one.
            let failed = format!("tool '{remote}' failed: ");
            let named = format!("tool '{remote}' ");
            message = m.strip_prefix(failed.as_str()).or_else(|| m.strip_prefix(named.as_str())).unwrap_or(m).to_string();
        }
        if let Some(c) = facts.get("code").and_then(Value::as_str) {
            code = c.to_string();
        }
    }
    let mut error = ToolError::new(ErrorCategory::Execution, code, message);
    error.retryable = false;
    error.with_cause(std::sync::Arc::new(result.clone()))
}

/// The root keys a schema goes out with when the TypeScript SDK has parsed it: these
/// first. A listing that had them otherwise says so (`toolhost/keyOrder`).
const SDK_FIRST: [&str; 3] = ["type", "properties", "required"];

/// The root keys of `schema` when the SDK would reorder them.
fn key_order(schema: &Value) -> Option<Value> {
    let keys: Vec<&String> = schema.as_object()?.keys().collect();
    let first = SDK_FIRST.iter().filter(|k| keys.iter().any(|key| key == *k)).map(|k| k.to_string());
    let reordered: Vec<String> = first.chain(keys.iter().filter(|k| !SDK_FIRST.contains(&k.as_str())).map(|k| k.to_string())).collect();
    (reordered.iter().zip(&keys).any(|(a, b)| a != *b)).then(|| Value::Array(keys.into_iter().map(|k| Value::String(k.clone())).collect()))
}

fn has_boolean_property(schema: &Value) -> bool {
    schema.get("properties").and_then(Value::as_object).is_some_and(|p| p.values().any(Value::is_boolean))
}

/// `schema` with `type: "object"` at its root, and `true`/`false` property schemas as
/// `{}`/`{ "not": {} }`: the SDK's client refuses a whole listing otherwise.
fn object_rooted(schema: &Value) -> Value {
    let mut out = schema.clone();
    out["type"] = Value::String("object".into());
    if let Some(Value::Object(properties)) = out.get_mut("properties") {
        for s in properties.values_mut() {
            match s {
                Value::Bool(true) => *s = Value::Object(Map::new()),
                Value::Bool(false) => *s = serde_json::json!({ "not": {} }),
                _ => {}
            }
        }
    }
    out
}

/// A tool as a served `tools/list` lists it: the MCP format
/// ([`providers::mcp_tool`]) as MCP clients accept it (an `outputSchema` only when
/// its root is an object's; no boolean property schemas), with the metadata MCP has no
/// field for, and the root key order the SDK would change, in `_meta`.
pub fn listed_tool(declaration: &ToolDeclaration) -> Value {
    let mut out = providers::mcp_tool(declaration);
    if has_boolean_property(&out["inputSchema"]) {
        out["inputSchema"] = object_rooted(&out["inputSchema"]);
    }
    if let Some(output) = out.get("outputSchema").cloned() {
        let map = out.as_object_mut().expect("an MCP tool is an object");
        if output.get("type").and_then(Value::as_str) != Some("object") {
            map.remove("outputSchema");
        } else if has_boolean_property(&output) {
            map.insert("outputSchema".into(), object_rooted(&output));
        }
    }
    let mut tool_meta = Map::new();
    let m = &declaration.metadata;
    if m.category.is_some() || !m.tags.is_empty() {
        let mut kept = Map::new();
        if let Some(c) = &m.category {
            kept.insert("category".into(), c.clone().into());
        }
        if !m.tags.is_empty() {
            kept.insert("tags".into(), m.tags.clone().into());
        }
        tool_meta.insert(meta::METADATA.into(), Value::Object(kept));
    }
    let mut order = Map::new();
    for key in ["inputSchema", "outputSchema"] {
        if let Some(keys) = out.get(key).and_then(key_order) {
            order.insert(key.into(), keys);
        }
    }
    if !order.is_empty() {
        tool_meta.insert(meta::KEY_ORDER.into(), Value::Object(order));
    }
    if !tool_meta.is_empty() {
        out["_meta"] = Value::Object(tool_meta);
    }
    out
}

/// A successful call's `CallToolResult` (JSON) for its `value`: an object is
/// `structuredContent` and its JSON text, a string is text, other JSON is its text marked
/// as JSON. The text is what a model reads: within the tool's `max_output_chars` (the
/// note names `execution_id`); when that is not the value's own text, the value goes in
/// `_meta` for a mount.
pub fn success_result(value: &Value, tool: Option<&ToolDeclaration>, execution_id: &str) -> Value {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut result = serde_json::json!({ "content": [{ "type": "text", "text": text }] });
    match value {
        Value::String(_) => {}
        Value::Object(_) => result["structuredContent"] = value.clone(),
        _ => result["_meta"] = serde_json::json!({ meta::JSON: true }),
    }
    let mut reply = ToolReply::ok("", tool.map_or("", |t| t.name.as_str()), value.clone());
    reply.max_chars = tool.and_then(|t| t.metadata.max_output_chars).map(|n| n as usize);
    reply.execution_id = Some(execution_id.to_string());
    reply.structured = tool.is_some_and(|t| t.output_schema.is_some());
    let content = providers::format_replies(Provider::Mcp, &[reply]).swap_remove(0)["content"].take();
    let same = content.as_array().is_some_and(|c| c.len() == 1 && c[0]["type"] == "text" && c[0]["text"] == result["content"][0]["text"]);
    if !same && result.get("structuredContent").is_none() {
        result["_meta"] = serde_json::json!({ meta::VALUE: value });
    }
    result["content"] = content;
    result
}

/// A failed call's `CallToolResult` (JSON): `isError`, `text` (written for the model),
/// and the error as facts a mount reads back (`toolhost/error`).
pub fn error_result(text: &str, error: &ToolError) -> Value {
    let mut facts = serde_json::json!({
        "category": error.category.as_str(), "code": error.code, "message": error.message, "retryable": error.retryable,
    });
    if !error.validation_errors.is_empty() {
        facts["validationErrors"] = serde_json::to_value(&error.validation_errors).unwrap_or(Value::Null);
    }
    serde_json::json!({ "isError": true, "content": [{ "type": "text", "text": text }], "_meta": { meta::ERROR: facts } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_names_replace_what_a_name_may_not_have() {
        assert_eq!(local_name("fs_", "read.file"), "fs_read_file");
        assert_eq!(local_name("", "a😀b"), "a__b");
        assert!(is_tool_name("fs_read-file"));
        assert!(!is_tool_name(""));
        assert!(!is_tool_name(&"x".repeat(65)));
        assert!(!is_tool_name("a.b"));
    }

    #[test]
    fn a_declaration_keeps_title_hints_metadata_and_key_order() {
        let tool = json!({
            "name": "get", "annotations": { "title": "Get it", "readOnlyHint": true, "openWorldHint": false },
            "inputSchema": { "type": "object", "properties": {}, "additionalProperties": false },
            "_meta": { "toolhost/metadata": { "category": "io", "tags": ["a", 1, "b"] },
                       "toolhost/keyOrder": { "inputSchema": ["additionalProperties", "type"] } }
        });
        let d = declaration_of(&tool, "m_get", "srv");
        assert_eq!(d.name, "m_get");
        assert_eq!(d.description, "Get it");
        assert_eq!(d.metadata.title.as_deref(), Some("Get it"));
        assert_eq!((d.metadata.read_only, d.metadata.open_world, d.metadata.destructive), (Some(true), Some(false), None));
        assert_eq!(d.metadata.category.as_deref(), Some("io"));
        assert_eq!(d.metadata.tags, ["a", "b"]);
        assert_eq!(d.metadata.extra["custom"], json!({ "mcp": { "server": "srv", "tool": "get" } }));
        let keys: Vec<&String> = d.input_schema.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["additionalProperties", "type", "properties"]);
        let bare = declaration_of(&json!({ "name": "x", "description": "  ", "inputSchema": {} }), "x", "srv");
        assert_eq!(bare.description, "The tool x of MCP server srv");
    }

    #[test]
    fn result_values_and_remote_errors() {
        assert_eq!(value_of_result(&json!({ "content": [{ "type": "text", "text": "3" }], "structuredContent": { "sum": 3 } })), json!({ "sum": 3 }));
        assert_eq!(value_of_result(&json!({ "content": [{ "type": "text", "text": "[1,2]" }], "_meta": { "toolhost/json": true } })), json!([1, 2]));
        assert_eq!(value_of_result(&json!({ "content": [{ "type": "text", "text": "[1,2]" }] })), json!("[1,2]"));
        assert_eq!(value_of_result(&json!({ "content": [] })), Value::Null);
        let two = json!({ "content": [{ "type": "text", "text": "a" }, { "type": "image", "data": "", "mimeType": "image/png" }] });
        assert_eq!(value_of_result(&two), json!({ "content": two["content"] }));

        let e = remote_error(&json!({ "isError": true, "content": [{ "type": "text", "text": "disk full" }] }), "w");
        assert_eq!((e.category, e.code.as_str(), e.message.as_str(), e.retryable), (ErrorCategory::Execution, "MCP_TOOL_ERROR", "disk full", false));
        let sent = json!({ "isError": true, "content": [], "_meta": { "toolhost/error": { "code": "NOPE", "message": "tool 'w' failed: no" } } });
        let e = remote_error(&sent, "w");
        assert_eq!((e.code.as_str(), e.message.as_str()), ("NOPE", "no"));
        assert_eq!(e.cause.unwrap().downcast_ref::<Value>(), Some(&sent));
    }
    #[test]
    fn a_listed_tool_is_one_mcp_clients_accept() {
        let mut d = ToolDeclaration::new("t", "d", json!({ "properties": { "any": true, "none": false }, "type": "object" }));
        d.output_schema = Some(json!({ "type": "array" }));
        let listed = listed_tool(&d);
        assert_eq!(listed["inputSchema"]["properties"], json!({ "any": {}, "none": { "not": {} } }));
        assert!(listed.get("outputSchema").is_none(), "an output that is not an object is not declared");
        // The SDK would put `type` first: the order goes along.
        assert_eq!(listed["_meta"]["toolhost/keyOrder"]["inputSchema"], json!(["properties", "type"]));
        let plain = listed_tool(&ToolDeclaration::new("p", "d", json!({ "type": "object", "properties": {} })));
        assert!(plain.get("_meta").is_none());
    }
}
