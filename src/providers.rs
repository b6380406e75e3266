//! Provider formats in the binding: declarations out, tool calls in, replies back.
//! All conversions are the engine's (`toolhost::providers`); this file only moves
//! values across and runs the calls through the manager.

use std::ptr;
use std::str::FromStr;

use napi::sys;
use serde_json::Value;
use toolhost::providers::{self, model_errors, Provider, ToolCallArguments, ToolReply};
use toolhost::{Scope, ToolDeclaration, ValidationIssue};

use crate::js::{self, Js, RawEnv, RawValue};
use crate::json::{from_json, to_json};

/// The formats `to*Tools()` produce.
#[derive(Clone, Copy)]
pub enum Format {
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Gemini,
    AgUi,
    Mcp,
}

/// Declarations in a provider's format; throws `INVALID_SCHEMA` when strict mode
/// cannot be applied to a schema.
pub fn tools_out(env: RawEnv, decls: &[ToolDeclaration], format: Format, options: Option<Js>) -> napi::Result<Js> {
    let strict = options.and_then(|o| js::get_opt(env, o.0, c"strict")).and_then(|v| js::get_bool(env, v)).unwrap_or(false);
    let out = match format {
        Format::OpenAi => providers::openai_chat_tools(decls, strict).map(Value::Array),
        Format::OpenAiResponses => providers::openai_responses_tools(decls, strict).map(Value::Array),
        Format::Anthropic => Ok(Value::Array(providers::anthropic_tools(decls))),
        Format::Gemini => providers::gemini_tools(decls),
        Format::AgUi => Ok(Value::Array(providers::ag_ui_tools(decls))),
        Format::Mcp => Ok(Value::Array(providers::mcp_tools(decls))),
    };
    match out {
        Ok(v) => Ok(Js(from_json(env, &v))),
        Err(e) => js::throw_coded(env, "INVALID_SCHEMA", &e.to_string(), &[]),
    }
}

/// Reads the provider name of `executeToolCalls` options.
pub fn provider_of(env: RawEnv, options: RawValue) -> Result<Provider, String> {
    let name = js::get_string_prop(env, options, c"provider").unwrap_or_default();
    Provider::from_str(&name).map_err(|e| e.to_string())
}

/// Tool calls as JS: `[{ id, name, arguments }]`, `arguments` as JSON text when the
/// model sent text (so malformed text reaches the manager and fails validation there).
///
/// For OpenAI providers, `null`s a model sent for optional properties (as strict mode
/// makes it do) are dropped before validation, so strict-mode calls validate against the
/// tool's own schema.
pub fn calls_in(
    env: RawEnv,
    registry: &toolhost::ToolRegistry,
    session: Option<&str>,
    provider: Provider,
    response: RawValue,
) -> Result<RawValue, String> {
    let payload = to_json(env, response).map_err(|e| format!("the response is not JSON: {e}"))?;
    let mut calls = providers::parse_tool_calls(provider, &payload).map_err(|e| e.to_string())?;
    if matches!(provider, Provider::OpenAi | Provider::OpenAiResponses) {
        let scope = session.map_or(Scope::Global, Scope::Session);
        for call in &mut calls {
            if let (ToolCallArguments::Parsed(args), Ok(tool)) = (&mut call.arguments, registry.resolve(scope, &call.name)) {
                providers::drop_optional_nulls(&tool.declaration.input_schema, args);
            }
        }
    }
    Ok(js::array(
        env,
        calls.iter().map(|c| {
            let o = js::object(env);
            js::set(env, o, c"id", js::string(env, &c.id));
            js::set(env, o, c"name", js::string(env, &c.name));
            let args = match &c.arguments {
                ToolCallArguments::Parsed(v) => from_json(env, v),
                ToolCallArguments::Malformed { raw, .. } => js::string(env, raw),
            };
            js::set(env, o, c"arguments", args);
            o
        }),
    ))
}

fn issues_of(env: RawEnv, error: RawValue) -> Vec<ValidationIssue> {
    js::get_opt(env, error, c"validationErrors")
        .and_then(|v| to_json(env, v).ok())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The reply text a model gets for a failed call.
fn error_text(env: RawEnv, registry: &toolhost::ToolRegistry, scope: Scope<'_>, call: RawValue, error: RawValue) -> String {
    let s = |o: RawValue, k: &std::ffi::CStr| js::get_string_prop(env, o, k).unwrap_or_default();
    let name = s(call, c"name");
    let code = s(error, c"code");
    let message = s(error, c"message");
    match code.as_str() {
        "TOOL_NOT_FOUND" => {
            let available: Vec<String> = registry.visible(scope).unwrap_or_default().iter().map(|t| t.name().to_string()).collect();
            model_errors::unknown_tool(&name, &available)
        }
        "INVALID_ARGUMENTS" => {
            let issues = issues_of(env, error);
            match (issues.is_empty(), registry.resolve(scope, &name)) {
                (false, Ok(tool)) => model_errors::validation_failed(&name, &issues, &tool.declaration.input_schema),
                _ => {
                    let raw = js::get_string_prop(env, call, c"arguments").unwrap_or_default();
                    model_errors::malformed_arguments(&name, &raw, &message)
                }
            }
        }
        _ => {
            let category = s(error, c"category");
            let retryable = js::get_bool_prop(env, error, c"retryable").unwrap_or(false);
            // The reply names the tool itself; drop the engine's own "tool 'x' failed: "
            // (or "tool 'x' " before "timed out ...").
            let failed = format!("tool '{name}' failed: ");
            let named = format!("tool '{name}' ");
            let message = message.strip_prefix(&failed).or_else(|| message.strip_prefix(&named)).unwrap_or(&message);
            model_errors::tool_failed(&name, &category, &code, message, retryable)
        }
    }
}

/// `{ messages }` for the calls and their execution results, in call order.
pub fn replies_out(
    env: RawEnv,
    registry: &toolhost::ToolRegistry,
    session: Option<&str>,
    provider: Provider,
    calls: RawValue,
    results: RawValue,
) -> RawValue {
    let scope = session.map_or(Scope::Global, Scope::Session);
    // Both arrays are runtime.js's own.
    let calls = js::array_items(env, calls).unwrap_or_default();
    let results = js::array_items(env, results).unwrap_or_default();
    let replies: Vec<ToolReply> = calls
        .iter()
        .zip(&results)
        .map(|(call, result)| {
            let id = js::get_string_prop(env, *call, c"id").unwrap_or_default();
            let name = js::get_string_prop(env, *call, c"name").unwrap_or_default();
            let success = js::get_bool_prop(env, *result, c"success").unwrap_or(false);
            if success {
                let value = js::get(env, *result, c"result");
                // A handler that returns nothing (`undefined`) replies `null`.
                let json = match js::type_of(env, value) {
                    sys::ValueType::napi_undefined => Value::Null,
                    _ => to_json(env, value).unwrap_or_else(|e| Value::String(format!("(result not JSON: {e})"))),
                };
                ToolReply::ok(id, name, json)
            } else {
                let error = js::get(env, *result, c"error");
                let text = error_text(env, registry, scope, *call, error);
                ToolReply::err(id, name, text)
            }
        })
        .collect();
    let messages = providers::format_replies(provider, &replies);
    let out = js::object(env);
    js::set(env, out, c"messages", from_json(env, &Value::Array(messages)));
    out
}

/// The native side of `runtime.js`'s `executeToolCalls`: `(manager, provider, sessionId, calls, results)`.
pub unsafe extern "C" fn format_replies_cb(env: RawEnv, info: sys::napi_callback_info) -> RawValue {
    let mut argc = 5usize;
    let mut argv = [ptr::null_mut(); 5];
    unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    let manager = js::get_number(env, argv[0]).unwrap_or(0.0) as u32;
    let provider = js::get_string(env, argv[1]).and_then(|p| Provider::from_str(&p).ok());
    let session = js::get_string(env, argv[2]);
    // A panic must not unwind into Node (that aborts the process).
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match (crate::manager::registry_of(manager), provider) {
        (Some(registry), Some(provider)) => replies_out(env, &registry, session.as_deref(), provider, argv[3], argv[4]),
        _ => js::undefined(env),
    }))
    .unwrap_or_else(|_| js::undefined(env))
}
