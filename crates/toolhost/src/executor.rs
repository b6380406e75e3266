//! [`ToolExecutor`]: the tokio driver of the [`ExecutionEngine`], for Rust handlers.
//!
//! Timeouts are a `select!` against a tokio sleep, backoff delays are tokio sleeps, and
//! cancellation is a [`CancellationToken`] per execution with a child token per attempt,
//! handed to the tool in its [`ToolContext`].

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::audit::{AuditLog, AuditRecord};
use crate::engine::{AttemptSpec, CallOptions, ExecutionEngine, ManagerConfig, Step, Transition};
use crate::log_lines::{self, LogFields, LogLevel, LogLine};
use crate::error::{RegistryError, ToolError};
use crate::engine::PendingApproval;
use crate::handler::{BoxFuture, ProgressSink, ToolContext};
use crate::record::{payload_json, EventMask, ExecutionEvent, ExecutionRecord, ExecutionStatus, Payload, Progress, ToolStats};
use crate::registry::ToolRegistry;

type Listener = Arc<dyn Fn(&ExecutionEvent) + Send + Sync>;
type Logger = Arc<dyn Fn(&LogLine) + Send + Sync>;
type AuditListener = Arc<dyn Fn(&AuditRecord) + Send + Sync>;

struct Inner {
    engine: Mutex<ExecutionEngine>,
    /// Event listeners with their ids ([`ToolExecutor::off_event`]).
    listeners: Mutex<Vec<(u64, Listener)>>,
    /// Queued executions wait here for their slot.
    admissions: Mutex<HashMap<u64, oneshot::Sender<AttemptSpec>>>,
    /// The cancellation token of each execution in flight.
    tokens: Mutex<HashMap<u64, CancellationToken>>,
    logger: Mutex<Option<Logger>>,
    audit_log: Mutex<Option<AuditLog>>,
    audit_listeners: Mutex<Vec<AuditListener>>,
    /// Executions waiting for approval get their answer here.
    approvals: Mutex<HashMap<u64, oneshot::Sender<Transition>>>,
    /// ... and their tasks take the receiving end from here.
    approval_answers: Mutex<HashMap<u64, oneshot::Receiver<Transition>>>,
    /// Admission channels of calls an approval left queued, for their tasks.
    queued_answers: Mutex<HashMap<u64, oneshot::Receiver<AttemptSpec>>>,
    /// The running attempt's timeout of each execution: progress moves it.
    deadlines: Mutex<HashMap<u64, tokio::sync::watch::Sender<Option<tokio::time::Instant>>>>,
    approval_policy: Mutex<Option<ApprovalPolicy>>,
    /// The journal, when the executor has one (`journal` feature).
    #[cfg(feature = "journal")]
    journal: Mutex<Option<crate::journal::worker::JournalWorker>>,
    /// Executions waiting for a journal answer, by key; decisions and listings by ticket.
    #[cfg(feature = "journal")]
    journal_waiting: Mutex<HashMap<u64, oneshot::Sender<crate::journal::JournalAnswer>>>,
    #[cfg(feature = "journal")]
    journal_tickets: Mutex<HashMap<u64, oneshot::Sender<crate::journal::JournalAnswer>>>,
    #[cfg(feature = "journal")]
    next_ticket: std::sync::atomic::AtomicU64,
    /// Where recovered executions run.
    #[cfg(feature = "journal")]
    runtime: Mutex<Option<tokio::runtime::Handle>>,
}

type ApprovalPolicy = Arc<dyn Fn(&str, &Value) -> bool + Send + Sync>;

/// Runs tools of a [`ToolRegistry`] with validation, retries, timeouts, cancellation and
/// events. Cloning gives another handle to the same executor.
#[derive(Clone)]
pub struct ToolExecutor {
    inner: Arc<Inner>,
}

/// Resolves at `deadline`, never without one.
/// Cancels its execution when dropped while still armed: an `execute` future dropped
/// before it finished.
struct DropCancels<'a> {
    executor: &'a ToolExecutor,
    key: u64,
    armed: bool,
}

impl Drop for DropCancels<'_> {
    fn drop(&mut self) {
        if self.armed && lock(&self.executor.inner.engine).id_of(self.key).is_some() {
            self.executor.cancel_now(self.key);
        }
    }
}

/// A handler's future, with a panic in a poll caught and handed back as its output.
struct CatchUnwind(BoxFuture<Result<Value, ToolError>>);

impl std::future::Future for CatchUnwind {
    type Output = Result<Result<Value, ToolError>, Box<dyn std::any::Any + Send>>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(r)) => std::task::Poll::Ready(Ok(r)),
            Err(panic) => std::task::Poll::Ready(Err(panic)),
        }
    }
}

/// The failure of an attempt whose handler panicked, with the panic's message.
fn panicked(tool: &str, panic: &(dyn std::any::Any + Send)) -> ToolError {
    let what = panic.downcast_ref::<&str>().map(|s| (*s).to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
    ToolError::execution(format!("tool '{tool}' panicked: {}", what.as_deref().unwrap_or("a panic with no message")))
}

/// `after` from now, `None` (never) when that is past what the clock can hold: a
/// timeout of 1e22 ms is a valid `Duration`, and `Instant + Duration` panics past the
/// clock's range, which unwound through the caller's `execute`.
fn deadline_after(after: std::time::Duration) -> Option<tokio::time::Instant> {
    tokio::time::Instant::now().checked_add(after)
}

async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// How an execution ended: the final record, and the result or error.
#[derive(Clone, Debug)]
pub struct ExecutionOutcome {
    pub record: Arc<ExecutionRecord>,
}

impl ExecutionOutcome {
    /// The result as JSON, or the error.
    ///
    /// # Errors
    /// The execution's [`ToolError`] when it did not succeed.
    pub fn result(&self) -> Result<&Value, &ToolError> {
        match (&self.record.status, &self.record.result, &self.record.error) {
            (ExecutionStatus::Succeeded, Some(p), _) => Ok(payload_json(p).unwrap_or(&Value::Null)),
            (_, _, Some(e)) => Err(e),
            _ => Ok(&Value::Null),
        }
    }

    pub fn is_success(&self) -> bool {
        self.record.status == ExecutionStatus::Succeeded
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ToolExecutor {
    /// # Errors
    /// `INVALID_CONFIG` when the config does not check.
    pub fn new(registry: ToolRegistry, config: ManagerConfig) -> Result<Self, RegistryError> {
        let engine = ExecutionEngine::new(registry.clone(), config)?;
        let inner = Arc::new(Inner {
            engine: Mutex::new(engine),
            listeners: Mutex::new(Vec::new()),
            admissions: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            logger: Mutex::new(None),
            audit_log: Mutex::new(None),
            audit_listeners: Mutex::new(Vec::new()),
            approvals: Mutex::new(HashMap::new()),
            approval_answers: Mutex::new(HashMap::new()),
            queued_answers: Mutex::new(HashMap::new()),
            deadlines: Mutex::new(HashMap::new()),
            approval_policy: Mutex::new(None),
            #[cfg(feature = "journal")]
            journal: Mutex::new(None),
            #[cfg(feature = "journal")]
            journal_waiting: Mutex::new(HashMap::new()),
            #[cfg(feature = "journal")]
            journal_tickets: Mutex::new(HashMap::new()),
            #[cfg(feature = "journal")]
            next_ticket: std::sync::atomic::AtomicU64::new(1),
            #[cfg(feature = "journal")]
            runtime: Mutex::new(None),
        });
        let weak = Arc::downgrade(&inner);
        registry.subscribe_without_names(move |change| {
            if change.action != "session-destroyed" {
                return;
            }
            if let (Some(inner), Some(session)) = (weak.upgrade(), change.session_id.as_deref()) {
                lock(&inner.engine).forget_session(session);
                let keys = lock(&inner.engine).in_flight_keys(Some(session));
                let tokens = lock(&inner.tokens);
                keys.iter().filter_map(|k| tokens.get(k)).for_each(CancellationToken::cancel);
            }
        });
        Ok(Self { inner })
    }

    /// The registry this executor runs the tools of.
    pub fn registry(&self) -> ToolRegistry {
        lock(&self.inner.engine).registry().clone()
    }

    /// Calls `listener` for every lifecycle event (on the thread that caused it).
    /// Returns an id for [`ToolExecutor::off_event`].
    pub fn on_event(&self, listener: impl Fn(&ExecutionEvent) + Send + Sync + 'static) -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.inner.listeners).push((id, Arc::new(listener)));
        lock(&self.inner.engine).set_wanted_events(EventMask::ALL);
        id
    }

    /// Stops listener `id` ([`ToolExecutor::on_event`]); returns whether it was there.
    /// With none left, the engine stops making events.
    pub fn off_event(&self, id: u64) -> bool {
        let mut listeners = lock(&self.inner.listeners);
        let Some(at) = listeners.iter().position(|(l, _)| *l == id) else { return false };
        listeners.remove(at);
        if listeners.is_empty() {
            lock(&self.inner.engine).set_wanted_events(EventMask::default());
        }
        true
    }

    /// Cancels an execution in flight. `false` when it already finished or is unknown.
    pub fn cancel(&self, execution_id: &str) -> bool {
        let key = lock(&self.inner.engine).execution_key(execution_id);
        match key.and_then(|k| lock(&self.inner.tokens).get(&k).cloned()) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every execution in flight.
    pub fn cancel_all(&self) {
        lock(&self.inner.tokens).values().for_each(CancellationToken::cancel);
    }

    pub fn execution(&self, execution_id: &str) -> Option<Arc<ExecutionRecord>> {
        lock(&self.inner.engine).execution(execution_id)
    }

    /// Records of the executions in flight, the last started first, then of the finished
    /// ones kept in history, the last finished first: at most `limit` (`usize::MAX`: all).
    pub fn executions(&self, limit: usize) -> Vec<Arc<ExecutionRecord>> {
        lock(&self.inner.engine).executions(limit)
    }

    pub fn stats(&self, tool_name: &str) -> ToolStats {
        lock(&self.inner.engine).stats(tool_name)
    }

    /// Decides whether a call needs approval: `policy(tool_name, args)`, for every tool
    /// whose own `needs_approval` is unset or `Ask` (a tool's `Always` or `Never` wins).
    /// A manager whose `needs_approval` was `Never` (the default) asks the policy from now
    /// on; one set to `Always` keeps asking a person for every call. Without a policy,
    /// `Ask` calls always wait for approval.
    pub fn set_approval_policy(&self, policy: impl Fn(&str, &Value) -> bool + Send + Sync + 'static) {
        *lock(&self.inner.approval_policy) = Some(Arc::new(policy));
        // It was consulted only with the manager's rule set to `Ask`, so a policy set as
        // the README shows let every call run unapproved.
        lock(&self.inner.engine).ask_by_default();
    }

    /// Every call waiting for approval, oldest first.
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        lock(&self.inner.engine).pending_approvals()
    }

    /// Approves a waiting call, optionally with edited arguments; see
    /// [`ExecutionEngine::approve`].
    ///
    /// # Errors
    /// `APPROVAL_NOT_FOUND`, or `INVALID_ARGUMENTS` for edited arguments that do not validate.
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    pub fn approve(&self, approval_id: &str, args: Option<Value>, by: Option<String>) -> Result<(), ToolError> {
        let mut result = Ok(());
        let (t, _) = self.transition_answer(|engine| engine.approve(approval_id, args, by).map_err(|e| result = Err(e)).ok());
        if let Some(t) = t {
            self.answer(t);
        }
        result
    }

    /// Denies a waiting call; see [`ExecutionEngine::deny`].
    ///
    /// # Errors
    /// `APPROVAL_NOT_FOUND`.
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    pub fn deny(&self, approval_id: &str, reason: Option<String>, by: Option<String>) -> Result<(), ToolError> {
        let mut result = Ok(());
        let (t, _) = self.transition_answer(|engine| engine.deny(approval_id, reason, by).map_err(|e| result = Err(e)).ok());
        if let Some(t) = t {
            self.answer(t);
        }
        result
    }

    /// An answer to an approval, computed under the engine lock; a call it leaves queued
    /// gets its admission channel registered there too.
    fn transition_answer(&self, call: impl FnOnce(&mut ExecutionEngine) -> Option<Transition>) -> (Option<Transition>, ()) {
        let mut engine = lock(&self.inner.engine);
        let t = call(&mut engine);
        if let Some(t) = &t {
            if matches!(t.step, Step::Queued) {
                let (tx, rx) = oneshot::channel();
                lock(&self.inner.admissions).insert(t.key, tx);
                lock(&self.inner.queued_answers).insert(t.key, rx);
            }
        }
        (t, ())
    }

    /// Hands an approval's answer to the task waiting for it.
    fn answer(&self, t: Transition) {
        let waiting = lock(&self.inner.approvals).remove(&t.key);
        if let Some(tx) = waiting {
            let _ = tx.send(t);
        }
    }

    /// Runs a tool to completion. Never panics on a tool failure: failures are in the
    /// returned outcome.
    pub async fn execute(&self, tool_name: &str, args: Value, options: CallOptions) -> ExecutionOutcome {
        self.execute_with(tool_name, args, options, CancellationToken::new()).await
    }

    /// As [`ToolExecutor::execute`], cancelled when `cancel` is.
    pub async fn execute_with(&self, tool_name: &str, args: Value, mut options: CallOptions, cancel: CancellationToken) -> ExecutionOutcome {
        options.already_cancelled |= cancel.is_cancelled();
        let args = crate::arguments::check_depth(tool_name, &args).map(|()| args);
        let (t, admission) = self.transition(|engine| engine.start(tool_name, args, options));
        let key = t.key;
        if !matches!(t.step, Step::Finished(_)) {
            lock(&self.inner.tokens).insert(key, cancel.clone());
        }
        let step = self.apply(t);
        // Dropping this future (a `tokio::time::timeout` or `select!` around it) cancels
        // the execution: without this, its concurrency slot stayed taken and its record
        // `Executing` for good, and once `maxConcurrency` were gone every call hung.
        let mut guard = DropCancels { executor: self, key, armed: true };
        let outcome = self.drive(key, step, admission, cancel).await;
        guard.armed = false;
        outcome
    }

    /// Drives an execution from `step` to its end.
    async fn drive(&self, key: u64, mut step: Step, mut admission: Option<oneshot::Receiver<AttemptSpec>>, cancel: CancellationToken) -> ExecutionOutcome {
        // `maxTotalTimeoutMs`, from the first attempt on.
        let mut total_deadline: Option<tokio::time::Instant> = None;
        loop {
            step = match step {
                Step::Queued => {
                    let rx = admission.take().expect("a queued step comes with its admission channel");
                    tokio::select! {
                        spec = rx => match spec {
                            Ok(spec) => Step::Run(spec),
                            Err(_) => return self.cancelled(key).await,
                        },
                        () = cancel.cancelled() => return self.cancelled(key).await,
                    }
                }
                Step::Run(spec) => {
                    let attempt = spec.attempt_number;
                    if let Some(total) = spec.total_timeout {
                        total_deadline = deadline_after(total);
                    }
                    let outcome = tokio::select! {
                        o = self.run_attempt(spec, &cancel) => o,
                        () = until(total_deadline) => {
                            lock(&self.inner.deadlines).remove(&key);
                            let (t, _) = self.transition(|engine| engine.total_timed_out(key));
                            step = self.apply(t);
                            continue;
                        }
                    };
                    let outcome = outcome.map(|mut v| {
                        if let (Some(meta), Value::Object(map)) = (lock(&self.inner.engine).metadata_for(key), &mut v) {
                            map.insert("_execution_metadata".into(), meta.to_json());
                        }
                        Arc::new(v) as Payload
                    });
                    let (t, _) = self.transition(|engine| engine.attempt_finished(key, attempt, outcome));
                    self.apply(t)
                }
                Step::Retry { delay } => {
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {
                            let (t, waiting) = self.transition(|engine| engine.begin_attempt(key));
                            admission = waiting;
                            self.apply(t)
                        }
                        () = until(total_deadline) => {
                            let (t, _) = self.transition(|engine| engine.total_timed_out(key));
                            self.apply(t)
                        }
                        () = cancel.cancelled() => return self.cancelled(key).await,
                    }
                }
                Step::Finished(record) => {
                    lock(&self.inner.tokens).remove(&key);
                    return ExecutionOutcome { record };
                }
                Step::Stale | Step::Continue => return self.cancelled(key).await,
                #[cfg(feature = "journal")]
                Step::Journal(request) => {
                    let answer = tokio::select! {
                        a = self.journal_answer(key, request) => a,
                        () = cancel.cancelled() => return self.cancelled(key).await,
                    };
                    let Some(answer) = answer else { return self.cancelled(key).await };
                    let (t, waiting) = self.transition_journal(key, answer);
                    admission = waiting;
                    self.apply(t)
                }
                #[cfg(not(feature = "journal"))]
                Step::Journal(_) => unreachable!("a journal needs the `journal` feature"),
                Step::Decide { .. } => {
                    let policy = lock(&self.inner.approval_policy).clone();
                    let id = self.id_of(key);
                    let record = lock(&self.inner.engine).execution(&id);
                    let needed = match (policy, record) {
                        (Some(p), Some(r)) => p(&r.tool_name, &r.args.to_value()),
                        _ => true,
                    };
                    let (t, waiting) = self.transition(|engine| engine.approval_decided(key, needed.into()));
                    admission = waiting;
                    self.apply(t)
                }
                Step::AwaitApproval { timeout, .. } => {
                    let mut rx = lock(&self.inner.approval_answers).remove(&key).expect("registered by transition()");
                    let expiry = async {
                        match timeout {
                            Some(d) => tokio::time::sleep(d).await,
                            None => std::future::pending().await,
                        }
                    };
                    let t = tokio::select! {
                        t = &mut rx => t.ok(),
                        () = expiry => None,
                        () = cancel.cancelled() => None,
                    };
                    let t = match t {
                        Some(t) => t,
                        // Expired or cancelled, unless an answer is already on its way.
                        None if lock(&self.inner.approvals).remove(&key).is_none() => match rx.await {
                            Ok(t) => t,
                            Err(_) => return self.cancelled(key).await,
                        },
                        None if cancel.is_cancelled() => return self.cancelled(key).await,
                        None => lock(&self.inner.engine).approval_expired(key),
                    };
                    if matches!(t.step, Step::Queued) {
                        admission = lock(&self.inner.queued_answers).remove(&key);
                    }
                    self.apply(t)
                }
            };
        }
    }

    /// Runs one engine call. When it leaves the execution queued, the admission channel
    /// is registered before the engine lock is released, so no other thread can admit
    /// the execution before its task is listening.
    ///
    /// Likewise, an execution left waiting for approval gets its answer channel before
    /// anyone can call `approve`; the receiver is kept in `approvals_rx` for its task.
    fn transition(&self, call: impl FnOnce(&mut ExecutionEngine) -> Transition) -> (Transition, Option<oneshot::Receiver<AttemptSpec>>) {
        let mut engine = lock(&self.inner.engine);
        let t = call(&mut engine);
        let admission = matches!(t.step, Step::Queued).then(|| {
            let (tx, rx) = oneshot::channel();
            lock(&self.inner.admissions).insert(t.key, tx);
            rx
        });
        if matches!(t.step, Step::AwaitApproval { .. }) {
            let (tx, rx) = oneshot::channel();
            lock(&self.inner.approvals).insert(t.key, tx);
            lock(&self.inner.approval_answers).insert(t.key, rx);
        }
        (t, admission)
    }

    /// The id of an execution in flight.
    fn id_of(&self, key: u64) -> String {
        lock(&self.inner.engine).id_of(key).unwrap_or_default().to_string()
    }

    async fn run_attempt(&self, spec: AttemptSpec, cancel: &CancellationToken) -> Result<Value, ToolError> {
        let attempt_token = cancel.child_token();
        let tool_name = spec.tool.name().to_string();
        let (key, attempt) = (spec.key, spec.attempt_number);
        let (deadline_tx, mut deadline_rx) = tokio::sync::watch::channel(spec.timeout.and_then(deadline_after));
        lock(&self.inner.deadlines).insert(key, deadline_tx);
        let weak = Arc::downgrade(&self.inner);
        let sink = ProgressSink(Arc::new(move |p: Progress| {
            if let Some(inner) = weak.upgrade() {
                let executor = ToolExecutor { inner };
                executor.progress(key, attempt, p);
            }
        }));
        let ctx = ToolContext {
            execution_id: spec.execution_id.clone(),
            tool_call_id: spec.tool_call_id.clone(),
            session_id: spec.session_id.clone(),
            tool_name: tool_name.clone(),
            attempt_number: spec.attempt_number,
            max_attempts: spec.max_attempts,
            idempotency_key: spec.idempotency_key().to_string(),
            cancellation: attempt_token.clone(),
            progress: Some(sink),
        };
        // A handler that panics fails its attempt (EXECUTION_ERROR) instead of unwinding
        // through the caller with the execution's slot still taken.
        let args = spec.args.to_value().into_owned();
        let call = match std::panic::catch_unwind(AssertUnwindSafe(|| spec.tool.handler.call(args, ctx))) {
            Ok(future) => CatchUnwind(future),
            Err(panic) => CatchUnwind(Box::pin(std::future::ready(Err(panicked(&tool_name, panic.as_ref()))))),
        };
        let call = async {
            match call.await {
                Ok(r) => r,
                Err(panic) => Err(panicked(&tool_name, panic.as_ref())),
            }
        };
        // Progress may move the deadline (resetTimeoutOnProgress): wait for the current one.
        let timeout = async {
            loop {
                let deadline = *deadline_rx.borrow_and_update();
                match deadline {
                    Some(at) => tokio::select! {
                        () = tokio::time::sleep_until(at) => return,
                        changed = deadline_rx.changed() => if changed.is_err() { std::future::pending::<()>().await },
                    },
                    None => std::future::pending().await,
                }
            }
        };
        // Biased: when a cancel and the handler's return land together, the cancel wins.
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(ToolError::cancelled(&tool_name)),
            () = timeout => Err(ToolError::timeout(&tool_name, spec.timeout.map_or(0, |d| d.as_millis() as u64))),
            r = call => r,
        };
        attempt_token.cancel();
        lock(&self.inner.deadlines).remove(&key);
        // The attempt's outcome as the handler returned it (ToolError unboxed, the public type).
        #[allow(clippy::result_large_err)]
        let outcome = outcome.and_then(|v| lock(&self.inner.engine).check_output(key, &v).map(|()| v));
        outcome
    }

    /// A handler's progress report: events, and a moved deadline when the engine says so.
    fn progress(&self, key: u64, attempt: u32, progress: Progress) {
        let t = lock(&self.inner.engine).progress(key, attempt, progress);
        if let Some((_, after)) = t.rearm {
            if let Some(tx) = lock(&self.inner.deadlines).get(&key) {
                let _ = tx.send(deadline_after(after));
            }
        }
        self.apply(t);
    }

    async fn cancelled(&self, key: u64) -> ExecutionOutcome {
        match self.cancel_now(key) {
            Step::Finished(record) => ExecutionOutcome { record },
            _ => unreachable!("cancelling an execution in flight finishes it"),
        }
    }

    /// Ends an execution in flight as cancelled, freeing what it holds.
    fn cancel_now(&self, key: u64) -> Step {
        lock(&self.inner.admissions).remove(&key);
        lock(&self.inner.approvals).remove(&key);
        lock(&self.inner.approval_answers).remove(&key);
        lock(&self.inner.queued_answers).remove(&key);
        lock(&self.inner.deadlines).remove(&key);
        lock(&self.inner.tokens).remove(&key);
        let t = lock(&self.inner.engine).cancel_key(key);
        self.apply(t)
    }

    /// Delivers a transition's events, log lines and audit record, hands admitted
    /// attempts to their waiting tasks, and returns the step.
    fn apply(&self, t: Transition) -> Step {
        #[cfg(feature = "journal")]
        if !t.journal.is_empty() {
            if let Some(worker) = lock(&self.inner.journal).as_ref() {
                for request in &t.journal {
                    worker.send(request.clone());
                }
            }
        }
        if !t.events.is_empty() {
            let listeners = lock(&self.inner.listeners).clone();
            for event in &t.events {
                for (_, l) in &listeners {
                    l(event);
                }
            }
        }
        let logger = lock(&self.inner.logger).clone();
        let log = |line: &LogLine| match &logger {
            Some(log) => log(line),
            None => log_lines::trace_line(line),
        };
        t.logs.iter().for_each(log);
        if let Some(record) = &t.audit {
            if let Some(file) = lock(&self.inner.audit_log).as_ref() {
                if let Err(e) = file.append(record) {
                    log(&LogLine {
                        level: LogLevel::Error,
                        message: format!("[TOOL EXECUTION] Audit log {} could not be written: {e}", file.path().display()),
                        fields: LogFields { execution_id: record.execution_id.clone(), tool_name: record.tool_name.clone(), ..LogFields::default() },
                    });
                }
            }
            for l in lock(&self.inner.audit_listeners).iter() {
                l(record);
            }
        }
        for spec in t.admitted {
            if let Some(tx) = lock(&self.inner.admissions).remove(&spec.key) {
                let _ = tx.send(spec);
            }
        }
        t.step
    }

    /// Sends the built-in logging interceptor's lines to `logger` instead of `tracing`.
    pub fn set_logger(&self, logger: impl Fn(&LogLine) + Send + Sync + 'static) {
        *lock(&self.inner.logger) = Some(Arc::new(logger));
    }

    /// Appends one JSON line per finished execution to `path`, flushed before the
    /// execution's outcome is returned.
    ///
    /// # Errors
    /// The file could not be opened for appending.
    pub fn set_audit_log(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        *lock(&self.inner.audit_log) = Some(AuditLog::open(path)?);
        lock(&self.inner.engine).set_audit_wanted(true);
        Ok(())
    }

    /// Calls `listener` with the audit record of every finished execution.
    pub fn on_audit(&self, listener: impl Fn(&AuditRecord) + Send + Sync + 'static) {
        lock(&self.inner.audit_listeners).push(Arc::new(listener));
        lock(&self.inner.engine).set_audit_wanted(true);
    }
}

#[cfg(feature = "journal")]
mod journaled {
    //! The executor's journal (`journal` feature): the same journal thread the Node
    //! addon uses, its answers routed to the tasks that wait for them, recovered calls
    //! run as tasks of their own.
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Weak};

    use tokio::sync::oneshot;
    use tokio_util::sync::CancellationToken;

    use super::{lock, Inner, ToolExecutor};
    use crate::engine::{AttemptSpec, ManagerConfig, PendingApproval, Step, Transition};
    use crate::error::{ErrorCategory, RegistryError, ToolError};
    use crate::journal::worker::JournalWorker;
    use crate::journal::{DecideAnswer, JournalAnswer, JournalPolicy, JournalRequest, Verdict};
    use crate::registry::ToolRegistry;

    impl ToolExecutor {
        /// An executor whose executions are journaled in `url` (`sqlite:<path>` or
        /// `postgres://…`): exactly-once by idempotency key, replayed, recovered after a
        /// crash. Call it inside a tokio runtime: recovered calls run on it.
        ///
        /// # Errors
        /// `INVALID_CONFIG`, `JOURNAL_UNAVAILABLE` or `JOURNAL_SCHEMA_NEWER`, as for the
        /// `journal` option of the JS manager.
        pub fn with_journal(registry: ToolRegistry, mut config: ManagerConfig, url: &str, policy: JournalPolicy) -> Result<Self, RegistryError> {
            config.journal = Some(policy);
            // Opened on a thread of its own: the Postgres client blocks on a runtime of its
            // own, which cannot start inside the caller's.
            let store = std::thread::scope(|s| s.spawn(|| crate::journal::open_with(url, &policy)).join()).unwrap_or_else(|_| {
                Err(RegistryError::new(crate::error::RegistryErrorCode::JournalUnavailable, "opening the journal panicked"))
            })?;
            let executor = Self::new(registry, config)?;
            *lock(&executor.inner.runtime) = tokio::runtime::Handle::try_current().ok();
            let weak = Arc::downgrade(&executor.inner);
            let deliver = Box::new(move |answers: Vec<JournalAnswer>| route(&weak, answers));
            *lock(&executor.inner.journal) = Some(JournalWorker::start(store, policy, deliver));
            Ok(executor)
        }

        /// Sends `request` for execution `key` and waits for its answer; `None` when the
        /// journal is gone.
        pub(super) async fn journal_answer(&self, key: u64, request: JournalRequest) -> Option<JournalAnswer> {
            let (tx, rx) = oneshot::channel();
            lock(&self.inner.journal_waiting).insert(key, tx);
            lock(&self.inner.journal).as_ref()?.send(request);
            rx.await.ok()
        }

        /// The engine's transition for a journal answer about `key`, with the channels its
        /// task needs registered first (as [`ToolExecutor::transition`] does).
        pub(super) fn transition_journal(&self, key: u64, answer: JournalAnswer) -> (Transition, Option<oneshot::Receiver<AttemptSpec>>) {
            let mut ts = Vec::new();
            let (t, admission) = self.transition(|engine| {
                ts = engine.journal_answered(answer);
                match ts.iter().position(|t| t.key == key) {
                    Some(i) => ts.remove(i),
                    None => Transition::new(key, Step::Stale),
                }
            });
            for other in ts {
                self.apply(other);
            }
            (t, admission)
        }

        async fn ticket(&self, request: impl FnOnce(u64) -> JournalRequest) -> Result<JournalAnswer, ToolError> {
            let ticket = self.inner.next_ticket.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            lock(&self.inner.journal_tickets).insert(ticket, tx);
            let sent = lock(&self.inner.journal).as_ref().map(|w| w.send(request(ticket))).is_some();
            if !sent {
                return Err(ToolError::new(ErrorCategory::Transient, "JOURNAL_UNAVAILABLE", "this executor has no journal"));
            }
            rx.await.map_err(|_| ToolError::new(ErrorCategory::Transient, "JOURNAL_UNAVAILABLE", "the journal stopped"))
        }

        /// Approves a call waiting in any process on the journal; exactly one decision
        /// wins. Without a journal, as [`ToolExecutor::approve`].
        ///
        /// # Errors
        /// `APPROVAL_NOT_FOUND`, `INVALID_ARGUMENTS`, `JOURNAL_UNAVAILABLE`.
        pub async fn approve_async(&self, approval_id: &str, args: Option<serde_json::Value>, by: Option<String>) -> Result<(), ToolError> {
            if lock(&self.inner.journal).is_none() {
                return self.approve(approval_id, args, by);
            }
            let text = args.as_ref().map(serde_json::Value::to_string);
            self.decide(|engine, ticket| engine.approval_decision(ticket, approval_id, Verdict::Approve { args: text }, args, by)).await
        }

        /// Denies a call waiting in any process on the journal. Without one, as
        /// [`ToolExecutor::deny`].
        ///
        /// # Errors
        /// `APPROVAL_NOT_FOUND`, `JOURNAL_UNAVAILABLE`.
        pub async fn deny_async(&self, approval_id: &str, reason: Option<String>, by: Option<String>) -> Result<(), ToolError> {
            if lock(&self.inner.journal).is_none() {
                return self.deny(approval_id, reason, by);
            }
            let reason = reason.unwrap_or_else(|| "denied by the approver".into());
            self.decide(|engine, ticket| engine.approval_decision(ticket, approval_id, Verdict::Deny { reason }, None, by)).await
        }

        async fn decide(&self, decision: impl FnOnce(&crate::ExecutionEngine, u64) -> JournalRequest) -> Result<(), ToolError> {
            let engine = Arc::clone(&self.inner);
            let answer = self.ticket(|ticket| decision(&lock(&engine.engine), ticket)).await?;
            match answer {
                JournalAnswer::Decided { answer: DecideAnswer::Decided(_), .. } => Ok(()),
                JournalAnswer::Decided { answer: DecideAnswer::Refused(e), .. } => Err(e),
                JournalAnswer::Failed { error, .. } => Err(ToolError::new(ErrorCategory::Transient, error.code.as_str(), error.message)),
                _ => Err(ToolError::new(ErrorCategory::NotFound, "APPROVAL_NOT_FOUND", "no call waits for that approval (it was answered, cancelled or timed out)")),
            }
        }

        /// Every call waiting for approval in any process on the journal (without one, in
        /// this executor).
        ///
        /// # Errors
        /// `JOURNAL_UNAVAILABLE`.
        pub async fn pending_approvals_async(&self) -> Result<Vec<PendingApproval>, ToolError> {
            if lock(&self.inner.journal).is_none() {
                return Ok(self.pending_approvals());
            }
            match self.ticket(|ticket| JournalRequest::Approvals { ticket }).await? {
                JournalAnswer::Approvals { approvals, .. } => Ok(approvals
                    .into_iter()
                    .map(|a| PendingApproval {
                        approval_id: a.approval_id,
                        execution_id: a.execution_id,
                        tool_call_id: a.tool_call_id,
                        session_id: (!a.row.scope.is_empty()).then_some(a.row.scope),
                        tool_name: a.tool,
                        args: crate::json_text::parse(&a.args).unwrap_or_default(),
                        requested_at: a.requested_at,
                        expires_at: a.expires_at,
                    })
                    .collect()),
                JournalAnswer::Failed { error, .. } => Err(ToolError::new(ErrorCategory::Transient, error.code.as_str(), error.message)),
                _ => Ok(Vec::new()),
            }
        }
    }

    /// Hands each journal answer to whoever waits for it (on the journal's thread).
    fn route(weak: &Weak<Inner>, answers: Vec<JournalAnswer>) {
        let Some(inner) = weak.upgrade() else { return };
        let executor = ToolExecutor { inner };
        for answer in answers {
            let exec = match &answer {
                JournalAnswer::Claimed { claim, .. } => Some(claim.exec),
                JournalAnswer::Recorded { exec, .. } | JournalAnswer::Started { exec, .. } => Some(*exec),
                JournalAnswer::Failed { exec: Some(exec), .. } => Some(*exec),
                _ => None,
            };
            let ticket = match &answer {
                JournalAnswer::Decided { ticket, .. } | JournalAnswer::Approvals { ticket, .. } | JournalAnswer::Task { ticket, .. } => Some(*ticket),
                JournalAnswer::Failed { ticket: Some(ticket), .. } => Some(*ticket),
                _ => None,
            };
            if let Some(exec) = exec {
                if let Some(tx) = lock(&executor.inner.journal_waiting).remove(&exec) {
                    let _ = tx.send(answer);
                } else {
                    // Nobody waits (cancelled): the engine lets what it got go.
                    let ts = lock(&executor.inner.engine).journal_answered(answer);
                    ts.into_iter().for_each(|t| drop(executor.apply(t)));
                }
                continue;
            }
            if let Some(ticket) = ticket {
                if let Some(tx) = lock(&executor.inner.journal_tickets).remove(&ticket) {
                    let _ = tx.send(answer);
                }
                continue;
            }
            // Decisions on watched approvals, recovery: transitions of their own.
            let ts = lock(&executor.inner.engine).journal_answered(answer);
            for t in ts {
                executor.follow(t);
            }
        }
    }

    impl ToolExecutor {
        /// A transition nobody's task asked for: an approval decided elsewhere goes to
        /// the task waiting for it; a recovered execution gets a task of its own.
        fn follow(&self, t: Transition) {
            if matches!(t.step, Step::Stale) {
                self.apply(t);
                return;
            }
            if let Some(tx) = lock(&self.inner.approvals).remove(&t.key) {
                let _ = tx.send(t);
                return;
            }
            let key = t.key;
            let admission = matches!(t.step, Step::Queued).then(|| {
                let (tx, rx) = oneshot::channel();
                lock(&self.inner.admissions).insert(key, tx);
                rx
            });
            let step = self.apply(t);
            if matches!(step, Step::Finished(_)) {
                return;
            }
            let Some(runtime) = lock(&self.inner.runtime).clone() else { return };
            let executor = self.clone();
            let cancel = CancellationToken::new();
            lock(&self.inner.tokens).insert(key, cancel.clone());
            runtime.spawn(async move {
                executor.drive(key, step, admission, cancel).await;
            });
        }
    }
}
