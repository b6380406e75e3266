//! `ToolExecutionManager`: drives the engine's execution state machine on the JS thread.
//!
//! Per call, on the common path (caller on the JS thread, handler settles before its
//! timeout, no retry) nothing leaves the JS thread:
//! - `execute` converts the arguments, asks the engine to start (resolve, validate,
//!   admit), and calls the JS handler directly;
//! - an async handler's promise is watched with `then`, and its settlement calls back
//!   into Rust on the same thread;
//! - the timeout is an entry in the deadline thread's map, removed when the attempt
//!   settles; the deadline thread reaches JS only if it fires;
//! - events are built only for types with listeners (the counts live in shared memory).
//!
//! A backoff delay is a tokio sleep (its last 2 ms on the deadline thread) followed by
//! one hop back through the threadsafe function.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ffi::CStr;
use std::ptr;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use napi::{sys, Env};
use rustc_hash::FxHashMap;
use napi_derive::napi;
use toolhost::audit::{AuditLog, AuditRecord};
use toolhost::log_lines::{LogFields, LogLine, LogOptions};
use toolhost::{
    CallOptions, DeadlineKey, EventMask, ExecutionEngine, ExecutionEvent, ExecutionRecord, ManagerConfig, RegistryError,
    RegistryErrorCode, RetryOverrides, Step, ToolError, Transition,
};

use crate::hop::{self, Hop, Message};
use crate::js::{self, Js, JsRef, RawEnv, RawValue};
use crate::json::{from_json, get_json};
use crate::large_text;
use crate::payload::{payload, payload_value};
use crate::registry::{read_arguments, JsToolHandler, RegistryShared, ToolRegistry};
use crate::runtime::{runtime, Emitter};
use crate::tool_error::{classify, to_js as error_to_js};

thread_local! {
    static MANAGERS: RefCell<FxHashMap<u32, Weak<ManagerCore>>> = RefCell::new(FxHashMap::default());
    static NEXT_MANAGER: Cell<u32> = const { Cell::new(1) };
}

fn find(manager: u32) -> Option<Rc<ManagerCore>> {
    MANAGERS.with(|m| m.borrow().get(&manager).and_then(Weak::upgrade))
}

/// The engine registry a manager runs tools of.
pub fn registry_of(manager: u32) -> Option<toolhost::ToolRegistry> {
    find(manager).map(|m| m.registry.engine.clone())
}

/// JS-side state of one execution in flight.
struct JsExec {
    deferred: sys::napi_deferred,
    /// The arguments as the handler receives them; JSON text until first needed.
    args: JsRef,
    args_parsed: bool,
    /// The tape of large argument text, used instead of `JSON.parse` (see `js_args`).
    tape: Option<Box<toolhost::tape::Tape>>,
    /// The running attempt's context, to abort on timeout or cancel.
    ctx: Option<JsRef>,
    deadline: Option<DeadlineKey>,
    signal: Option<(JsRef, JsRef)>,
    /// Keeps the manager's core alive while the execution is in flight, even if the
    /// JS `ToolExecutionManager` object itself is garbage-collected meanwhile.
    _manager: Rc<ManagerCore>,
}

/// Argument text at least this long (in UTF-16 code units) is decoded, parsed and
/// validated on a worker thread, which also makes the tape the JS thread builds the
/// handler's object from (`JSON.parse` when there is no tape).
const OFFLOAD_UNITS: usize = 64 * 1024;

/// Large argument text parsed and validated off the JS thread; the parsed tree was
/// dropped there too, and the record keeps the text.
pub struct ParsedArguments {
    arguments: toolhost::Arguments,
    /// The text was blank: read as `{}`, like short blank text.
    blank: bool,
    /// What the JS thread builds the handler's arguments from, for valid arguments.
    tape: Option<toolhost::tape::Tape>,
}

/// An `execute` call waiting for its arguments to be parsed off the JS thread.
struct PendingStart {
    deferred: sys::napi_deferred,
    name: String,
    call: CallOptions,
    signal: Option<JsRef>,
    args: JsRef,
    /// Set by `cancelAll()`: the execution starts cancelled once its arguments are back.
    cancelled: bool,
    /// As `JsExec::_manager`.
    _manager: Rc<ManagerCore>,
}

pub struct ManagerCore {
    id: u32,
    pending: RefCell<FxHashMap<u64, PendingStart>>,
    next_ticket: Cell<u64>,
    registry: Rc<RegistryShared>,
    engine: RefCell<ExecutionEngine>,
    /// Both keyed by counters, so the cheap Fx hash is safe.
    execs: RefCell<FxHashMap<u64, JsExec>>,
    emitter: Emitter,
    hop: Arc<Hop>,
    /// `(level, message, fields) => void`; `tracing` when absent.
    logger: Option<JsRef>,
    audit_log: Option<Result<AuditLog, String>>,
    /// `manager.use()` interceptors (a JS array), with their count.
    interceptors: JsRef,
    interceptor_count: Cell<usize>,
    /// Attempts admitted from the queue, with their Starting log lines, waiting for the
    /// loop in [`ManagerCore::run_admitted`].
    admitted: RefCell<VecDeque<(toolhost::AttemptSpec, Option<LogLine>)>>,
    /// Whether that loop is on the stack.
    running_admitted: Cell<bool>,
    /// A microtask to run the admitted attempts is queued (see [`ManagerCore::begin`]).
    run_queued: Cell<bool>,
    /// The function that microtask calls, made on first use.
    runner: std::cell::OnceCell<JsRef>,
    /// Whether events are being delivered; events of transitions a listener causes
    /// meanwhile wait in `later_events`.
    dispatching: Cell<bool>,
    later_events: RefCell<VecDeque<(u64, ExecutionEvent)>>,
}

fn config_error(env: RawEnv, e: &RegistryError) -> napi::Result<Js> {
    js::throw_coded(env, e.code(), &e.message, &[])
}

pub(crate) fn invalid_config(message: impl Into<String>) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidConfig, message)
}

fn read_retry(env: RawEnv, obj: RawValue) -> Result<Option<RetryOverrides>, RegistryError> {
    match get_json(env, obj, c"retry") {
        Ok(None) => Ok(None),
        Ok(Some(v)) => serde_json::from_value(v).map(Some).map_err(|e| invalid_config(format!("retry options are invalid: {e}"))),
        Err(e) => Err(invalid_config(format!("retry options are not JSON: {e}"))),
    }
}

/// `timeoutMs`: a number > 0; `null` or `Infinity` for none; absent for the default.
fn read_timeout(env: RawEnv, obj: RawValue) -> Result<Option<Option<f64>>, RegistryError> {
    if js::type_of(env, obj) != sys::ValueType::napi_object {
        return Ok(None);
    }
    let v = js::get(env, obj, c"timeoutMs");
    match js::type_of(env, v) {
        sys::ValueType::napi_undefined => Ok(None),
        sys::ValueType::napi_null => Ok(Some(None)),
        _ => match js::get_number(env, v) {
            Some(n) if n == f64::INFINITY => Ok(Some(None)),
            Some(n) if n.is_finite() && n > 0.0 => Ok(Some(Some(n))),
            _ => Err(invalid_config("timeoutMs must be a number of milliseconds > 0 (or null for no timeout)")),
        },
    }
}

fn read_count(env: RawEnv, obj: RawValue, key: &CStr, min: f64) -> Result<Option<usize>, RegistryError> {
    let Some(v) = js::get_opt(env, obj, key) else { return Ok(None) };
    match js::get_number(env, v) {
        Some(n) if n == f64::INFINITY => Ok(Some(usize::MAX)),
        Some(n) if n.is_finite() && n >= min && n.fract() == 0.0 => Ok(Some(n as usize)),
        _ => Err(invalid_config(format!("{} must be a whole number >= {min}", key.to_string_lossy()))),
    }
}

fn read_strings(env: RawEnv, obj: RawValue, key: &CStr) -> Result<Vec<String>, RegistryError> {
    let Some(v) = js::get_opt(env, obj, key) else { return Ok(Vec::new()) };
    if !js::is_array(env, v) {
        return Err(invalid_config(format!("{} must be an array of strings", key.to_string_lossy())));
    }
    js::array_items(env, v)
        .unwrap_or_default()
        .into_iter()
        .map(|i| js::get_string(env, i).ok_or_else(|| invalid_config(format!("{} must be an array of strings", key.to_string_lossy()))))
        .collect()
}

/// A boolean option: `None` when absent, an error naming it when not a boolean.
pub(crate) fn read_flag(env: RawEnv, obj: RawValue, key: &CStr) -> Result<Option<bool>, RegistryError> {
    let Some(v) = js::get_opt(env, obj, key) else { return Ok(None) };
    js::get_bool(env, v).map(Some).ok_or_else(|| invalid_config(format!("{} must be true or false", key.to_string_lossy())))
}

/// An optional string option. Anything else is refused rather than read as absent: a
/// `sessionId` dropped that way would run the call against the global tools.
pub(crate) fn string_option(env: RawEnv, obj: RawValue, key: &CStr) -> Result<Option<String>, RegistryError> {
    let Some(v) = js::get_opt(env, obj, key) else { return Ok(None) };
    js::get_string(env, v).map(Some).ok_or_else(|| invalid_config(format!("{} must be a string", key.to_string_lossy())))
}

fn manager_config(env: RawEnv, options: Option<RawValue>) -> Result<ManagerConfig, RegistryError> {
    let mut config = ManagerConfig::default();
    let Some(o) = options.filter(|o| js::type_of(env, *o) == sys::ValueType::napi_object) else {
        return Ok(config);
    };
    if let Some(r) = read_retry(env, o)? {
        config.retry = config.retry.with_overrides(&r)?;
    }
    if let Some(t) = read_timeout(env, o)? {
        config.timeout_ms = t;
    }
    if let Some(n) = read_count(env, o, c"maxConcurrency", 1.0)? {
        config.max_concurrency = n;
    }
    if let Some(n) = read_count(env, o, c"historyLimit", 0.0)? {
        config.history_limit = n;
    }
    if let Some(v) = read_flag(env, o, c"validation")? {
        config.validation = v;
    }
    config.redact = read_strings(env, o, c"redact")?;
    let truncate_logs = read_count(env, o, c"truncateLogs", 0.0)?.unwrap_or(100);
    let log_arguments = read_flag(env, o, c"logArguments")?.unwrap_or(true);
    if read_flag(env, o, c"logging")?.unwrap_or(false) {
        config.logging = Some(LogOptions {
            log_arguments,
            truncate_logs,
            redact: config.redact.clone(),
        });
    }
    config.metadata = read_flag(env, o, c"metadata")?.unwrap_or(false);
    if js::get_opt(env, o, c"logger").is_some_and(|l| !js::is_function(env, l)) {
        return Err(invalid_config("logger must be a function (level, message, fields) => void"));
    }
    if js::get_opt(env, o, c"auditLog").is_some_and(|p| js::type_of(env, p) != sys::ValueType::napi_string) {
        return Err(invalid_config("auditLog must be a file path (a string)"));
    }
    config.check()?;
    Ok(config)
}

impl ManagerCore {
    fn sync_mask(&self) {
        let mut mask = 0u8;
        for slot in 0..7 {
            if self.emitter.count(slot) > 0 {
                mask |= 1 << slot;
            }
        }
        let mut engine = self.engine.borrow_mut();
        if engine.wanted_events() != EventMask(mask) {
            engine.set_wanted_events(EventMask(mask));
        }
        engine.set_audit_wanted(self.audit_log.is_some() || self.emitter.count(7) > 0);
    }

    /// Whether failed attempts' stacks are needed (by the logging interceptor).
    fn logs_stacks(&self) -> bool {
        self.engine.borrow().config().logging.is_some()
    }

    fn log<'a>(&self, env: RawEnv, lines: &'a [LogLine], names: &mut Names<'a>) {
        self.log_except(env, lines, |_| false, names);
    }

    /// Logs a line that was to ride along with a JS call that is not made after all.
    fn log_alone(&self, env: RawEnv, line: Option<&LogLine>) {
        if let Some(line) = line {
            self.log(env, std::slice::from_ref(line), &mut None);
        }
    }

    /// Logs `lines` but those whose index `skip` accepts (delivered by the caller).
    fn log_except<'a>(&self, env: RawEnv, lines: &'a [LogLine], skip: impl Fn(usize) -> bool, names: &mut Names<'a>) {
        let rt = match (&self.logger, runtime(env)) {
            (Some(logger), Ok(rt)) => Some((logger, rt)),
            _ => None,
        };
        for (i, line) in lines.iter().enumerate() {
            if skip(i) {
                continue;
            }
            let Some((logger, rt)) = &rt else {
                toolhost::log_lines::trace_line(line);
                continue;
            };
            let f = &line.fields;
            let text = |v: &Option<String>| v.as_deref().map_or_else(|| js::undefined(env), |s| js::string(env, s));
            let (logger, message) = (logger.value(env), js::string(env, &line.message));
            let (id, tool) = names_of(env, names, &f.execution_id, &f.tool_name);
            let _ = match plain_line(line) {
                Some(PlainLine::Starting(attempt)) => {
                    rt.call(env, &rt.log_starting, &[logger, message, id, tool, js::number(env, f64::from(attempt)), text(&f.args)])
                }
                Some(PlainLine::Completed(duration)) => {
                    rt.call(env, &rt.log_completed, &[logger, message, id, tool, js::number(env, duration)])
                }
                None => {
                    let args = [
                        logger,
                        js::string(env, line.level.as_str()),
                        message,
                        id,
                        tool,
                        js::opt_number(env, f.attempt_number.map(f64::from)),
                        text(&f.args),
                        js::opt_number(env, f.duration_ms),
                        text(&f.error),
                        text(&f.stack),
                    ];
                    rt.call(env, &rt.call_logger, &args)
                }
            };
        }
    }

    /// Appends the record to the audit file (flushed before the result is returned)
    /// and sends it as `tool-invocation-recorded`. A write failure is reported through
    /// the logger and `tool-audit-error`; the execution still completes.
    fn audit(&self, env: RawEnv, record: &AuditRecord) {
        let failure = match &self.audit_log {
            Some(Ok(file)) => file.append(record).err().map(|e| format!("audit log {} could not be written: {e}", file.path().display())),
            Some(Err(open_error)) => Some(open_error.clone()),
            None => None,
        };
        let detail = from_json(env, &serde_json::to_value(record).unwrap_or_default());
        if let Some(message) = failure {
            let fields = LogFields { execution_id: record.execution_id.clone(), tool_name: record.tool_name.clone(), ..LogFields::default() };
            let line = LogLine { level: toolhost::log_lines::LogLevel::Error, message: format!("[TOOL EXECUTION] {message}"), fields };
            self.log(env, &[line], &mut None);
            if self.emitter.count(9) > 0 {
                let d = js::object(env);
                js::set(env, d, c"message", js::string(env, &message));
                js::set(env, d, c"record", detail);
                self.emitter.emit(env, "tool-audit-error", d, js::undefined(env));
            }
        }
        if self.emitter.count(7) > 0 {
            self.emitter.emit(env, "tool-invocation-recorded", detail, js::undefined(env));
        }
    }

    /// The arguments' JS value, parsing JSON text on first use.
    fn js_args(&self, env: RawEnv, key: u64) -> Option<RawValue> {
        let mut execs = self.execs.borrow_mut();
        let exec = execs.get_mut(&key)?;
        let value = exec.args.value(env);
        if exec.args_parsed {
            return Some(value);
        }
        let rt = runtime(env).ok()?;
        let decoded = exec.tape.take().and_then(|tape| {
            let (ops, numbers) = (js::int32_array(env, &tape.ops), js::float64_array(env, &tape.numbers));
            rt.call(env, &rt.decode_tape, &[value, ops, numbers, js::string(env, &tape.shapes)]).ok()
        });
        let parsed = decoded.unwrap_or_else(|| rt.call(env, &rt.parse, &[value]).unwrap_or_else(|_| js::undefined(env)));
        exec.args = JsRef::new(env, parsed);
        exec.args_parsed = true;
        Some(parsed)
    }

    /// Registers the JS side of a started execution and drives its first transition.
    /// The caller has already called `hop::retain` for it.
    ///
    /// Events and log lines of the start are delivered now, but an admitted first attempt
    /// runs from a microtask, once the caller's synchronous code is done: a caller that
    /// starts many executions in a loop would otherwise have their first failures seen
    /// only after the loop, and their retries fall due late by the loop's length.
    fn begin(self: &Rc<Self>, env: RawEnv, t: Transition, deferred: sys::napi_deferred, args: RawValue, args_parsed: bool, tape: Option<toolhost::tape::Tape>, signal: Option<RawValue>) {
        let signal = match (signal, runtime(env)) {
            (Some(s), Ok(rt)) if !matches!(t.step, Step::Finished(_)) => {
                let listener = rt.call(env, &rt.listen_signal, &[s, js::number(env, self.id as f64), js::number(env, t.key as f64)]);
                listener.ok().map(|l| (JsRef::new(env, s), JsRef::new(env, l)))
            }
            _ => None,
        };
        let tape = tape.map(Box::new);
        let exec = JsExec { deferred, args: JsRef::new(env, args), args_parsed, tape, ctx: None, deadline: None, signal, _manager: self.clone() };
        self.execs.borrow_mut().insert(t.key, exec);
        self.drive_from(env, t, true);
    }

    fn drive(self: &Rc<Self>, env: RawEnv, t: Transition) {
        self.drive_from(env, t, false)
    }

    /// Delivers a transition; with `run_later`, an attempt to run waits for a microtask.
    fn drive_from(self: &Rc<Self>, env: RawEnv, mut t: Transition, run_later: bool) {
        let key = t.key;
        // A transition's events, log lines and result mostly concern one execution:
        // its id and tool name become JS strings once.
        let mut names = None;
        let terminal = if t.events.is_empty() { None } else { self.dispatch(env, key, &t.events, &mut names) };
        // When the last line is the plain Starting line of the attempt about to run, or
        // the plain Completed line of the result about to be returned (with no audit
        // record to write in between), it rides along with that JS call: one crossing
        // fewer, same order.
        let last = t.logs.len().checked_sub(1).filter(|_| self.logger.is_some());
        let carried = last.filter(|&i| {
            let line = &t.logs[i];
            match (&t.step, plain_line(line)) {
                (Step::Run(spec), Some(PlainLine::Starting(_))) => line.fields.execution_id == spec.execution_id,
                (Step::Finished(record), Some(PlainLine::Completed(_))) => t.audit.is_none() && line.fields.execution_id == record.id,
                _ => false,
            }
        });
        // The Starting line of an attempt admitted from the queue is logged when that
        // attempt runs (see `run_admitted`).
        let admitted: Vec<_> = t
            .admitted
            .into_iter()
            .map(|spec| {
                let line = t.logs.iter().position(|l| {
                    matches!(plain_line(l), Some(PlainLine::Starting(n)) if n == spec.attempt_number) && l.fields.execution_id == spec.execution_id
                });
                (spec, line)
            })
            .collect();
        if !t.logs.is_empty() {
            let skip = |i| carried == Some(i) || admitted.iter().any(|(_, line)| *line == Some(i));
            self.log_except(env, &t.logs, skip, &mut names);
        }
        let carried_at = carried;
        let carried = carried.map(|i| &t.logs[i]);
        if let Some(record) = &t.audit {
            self.audit(env, record);
        }
        if t.interrupted_attempt.is_some() {
            self.interrupt(env, key, None);
        }
        match t.step {
            Step::Run(spec) if run_later => {
                // Moved out, not cloned: this transition is done with it.
                let line = carried_at.map(|i| {
                    let line = &mut t.logs[i];
                    LogLine { level: line.level, message: std::mem::take(&mut line.message), fields: std::mem::take(&mut line.fields) }
                });
                self.admitted.borrow_mut().push_back((spec, line));
                self.run_soon(env);
            }
            Step::Run(spec) => self.run_attempt(env, spec, carried),
            Step::Retry { delay } => {
                if let Some(exec) = self.execs.borrow_mut().get_mut(&key) {
                    exec.ctx = None;
                }
                hop::post_after(self.hop.clone(), delay, Message::Resume { manager: self.id, key });
            }
            Step::Finished(record) => self.complete(env, key, &record, terminal, carried, &mut names),
            Step::Queued | Step::Stale => {}
        }
        if !admitted.is_empty() {
            let lines = admitted.into_iter().map(|(spec, line)| (spec, line.map(|i| t.logs[i].clone())));
            self.admitted.borrow_mut().extend(lines);
            self.run_admitted(env);
        }
    }

    /// Runs the admitted attempts, in order. A handler that finishes synchronously frees
    /// its slot and admits the next one from inside this loop; that attempt is appended
    /// and run by the loop already on the stack, not one stack frame deeper, so a long
    /// queue of synchronous handlers cannot overflow the stack.
    ///
    /// Admission from the queue is immediate (only `begin` defers a first attempt to a
    /// microtask), so code that cancels several executions must cancel the queued ones
    /// before the running ones (see `in_flight_keys` and `on_signal_aborted`), or a freed
    /// slot starts a call about to be cancelled. (Deferring these admissions too was
    /// tried twice: B5's p99 rose from about 1.0 to 2.3 ms over ten interleaved runs,
    /// and by about 0.4 ms over four.)
    fn run_admitted(self: &Rc<Self>, env: RawEnv) {
        if self.running_admitted.replace(true) {
            return;
        }
        let _running = Reset(&self.running_admitted);
        loop {
            let next = self.admitted.borrow_mut().pop_front();
            match next {
                Some((spec, start)) => self.run_attempt(env, spec, start.as_ref()),
                None => break,
            }
        }
    }

    /// Queues one microtask that runs the admitted attempts (unless one is queued).
    fn run_soon(self: &Rc<Self>, env: RawEnv) {
        if self.run_queued.replace(true) {
            return;
        }
        let queued = runtime(env).is_ok_and(|rt| {
            let runner = self.runner.get_or_init(|| {
                let f = rt.call(env, &rt.runner, &[js::number(env, self.id as f64)]).unwrap_or_else(|_| js::undefined(env));
                JsRef::new(env, f)
            });
            js::call(env, rt.settled.value(env), rt.then.value(env), &[runner.value(env)]).is_ok()
        });
        if !queued {
            // Only the JS engine failing (out of stack) gets here: run them now instead.
            self.run_queued.set(false);
            self.run_admitted(env);
        }
    }

    /// Aborts the running attempt's signal and clears its timeout.
    fn interrupt(&self, env: RawEnv, key: u64, reason: Option<RawValue>) {
        let (ctx, deadline) = match self.execs.borrow_mut().get_mut(&key) {
            Some(exec) => (exec.ctx.take(), exec.deadline.take()),
            None => return,
        };
        if let Some(d) = deadline {
            hop::deadlines().cancel(d);
        }
        if let (Some(ctx), Ok(rt)) = (ctx, runtime(env)) {
            let reason = reason.unwrap_or_else(|| {
                rt.call(env, &rt.abort_error, &[js::string(env, "the execution was cancelled")]).unwrap_or_else(|_| js::undefined(env))
            });
            let _ = rt.call(env, &rt.abort_context, &[ctx.value(env), reason]);
        }
    }

    /// Runs an attempt's handler; `start` is its Starting log line, delivered just before.
    fn run_attempt(self: &Rc<Self>, env: RawEnv, spec: toolhost::AttemptSpec, start: Option<&LogLine>) {
        let key = spec.key;
        let attempt = spec.attempt_number;
        // An attempt cancelled before it could start is not announced as starting.
        if !self.engine.borrow().is_current(key, attempt) {
            return;
        }
        // Where no handler call follows, the Starting line is logged on its own.
        let (Some(args), Ok(rt)) = (self.js_args(env, key), runtime(env)) else { return self.log_alone(env, start) };
        let Some(handler) = spec.tool.handler.as_any().downcast_ref::<JsToolHandler>() else {
            self.log_alone(env, start);
            let e = ToolError::permanent(format!("tool '{}' has no JS handler", spec.tool.name()));
            return self.attempt_done(env, key, attempt, Err(e));
        };
        let (logger, message, logged_args) = match (start, &self.logger) {
            (Some(line), Some(logger)) => (
                logger.value(env),
                js::string(env, &line.message),
                line.fields.args.as_deref().map_or_else(|| js::undefined(env), |a| js::string(env, a)),
            ),
            (start, None) => {
                start.into_iter().for_each(toolhost::log_lines::trace_line);
                (js::undefined(env), js::undefined(env), js::undefined(env))
            }
            _ => (js::undefined(env), js::undefined(env), js::undefined(env)),
        };
        let ctx_args = [
            js::string(env, &spec.execution_id),
            js::opt_string(env, spec.tool_call_id.as_deref()),
            js::opt_string(env, spec.session_id.as_deref()),
            js::string(env, spec.tool.name()),
            js::number(env, attempt as f64),
            js::number(env, spec.max_attempts as f64),
            logger,
            message,
            logged_args,
        ];
        let ctx = rt.call(env, &rt.make_context, &ctx_args).unwrap_or_else(|_| js::undefined(env));
        // Kept before the handler runs, so that a cancel or timeout from its synchronous
        // part, an interceptor or the logger aborts this context's signal.
        if let Some(exec) = self.execs.borrow_mut().get_mut(&key) {
            exec.ctx = Some(JsRef::new(env, ctx));
        }
        // The logger, handed the Starting line just now, may have cancelled it.
        if !self.engine.borrow().is_current(key, attempt) {
            return;
        }
        let called = if self.interceptor_count.get() == 0 {
            js::call(env, js::undefined(env), handler.function.value(env), &[args, ctx])
        } else {
            rt.call(env, &rt.run_chain, &[self.interceptors.value(env), handler.function.value(env), args, ctx])
        };
        match called {
            Err(thrown) => self.attempt_done(env, key, attempt, Err(classify(env, spec.tool.name(), thrown, self.logs_stacks()))),
            Ok(v) if js::is_promise(env, v) => {
                // Cancelled while the handler ran: no timeout to keep. The promise is
                // still watched (its settlement is ignored), so a rejection is handled.
                if self.engine.borrow().is_current(key, attempt) {
                    let deadline = spec.timeout.map(|d| {
                        hop::deadlines().schedule(d, (self.hop.clone(), Message::Timeout { manager: self.id, key, attempt }))
                    });
                    if let Some(exec) = self.execs.borrow_mut().get_mut(&key) {
                        exec.deadline = deadline;
                    }
                }
                let watch_args = [v, js::number(env, self.id as f64), js::number(env, key as f64), js::number(env, attempt as f64)];
                if let Err(thrown) = rt.call(env, &rt.watch, &watch_args) {
                    // Only the JS engine failing (out of stack) gets here: the attempt
                    // fails with that error instead of waiting for a settlement never seen.
                    self.attempt_done(env, key, attempt, Err(classify(env, spec.tool.name(), thrown, self.logs_stacks())));
                }
            }
            Ok(v) => self.attempt_done(env, key, attempt, Ok(v)),
        }
    }

    fn attempt_done(self: &Rc<Self>, env: RawEnv, key: u64, attempt: u32, outcome: Result<RawValue, ToolError>) {
        // The stamp runs JS (getters of the result), so no engine borrow is held across it.
        let meta = if outcome.is_ok() { self.engine.borrow_mut().metadata_for(key) } else { None };
        let outcome = outcome.map(|v| match meta {
            None => payload(env, v),
            Some(meta) => {
                let args = [v, js::number(env, meta.duration_ms), js::string(env, &meta.tool_name), js::string(env, &meta.timestamp)];
                let stamped = runtime(env).ok().and_then(|rt| rt.call(env, &rt.with_metadata, &args).ok());
                payload(env, stamped.unwrap_or(v))
            }
        });
        if let Some(exec) = self.execs.borrow_mut().get_mut(&key) {
            if let Some(d) = exec.deadline.take() {
                hop::deadlines().cancel(d);
            }
            exec.ctx = None;
        }
        self.sync_mask();
        let t = self.engine.borrow_mut().attempt_finished(key, attempt, outcome);
        self.drive(env, t);
    }

    /// Resolves the execution's promise; `done` is its Completed log line, delivered just before.
    fn complete<'a>(&self, env: RawEnv, key: u64, record: &'a ExecutionRecord, built: Option<RawValue>, done: Option<&LogLine>, names: &mut Names<'a>) {
        let exec = self.execs.borrow_mut().remove(&key);
        if let Some(d) = exec.as_ref().and_then(|e| e.deadline) {
            hop::deadlines().cancel(d);
        }
        let (Some(exec), Ok(rt)) = (exec, runtime(env)) else {
            // No result to build: the Completed line is logged on its own.
            return self.log_alone(env, done);
        };
        if let Some((signal, listener)) = &exec.signal {
            let _ = rt.call(env, &rt.unlisten_signal, &[signal.value(env), listener.value(env)]);
        }
        let execution = built.unwrap_or_else(|| {
            let args = if exec.args_parsed { exec.args.value(env) } else { args_to_js(env, &record.args) };
            let (id, tool) = names_of(env, names, &record.id, &record.tool_name);
            record_to_js_with(env, record, args, id, tool)
        });
        let (success, value) = match (&record.result, &record.error) {
            (Some(result), _) if record.status == toolhost::ExecutionStatus::Succeeded => (true, payload_value(env, result.as_ref())),
            (_, Some(e)) => (false, error_to_js(env, e)),
            _ => (true, js::undefined(env)),
        };
        let mut args = [js::boolean(env, success), value, execution, js::undefined(env), js::undefined(env), js::undefined(env)];
        if let (Some(line), Some(logger)) = (done, &self.logger) {
            args[3] = logger.value(env);
            args[4] = js::string(env, &line.message);
            args[5] = js::opt_number(env, line.fields.duration_ms);
        }
        match rt.call(env, &rt.outcome, &args) {
            Ok(outcome) => unsafe { sys::napi_resolve_deferred(env, exec.deferred, outcome) },
            // Only the JS engine failing (out of stack or memory) gets here: the caller
            // gets that error rather than an `undefined` result.
            Err(thrown) => unsafe { sys::napi_reject_deferred(env, exec.deferred, thrown) },
        };
        hop::release(env);
    }

    /// Dispatches events. Returns the JS record built for the terminal event of
    /// execution `key`, so the result can reuse it.
    ///
    /// A listener may cause another transition (cancel an execution, start one, free a
    /// slot). Its events wait until the ones being delivered are done, so every
    /// execution's events keep their order: started, validating, executing, ..., then
    /// the terminal one.
    fn dispatch<'a>(&self, env: RawEnv, key: u64, events: &'a [ExecutionEvent], cached: &mut Names<'a>) -> Option<RawValue> {
        if self.dispatching.replace(true) {
            self.later_events.borrow_mut().extend(events.iter().map(|e| (key, e.clone())));
            return None;
        }
        let _dispatching = Reset(&self.dispatching);
        let terminal = self.deliver(env, key, events, cached);
        loop {
            let next = self.later_events.borrow_mut().pop_front();
            let Some((key, event)) = next else { break };
            self.deliver(env, key, std::slice::from_ref(&event), &mut None);
        }
        terminal
    }

    fn deliver<'a>(&self, env: RawEnv, key: u64, events: &'a [ExecutionEvent], cached: &mut Names<'a>) -> Option<RawValue> {
        let Ok(rt) = runtime(env) else { return None };
        let em = self.emitter.object(env);
        let mut terminal = None;
        let mut names = |id, tool| names_of(env, cached, id, tool);
        for event in events {
            let _ = match event {
                ExecutionEvent::Started { execution } => {
                    let (id, tool) = names(&execution.id, &execution.tool_name);
                    let record = record_to_js_with(env, execution, self.event_args(env, key, &execution.args), id, tool);
                    rt.call(env, &rt.emit_started, &[em, record])
                }
                ExecutionEvent::Validating { execution_id, tool_name, args } => {
                    let args = self.event_args(env, key, args);
                    let (id, tool) = names(execution_id, tool_name);
                    rt.call(env, &rt.emit_validating, &[em, id, tool, args])
                }
                ExecutionEvent::Executing { execution_id, tool_name, attempt_number } => {
                    let (id, tool) = names(execution_id, tool_name);
                    let values = [em, id, tool, js::number(env, *attempt_number as f64)];
                    rt.call(env, &rt.emit_executing, &values)
                }
                ExecutionEvent::Retrying { execution_id, tool_name, attempt_number, max_attempts, error, delay_ms } => {
                    let values = [
                        em,
                        js::string(env, execution_id),
                        js::string(env, tool_name),
                        js::number(env, *attempt_number as f64),
                        js::number(env, *max_attempts as f64),
                        error_to_js(env, error),
                        js::number(env, *delay_ms),
                    ];
                    rt.call(env, &rt.emit_retrying, &values)
                }
                ExecutionEvent::Succeeded { execution } | ExecutionEvent::Failed { execution } => {
                    // Terminal events only come for the transition's own execution.
                    let (id, tool) = names(&execution.id, &execution.tool_name);
                    let record = record_to_js_with(env, execution, self.event_args(env, key, &execution.args), id, tool);
                    terminal = Some(record);
                    if let ExecutionEvent::Succeeded { .. } = event {
                        let result = execution.result.as_ref().map_or_else(|| js::undefined(env), |r| payload_value(env, r.as_ref()));
                        rt.call(env, &rt.emit_succeeded, &[em, record, result])
                    } else {
                        let error = execution.error.as_ref().map_or_else(|| js::undefined(env), |e| error_to_js(env, e));
                        rt.call(env, &rt.emit_failed, &[em, record, error])
                    }
                }
                ExecutionEvent::Cancelled { execution_id, tool_name } => {
                    rt.call(env, &rt.emit_cancelled, &[em, js::string(env, execution_id), js::string(env, tool_name)])
                }
            };
        }
        terminal
    }

    /// The arguments of execution `key` for an event: the handler's own JS object when
    /// it exists; for kept text, the handler's object made now (from the tape, or one
    /// `JSON.parse` of the caller's own string, which the handler then reuses); JSON
    /// built anew otherwise.
    fn event_args(&self, env: RawEnv, key: u64, recorded: &toolhost::RecordedArgs) -> RawValue {
        let parsed = self.execs.borrow().get(&key).map(|exec| exec.args_parsed);
        match (parsed, recorded) {
            (Some(true), _) | (Some(false), toolhost::RecordedArgs::Text(_)) => {
                self.js_args(env, key).unwrap_or_else(|| args_to_js(env, recorded))
            }
            _ => args_to_js(env, recorded),
        }
    }

    /// Cancels every execution in flight, or only those of one session. Returns how
    /// many were cancelled.
    fn cancel_in_flight(self: &Rc<Self>, env: RawEnv, session_id: Option<&str>) -> usize {
        // A call whose large argument text is still on a worker starts cancelled when
        // the text comes back.
        let mut waiting = 0;
        for p in self.pending.borrow_mut().values_mut() {
            if !p.cancelled && (session_id.is_none() || p.call.session_id.as_deref() == session_id) {
                p.cancelled = true;
                waiting += 1;
            }
        }
        let keys = self.engine.borrow().in_flight_keys(session_id);
        let n = keys.len();
        self.cancel_keys(env, keys);
        n + waiting
    }

    /// Cancels executions in the order given (see `in_flight_keys` for why it matters).
    fn cancel_keys(self: &Rc<Self>, env: RawEnv, keys: Vec<u64>) {
        for key in keys {
            self.sync_mask();
            let t = self.engine.borrow_mut().cancel_key(key);
            self.drive(env, t);
        }
    }

    /// Cancels the executions of a destroyed session.
    pub fn destroy_session(self: &Rc<Self>, env: RawEnv, session_id: &str) {
        self.cancel_in_flight(env, Some(session_id));
        self.engine.borrow_mut().forget_session(session_id);
    }
}

/// Sets a flag back to false when dropped, also when a panic unwinds.
struct Reset<'a>(&'a Cell<bool>);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// A record's arguments as JS: built from JSON, or `JSON.parse` of kept text.
fn args_to_js(env: RawEnv, args: &toolhost::RecordedArgs) -> RawValue {
    match args {
        toolhost::RecordedArgs::Json(v) => from_json(env, v),
        toolhost::RecordedArgs::Text(t) => runtime(env)
            .ok()
            .and_then(|rt| rt.call(env, &rt.parse, &[js::string(env, t)]).ok())
            .unwrap_or_else(|| js::undefined(env)),
    }
}

impl Drop for ManagerCore {
    fn drop(&mut self) {
        let _ = MANAGERS.try_with(|m| m.borrow_mut().remove(&self.id));
    }
}

/// `{ id, toolCallId, sessionId, toolName, args, status, result, error, timing, retry }`
pub fn record_to_js(env: RawEnv, r: &ExecutionRecord, args: RawValue) -> RawValue {
    record_to_js_with(env, r, args, js::string(env, &r.id), js::string(env, &r.tool_name))
}

/// A log line `logStarting` or `logCompleted` can deliver: no error, stack or result
/// preview, and for Completed no argument preview either.
enum PlainLine {
    Starting(u32),
    Completed(f64),
}

fn plain_line(line: &LogLine) -> Option<PlainLine> {
    let f = &line.fields;
    if f.error.is_some() || f.stack.is_some() || f.result.is_some() {
        return None;
    }
    match (f.attempt_number, f.duration_ms) {
        (Some(attempt), None) => Some(PlainLine::Starting(attempt)),
        (None, Some(duration)) if f.args.is_none() => Some(PlainLine::Completed(duration)),
        _ => None,
    }
}

/// The JS strings of one execution's id and tool name, valid in the current callback.
type Names<'a> = Option<(&'a str, RawValue, RawValue)>;

/// The JS strings of an execution id and tool name, made once per `cache` entry.
fn names_of<'a>(env: RawEnv, cache: &mut Names<'a>, id: &'a str, tool: &str) -> (RawValue, RawValue) {
    match *cache {
        Some((cached, i, t)) if cached == id => (i, t),
        _ => {
            let made = (js::string(env, id), js::string(env, tool));
            *cache = Some((id, made.0, made.1));
            made
        }
    }
}

/// As [`record_to_js`], with the id and tool name strings already made.
fn record_to_js_with(env: RawEnv, r: &ExecutionRecord, args: RawValue, id: RawValue, tool: RawValue) -> RawValue {
    let Ok(rt) = runtime(env) else { return js::undefined(env) };
    let result = r.result.as_ref().map_or_else(|| js::undefined(env), |p| payload_value(env, p.as_ref()));
    let error = r.error.as_ref().map_or_else(|| js::undefined(env), |e| error_to_js(env, e));
    let previous = js::array(env, r.previous_errors.iter().map(|e| error_to_js(env, e)));
    let values = [
        id,
        js::opt_string(env, r.tool_call_id.as_deref()),
        js::opt_string(env, r.session_id.as_deref()),
        tool,
        args,
        js::string(env, r.status.as_str()),
        result,
        error,
        js::number(env, r.timing.queued_at),
        js::opt_number(env, r.timing.started_at),
        js::opt_number(env, r.timing.completed_at),
        js::opt_number(env, r.timing.duration_ms),
        js::number(env, r.attempt_number as f64),
        js::number(env, r.max_attempts as f64),
        previous,
    ];
    rt.call(env, &rt.record, &values).unwrap_or_else(|_| js::undefined(env))
}

pub fn on_settled(env: RawEnv, manager: u32, key: u64, attempt: u32, ok: bool, value: RawValue) {
    let Some(core) = find(manager) else { return };
    if !core.engine.borrow().is_current(key, attempt) {
        return;
    }
    let outcome = if ok {
        Ok(value)
    } else {
        let tool = core.engine.borrow().timeout_of(key).map(|(t, _)| t.to_string()).unwrap_or_default();
        Err(classify(env, &tool, value, core.logs_stacks()))
    };
    core.attempt_done(env, key, attempt, outcome);
}

/// The microtask queued by [`ManagerCore::run_soon`].
pub fn on_run_soon(env: RawEnv, manager: u32) {
    let Some(core) = find(manager) else { return };
    core.run_queued.set(false);
    core.run_admitted(env);
}

/// An execution's signal aborted. Every execution of this manager passed the same
/// signal is cancelled now, queued ones first, so the slot of a cancelled running one
/// never starts a queued one whose own abort listener has not run yet.
pub fn on_signal_aborted(env: RawEnv, manager: u32, key: u64) {
    let Some(core) = find(manager) else { return };
    let signal = core.execs.borrow().get(&key).and_then(|e| e.signal.as_ref().map(|(s, _)| s.value(env)));
    let keys = match signal {
        None => vec![key],
        Some(signal) => {
            let execs = core.execs.borrow();
            let shares = |k: &u64| execs.get(k).and_then(|e| e.signal.as_ref()).is_some_and(|(s, _)| js::strict_equals(env, s.value(env), signal));
            core.engine.borrow().in_flight_keys(None).into_iter().filter(shares).collect()
        }
    };
    core.cancel_keys(env, keys);
}

pub fn on_message(env: RawEnv, message: Message) {
    match message {
        Message::Timeout { manager, key, attempt } => {
            let Some(core) = find(manager) else { return };
            let timed_out = {
                let engine = core.engine.borrow();
                match engine.timeout_of(key) {
                    Some((tool, Some(t))) if engine.is_current(key, attempt) => Some(ToolError::timeout(tool, t.as_millis() as u64)),
                    _ => None,
                }
            };
            let Some(error) = timed_out else { return };
            if let Some(exec) = core.execs.borrow_mut().get_mut(&key) {
                exec.deadline = None;
            }
            if let Ok(rt) = runtime(env) {
                let reason = rt.call(env, &rt.timeout_error, &[js::string(env, &error.message)]).unwrap_or_else(|_| js::undefined(env));
                core.interrupt(env, key, Some(reason));
            }
            core.attempt_done(env, key, attempt, Err(error));
        }
        Message::Resume { manager, key } => {
            let Some(core) = find(manager) else { return };
            core.sync_mask();
            let t = core.engine.borrow_mut().begin_attempt(key);
            core.drive(env, t);
        }
        Message::ArgumentsReady { manager, ticket, arguments } => {
            let Some(core) = find(manager) else { return };
            let Some(mut pending) = core.pending.borrow_mut().remove(&ticket) else { return };
            let signal = pending.signal.take().map(|s| s.value(env));
            if let Some(s) = signal {
                pending.call.already_cancelled = js::get_bool_prop(env, s, c"aborted").unwrap_or(false);
            }
            pending.call.already_cancelled |= pending.cancelled;
            core.sync_mask();
            let t = core.engine.borrow_mut().start_with(&pending.name, arguments.arguments, pending.call);
            let args = if arguments.blank { js::object(env) } else { pending.args.value(env) };
            core.begin(env, t, pending.deferred, args, arguments.blank, arguments.tape, signal);
        }
    }
}

/// Runs tools with validation, retries, backoff, timeouts, cancellation and events.
#[napi]
pub struct ToolExecutionManager {
    core: Rc<ManagerCore>,
}

#[napi]
impl ToolExecutionManager {
    /// Throws `INVALID_CONFIG` for nonsensical numbers (negative delays,
    /// `maxAttempts < 1`, `baseDelay > maxDelay`, ...).
    #[napi(catch_unwind, constructor, ts_args_type = "registry: ToolRegistry, options?: ManagerOptions")]
    pub fn new(env: Env, registry: &ToolRegistry, options: Option<Js>) -> napi::Result<Self> {
        let raw = env.raw();
        let config = match manager_config(raw, options.map(|o| o.0)) {
            Ok(c) => c,
            Err(e) => {
                let err = js::coded_error(raw, e.code(), &e.message, &[]);
                return Err(napi::Error::from(unsafe { napi::bindgen_prelude::Unknown::from_raw_unchecked(raw, err) }));
            }
        };
        let engine = ExecutionEngine::new(registry.shared.engine.clone(), config).map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let id = NEXT_MANAGER.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        let option = |key: &CStr| options.as_ref().and_then(|o| js::get_opt(raw, o.0, key));
        let logger = option(c"logger").filter(|l| js::is_function(raw, *l)).map(|l| JsRef::new(raw, l));
        let audit_log = option(c"auditLog").and_then(|p| js::get_string(raw, p)).map(|path| {
            AuditLog::open(&path).map_err(|e| format!("audit log {path} could not be opened: {e}"))
        });
        let core = Rc::new(ManagerCore {
            id,
            registry: registry.shared.clone(),
            engine: RefCell::new(engine),
            execs: RefCell::new(FxHashMap::default()),
            emitter: Emitter::new(raw)?,
            hop: hop::hop(raw),
            logger,
            audit_log,
            interceptors: JsRef::new(raw, js::array(raw, [])),
            interceptor_count: Cell::new(0),
            pending: RefCell::new(FxHashMap::default()),
            next_ticket: Cell::new(1),
            admitted: RefCell::new(VecDeque::new()),
            running_admitted: Cell::new(false),
            run_queued: Cell::new(false),
            runner: std::cell::OnceCell::new(),
            dispatching: Cell::new(false),
            later_events: RefCell::new(VecDeque::new()),
        });
        MANAGERS.with(|m| m.borrow_mut().insert(id, Rc::downgrade(&core)));
        registry.shared.add_manager(Rc::downgrade(&core));
        Ok(Self { core })
    }

    /// Runs a tool. `args` is an object or JSON text. Never rejects for a tool-level
    /// failure: resolves `{ success: true, result, execution }` or
    /// `{ success: false, error, execution }`.
    #[napi(catch_unwind, ts_args_type = "name: string, args?: unknown, options?: ExecuteOptions", ts_return_type = "Promise<ExecutionResult>")]
    pub fn execute(&self, env: Env, name: Js, args: Js, options: Option<Js>) -> napi::Result<Js> {
        let env = env.raw();
        let core = &self.core;
        let Some(name) = js::string_arg(env, name.0, "execute", "the tool name") else { return Ok(Js::undefined()) };
        // Taken raw: napi would read `null` as a missing argument (then `{}`), where
        // `validate()` and the text "null" refuse it.
        let args = args.0;
        let mut call = CallOptions::default();
        let mut signal = None;
        if let Some(o) = options.map(|o| o.0).filter(|o| js::type_of(env, *o) == sys::ValueType::napi_object) {
            match (string_option(env, o, c"toolCallId"), string_option(env, o, c"sessionId")) {
                (Ok(tool_call_id), Ok(session_id)) => (call.tool_call_id, call.session_id) = (tool_call_id, session_id),
                (Err(e), _) | (_, Err(e)) => return config_error(env, &e),
            }
            match read_timeout(env, o) {
                Ok(Some(Some(ms))) => call.timeout_ms = Some(ms),
                Ok(Some(None)) => call.timeout_ms = Some(f64::INFINITY),
                Ok(None) => {}
                Err(e) => return config_error(env, &e),
            }
            match read_retry(env, o) {
                Ok(r) => call.retry = r,
                Err(e) => return config_error(env, &e),
            }
            if let Some(s) = js::get_opt(env, o, c"signal") {
                call.already_cancelled = js::get_bool_prop(env, s, c"aborted").unwrap_or(false);
                signal = Some(s);
            }
        }
        let text_args = js::type_of(env, args) == sys::ValueType::napi_string;
        let mut deferred = ptr::null_mut();
        let mut promise = ptr::null_mut();
        js::check(unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) })?;
        hop::retain(env);
        let large = if text_args { Some(large_text::len(env, args)).filter(|&n| n >= OFFLOAD_UNITS) } else { None };
        if let Some(units) = large {
            // A worker decodes, parses and validates in Rust, and lists the values of valid
            // arguments in a tape; the JS thread only copies the code units, and builds the
            // handler's object from the tape only when an attempt runs (never, if
            // validation fails), so those objects live briefly and die young.
            let units = large_text::copy(env, args, units);
            let ticket = core.next_ticket.get();
            core.next_ticket.set(ticket + 1);
            let session = call.session_id.clone();
            let pending = PendingStart {
                deferred,
                name: name.clone(),
                call,
                signal: signal.map(|s| JsRef::new(env, s)),
                args: JsRef::new(env, args),
                cancelled: false,
                _manager: core.clone(),
            };
            core.pending.borrow_mut().insert(ticket, pending);
            let (registry, hop, manager) = (core.registry.engine.clone(), core.hop.clone(), core.id);
            // With auditing on, the worker also hashes the parsed value, so the audit
            // record does not parse the text again on the JS thread.
            core.sync_mask();
            let audit_redaction = core.engine.borrow().audit_redaction().map(<[String]>::to_vec);
            hop::run_blocking(move || {
                let text = large_text::to_string(&units);
                let scope = session.as_deref().map_or(toolhost::Scope::Global, toolhost::Scope::Session);
                let blank = text.trim().is_empty();
                let parsed = if blank { Ok(serde_json::Value::Object(Default::default())) } else { toolhost::parse_arguments(&name, &text) };
                let mut tape = None;
                let arguments = match (parsed, registry.resolve(scope, &name)) {
                    (Ok(v), Ok(_)) if blank => toolhost::Arguments::Parsed(Ok(v)),
                    (Ok(v), Ok(tool)) => {
                        let issues = tool.schema.validate(&v);
                        let input_hash = audit_redaction.map(|redact| toolhost::audit_input_hash(&v, &redact));
                        // Arguments with issues reach a handler only with validation off,
                        // which then gets `JSON.parse` of the text.
                        if issues.is_empty() {
                            tape = toolhost::tape::build(&units);
                        }
                        // Freed before the hand-over: on a 2-core machine, freeing it
                        // (about 1 ms for 1 MB of text) while the JS thread builds the
                        // arguments made B4's JS thread wait for a CPU, 2.0 ms per call
                        // instead of 1.2. And after the tape: freeing it before building
                        // the tape made B4's wall time 1.5-2 ms longer per call.
                        drop(v);
                        toolhost::Arguments::Validated { text: Arc::from(text), tool, issues, input_hash }
                    }
                    (parsed, _) => toolhost::Arguments::Parsed(parsed),
                };
                large_text::recycle(units);
                hop.post(Message::ArgumentsReady { manager, ticket, arguments: Box::new(ParsedArguments { arguments, blank, tape }) });
            });
            return Ok(Js(promise));
        }
        let text = if text_args { js::get_string(env, args) } else { None };
        let blank_text = text.as_deref().is_some_and(|t| t.trim().is_empty());
        let parsed = match &text {
            Some(_) if blank_text => Ok(serde_json::Value::Object(Default::default())),
            Some(t) => toolhost::parse_arguments(&name, t),
            None => read_arguments(env, &name, args),
        };
        core.sync_mask();
        let t = core.engine.borrow_mut().start(&name, parsed, call);
        let args_parsed = !text_args || blank_text;
        // Blank text and `undefined` are read as `{}`, and the handler gets a new `{}`.
        let empty = blank_text || js::type_of(env, args) == sys::ValueType::napi_undefined;
        let args_value = if empty { js::object(env) } else { args };
        core.begin(env, t, deferred, args_value, args_parsed, None, signal);
        Ok(Js(promise))
    }

    /// Runs the tool calls of a model response through this manager (so retries,
    /// timeouts, events and audit apply), at most `concurrency` (default 4) at once,
    /// and resolves `{ messages, calls, results }` with `messages` ready to send back in
    /// the provider's format, in call order. Tool failures become error replies written
    /// for the model; nothing rejects for them.
    #[napi(catch_unwind, ts_generic_types = "P extends ToolCallProvider", ts_args_type = "response: unknown, options: ExecuteToolCallsOptions<P>", ts_return_type = "Promise<ExecuteToolCallsResult<P>>")]
    pub fn execute_tool_calls(&self, env: Env, this: napi::bindgen_prelude::This, response: Js, options: Js) -> napi::Result<Js> {
        use napi::JsValue;
        let env = env.raw();
        let provider = match crate::providers::provider_of(env, options.0) {
            Ok(p) => p,
            Err(e) => return js::throw_coded(env, "INVALID_CONFIG", &format!("executeToolCalls: {e}"), &[]),
        };
        let session = match string_option(env, options.0, c"sessionId") {
            Ok(s) => s,
            Err(e) => return js::throw_coded(env, e.code(), &format!("executeToolCalls: {}", e.message), &[]),
        };
        let calls = match crate::providers::calls_in(env, &self.core.registry.engine, session.as_deref(), provider, response.0) {
            Ok(c) => c,
            Err(e) => return js::throw_coded(env, "INVALID_TOOL_CALLS", &format!("executeToolCalls: {e}"), &[]),
        };
        let rt = runtime(env)?;
        let args = [this.raw(), js::number(env, self.core.id as f64), js::string(env, provider.as_str()), calls, options.0];
        match rt.call(env, &rt.execute_tool_calls, &args) {
            Ok(promise) => Ok(Js(promise)),
            Err(e) => {
                unsafe { sys::napi_throw(env, e) };
                Ok(Js::undefined())
            }
        }
    }

    /// Cancels an execution in flight: it ends `cancelled`, its signal aborts, and no
    /// further attempt starts. `false` when it already finished.
    #[napi(catch_unwind, ts_args_type = "executionId: string")]
    pub fn cancel(&self, env: Env, execution_id: Js) -> bool {
        let Some(execution_id) = js::string_arg(env.raw(), execution_id.0, "cancel", "the execution id") else { return false };
        self.core.sync_mask();
        let t = self.core.engine.borrow_mut().cancel(&execution_id);
        match t {
            Some(t) => {
                self.core.drive(env.raw(), t);
                true
            }
            None => false,
        }
    }

    /// Cancels every execution in flight. Returns how many were cancelled.
    #[napi(catch_unwind)]
    pub fn cancel_all(&self, env: Env) -> u32 {
        self.core.cancel_in_flight(env.raw(), None) as u32
    }

    /// The record of an execution in flight or kept in history, or `undefined`.
    #[napi(catch_unwind, ts_args_type = "executionId: string", ts_return_type = "ExecutionRecord | undefined")]
    pub fn get_execution(&self, env: Env, execution_id: Js) -> Js {
        let env = env.raw();
        let Some(execution_id) = js::string_arg(env, execution_id.0, "getExecution", "the execution id") else { return Js::undefined() };
        match self.core.engine.borrow().execution(&execution_id) {
            Some(r) => Js(record_to_js(env, &r, args_to_js(env, &r.args))),
            None => Js::undefined(),
        }
    }

    /// Every record of one model tool call (in flight or kept), oldest first.
    #[napi(ts_args_type = "toolCallId: string", ts_return_type = "ExecutionRecord[]")]
    pub fn get_executions_for_tool_call(&self, env: Env, tool_call_id: Js) -> Js {
        let env = env.raw();
        let Some(tool_call_id) = js::string_arg(env, tool_call_id.0, "getExecutionsForToolCall", "the tool call id") else { return Js::undefined() };
        let records = self.core.engine.borrow().executions_for_tool_call(&tool_call_id);
        Js(js::array(env, records.iter().map(|r| record_to_js(env, r, args_to_js(env, &r.args)))))
    }

    /// Statistics of one tool over finished executions.
    #[napi(catch_unwind, ts_args_type = "toolName: string", ts_return_type = "ToolStats")]
    pub fn stats(&self, env: Env, tool_name: Js) -> Js {
        let env = env.raw();
        let Some(tool_name) = js::string_arg(env, tool_name.0, "stats", "the tool name") else { return Js::undefined() };
        let s = self.core.engine.borrow().stats(&tool_name);
        let o = js::object(env);
        js::set(env, o, c"executionCount", js::number(env, s.execution_count as f64));
        js::set(env, o, c"successCount", js::number(env, s.success_count as f64));
        js::set(env, o, c"failureCount", js::number(env, s.failure_count as f64));
        js::set(env, o, c"totalDurationMs", js::number(env, s.total_duration_ms));
        js::set(env, o, c"averageDurationMs", js::number(env, s.average_duration_ms()));
        js::set(env, o, c"successRate", js::number(env, s.success_rate()));
        let last = s.last_error.as_ref().map_or_else(|| js::undefined(env), |e| error_to_js(env, e));
        js::set(env, o, c"lastError", last);
        Js(o)
    }

    /// Adds an interceptor around every attempt: `async (ctx, next) => { ...; const r =
    /// await next(); ...; return r }`. `ctx` holds `{ toolName, args, executionId,
    /// toolCallId, sessionId, attemptNumber, maxAttempts, signal }`; set `ctx.args` to
    /// change the arguments, return without calling `next` to short-circuit, throw to
    /// fail. Interceptors run in the order added, again on each attempt.
    #[napi(catch_unwind, js_name = "use", ts_args_type = "interceptor: (ctx: InterceptorContext, next: () => Promise<unknown>) => unknown", ts_return_type = "void")]
    pub fn use_interceptor(&self, env: Env, interceptor: Js) -> napi::Result<Js> {
        let env = env.raw();
        if !js::is_function(env, interceptor.0) {
            return js::throw_coded(env, "INVALID_CONFIG", "use() takes an interceptor function (ctx, next) => result", &[]);
        }
        let list = self.core.interceptors.value(env);
        let n = self.core.interceptor_count.get();
        unsafe { sys::napi_set_element(env, list, n as u32, interceptor.0) };
        self.core.interceptor_count.set(n + 1);
        Ok(Js::undefined())
    }

    /// Executions not yet finished.
    #[napi(catch_unwind, getter)]
    pub fn in_flight(&self) -> u32 {
        // Executions whose large argument text is still on a worker count too.
        (self.core.engine.borrow().in_flight() + self.core.pending.borrow().len()) as u32
    }

    /// Listens to a lifecycle event; the listener receives `{ type, detail }`.
    #[napi(catch_unwind, ts_generic_types = "T extends ExecutionEventType", ts_args_type = "type: T, listener: (event: ExecutionEvent<T>) => void", ts_return_type = "void")]
    pub fn add_event_listener(&self, env: Env, event_type: Js, listener: Js) -> napi::Result<Js> {
        match self.core.emitter.add(env.raw(), event_type.0, listener.0, false) {
            Ok(v) => Ok(Js(v)),
            Err(e) => {
                unsafe { sys::napi_throw(env.raw(), e) };
                Ok(Js::undefined())
            }
        }
    }

    #[napi(ts_args_type = "type: string, listener: (...args: any[]) => void")]
    pub fn remove_event_listener(&self, env: Env, event_type: Js, listener: Js) -> bool {
        self.core.emitter.remove(env.raw(), event_type.0, listener.0)
    }

    /// Listens with the detail alone; returns an unsubscribe function.
    #[napi(ts_generic_types = "T extends ExecutionEventType", ts_args_type = "type: T, listener: (detail: ExecutionEventMap[T]) => void", ts_return_type = "() => boolean")]
    pub fn on(&self, env: Env, event_type: Js, listener: Js) -> napi::Result<Js> {
        match self.core.emitter.add(env.raw(), event_type.0, listener.0, true) {
            Ok(v) => Ok(Js(v)),
            Err(e) => {
                unsafe { sys::napi_throw(env.raw(), e) };
                Ok(Js::undefined())
            }
        }
    }
}

impl ToolExecutionManager {
    /// The id `runtime.js` passes back to Rust to find this manager.
    pub(crate) fn id(&self) -> u32 {
        self.core.id
    }
}

/// What a `runtime.js` call returned, or a throw of what it threw (a message whose
/// `toString` throws, say): returning the exception would hand the caller an
/// unclassified error to throw.
fn rethrowing(env: RawEnv, called: Result<RawValue, RawValue>) -> napi::Result<Js> {
    match called {
        Ok(v) => Ok(Js(v)),
        Err(thrown) => {
            unsafe { sys::napi_throw(env, thrown) };
            Ok(Js::undefined())
        }
    }
}

/// An `Error` the manager classifies as `transient` (retried by default).
#[napi(catch_unwind, ts_args_type = "message: string, options?: { retryAfterMs?: number, code?: string, cause?: unknown }", ts_return_type = "Error")]
pub fn transient_error(env: Env, message: Js, options: Option<Js>) -> napi::Result<Js> {
    let env = env.raw();
    let rt = runtime(env)?;
    let o = options.map_or_else(|| js::undefined(env), |o| o.0);
    rethrowing(env, rt.call(env, &rt.transient_error, &[message.0, o]))
}

/// An `Error` the manager classifies as `permanent` (never retried).
#[napi(catch_unwind, ts_args_type = "message: string, options?: { code?: string, cause?: unknown }", ts_return_type = "Error")]
pub fn permanent_error(env: Env, message: Js, options: Option<Js>) -> napi::Result<Js> {
    let env = env.raw();
    let rt = runtime(env)?;
    let o = options.map_or_else(|| js::undefined(env), |o| o.0);
    rethrowing(env, rt.call(env, &rt.permanent_error, &[message.0, o]))
}
