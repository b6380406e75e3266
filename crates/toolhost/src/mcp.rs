//! What a mounted MCP server's tools become here, as JSON in and out: the declaration
//! a listed tool is registered with, the value of a `tools/call` result, the error of an
//! `isError` one. The JS mount (`js/mcp-mount.mjs`) reads MCP the same way; the test
//! `tests/mcp_mount.rs` mounts one server with both and compares what they registered.
//!
//! With the `mcp` feature, [`mount`] connects these to a live server through `rmcp`.

use serde_json::{Map, Value};

use crate::declaration::{ToolDeclaration, ToolMetadata, MAX_TOOL_NAME_LEN};
use crate::error::{ErrorCategory, ToolError};

#[cfg(feature = "mcp")]
pub mod mount;
#[cfg(feature = "mcp")]
pub use mount::{mount_mcp, McpMount, MountChanges, MountOptions, Skipped};
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
}
