//! The browser backend of toolhost: the engine (`crates/toolhost`) as two classes the
//! package's JS runtime (`js/`) drives, `RegistryCore` and `EngineCore`, with the same
//! methods as the Node backend (`src/` at the repository root). They convert values and
//! call the engine; timers are the page's `setTimeout`, armed by `js/browser.mjs` from
//! the requests `takeTimers()` hands over.

use serde_json::Value;
use toolhost::host::{answer, HostEngine, HostRegistry, TimerKind, TimerRequest};
use wasm_bindgen::prelude::*;

fn json(v: impl Into<Value>) -> String {
    v.into().to_string()
}

/// The engine's registry (internal: the public `ToolRegistry` is in `js/registry.mjs`).
#[wasm_bindgen]
pub struct RegistryCore {
    inner: HostRegistry,
}

#[wasm_bindgen]
impl RegistryCore {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Self {
        Self { inner: HostRegistry::new() }
    }

    pub fn configure(&self, options: &str) -> String {
        answer(self.inner.configure(options))
    }

    pub fn register(&self, session: Option<String>, definition: &str) -> String {
        answer(self.inner.register(session.as_deref(), definition))
    }

    #[wasm_bindgen(js_name = registerMounted)]
    pub fn register_mounted(&self, session: Option<String>, definition: &str, may_shadow: bool, max_schema_cost: f64) -> String {
        let bound = max_schema_cost.is_finite().then_some(max_schema_cost.max(0.0) as u64);
        answer(self.inner.register_mounted(session.as_deref(), definition, may_shadow, bound))
    }

    pub fn unregister(&self, session: Option<String>, name: &str) -> String {
        answer(self.inner.unregister(session.as_deref(), name).map(Value::Bool))
    }

    #[wasm_bindgen(js_name = unregisterTool)]
    pub fn unregister_tool(&self, session: Option<String>, name: &str, tool_id: u32) -> String {
        answer(self.inner.unregister_tool(session.as_deref(), name, tool_id).map(Value::Bool))
    }

    pub fn clear(&self) {
        self.inner.clear()
    }

    pub fn get(&self, session: Option<String>, name: &str) -> Option<String> {
        self.inner.get(session.as_deref(), name).map(json)
    }

    #[wasm_bindgen(js_name = toolId)]
    pub fn tool_id(&self, session: Option<String>, name: &str) -> u32 {
        self.inner.tool_id(session.as_deref(), name)
    }

    pub fn has(&self, session: Option<String>, name: &str) -> bool {
        self.inner.has(session.as_deref(), name)
    }

    pub fn names(&self, session: Option<String>) -> String {
        json(self.inner.names(session.as_deref()))
    }

    #[wasm_bindgen(js_name = ownNames)]
    pub fn own_names(&self, session: &str) -> String {
        json(self.inner.own_names(session))
    }

    pub fn declarations(&self, session: Option<String>, category: Option<String>, tag: Option<String>) -> String {
        json(self.inner.declarations(session.as_deref(), category.as_deref(), tag.as_deref()))
    }

    pub fn validate(&self, session: Option<String>, name: &str, args: &str) -> String {
        answer(self.inner.validate(session.as_deref(), name, args).map(|issues| serde_json::to_value(issues).unwrap_or_default()))
    }

    #[wasm_bindgen(js_name = createSession)]
    pub fn create_session(&self, isolated: bool) -> String {
        self.inner.create_session(isolated)
    }

    #[wasm_bindgen(js_name = destroySession)]
    pub fn destroy_session(&self, id: &str) -> bool {
        self.inner.destroy_session(id)
    }

    pub fn sessions(&self) -> String {
        json(self.inner.sessions())
    }

    #[wasm_bindgen(js_name = toolsOut)]
    pub fn tools_out(&self, session: Option<String>, format: &str, strict: bool) -> String {
        answer(self.inner.tools_out(session.as_deref(), format, strict))
    }

    #[wasm_bindgen(js_name = parseCalls)]
    pub fn parse_calls(&self, session: Option<String>, provider: &str, response: &str) -> String {
        answer(self.inner.parse_calls(session.as_deref(), provider, response))
    }

    #[wasm_bindgen(js_name = formatReplies)]
    pub fn format_replies(&self, session: Option<String>, provider: &str, replies: &str) -> String {
        answer(self.inner.format_replies(session.as_deref(), provider, replies))
    }

    #[wasm_bindgen(js_name = modelErrorText)]
    pub fn model_error_text(&self, session: Option<String>, name: &str, arguments: &str, error: &str) -> String {
        let facts = serde_json::from_str(error).unwrap_or_default();
        self.inner.model_error_text(session.as_deref(), name, arguments, &facts)
    }

    #[wasm_bindgen(js_name = mcpDeclaration)]
    pub fn mcp_declaration(tool: &str, name: &str, server: &str) -> String {
        answer(HostRegistry::mcp_declaration(tool, name, server))
    }

    #[wasm_bindgen(js_name = takeReleased)]
    pub fn take_released(&self) -> String {
        json(self.inner.take_released())
    }
}

impl Default for RegistryCore {
    fn default() -> Self {
        Self::new()
    }
}

/// Ops the scratch buffer holds; a longer output is handed over by `bigOps()`.
/// Every engine call of B1-B6 leaves fewer than 64; a batch of a few dozen calls (an
/// `executeToolCalls`, a `cancelAll`) may take the other way. Each manager holds its
/// buffer until the collector finalizes it: at 8192 (64 KB each) a page that made
/// 8,000 managers had 539 MB of wasm memory (which never shrinks), and a Node loop that
/// made 20,000 had 1.25 GB of external memory before their finalizers ran.
const SCRATCH_LEN: usize = 511;

/// The status block after each engine call, as f64s: executions in flight, timer
/// requests (-1 when more than [`TIMER_SLOTS`]: `takeTimers()` has them), the address and
/// UTF-8 length of the ops' strings (left in wasm memory until the next call), whether
/// they are ASCII; then up to TIMER_SLOTS timer requests of 5 numbers each.
const STATUS: usize = 5;
const TIMER_SLOTS: usize = 8;

/// One manager's engine (internal: the public `ToolExecutionManager` is in `js/manager.mjs`).
#[wasm_bindgen]
pub struct EngineCore {
    registry: HostRegistry,
    host: Option<HostEngine>,
    /// `[count, ...ops]` of the last call; its address never changes.
    scratch: Box<[f64]>,
    /// What else the last call left, read by the host without a call each (see
    /// [`STATUS`]); its address never changes.
    status: Box<[f64]>,
    big: Vec<f64>,
    /// `[action, kind, key, attempt, ms]` per timer request of the last call: action 0
    /// arms, 1 clears; kind 0 attempt timeout, 1 backoff, 2 total timeout, 3 approval.
    timers: Vec<f64>,
}

#[wasm_bindgen]
impl EngineCore {
    #[wasm_bindgen(constructor)]
    pub fn new(registry: &RegistryCore) -> Self {
        Self {
            registry: registry.inner.clone(),
            host: None,
            scratch: vec![0.0; SCRATCH_LEN + 1].into_boxed_slice(),
            status: vec![0.0; STATUS + TIMER_SLOTS * 5].into_boxed_slice(),
            big: Vec::new(),
            timers: Vec::new(),
        }
    }

    /// '' when the options are accepted, else the refusal `{ code, message }` as JSON.
    /// Checks a manager's options as `init` would, without making its engine: the host
    /// checks the options whole before it takes `auditLog` out to write the file itself.
    #[wasm_bindgen(js_name = checkOptions)]
    pub fn check_options(&self, options: &str) -> String {
        match toolhost::host::options::manager_options(options) {
            Ok(_) => String::new(),
            Err(e) => toolhost::host::registry_error_json(&e).to_string(),
        }
    }

    pub fn init(&mut self, options: &str) -> String {
        match HostEngine::new(&self.registry, options) {
            // The journal's stores are files and servers a page cannot reach.
            Ok(host) if host.journal_url().is_some() => serde_json::json!({
                "code": "INVALID_CONFIG",
                "message": "journal is not available on the WebAssembly build of the engine (a browser, or Node with no native addon for its platform): it keeps executions in memory; run a journaled manager in Node with the native addon",
            })
            .to_string(),
            Ok(host) => {
                self.host = Some(host);
                String::new()
            }
            Err(e) => toolhost::host::registry_error_json(&e).to_string(),
        }
    }

    /// The address of the scratch buffer in wasm memory (`SCRATCH_LEN + 1` f64s).
    #[wasm_bindgen(js_name = scratchPtr)]
    pub fn scratch_ptr(&self) -> *const f64 {
        self.scratch.as_ptr()
    }

    #[wasm_bindgen(js_name = scratchLen)]
    pub fn scratch_len(&self) -> usize {
        self.scratch.len()
    }

    /// The address of the status block in wasm memory (`statusLen()` f64s).
    #[wasm_bindgen(js_name = statusPtr)]
    pub fn status_ptr(&self) -> *const f64 {
        self.status.as_ptr()
    }

    #[wasm_bindgen(js_name = statusLen)]
    pub fn status_len(&self) -> usize {
        self.status.len()
    }

    #[wasm_bindgen(js_name = bigOps)]
    pub fn big_ops(&self) -> Vec<f64> {
        self.big.clone()
    }

    /// The timer requests of the last call, `[action, kind, key, attempt, ms]` each, when
    /// there were more than the status block holds (its count is then -1).
    #[wasm_bindgen(js_name = takeTimers)]
    pub fn take_timers(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.timers)
    }

    #[wasm_bindgen(js_name = setWanted)]
    pub fn set_wanted(&mut self, mask: u32, audit: bool) {
        if let Some(h) = self.host.as_mut() {
            h.set_wanted(mask as u16, audit);
        }
    }

    /// `options` and `unreadable` are left out (`undefined`) when empty: an absent string
    /// crosses as nothing, where '' costs an allocation in wasm memory and its free.
    pub fn start(&mut self, ticket: f64, name: &str, args: &str, options: Option<String>, aborted: bool, unreadable: Option<String>) {
        let (options, unreadable) = (options.unwrap_or_default(), unreadable.unwrap_or_default());
        self.call(|h| h.start(ticket, name, args, &unreadable, &options, aborted))
    }

    /// `result`: the result's JSON text when `RUN` said the tool checks its output, else
    /// left out.
    pub fn settle(&mut self, key: f64, attempt: u32, result: Option<String>) {
        self.call(|h| h.settle(key as u64, attempt, result.as_deref().filter(|r| !r.is_empty())))
    }

    #[wasm_bindgen(js_name = approvalDecided)]
    pub fn approval_decided(&mut self, key: f64, needed: bool, invalid: &str) {
        self.call(|h| h.approval_decided(key as u64, needed, invalid))
    }

    pub fn approve(&mut self, approval_id: &str, args: &str, by: Option<String>) {
        self.call(|h| h.approve(approval_id, args, by))
    }

    pub fn deny(&mut self, approval_id: &str, reason: Option<String>, by: Option<String>) {
        self.call(|h| h.deny(approval_id, reason, by))
    }

    #[wasm_bindgen(js_name = pendingApprovals)]
    pub fn pending_approvals(&self) -> String {
        self.host.as_ref().map(HostEngine::pending_approvals).unwrap_or_default()
    }

    pub fn progress(&mut self, key: f64, attempt: u32, progress: f64, total: f64, message: Option<String>) {
        let total = (!total.is_nan()).then_some(total);
        self.call(|h| h.progress(key as u64, attempt, progress, total, message))
    }

    pub fn preliminary(&mut self, key: f64, attempt: u32) {
        self.call(|h| h.preliminary_result(key as u64, attempt))
    }

    #[wasm_bindgen(js_name = totalTimedOut)]
    pub fn total_timed_out(&mut self, key: f64) {
        self.call(|h| h.total_timed_out(key as u64))
    }

    #[wasm_bindgen(js_name = approvalExpired)]
    pub fn approval_expired(&mut self, key: f64) {
        self.call(|h| h.approval_expired(key as u64))
    }

    pub fn fail(&mut self, key: f64, attempt: u32, thrown: &str) {
        self.call(|h| h.fail(key as u64, attempt, thrown))
    }

    #[wasm_bindgen(js_name = interceptedArgs)]
    pub fn intercepted_args(&mut self, key: f64, attempt: u32, text: &str, unreadable: &str) {
        self.call(|h| h.intercepted_args(key as u64, attempt, text, unreadable))
    }

    #[wasm_bindgen(js_name = timedOut)]
    pub fn timed_out(&mut self, key: f64, attempt: u32) {
        self.call(|h| h.timed_out(key as u64, attempt))
    }

    pub fn resume(&mut self, key: f64) {
        self.call(|h| h.resume(key as u64))
    }

    pub fn cancel(&mut self, execution_id: &str) {
        self.call(|h| {
            h.cancel(execution_id);
        })
    }

    #[wasm_bindgen(js_name = cancelKeys)]
    pub fn cancel_keys(&mut self, keys: Vec<f64>) {
        let keys: Vec<u64> = keys.into_iter().map(|k| k as u64).collect();
        self.call(|h| {
            h.cancel_keys(&keys);
        })
    }

    #[wasm_bindgen(js_name = cancelAll)]
    pub fn cancel_all(&mut self, session: Option<String>) {
        self.call(|h| {
            h.cancel_all(session.as_deref());
        })
    }

    #[wasm_bindgen(js_name = destroySession)]
    pub fn destroy_session(&mut self, session: &str) {
        self.call(|h| {
            h.destroy_session(session);
        })
    }

    pub fn snapshot(&mut self, execution_id: &str) {
        self.call(|h| {
            h.snapshot(execution_id);
        })
    }

    #[wasm_bindgen(js_name = idsForToolCall)]
    pub fn ids_for_tool_call(&self, tool_call_id: &str) -> String {
        json(self.host.as_ref().map(|h| h.ids_for_tool_call(tool_call_id)).unwrap_or_default())
    }

    pub fn stats(&self, tool: &str) -> String {
        self.host.as_ref().map(|h| h.stats(tool).to_string()).unwrap_or_default()
    }
}

impl EngineCore {
    /// Runs `f` on the engine, copies its ops to the scratch buffer and fills the status
    /// block: so one engine call is one crossing, its strings decoded by the host from
    /// wasm memory (no String handed over, allocated and freed each call).
    fn call(&mut self, f: impl FnOnce(&mut HostEngine)) {
        self.timers.clear();
        let Some(host) = self.host.as_mut() else {
            self.scratch[0] = 0.0;
            self.status[..STATUS].copy_from_slice(&[0.0, 0.0, 0.0, 0.0, 1.0]);
            return;
        };
        f(host);
        let ops = &host.wire.ops;
        if ops.len() < SCRATCH_LEN {
            self.scratch[0] = ops.len() as f64;
            self.scratch[1..=ops.len()].copy_from_slice(ops);
        } else {
            self.scratch[0] = -1.0;
            self.big.clear();
            self.big.push(ops.len() as f64);
            self.big.extend_from_slice(ops);
        }
        let number = |kind: TimerKind| match kind {
            TimerKind::Attempt => 0.0,
            TimerKind::Resume => 1.0,
            TimerKind::Total => 2.0,
            TimerKind::Approval => 3.0,
        };
        for request in host.take_timers() {
            let entry = match request {
                TimerRequest::Arm { kind, key, attempt, after } => [0.0, number(kind), key as f64, f64::from(attempt), after.as_secs_f64() * 1000.0],
                TimerRequest::Clear { kind, key } => [1.0, number(kind), key as f64, 0.0, 0.0],
            };
            self.timers.extend_from_slice(&entry);
        }
        let requests = self.timers.len() / 5;
        if requests <= TIMER_SLOTS {
            self.status[STATUS..STATUS + self.timers.len()].copy_from_slice(&self.timers);
        }
        let text = &host.wire.text;
        let head = [
            host.in_flight() as f64,
            if requests <= TIMER_SLOTS { requests as f64 } else { -1.0 },
            text.as_ptr() as usize as f64,
            text.len() as f64,
            if text.is_ascii() { 1.0 } else { 0.0 },
        ];
        self.status[..STATUS].copy_from_slice(&head);
    }
}

/// "unknown option `x` in <what>; did you mean `y`?", as the engine words it for its own options.
#[wasm_bindgen(js_name = unknownOption)]
pub fn unknown_option(key: &str, known: Vec<String>, what: &str) -> String {
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    toolhost::host::options::unknown_option(key, &known, what)
}

/// The one of `known` closest to the name `word` (a typo of it), by the engine's measure, if any.
#[wasm_bindgen(js_name = closestName)]
pub fn closest_name(word: &str, known: Vec<String>) -> Option<String> {
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    toolhost::host::options::closest_name(word, &known).map(str::to_owned)
}
