//! Tools handed to agent frameworks as their own tool objects, executed through a
//! `ToolExecutionManager`. The objects are built in `runtime.js`; this file picks the
//! declarations the manager's registry shows to the caller.

use napi::bindgen_prelude::ClassInstance;
use napi::Env;
use napi_derive::napi;
use toolhost::Scope;

use crate::js::{self, Js};
use crate::json::from_json;
use crate::manager::{registry_of, string_option, ToolExecutionManager};
use crate::runtime::runtime;

/// Options of `toAiSdkTools`.
// Declares the `AiSdkToolsOptions` interface of index.d.ts only: the options are read
// with the manager's option readers, so a bad `sessionId` is `INVALID_CONFIG`.
#[allow(dead_code)]
#[napi(object, object_to_js = false)]
pub struct AiSdkToolsOptions {
    /// List the tools this session sees (its own and the registry's) and run them in it.
    pub session_id: Option<String>,
}

/// A tool in the Vercel AI SDK's shape (`Tool` from `ai`).
// Declares the `AiSdkTool` interface of index.d.ts only: runtime.js builds the objects.
#[allow(dead_code)]
#[napi(object, object_to_js = false)]
pub struct AiSdkTool {
    /// The tool's description, for the model.
    pub description: String,
    /// `metadata.title`, when the tool has one.
    pub title: Option<String>,
    /// The tool's JSON Schema, wrapped as `jsonSchema()` from `ai` wraps it (read it
    /// as `inputSchema.jsonSchema`). Typed `any`: `ai`'s `Schema` type is keyed by a
    /// unique symbol only `ai` declares, and toolhost has no type dependency on `ai`.
    #[napi(ts_type = "any")]
    pub input_schema: Js,
    /// Runs the tool through the manager. Rejects with an `Error` (`name`
    /// `'ToolCallError'`) when the execution fails: its `message` is written for the
    /// model, `toolError` is the structured error and `execution` the record.
    #[napi(ts_type = "(input: unknown, options?: { toolCallId?: string, abortSignal?: AbortSignal }) => Promise<unknown>")]
    pub execute: Js,
}

/// The tools the manager's registry shows (or a session's, with `sessionId`) as Vercel
/// AI SDK tools: pass the object as `tools` to `generateText` / `streamText`. Each
/// `execute` runs `manager.execute(name, input, { toolCallId, signal: abortSignal,
/// sessionId })`, so validation (in Rust), retries, timeouts, events and audit apply,
/// and a failure is thrown as an error the AI SDK reports to the model. The object is
/// a snapshot: call again after registering tools. Throws `SESSION_NOT_FOUND` for an
/// unknown session.
#[napi(catch_unwind, ts_args_type = "manager: ToolExecutionManager, options?: AiSdkToolsOptions", ts_return_type = "Record<string, AiSdkTool>")]
pub fn to_ai_sdk_tools(env: Env, manager: ClassInstance<'_, ToolExecutionManager>, options: Option<Js>) -> napi::Result<Js> {
    let env = env.raw();
    let session = match options.map_or(Ok(None), |o| string_option(env, o.0, c"sessionId")) {
        Ok(s) => s,
        Err(e) => return js::throw_coded(env, e.code(), &format!("toAiSdkTools: {}", e.message), &[]),
    };
    let Some(registry) = registry_of(manager.id()) else {
        return Err(napi::Error::from_reason("toAiSdkTools: the manager is no longer alive"));
    };
    let visible = match registry.visible(session.as_deref().map_or(Scope::Global, Scope::Session)) {
        Ok(tools) => tools,
        Err(e) => return js::throw_coded(env, e.code(), &e.message, &[]),
    };
    let declarations = js::array(
        env,
        visible.iter().map(|t| from_json(env, &serde_json::to_value(&t.declaration).unwrap_or_default())),
    );
    let rt = runtime(env)?;
    let args = [manager.value, js::number(env, manager.id() as f64), js::opt_string(env, session.as_deref()), declarations];
    match rt.call(env, &rt.ai_sdk_tools, &args) {
        Ok(tools) => Ok(Js(tools)),
        Err(e) => {
            unsafe { napi::sys::napi_throw(env, e) };
            Ok(Js::undefined())
        }
    }
}
