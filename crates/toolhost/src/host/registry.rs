//! [`HostRegistry`]: the registry as a host drives it, with JSON text in and out.
//!
//! The host keeps each tool's handler itself and knows it by the tool id this
//! registry hands out; the engine's side of the tool is a [`HostHandler`], which
//! reports its id as released once no registry scope and no execution holds the tool
//! any more, so the host can drop the handler too.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{RegistryError, RegistryErrorCode, ToolError};
use crate::handler::{BoxFuture, ToolContext, ToolHandler};
use crate::providers::model_output::ModelOutput;
use crate::providers::{self, model_errors, Provider, ToolCallArguments, ToolReply};
use crate::registry::{Origin, RegisteredTool, Scope, ToolRegistry};
use crate::schema::ValidationIssue;
use crate::{ToolDeclaration, ToolMetadata};

/// The engine's side of a tool whose handler the host runs.
pub struct HostHandler {
    pub id: u32,
    released: Arc<Mutex<Vec<u32>>>,
}

impl ToolHandler for HostHandler {
    fn call(&self, _args: Value, ctx: ToolContext) -> BoxFuture<Result<Value, ToolError>> {
        let tool = ctx.tool_name;
        Box::pin(async move {
            Err(ToolError::permanent(format!(
                "tool '{tool}' has a JS handler, which runs through the JS ToolExecutionManager, not on a Rust executor"
            )))
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Drop for HostHandler {
    fn drop(&mut self) {
        self.released.lock().unwrap_or_else(|e| e.into_inner()).push(self.id);
    }
}

/// The host tool id of a registered tool (0 for a tool with a Rust handler).
pub fn tool_id(tool: &RegisteredTool) -> u32 {
    tool.handler.as_any().downcast_ref::<HostHandler>().map_or(0, |h| h.id)
}

/// A tool definition as the host sends it: the JS definition without its handler, with
/// a Standard Schema already turned into JSON Schema.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Definition {
    name: Option<Value>,
    description: Option<Value>,
    input_schema: Option<Value>,
    /// A Gemini `FunctionDeclaration`'s JSON Schema form.
    parameters_json_schema: Option<Value>,
    /// A Gemini `FunctionDeclaration`'s Schema-dialect form.
    parameters: Option<Value>,
    output_schema: Option<Value>,
    metadata: Option<Value>,
    /// Whether the host has a handler function for it.
    handler: Option<Value>,
    /// `true`, `false`, or `"ask"` when the host's own function decides per call.
    needs_approval: Option<Value>,
    /// Whether the host has a `toModelOutput` function for it (the host keeps it).
    #[allow(dead_code)]
    to_model_output: Option<Value>,
}

/// The keys a tool definition may have, as the JS runtime sends them.
const DEFINITION_KEYS: &[&str] = &[
    "name", "description", "inputSchema", "parametersJsonSchema", "parameters", "outputSchema", "metadata", "handler",
    "needsApproval", "toModelOutput", "toModelError",
];

/// What other libraries call a definition's keys (theirs, ours): a definition written for
/// the AI SDK (`execute`) or another framework is refused with ours suggested.
const DEFINITION_SYNONYMS: &[(&str, &str)] = &[
    ("execute", "handler"), ("handle", "handler"), ("run", "handler"), ("fn", "handler"), ("func", "handler"),
    ("function", "handler"), ("invoke", "handler"), ("call", "handler"), ("callback", "handler"), ("implementation", "handler"),
    ("schema", "inputSchema"), ("input", "inputSchema"), ("inputs", "inputSchema"), ("args", "inputSchema"),
    ("arguments", "inputSchema"), ("argsSchema", "inputSchema"), ("paramsSchema", "inputSchema"), ("jsonSchema", "inputSchema"),
    ("output", "outputSchema"), ("returns", "outputSchema"), ("resultSchema", "outputSchema"),
    ("requiresApproval", "needsApproval"), ("requireApproval", "needsApproval"), ("approval", "needsApproval"),
    ("errorFunction", "toModelError"),
];

/// A registry shared by a host's registry object, its sessions and its managers.
#[derive(Clone)]
pub struct HostRegistry {
    pub registry: ToolRegistry,
    released: Arc<Mutex<Vec<u32>>>,
    next_tool: Arc<AtomicU32>,
    /// Whether the schemas of tools registered here (not mounted) are checked for
    /// keywords their draft does not know ([`crate::schema_keywords`]).
    strict_schemas: Arc<AtomicBool>,
    /// `maxSchemaCost` of the registry's options for its own tools' schemas; 0: none.
    max_schema_cost: Arc<AtomicU64>,
}

impl Default for HostRegistry {
    fn default() -> Self {
        Self::new()
    }
}

fn scope(session: Option<&str>) -> Scope<'_> {
    session.map_or(Scope::Global, Scope::Session)
}

fn invalid_definition(message: String) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidDefinition, message)
}

/// `{ "ok": value }` or `{ "error": { code, message, schemaPath? } }`: how every fallible
/// registry call answers the host.
pub fn answer(result: Result<Value, RegistryError>) -> String {
    match result {
        Ok(v) => json!({ "ok": v }).to_string(),
        Err(e) => json!({ "error": registry_error_json(&e) }).to_string(),
    }
}

pub fn registry_error_json(e: &RegistryError) -> Value {
    let mut o = json!({ "code": e.code(), "message": e.message });
    if let Some(p) = &e.schema_path {
        o["schemaPath"] = p.as_str().into();
    }
    o
}

fn declaration_json(d: &ToolDeclaration) -> Value {
    serde_json::to_value(d).unwrap_or(Value::Null)
}

/// "a function", "an object": how a JS `typeof` is named in a message.
fn article(kind: &str) -> String {
    let vowel = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if vowel { "an" } else { "a" })
}

impl HostRegistry {
    pub fn new() -> Self {
        Self {
            registry: ToolRegistry::new(),
            released: Arc::default(),
            next_tool: Arc::new(AtomicU32::new(1)),
            strict_schemas: Arc::new(AtomicBool::new(true)),
            max_schema_cost: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Applies a registry's options (JSON text of `new ToolRegistry(options)`'s object).
    ///
    /// # Errors
    /// `INVALID_CONFIG` naming an unknown or mistyped option.
    pub fn configure(&self, options: &str) -> Result<Value, RegistryError> {
        let o = super::options::registry_options(options)?;
        self.strict_schemas.store(o.strict_schemas, Ordering::Relaxed);
        self.max_schema_cost.store(o.max_schema_cost.unwrap_or(0), Ordering::Relaxed);
        Ok(Value::Null)
    }

    /// Tool ids released since the last call: the host may drop their handlers.
    pub fn take_released(&self) -> Vec<u32> {
        std::mem::take(&mut *self.released.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Registers a tool from its JSON definition. Answers `{ toolId, declaration }`.
    ///
    /// # Errors
    /// `INVALID_TOOL_NAME`, `INVALID_DEFINITION`, `INVALID_SCHEMA`, `DUPLICATE_TOOL`,
    /// `SESSION_NOT_FOUND`; nothing changes then.
    pub fn register(&self, session: Option<&str>, definition: &str) -> Result<Value, RegistryError> {
        self.register_from(session, definition, Origin::Local, None)
    }

    /// Registers a tool a mounted server declared (see [`Origin::Mounted`]): it never
    /// takes the place of a tool visible in the scope, unless `may_shadow` allows it
    /// to shadow a global one inside a session. Its schemas must cost at most
    /// `max_schema_cost` validation steps (see [`crate::schema_cost`]; `None`: no bound).
    ///
    /// # Errors
    /// As [`HostRegistry::register`].
    pub fn register_mounted(&self, session: Option<&str>, definition: &str, may_shadow: bool, max_schema_cost: Option<u64>) -> Result<Value, RegistryError> {
        self.register_from(session, definition, Origin::Mounted { may_shadow }, max_schema_cost)
    }

    fn register_from(&self, session: Option<&str>, definition: &str, origin: Origin, max_schema_cost: Option<u64>) -> Result<Value, RegistryError> {
        // Numbers as JS reads them, as arguments are read (see `crate::json_text`).
        let raw: Value = crate::json_text::parse(definition).map_err(|e| match crate::json_text::from_str(definition) {
            // Valid JSON once lone surrogates are replaced: say so, since `get()` and every
            // export could not give that definition back as it was written.
            Ok(read) => {
                let name = read.get("name").and_then(Value::as_str).map_or_else(|| "a tool definition".to_string(), |n| format!("tool '{n}'"));
                invalid_definition(format!("{name} holds a string with a lone surrogate (half of a UTF-16 pair), which a tool definition cannot hold: {e}"))
            }
            Err(_) => invalid_definition(format!("the tool definition is not JSON: {e}")),
        })?;
        let label = raw.get("name").and_then(Value::as_str).map_or_else(|| "the tool definition".to_string(), |n| format!("tool '{n}'"));
        if let Some(o) = raw.as_object() {
            if let Some(key) = o.keys().find(|k| !DEFINITION_KEYS.contains(&k.as_str())) {
                let mut message = super::options::unknown_option_or_synonym(key, DEFINITION_KEYS, DEFINITION_SYNONYMS, &label);
                if key == "execute" {
                    message.push_str(" (the AI SDK's and the Agents SDK's `execute` is toolhost's `handler`)");
                }
                return Err(invalid_definition(message));
            }
        }
        let def: Definition = serde_json::from_value(raw).map_err(|e| invalid_definition(format!("{label}: the definition is not valid: {e}")))?;
        let name = match def.name {
            Some(Value::String(s)) => s,
            _ => {
                return Err(RegistryError::new(
                    RegistryErrorCode::InvalidToolName,
                    "tool name is missing or not a string: use 1 to 64 letters, digits, '_' or '-'",
                ))
            }
        };
        crate::declaration::check_tool_name(&name)?;
        let description = match def.description {
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            Some(v @ (Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_))) => {
                return Err(invalid_definition(format!("tool '{name}': description must be a string, got {}", super::metadata::shown(&v))))
            }
            _ => return Err(invalid_definition(format!("tool '{name}' has no description: models choose tools by it"))),
        };
        match def.handler {
            Some(Value::Bool(true)) => {}
            // The host sends what it was given instead of a function as its `typeof`.
            Some(Value::String(kind)) => {
                return Err(invalid_definition(format!("tool '{name}': handler must be a function (args, ctx) => result, got {}", article(&kind))))
            }
            _ => return Err(invalid_definition(format!("tool '{name}' has no handler function"))),
        }
        let input_schema = match (def.input_schema, def.parameters_json_schema, def.parameters) {
            (Some(s), _, _) | (None, Some(s), _) => s,
            (None, None, Some(gemini)) => providers::gemini_schema_to_json_schema(&gemini),
            (None, None, None) => json!({ "type": "object", "properties": {} }),
        };
        let mut metadata: ToolMetadata = match def.metadata {
            None => ToolMetadata::default(),
            Some(m) => super::metadata::read_metadata(&label, &m)?,
        };
        if let Some(v) = def.needs_approval {
            metadata.needs_approval = Some(
                serde_json::from_value(v).map_err(|_| invalid_definition(format!("tool '{name}': needsApproval must be true, false or a function (args, ctx) => boolean")))?,
            );
        }
        let declaration = ToolDeclaration { name: name.clone(), description, input_schema, output_schema: def.output_schema, metadata };
        crate::declaration::check_declaration(&declaration)?;
        if matches!(origin, Origin::Local) && self.strict_schemas.load(Ordering::Relaxed) {
            crate::schema_keywords::check(&name, &declaration.input_schema, "inputSchema")?;
            if let Some(output) = &declaration.output_schema {
                crate::schema_keywords::check(&name, output, "outputSchema")?;
            }
        }
        let own_bound = self.max_schema_cost.load(Ordering::Relaxed);
        let id = self.next_tool.fetch_add(1, Ordering::Relaxed);
        let handler = Arc::new(HostHandler { id, released: self.released.clone() });
        let registered = match origin {
            Origin::Local if own_bound > 0 => self.registry.register_bounded_in(scope(session), declaration, handler, own_bound),
            Origin::Local => self.registry.register_in(scope(session), declaration, handler),
            Origin::Mounted { may_shadow } => self.registry.register_mounted_in(scope(session), declaration, handler, may_shadow, max_schema_cost),
        };
        match registered {
            Ok(d) => Ok(json!({ "toolId": id, "declaration": declaration_json(&d) })),
            Err(mut e) => {
                if e.code == RegistryErrorCode::DuplicateTool && matches!(origin, Origin::Local) {
                    let on = if session.is_some() { "session" } else { "registry" };
                    e.message.push_str(&format!(
                        ": to replace it (a hot reload registering its tools again, say), call {on}.unregister('{name}') first"
                    ));
                }
                // The handler was dropped with the refused tool: not a release the host
                // must hear of, since it never learnt the id.
                self.released.lock().unwrap_or_else(|e| e.into_inner()).retain(|r| *r != id);
                Err(e)
            }
        }
    }

    /// # Errors
    /// `SESSION_NOT_FOUND`.
    pub fn unregister(&self, session: Option<&str>, name: &str) -> Result<bool, RegistryError> {
        self.registry.unregister_in(scope(session), name)
    }

    /// Removes `name` from the scope only if it is still the tool `tool_id` (what a
    /// mount registered), never another registered later under that name.
    ///
    /// # Errors
    /// `SESSION_NOT_FOUND`.
    pub fn unregister_tool(&self, session: Option<&str>, name: &str, tool_id: u32) -> Result<bool, RegistryError> {
        self.registry.unregister_if(scope(session), name, |t| self::tool_id(t) == tool_id)
    }

    pub fn clear(&self) {
        self.registry.clear();
    }

    /// The declaration of a tool visible in the scope.
    pub fn get(&self, session: Option<&str>, name: &str) -> Option<Value> {
        self.registry.resolve(scope(session), name).ok().map(|t| declaration_json(&t.declaration))
    }

    pub fn has(&self, session: Option<&str>, name: &str) -> bool {
        self.registry.resolve(scope(session), name).is_ok()
    }

    /// The host tool id of the tool a call of `name` resolves to in the scope (0: none).
    pub fn tool_id(&self, session: Option<&str>, name: &str) -> u32 {
        self.registry.resolve(scope(session), name).map_or(0, |t| tool_id(&t))
    }

    /// Names visible in the scope (a destroyed session sees none).
    pub fn names(&self, session: Option<&str>) -> Vec<String> {
        let tools = self.registry.visible(scope(session)).unwrap_or_default();
        tools.iter().map(|t| t.name().to_string()).collect()
    }

    /// Names of a session's own tools.
    pub fn own_names(&self, session: &str) -> Vec<String> {
        let tools = self.registry.visible(Scope::Session(session)).unwrap_or_default();
        tools.iter().filter(|t| t.session_id.is_some()).map(|t| t.name().to_string()).collect()
    }

    /// Declarations visible in the scope, optionally only those of a category or a tag.
    pub fn declarations(&self, session: Option<&str>, category: Option<&str>, tag: Option<&str>) -> Value {
        let tools = self.registry.visible(scope(session)).unwrap_or_default();
        let m = |t: &&Arc<RegisteredTool>| {
            category.is_none_or(|c| t.declaration.metadata.category.as_deref() == Some(c))
                && tag.is_none_or(|g| t.declaration.metadata.tags.iter().any(|x| x == g))
        };
        Value::Array(tools.iter().filter(m).map(|t| declaration_json(&t.declaration)).collect())
    }

    /// Validates argument text ('' for none) against a tool's schema: every failure;
    /// arguments that are not JSON give one issue with keyword `json`.
    ///
    /// # Errors
    /// `TOOL_NOT_FOUND`, `SESSION_NOT_FOUND`.
    pub fn validate(&self, session: Option<&str>, name: &str, args: &str) -> Result<Vec<ValidationIssue>, RegistryError> {
        let tool = self.registry.resolve(scope(session), name)?;
        Ok(match crate::arguments::read_arguments(name, args) {
            Ok(v) => tool.schema.validate(&v),
            Err(e) => vec![ValidationIssue { path: String::new(), schema_path: String::new(), keyword: "json".into(), message: e.message }],
        })
    }

    pub fn create_session(&self, isolated: bool) -> String {
        self.registry.create_session(isolated)
    }

    pub fn session_isolated(&self, id: &str) -> Option<bool> {
        self.registry.session_is_isolated(id)
    }

    pub fn sessions(&self) -> Vec<String> {
        self.registry.sessions()
    }

    pub fn destroy_session(&self, id: &str) -> bool {
        self.registry.destroy_session(id)
    }

    /// Declarations visible in the scope in a provider's format: `openai`,
    /// `openai-responses`, `anthropic`, `gemini`, `ag-ui` or `mcp` (`mcp-served`: as an
    /// MCP server lists them, with `_meta`). Answers `{ tools, skipped }`: a mounted tool
    /// the format cannot take is left out, and `skipped` says why (a server's schema is
    /// not the developer's to fix, and one such tool failed the whole export, for every
    /// tool of every server and the registry's own).
    ///
    /// # Errors
    /// `INVALID_SCHEMA` when strict mode or Gemini's dialect cannot take a schema of a
    /// tool of the registry's own, or the provider refuses its root (`anyOf`, `oneOf`,
    /// `allOf`; for Gemini a free-form map).
    pub fn tools_out(&self, session: Option<&str>, format: &str, strict: bool) -> Result<Value, RegistryError> {
        let tools = self.registry.visible(scope(session)).unwrap_or_default();
        let mut decls: Vec<ToolDeclaration> = tools.iter().map(|t| t.declaration.clone()).collect();
        let mut skipped = Vec::new();
        let mut out = Self::format_tools(&decls, format, strict)?;
        if out.is_err() && tools.iter().any(|t| t.origin != Origin::Local) {
            decls.clear();
            for t in &tools {
                let one = std::slice::from_ref(&t.declaration);
                match Self::format_tools(one, format, strict)? {
                    Err(e) if t.origin != Origin::Local => skipped.push(Value::String(format!("the mounted tool '{}' was left out of the tool list: {e}", t.name()))),
                    _ => decls.push(t.declaration.clone()),
                }
            }
            out = Self::format_tools(&decls, format, strict)?;
        }
        let tools = out.map_err(|e| {
            let path = match &e {
                providers::ProviderError::UnsupportedSchema { schema_path, .. } => schema_path.clone(),
                _ => String::new(),
            };
            RegistryError::invalid_schema(e.to_string(), path)
        })?;
        Ok(json!({ "tools": tools, "skipped": skipped }))
    }

    /// `decls` in `format`; an unknown format is the outer error.
    fn format_tools(decls: &[ToolDeclaration], format: &str, strict: bool) -> Result<Result<Value, providers::ProviderError>, RegistryError> {
        Ok(match format {
            "openai" => providers::openai_chat_tools(decls, strict).map(Value::Array),
            "openai-responses" => providers::openai_responses_tools(decls, strict).map(Value::Array),
            "anthropic" => providers::anthropic_tools(decls).map(Value::Array),
            "gemini" => providers::gemini_tools(decls),
            "ag-ui" => Ok(Value::Array(providers::ag_ui_tools(decls))),
            "mcp" => Ok(Value::Array(providers::mcp_tools(decls))),
            // As a server lists them (`crate::mcp::listed_tool`).
            "mcp-served" => Ok(Value::Array(decls.iter().map(crate::mcp::listed_tool).collect())),
            other => return Err(RegistryError::new(RegistryErrorCode::InvalidConfig, format!("unknown tool format '{other}'"))),
        })
    }

    /// The tool calls of a model response, `[{ id, name, arguments, malformed, at?,
    /// refused? }]` with `arguments` as JSON text (the model's own text when it sent text
    /// that is malformed or that a value cannot hold exactly), so the host hands each
    /// call's arguments to `execute` as text. A call whose arguments are over
    /// [`crate::MAX_ARGUMENT_BYTES`] has `arguments: ""` and `refused`, the message of its
    /// `INVALID_ARGUMENTS` error: argument text that long is not parsed, and no call's
    /// text that long is handed back, so refusing it costs the host nothing more. For OpenAI providers, the `null`s strict mode makes
    /// a model send for optional properties are dropped first.
    ///
    /// The response is read as [`crate::json_text::payload_from_str`] reads it: a call's
    /// arguments may nest as deep as `execute`'s (the envelope does not count against
    /// them), and deeper ones are refused per call when executed. When a lone surrogate
    /// in the response was read as U+FFFD, a call whose arguments are a value of the
    /// response also gets `at`, their JSON pointer, so the host can hand on the value
    /// exactly as `JSON.parse` of the response gives it.
    ///
    /// # Errors
    /// `INVALID_CONFIG` for an unknown provider, `INVALID_TOOL_CALLS` for a response that
    /// holds no tool calls in its format.
    pub fn parse_calls(&self, session: Option<&str>, provider: &str, response: &str) -> Result<Value, RegistryError> {
        let calls_error = |m: String| RegistryError::new(RegistryErrorCode::InvalidToolCalls, m);
        let provider = Provider::from_str(provider).map_err(|e| RegistryError::new(RegistryErrorCode::InvalidConfig, e.to_string()))?;
        let not_json = |e: serde_json::Error| calls_error(format!("the response is not JSON: {e}"));
        let (payload, lossy, cuts) = crate::json_text::payload_cutting_from_str(response).map_err(not_json)?;
        let read = providers::parse_tool_calls(provider, &payload);
        drop(payload);
        // A cut is the arguments' own when it is inside a call's structured arguments:
        // the call is over the limit. A cut anywhere else (an envelope of a million
        // calls) changed what calls there are: then the response is read in full.
        let inside = |cut: &str, at: &str| cut.strip_prefix(at).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        let in_arguments = |calls: &[providers::ToolCall], cut: &str| calls.iter().any(|c| c.arguments_at.as_deref().is_some_and(|at| inside(cut, at)));
        let mut calls = match read {
            Ok(calls) if cuts.iter().all(|cut| in_arguments(&calls, cut)) => calls,
            _ if !cuts.is_empty() => {
                let (payload, _) = crate::json_text::payload_from_str(response).map_err(not_json)?;
                providers::parse_tool_calls(provider, &payload).map_err(|e| calls_error(e.to_string()))?
            }
            Err(e) => return Err(calls_error(e.to_string())),
            Ok(calls) => calls,
        };
        for call in &mut calls {
            let Some(at) = call.arguments_at.as_deref() else { continue };
            if let Some(cut) = cuts.iter().find(|cut| inside(cut, at)) {
                let part = if cut.len() == at.len() { "the root".to_string() } else { cut[at.len()..].to_string() };
                call.arguments = ToolCallArguments::Oversized { part: Some(part), bytes: 0 };
            }
        }
        if matches!(provider, Provider::OpenAi | Provider::OpenAiResponses) {
            for call in &mut calls {
                let Ok(tool) = self.registry.resolve(scope(session), &call.name) else { continue };
                let schema = &tool.declaration.input_schema;
                match &mut call.arguments {
                    // Arguments that lose a null no longer are the payload's: no `at`.
                    ToolCallArguments::Parsed(args) if lossy && call.arguments_at.is_some() => {
                        let before = args.clone();
                        providers::drop_optional_nulls(schema, args);
                        if *args != before {
                            call.arguments_at = None;
                        }
                    }
                    ToolCallArguments::Parsed(args) => providers::drop_optional_nulls(schema, args),
                    ToolCallArguments::Lossy { value, .. } => {
                        let mut dropped = value.clone();
                        providers::drop_optional_nulls(schema, &mut dropped);
                        if dropped != *value {
                            call.arguments = ToolCallArguments::Parsed(dropped);
                            call.arguments_at = None;
                        }
                    }
                    ToolCallArguments::Malformed { .. } | ToolCallArguments::Oversized { .. } => {}
                }
            }
        }
        let calls = calls.into_iter().map(|c| {
            let generated = providers::id_is_generated(provider, &c.id);
            let (arguments, malformed) = match c.arguments {
                ToolCallArguments::Parsed(v) => (Ok(v.to_string()), false),
                ToolCallArguments::Lossy { raw, .. } => (Ok(raw), false),
                ToolCallArguments::Malformed { raw, .. } => (Ok(raw), true),
                ToolCallArguments::Oversized { bytes, part } => (Err((bytes, part)), false),
            };
            // Structured arguments are measured as the text they become.
            let checked = match &arguments {
                Ok(text) => crate::arguments::check_size(&c.name, text.len()),
                Err((_, Some(part))) => Err(crate::arguments::oversized_part(&c.name, part)),
                Err((bytes, None)) => crate::arguments::check_size(&c.name, *bytes),
            };
            if let Err(e) = checked {
                return json!({ "id": c.id, "name": c.name, "arguments": "", "malformed": false, "refused": e.message, "generated": generated });
            }
            let arguments = arguments.unwrap_or_default();
            // `generated`: the provider gave no id, so the id cannot tell a replayed call.
            let mut call = json!({ "id": c.id, "name": c.name, "arguments": arguments, "malformed": malformed, "generated": generated });
            if let (true, Some(at)) = (lossy, c.arguments_at) {
                call["at"] = at.into();
            }
            call
        });
        Ok(Value::Array(calls.collect()))
    }

    /// The definition (JSON) a listed MCP tool (`tool`, its JSON) of server `server` is
    /// mounted with under `name`: [`crate::mcp::declaration_of`].
    ///
    /// # Errors
    /// `INVALID_DEFINITION` when `tool` is not JSON.
    pub fn mcp_declaration(tool: &str, name: &str, server: &str) -> Result<Value, RegistryError> {
        let tool = crate::json_text::parse(tool).map_err(|e| RegistryError::new(RegistryErrorCode::InvalidDefinition, format!("a listed MCP tool is not JSON: {e}")))?;
        serde_json::to_value(crate::mcp::declaration_of(&tool, name, server)).map_err(|e| RegistryError::new(RegistryErrorCode::InvalidDefinition, e.to_string()))
    }

    /// The text a model reads for a failed call: validation issues with the expected
    /// schema, the tools it could have called, the parse error of malformed text, or the
    /// failure's category and message.
    pub fn model_error_text(&self, session: Option<&str>, name: &str, arguments: &str, error: &ErrorFacts) -> String {
        // The model was sent more tools than the registry's (toolhost/ag-ui sends the
        // caller's too): the reply to a made-up name lists them all.
        if let (Some(available), "TOOL_NOT_FOUND") = (&error.available, error.code.as_str()) {
            return model_errors::unknown_tool(name, available);
        }
        model_errors::for_failure(&self.registry, scope(session), name, arguments, &error.category, &error.code, &error.message, error.retryable, &error.validation_errors)
    }

    /// The replies to send back, in the provider's format, for calls and their outcomes
    /// (`replies`: `[{ id, name, arguments, result?, error?, errorText?, modelOutput?,
    /// maxChars?, executionId? }]`, `result` as JSON, `modelOutput` what the tool's
    /// `toModelOutput` made of it, `errorText` what a `toModelError` wrote for `error`). The budget is the tool's `maxOutputChars`, else `maxChars` (the
    /// manager's).
    ///
    /// Answers `{ messages, problems }`: a `modelOutput` that is not a string or content
    /// parts does not fail the batch, whose tools have run: that reply is the result's
    /// JSON, and `problems` says why, for the host to report.
    ///
    /// # Errors
    /// `INVALID_CONFIG` for an unknown provider or replies that are not of that shape.
    pub fn format_replies(&self, session: Option<&str>, provider: &str, replies: &str) -> Result<Value, RegistryError> {
        let invalid = |m: String| RegistryError::new(RegistryErrorCode::InvalidConfig, m);
        let provider = Provider::from_str(provider).map_err(|e| invalid(e.to_string()))?;
        let outcomes = read_outcomes(replies).map_err(|e| invalid(format!("replies are not valid: {e}")))?;
        let mut replies = Vec::with_capacity(outcomes.len());
        let mut problems = Vec::new();
        for o in outcomes {
            let o = match o {
                Ok(o) => o,
                Err(Unread { id, name, execution_id, why }) => {
                    // The tool ran: its call still gets its reply, which says so.
                    problems.push(Value::String(format!("the result of '{name}' could not be sent to the model: {why}; the model was told the tool ran, not what it returned")));
                    let mut reply = ToolReply::err(id, &name, format!("The tool `{name}` ran, but its result could not be sent: {why}."));
                    reply.execution_id = execution_id;
                    replies.push(reply);
                    continue;
                }
            };
            let tool = self.registry.resolve(scope(session), &o.name).ok();
            let declared = tool.as_ref().and_then(|t| t.declaration.metadata.max_output_chars).map(|n| n as usize);
            let shown = match o.model_output.as_ref().map(ModelOutput::from_json).transpose() {
                Ok(shown) => shown,
                Err(e) => {
                    problems.push(Value::String(format!("the toModelOutput function of '{}' {e}: the result's JSON was sent instead", o.name)));
                    None
                }
            };
            let mut reply = match (o.error, o.error_text) {
                (None, _) => ToolReply::ok(o.id, o.name, o.result.unwrap_or(Value::Null)),
                // The host's `toModelError` wrote the text.
                (Some(_), Some(text)) => ToolReply::err(o.id, o.name, text),
                (Some(e), None) => {
                    let text = self.model_error_text(session, &o.name, &o.arguments, &e);
                    ToolReply::err(o.id, o.name, text)
                }
            };
            reply.shown = shown;
            reply.max_chars = declared.or(o.max_chars);
            reply.execution_id = o.execution_id;
            reply.structured = tool.is_some_and(|t| t.declaration.output_schema.is_some());
            replies.push(reply);
        }
        Ok(json!({ "messages": providers::format_replies(provider, &replies), "problems": problems }))
    }
}

/// The parts of a failed execution's error the model-facing text is written from.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct ErrorFacts {
    pub category: String,
    pub code: String,
    pub message: String,
    pub retryable: bool,
    pub validation_errors: Vec<ValidationIssue>,
    /// Every tool the model was sent, when that is more than the registry's tools: the
    /// reply to a call of a tool that does not exist lists these.
    pub available: Option<Vec<String>>,
}

/// The outcomes of a `replies` text, in order. An outcome that cannot be read whole (a
/// result nested deeper than serde_json's 128 levels, which `JSON.stringify` writes) is
/// its call's id and name with the reason, so that one result does not take the replies
/// of the calls beside it, which have run too. A lone surrogate reads as U+FFFD.
fn read_outcomes(replies: &str) -> serde_json::Result<Vec<Result<Outcome, Unread>>> {
    let whole = match crate::json_text::from_str_as::<Vec<Outcome>>(replies) {
        Ok(outcomes) => return Ok(outcomes.into_iter().map(Ok).collect()),
        Err(e) => e,
    };
    // Read again one outcome at a time: skipping a value to keep its text has no depth
    // limit (serde_json does it without recursion), nor has skipping a field.
    let Ok(each) = crate::json_text::from_str_as::<Vec<Box<serde_json::value::RawValue>>>(replies) else { return Err(whole) };
    each.iter()
        .map(|raw| match crate::json_text::from_str_as::<Outcome>(raw.get()) {
            Ok(o) => Ok(Ok(o)),
            Err(e) => {
                let Ok(head) = crate::json_text::from_str_as::<Head>(raw.get()) else { return Err(e) };
                let why = if e.to_string().starts_with("recursion limit exceeded") { "it nests more than 126 levels of JSON deep".to_string() } else { e.to_string() };
                Ok(Err(Unread { id: head.id, name: head.name, execution_id: head.execution_id, why }))
            }
        })
        .collect()
}

/// What is read of an outcome that could not be read whole.
struct Unread {
    id: String,
    name: String,
    execution_id: Option<String>,
    why: String,
}

#[derive(Deserialize)]
struct Head {
    id: String,
    name: String,
    #[serde(default, rename = "executionId")]
    execution_id: Option<String>,
}

#[derive(Deserialize)]
struct Outcome {
    id: String,
    name: String,
    #[serde(default)]
    arguments: String,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorFacts>,
    /// The text for the model a `toModelError` function wrote for `error`, when one did.
    #[serde(default, rename = "errorText")]
    error_text: Option<String>,
    #[serde(default, rename = "modelOutput")]
    model_output: Option<Value>,
    #[serde(default, rename = "maxChars")]
    max_chars: Option<usize>,
    #[serde(default, rename = "executionId")]
    execution_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_over_the_argument_limit_is_refused_by_its_size_and_not_handed_back() {
        let host = HostRegistry::new();
        let many_nulls = format!("{{\"a\":[{}null]}}", "null,".repeat(crate::MAX_ARGUMENT_BYTES / 5 + 1));
        let big_text = serde_json::to_string(&many_nulls).unwrap();
        let responses = [
            ("openai", format!(r#"{{"tool_calls":[{{"id":"a","type":"function","function":{{"name":"t","arguments":{big_text}}}}},{{"id":"b","type":"function","function":{{"name":"t","arguments":"{{}}"}}}}]}}"#)),
            ("anthropic", format!(r#"{{"content":[{{"type":"tool_use","id":"a","name":"t","input":{many_nulls}}},{{"type":"tool_use","id":"b","name":"t","input":{{}}}}]}}"#)),
        ];
        let messages = [
            format!("invalid arguments for tool 't': {} bytes of JSON exceed the 16777216-byte argument limit", many_nulls.len()),
            "invalid arguments for tool 't': the value at /a alone is more JSON than the 16777216-byte argument limit".to_string(),
        ];
        for ((provider, response), message) in responses.iter().zip(messages) {
            let calls = host.parse_calls(None, provider, response).unwrap();
            let refused = calls[0]["refused"].as_str().unwrap_or_else(|| panic!("{provider}: {}", calls[0]));
            assert_eq!(refused, message);
            assert_eq!(calls[0]["arguments"], "");
            assert_eq!(calls[1]["arguments"], "{}");
            assert!(calls[1].get("refused").is_none());
        }
        // Cut outside any call's arguments: the response is read again in full, and the
        // calls are what they are.
        let beside = format!(r#"{{"junk":{many_nulls},"content":[{{"type":"tool_use","id":"a","name":"t","input":{{"n":1}}}}]}}"#);
        let calls = host.parse_calls(None, "anthropic", &beside).unwrap();
        assert_eq!(calls[0]["arguments"], r#"{"n":1}"#);
        assert!(calls[0].get("refused").is_none());
    }

    #[test]
    fn a_made_up_name_s_reply_lists_every_tool_the_model_was_sent_when_told() {
        let host = HostRegistry::new();
        let facts = |available: Option<Vec<String>>| ErrorFacts { code: "TOOL_NOT_FOUND".into(), category: "not_found".into(), available, ..ErrorFacts::default() };
        // The registry has no tools; the model was also sent the caller's ask_user.
        let sent = Some(vec!["lookup".to_string(), "ask_user".to_string()]);
        let text = host.model_error_text(None, "ask_usr", "{}", &facts(sent));
        assert_eq!(text, "There is no tool named `ask_usr`. Available tools: `lookup`, `ask_user`. Did you mean `ask_user`? Call one of the available tools by its exact name.");
        let text = host.model_error_text(None, "ask_usr", "{}", &facts(None));
        assert!(text.contains("no tools are available"), "{text}");
        // formatReplies reads the same field.
        let replies = json!([{ "id": "c1", "name": "ask_usr", "error": { "code": "TOOL_NOT_FOUND", "category": "not_found", "available": ["lookup", "ask_user"] } }]);
        let out = host.format_replies(None, "openai", &replies.to_string()).unwrap();
        assert!(out["messages"][0]["content"].as_str().unwrap().contains("Did you mean `ask_user`?"), "{out}");
    }

    #[test]
    fn a_result_too_deep_to_read_gets_its_own_reply_and_leaves_the_others() {
        let host = HostRegistry::new();
        let deep = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
        // A result 126 levels deep is read (serde_json reads 127 in all, its outcome's
        // object one of them); one level more is not, and is told apart.
        for (levels, read) in [(126, true), (127, false), (5000, false)] {
            let replies = format!(r#"[{{"id":"a","name":"charge","result":{{"ok":true}},"executionId":"e1"}},{{"id":"b","name":"tree","result":{},"executionId":"e2"}},{{"id":"c","name":"charge","result":2}}]"#, deep(levels));
            let out = host.format_replies(None, "openai", &replies).unwrap();
            let messages = out["messages"].as_array().unwrap();
            assert_eq!(messages.iter().map(|m| m["tool_call_id"].as_str().unwrap()).collect::<Vec<_>>(), ["a", "b", "c"], "{levels}");
            assert_eq!(messages[0]["content"], r#"{"ok":true}"#);
            assert_eq!(messages[2]["content"], "2");
            let tree = messages[1]["content"].as_str().unwrap();
            if read {
                assert!(tree.starts_with("[[[") && out["problems"].as_array().unwrap().is_empty(), "{tree}");
            } else {
                assert_eq!(tree, "The tool `tree` ran, but its result could not be sent: it nests more than 126 levels of JSON deep.");
                assert_eq!(out["problems"][0], "the result of 'tree' could not be sent to the model: it nests more than 126 levels of JSON deep; the model was told the tool ran, not what it returned");
            }
        }
        // Replies that are not of the shape still fail the batch.
        let e = host.format_replies(None, "openai", &format!(r#"[{{"name":"tree","result":{}}}]"#, deep(200))).unwrap_err();
        assert!(e.message.starts_with("replies are not valid: recursion limit exceeded"), "{}", e.message);
    }

    #[test]
    fn an_export_s_invalid_schema_carries_the_path_it_names() {
        let host = HostRegistry::new();
        let root = json!({"name": "pick", "description": "d", "handler": true, "inputSchema": {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}});
        host.register(None, &root.to_string()).unwrap();
        let e = host.tools_out(None, "anthropic", false).unwrap_err();
        assert_eq!((e.code(), e.schema_path.as_deref()), ("INVALID_SCHEMA", Some("/anyOf")));
        assert!(e.message.contains("tool `pick`") && e.message.contains("#/anyOf"), "{}", e.message);
    }

    #[test]
    fn an_export_leaves_out_a_mounted_tool_it_cannot_take_and_refuses_one_of_the_registry_s_own() {
        let host = HostRegistry::new();
        let tool = |name: &str, schema: Value| json!({"name": name, "description": "d", "handler": true, "inputSchema": schema}).to_string();
        host.register(None, &tool("local", json!({"type": "object", "properties": {"q": {"type": "string"}}}))).unwrap();
        host.register_mounted(None, &tool("either", json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})), false, None).unwrap();
        host.register_mounted(None, &tool("remote", json!({"type": "object"})), false, None).unwrap();
        let out = host.tools_out(None, "anthropic", false).unwrap();
        let names: Vec<&str> = out["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["local", "remote"]);
        let skipped = out["skipped"][0].as_str().unwrap();
        assert!(skipped.starts_with("the mounted tool 'either' was left out of the tool list: ") && skipped.contains("#/anyOf"), "{skipped}");
        // Gemini's answer is an object; a format that takes every tool skips none.
        let gemini = host.tools_out(None, "gemini", false).unwrap();
        assert_eq!(gemini["tools"]["functionDeclarations"].as_array().unwrap().len(), 2);
        assert_eq!(host.tools_out(None, "mcp", false).unwrap()["skipped"], json!([]));
        // The registry's own tool is the developer's to fix: the export fails, naming it.
        host.register(None, &tool("own", json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}))).unwrap();
        let e = host.tools_out(None, "anthropic", false).unwrap_err();
        assert!(e.message.contains("tool `own`"), "{}", e.message);
    }

    #[test]
    fn schema_keyword_typos_are_refused_unless_the_registry_is_lenient_or_the_tool_mounted() {
        let definition = |name: &str| json!({"name": name, "description": "d", "handler": true, "inputSchema": {"type": "object", "requried": ["a"]}}).to_string();
        let host = HostRegistry::new();
        let e = host.register(None, &definition("a")).unwrap_err();
        assert_eq!((e.code(), e.schema_path.as_deref()), ("INVALID_SCHEMA", Some("/requried")));
        // A mounted server's schema is not the user's to fix.
        assert!(host.register_mounted(None, &definition("m"), false, None).is_ok());
        assert_eq!(host.configure(r#"{"strictSchema":false}"#).unwrap_err().message, "unknown option `strictSchema` in registry options; did you mean `strictSchemas`?");
        host.configure(r#"{"strictSchemas":false}"#).unwrap();
        assert!(host.register(None, &definition("a")).is_ok());
    }

    #[test]
    fn definition_keys_of_other_libraries_suggest_ours() {
        let host = HostRegistry::new();
        let e = host.register(None, &json!({"name": "t", "description": "d", "execute": "function"}).to_string()).unwrap_err();
        assert_eq!(e.message, "unknown option `execute` in tool 't'; did you mean `handler`? (the AI SDK's and the Agents SDK's `execute` is toolhost's `handler`)");
        let e = host.register(None, &json!({"name": "t", "description": "d", "handler": true, "schema": {}}).to_string()).unwrap_err();
        assert_eq!(e.message, "unknown option `schema` in tool 't'; did you mean `inputSchema`?");
        host.register(None, &json!({"name": "t", "description": "d", "handler": true}).to_string()).unwrap();
        let e = host.register(None, &json!({"name": "t", "description": "d", "handler": true}).to_string()).unwrap_err();
        assert!(e.message.ends_with("call registry.unregister('t') first"), "{}", e.message);
    }
}
