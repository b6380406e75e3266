//! Google Gemini: `functionDeclarations`, `functionCall` parts and
//! `functionResponse` parts.
//!
//! Accepted call payloads: a `GenerateContentResponse` `{candidates: [...]}` of one
//! candidate (several, from `candidateCount`, are alternative answers, and are
//! refused; a blocked prompt's, with `promptFeedback.blockReason` and no candidates,
//! holds no calls), a `Candidate` `{content}`, a `Content`
//! `{parts}`, a single `Part` `{functionCall}` or `FunctionCall` `{name, args}`,
//! or an array of `FunctionCall`s or parts (parts without `functionCall`
//! are skipped; an object with a `type`, which Gemini's never have, or another format's
//! payload is refused, naming what it is). Calls without an `id` get `gemini-call-<n>`, `n` counting
//! calls from 0 in order of appearance, so the same payload always yields
//! the same ids.

use serde_json::{json, Map, Value};

use super::payload::{given, kind, str_field, structured_args};
use super::shape::{recognise, wrong_shape};
use super::{gemini_schema_to_json_schema, json_schema_to_gemini_schema};
use super::{Provider, ProviderError, ToolCall, ToolCallArguments, ToolReply};
use crate::declaration::{ToolDeclaration, ToolMetadata};

const P: Provider = Provider::Gemini;

/// Prefix of the ids generated for Gemini calls that came without one.
/// Replies to such calls are sent without an `id`.
pub const GENERATED_ID_PREFIX: &str = "gemini-call-";

/// A Gemini `Tool`: `{functionDeclarations: [{name, description, parameters}]}`,
/// schemas converted by [`json_schema_to_gemini_schema`].
///
/// `parameters` is omitted for a tool that takes no arguments (an object schema with
/// no properties that accepts `{}`): Gemini rejects an `OBJECT` schema with empty
/// `properties`.
///
/// # Errors
/// [`ProviderError::UnsupportedSchema`] for a schema Gemini cannot express, and for
/// one whose root Gemini cannot take as a tool's parameters: alternatives (`anyOf` /
/// `oneOf`) at the root, or an object without named properties that still takes
/// arguments (a free-form map), which without `parameters` would read as a tool
/// that takes none.
pub fn gemini_tools(tools: &[ToolDeclaration]) -> Result<Value, ProviderError> {
    let mut declarations = Vec::with_capacity(tools.len());
    for tool in tools {
        let mut declaration = json!({"name": tool.name, "description": tool.description});
        if let Some(parameters) = parameters(tool)? {
            declaration["parameters"] = parameters;
        }
        declarations.push(declaration);
    }
    Ok(json!({ "functionDeclarations": declarations }))
}

/// A tool's `parameters`: its input schema in Gemini's dialect, or none for a tool
/// that takes no arguments.
fn parameters(tool: &ToolDeclaration) -> Result<Option<Value>, ProviderError> {
    let schema = &tool.input_schema;
    let refuse = |path: String, reason: String| ProviderError::UnsupportedSchema {
        target: "Gemini",
        tool: tool.name.clone(),
        schema_path: path,
        reason,
    };
    let parameters = json_schema_to_gemini_schema(&tool.name, schema)?;
    if parameters.get("anyOf").is_some() {
        let at = ["anyOf", "oneOf"].into_iter().find(|k| schema.get(k).is_some()).map_or(String::new(), |k| format!("/{k}"));
        return Err(refuse(at, "Gemini does not take alternatives (`anyOf` / `oneOf`) at the top level of a tool's parameters; make the root one object whose properties cover every alternative (optional where they differ), or put the alternatives under a property".into()));
    }
    let no_properties = parameters.get("properties").and_then(Value::as_object).is_none_or(Map::is_empty);
    if parameters.get("type") != Some(&json!("OBJECT")) || !no_properties {
        return Ok(Some(parameters));
    }
    // No named properties: fine for a tool without arguments, not for a map.
    let takes_keys = |k: &&&str| match schema.get(**k) {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n > 0.0),
        Some(Value::Array(names)) => !names.is_empty(),
        Some(_) => true,
    };
    match ["additionalProperties", "patternProperties", "propertyNames", "minProperties", "required"].iter().find(takes_keys) {
        None => Ok(None),
        Some(k) => Err(refuse(
            format!("/{k}"),
            format!("an object without named `properties` that takes arguments (`{k}`, a free-form map) has no Gemini form: Gemini takes a tool's parameters only as an OBJECT with `properties`, and leaving `parameters` out would tell the model the tool takes none"),
        )),
    }
}

/// Reads a Gemini `FunctionDeclaration` `{name, description?, parameters?}`
/// into a [`ToolDeclaration`]. `parameters` (Gemini `Schema`) is converted by
/// [`gemini_schema_to_json_schema`]; `parametersJsonSchema` is taken as is;
/// with neither, the tool takes no arguments. `response` /
/// `responseJsonSchema` likewise become the output schema.
pub fn gemini_function_declaration_to_tool(
    declaration: &Value,
) -> Result<ToolDeclaration, ProviderError> {
    let name = str_field(P, declaration, "", "name")?;
    let description = match declaration.get("description") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(ProviderError::payload(
                P,
                "/description",
                format!("expected a string, found {}", kind(other)),
            ));
        }
    };
    let schema = |gemini: &str, json_schema: &str| {
        declaration
            .get(json_schema)
            .cloned()
            .or_else(|| declaration.get(gemini).map(gemini_schema_to_json_schema))
    };
    Ok(ToolDeclaration {
        name: name.to_string(),
        description: description.to_string(),
        input_schema: schema("parameters", "parametersJsonSchema")
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
        output_schema: schema("response", "responseJsonSchema"),
        metadata: ToolMetadata::default(),
    })
}

/// The shapes [`parse_tool_calls`] reads, for its refusals.
const EXPECTED: &str = "a Gemini GenerateContentResponse ({ candidates }), Candidate ({ content }), Content ({ parts }), Part ({ functionCall }) or FunctionCall ({ name, args }), or an array of them";

/// Keys of a Part or Candidate without a function call.
const NO_CALL_KEYS: &[&str] = &[
    "text", "thought", "thoughtSignature", "inlineData", "fileData", "finishReason", "functionResponse",
    "executableCode", "codeExecutionResult", "videoMetadata",
];

/// Keys other formats' calls have and a `FunctionCall` never has (an MCP call's
/// `arguments`, an Anthropic block's `input`): such an object is not read as a call
/// with no arguments.
const FOREIGN_CALL_KEYS: &[&str] = &["arguments", "input", "function", "call_id", "params", "method", "toolCallId"];

pub(super) fn parse_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let mut calls = Vec::new();
    collect(payload, "", &mut calls).map_err(|e| match e {
        // A wrong shape deep inside is named against the whole payload when the payload
        // itself is another format's.
        ProviderError::WrongShape { .. } if recognise(payload).provider.is_some_and(|p| p != P) => wrong_shape(P, "", EXPECTED, payload),
        e => e,
    })?;
    Ok(calls)
}

fn collect(value: &Value, path: &str, calls: &mut Vec<ToolCall>) -> Result<(), ProviderError> {
    let each =
        |list: &Value, path: String, calls: &mut Vec<ToolCall>| -> Result<(), ProviderError> {
            let Value::Array(items) = list else {
                return Err(ProviderError::payload(
                    P,
                    path,
                    format!("expected an array, found {}", kind(list)),
                ));
            };
            items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| collect(item, &format!("{path}/{i}"), calls))
        };
    let alternatives = |n: usize, at: String| {
        ProviderError::payload(
            P,
            at,
            format!("the response has {n} candidates (a request with candidateCount > 1): they are alternative answers, and running the calls of each would run them once per candidate; pass the chosen candidate (candidates[i])"),
        )
    };
    match value {
        Value::Array(items) => {
            let candidates = items.iter().filter(|c| c.get("content").is_some_and(Value::is_object)).count();
            if candidates > 1 {
                return Err(alternatives(candidates, path.to_string()));
            }
            each(value, path.to_string(), calls)
        }
        // Gemini's objects have no `type` (Anthropic blocks, OpenAI items and AG-UI
        // events do).
        Value::Object(map) if map.get("type").is_some_and(Value::is_string) => Err(wrong_shape(P, path, EXPECTED, value)),
        Value::Object(map) => {
            if let Some(candidates) = map.get("candidates") {
                if let Some(list) = candidates.as_array().filter(|l| l.len() > 1) {
                    return Err(alternatives(list.len(), format!("{path}/candidates")));
                }
                each(candidates, format!("{path}/candidates"), calls)
            } else if map.get("promptFeedback").is_some_and(|f| f.get("blockReason").is_some()) {
                Ok(()) // a blocked prompt: a response without candidates
            } else if let Some(content) = map.get("content").filter(|c| c.is_object()) {
                collect(content, &format!("{path}/content"), calls)
            } else if let Some(parts) = map.get("parts") {
                each(parts, format!("{path}/parts"), calls)
            } else if let Some(call) = map.get("functionCall") {
                calls.push(function_call(
                    call,
                    &format!("{path}/functionCall"),
                    calls.len(),
                )?);
                Ok(())
            } else if map.contains_key("name") && !FOREIGN_CALL_KEYS.iter().any(|k| map.contains_key(*k)) {
                calls.push(function_call(value, path, calls.len())?);
                Ok(())
            } else if NO_CALL_KEYS.iter().any(|k| map.contains_key(*k)) // a part or candidate without a function call
                || (map.contains_key("role") && !map.contains_key("content")) // a Content with no parts (a candidate cut short)
            {
                Ok(())
            } else {
                Err(wrong_shape(P, path, EXPECTED, value))
            }
        }
        other => Err(wrong_shape(P, path, EXPECTED, other)),
    }
}

fn function_call(call: &Value, path: &str, index: usize) -> Result<ToolCall, ProviderError> {
    let name = str_field(P, call, path, "name")?;
    let id = match call.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => format!("{GENERATED_ID_PREFIX}{index}"),
    };
    let args = structured_args(call.get("args"));
    Ok(ToolCall {
        id,
        name: name.to_string(),
        arguments: ToolCallArguments::Parsed(args),
        arguments_at: given(call, "args").then(|| format!("{path}/args")),
    })
}

/// One user `Content` holding a `functionResponse` part per reply.
pub(super) fn format_replies(replies: &[ToolReply]) -> Vec<Value> {
    if replies.is_empty() {
        return Vec::new();
    }
    let parts: Vec<Value> = replies
        .iter()
        .map(|reply| {
            let response = match &reply.outcome {
                Err(_) => json!({ "error": reply.content_text() }),
                Ok(_) if reply.shown.is_some() || reply.over_budget() => json!({ "result": reply.content_text() }),
                Ok(value @ Value::Object(_)) => value.clone(),
                Ok(value) => json!({ "result": value }),
            };
            let mut function_response = json!({"name": reply.name, "response": response});
            if !reply.call_id.starts_with(GENERATED_ID_PREFIX) {
                function_response["id"] = json!(reply.call_id);
            }
            json!({ "functionResponse": function_response })
        })
        .collect();
    vec![json!({"role": "user", "parts": parts})]
}
