//! [`ToolExecutor`]: the tokio driver of the [`ExecutionEngine`], for Rust handlers.
//!
//! Timeouts are a `select!` against a tokio sleep, backoff delays are tokio sleeps, and
//! cancellation is a [`CancellationToken`] per execution with a child token per attempt,
//! handed to the tool in its [`ToolContext`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::audit::{AuditLog, AuditRecord};
use crate::engine::{AttemptSpec, CallOptions, ExecutionEngine, ManagerConfig, Step, Transition};
use crate::log_lines::{self, LogFields, LogLevel, LogLine};
use crate::error::{RegistryError, ToolError};
use crate::handler::ToolContext;
use crate::record::{payload_json, EventMask, ExecutionEvent, ExecutionRecord, ExecutionStatus, Payload, ToolStats};
use crate::registry::ToolRegistry;

type Listener = Arc<dyn Fn(&ExecutionEvent) + Send + Sync>;
type Logger = Arc<dyn Fn(&LogLine) + Send + Sync>;
type AuditListener = Arc<dyn Fn(&AuditRecord) + Send + Sync>;

struct Inner {
    engine: Mutex<ExecutionEngine>,
    listeners: Mutex<Vec<Listener>>,
    /// Queued executions wait here for their slot.
    admissions: Mutex<HashMap<u64, oneshot::Sender<AttemptSpec>>>,
    /// The cancellation token of each execution in flight.
    tokens: Mutex<HashMap<u64, CancellationToken>>,
    logger: Mutex<Option<Logger>>,
    audit_log: Mutex<Option<AuditLog>>,
    audit_listeners: Mutex<Vec<AuditListener>>,
}

/// Runs tools of a [`ToolRegistry`] with validation, retries, timeouts, cancellation and
/// events. Cloning gives another handle to the same executor.
#[derive(Clone)]
pub struct ToolExecutor {
    inner: Arc<Inner>,
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
        });
        let weak = Arc::downgrade(&inner);
        registry.subscribe(move |change| {
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

    /// Calls `listener` for every lifecycle event (on the thread that caused it).
    pub fn on_event(&self, listener: impl Fn(&ExecutionEvent) + Send + Sync + 'static) {
        lock(&self.inner.listeners).push(Arc::new(listener));
        lock(&self.inner.engine).set_wanted_events(EventMask::ALL);
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

    pub fn stats(&self, tool_name: &str) -> ToolStats {
        lock(&self.inner.engine).stats(tool_name)
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
        let (t, mut admission) = self.transition(|engine| engine.start(tool_name, args, options));
        let key = t.key;
        if !matches!(t.step, Step::Finished(_)) {
            lock(&self.inner.tokens).insert(key, cancel.clone());
        }
        let mut step = self.apply(t);
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
                    let outcome = self.run_attempt(spec, &cancel).await;
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
                        () = cancel.cancelled() => return self.cancelled(key).await,
                    }
                }
                Step::Finished(record) => {
                    lock(&self.inner.tokens).remove(&key);
                    return ExecutionOutcome { record };
                }
                Step::Stale => return self.cancelled(key).await,
            };
        }
    }

    /// Runs one engine call. When it leaves the execution queued, the admission channel
    /// is registered before the engine lock is released, so no other thread can admit
    /// the execution before its task is listening.
    fn transition(&self, call: impl FnOnce(&mut ExecutionEngine) -> Transition) -> (Transition, Option<oneshot::Receiver<AttemptSpec>>) {
        let mut engine = lock(&self.inner.engine);
        let t = call(&mut engine);
        let admission = matches!(t.step, Step::Queued).then(|| {
            let (tx, rx) = oneshot::channel();
            lock(&self.inner.admissions).insert(t.key, tx);
            rx
        });
        (t, admission)
    }

    async fn run_attempt(&self, spec: AttemptSpec, cancel: &CancellationToken) -> Result<Value, ToolError> {
        let attempt_token = cancel.child_token();
        let tool_name = spec.tool.name().to_string();
        let ctx = ToolContext {
            execution_id: spec.execution_id.clone(),
            tool_call_id: spec.tool_call_id.clone(),
            session_id: spec.session_id.clone(),
            tool_name: tool_name.clone(),
            attempt_number: spec.attempt_number,
            max_attempts: spec.max_attempts,
            cancellation: attempt_token.clone(),
        };
        let call = spec.tool.handler.call(spec.args.to_value().into_owned(), ctx);
        let timeout = async {
            match spec.timeout {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
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
        outcome
    }

    async fn cancelled(&self, key: u64) -> ExecutionOutcome {
        lock(&self.inner.admissions).remove(&key);
        lock(&self.inner.tokens).remove(&key);
        let t = lock(&self.inner.engine).cancel_key(key);
        match self.apply(t) {
            Step::Finished(record) => ExecutionOutcome { record },
            _ => unreachable!("cancelling an execution in flight finishes it"),
        }
    }

    /// Delivers a transition's events, log lines and audit record, hands admitted
    /// attempts to their waiting tasks, and returns the step.
    fn apply(&self, t: Transition) -> Step {
        if !t.events.is_empty() {
            let listeners = lock(&self.inner.listeners).clone();
            for event in &t.events {
                for l in &listeners {
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
