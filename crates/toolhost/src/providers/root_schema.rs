//! What the function-calling APIs take at the root of a tool's input schema.
//!
//! OpenAI (strict or not) and Anthropic answer 400 to a tool whose parameters have
//! `anyOf`, `oneOf` or `allOf` at the top level ("input_schema does not support oneOf,
//! allOf, or anyOf at the top level"), although the schema is valid JSON Schema and MCP
//! takes it. The export refuses such a tool by name instead, before a request is sent.

use serde_json::Value;

use super::ProviderError;

/// Applicators the providers refuse at the root of a tool's parameters.
const ROOT_APPLICATORS: &[&str] = &["anyOf", "oneOf", "allOf"];

/// Refuses `schema`, the input schema of `tool`, for `target` when its root has
/// `anyOf`, `oneOf` or `allOf`.
pub(crate) fn refuse_root_applicators(target: &'static str, tool: &str, schema: &Value) -> Result<(), ProviderError> {
    let Some(keyword) = ROOT_APPLICATORS.iter().find(|k| schema.get(**k).is_some()) else { return Ok(()) };
    Err(ProviderError::UnsupportedSchema {
        target,
        tool: tool.to_string(),
        schema_path: format!("/{keyword}"),
        reason: format!(
            "{target} does not take `{keyword}` at the top level of a tool's parameters; make the root one object \
             whose properties cover every alternative (optional where they differ), or put the alternatives under a property"
        ),
    })
}
