//! `RegistryCore`: the engine's registry for the JS runtime, with JSON text in and out
//! (see `toolhost::host::HostRegistry`, which says what each call takes and answers).

use napi_derive::napi;
use serde_json::Value;
use toolhost::host::{answer, HostRegistry};

/// The engine's registry (internal: the public `ToolRegistry` is in `js/registry.mjs`).
#[napi]
pub struct RegistryCore {
    pub(crate) inner: HostRegistry,
}

fn json(v: impl Into<Value>) -> String {
    v.into().to_string()
}

#[napi]
impl RegistryCore {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self { inner: HostRegistry::new() }
    }

    /// Applies the registry's options (`new ToolRegistry(options)` as JSON text):
    /// `{ ok: null }` or `{ error }`.
    #[napi]
    pub fn configure(&self, options: String) -> String {
        answer(self.inner.configure(&options))
    }

    /// `{ ok: { toolId, declaration } }` or `{ error: { code, message, schemaPath? } }`.
    #[napi]
    pub fn register(&self, session: Option<String>, definition: String) -> String {
        answer(self.inner.register(session.as_deref(), &definition))
    }

    /// As `register`, for a tool a mounted server declared: it never takes the place of
    /// a visible tool unless `mayShadow` lets it shadow a global one in a session, and
    /// its schemas must cost at most `maxSchemaCost` validation steps (Infinity: no bound).
    #[napi]
    pub fn register_mounted(&self, session: Option<String>, definition: String, may_shadow: bool, max_schema_cost: f64) -> String {
        let bound = max_schema_cost.is_finite().then_some(max_schema_cost.max(0.0) as u64);
        answer(self.inner.register_mounted(session.as_deref(), &definition, may_shadow, bound))
    }

    #[napi]
    pub fn unregister(&self, session: Option<String>, name: String) -> String {
        answer(self.inner.unregister(session.as_deref(), &name).map(Value::Bool))
    }

    /// Removes `name` only if it is still the tool `toolId`: `{ ok: boolean }`.
    #[napi]
    pub fn unregister_tool(&self, session: Option<String>, name: String, tool_id: u32) -> String {
        answer(self.inner.unregister_tool(session.as_deref(), &name, tool_id).map(Value::Bool))
    }

    #[napi]
    pub fn clear(&self) {
        self.inner.clear()
    }

    /// The declaration as JSON, or `undefined`.
    #[napi]
    pub fn get(&self, session: Option<String>, name: String) -> Option<String> {
        self.inner.get(session.as_deref(), &name).map(json)
    }

    /// The id of the tool `name` resolves to (0: none).
    #[napi]
    pub fn tool_id(&self, session: Option<String>, name: String) -> u32 {
        self.inner.tool_id(session.as_deref(), &name)
    }

    #[napi]
    pub fn has(&self, session: Option<String>, name: String) -> bool {
        self.inner.has(session.as_deref(), &name)
    }

    #[napi]
    pub fn names(&self, session: Option<String>) -> String {
        json(self.inner.names(session.as_deref()))
    }

    #[napi]
    pub fn own_names(&self, session: String) -> String {
        json(self.inner.own_names(&session))
    }

    #[napi]
    pub fn declarations(&self, session: Option<String>, category: Option<String>, tag: Option<String>) -> String {
        json(self.inner.declarations(session.as_deref(), category.as_deref(), tag.as_deref()))
    }

    #[napi]
    pub fn validate(&self, session: Option<String>, name: String, args: String) -> String {
        answer(self.inner.validate(session.as_deref(), &name, &args).map(|issues| serde_json::to_value(issues).unwrap_or_default()))
    }

    #[napi]
    pub fn create_session(&self, isolated: bool) -> String {
        self.inner.create_session(isolated)
    }

    #[napi]
    pub fn destroy_session(&self, id: String) -> bool {
        self.inner.destroy_session(&id)
    }

    #[napi]
    pub fn sessions(&self) -> String {
        json(self.inner.sessions())
    }

    #[napi]
    pub fn tools_out(&self, session: Option<String>, format: String, strict: bool) -> String {
        answer(self.inner.tools_out(session.as_deref(), &format, strict))
    }

    #[napi]
    pub fn parse_calls(&self, session: Option<String>, provider: String, response: String) -> String {
        answer(self.inner.parse_calls(session.as_deref(), &provider, &response))
    }

    #[napi]
    pub fn format_replies(&self, session: Option<String>, provider: String, replies: String) -> String {
        answer(self.inner.format_replies(session.as_deref(), &provider, &replies))
    }

    #[napi]
    pub fn model_error_text(&self, session: Option<String>, name: String, arguments: String, error: String) -> String {
        let facts = serde_json::from_str(&error).unwrap_or_default();
        self.inner.model_error_text(session.as_deref(), &name, &arguments, &facts)
    }

    /// The definition a listed MCP tool is mounted with (`js/mcp-mount.mjs`).
    #[napi]
    pub fn mcp_declaration(tool: String, name: String, server: String) -> String {
        answer(HostRegistry::mcp_declaration(&tool, &name, &server))
    }

    /// Ids of tools the engine no longer holds, as a JSON array.
    #[napi]
    pub fn take_released(&self) -> String {
        json(self.inner.take_released())
    }
}

/// "unknown option `x` in <what>; did you mean `y`?", as the engine words it for its own options.
#[napi]
pub fn unknown_option(key: String, known: Vec<String>, what: String) -> String {
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    toolhost::host::options::unknown_option(&key, &known, &what)
}

/// The one of `known` closest to the name `word` (a typo of it), by the engine's measure, if any.
#[napi]
pub fn closest_name(word: String, known: Vec<String>) -> Option<String> {
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    toolhost::host::options::closest_name(&word, &known).map(str::to_owned)
}
