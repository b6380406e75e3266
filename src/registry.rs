//! `ToolRegistry` and `ToolSession`: the JS face of the engine's registry.

use std::cell::RefCell;
use std::ffi::CStr;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use napi::{sys, Env};
use napi_derive::napi;
use serde_json::{json, Value};
use toolhost::{parse_arguments, BoxFuture, RegistryError, Scope, ToolContext, ToolDeclaration, ToolError, ToolHandler, ToolMetadata};

use crate::js::{self, Js, JsRef, RawEnv, RawValue};
use crate::json::{get_json, to_json};
use crate::manager::ManagerCore;
use crate::runtime::Emitter;
use crate::tool_error::issues_to_js;

const CHANGE_EVENT: &str = "tool-registry-change";

/// The adapter from the engine's handler trait to a JS function. The binding's driver
/// calls the function directly on the JS thread (see `manager.rs`).
pub struct JsToolHandler {
    pub function: JsRef,
}

impl ToolHandler for JsToolHandler {
    fn call(&self, _args: Value, ctx: ToolContext) -> BoxFuture<Result<Value, ToolError>> {
        let tool = ctx.tool_name;
        Box::pin(async move {
            Err(ToolError::permanent(format!(
                "tool '{tool}' has a JS handler, which runs on the JS thread through ToolExecutionManager, not on a Rust executor"
            )))
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// State shared by a registry and its sessions.
pub struct RegistryShared {
    pub engine: toolhost::ToolRegistry,
    pub emitter: Emitter,
    managers: RefCell<Vec<Weak<ManagerCore>>>,
}

impl RegistryShared {
    /// Adds a manager over this registry. Dropped managers leave dead entries, cleared
    /// whenever the list has doubled since the last clearing: the list stays within
    /// twice the live managers, at a constant cost per manager on average.
    pub fn add_manager(&self, manager: Weak<ManagerCore>) {
        let mut managers = self.managers.borrow_mut();
        if managers.len() >= 64 && managers.len().is_power_of_two() {
            managers.retain(|m| m.strong_count() > 0);
        }
        managers.push(manager);
    }

    fn emit_change(&self, env: RawEnv, action: &str, tool: Option<&str>, names: &[String], session: Option<&str>) {
        if self.emitter.count(8) == 0 {
            return;
        }
        let detail = js::object(env);
        js::set(env, detail, c"action", js::string(env, action));
        if let Some(t) = tool {
            js::set(env, detail, c"toolName", js::string(env, t));
        }
        js::set(env, detail, c"toolNames", js::array(env, names.iter().map(|n| js::string(env, n))));
        if let Some(s) = session {
            js::set(env, detail, c"sessionId", js::string(env, s));
        }
        self.emitter.emit(env, CHANGE_EVENT, detail, js::undefined(env));
    }
}

fn throw_registry_error(env: RawEnv, e: &RegistryError) -> napi::Result<Js> {
    let mut extra: Vec<(&CStr, RawValue)> = Vec::new();
    if let Some(p) = &e.schema_path {
        extra.push((c"schemaPath", js::string(env, p)));
    }
    js::throw_coded(env, e.code(), &e.message, &extra)
}

fn declaration_to_js(env: RawEnv, d: &ToolDeclaration) -> RawValue {
    crate::json::from_json(env, &serde_json::to_value(d).unwrap_or(Value::Null))
}

/// Reads a JS tool definition into a declaration and its handler.
fn read_definition(env: RawEnv, def: RawValue) -> Result<(ToolDeclaration, JsRef), RegistryError> {
    use toolhost::RegistryErrorCode::*;
    if js::type_of(env, def) != sys::ValueType::napi_object {
        return Err(RegistryError::new(InvalidDefinition, "register() takes a tool definition object { name, description, inputSchema, handler }"));
    }
    let name_value = js::get(env, def, c"name");
    let name = js::get_string(env, name_value).ok_or_else(|| {
        RegistryError::new(InvalidToolName, "tool name is missing or not a string: use 1 to 64 letters, digits, '_' or '-'")
    })?;
    toolhost::declaration::check_tool_name(&name)?;
    let description = js::get_string_prop(env, def, c"description").unwrap_or_default();
    if description.trim().is_empty() {
        return Err(RegistryError::new(InvalidDefinition, format!("tool '{name}' has no description: models choose tools by it")));
    }
    let handler = js::get(env, def, c"handler");
    if !js::is_function(env, handler) {
        return Err(RegistryError::new(InvalidDefinition, format!("tool '{name}' has no handler function")));
    }
    let input_schema = match (js::get_opt(env, def, c"inputSchema"), js::get_opt(env, def, c"parametersJsonSchema"), js::get_opt(env, def, c"parameters")) {
        (Some(s), _, _) => crate::standard_schema::to_json_schema(env, &name, s)?,
        (None, Some(s), _) => to_json(env, s).map_err(|e| RegistryError::invalid_schema(format!("tool '{name}': parametersJsonSchema is not JSON: {e}"), e.path.clone()))?,
        // A Gemini FunctionDeclaration: `parameters` in Gemini's Schema dialect.
        (None, None, Some(p)) => {
            let gemini = to_json(env, p).map_err(|e| RegistryError::invalid_schema(format!("tool '{name}': parameters is not JSON: {e}"), e.path.clone()))?;
            toolhost::providers::gemini_schema_to_json_schema(&gemini)
        }
        (None, None, None) => json!({ "type": "object", "properties": {} }),
    };
    let output_schema = get_json(env, def, c"outputSchema")
        .map_err(|e| RegistryError::invalid_schema(format!("tool '{name}': outputSchema is not JSON: {e}"), e.path.clone()))?;
    let metadata: ToolMetadata = match get_json(env, def, c"metadata") {
        Ok(None) => ToolMetadata::default(),
        Ok(Some(m)) => serde_json::from_value(m)
            .map_err(|e| RegistryError::new(InvalidDefinition, format!("tool '{name}': metadata is invalid: {e}")))?,
        Err(e) => return Err(RegistryError::new(InvalidDefinition, format!("tool '{name}': metadata is not JSON: {e}"))),
    };
    let declaration = ToolDeclaration { name, description, input_schema, output_schema, metadata };
    toolhost::declaration::check_declaration(&declaration)?;
    Ok((declaration, JsRef::new(env, handler)))
}

/// Validation result of `validate()`: `{ valid, errors }`.
fn validation_to_js(env: RawEnv, issues: &[toolhost::ValidationIssue]) -> RawValue {
    let o = js::object(env);
    js::set(env, o, c"valid", js::boolean(env, issues.is_empty()));
    js::set(env, o, c"errors", issues_to_js(env, issues));
    o
}

fn unreadable_arguments(message: String) -> Vec<toolhost::ValidationIssue> {
    vec![toolhost::ValidationIssue { path: String::new(), schema_path: String::new(), keyword: "json".into(), message }]
}

/// Validates JS arguments (an object or JSON text) in a scope.
fn validate_in(env: RawEnv, shared: &RegistryShared, scope: Scope<'_>, name: &str, args: RawValue) -> napi::Result<Js> {
    let tool = match shared.engine.resolve(scope, name) {
        Ok(t) => t,
        Err(e) => return throw_registry_error(env, &e),
    };
    let issues = match read_arguments(env, name, args) {
        Ok(v) => tool.schema.validate(&v),
        Err(e) => unreadable_arguments(e.message),
    };
    Ok(Js(validation_to_js(env, &issues)))
}

/// Arguments as JSON: JSON text is parsed in Rust, objects converted safely.
pub fn read_arguments(env: RawEnv, tool: &str, args: RawValue) -> Result<Value, RegistryError> {
    match js::type_of(env, args) {
        sys::ValueType::napi_undefined => Ok(Value::Object(Default::default())),
        sys::ValueType::napi_string => {
            let text = js::get_string(env, args).unwrap_or_default();
            if text.trim().is_empty() {
                Ok(Value::Object(Default::default()))
            } else {
                parse_arguments(tool, &text)
            }
        }
        _ => to_json(env, args).map_err(|e| {
            RegistryError::new(toolhost::RegistryErrorCode::InvalidArguments, format!("invalid arguments for tool '{tool}': {e}"))
        }),
    }
}

fn register_in(env: RawEnv, shared: &RegistryShared, scope: Scope<'_>, def: RawValue) -> napi::Result<Js> {
    let (declaration, handler) = match read_definition(env, def) {
        Ok(d) => d,
        Err(e) => return throw_registry_error(env, &e),
    };
    let handler = Arc::new(JsToolHandler { function: handler });
    match shared.engine.register_in(scope, declaration, handler) {
        Ok(d) => {
            let session = match scope {
                Scope::Session(id) => Some(id),
                Scope::Global => None,
            };
            let names: Vec<String> = shared.engine.visible(scope).unwrap_or_default().iter().map(|t| t.name().to_string()).collect();
            shared.emit_change(env, "registered", Some(&d.name), &names, session);
            Ok(Js(declaration_to_js(env, &d)))
        }
        Err(e) => throw_registry_error(env, &e),
    }
}

fn listen(env: RawEnv, emitter: &Emitter, event_type: RawValue, listener: RawValue, detail_only: bool) -> napi::Result<Js> {
    match emitter.add(env, event_type, listener, detail_only) {
        Ok(v) => Ok(Js(v)),
        Err(e) => {
            unsafe { sys::napi_throw(env, e) };
            Ok(Js::undefined())
        }
    }
}

fn strings_to_js(env: RawEnv, names: &[String]) -> RawValue {
    js::array(env, names.iter().map(|n| js::string(env, n)))
}

/// A set of tools, with JSON Schema validation in Rust.
#[napi]
pub struct ToolRegistry {
    pub(crate) shared: Rc<RegistryShared>,
}

#[napi]
impl ToolRegistry {
    /// Creates an empty registry.
    #[napi(catch_unwind, constructor)]
    pub fn new(env: Env) -> napi::Result<Self> {
        let shared = Rc::new(RegistryShared {
            engine: toolhost::ToolRegistry::new(),
            emitter: Emitter::new(env.raw())?,
            managers: RefCell::new(Vec::new()),
        });
        Ok(Self { shared })
    }

    /// Registers a tool. Throws an `Error` with `code` `INVALID_TOOL_NAME`,
    /// `INVALID_DEFINITION`, `INVALID_SCHEMA` or `DUPLICATE_TOOL`; nothing changes then.
    #[napi(catch_unwind, ts_generic_types = "const S extends InputSchema = NoInputSchema", ts_args_type = "definition: ToolDefinition<S>", ts_return_type = "ToolDeclaration")]
    pub fn register(&self, env: Env, definition: Js) -> napi::Result<Js> {
        register_in(env.raw(), &self.shared, Scope::Global, definition.0)
    }

    /// Removes a tool; `true` when it was registered.
    #[napi(catch_unwind, ts_args_type = "name: string")]
    pub fn unregister(&self, env: Env, name: Js) -> bool {
        let Some(name) = js::string_arg(env.raw(), name.0, "unregister", "the tool name") else { return false };
        let removed = self.shared.engine.unregister(&name);
        if removed {
            self.shared.emit_change(env.raw(), "unregistered", Some(&name), &self.shared.engine.names(), None);
        }
        removed
    }

    /// Removes every global tool (sessions keep theirs).
    #[napi(catch_unwind)]
    pub fn clear(&self, env: Env) {
        self.shared.engine.clear();
        self.shared.emit_change(env.raw(), "cleared", None, &[], None);
    }

    /// The tool's declaration and metadata (without the handler), or `undefined`.
    #[napi(catch_unwind, ts_args_type = "name: string", ts_return_type = "ToolDeclaration | undefined")]
    pub fn get(&self, env: Env, name: Js) -> Js {
        let Some(name) = js::string_arg(env.raw(), name.0, "get", "the tool name") else { return Js::undefined() };
        self.shared.engine.get(&name).map_or(Js::undefined(), |d| Js(declaration_to_js(env.raw(), &d)))
    }

    #[napi(catch_unwind, ts_args_type = "name: string")]
    pub fn has(&self, env: Env, name: Js) -> bool {
        let Some(name) = js::string_arg(env.raw(), name.0, "has", "the tool name") else { return false };
        self.shared.engine.has(&name)
    }

    /// Names of the registered tools, in registration order.
    #[napi(getter, ts_return_type = "string[]")]
    pub fn names(&self, env: Env) -> Js {
        Js(strings_to_js(env.raw(), &self.shared.engine.names()))
    }

    /// Every declaration, in registration order.
    #[napi(getter, ts_return_type = "ToolDeclaration[]")]
    pub fn all(&self, env: Env) -> Js {
        let env = env.raw();
        Js(js::array(env, self.shared.engine.declarations().iter().map(|d| declaration_to_js(env, d))))
    }

    #[napi(ts_args_type = "category: string", ts_return_type = "ToolDeclaration[]")]
    pub fn get_by_category(&self, env: Env, category: Js) -> Js {
        let env = env.raw();
        let Some(category) = js::string_arg(env, category.0, "getByCategory", "the category") else { return Js::undefined() };
        Js(js::array(env, self.shared.engine.by_category(&category).iter().map(|d| declaration_to_js(env, d))))
    }

    #[napi(ts_args_type = "tag: string", ts_return_type = "ToolDeclaration[]")]
    pub fn get_by_tag(&self, env: Env, tag: Js) -> Js {
        let env = env.raw();
        let Some(tag) = js::string_arg(env, tag.0, "getByTag", "the tag") else { return Js::undefined() };
        Js(js::array(env, self.shared.engine.by_tag(&tag).iter().map(|d| declaration_to_js(env, d))))
    }

    /// Validates arguments (an object or JSON text) against the tool's input schema and
    /// returns every failure. Throws `TOOL_NOT_FOUND` for an unknown tool.
    #[napi(catch_unwind, ts_args_type = "name: string, args: unknown", ts_return_type = "ValidationResult")]
    pub fn validate(&self, env: Env, name: Js, args: Js) -> napi::Result<Js> {
        let Some(name) = js::string_arg(env.raw(), name.0, "validate", "the tool name") else { return Ok(Js::undefined()) };
        validate_in(env.raw(), &self.shared, Scope::Global, &name, args.0)
    }

    /// Listens to `tool-registry-change`; the listener receives `{ type, detail }`.
    #[napi(catch_unwind, ts_args_type = "type: 'tool-registry-change', listener: (event: { type: 'tool-registry-change', detail: RegistryChange }) => void", ts_return_type = "void")]
    pub fn add_event_listener(&self, env: Env, event_type: Js, listener: Js) -> napi::Result<Js> {
        listen(env.raw(), &self.shared.emitter, event_type.0, listener.0, false)
    }

    #[napi(ts_args_type = "type: string, listener: (...args: any[]) => void")]
    pub fn remove_event_listener(&self, env: Env, event_type: Js, listener: Js) -> bool {
        self.shared.emitter.remove(env.raw(), event_type.0, listener.0)
    }

    /// Listens with the detail alone; returns an unsubscribe function.
    #[napi(catch_unwind, ts_args_type = "type: 'tool-registry-change', listener: (detail: RegistryChange) => void", ts_return_type = "() => boolean")]
    pub fn on(&self, env: Env, event_type: Js, listener: Js) -> napi::Result<Js> {
        listen(env.raw(), &self.shared.emitter, event_type.0, listener.0, true)
    }

    /// Creates a session: a tool set of its own, isolated from other sessions, that also
    /// sees the global tools unless `isolated` is true. Throws `INVALID_CONFIG` when
    /// `isolated` is not a boolean: read as false, it would show the session every
    /// global tool.
    #[napi(catch_unwind, ts_args_type = "options?: { isolated?: boolean }", ts_return_type = "ToolSession")]
    pub fn create_session(&self, env: Env, options: Option<Js>) -> napi::Result<Js> {
        use napi::bindgen_prelude::ToNapiValue;
        let env = env.raw();
        let options = options.map(|o| o.0).filter(|&o| !js::is_nullish(env, o));
        let isolated = match options {
            None => Ok(None),
            Some(o) if !matches!(js::type_of(env, o), sys::ValueType::napi_object) => {
                Err(crate::manager::invalid_config("options must be an object"))
            }
            Some(o) => crate::manager::read_flag(env, o, c"isolated"),
        };
        let isolated = match isolated {
            Ok(flag) => flag.unwrap_or(false),
            Err(e) => return js::throw_coded(env, e.code(), &format!("createSession: {}", e.message), &[]),
        };
        let id = self.shared.engine.create_session(isolated);
        let session = ToolSession { shared: self.shared.clone(), id, isolated };
        Ok(Js(unsafe { ToolSession::to_napi_value(env, session)? }))
    }

    /// The live session with this id, or `undefined`.
    #[napi(catch_unwind, ts_args_type = "id: string", ts_return_type = "ToolSession | undefined")]
    pub fn get_session(&self, env: Env, id: Js) -> napi::Result<Js> {
        use napi::bindgen_prelude::ToNapiValue;
        let Some(id) = js::string_arg(env.raw(), id.0, "getSession", "the session id") else { return Ok(Js::undefined()) };
        match self.shared.engine.session_is_isolated(&id) {
            Some(isolated) => {
                let session = ToolSession { shared: self.shared.clone(), id, isolated };
                Ok(Js(unsafe { ToolSession::to_napi_value(env.raw(), session)? }))
            }
            None => Ok(Js::undefined()),
        }
    }

    /// Ids of the live sessions, oldest first.
    #[napi(catch_unwind, getter)]
    pub fn sessions(&self) -> Vec<String> {
        self.shared.engine.sessions()
    }

}

impl ToolRegistry {
    fn decls(&self) -> Vec<ToolDeclaration> {
        self.shared.engine.declarations()
    }
}

/// A per-user or per-conversation tool set. Its tools are visible only inside it.
#[napi]
pub struct ToolSession {
    pub(crate) shared: Rc<RegistryShared>,
    id: String,
    isolated: bool,
}

#[napi]
impl ToolSession {
    /// The session id (a UUID v4); pass it as `sessionId` to `execute`.
    #[napi(catch_unwind, getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Whether global tools are hidden from this session.
    #[napi(catch_unwind, getter)]
    pub fn isolated(&self) -> bool {
        self.isolated
    }

    /// Whether the session still exists.
    #[napi(catch_unwind, getter)]
    pub fn alive(&self) -> bool {
        self.shared.engine.has_session(&self.id)
    }

    /// Registers a tool visible only inside this session (it may shadow a global one).
    #[napi(catch_unwind, ts_generic_types = "const S extends InputSchema = NoInputSchema", ts_args_type = "definition: ToolDefinition<S>", ts_return_type = "ToolDeclaration")]
    pub fn register(&self, env: Env, definition: Js) -> napi::Result<Js> {
        register_in(env.raw(), &self.shared, Scope::Session(&self.id), definition.0)
    }

    #[napi(catch_unwind, ts_args_type = "name: string")]
    pub fn unregister(&self, env: Env, name: Js) -> napi::Result<bool> {
        let Some(name) = js::string_arg(env.raw(), name.0, "unregister", "the tool name") else { return Ok(false) };
        match self.shared.engine.unregister_in(Scope::Session(&self.id), &name) {
            Ok(removed) => {
                if removed {
                    let names = self.names_vec();
                    self.shared.emit_change(env.raw(), "unregistered", Some(&name), &names, Some(&self.id));
                }
                Ok(removed)
            }
            Err(e) => {
                throw_registry_error(env.raw(), &e)?;
                Ok(false)
            }
        }
    }

    /// The declaration of a tool visible in this session, or `undefined`.
    #[napi(catch_unwind, ts_args_type = "name: string", ts_return_type = "ToolDeclaration | undefined")]
    pub fn get(&self, env: Env, name: Js) -> Js {
        let Some(name) = js::string_arg(env.raw(), name.0, "get", "the tool name") else { return Js::undefined() };
        self.shared
            .engine
            .resolve(Scope::Session(&self.id), &name)
            .map_or(Js::undefined(), |t| Js(declaration_to_js(env.raw(), &t.declaration)))
    }

    #[napi(catch_unwind, ts_args_type = "name: string")]
    pub fn has(&self, env: Env, name: Js) -> bool {
        let Some(name) = js::string_arg(env.raw(), name.0, "has", "the tool name") else { return false };
        self.shared.engine.resolve(Scope::Session(&self.id), &name).is_ok()
    }

    /// Names of every tool visible in this session.
    #[napi(catch_unwind, getter)]
    pub fn names(&self) -> Vec<String> {
        self.names_vec()
    }

    /// Every declaration visible in this session (its own first, then global ones).
    #[napi(ts_return_type = "ToolDeclaration[]")]
    pub fn declarations(&self, env: Env) -> Js {
        let env = env.raw();
        let tools = self.shared.engine.visible(Scope::Session(&self.id)).unwrap_or_default();
        Js(js::array(env, tools.iter().map(|t| declaration_to_js(env, &t.declaration))))
    }

    #[napi(catch_unwind, ts_args_type = "name: string, args: unknown", ts_return_type = "ValidationResult")]
    pub fn validate(&self, env: Env, name: Js, args: Js) -> napi::Result<Js> {
        let Some(name) = js::string_arg(env.raw(), name.0, "validate", "the tool name") else { return Ok(Js::undefined()) };
        validate_in(env.raw(), &self.shared, Scope::Session(&self.id), &name, args.0)
    }

    /// Cancels the session's executions in flight, frees its tools and records, and
    /// emits `tool-registry-change` with `action: 'session-destroyed'`. Calling it again
    /// does nothing.
    #[napi(catch_unwind)]
    pub fn destroy(&self, env: Env) {
        let names = self.names_own();
        if !self.shared.engine.destroy_session(&self.id) {
            return;
        }
        let managers: Vec<_> = self.shared.managers.borrow().iter().filter_map(Weak::upgrade).collect();
        for m in managers {
            m.destroy_session(env.raw(), &self.id);
        }
        self.shared.emit_change(env.raw(), "session-destroyed", None, &names, Some(&self.id));
    }

}

impl ToolSession {
    fn decls(&self) -> Vec<ToolDeclaration> {
        self.shared.engine.visible(Scope::Session(&self.id)).unwrap_or_default().iter().map(|t| t.declaration.clone()).collect()
    }

    fn names_vec(&self) -> Vec<String> {
        self.shared.engine.visible(Scope::Session(&self.id)).unwrap_or_default().iter().map(|t| t.name().to_string()).collect()
    }

    fn names_own(&self) -> Vec<String> {
        self.shared
            .engine
            .visible(Scope::Session(&self.id))
            .unwrap_or_default()
            .iter()
            .filter(|t| t.session_id.is_some())
            .map(|t| t.name().to_string())
            .collect()
    }
}

/// The provider exports, the same on a registry and on a session (each lists what it
/// sees). One `#[napi] impl` block per class, written once.
macro_rules! provider_exports {
    ($class:ident) => {
        #[napi]
        impl $class {
            /// Declarations in the OpenAI Chat Completions format; `{ strict: true }` makes each
            /// schema strict-compatible or throws `INVALID_SCHEMA` naming the tool and path.
            #[napi(js_name = "toOpenAITools", ts_args_type = "options?: { strict?: boolean }", ts_return_type = "OpenAITool[]")]
            pub fn to_openai_tools(&self, env: Env, options: Option<Js>) -> napi::Result<Js> {
                crate::providers::tools_out(env.raw(), &self.decls(), crate::providers::Format::OpenAi, options)
            }

            /// Declarations in the OpenAI Responses API format.
            #[napi(js_name = "toOpenAIResponsesTools", ts_args_type = "options?: { strict?: boolean }", ts_return_type = "OpenAIResponsesTool[]")]
            pub fn to_openai_responses_tools(&self, env: Env, options: Option<Js>) -> napi::Result<Js> {
                crate::providers::tools_out(env.raw(), &self.decls(), crate::providers::Format::OpenAiResponses, options)
            }

            /// Declarations as Anthropic tools `{ name, description, input_schema }`.
            #[napi(ts_return_type = "AnthropicTool[]")]
            pub fn to_anthropic_tools(&self, env: Env) -> napi::Result<Js> {
                crate::providers::tools_out(env.raw(), &self.decls(), crate::providers::Format::Anthropic, None)
            }

            /// Declarations as Gemini `{ functionDeclarations }` in Gemini's Schema dialect.
            #[napi(catch_unwind, ts_return_type = "GeminiTool")]
            pub fn to_gemini_tools(&self, env: Env) -> napi::Result<Js> {
                crate::providers::tools_out(env.raw(), &self.decls(), crate::providers::Format::Gemini, None)
            }

            /// Declarations as AG-UI tools `{ name, description, parameters }`.
            #[napi(ts_return_type = "AgUiTool[]")]
            pub fn to_ag_ui_tools(&self, env: Env) -> napi::Result<Js> {
                crate::providers::tools_out(env.raw(), &self.decls(), crate::providers::Format::AgUi, None)
            }

            /// Declarations as MCP tools, with annotations from metadata.
            #[napi(ts_return_type = "McpTool[]")]
            pub fn to_mcp_tools(&self, env: Env) -> napi::Result<Js> {
                crate::providers::tools_out(env.raw(), &self.decls(), crate::providers::Format::Mcp, None)
            }
        }
    };
}

provider_exports!(ToolRegistry);
provider_exports!(ToolSession);
