//! `EngineCore`: one manager's engine (`toolhost::host::HostEngine`) for the JS runtime.
//!
//! Each method converts its arguments, calls the engine, copies the output's ops into
//! `scratch` (a `Float64Array` the JS side reads without a call) and returns the ops'
//! strings as one JS string. What Node adds to the engine lives here, with no policy:
//! - the timers the engine asks for (timeouts, backoff delays) wait on the JS thread's
//!   event loop (`loop_timers`, Linux) or else on the deadline thread, whose threadsafe
//!   function brings them to the JS thread; when one fires, the engine is told and the
//!   JS runtime's wake function gets the output;
//! - argument text of `largeText` code units or more is copied as UTF-16 and parsed,
//!   validated and listed in a tape on a worker thread;
//! - a journaled manager's journal IO runs on the journal thread; its answers come back
//!   through an inbox (`toolhost::journal::inbox`) and a message to the JS thread, or,
//!   when the engine says its calls in flight all wait on them, within the call that
//!   sent the requests (the JS thread spins for them briefly);
//! - Node is kept alive while this engine has executions in flight.

use std::cell::{Cell, RefCell};
use std::ptr;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use napi::{sys, Env};
use napi_derive::napi;
use rustc_hash::FxHashMap;
use toolhost::host::{HostEngine, TimerKind, TimerRequest};
use toolhost::journal::inbox::{Inbox, INLINE_WAIT};
use toolhost::journal::worker::JournalWorker;
use toolhost::{Arguments, CallOptions};

use crate::hop::{self, Message};
use crate::js::{self, Js, JsRef, RawEnv};
use crate::large_text;
use crate::registry_core::RegistryCore;

/// Argument text at least this long (in UTF-16 code units) is parsed off the JS thread.
pub const LARGE_TEXT_UNITS: u32 = 64 * 1024;

/// Ops `scratch` holds; a longer output is handed over by `bigOps()`.
/// Every engine call of B1-B6 leaves fewer than 64; a batch of a few dozen calls (an
/// `executeToolCalls`, a `cancelAll`) may take the other way. Each manager holds its
/// buffer until the collector finalizes it: at 8192 (64 KB each) a page that made
/// 8,000 managers had 539 MB of wasm memory (which never shrinks), and a Node loop that
/// made 20,000 had 1.25 GB of external memory before their finalizers ran.
const SCRATCH_LEN: usize = 511;

thread_local! {
    static ENGINES: RefCell<FxHashMap<u32, Weak<Inner>>> = RefCell::new(FxHashMap::default());
    static NEXT_ENGINE: Cell<u32> = const { Cell::new(1) };
    static WAKE: RefCell<Option<JsRef>> = const { RefCell::new(None) };
}

/// Large argument text parsed and validated off the JS thread.
pub struct ParsedArguments {
    arguments: Arguments,
    tape: Option<toolhost::tape::Tape>,
}

/// A `startLarge` call waiting for its arguments.
struct PendingLarge {
    name: String,
    call: CallOptions,
    parsed: Option<Box<ParsedArguments>>,
}

struct Inner {
    id: u32,
    host: RefCell<Option<HostEngine>>,
    registry: toolhost::host::HostRegistry,
    scratch: *mut f64,
    _scratch_buffer: JsRef,
    scratch_array: JsRef,
    /// The output that did not fit in `scratch`, for `bigOps()`.
    big: RefCell<Vec<f64>>,
    /// The engine's timers, armed.
    deadlines: RefCell<FxHashMap<(u64, TimerKind), hop::TimerHandle>>,
    pending: RefCell<FxHashMap<u64, PendingLarge>>,
    tapes: RefCell<FxHashMap<u64, toolhost::tape::Tape>>,
    /// Whether this engine keeps Node alive (it has executions in flight).
    retained: Cell<bool>,
    hop: Arc<hop::Hop>,
    /// The thread that does the journal's IO, when the manager has a journal.
    journal: RefCell<Option<JournalWorker>>,
    /// Where the journal's answers wait for the JS thread (kept after the journal is
    /// closed, for the answers on their way).
    inbox: RefCell<Option<Arc<Inbox>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = ENGINES.try_with(|e| e.borrow_mut().remove(&self.id));
        for (_, d) in self.deadlines.get_mut().drain() {
            hop::cancel_timer(d);
        }
    }
}

impl Inner {
    /// Copies the engine's output to `scratch`, arms and clears the timers it asked for,
    /// keeps Node alive while executions are in flight; returns the output's strings as a
    /// JS string. The text buffer is copied, not handed over, so its capacity is reused:
    /// a fresh one per call grew by doubling (malloc, realloc, free) on every call.
    fn flush(&self, env: RawEnv) -> Js {
        let mut host = self.host.borrow_mut();
        let Some(host) = host.as_mut() else { return Js::empty_string(env) };
        // First, as answers the JS thread waits for here add to the output.
        if host.has_journal_work() {
            self.exchange_journal(host);
        }
        let ops = &host.wire.ops;
        // SAFETY: `scratch` points into the ArrayBuffer `_scratch_buffer` keeps alive,
        // SCRATCH_LEN + 1 f64s long; only this thread writes it.
        unsafe {
            if ops.len() < SCRATCH_LEN {
                *self.scratch = ops.len() as f64;
                ptr::copy_nonoverlapping(ops.as_ptr(), self.scratch.add(1), ops.len());
            } else {
                *self.scratch = -1.0;
                let mut big = self.big.borrow_mut();
                big.clear();
                big.push(ops.len() as f64);
                big.extend_from_slice(ops);
            }
        }
        for request in host.take_timers() {
            match request {
                TimerRequest::Arm { kind, key, attempt, after } => {
                    let d = hop::schedule_timer(env, &self.hop, after, Message::Timer { engine: self.id, key, attempt, kind, trace: hop::trace::armed(after) });
                    if let Some(old) = self.deadlines.borrow_mut().insert((key, kind), d) {
                        hop::cancel_timer(old);
                    }
                }
                TimerRequest::Clear { kind, key } => {
                    if let Some(d) = self.deadlines.borrow_mut().remove(&(key, kind)) {
                        hop::cancel_timer(d);
                    }
                }
            }
        }
        let busy = host.in_flight() + self.pending.borrow().len() > 0;
        if busy != self.retained.get() {
            self.retained.set(busy);
            if busy {
                hop::retain(env);
            } else {
                hop::release(env);
            }
        }
        let text = js::string(env, &host.wire.text);
        host.wire.text.clear();
        Js(text)
    }

    /// Hands the engine's journal requests to the journal thread, and takes the answers
    /// the engine waits for here (`HostEngine::exchange_journal`). Out of line: `flush`
    /// is on every call's path, and a manager without a journal never comes here.
    #[inline(never)]
    fn exchange_journal(&self, host: &mut HostEngine) {
        if let (Some(worker), Some(inbox)) = (self.journal.borrow().as_ref(), self.inbox.borrow().as_ref()) {
            host.exchange_journal(|request| worker.send(request), || inbox.wait(INLINE_WAIT));
        }
    }

    fn with_host<R>(&self, f: impl FnOnce(&mut HostEngine) -> R) -> Option<R> {
        self.host.borrow_mut().as_mut().map(f)
    }

    /// Runs `f` on the engine and flushes its output.
    fn call(&self, env: RawEnv, f: impl FnOnce(&mut HostEngine)) -> Js {
        if self.with_host(f).is_none() {
            return Js::empty_string(env);
        }
        self.flush(env)
    }
}

/// One manager's engine (internal: the public `ToolExecutionManager` is in `js/manager.mjs`).
#[napi]
pub struct EngineCore {
    inner: Rc<Inner>,
}

#[napi]
impl EngineCore {
    #[napi(constructor)]
    pub fn new(env: Env, registry: &RegistryCore) -> napi::Result<Self> {
        let raw = env.raw();
        let mut data = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        js::check(unsafe { sys::napi_create_arraybuffer(raw, (SCRATCH_LEN + 1) * 8, &mut data, &mut buffer) })?;
        let mut array = ptr::null_mut();
        js::check(unsafe { sys::napi_create_typedarray(raw, sys::TypedarrayType::float64_array, SCRATCH_LEN + 1, buffer, 0, &mut array) })?;
        let id = NEXT_ENGINE.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        let inner = Rc::new(Inner {
            id,
            host: RefCell::new(None),
            registry: registry.inner.clone(),
            scratch: data.cast::<f64>(),
            _scratch_buffer: JsRef::new(raw, buffer),
            scratch_array: JsRef::new(raw, array),
            big: RefCell::new(Vec::new()),
            deadlines: RefCell::new(FxHashMap::default()),
            pending: RefCell::new(FxHashMap::default()),
            tapes: RefCell::new(FxHashMap::default()),
            retained: Cell::new(false),
            hop: hop::hop(raw),
            journal: RefCell::new(None),
            inbox: RefCell::new(None),
        });
        // SAFETY: the buffer is at least one f64 long.
        unsafe { *inner.scratch = 0.0 };
        ENGINES.with(|e| e.borrow_mut().insert(id, Rc::downgrade(&inner)));
        Ok(Self { inner })
    }

    /// Configures the engine from the manager's options (JSON text); '' when accepted,
    /// else the refusal `{ code, message }` as JSON.
    ///
    /// A journal the options name is opened here, on the JS thread, so that a URL that
    /// is malformed, unreachable, locked or of a newer schema fails the constructor; its
    /// IO then runs on a journal thread of its own.
    #[napi]
    pub fn init(&self, options: String) -> String {
        let host = match HostEngine::new(&self.inner.registry, &options) {
            Ok(host) => host,
            Err(e) => return toolhost::host::registry_error_json(&e).to_string(),
        };
        if let (Some(url), Some(policy)) = (host.journal_url(), host.journal_policy()) {
            let store = match toolhost::journal::open_with(url, &policy) {
                Ok(store) => store,
                Err(e) => return toolhost::host::registry_error_json(&e).to_string(),
            };
            let inbox = Arc::new(Inbox::default());
            let (hop, engine, theirs) = (self.inner.hop.clone(), self.inner.id, inbox.clone());
            let deliver = Box::new(move |answers| {
                if theirs.deliver(answers) && !hop.post(Message::Journal { engine }) {
                    theirs.post_failed();
                }
            });
            *self.inner.journal.borrow_mut() = Some(JournalWorker::start(store, policy, deliver));
            *self.inner.inbox.borrow_mut() = Some(inbox);
        }
        *self.inner.host.borrow_mut() = Some(host);
        String::new()
    }

    /// The engine's id, which the wake function is called with.
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.inner.id
    }

    /// The `Float64Array` each call leaves its ops in: `[count, ...ops]`, count -1 when
    /// they are in `bigOps()` instead.
    #[napi(getter, ts_return_type = "Float64Array")]
    pub fn scratch(&self, env: Env) -> Js {
        Js(self.inner.scratch_array.value(env.raw()))
    }

    /// The ops of the last call when they did not fit in `scratch`.
    #[napi(ts_return_type = "Float64Array")]
    pub fn big_ops(&self, env: Env) -> Js {
        Js(js::float64_array(env.raw(), &self.inner.big.borrow()))
    }

    /// Which event types have listeners (bit i for event number i) and whether audit
    /// records are listened to.
    #[napi]
    pub fn set_wanted(&self, mask: u32, audit: bool) {
        self.inner.with_host(|h| h.set_wanted(mask as u16, audit));
    }

    /// Starts an execution (see `HostEngine::start`). The strings are read with one
    /// N-API call each and the output's text is made Latin-1 when it is ASCII: this is
    /// the call every `execute()` makes.
    #[napi(ts_args_type = "ticket: number, name: string, args: string, options: string, aborted: boolean, unreadable: string", ts_return_type = "string")]
    // The JS API's `start` takes these arguments one by one: no object to read on every call.
    #[allow(clippy::too_many_arguments)]
    pub fn start(&self, env: Env, ticket: f64, name: Js, args: Js, options: Js, aborted: bool, unreadable: Js) -> Js {
        let raw = env.raw();
        let (name, args, options, unreadable) = (text(raw, name), text(raw, args), text(raw, options), text(raw, unreadable));
        self.inner.call(raw, |h| h.start(ticket, &name, &args, &unreadable, &options, aborted))
    }

    /// Starts a call whose argument text is large: the text is parsed and validated on a
    /// worker, and the wake function is called with `ticket` when it is ready
    /// (`startPrepared` then starts it). Refused options are answered at once.
    #[napi(ts_args_type = "ticket: number, name: string, text: string, options: string, aborted: boolean", ts_return_type = "string")]
    pub fn start_large(&self, env: Env, ticket: f64, name: String, text: Js, options: String, aborted: bool) -> Js {
        let raw = env.raw();
        let inner = &self.inner;
        let call = match toolhost::host::options::call_options(&options, aborted) {
            Ok(c) => c,
            Err(e) => return inner.call(raw, |h| h.refuse(ticket, &e)),
        };
        let key = ticket as u64;
        let units = large_text::len(raw, text.0);
        let units = large_text::copy(raw, text.0, units);
        let Some((registry, redact, audit_redaction)) = inner.with_host(|h| (h.engine().registry().clone(), h.engine().config().redact.clone(), h.audit_redaction())) else {
            return Js::empty_string(raw);
        };
        let session = call.session_id.clone();
        inner.pending.borrow_mut().insert(key, PendingLarge { name: name.clone(), call, parsed: None });
        let (hop, engine) = (inner.hop.clone(), inner.id);
        hop::run_blocking(move || {
            let parsed = parse_large(&registry, session.as_deref(), &name, units, &redact, audit_redaction);
            hop.post(Message::ArgumentsReady { engine, ticket: key, arguments: Box::new(parsed) });
        });
        inner.call(raw, |h| h.wire.clear())
    }

    /// Starts a `startLarge` call whose arguments are ready; `aborted` when its signal
    /// aborted or it was cancelled meanwhile.
    #[napi(ts_return_type = "string")]
    pub fn start_prepared(&self, env: Env, ticket: f64, aborted: bool) -> Js {
        let key = ticket as u64;
        let Some(mut pending) = self.inner.pending.borrow_mut().remove(&key) else { return Js::empty_string(env.raw()) };
        let Some(parsed) = pending.parsed.take() else { return Js::empty_string(env.raw()) };
        let ParsedArguments { arguments, tape } = *parsed;
        if let Some(tape) = tape {
            self.inner.tapes.borrow_mut().insert(key, tape);
        }
        pending.call.already_cancelled |= aborted;
        self.inner.call(env.raw(), |h| h.start_with(ticket, &pending.name, arguments, pending.call))
    }

    /// The tape of a `startLarge` call's valid arguments: `[ops, numbers, shapes]` for
    /// `decodeTape`, or `undefined`.
    #[napi(ts_return_type = "[Int32Array, Float64Array, string] | undefined")]
    pub fn take_tape(&self, env: Env, ticket: f64) -> Js {
        let raw = env.raw();
        match self.inner.tapes.borrow_mut().remove(&(ticket as u64)) {
            Some(t) => Js(js::array(raw, [js::int32_array(raw, &t.ops), js::float64_array(raw, &t.numbers), js::string(raw, &t.shapes)])),
            None => Js::undefined(),
        }
    }

    /// An attempt returned; `result` is its JSON text when the tool checks its output
    /// (`RUN` says so), '' otherwise.
    #[napi(ts_args_type = "key: number, attempt: number, result: string", ts_return_type = "string")]
    pub fn settle(&self, env: Env, key: f64, attempt: u32, result: Js) -> Js {
        let raw = env.raw();
        let result = text(raw, result);
        let checked = (!result.is_empty()).then_some(result.as_str());
        self.inner.call(raw, |h| h.settle(key as u64, attempt, checked))
    }

    /// The host's approval policy answered (`DECIDE`); `invalid` describes an answer
    /// that was not a boolean ('' when it was one).
    #[napi(ts_return_type = "string")]
    pub fn approval_decided(&self, env: Env, key: f64, needed: bool, invalid: String) -> Js {
        self.inner.call(env.raw(), |h| h.approval_decided(key as u64, needed, &invalid))
    }

    /// Approves a waiting call; `args` edited arguments as JSON text ('' for none). With
    /// a journal the decision is made there, answered later as `ANSWER ticket`.
    #[napi(ts_return_type = "string")]
    pub fn approve(&self, env: Env, approval_id: String, args: String, by: Option<String>, ticket: f64) -> Js {
        self.inner.call(env.raw(), |h| h.approve_ticket(&approval_id, &args, by, ticket as u64))
    }

    /// Denies a waiting call (with a journal: answered later as `ANSWER ticket`).
    #[napi(ts_return_type = "string")]
    pub fn deny(&self, env: Env, approval_id: String, reason: Option<String>, by: Option<String>, ticket: f64) -> Js {
        self.inner.call(env.raw(), |h| h.deny_ticket(&approval_id, reason, by, ticket as u64))
    }

    /// Every call waiting for approval, as JSON; with a journal, the ops' strings (the
    /// journal's list is answered later as `APPROVALS ticket`).
    #[napi(ts_return_type = "string")]
    pub fn pending_approvals(&self, env: Env, ticket: f64) -> Js {
        let asked = self.inner.with_host(|h| h.journal_approvals(ticket as u64)).unwrap_or(false);
        if asked {
            // The journal answers later, or (closed) at once: its ops are in scratch.
            return self.inner.flush(env.raw());
        }
        Js(js::string(env.raw(), &self.inner.with_host(|h| h.pending_approvals()).unwrap_or_default()))
    }

    /// An MCP task store's operation on the journal (JSON); '' for a manager without a
    /// journal or a malformed operation, else the ops' strings (`TASK ticket` later).
    #[napi(ts_return_type = "string")]
    pub fn journal_task(&self, env: Env, ticket: f64, op: String) -> Js {
        let asked = self.inner.with_host(|h| h.journal_task(ticket as u64, &op)).unwrap_or(false);
        if !asked {
            return Js::empty_string(env.raw());
        }
        self.inner.flush(env.raw())
    }

    /// `close()` was called: journaled calls started from now on fail without running.
    #[napi]
    pub fn refuse_new_journaled(&self) {
        self.inner.with_host(HostEngine::refuse_new_journaled);
    }

    /// Stops the journal's thread; the promise resolves once it has ended its batch and
    /// closed its connection (so another process can take SQLite's lock at once).
    /// Journaled calls made afterwards fail at once.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close_journal(&self) -> napi::bindgen_prelude::AsyncTask<JournalStopped> {
        let thread = self.inner.journal.borrow_mut().take().and_then(JournalWorker::stop);
        self.inner.with_host(HostEngine::close_journal);
        napi::bindgen_prelude::AsyncTask::new(JournalStopped { thread })
    }

    /// The running attempt reported progress (`total` NaN for none).
    #[napi(ts_return_type = "string")]
    pub fn progress(&self, env: Env, key: f64, attempt: u32, progress: f64, total: f64, message: Option<String>) -> Js {
        let total = (!total.is_nan()).then_some(total);
        self.inner.call(env.raw(), |h| h.progress(key as u64, attempt, progress, total, message))
    }

    /// The running attempt yielded a preliminary result.
    #[napi(ts_return_type = "string")]
    pub fn preliminary(&self, env: Env, key: f64, attempt: u32) -> Js {
        self.inner.call(env.raw(), |h| h.preliminary_result(key as u64, attempt))
    }

    #[napi(ts_args_type = "key: number, attempt: number, thrown: string", ts_return_type = "string")]
    pub fn fail(&self, env: Env, key: f64, attempt: u32, thrown: Js) -> Js {
        let thrown = text(env.raw(), thrown);
        self.inner.call(env.raw(), |h| h.fail(key as u64, attempt, &thrown))
    }

    /// `use()` interceptors changed the running attempt's arguments (see
    /// `HostEngine::intercepted_args`).
    #[napi(ts_return_type = "string")]
    pub fn intercepted_args(&self, env: Env, key: f64, attempt: u32, text: String, unreadable: String) -> Js {
        self.inner.call(env.raw(), |h| h.intercepted_args(key as u64, attempt, &text, &unreadable))
    }

    #[napi(ts_return_type = "string")]
    pub fn cancel(&self, env: Env, execution_id: String) -> Js {
        self.inner.call(env.raw(), |h| {
            h.cancel(&execution_id);
        })
    }

    #[napi(ts_return_type = "string")]
    pub fn cancel_keys(&self, env: Env, keys: Vec<f64>) -> Js {
        let keys: Vec<u64> = keys.into_iter().map(|k| k as u64).collect();
        self.inner.call(env.raw(), |h| {
            h.cancel_keys(&keys);
        })
    }

    #[napi(ts_return_type = "string")]
    pub fn cancel_all(&self, env: Env, session: Option<String>) -> Js {
        self.inner.call(env.raw(), |h| {
            h.cancel_all(session.as_deref());
        })
    }

    #[napi(ts_return_type = "string")]
    pub fn destroy_session(&self, env: Env, session: String) -> Js {
        self.inner.call(env.raw(), |h| {
            h.destroy_session(&session);
        })
    }

    /// Writes `SNAPSHOT` of an execution in flight to `scratch` (nothing when it is not)
    /// and returns its strings.
    #[napi(ts_return_type = "string")]
    pub fn snapshot(&self, env: Env, execution_id: String) -> Js {
        self.inner.call(env.raw(), |h| {
            h.snapshot(&execution_id);
        })
    }

    #[napi]
    pub fn ids_for_tool_call(&self, tool_call_id: String) -> String {
        let ids = self.inner.with_host(|h| h.ids_for_tool_call(&tool_call_id)).unwrap_or_default();
        serde_json::to_string(&ids).unwrap_or_default()
    }

    #[napi]
    pub fn stats(&self, tool: String) -> String {
        self.inner.with_host(|h| h.stats(&tool).to_string()).unwrap_or_default()
    }
}

/// Parses, resolves and validates large argument text on a worker; for valid arguments
/// also builds the tape the JS thread makes the handler's object from.
fn parse_large(
    registry: &toolhost::ToolRegistry,
    session: Option<&str>,
    name: &str,
    units: Vec<u16>,
    redact: &[String],
    audit_redaction: Option<Vec<String>>,
) -> ParsedArguments {
    let text = large_text::to_string(&units);
    let scope = session.map_or(toolhost::Scope::Global, toolhost::Scope::Session);
    let parsed = toolhost::arguments::read_arguments(name, &text);
    let mut tape = None;
    let arguments = match (parsed, registry.resolve(scope, name)) {
        (Ok(v), Ok(tool)) if !text.trim().is_empty() => {
            let issues = tool.schema.validate_redacting(&v, redact);
            let input_hash = audit_redaction.map(|redact| toolhost::audit_input_hash(&v, &redact));
            // Arguments with issues reach a handler only with validation off, which then
            // gets `JSON.parse` of the text.
            if issues.is_empty() {
                tape = toolhost::tape::build(&units);
            }
            // Freed before the hand-over: on a 2-core machine, freeing it (about 1 ms for
            // 1 MB of text) while the JS thread builds the arguments made B4's JS thread
            // wait for a CPU. And after the tape: freeing it before building the tape
            // made B4's wall time 1.5-2 ms longer per call.
            drop(v);
            Arguments::Validated { text: Arc::from(text), tool, issues, input_hash }
        }
        (parsed, _) => Arguments::Parsed(parsed),
    };
    large_text::recycle(units);
    ParsedArguments { arguments, tape }
}

/// Sets the function timers and workers wake the JS runtime with:
/// `(engineId, ticket, text) => void`.
#[napi(ts_args_type = "wake: (engineId: number, ticket: number, text: string) => void")]
pub fn set_wake(env: Env, wake: Js) {
    let raw = env.raw();
    WAKE.with(|w| *w.borrow_mut() = Some(JsRef::new(raw, wake.0)));
}

/// Turns timer tracing on or off (for `npm run bench`'s B5 split, not the public API);
/// returns the trace clock's now, in ms, to line it up with `performance.now()`.
#[napi]
pub fn trace_timers(on: bool) -> f64 {
    hop::trace::set(on);
    hop::trace::now()
}

/// The timers received since the last call, as JSON: `[{ executionId, attempt, kind,
/// armed, due, fired, received }]`, times in ms on the trace clock.
#[napi]
pub fn take_timer_trace() -> String {
    let taken = hop::trace::RECEIVED.with(|r| std::mem::take(&mut *r.borrow_mut()));
    let list: Vec<serde_json::Value> = taken
        .into_iter()
        .map(|(id, attempt, kind, t, received)| {
            serde_json::json!({ "executionId": id, "attempt": attempt, "kind": kind, "armed": t.armed, "due": t.due, "fired": t.fired, "received": received })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Where this thread's timers wait (for tests, not the public API): `[on its event
/// loop, on the deadline thread]`, the second -1 while that thread was never started.
#[napi]
pub fn pending_timers() -> Vec<i64> {
    hop::pending_timers().to_vec()
}

/// Arms this thread's new timers on the deadline thread (`true`), as on a system where
/// the event loop cannot take them, or on the loop again (for tests, not the public API).
#[napi]
pub fn timers_on_thread(on: bool) {
    #[cfg(target_os = "linux")]
    crate::loop_timers::bypass(on);
    #[cfg(not(target_os = "linux"))]
    let _ = on;
}

/// The threshold of `startLarge`, in UTF-16 code units.
#[napi]
pub fn large_text_units() -> u32 {
    LARGE_TEXT_UNITS
}

fn call_wake(env: RawEnv, engine: u32, ticket: f64, text: Js) {
    let wake = WAKE.with(|w| w.borrow().as_ref().map(|r| r.value(env)));
    if let Some(wake) = wake {
        let args = [js::number(env, f64::from(engine)), js::number(env, ticket), text.0];
        if let Err(thrown) = js::call(env, js::undefined(env), wake, &args) {
            // The runtime's own code threw: surface it as an uncaught exception rather
            // than lose it.
            unsafe { sys::napi_fatal_exception(env, thrown) };
        }
    }
}

/// A JS string argument ('' for anything else: the runtime only passes strings here).
fn text(env: RawEnv, v: Js) -> String {
    js::get_string(env, v.0).unwrap_or_default()
}

fn find(engine: u32) -> Option<Rc<Inner>> {
    ENGINES.with(|e| e.borrow().get(&engine).and_then(Weak::upgrade))
}

/// A timer fired, or a worker finished: on the JS thread.
pub fn on_message(env: RawEnv, message: Message) {
    match message {
        Message::Timer { engine, key, attempt, kind, trace } => {
            let Some(inner) = find(engine) else { return };
            if let Some(t) = trace {
                let received = hop::trace::now();
                let id = inner.with_host(|h| h.engine().id_of(key).map(str::to_owned)).flatten().unwrap_or_default();
                let kind = match kind {
                    TimerKind::Attempt => "attempt",
                    TimerKind::Resume => "resume",
                    TimerKind::Total => "total",
                    TimerKind::Approval => "approval",
                };
                hop::trace::RECEIVED.with(|r| r.borrow_mut().push((id, attempt, kind, *t, received)));
            }
            inner.deadlines.borrow_mut().remove(&(key, kind));
            let text = inner.call(env, |h| match kind {
                TimerKind::Attempt => h.timed_out(key, attempt),
                TimerKind::Resume => h.resume(key),
                TimerKind::Total => h.total_timed_out(key),
                TimerKind::Approval => h.approval_expired(key),
            });
            call_wake(env, engine, 0.0, text);
        }
        Message::Journal { engine } => {
            let Some(inner) = find(engine) else { return };
            let Some(answers) = inner.inbox.borrow().as_ref().map(|inbox| inbox.take_posted()) else { return };
            if answers.is_empty() {
                return; // a wait took them
            }
            let text = inner.call(env, |h| h.journal_answered(answers));
            call_wake(env, engine, 0.0, text);
        }
        Message::ArgumentsReady { engine, ticket, arguments } => {
            let Some(inner) = find(engine) else { return };
            match inner.pending.borrow_mut().get_mut(&ticket) {
                Some(p) => p.parsed = Some(arguments),
                None => return,
            }
            call_wake(env, engine, ticket as f64, Js::empty_string(env));
        }
    }
}

/// Waits, on libuv's thread pool, for a stopped journal thread to end.
pub struct JournalStopped {
    thread: Option<std::thread::JoinHandle<()>>,
}

impl napi::Task for JournalStopped {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        if let Some(thread) = self.thread.take() {
            // A panic on the journal thread has been reported where it happened.
            let _ = thread.join();
        }
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}
