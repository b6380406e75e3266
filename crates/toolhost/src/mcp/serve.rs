//! Serving a registry's tools over MCP (feature `mcp`): [`McpServer`] is an rmcp server
//! handler, so it serves over any rmcp server transport (stdio, a pair of streams,
//! Streamable HTTP with rmcp's own features). Each `tools/call` runs through a
//! [`ToolExecutor`]: validation, retries, timeouts, events and audit as for a local call;
//! the client's `notifications/cancelled` cancels it, and its progress goes to the client.
//!
//! Listings and replies are JS `createMcpServer`'s ([`super::listed_tool`],
//! [`super::success_result`], [`super::error_result`]), so a toolhost mount, JS or Rust,
//! reads the values, metadata and errors back whole.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitationAction, Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{error_result, listed_tool, meta, success_result};
use crate::engine::CallOptions;
use crate::error::{ErrorCategory, ToolError};
use crate::executor::ToolExecutor;
use crate::providers::model_errors;
use crate::record::ExecutionEvent;
use crate::registry::{Scope, ToolRegistry};

/// How a server names itself and what it serves.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The server's name in its `initialize` answer.
    pub name: String,
    pub version: String,
    /// Serve this session's tools (the global ones it sees included) instead of the global tools.
    pub session_id: Option<String>,
    /// The `instructions` of the `initialize` answer.
    pub instructions: Option<String>,
    /// Who decides the approval of a served call that needs one.
    pub approval: Approval,
    /// How long a served call waits for approval when neither its tool nor the executor
    /// bounds the wait (`None`: as long as they say).
    pub approval_timeout: Option<Duration>,
    /// The most served calls of one connection (an MCP session) that wait for approval
    /// at once; the next is denied.
    pub max_pending_approvals: usize,
}

/// Who decides the approval of a call that arrives over MCP (JS `approval`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Approval {
    /// The executor's own `approve` and `deny`, as for any call.
    #[default]
    Manager,
    /// The MCP client, asked through elicitation; a client that cannot be asked gets
    /// the call denied, saying so.
    Elicit,
    /// Nobody: every such call is denied, with a reply saying why.
    Deny,
    /// Everybody: such calls run without asking.
    Allow,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            name: "toolhost".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            session_id: None,
            instructions: None,
            approval: Approval::Manager,
            approval_timeout: Some(Duration::from_millis(APPROVAL_TIMEOUT_MS)),
            max_pending_approvals: MAX_PENDING_APPROVALS,
        }
    }
}

/// How long a served call waits for approval by default (as JS `approvalTimeoutMs`).
pub const APPROVAL_TIMEOUT_MS: u64 = 300_000;
/// How many served calls may wait for approval at once by default (JS `maxPendingApprovals`).
pub const MAX_PENDING_APPROVALS: usize = 16;

/// An MCP server over an executor's tools: `server.serve(transport)` (rmcp's
/// [`rmcp::ServiceExt::serve`]) serves one connection; clone it for another. Each clone
/// is a connection of its own: `max_pending_approvals` and request ids in use are
/// counted per connection (an MCP session).
pub struct McpServer {
    shared: Arc<Shared>,
    /// This handler's connection, among the server's.
    connection: u64,
}

impl Clone for McpServer {
    /// Another connection's handler, sharing the server (its tools, executor, options).
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone(), connection: self.shared.connections.fetch_add(1, Ordering::Relaxed) }
    }
}

struct Shared {
    executor: ToolExecutor,
    registry: ToolRegistry,
    options: ServeOptions,
    /// Clients connected, told when the tools change.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// A change notification is on its way: a burst of changes sends one.
    notifying: AtomicBool,
    /// Where the progress of each call in flight that asked for it goes (in order, to its
    /// client), with its progress token, by its tool-call id.
    progress: Mutex<HashMap<String, (ProgressToken, mpsc::UnboundedSender<ProgressNotificationParam>)>>,
    follows_registry: Mutex<Option<u64>>,
    /// The executor listener that sends progress and decides approvals (taken off with
    /// [`ToolExecutor::off_event`] when dropped).
    follows_progress: Mutex<Option<u64>>,
    /// Calls served, for their tool-call ids.
    calls: AtomicU64,
    /// Handlers made, for their connection numbers.
    connections: AtomicU64,
    /// The calls in flight, by tool-call id: the client each came from, and the timer
    /// that denies its approval when nobody answers.
    served: Mutex<HashMap<String, Served>>,
}

/// A served call in flight: its entries go when this does.
struct InFlight<'a> {
    shared: &'a Shared,
    call_id: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        lock(&self.shared.progress).remove(&self.call_id);
        if let Some(timer) = lock(&self.shared.served).remove(&self.call_id).and_then(|s| s.approval_timer) {
            timer.abort();
        }
    }
}

struct Served {
    peer: Peer<RoleServer>,
    /// The connection it came on, and its request id there.
    connection: u64,
    request: rmcp::model::RequestId,
    approval_timer: Option<tokio::task::AbortHandle>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(id) = lock(&self.follows_registry).take() {
            self.registry.unsubscribe(id);
        }
        if let Some(id) = lock(&self.follows_progress).take() {
            self.executor.off_event(id);
        }
    }
}

impl McpServer {
    /// A server of `executor`'s tools.
    ///
    /// # Errors
    /// `INVALID_CONFIG` for a `session_id` the registry does not have.
    // ToolError is the public error type, unboxed as every handler returns it.
    #[allow(clippy::result_large_err)]
    pub fn new(executor: &ToolExecutor, options: ServeOptions) -> Result<Self, ToolError> {
        let registry = executor.registry();
        if let Some(id) = &options.session_id {
            if !registry.has_session(id) {
                let mut e = ToolError::new(ErrorCategory::Permanent, "INVALID_CONFIG", format!("McpServer: session '{id}' does not exist or was destroyed"));
                e.retryable = false;
                return Err(e);
            }
        }
        let shared = Arc::new(Shared {
            executor: executor.clone(),
            registry: registry.clone(),
            options,
            peers: Mutex::new(Vec::new()),
            notifying: AtomicBool::new(false),
            progress: Mutex::new(HashMap::new()),
            follows_registry: Mutex::new(None),
            follows_progress: Mutex::new(None),
            calls: AtomicU64::new(1),
            connections: AtomicU64::new(1),
            served: Mutex::new(HashMap::new()),
        });
        let weak = Arc::downgrade(&shared);
        let id = registry.subscribe_without_names(move |change| {
            if let Some(shared) = weak.upgrade() {
                if change.session_id.is_none() || change.session_id == shared.options.session_id {
                    Shared::tools_changed(&shared);
                }
            }
        });
        *lock(&shared.follows_registry) = Some(id);
        let weak: Weak<Shared> = Arc::downgrade(&shared);
        let id = executor.on_event(move |event| match event {
            ExecutionEvent::Progress { execution_id, progress, .. } => {
                if let Some(shared) = weak.upgrade() {
                    shared.progressed(execution_id, progress);
                }
            }
            ExecutionEvent::ApprovalRequested { execution, approval_id } => {
                let (Some(shared), Some(call)) = (weak.upgrade(), execution.tool_call_id.clone()) else { return };
                if !lock(&shared.served).contains_key(&call) {
                    return;
                }
                // Decided after the event is delivered: the executor is still delivering it.
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let (approval_id, execution) = (approval_id.clone(), execution.clone());
                    runtime.spawn(async move { shared.decide(&call, &approval_id, &execution).await });
                }
            }
            _ => {}
        });
        *lock(&shared.follows_progress) = Some(id);
        Ok(Self { shared, connection: 0 })
    }

    fn scope(&self) -> Scope<'_> {
        match &self.shared.options.session_id {
            Some(id) => Scope::Session(id),
            None => Scope::Global,
        }
    }
}

impl Shared {
    /// Tells every client the tools changed, once for a burst of changes.
    fn tools_changed(shared: &Arc<Self>) {
        if shared.notifying.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            shared.notifying.store(false, Ordering::Release);
            return;
        };
        let shared = shared.clone();
        runtime.spawn(async move {
            tokio::task::yield_now().await;
            shared.notifying.store(false, Ordering::Release);
            let peers = {
                let mut peers = lock(&shared.peers);
                peers.retain(|p| !p.is_transport_closed());
                peers.clone()
            };
            for peer in peers {
                let _ = peer.notify_tool_list_changed().await;
            }
        });
    }

    /// Approves or denies, unless someone else already did (or the call ended).
    fn answer(&self, approval_id: &str, approve: bool, text: String) {
        let answered = if approve {
            self.executor.approve(approval_id, None, Some(text))
        } else {
            self.executor.deny(approval_id, Some(text), Some("toolhost/mcp".into()))
        };
        if let Err(e) = answered {
            if e.code != "APPROVAL_NOT_FOUND" {
                tracing::warn!("toolhost: answering an approval over MCP failed: {}", e.message);
            }
        }
    }

    /// Decides the approval `approval_id` of served call `call`, as `options.approval` says.
    async fn decide(self: &Arc<Self>, call: &str, approval_id: &str, execution: &crate::record::ExecutionRecord) {
        match self.options.approval {
            Approval::Deny => return self.answer(approval_id, false, "this MCP server does not take approvals (approval: Deny)".into()),
            Approval::Allow => return self.answer(approval_id, true, "toolhost/mcp (approval: Allow)".into()),
            Approval::Manager | Approval::Elicit => {}
        }
        let waiting = self.executor.pending_approvals();
        // Decided (or ended) meanwhile: nothing to do.
        let Some(mine) = waiting.iter().find(|p| p.approval_id == approval_id) else { return };
        let pending = {
            let served = lock(&self.served);
            let Some(connection) = served.get(call).map(|s| s.connection) else { return };
            waiting.iter().filter(|p| p.tool_call_id.as_ref().and_then(|c| served.get(c)).is_some_and(|s| s.connection == connection)).count()
        };
        let max = self.options.max_pending_approvals;
        if pending > max {
            return self.answer(approval_id, false, format!("more than {max} calls of this MCP session wait for approval (max_pending_approvals)"));
        }
        if let (None, Some(timeout)) = (mine.expires_at, self.options.approval_timeout) {
            // Neither the tool nor the executor bounds the wait: calls over MCP wait this long.
            let (shared, id) = (self.clone(), approval_id.to_string());
            let timer = tokio::spawn(async move {
                tokio::time::sleep(timeout).await;
                shared.answer(&id, false, format!("nobody answered within {} ms (approval_timeout of calls over MCP)", timeout.as_millis()));
            });
            match lock(&self.served).get_mut(call) {
                Some(served) => served.approval_timer = Some(timer.abort_handle()),
                None => timer.abort(),
            }
        }
        if self.options.approval != Approval::Elicit {
            return;
        }
        let Some(peer) = lock(&self.served).get(call).map(|s| s.peer.clone()) else { return };
        if peer.peer_info().is_none_or(|i| i.capabilities.elicitation.is_none()) {
            return self.answer(approval_id, false, "the MCP client cannot be asked (it does not support elicitation)".into());
        }
        let mut args = execution.args.to_value().to_string();
        if args.chars().count() > 2000 {
            args = format!("{}…", args.chars().take(2000).collect::<String>());
        }
        let message = format!("Allow the tool '{}' to run with these arguments?\n{args}", execution.tool_name);
        let request = serde_json::json!({ "mode": "form", "message": message, "requestedSchema": { "type": "object", "properties": {} } });
        let asked = match serde_json::from_value(request) {
            Ok(params) => peer.create_elicitation(params).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match asked {
            Ok(r) if r.action == ElicitationAction::Accept => self.answer(approval_id, true, "the MCP client".into()),
            Ok(r) => self.answer(approval_id, false, format!("the MCP client answered {}", serde_json::to_value(r.action).ok().and_then(|a| a.as_str().map(str::to_string)).unwrap_or_default())),
            Err(e) => self.answer(approval_id, false, format!("asking the MCP client failed: {e}")),
        }
    }

    /// Sends a call's progress to the client that asked for it.
    fn progressed(&self, execution_id: &str, progress: &crate::record::Progress) {
        // Nobody here asked for progress: no lookup.
        if lock(&self.progress).is_empty() {
            return;
        }
        let Some(record) = self.executor.execution(execution_id) else { return };
        let Some(call) = record.tool_call_id.as_deref() else { return };
        let Some((token, to_client)) = lock(&self.progress).get(call).cloned() else { return };
        let mut params = ProgressNotificationParam::new(token, progress.progress);
        params.total = progress.total;
        params.message = progress.message.clone();
        let _ = to_client.send(params);
    }
}

fn rpc_error(e: serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("the reply could not be written: {e}"), None)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new(self.shared.options.name.clone(), self.shared.options.version.clone());
        info.instructions = self.shared.options.instructions.clone();
        info
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        lock(&self.shared.peers).push(context.peer);
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        let tools = self.shared.registry.visible(self.scope()).map_err(|e| ErrorData::invalid_request(e.message, None))?;
        let listed: Vec<Value> = tools.iter().map(|t| listed_tool(&t.declaration)).collect();
        serde_json::from_value(serde_json::json!({ "tools": listed })).map_err(rpc_error)
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let shared = &self.shared;
        let name = request.name.to_string();
        let scope = self.scope();
        if let Some(id) = shared.options.session_id.as_deref().filter(|id| !shared.registry.has_session(id)) {
            return Err(ErrorData::invalid_request(format!("session '{id}' was destroyed"), None));
        }
        if shared.registry.resolve(scope, &name).is_err() {
            let text = model_errors::for_failure(&shared.registry, scope, &name, "", "not_found", "TOOL_NOT_FOUND", "", false, &[]);
            return Err(ErrorData::invalid_params(text, None));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        // The execution's tool-call id: the request's id, made unique (request ids repeat
        // across connections), so that its progress finds its client.
        let call_id = format!("mcp-{}-{}", shared.calls.fetch_add(1, Ordering::Relaxed), context.id);
        let sent_key = request.meta.as_ref().and_then(|m| m.get(meta::IDEMPOTENCY_KEY)).and_then(Value::as_str).filter(|k| !k.is_empty() && k.len() <= 512);
        let options = CallOptions {
            tool_call_id: Some(call_id.clone()),
            session_id: shared.options.session_id.clone(),
            idempotency_key: Some(sent_key.map_or_else(|| format!("mcp-call:{}", uuid::Uuid::new_v4()), str::to_string)),
            ..CallOptions::default()
        };
        {
            let mut served = lock(&shared.served);
            // A client that reuses the id of a call still running would get one answer for
            // two requests.
            if served.values().any(|s| s.connection == self.connection && s.request == context.id) {
                let shown: String = context.id.to_string().chars().take(40).collect();
                return Err(ErrorData::invalid_request(format!("request id {shown} is already in use by a call in flight"), None));
            }
            served.insert(call_id.clone(), Served { peer: context.peer.clone(), connection: self.connection, request: context.id.clone(), approval_timer: None });
        }
        // Forgets the call however this future ends (dropped included).
        let entry = InFlight { shared, call_id: call_id.clone() };
        // Progress goes out in order, and all of it before the answer.
        let forwarder = context.meta.get_progress_token().map(|token| {
            let (to_client, mut reports) = mpsc::unbounded_channel();
            lock(&shared.progress).insert(call_id.clone(), (token, to_client));
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(report) = reports.recv().await {
                    let _ = peer.notify_progress(report).await;
                }
            })
        });
        // Cancelled when the client sends notifications/cancelled or goes.
        let outcome = shared.executor.execute_with(&name, args.clone(), options, context.ct.clone()).await;
        // Its progress sender goes with it: the forwarder ends once it sent what is queued.
        drop(entry);
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        let reply = match outcome.result() {
            Ok(value) => {
                let tool = shared.registry.resolve(scope, &name).ok();
                success_result(value, tool.as_ref().map(|t| &t.declaration), &outcome.record.id)
            }
            Err(error) => {
                let category = error.category.as_str();
                let text = model_errors::for_failure(&shared.registry, scope, &name, &args.to_string(), category, &error.code, &error.message, error.retryable, &error.validation_errors);
                error_result(&text, error)
            }
        };
        let result: CallToolResult = serde_json::from_value(reply).map_err(rpc_error)?;
        Ok(CallToolResponse::Complete(result))
    }
}
