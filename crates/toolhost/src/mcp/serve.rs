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

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
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
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self { name: "toolhost".into(), version: env!("CARGO_PKG_VERSION").into(), session_id: None, instructions: None }
    }
}

/// An MCP server over an executor's tools: `server.serve(transport)` (rmcp's
/// [`rmcp::ServiceExt::serve`]) serves one connection; clone it for another.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
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
    /// The executor listener that sends progress ([`ToolExecutor::off_event`] when dropped).
    follows_progress: Mutex<Option<u64>>,
    /// Calls served, for their tool-call ids.
    calls: AtomicU64,
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
        let id = executor.on_event(move |event| {
            if let (ExecutionEvent::Progress { execution_id, progress, .. }, Some(shared)) = (event, weak.upgrade()) {
                shared.progressed(execution_id, progress);
            }
        });
        *lock(&shared.follows_progress) = Some(id);
        Ok(Self { shared })
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
        lock(&shared.progress).remove(&call_id);
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
