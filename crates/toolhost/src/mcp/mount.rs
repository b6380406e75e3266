//! Mounting a remote MCP server (feature `mcp`): its tools registered in a
//! [`ToolRegistry`] as tools whose handlers send `tools/call` through `rmcp`, so the
//! local executor validates first, then applies its retries, timeouts, cancellation
//! (sent on as `notifications/cancelled`), events and audit as for any tool.
//!
//! As in JS (`mountMcp`), a mounted server is untrusted: its tools never take the place
//! of a tool already visible where they are mounted (`shadow` allows it by name), their
//! schemas are bounded in size and validation cost, a listing is bounded in tools and
//! time, and a tool that cannot be mounted is skipped and listed in
//! [`McpMount::skipped`], never failing the mount.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientConfig, ClientRequest, ErrorCode, Implementation, ListToolsRequest,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, RequestMetaObject, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};

use super::{declaration_of, defaults, is_tool_name, local_name, meta, remote_error, value_of_result};
use crate::error::{ErrorCategory, ToolError};
use crate::handler::{BoxFuture, ProgressSink, ToolContext, ToolHandler};
use crate::host::options::closest_name;
use crate::registry::{Scope, ToolRegistry};

/// How a mount is made: where its tools go, which it takes, and what it takes at most.
/// Fields left out take [`MountOptions::default`].
#[derive(Clone, Debug)]
pub struct MountOptions {
    /// Put before each remote name (then characters a name may not have become `_`).
    pub prefix: String,
    /// Mount into this session of the registry instead of its global tools.
    pub session_id: Option<String>,
    /// Only these remote tools (by remote name), when given.
    pub include: Option<Vec<String>>,
    /// Not these remote tools (by remote name).
    pub exclude: Vec<String>,
    /// Local names allowed to shadow a global tool in the session (see `session_id`).
    pub shadow: Vec<String>,
    /// How long one `tools/call` may wait for its answer (`None`: no bound here; the
    /// executor's timeout still applies).
    pub request_timeout: Option<Duration>,
    /// How long the handshake (`initialize`) may take.
    pub connect_timeout: Duration,
    /// Whether the server's progress notifications are reported as the call's progress.
    pub progress: bool,
    /// The most tools taken from one listing.
    pub max_tools: usize,
    /// How long one listing (all its pages) may take; what was listed by then is used.
    pub list_timeout: Duration,
    /// A longer description is cut to this many characters.
    pub max_description_chars: usize,
    /// A tool whose schemas are more characters of JSON than this is skipped.
    pub max_schema_chars: usize,
    /// A tool whose schemas cost more validation steps than this is skipped (`None`: no bound).
    pub max_schema_cost: Option<u64>,
}

impl Default for MountOptions {
    fn default() -> Self {
        Self {
            prefix: String::new(),
            session_id: None,
            include: None,
            exclude: Vec::new(),
            shadow: Vec::new(),
            request_timeout: None,
            connect_timeout: Duration::from_millis(defaults::CONNECT_TIMEOUT_MS),
            progress: true,
            max_tools: defaults::MAX_TOOLS,
            list_timeout: Duration::from_millis(defaults::LIST_TIMEOUT_MS),
            max_description_chars: defaults::MAX_DESCRIPTION_CHARS,
            max_schema_chars: defaults::MAX_SCHEMA_CHARS,
            max_schema_cost: Some(defaults::MAX_SCHEMA_COST),
        }
    }
}

/// A remote tool that could not be mounted, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// What a refresh changed, by local name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub updated: Vec<String>,
}

/// A mounted server: [`mount_mcp`] makes one. Keep it while its tools should be there:
/// dropping its last clone unmounts (the tools are removed and the connection closes),
/// as [`McpMount::unmount`] does.
#[derive(Clone)]
pub struct McpMount {
    shared: Arc<Shared>,
}

struct Shared {
    registry: ToolRegistry,
    options: MountOptions,
    /// The server as it names itself, else "over rmcp".
    label: String,
    /// The connection in use (another after a reconnection) with its number, and its
    /// service (`None` once unmounted).
    peer: StdMutex<(Peer<RoleClient>, u64)>,
    service: StdMutex<Option<RunningService<RoleClient, MountClient>>>,
    /// Makes a new connection ([`mount_mcp_with`]); `None`: the first one is the only one.
    reconnect: Option<Connect>,
    /// Held while reconnecting: one reconnection at a time.
    reconnecting: tokio::sync::Mutex<()>,
    /// The client side's shared parts, for a new connection's client.
    back: Arc<StdMutex<Weak<Shared>>>,
    progress: Progress,
    /// Held through a refresh: refreshes run one at a time.
    state: tokio::sync::Mutex<State>,
    /// What the last refresh left, readable without waiting for one.
    seen: StdMutex<Seen>,
    /// The registry listener that unmounts when the session goes.
    follows_session: StdMutex<Option<u64>>,
}

#[derive(Default)]
struct State {
    /// Local name, in the server's order, with what it was mounted from.
    mounted: Vec<(String, Mounted)>,
}

struct Mounted {
    /// The tool's JSON as listed (a refresh re-registers it only when this changed).
    json: String,
    /// The handler this mount registered under the name. Weak, yet its allocation stays
    /// while this is held, so no later tool's handler can have its address.
    handler: Weak<dyn ToolHandler>,
}

#[derive(Default, Clone)]
struct Seen {
    tools: Vec<String>,
    skipped: Vec<Skipped>,
    warnings: Vec<String>,
}

/// What one listing brought: the tools (JSON) within the limits, those that are not MCP
/// tools, and the names of both.
#[derive(Default)]
struct Listing {
    tools: Vec<Value>,
    skipped: Vec<Skipped>,
    /// In the server's order.
    names: Vec<String>,
}

/// Progress sinks of the calls in flight, by the progress token rmcp gave each request.
type Progress = Arc<StdMutex<HashMap<ProgressToken, ProgressSink>>>;

/// Connects a new client to the server: [`mount_mcp_with`]'s `connect`, typed away.
type Connect = Box<dyn Fn(MountClient) -> BoxFuture<Result<RunningService<RoleClient, MountClient>, String>> + Send + Sync>;

fn lock<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The rmcp client side of a mount: it reports progress to the calls, and lists the
/// tools again when the server says they changed.
struct MountClient {
    progress: Progress,
    mount: Arc<StdMutex<Weak<Shared>>>,
}

impl ClientHandler for MountClient {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let sink = lock(&self.progress).get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            (sink.0)(crate::record::Progress { progress: params.progress, total: params.total, message: params.message });
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let shared = lock(&self.mount).upgrade();
        if let Some(shared) = shared {
            // Not awaited here: the refresh's own requests are answered through the loop
            // that called this.
            tokio::spawn(McpMount { shared }.refresh_in_background());
        }
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("toolhost", env!("CARGO_PKG_VERSION"));
        info
    }
}

/// Connects to an MCP server over `transport` (any rmcp client transport: a child
/// process, Streamable HTTP, a pair of streams) and registers its tools in `registry`
/// as `options` say. A connection that closes stays closed: each call then fails
/// `MCP_CONNECTION_CLOSED` (transient). [`mount_mcp_with`] reconnects.
///
/// # Errors
/// `INVALID_CONFIG` for options that cannot work (a `max_*` or timeout of 0, a
/// `session_id` the registry does not have, a `prefix` no name may start with);
/// `MCP_CONNECTION_FAILED`, transient, when the server cannot be reached or its tools
/// cannot be listed.
pub async fn mount_mcp<T, E, A>(registry: &ToolRegistry, transport: T, options: MountOptions) -> Result<McpMount, ToolError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    check_options(registry, &options)?;
    let (progress, back) = (Progress::default(), Arc::new(StdMutex::new(Weak::new())));
    let client = MountClient { progress: progress.clone(), mount: back.clone() };
    let service = handshake(client.serve(transport), options.connect_timeout).await.map_err(|why| connection_failed("over rmcp", &why))?;
    mount_over(registry, service, None, options, progress, back).await
}

/// [`mount_mcp`] over the transports `connect` makes, one now and another whenever the
/// connection in use has closed (the server's process died, say): the next call, or
/// [`McpMount::refresh`], reconnects, and the tools are listed again. A call in flight
/// when the connection closed fails `MCP_CONNECTION_CLOSED` (transient), so the
/// executor's retries send it again on the new connection.
///
/// ```no_run
/// # async fn f(registry: toolhost::ToolRegistry) -> Result<(), toolhost::ToolError> {
/// use toolhost::mcp::{mount_mcp_with, rmcp::transport::TokioChildProcess, MountOptions};
/// let mount = mount_mcp_with(&registry, || async {
///     TokioChildProcess::new(tokio::process::Command::new("my-mcp-server"))
/// }, MountOptions::default()).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`mount_mcp`]; `connect`'s error is `MCP_CONNECTION_FAILED`.
pub async fn mount_mcp_with<F, Fut, T, E, A>(registry: &ToolRegistry, connect: F, options: MountOptions) -> Result<McpMount, ToolError>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = std::io::Result<T>> + Send + 'static,
    T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    A: Send + 'static,
{
    check_options(registry, &options)?;
    let timeout = options.connect_timeout;
    let connect: Connect = Box::new(move |client: MountClient| {
        let transport = connect();
        Box::pin(async move {
            let transport = transport.await.map_err(|e| e.to_string())?;
            handshake(client.serve(transport), timeout).await
        })
    });
    let (progress, back) = (Progress::default(), Arc::new(StdMutex::new(Weak::new())));
    let client = MountClient { progress: progress.clone(), mount: back.clone() };
    let service = connect(client).await.map_err(|why| connection_failed("over rmcp", &why))?;
    mount_over(registry, service, Some(connect), options, progress, back).await
}

/// The handshake, within `timeout`; why it failed.
async fn handshake<S, E: std::fmt::Display>(serve: impl std::future::Future<Output = Result<S, E>>, timeout: Duration) -> Result<S, String> {
    match tokio::time::timeout(timeout, serve).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("it did not answer initialize within connect_timeout ({} ms)", timeout.as_millis())),
    }
}

fn label_of(peer: &Peer<RoleClient>) -> String {
    peer.peer_info().and_then(|i| i.server_info.as_ref().map(|s| s.name.clone())).filter(|n| !n.is_empty()).unwrap_or_else(|| "over rmcp".into())
}

async fn mount_over(
    registry: &ToolRegistry,
    service: RunningService<RoleClient, MountClient>,
    reconnect: Option<Connect>,
    options: MountOptions,
    progress: Progress,
    back: Arc<StdMutex<Weak<Shared>>>,
) -> Result<McpMount, ToolError> {
    let peer = service.peer().clone();
    let label = label_of(&peer);
    let shared = Arc::new(Shared {
        registry: registry.clone(),
        options,
        label,
        peer: StdMutex::new((peer, 0)),
        service: StdMutex::new(Some(service)),
        reconnect,
        reconnecting: tokio::sync::Mutex::new(()),
        back: back.clone(),
        progress,
        state: tokio::sync::Mutex::new(State::default()),
        seen: StdMutex::new(Seen::default()),
        follows_session: StdMutex::new(None),
    });
    *lock(&back) = Arc::downgrade(&shared);
    if let Some(session) = shared.options.session_id.clone() {
        let weak = Arc::downgrade(&shared);
        let listener = registry.subscribe_without_names(move |change| {
            if change.action == "session-destroyed" && change.session_id.as_deref() == Some(session.as_str()) {
                // The session's tools went with it: the connection goes too.
                if let (Some(shared), Ok(runtime)) = (weak.upgrade(), tokio::runtime::Handle::try_current()) {
                    runtime.spawn(async move { McpMount { shared }.unmount().await });
                }
            }
        });
        *lock(&shared.follows_session) = Some(listener);
    }
    let mount = McpMount { shared };
    if let Err(e) = mount.refresh().await {
        let label = mount.shared.label.clone();
        mount.unmount().await;
        return Err(connection_failed(&label, &e.message));
    }
    Ok(mount)
}

fn connection_failed(label: &str, why: &str) -> ToolError {
    let label = if label == "over rmcp" { label.to_string() } else { format!("'{label}'") };
    ToolError::new(ErrorCategory::Transient, "MCP_CONNECTION_FAILED", format!("mount_mcp: could not list the tools of MCP server {label}: {why}"))
}

fn invalid_config(message: String) -> ToolError {
    let mut e = ToolError::new(ErrorCategory::Permanent, "INVALID_CONFIG", format!("mount_mcp: {message}"));
    e.retryable = false;
    e
}

// ToolError is the public error type mount_mcp returns, unboxed as everywhere else.
#[allow(clippy::result_large_err)]
fn check_options(registry: &ToolRegistry, o: &MountOptions) -> Result<(), ToolError> {
    for (field, value) in [("max_tools", o.max_tools), ("max_description_chars", o.max_description_chars), ("max_schema_chars", o.max_schema_chars)] {
        if value == 0 {
            return Err(invalid_config(format!("{field} must be at least 1")));
        }
    }
    if o.max_schema_cost == Some(0) || o.list_timeout.is_zero() || o.connect_timeout.is_zero() || o.request_timeout.is_some_and(|t| t.is_zero()) {
        return Err(invalid_config("max_schema_cost, list_timeout, connect_timeout and request_timeout must be more than 0".into()));
    }
    if let Some(id) = &o.session_id {
        if !registry.has_session(id) {
            return Err(invalid_config(format!("session '{id}' does not exist or was destroyed")));
        }
    }
    // A prefix that leaves no room for a name, or has a character no name may have,
    // would skip every tool.
    if !is_tool_name(&format!("{}x", o.prefix)) {
        return Err(invalid_config(format!("prefix '{}' must be at most 63 letters, digits, _ or -, so that tool names can start with it", o.prefix)));
    }
    Ok(())
}

impl McpMount {
    /// Local names of the mounted tools, in the server's order.
    pub fn tools(&self) -> Vec<String> {
        lock(&self.shared.seen).tools.clone()
    }

    /// Remote tools the last listing had that could not be mounted.
    pub fn skipped(&self) -> Vec<Skipped> {
        lock(&self.shared.seen).skipped.clone()
    }

    /// What the last listing cut (a listing stopped at a limit, a description cut), and
    /// names of `include`, `exclude` or `shadow` it matched nothing with.
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.shared.seen).warnings.clone()
    }

    /// What the server said of itself at the handshake: its name, version and capabilities.
    pub fn server_info(&self) -> Option<Arc<rmcp::model::ServerPeerInfo>> {
        self.shared.peer().peer_info()
    }

    /// The rmcp peer in use, for requests toolhost does not make (resources, prompts).
    pub fn peer(&self) -> Peer<RoleClient> {
        self.shared.peer()
    }

    /// Lists the remote tools again and updates the mounted set. A server's
    /// `notifications/tools/list_changed` does this by itself.
    ///
    /// # Errors
    /// The listing's error (nothing changes then); `MCP_UNMOUNTED` after [`McpMount::unmount`].
    pub async fn refresh(&self) -> Result<MountChanges, ToolError> {
        let shared = &self.shared;
        let mut state = shared.state.lock().await;
        if lock(&shared.service).is_none() {
            return Err(unmounted("refresh"));
        }
        let mut notes = Vec::new();
        let Listing { tools: listed, mut skipped, names } = shared.list(&mut notes).await?;
        let o = &shared.options;
        // In the server's order, and where each local name is in it.
        let mut wanted: Vec<(String, Value, String)> = Vec::new();
        let mut wanted_at: HashMap<String, usize> = HashMap::new();
        for mut tool in listed {
            let remote = tool["name"].as_str().unwrap_or_default().to_string();
            if o.include.as_ref().is_some_and(|names| !names.contains(&remote)) || o.exclude.contains(&remote) {
                continue;
            }
            let name = local_name(&o.prefix, &remote);
            if !is_tool_name(&name) {
                let shown: String = name.chars().take(80).collect();
                skipped.push(Skipped { name: cut(&remote, 200), reason: format!("its local name '{shown}' is not 1 to 64 letters, digits, _ or -") });
                continue;
            }
            if let Some(&at) = wanted_at.get(&name) {
                let taken: &(String, Value, String) = &wanted[at];
                skipped.push(Skipped { name: remote.clone(), reason: format!("its local name '{name}' is taken by the remote tool '{}'", taken.1["name"].as_str().unwrap_or_default()) });
                continue;
            }
            let schema_chars = ["inputSchema", "outputSchema"].iter().filter_map(|k| tool.get(*k)).map(|s| js_len(&s.to_string())).sum::<usize>();
            if schema_chars > o.max_schema_chars {
                skipped.push(Skipped { name: remote.clone(), reason: format!("its schemas are {schema_chars} characters of JSON, more than max_schema_chars ({})", o.max_schema_chars) });
                continue;
            }
            if let Some(description) = tool.get("description").and_then(Value::as_str) {
                let chars = js_len(description);
                if chars > o.max_description_chars {
                    notes.push(format!(
                        "the description of tool '{remote}' of MCP server {} is {chars} characters: cut to max_description_chars ({})",
                        shared.label, o.max_description_chars
                    ));
                    let kept = cut_utf16(description, o.max_description_chars - 1);
                    tool["description"] = Value::String(format!("{kept}…"));
                }
            }
            let json = tool.to_string();
            wanted_at.insert(name.clone(), wanted.len());
            wanted.push((name, tool, json));
        }
        unmatched(o, &shared.label, &names, &wanted_at, &mut notes);
        let scope = shared.scope();
        let mut changes = MountChanges::default();
        let mut changed = Vec::new();
        let old = std::mem::take(&mut state.mounted);
        let mut kept: HashMap<String, Mounted> = HashMap::new();
        for (name, m) in old {
            match wanted_at.get(&name).map(|&at| &wanted[at]) {
                Some((_, _, json)) if *json == m.json => {
                    kept.insert(name, m);
                }
                found => {
                    shared.unregister(scope, &name, &m.handler);
                    if found.is_some() {
                        changed.push(name);
                    } else {
                        changes.removed.push(name);
                    }
                }
            }
        }
        let mut mounted = Vec::new();
        for (name, tool, json) in wanted {
            if let Some(m) = kept.remove(&name) {
                mounted.push((name, m));
                continue;
            }
            let remote = tool["name"].as_str().unwrap_or_default().to_string();
            let declaration = declaration_of(&tool, &name, &shared.label);
            let handler: Arc<dyn ToolHandler> = Arc::new(MountedTool { shared: Arc::downgrade(shared), remote: remote.clone() });
            let ours = Arc::downgrade(&handler);
            // Never in the place of a tool already visible here, unless allowed by name.
            let may_shadow = o.shadow.contains(&name);
            match shared.registry.register_mounted_in(scope, declaration, handler, may_shadow, o.max_schema_cost) {
                Ok(_) => {
                    let was_changed = changed.contains(&name);
                    mounted.push((name.clone(), Mounted { json, handler: ours }));
                    if was_changed { changes.updated.push(name) } else { changes.added.push(name) }
                }
                Err(e) => {
                    skipped.push(Skipped { name: remote, reason: format!("{}: {}", e.code.as_str(), e.message) });
                    if changed.contains(&name) {
                        changes.removed.push(name);
                    }
                }
            }
        }
        let tools = mounted.iter().map(|(n, _)| n.clone()).collect();
        state.mounted = mounted;
        for note in &notes {
            tracing::warn!(server = %shared.label, "toolhost: {note}");
        }
        if !skipped.is_empty() {
            tracing::warn!(server = %shared.label, skipped = skipped.len(), "toolhost: tools of MCP server {} could not be mounted (see McpMount::skipped)", shared.label);
        }
        *lock(&shared.seen) = Seen { tools, skipped, warnings: notes };
        Ok(changes)
    }

    /// [`McpMount::refresh`] as a task of its own (its failure only logged). Boxed: the
    /// refresh may reconnect, and a reconnection starts one of these.
    fn refresh_in_background(self) -> BoxFuture<()> {
        Box::pin(async move {
            if let Err(e) = self.refresh().await {
                if e.code != "MCP_UNMOUNTED" {
                    tracing::warn!(server = %self.shared.label, "toolhost: refreshing the tools of MCP server {} failed: {}", self.shared.label, e.message);
                }
            }
        })
    }

    /// Removes the tools this mount registered (a tool registered later under one of
    /// their names stays) and closes the connection. Calling it again does nothing.
    pub async fn unmount(&self) {
        let shared = &self.shared;
        let service = {
            // Under the refresh lock: a refresh waiting for it then sees the mount gone.
            let mut state = shared.state.lock().await;
            let Some(service) = lock(&shared.service).take() else { return };
            shared.forget(std::mem::take(&mut state.mounted));
            lock(&shared.seen).tools.clear();
            service
        };
        let _ = service.cancel().await;
    }

    /// Whether [`McpMount::unmount`] was called.
    pub fn is_unmounted(&self) -> bool {
        lock(&self.shared.service).is_none()
    }
}

fn unmounted(what: &str) -> ToolError {
    let mut e = ToolError::new(ErrorCategory::Permanent, "MCP_UNMOUNTED", format!("{what}: the MCP server was unmounted"));
    e.retryable = false;
    e
}

/// Whether `handler` is the one `ours` points to.
fn is_ours(handler: &Arc<dyn ToolHandler>, ours: &Weak<dyn ToolHandler>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(handler), ours.as_ptr())
}

/// Notes the names of `include`, `exclude` and `shadow` that match no tool of a listing
/// (`listed`: the names the server listed; `wanted`: the local names tried): a misspelt
/// `exclude` name mounts the tool it meant to hide. Not an error: a later listing may
/// have them. As in JS.
fn unmatched(o: &MountOptions, label: &str, listed: &[String], wanted: &HashMap<String, usize>, notes: &mut Vec<String>) {
    let listed_set: HashSet<&String> = listed.iter().collect();
    let listed_names: Vec<&str> = listed.iter().map(String::as_str).collect();
    for (what, names) in [("include", o.include.as_deref().unwrap_or_default()), ("exclude", o.exclude.as_slice())] {
        let missed = distinct(names.iter().filter(|n| !listed_set.contains(n)));
        if !missed.is_empty() {
            notes.push(unmatched_note(what, &missed, |n| closest_name(n, &listed_names).map(str::to_owned), &format!("which MCP server {label} does not list")));
        }
    }
    let missed = distinct(o.shadow.iter().filter(|n| !wanted.contains_key(*n)));
    if !missed.is_empty() {
        let mut locals: Vec<(&String, usize)> = wanted.iter().map(|(n, &at)| (n, at)).collect();
        locals.sort_by_key(|&(_, at)| at);
        let locals: Vec<&str> = locals.into_iter().map(|(n, _)| n.as_str()).collect();
        // A name given without the prefix is the likeliest mistake.
        let hint = |n: &str| {
            let prefixed = local_name(&o.prefix, n);
            if wanted.contains_key(&prefixed) { Some(prefixed) } else { closest_name(n, &locals).map(str::to_owned) }
        };
        notes.push(unmatched_note("shadow", &missed, hint, &format!("which no tool of MCP server {label} has as its local name")));
    }
}

/// `names` without repeats, in their order.
fn distinct<'a>(names: impl Iterator<Item = &'a String>) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    names.filter(|n| seen.insert(n.as_str())).map(String::as_str).collect()
}

/// The note on the names of option `what` matching nothing (`missed`), at most 10
/// shown, each cut to 200 characters and with the close name `hint` gives.
fn unmatched_note(what: &str, missed: &[&str], hint: impl Fn(&str) -> Option<String>, rest: &str) -> String {
    let shown: Vec<String> = missed
        .iter()
        .take(10)
        .map(|name| match hint(name) {
            Some(near) => format!("'{}' (did you mean '{}'?)", cut_utf16(name, 200), cut_utf16(&near, 200)),
            None => format!("'{}'", cut_utf16(name, 200)),
        })
        .collect();
    let more = if missed.len() > 10 { format!(" and {} more", missed.len() - 10) } else { String::new() };
    format!("mount_mcp: {what} names {}{more}, {rest}", shown.join(", "))
}

/// JS string length (UTF-16 units), which the limits are counted in, as in JS.
fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The longest start of `s` of at most `n` UTF-16 units that does not split a character.
fn cut_utf16(s: &str, n: usize) -> &str {
    let mut units = 0;
    for (at, c) in s.char_indices() {
        units += c.len_utf16();
        if units > n {
            return &s[..at];
        }
    }
    s
}

impl Drop for Shared {
    fn drop(&mut self) {
        let mounted = std::mem::take(&mut self.state.get_mut().mounted);
        self.forget(mounted);
        // Dropping the service closes the connection.
    }
}

impl Shared {
    fn peer(&self) -> Peer<RoleClient> {
        lock(&self.peer).0.clone()
    }

    /// The connection to use and its number: the one in use, or (with
    /// [`mount_mcp_with`]) a new one when it has closed or is connection number `stale`
    /// (a request could not be sent on it), its tools then listed again.
    async fn ready(self: &Arc<Self>, stale: Option<u64>) -> Result<(Peer<RoleClient>, u64), ToolError> {
        let current = lock(&self.peer).clone();
        let closed = |(peer, number): &(Peer<RoleClient>, u64)| peer.is_transport_closed() || stale == Some(*number);
        let Some(connect) = self.reconnect.as_ref().filter(|_| closed(&current)) else { return Ok(current) };
        let _one = self.reconnecting.lock().await;
        let current = lock(&self.peer).clone();
        if !closed(&current) {
            return Ok(current);
        }
        if lock(&self.service).is_none() {
            return Err(unmounted("reconnect"));
        }
        let client = MountClient { progress: self.progress.clone(), mount: self.back.clone() };
        let service = connect(client).await.map_err(|why| {
            ToolError::new(ErrorCategory::Transient, "MCP_CONNECTION_FAILED", format!("the connection to MCP server {} closed, and reconnecting failed: {why}", self.label))
        })?;
        let next = (service.peer().clone(), current.1 + 1);
        *lock(&self.peer) = next.clone();
        // Unmounted while connecting: the new connection is closed (`Err`).
        let replaced = {
            let mut current = lock(&self.service);
            match current.as_mut() {
                Some(old) => Ok(std::mem::replace(old, service)),
                None => Err(service),
            }
        };
        match replaced {
            Ok(old) => {
                let _ = old.cancel().await;
            }
            Err(new) => {
                let _ = new.cancel().await;
                return Err(unmounted("reconnect"));
            }
        }
        // The server may have changed (a new version was started): list again, not
        // awaited, since a refresh may be what asked for this connection.
        tokio::spawn(McpMount { shared: self.clone() }.refresh_in_background());
        Ok(next)
    }

    /// Where the mount's tools are registered.
    fn scope(&self) -> Scope<'_> {
        match &self.options.session_id {
            Some(id) => Scope::Session(id),
            None => Scope::Global,
        }
    }

    /// Unregisters the tools `mounted` and stops following the session: what unmounting
    /// and dropping the last handle both do.
    fn forget(&self, mounted: Vec<(String, Mounted)>) {
        for (name, m) in mounted {
            self.unregister(self.scope(), &name, &m.handler);
        }
        if let Some(listener) = lock(&self.follows_session).take() {
            self.registry.unsubscribe(listener);
        }
    }

    fn unregister(&self, scope: Scope<'_>, name: &str, ours: &Weak<dyn ToolHandler>) {
        let _ = self.registry.unregister_if(scope, name, |t| is_ours(&t.handler, ours));
    }

    /// The listed tools (JSON) within the limits, those that are not MCP tools, and the
    /// names of both.
    async fn list(self: &Arc<Self>, notes: &mut Vec<String>) -> Result<Listing, ToolError> {
        let (peer, _) = self.ready(None).await?;
        if peer.peer_info().is_some_and(|i| i.capabilities.tools.is_none()) {
            return Ok(Listing::default());
        }
        let o = &self.options;
        let label = &self.label;
        let started = Instant::now();
        let mut tools = Vec::new();
        let mut skipped = Vec::new();
        let mut names = Vec::new();
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let Some(left) = o.list_timeout.checked_sub(started.elapsed()).filter(|d| !d.is_zero()) else {
                notes.push(format!(
                    "MCP server {label} took longer than list_timeout ({} ms) to list its tools: the {} listed by then are used",
                    o.list_timeout.as_millis(),
                    tools.len()
                ));
                break;
            };
            let mut params = PaginatedRequestParams::default();
            params.cursor = cursor.clone();
            // The request itself, not `Peer::list_tools`: that one answers from a cache.
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let page = match tokio::time::timeout(left, peer.send_request(request)).await {
                Ok(Ok(page)) => page,
                Ok(Err(e)) => return Err(self.classify(e)),
                // Out of time on a later page: what was listed is used.
                Err(_) if !tools.is_empty() => continue,
                Err(_) => return Err(ToolError::new(ErrorCategory::Timeout, "MCP_REQUEST_TIMEOUT", format!("MCP server {label} did not list its tools within list_timeout"))),
            };
            // A page with a tool rmcp cannot read arrives as JSON: its tools are read
            // one by one, so one bad tool is skipped rather than failing the listing.
            let page = match page {
                ServerResult::ListToolsResult(r) => serde_json::to_value(r).unwrap_or(Value::Null),
                ServerResult::CustomResult(r) => r.0,
                _ => Value::Null,
            };
            let Some(Value::Array(listed)) = page.get("tools") else {
                return Err(self.protocol_error("a tools/list result must be an object with a tools array"));
            };
            for raw in listed {
                if tools.len() == o.max_tools {
                    notes.push(format!("MCP server {label} lists more than max_tools ({}) tools: the first {} are used", o.max_tools, o.max_tools));
                    return Ok(Listing { tools, skipped, names });
                }
                if let Some(name) = raw.get("name").and_then(Value::as_str) {
                    names.push(name.to_string());
                }
                match serde_json::from_value::<rmcp::model::Tool>(raw.clone()) {
                    Ok(_) => tools.push(raw.clone()),
                    Err(e) => {
                        let name = raw.get("name").and_then(Value::as_str).unwrap_or("(no name)");
                        skipped.push(Skipped { name: cut(name, 200), reason: format!("it is not a valid MCP tool: {e}") });
                    }
                }
            }
            cursor = match page.get("nextCursor") {
                Some(Value::String(c)) => Some(c.clone()),
                None | Some(Value::Null) => None,
                Some(_) => return Err(self.protocol_error("nextCursor must be a string")),
            };
            let Some(c) = &cursor else { break };
            if !cursors.insert(c.clone()) {
                notes.push(format!("MCP server {label} sent a tools/list cursor it had sent before: the listing stopped there, with {} tools", tools.len()));
                break;
            }
        }
        Ok(Listing { tools, skipped, names })
    }

    fn protocol_error(&self, why: &str) -> ToolError {
        let mut e = ToolError::new(ErrorCategory::Permanent, "MCP_PROTOCOL_ERROR", format!("MCP server {} answered with an error: {why}", self.label));
        e.retryable = false;
        e
    }

    fn classify(&self, error: ServiceError) -> ToolError {
        let label = &self.label;
        match error {
            ServiceError::McpError(e) => self.protocol_error(&e.message),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                ToolError::new(ErrorCategory::Transient, "MCP_CONNECTION_CLOSED", format!("the connection to MCP server {label} closed during the call"))
            }
            ServiceError::Timeout { .. } => ToolError::new(ErrorCategory::Timeout, "MCP_REQUEST_TIMEOUT", format!("MCP server {label} did not answer in time")),
            other => self.protocol_error(&other.to_string()),
        }
    }

    async fn call(self: Arc<Self>, remote: &str, args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
        if lock(&self.service).is_none() {
            return Err(unmounted(&format!("tool '{}'", ctx.tool_name)));
        }
        let arguments = match args {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let mut params = CallToolRequestParams::new(remote.to_string());
        params.arguments = Some(arguments);
        // The local call's idempotency key travels with it: a toolhost server with a
        // journal runs a call retried from another host at most once.
        let mut request_meta = RequestMetaObject::default();
        request_meta.insert(meta::IDEMPOTENCY_KEY.into(), Value::String(ctx.idempotency_key.clone()));
        let send = |peer: Peer<RoleClient>| {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let mut options = PeerRequestOptions::no_options();
            options.timeout = self.options.request_timeout;
            options.meta = Some(request_meta.clone());
            async move { peer.send_request_with_option(request, options).await }
        };
        let (mut peer, number) = self.ready(None).await?;
        let handle = match send(peer.clone()).await {
            // Not sent: the connection had closed. Sent again on a new one, if it can be made.
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) if self.reconnect.is_some() => {
                (peer, _) = self.ready(Some(number)).await?;
                send(peer.clone()).await
            }
            sent => sent,
        }
        .map_err(|e| self.classify(e))?;
        let mut guard = InFlight { shared: self.clone(), peer, id: Some(handle.id.clone()), token: handle.progress_token.clone() };
        if self.options.progress {
            if let Some(sink) = ctx.progress.clone() {
                lock(&self.progress).insert(handle.progress_token.clone(), sink);
            }
        }
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            // The guard tells the server when it goes.
            () = ctx.cancellation.cancelled() => return Err(ToolError::cancelled(&ctx.tool_name)),
        };
        guard.id = None;
        match answer {
            Ok(ServerResult::CallToolResult(result)) => {
                let json = serde_json::to_value(&result).unwrap_or(Value::Null);
                if result.is_error == Some(true) {
                    Err(remote_error(&json, remote))
                } else {
                    Ok(value_of_result(&json))
                }
            }
            Ok(_) => Err(self.protocol_error("a tools/call result must be a CallToolResult")),
            Err(e) => {
                if matches!(&e, ServiceError::McpError(m) if m.code == ErrorCode::INVALID_PARAMS) {
                    // The tool may have changed: list again.
                    tokio::spawn(McpMount { shared: self.clone() }.refresh_in_background());
                }
                Err(self.classify(e))
            }
        }
    }
}

/// A `tools/call` in flight: when it goes before its answer came (cancelled, timed out,
/// its future dropped), the server is told with `notifications/cancelled`.
struct InFlight {
    shared: Arc<Shared>,
    /// The connection the call went on.
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
    token: ProgressToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.shared.progress).remove(&self.token);
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let params = CancelledNotificationParam::new(Some(id), Some("the call was cancelled or timed out".into()));
            let _ = peer.notify_cancelled(params).await;
        });
    }
}

/// The handler of a mounted tool: a `tools/call` of its remote tool.
struct MountedTool {
    shared: Weak<Shared>,
    remote: String,
}

impl ToolHandler for MountedTool {
    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<Result<Value, ToolError>> {
        let shared = self.shared.upgrade();
        let remote = self.remote.clone();
        Box::pin(async move {
            match shared {
                Some(shared) => shared.call(&remote, args, ctx).await,
                None => Err(unmounted(&format!("tool '{}'", ctx.tool_name))),
            }
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
