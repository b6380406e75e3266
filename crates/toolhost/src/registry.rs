//! The tool registry: global tools plus per-session tool sets.
//!
//! Visibility rules:
//! - a session's own tools are visible only inside that session;
//! - global tools are visible in every session not created `isolated`;
//! - inside a session, its own tool shadows a global tool of the same name;
//! - a *mounted* tool (one another server declared, see [`Origin`]) never takes the
//!   place of a tool already visible where it is registered, and inside a session a
//!   global tool registered later wins over it, unless its mount allowed that name to
//!   shadow ([`Origin::Mounted`]`{ may_shadow: true }`). A remote server cannot make a
//!   session's call of `transfer` reach it instead of the local `transfer` and its
//!   approval.
//!
//! Every mutation either succeeds whole or changes nothing. Change listeners run after
//! the registry's lock is released, so a listener may call back into the registry.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::declaration::{check_declaration, ToolDeclaration};
use crate::error::{RegistryError, RegistryErrorCode};
use crate::handler::ToolHandler;
use crate::schema::{CompiledSchema, ValidationIssue};

/// A tool ready to run: its declaration, its compiled schema and its handler.
pub struct RegisteredTool {
    pub declaration: ToolDeclaration,
    pub schema: CompiledSchema,
    /// The compiled `outputSchema`, when the tool declares one.
    pub output: Option<CompiledSchema>,
    pub handler: Arc<dyn ToolHandler>,
    /// The session that owns the tool, `None` for a global tool.
    pub session_id: Option<String>,
    /// Where its declaration comes from.
    pub origin: Origin,
}

/// Where a tool's declaration comes from: the developer, or a server it was mounted
/// from, which the registry does not trust to take the place of other tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Origin {
    #[default]
    Local,
    /// Declared by a mounted (remote) server. `may_shadow`: the mount allowed this name,
    /// explicitly, to shadow a global tool inside its session.
    Mounted { may_shadow: bool },
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool").field("name", &self.declaration.name).field("session_id", &self.session_id).finish()
    }
}

impl RegisteredTool {
    pub fn name(&self) -> &str {
        &self.declaration.name
    }

    /// A mounted tool that may not shadow a global tool of its name.
    fn yields_to_global(&self) -> bool {
        self.origin == Origin::Mounted { may_shadow: false }
    }
}

/// What changed, as sent to change listeners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryChange {
    /// `registered`, `unregistered`, `cleared` or `session-destroyed`.
    pub action: &'static str,
    pub tool_name: Option<String>,
    /// The names registered in the changed scope after the change (for
    /// `session-destroyed`, the session's own tools), in registration order.
    pub tool_names: Vec<String>,
    pub session_id: Option<String>,
}

type ChangeListener = Arc<dyn Fn(&RegistryChange) + Send + Sync>;


/// One scope's tools by name, in registration order. Every operation but listing costs
/// the same at 10 or 10,000 tools: the order is a map from a registration number, so
/// removing a tool does not shift the others.
#[derive(Default)]
struct ToolScope {
    /// Names come from the developer registering tools, so the cheap Fx hash is safe
    /// (a model-supplied name is only ever looked up).
    tools: FxHashMap<String, (u64, Arc<RegisteredTool>)>,
    order: BTreeMap<u64, Arc<RegisteredTool>>,
    next: u64,
}

impl ToolScope {
    fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name).map(|(_, t)| t)
    }

    fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    fn insert(&mut self, tool: Arc<RegisteredTool>) {
        let n = self.next;
        self.next += 1;
        self.order.insert(n, tool.clone());
        self.tools.insert(tool.name().to_string(), (n, tool));
    }

    fn remove(&mut self, name: &str) -> bool {
        match self.tools.remove(name) {
            Some((n, _)) => {
                self.order.remove(&n);
                true
            }
            None => false,
        }
    }

    fn in_order(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.order.values()
    }

    fn names(&self) -> Vec<String> {
        self.in_order().map(|t| t.name().to_string()).collect()
    }
}

struct SessionScope {
    isolated: bool,
    scope: ToolScope,
    /// Its key in `State::session_order`.
    created: u64,
}

impl SessionScope {
    /// The tool `name` means in this session: its own, unless that is a mounted tool
    /// that yields to a global one of the same name; else the global one (none when
    /// isolated).
    fn resolve<'a>(&'a self, global: &'a ToolScope, name: &str) -> Option<&'a Arc<RegisteredTool>> {
        let global_tool = || if self.isolated { None } else { global.get(name) };
        match self.scope.get(name) {
            Some(own) if own.yields_to_global() => global_tool().or(Some(own)),
            Some(own) => Some(own),
            None => global_tool(),
        }
    }

    /// Whether the session's own `name` is shown in its place (not yielding to a global).
    fn shows_own(&self, global: &ToolScope, name: &str) -> bool {
        self.scope.get(name).is_some_and(|own| !(own.yields_to_global() && !self.isolated && global.contains(name)))
    }
}

#[derive(Default)]
struct State {
    global: ToolScope,
    sessions: HashMap<String, SessionScope>,
    session_order: BTreeMap<u64, String>,
    next_session: u64,
}

/// Where an operation applies: the global scope or one session.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    Global,
    Session(&'a str),
}

/// Tools by name. Cloning gives another handle to the same registry.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    state: Arc<RwLock<State>>,
    /// (id, whether it receives `tool_names`, listener)
    listeners: Arc<Mutex<Vec<(u64, bool, ChangeListener)>>>,
    /// How many listeners receive `RegistryChange::tool_names`: while none does, a change
    /// does not list the scope's names (that would make each operation O(tools)).
    name_listeners: Arc<AtomicUsize>,
}

fn session_not_found(id: &str) -> RegistryError {
    RegistryError::new(RegistryErrorCode::SessionNotFound, format!("session '{id}' does not exist or was destroyed"))
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool globally.
    ///
    /// # Errors
    /// `INVALID_TOOL_NAME`, `INVALID_DEFINITION`, `INVALID_SCHEMA` or `DUPLICATE_TOOL`;
    /// the registry is unchanged on error.
    pub fn register(&self, declaration: ToolDeclaration, handler: Arc<dyn ToolHandler>) -> Result<ToolDeclaration, RegistryError> {
        self.register_in(Scope::Global, declaration, handler)
    }

    /// Registers a tool whose handler is an async closure: the explicit form, for a
    /// hand-written [`ToolDeclaration`].
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_async<F, Fut>(&self, declaration: ToolDeclaration, f: F) -> Result<ToolDeclaration, RegistryError>
    where
        F: Fn(Value, crate::handler::ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, crate::error::ToolError>> + Send + 'static,
    {
        self.register(declaration, crate::handler::handler_fn(f))
    }

    /// Registers a tool in a scope. See [`ToolRegistry::register`].
    ///
    /// # Errors
    /// As [`ToolRegistry::register`], plus `SESSION_NOT_FOUND`.
    pub fn register_in(
        &self,
        scope: Scope<'_>,
        declaration: ToolDeclaration,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<ToolDeclaration, RegistryError> {
        self.register_from(scope, declaration, handler, Origin::Local, None)
    }

    /// Registers a tool in a scope, its schemas held to `max_schema_cost` validation steps
    /// (see [`crate::schema_cost`], [`Bound::Registry`](crate::schema_cost::Bound)): a
    /// registry that bounds the validation cost of its own schemas.
    ///
    /// # Errors
    /// As [`ToolRegistry::register_in`]; `INVALID_SCHEMA` for a schema over the bound.
    pub fn register_bounded_in(
        &self,
        scope: Scope<'_>,
        declaration: ToolDeclaration,
        handler: Arc<dyn ToolHandler>,
        max_schema_cost: u64,
    ) -> Result<ToolDeclaration, RegistryError> {
        let costs = schema_costs(&declaration, max_schema_cost, crate::schema_cost::Bound::Registry)?;
        self.register_from(scope, declaration, handler, Origin::Local, Some(costs))
    }

    /// Registers a tool another server declared (see [`Origin::Mounted`]): refused where
    /// its name already means a tool, in the scope or (for a session) among the global
    /// tools the session sees, unless `may_shadow` allows it to shadow a global one.
    /// Its schemas must cost at most `max_schema_cost` validation steps (see
    /// [`crate::schema_cost`]; `None` for no bound): another party wrote them.
    ///
    /// # Errors
    /// As [`ToolRegistry::register_in`]; `DUPLICATE_TOOL` naming the tool it would replace;
    /// `INVALID_SCHEMA` for a schema over the bound.
    pub fn register_mounted_in(
        &self,
        scope: Scope<'_>,
        declaration: ToolDeclaration,
        handler: Arc<dyn ToolHandler>,
        may_shadow: bool,
        max_schema_cost: Option<u64>,
    ) -> Result<ToolDeclaration, RegistryError> {
        let costs = max_schema_cost.map(|limit| schema_costs(&declaration, limit, crate::schema_cost::Bound::Mounted)).transpose()?;
        self.register_from(scope, declaration, handler, Origin::Mounted { may_shadow }, costs)
    }

    fn register_from(
        &self,
        scope: Scope<'_>,
        declaration: ToolDeclaration,
        handler: Arc<dyn ToolHandler>,
        origin: Origin,
        costs: Option<SchemaCosts>,
    ) -> Result<ToolDeclaration, RegistryError> {
        check_declaration(&declaration)?;
        // Compile outside the lock: a large schema must not stall concurrent lookups.
        let mut schema = CompiledSchema::compile(&declaration.name, &declaration.input_schema)?;
        let mut output = declaration.output_schema.as_ref().map(|o| CompiledSchema::compile_output(&declaration.name, o)).transpose()?;
        if let Some(c) = costs {
            let all = c.limit.saturating_mul(crate::schema_cost::WORK_FACTOR);
            schema.bound_work(c.input, all);
            if let (Some(o), Some(steps)) = (output.as_mut(), c.output) {
                o.bound_work(steps, all);
            }
        }
        let session_id = match scope {
            Scope::Global => None,
            Scope::Session(id) => Some(id.to_string()),
        };
        let tool = Arc::new(RegisteredTool { declaration: declaration.clone(), schema, output, handler, session_id, origin });
        let change = {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            if let (Origin::Mounted { may_shadow: false }, Scope::Session(id)) = (origin, scope) {
                let state = &*state;
                let session = state.sessions.get(id).ok_or_else(|| session_not_found(id))?;
                if !session.isolated && state.global.contains(&declaration.name) {
                    return Err(RegistryError::new(
                        RegistryErrorCode::DuplicateTool,
                        format!(
                            "a mounted tool may not take the place of the global tool '{}' in session '{id}' (allow it by name with the mount's `shadow` option)",
                            declaration.name
                        ),
                    ));
                }
            }
            let target = match scope {
                Scope::Global => &mut state.global,
                Scope::Session(id) => &mut state.sessions.get_mut(id).ok_or_else(|| session_not_found(id))?.scope,
            };
            if target.contains(&declaration.name) {
                return Err(RegistryError::new(
                    RegistryErrorCode::DuplicateTool,
                    format!("a tool named '{}' is already registered", declaration.name),
                ));
            }
            target.insert(tool);
            RegistryChange {
                action: "registered",
                tool_name: Some(declaration.name.clone()),
                tool_names: self.names_for_listeners(target),
                session_id: scope_id(scope),
            }
        };
        self.notify(&change);
        Ok(declaration)
    }

    /// Removes a global tool. Returns whether it was there.
    pub fn unregister(&self, name: &str) -> bool {
        self.unregister_in(Scope::Global, name).unwrap_or(false)
    }

    /// Removes a tool from a scope. Returns whether it was there.
    ///
    /// # Errors
    /// `SESSION_NOT_FOUND`.
    pub fn unregister_in(&self, scope: Scope<'_>, name: &str) -> Result<bool, RegistryError> {
        let change = {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            let target = match scope {
                Scope::Global => &mut state.global,
                Scope::Session(id) => &mut state.sessions.get_mut(id).ok_or_else(|| session_not_found(id))?.scope,
            };
            if !target.remove(name) {
                return Ok(false);
            }
            RegistryChange {
                action: "unregistered",
                tool_name: Some(name.to_string()),
                tool_names: self.names_for_listeners(target),
                session_id: scope_id(scope),
            }
        };
        self.notify(&change);
        Ok(true)
    }

    /// Removes `name` from a scope only if it is still the tool `which` says: a mount
    /// removing what it mounted never removes a tool registered later under that name.
    ///
    /// # Errors
    /// `SESSION_NOT_FOUND`.
    pub fn unregister_if(&self, scope: Scope<'_>, name: &str, which: impl Fn(&RegisteredTool) -> bool) -> Result<bool, RegistryError> {
        let change = {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            let target = match scope {
                Scope::Global => &mut state.global,
                Scope::Session(id) => &mut state.sessions.get_mut(id).ok_or_else(|| session_not_found(id))?.scope,
            };
            if !target.get(name).is_some_and(|t| which(t)) || !target.remove(name) {
                return Ok(false);
            }
            RegistryChange {
                action: "unregistered",
                tool_name: Some(name.to_string()),
                tool_names: self.names_for_listeners(target),
                session_id: scope_id(scope),
            }
        };
        self.notify(&change);
        Ok(true)
    }

    /// Removes every global tool. Sessions keep their own tools.
    pub fn clear(&self) {
        let change = {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            state.global = ToolScope::default();
            RegistryChange { action: "cleared", tool_name: None, tool_names: Vec::new(), session_id: None }
        };
        self.notify(&change);
    }

    /// Finds the tool a call names, as seen from a scope.
    ///
    /// # Errors
    /// `SESSION_NOT_FOUND` or `TOOL_NOT_FOUND`.
    pub fn resolve(&self, scope: Scope<'_>, name: &str) -> Result<Arc<RegisteredTool>, RegistryError> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        match scope {
            Scope::Global => state.global.get(name).cloned(),
            Scope::Session(id) => {
                let session = state.sessions.get(id).ok_or_else(|| session_not_found(id))?;
                session.resolve(&state.global, name).cloned()
            }
        }
        .ok_or_else(|| match scope {
            Scope::Global => RegistryError::not_found(name),
            Scope::Session(id) => {
                RegistryError::new(RegistryErrorCode::ToolNotFound, format!("tool '{name}' is not visible in session '{id}'"))
            }
        })
    }

    /// Every tool visible from a scope, in registration order (session tools first).
    ///
    /// # Errors
    /// `SESSION_NOT_FOUND`.
    pub fn visible(&self, scope: Scope<'_>) -> Result<Vec<Arc<RegisteredTool>>, RegistryError> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        match scope {
            Scope::Global => Ok(state.global.in_order().cloned().collect()),
            Scope::Session(id) => {
                let session = state.sessions.get(id).ok_or_else(|| session_not_found(id))?;
                let mut tools: Vec<_> = session.scope.in_order().filter(|t| session.shows_own(&state.global, t.name())).cloned().collect();
                if !session.isolated {
                    tools.extend(state.global.in_order().filter(|t| !session.shows_own(&state.global, t.name())).cloned());
                }
                Ok(tools)
            }
        }
    }

    /// The declaration of a global tool, `None` when absent.
    pub fn get(&self, name: &str) -> Option<ToolDeclaration> {
        self.resolve(Scope::Global, name).ok().map(|t| t.declaration.clone())
    }

    pub fn has(&self, name: &str) -> bool {
        self.resolve(Scope::Global, name).is_ok()
    }

    /// Names of the global tools in registration order.
    pub fn names(&self) -> Vec<String> {
        self.state.read().unwrap_or_else(|e| e.into_inner()).global.names()
    }

    /// Declarations of the global tools in registration order.
    pub fn declarations(&self) -> Vec<ToolDeclaration> {
        self.visible(Scope::Global).unwrap_or_default().iter().map(|t| t.declaration.clone()).collect()
    }

    pub fn by_category(&self, category: &str) -> Vec<ToolDeclaration> {
        self.declarations().into_iter().filter(|d| d.metadata.category.as_deref() == Some(category)).collect()
    }

    pub fn by_tag(&self, tag: &str) -> Vec<ToolDeclaration> {
        self.declarations().into_iter().filter(|d| d.metadata.tags.iter().any(|t| t == tag)).collect()
    }

    /// Validates arguments against a tool's schema, returning every failure.
    ///
    /// # Errors
    /// `TOOL_NOT_FOUND` or `SESSION_NOT_FOUND`.
    pub fn validate(&self, scope: Scope<'_>, name: &str, args: &Value) -> Result<Vec<ValidationIssue>, RegistryError> {
        Ok(self.resolve(scope, name)?.schema.validate(args))
    }

    /// Creates a session and returns its id (a UUID v4).
    pub fn create_session(&self, isolated: bool) -> String {
        let id = crate::ids::new_v4_string();
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let created = state.next_session;
        state.next_session += 1;
        state.sessions.insert(id.clone(), SessionScope { isolated, scope: ToolScope::default(), created });
        state.session_order.insert(created, id.clone());
        id
    }

    pub fn has_session(&self, id: &str) -> bool {
        self.state.read().unwrap_or_else(|e| e.into_inner()).sessions.contains_key(id)
    }

    pub fn session_is_isolated(&self, id: &str) -> Option<bool> {
        self.state.read().unwrap_or_else(|e| e.into_inner()).sessions.get(id).map(|s| s.isolated)
    }

    /// Ids of the live sessions, oldest first.
    pub fn sessions(&self) -> Vec<String> {
        self.state.read().unwrap_or_else(|e| e.into_inner()).session_order.values().cloned().collect()
    }

    /// Destroys a session and frees its tools. Returns `false` when it was already gone.
    /// Executors listening for `session-destroyed` cancel the session's executions.
    pub fn destroy_session(&self, id: &str) -> bool {
        let change = {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            let Some(session) = state.sessions.remove(id) else {
                return false;
            };
            state.session_order.remove(&session.created);
            RegistryChange {
                action: "session-destroyed",
                tool_name: None,
                tool_names: session.scope.names(),
                session_id: Some(id.to_string()),
            }
        };
        self.notify(&change);
        true
    }

    /// Calls `listener` after every change. Returns an id for [`ToolRegistry::unsubscribe`].
    ///
    /// While a listener is subscribed, each change lists the names in its scope
    /// ([`RegistryChange::tool_names`]), which costs time in proportion to them.
    pub fn subscribe(&self, listener: impl Fn(&RegistryChange) + Send + Sync + 'static) -> u64 {
        self.name_listeners.fetch_add(1, Ordering::Relaxed);
        self.add_listener(Arc::new(listener), true)
    }

    /// Like [`ToolRegistry::subscribe`] for a listener that never reads `tool_names`
    /// (an executor following destroyed sessions): changes are not listed for it.
    pub(crate) fn subscribe_without_names(&self, listener: impl Fn(&RegistryChange) + Send + Sync + 'static) -> u64 {
        self.add_listener(Arc::new(listener), false)
    }

    fn add_listener(&self, listener: ChangeListener, names: bool) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        self.listeners.lock().unwrap_or_else(|e| e.into_inner()).push((id, names, listener));
        id
    }

    pub fn unsubscribe(&self, id: u64) -> bool {
        let mut listeners = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = listeners.iter().position(|(l, _, _)| *l == id) else { return false };
        if listeners.remove(i).1 {
            self.name_listeners.fetch_sub(1, Ordering::Relaxed);
        }
        true
    }

    /// The names of `scope` in registration order when a listener receives them, else none.
    fn names_for_listeners(&self, scope: &ToolScope) -> Vec<String> {
        if self.name_listeners.load(Ordering::Relaxed) > 0 {
            scope.names()
        } else {
            Vec::new()
        }
    }

    fn notify(&self, change: &RegistryChange) {
        let listeners: Vec<ChangeListener> =
            self.listeners.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(_, _, l)| l.clone()).collect();
        for listener in listeners {
            listener(change);
        }
    }
}

fn scope_id(scope: Scope<'_>) -> Option<String> {
    match scope {
        Scope::Global => None,
        Scope::Session(id) => Some(id.to_string()),
    }
}

/// The validation cost of a tool's schemas, in steps per value path, and the bound they
/// were held to.
#[derive(Clone, Copy)]
struct SchemaCosts {
    input: u64,
    output: Option<u64>,
    limit: u64,
}

/// Refuses a declaration whose schemas cost more than `limit` (see
/// [`crate::schema_cost::check`]), else their costs.
fn schema_costs(declaration: &ToolDeclaration, limit: u64, bound: crate::schema_cost::Bound) -> Result<SchemaCosts, RegistryError> {
    let input = crate::schema_cost::check(&declaration.name, "inputSchema", &declaration.input_schema, limit, bound)?;
    let output = declaration.output_schema.as_ref().map(|o| crate::schema_cost::check(&declaration.name, "outputSchema", o, limit, bound)).transpose()?;
    Ok(SchemaCosts { input, output, limit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::handler_fn;
    use serde_json::json;

    fn decl(name: &str, description: &str) -> ToolDeclaration {
        ToolDeclaration::new(name, description, json!({ "type": "object" }))
    }

    fn noop() -> Arc<dyn ToolHandler> {
        handler_fn(|_args, _ctx| async { Ok(json!(null)) })
    }

    #[test]
    fn a_mounted_tool_never_takes_the_place_of_a_visible_tool() {
        let r = ToolRegistry::new();
        r.register(decl("transfer", "local"), noop()).unwrap();
        let s = r.create_session(false);
        let e = r.register_mounted_in(Scope::Session(&s), decl("transfer", "remote"), noop(), false, None).unwrap_err();
        assert_eq!(e.code, RegistryErrorCode::DuplicateTool);
        assert!(e.message.contains("may not take the place of the global tool 'transfer'"), "{}", e.message);
        assert!(r.register_mounted_in(Scope::Global, decl("transfer", "remote"), noop(), false, None).is_err());
        assert_eq!(r.resolve(Scope::Session(&s), "transfer").unwrap().declaration.description, "local");
        // An isolated session sees no global tool: nothing to take the place of.
        let isolated = r.create_session(true);
        assert!(r.register_mounted_in(Scope::Session(&isolated), decl("transfer", "remote"), noop(), false, None).is_ok());
        // Allowed by name, it shadows as a session's own tool does.
        let allowed = r.create_session(false);
        r.register_mounted_in(Scope::Session(&allowed), decl("transfer", "remote"), noop(), true, None).unwrap();
        assert_eq!(r.resolve(Scope::Session(&allowed), "transfer").unwrap().declaration.description, "remote");
    }

    #[test]
    fn a_global_tool_registered_later_wins_over_a_mounted_one_in_the_session() {
        let r = ToolRegistry::new();
        let s = r.create_session(false);
        r.register_mounted_in(Scope::Session(&s), decl("transfer", "remote"), noop(), false, None).unwrap();
        assert_eq!(r.resolve(Scope::Session(&s), "transfer").unwrap().declaration.description, "remote");
        r.register(decl("transfer", "local"), noop()).unwrap();
        assert_eq!(r.resolve(Scope::Session(&s), "transfer").unwrap().declaration.description, "local");
        let visible: Vec<_> = r.visible(Scope::Session(&s)).unwrap().iter().map(|t| t.declaration.description.clone()).collect();
        assert_eq!(visible, ["local"]);
        // Once the global one goes, the mounted one is seen again.
        r.unregister("transfer");
        assert_eq!(r.resolve(Scope::Session(&s), "transfer").unwrap().declaration.description, "remote");
    }

    #[test]
    fn unregister_if_removes_only_the_tool_it_names() {
        let r = ToolRegistry::new();
        r.register(decl("lookup", "first"), noop()).unwrap();
        assert!(!r.unregister_if(Scope::Global, "lookup", |t| t.declaration.description == "other").unwrap());
        assert!(r.has("lookup"));
        assert!(r.unregister_if(Scope::Global, "lookup", |t| t.declaration.description == "first").unwrap());
        assert!(!r.has("lookup"));
    }
}
