//! [`HostEngine`]: the execution engine driven by a host that runs handlers itself.
//!
//! Each call reports one event of the host's world (a call started, an attempt settled
//! or threw, a timer fired, a cancel) and leaves in [`HostEngine::wire`] what the host
//! must do about it, in order (see [`super::wire`]), and in
//! [`HostEngine::take_timers`] which timers to arm or clear. The host keeps the JS side
//! of each execution (its promise, arguments, handler context); the engine keeps every
//! decision: resolution, validation, admission, retries and delays, timeouts, circuit
//! breakers, records, history, events, log lines and audit records.

use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashSet;

use super::options::{call_options, manager_options, HostOptions};
use super::registry::{tool_id, HostRegistry};
use super::wire::{event, op, Wire};
use super::{HostCause, HostValue};
use crate::audit::{AuditLog, AuditRecord};
use crate::journal::{DecideAnswer, JournalAnswer, JournalError, JournalRequest, StoredApproval, Verdict};
use crate::engine::{ApprovalVerdict, Arguments, AttemptSpec, CallOptions, Evicted, ExecutionEngine, Step, Transition};
use crate::error::{RegistryError, Thrown, ToolError};
use crate::record::{EventMask, ExecutionEvent, ExecutionRecord, Progress};

/// Which of an execution's timers a request is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimerKind {
    /// The running attempt's timeout: [`HostEngine::timed_out`].
    Attempt,
    /// The end of a backoff delay: [`HostEngine::resume`] (never cleared: a late one is
    /// stale to the engine).
    Resume,
    /// `maxTotalTimeoutMs`: [`HostEngine::total_timed_out`].
    Total,
    /// `approvalTimeoutMs`: [`HostEngine::approval_expired`].
    Approval,
}

/// A timer the host must arm or clear.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimerRequest {
    /// Arm (or re-arm) the `kind` timer of `key`; `attempt` is the attempt it belongs to
    /// (for `Attempt`).
    Arm { kind: TimerKind, key: u64, attempt: u32, after: Duration },
    /// Forget the `kind` timer of `key`, if any.
    Clear { kind: TimerKind, key: u64 },
}

/// See the module docs.
pub struct HostEngine {
    engine: ExecutionEngine,
    registry: HostRegistry,
    /// What the last call produced.
    pub wire: Wire,
    timers: Vec<TimerRequest>,
    /// Timers armed, per execution and kind.
    armed: FxHashSet<(u64, TimerKind)>,
    options: HostOptions,
    audit_file: Option<Result<AuditLog, String>>,
    audit_listener: bool,
    /// Journal work for the host to hand to its journal worker.
    journal: Vec<JournalRequest>,
    /// Answers the host still waits for (decisions, listings), by ticket.
    tickets: usize,
    /// The host let its journal go.
    journal_closed: bool,
    /// Journal answers are being written within another call (`exchange_journal`): an
    /// attempt they start is deferred, as a call's first attempt is, so that a handler
    /// never runs inside `execute`.
    answering_within: bool,
}

impl HostEngine {
    /// A manager's engine over `registry`, from its options as JSON text.
    ///
    /// # Errors
    /// `INVALID_CONFIG` naming the option.
    pub fn new(registry: &HostRegistry, options: &str) -> Result<Self, RegistryError> {
        let (config, options) = manager_options(options)?;
        let engine = ExecutionEngine::new(registry.registry.clone(), config)?;
        let audit_file = options.audit_log.as_ref().map(|path| AuditLog::open_with(path, options.audit_sync).map_err(|e| format!("audit log {path} could not be opened: {e}")));
        let mut host = Self {
            engine,
            registry: registry.clone(),
            wire: Wire::default(),
            timers: Vec::new(),
            armed: FxHashSet::default(),
            options,
            audit_file,
            audit_listener: false,
            journal: Vec::new(),
            answering_within: false,
            tickets: 0,
            journal_closed: false,
        };
        host.sync_audit();
        Ok(host)
    }

    pub fn engine(&self) -> &ExecutionEngine {
        &self.engine
    }

    /// Which event types have listeners (bit `i` for `EventType` number `i`), and
    /// whether anyone listens to audit records.
    pub fn set_wanted(&mut self, mask: u16, audit_listener: bool) {
        self.engine.set_wanted_events(EventMask(mask));
        self.audit_listener = audit_listener;
        self.sync_audit();
    }

    fn sync_audit(&mut self) {
        self.engine.set_audit_wanted(self.audit_file.is_some() || self.audit_listener);
    }

    /// The redaction list audit hashes use, when audit records are wanted.
    pub fn audit_redaction(&self) -> Option<Vec<String>> {
        self.engine.audit_redaction().map(<[String]>::to_vec)
    }

    /// Timers to arm or clear after the last call.
    pub fn take_timers(&mut self) -> std::vec::Drain<'_, TimerRequest> {
        self.timers.drain(..)
    }

    /// Executions not yet finished, and journal answers still awaited.
    pub fn in_flight(&self) -> usize {
        self.engine.in_flight() + self.tickets
    }

    /// The journal the manager's options name (its URL), when they name one.
    pub fn journal_url(&self) -> Option<&str> {
        self.options.journal.as_deref()
    }

    /// The journal's lease, retention and poll settings.
    pub fn journal_policy(&self) -> Option<crate::journal::JournalPolicy> {
        self.engine.config().journal
    }

    /// The journal answered (on the host's main thread, in the order answered).
    pub fn journal_answered(&mut self, answers: Vec<JournalAnswer>) {
        self.wire.clear();
        self.apply_answers(answers);
        self.finish_call();
    }

    /// Whether the last call left journal work for [`Self::exchange_journal`].
    #[inline]
    pub fn has_journal_work(&self) -> bool {
        !self.journal.is_empty()
    }

    /// Hands the journal work of the last call to `send`. When every execution in flight
    /// then waits on a claim or an outcome just sent (a caller making one call at a time),
    /// takes the answers `wait` gets (it may spin for them, see
    /// [`crate::journal::inbox`]) and writes what they lead to after what the wire holds,
    /// again while that leads to more such requests. Timers they ask for are left with
    /// the others, for [`Self::take_timers`].
    pub fn exchange_journal(&mut self, mut send: impl FnMut(JournalRequest), mut wait: impl FnMut() -> Vec<JournalAnswer>) {
        loop {
            let mut awaited = 0;
            for request in self.journal.drain(..) {
                if matches!(request, JournalRequest::Claim(_) | JournalRequest::Record(_)) {
                    awaited += 1;
                }
                send(request);
            }
            if awaited == 0 || self.in_flight() > awaited {
                return;
            }
            let answers = wait();
            if answers.is_empty() {
                return;
            }
            self.answering_within = true;
            self.apply_answers(answers);
            self.answering_within = false;
            self.finish_call();
        }
    }

    /// Writes what journal answers lead to, after what the wire already holds.
    fn apply_answers(&mut self, answers: Vec<JournalAnswer>) {
        for answer in answers {
            match answer {
                JournalAnswer::Decided { ticket, answer } => {
                    if ticket == 0 {
                        continue;
                    }
                    self.tickets = self.tickets.saturating_sub(1);
                    match answer {
                        DecideAnswer::Decided(_) => self.wire.push(&[op::ANSWER, ticket as f64, 1.0]),
                        DecideAnswer::NotFound => {
                            let e = ToolError::new(
                                crate::ErrorCategory::NotFound,
                                crate::RegistryErrorCode::ApprovalNotFound.as_str(),
                                "no call waits for that approval (it was answered, cancelled or timed out)",
                            );
                            self.wire.push(&[op::ANSWER, ticket as f64, 0.0]);
                            self.wire.error(&e);
                        }
                        DecideAnswer::Refused(e) => {
                            self.wire.push(&[op::ANSWER, ticket as f64, 0.0]);
                            self.wire.error(&e);
                        }
                    }
                }
                JournalAnswer::Approvals { ticket, approvals } => {
                    self.tickets = self.tickets.saturating_sub(1);
                    let list: Vec<serde_json::Value> = approvals.iter().map(pending_json).collect();
                    self.wire.push(&[op::APPROVALS, ticket as f64, 1.0]);
                    self.wire.string(&serde_json::Value::Array(list).to_string());
                }
                JournalAnswer::Task { ticket, answer } => {
                    self.tickets = self.tickets.saturating_sub(1);
                    self.wire.push(&[op::TASK, ticket as f64, 1.0]);
                    self.wire.string(&answer.to_string());
                }
                JournalAnswer::Failed { ticket: Some(ticket), error, .. } => {
                    self.tickets = self.tickets.saturating_sub(1);
                    let e = ToolError::new(crate::ErrorCategory::Transient, error.code.as_str(), error.message);
                    self.wire.push(&[op::ANSWER, ticket as f64, 0.0]);
                    self.wire.error(&e);
                }
                answer => {
                    for t in self.engine.journal_answered(answer) {
                        self.append(t, None);
                    }
                }
            }
        }
    }

    /// Starts an execution. `ticket` is the host's name for it until `NEW` gives its key;
    /// `args` its argument text ('' for none), or `unreadable` why the host could not
    /// make text of the value it was given ('' when it could); `options` the call options
    /// as JSON text ('' for none); `aborted` whether the caller's signal had already aborted.
    pub fn start(&mut self, ticket: f64, name: &str, args: &str, unreadable: &str, options: &str, aborted: bool) {
        self.wire.clear();
        let mut call = match call_options(options, aborted) {
            Ok(c) => c,
            Err(e) => return self.refuse(ticket, &e),
        };
        let parsed = if unreadable.is_empty() {
            crate::arguments::read_arguments(name, args)
        } else {
            Err(RegistryError::new(crate::RegistryErrorCode::InvalidArguments, unreadable))
        };
        // The host's logger is given `args` from the text it keeps (LOG's `args_given`).
        if self.options.logger && parsed.is_ok() {
            if let Some(max) = self.engine.config().logging.as_ref().and_then(|o| o.given_args_limit()) {
                call.given_args_chars = crate::truncation::compact_chars(args, max);
            }
        }
        let t = self.engine.start(name, parsed, call);
        self.apply(t, Some(ticket));
    }

    /// As [`HostEngine::start`], with arguments the host parsed (and validated) off its
    /// main thread.
    pub fn start_with(&mut self, ticket: f64, name: &str, arguments: Arguments, call: CallOptions) {
        self.wire.clear();
        let t = self.engine.start_with(name, arguments, call);
        self.apply(t, Some(ticket));
    }

    /// Writes `REFUSED` for a call whose options were refused before it started.
    pub fn refuse(&mut self, ticket: f64, e: &RegistryError) {
        self.wire.clear();
        self.wire.push(&[op::REFUSED, ticket]);
        self.wire.string(&super::registry::registry_error_json(e).to_string());
    }

    /// An attempt returned (or its promise fulfilled). `result` is the result as JSON
    /// text when the tool has an output schema (`RUN` says so), checked against it.
    pub fn settle(&mut self, key: u64, attempt: u32, result: Option<&str>) {
        self.wire.clear();
        if !self.engine.is_current(key, attempt) {
            return;
        }
        self.clear_timer(key, TimerKind::Attempt);
        if let Some(text) = result {
            // A string cut inside a surrogate pair reads as U+FFFD: as an error it failed
            // the output check as "not JSON", and a journal stored the result as null.
            let parsed = crate::json_text::from_str(text);
            if self.engine.checks_output(key) {
                let checked = match &parsed {
                    Ok(v) => self.engine.check_output(key, v),
                    Err(e) => {
                        let tool = self.engine.timeout_of(key).map(|(t, _)| t.to_string()).unwrap_or_default();
                        let issue = crate::schema::ValidationIssue { path: String::new(), schema_path: String::new(), keyword: "json".into(), message: format!("the result is not JSON: {e}") };
                        Err(ToolError::invalid_output(&tool, vec![issue]))
                    }
                };
                if let Err(e) = checked {
                    let t = self.engine.attempt_finished(key, attempt, Err(e));
                    return self.apply(t, None);
                }
            }
            // A journaled call stores its result as JSON, for replays.
            if let Ok(v) = parsed {
                self.engine.set_result_json(key, v);
            }
        }
        if let Some((duration_ms, wall)) = self.engine.metadata_clock(key) {
            self.wire.push(&[op::METADATA, key as f64, duration_ms]);
            self.wire.ascii_with(|text| crate::timestamp::push_iso8601_millis(text, wall));
        }
        let t = self.engine.attempt_finished(key, attempt, Ok(Arc::new(HostValue)));
        self.apply(t, None);
    }

    /// An attempt threw (or its promise rejected), or returned a value JSON cannot carry:
    /// `thrown` is [`Thrown`] as JSON text.
    pub fn fail(&mut self, key: u64, attempt: u32, thrown: &str) {
        self.wire.clear();
        if !self.engine.is_current(key, attempt) {
            return;
        }
        self.clear_timer(key, TimerKind::Attempt);
        // A message with a lone surrogate reads as U+FFFD (it made "a non-error value").
        let thrown: Thrown = crate::json_text::from_str_as(thrown).unwrap_or_default();
        let tool = self.engine.timeout_of(key).map(|(t, _)| t.to_string()).unwrap_or_default();
        let mut error = ToolError::from_thrown(&tool, &thrown);
        // `throw undefined` has no cause to keep, nor a result that is not JSON.
        if thrown.invalid_result.is_none() && (thrown.is_object || thrown.text.as_deref() != Some("undefined")) {
            error.cause = Some(Arc::new(HostCause));
        }
        let t = self.engine.attempt_finished(key, attempt, Err(error));
        self.apply(t, None);
    }

    /// Interceptors of the host (`use()` in JS) changed the running attempt's arguments
    /// to `text` (JSON), or to a value JSON cannot hold (`unreadable` says why; '' when
    /// they are JSON). Arguments that may not run fail the attempt with
    /// `INVALID_ARGUMENTS`, written as any failure; arguments that may run write nothing.
    pub fn intercepted_args(&mut self, key: u64, attempt: u32, text: &str, unreadable: &str) {
        self.wire.clear();
        if !self.engine.is_current(key, attempt) {
            return;
        }
        let tool = self.engine.timeout_of(key).map(|(t, _)| t.to_string()).unwrap_or_default();
        let refused = if unreadable.is_empty() {
            // Read as a call's argument text is (its size, depth, lone surrogates).
            match crate::arguments::parse_arguments(&tool, text) {
                Ok(args) => self.engine.check_intercepted_args(key, &args).err(),
                Err(e) => Some(ToolError::invalid_intercepted_arguments(&tool, Vec::new(), Some(&e.message))),
            }
        } else {
            Some(ToolError::invalid_intercepted_arguments(&tool, Vec::new(), Some(unreadable)))
        };
        if let Some(error) = refused {
            self.clear_timer(key, TimerKind::Attempt);
            let t = self.engine.attempt_finished(key, attempt, Err(error));
            self.apply(t, None);
        }
    }

    /// The timeout timer of an attempt fired.
    pub fn timed_out(&mut self, key: u64, attempt: u32) {
        self.wire.clear();
        self.armed.remove(&(key, TimerKind::Attempt));
        let error = match self.engine.timeout_of(key) {
            Some((tool, Some(t))) if self.engine.is_current(key, attempt) => ToolError::timeout(tool, t.as_millis() as u64),
            _ => return,
        };
        self.wire.push(&[op::INTERRUPT, key as f64, f64::from(attempt), 1.0]);
        self.wire.string(&error.message);
        let t = self.engine.attempt_finished(key, attempt, Err(error));
        self.apply(t, None);
    }

    /// The backoff timer of an execution fired: its next attempt begins.
    pub fn resume(&mut self, key: u64) {
        self.wire.clear();
        let t = self.engine.begin_attempt(key);
        self.apply(t, None);
    }

    /// `maxTotalTimeoutMs` of an execution passed.
    pub fn total_timed_out(&mut self, key: u64) {
        self.wire.clear();
        self.armed.remove(&(key, TimerKind::Total));
        let t = self.engine.total_timed_out(key);
        if let Some(attempt) = t.interrupted_attempt {
            let message = match &t.step {
                Step::Finished(r) => r.error.as_ref().map(|e| e.message.clone()).unwrap_or_default(),
                _ => String::new(),
            };
            self.wire.push(&[op::INTERRUPT, key as f64, f64::from(attempt), 1.0]);
            self.wire.string(&message);
        }
        let t = Transition { interrupted_attempt: None, ..t };
        self.apply(t, None);
    }

    /// The approval of an execution was not answered in time: it ends denied.
    pub fn approval_expired(&mut self, key: u64) {
        self.wire.clear();
        self.armed.remove(&(key, TimerKind::Approval));
        let t = self.engine.approval_expired(key);
        self.apply(t, None);
    }

    /// The host's approval policy answered for an execution it was asked about
    /// (`DECIDE`): `needed`, or, when `invalid` is not empty, a value that is not a
    /// boolean, described there (the call is refused).
    pub fn approval_decided(&mut self, key: u64, needed: bool, invalid: &str) {
        self.wire.clear();
        self.clear_timer(key, TimerKind::Approval);
        let verdict = if invalid.is_empty() { ApprovalVerdict::from(needed) } else { ApprovalVerdict::Invalid(invalid.to_string()) };
        let t = self.engine.approval_decided(key, verdict);
        self.apply(t, None);
    }

    /// Approves a waiting call (`args`: edited arguments as JSON text, '' for none). A
    /// refusal (no such approval; edited arguments that do not validate, the call then
    /// still waiting) is written as `APPROVAL_REFUSED`.
    pub fn approve(&mut self, approval_id: &str, args: &str, by: Option<String>) {
        self.approve_ticket(approval_id, args, by, 0);
    }

    /// As [`HostEngine::approve`]; with a journal the decision is made there, and
    /// `ANSWER ticket` says how it went.
    pub fn approve_ticket(&mut self, approval_id: &str, args: &str, by: Option<String>, ticket: u64) {
        self.wire.clear();
        if self.journal_policy().is_some() {
            let edited = match self.edited_arguments(approval_id, args) {
                Ok(v) => v,
                Err(e) => {
                    self.wire.push(&[op::ANSWER, ticket as f64, 0.0]);
                    return self.wire.error(&e);
                }
            };
            let verdict = Verdict::Approve { args: edited.is_some().then(|| args.to_string()) };
            let request = self.engine.approval_decision(ticket, approval_id, verdict, edited, by);
            self.tickets += 1;
            self.journal.push(request);
            // A closed journal answers at once, as failed: the caller's promise settles.
            return self.answer_closed_journal();
        }
        let edited = match self.edited_arguments(approval_id, args) {
            Ok(v) => v,
            Err(e) => return self.refuse_approval(&e),
        };
        let edited_text = edited.is_some().then(|| args.to_string());
        match self.engine.approve(approval_id, edited, by) {
            Ok(t) => {
                self.clear_timer(t.key, TimerKind::Approval);
                if let Some(text) = edited_text {
                    self.wire.push(&[op::ARGS, t.key as f64]);
                    self.wire.string(&text);
                }
                self.apply(t, None);
            }
            Err(e) => self.refuse_approval(&e),
        }
    }

    /// Denies a waiting call; a refusal (no such approval) is written as `APPROVAL_REFUSED`.
    pub fn deny(&mut self, approval_id: &str, reason: Option<String>, by: Option<String>) {
        self.deny_ticket(approval_id, reason, by, 0);
    }

    /// As [`HostEngine::deny`]; with a journal, decided there (`ANSWER ticket`).
    pub fn deny_ticket(&mut self, approval_id: &str, reason: Option<String>, by: Option<String>, ticket: u64) {
        self.wire.clear();
        if self.journal_policy().is_some() {
            let verdict = Verdict::Deny { reason: reason.unwrap_or_else(|| "denied by the approver".into()) };
            let request = self.engine.approval_decision(ticket, approval_id, verdict, None, by);
            self.tickets += 1;
            self.journal.push(request);
            return self.answer_closed_journal();
        }
        match self.engine.deny(approval_id, reason, by) {
            Ok(t) => self.apply(t, None),
            Err(e) => self.refuse_approval(&e),
        }
    }

    /// The approver's edited arguments ('' for none), read as a call's argument text is.
    /// A refusal names the tool when this engine holds the waiting call, else the
    /// approval (with a journal it may wait in another process).
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    fn edited_arguments(&self, approval_id: &str, args: &str) -> Result<Option<serde_json::Value>, ToolError> {
        if args.is_empty() {
            return Ok(None);
        }
        crate::arguments::arguments_of(args).map(Some).map_err(|why| {
            let message = match self.engine.tool_awaiting(approval_id) {
                Some(tool) => format!("invalid arguments for tool '{tool}': {why}"),
                None => format!("invalid edited arguments for approval '{approval_id}': {why}"),
            };
            ToolError::from(crate::error::RegistryError::new(crate::error::RegistryErrorCode::InvalidArguments, message))
        })
    }

    fn refuse_approval(&mut self, e: &ToolError) {
        self.wire.push(&[op::APPROVAL_REFUSED]);
        self.wire.error(e);
    }

    /// Every call waiting for approval, as a JSON array.
    /// With a journal: asks it for every call waiting for approval, in any process
    /// (`APPROVALS ticket` answers). `false` without one.
    pub fn journal_approvals(&mut self, ticket: u64) -> bool {
        self.wire.clear();
        if self.journal_policy().is_none() {
            return false;
        }
        self.tickets += 1;
        self.journal.push(JournalRequest::Approvals { ticket });
        // A closed journal answers at once, as failed.
        self.answer_closed_journal();
        true
    }

    /// With a journal: an MCP task store's operation (`TaskOp` as JSON:
    /// `{ op: 'create' | 'get' | 'update' | 'list', ... }`), answered later as
    /// `TASK ticket` (or `ANSWER ticket` not ok when the journal fails). `false` without
    /// one, or for a malformed operation.
    pub fn journal_task(&mut self, ticket: u64, op: &str) -> bool {
        self.wire.clear();
        if self.journal_policy().is_none() {
            return false;
        }
        let Some(op) = task_op(op) else { return false };
        self.tickets += 1;
        self.journal.push(JournalRequest::Task { ticket, op });
        self.answer_closed_journal();
        true
    }

    pub fn pending_approvals(&self) -> String {
        serde_json::to_string(&self.engine.pending_approvals()).unwrap_or_default()
    }

    /// The running attempt reported progress.
    pub fn progress(&mut self, key: u64, attempt: u32, progress: f64, total: Option<f64>, message: Option<String>) {
        self.wire.clear();
        let t = self.engine.progress(key, attempt, Progress { progress, total, message });
        self.apply(t, None);
    }

    /// The running attempt yielded a preliminary result (the host keeps it).
    pub fn preliminary_result(&mut self, key: u64, attempt: u32) {
        self.wire.clear();
        let t = self.engine.preliminary_result(key, attempt);
        self.apply(t, None);
    }

    /// Cancels an execution by id; `false` when it is not in flight.
    pub fn cancel(&mut self, execution_id: &str) -> bool {
        self.wire.clear();
        match self.engine.cancel(execution_id) {
            Some(t) => {
                self.apply(t, None);
                true
            }
            None => false,
        }
    }

    /// Cancels executions by key, queued ones first (so a slot freed by a cancelled
    /// running one never starts a queued one about to be cancelled too).
    pub fn cancel_keys(&mut self, keys: &[u64]) -> usize {
        self.wire.clear();
        let wanted: FxHashSet<u64> = keys.iter().copied().collect();
        let ordered: Vec<u64> = self.engine.in_flight_keys(None).into_iter().filter(|k| wanted.contains(k)).collect();
        self.cancel_ordered(&ordered)
    }

    /// Cancels every execution in flight, or those of one session. Returns how many.
    pub fn cancel_all(&mut self, session: Option<&str>) -> usize {
        self.wire.clear();
        let keys = self.engine.in_flight_keys(session);
        self.cancel_ordered(&keys)
    }

    fn cancel_ordered(&mut self, keys: &[u64]) -> usize {
        for &key in keys {
            let t = self.engine.cancel_key(key);
            self.append(t, None);
        }
        self.finish_call();
        keys.len()
    }

    /// Cancels a destroyed session's executions and drops its records.
    pub fn destroy_session(&mut self, session: &str) -> usize {
        let n = self.cancel_all(Some(session));
        self.engine.forget_session(session);
        self.finish_call();
        n
    }

    /// Writes `SNAPSHOT` for an execution in flight; `false` when it is not.
    pub fn snapshot(&mut self, execution_id: &str) -> bool {
        self.wire.clear();
        let Some(key) = self.engine.execution_key(execution_id) else { return false };
        let Some(record) = self.engine.execution(execution_id) else { return false };
        self.wire.push(&[op::SNAPSHOT, key as f64]);
        self.wire.record(&record);
        self.wire.extras(&record);
        true
    }

    /// The record of an execution in flight, for drivers that keep none of their own.
    pub fn record(&self, execution_id: &str) -> Option<std::sync::Arc<ExecutionRecord>> {
        self.engine.execution(execution_id)
    }

    /// Ids of every record of a model tool call (kept or in flight), oldest first.
    pub fn ids_for_tool_call(&self, tool_call_id: &str) -> Vec<String> {
        self.engine.executions_for_tool_call(tool_call_id).iter().map(|r| r.id.clone()).collect()
    }

    /// `{ executionCount, successCount, failureCount, totalDurationMs, averageDurationMs, successRate }`
    pub fn stats(&self, tool: &str) -> serde_json::Value {
        let s = self.engine.stats(tool);
        serde_json::json!({
            "executionCount": s.execution_count,
            "successCount": s.success_count,
            "failureCount": s.failure_count,
            "totalDurationMs": s.total_duration_ms,
            "averageDurationMs": s.average_duration_ms(),
            "successRate": s.success_rate(),
        })
    }

    /// Encodes one transition as the whole output of this call.
    fn apply(&mut self, t: Transition, ticket: Option<f64>) {
        self.append(t, ticket);
        self.finish_call();
    }

    /// The host let its journal go ([`HostEngine::close_journal`]): journal work asked for
    /// since then is answered here, as failed (a claim fails its call, which never runs).
    fn answer_closed_journal(&mut self) {
        if !self.journal_closed {
            return;
        }
        while let Some(request) = self.journal.pop() {
            let error = || JournalError { lasting: true, ..JournalError::unavailable("the manager's journal was closed (close())") };
            let answer = match request {
                JournalRequest::Claim(c) | JournalRequest::Watch(c) => {
                    JournalAnswer::Failed { exec: Some(c.exec), ticket: None, claim: Some(Box::new(c)), error: error() }
                }
                JournalRequest::Decide { ticket, .. } | JournalRequest::Approvals { ticket } | JournalRequest::Task { ticket, .. } if ticket != 0 => {
                    JournalAnswer::Failed { exec: None, ticket: Some(ticket), claim: None, error: error() }
                }
                _ => continue,
            };
            self.apply_answers(vec![answer]);
        }
    }

    /// The manager is closing: journaled calls started from now on fail without running
    /// (see [`crate::engine::ExecutionEngine::refuse_new_journaled`]).
    pub fn refuse_new_journaled(&mut self) {
        self.engine.refuse_new_journaled();
    }

    /// Lets the journal go: journal work asked for from now on fails at once.
    pub fn close_journal(&mut self) {
        self.journal_closed = true;
        self.journal.clear();
    }

    /// Housekeeping every call ends with: records dropped from history, tools released.
    fn finish_call(&mut self) {
        self.answer_closed_journal();
        // In the order they happened; a run of oldest-first drops is one op.
        let mut oldest = 0.0;
        for evicted in self.engine.take_evicted() {
            if evicted != Evicted::Oldest && oldest > 0.0 {
                self.wire.push(&[op::EVICT_OLDEST, oldest]);
                oldest = 0.0;
            }
            match evicted {
                Evicted::Oldest => oldest += 1.0,
                Evicted::Newest => self.wire.push(&[op::EVICT_NEWEST]),
                Evicted::Id(id) => {
                    self.wire.push(&[op::EVICT]);
                    self.wire.string(&id);
                }
            }
        }
        if oldest > 0.0 {
            self.wire.push(&[op::EVICT_OLDEST, oldest]);
        }
        for id in self.registry.take_released() {
            self.wire.push(&[op::RELEASED, f64::from(id)]);
        }
    }

    fn clear_timer(&mut self, key: u64, kind: TimerKind) {
        if self.armed.remove(&(key, kind)) {
            self.timers.push(TimerRequest::Clear { kind, key });
        }
    }

    fn arm_timer(&mut self, kind: TimerKind, key: u64, attempt: u32, after: Duration) {
        if kind != TimerKind::Resume {
            self.armed.insert((key, kind));
        }
        self.timers.push(TimerRequest::Arm { kind, key, attempt, after });
    }

    fn arm(&mut self, spec: &AttemptSpec) {
        if let Some(after) = spec.timeout {
            self.arm_timer(TimerKind::Attempt, spec.key, spec.attempt_number, after);
        }
        if let Some(after) = spec.total_timeout {
            self.arm_timer(TimerKind::Total, spec.key, spec.attempt_number, after);
        }
    }

    /// Encodes a transition in delivery order: data the host needs before any of its
    /// user code runs, then events, log lines, the audit record, an interruption, the
    /// step, and attempts admitted from the queue.
    fn append(&mut self, mut t: Transition, ticket: Option<f64>) {
        let key = t.key;
        self.journal.append(&mut t.journal);
        if t.recovered {
            self.recovered(&t);
        }
        if let Some(text) = &t.edited_args {
            self.wire.push(&[op::ARGS, key as f64]);
            self.wire.string(text);
        }
        let w = &mut self.wire;
        if let Some(ticket) = ticket {
            w.push(&[op::NEW, ticket, key as f64]);
            match &t.step {
                Step::Finished(r) => w.string(&r.id),
                _ => w.string(self.engine.id_of(key).unwrap_or_default()),
            }
        }
        let w = &mut self.wire;
        match &t.step {
            Step::Finished(record) => {
                if record.replayed {
                    // The host has no value of its own for a replayed result: its JSON.
                    let text = record.result.as_ref().and_then(crate::record::payload_json).map_or_else(|| "null".to_string(), |v| v.to_string());
                    w.push(&[op::RESULT, key as f64]);
                    w.string(&text);
                }
                w.push(&[op::FINAL, key as f64]);
                w.record(record);
                match &record.error {
                    Some(e) => {
                        w.push(&[1.0]);
                        w.error(e);
                    }
                    None => w.push(&[0.0]),
                }
                w.extras(record);
            }
            Step::Retry { .. } => {
                if let Some(e) = self.engine.last_attempt_error(key) {
                    w.push(&[op::ATTEMPT_ERROR, key as f64]);
                    w.error(e);
                }
            }
            _ => {}
        }
        for e in &t.events {
            self.event(e, &t);
        }
        if !t.logs.is_empty() {
            self.logs(&t);
            self.engine.recycle_logs(std::mem::take(&mut t.logs));
        }
        if let Some(record) = &t.audit {
            self.audit(record);
        }
        let w = &mut self.wire;
        if let Some(attempt) = t.interrupted_attempt {
            w.push(&[op::INTERRUPT, key as f64, f64::from(attempt), 0.0]);
            w.string("the execution was cancelled");
        }
        if let Some((attempt, after)) = t.rearm {
            self.arm_timer(TimerKind::Attempt, key, attempt, after);
        }
        match &t.step {
            Step::Run(spec) => {
                self.run(spec, ticket.is_some() || self.answering_within);
            }
            Step::Queued => self.wire.push(&[op::QUEUED, key as f64]),
            Step::Retry { delay } => {
                self.clear_timer(key, TimerKind::Attempt);
                self.arm_timer(TimerKind::Resume, key, 0, *delay);
                self.wire.push(&[op::RETRY, key as f64, delay.as_secs_f64() * 1000.0]);
            }
            Step::Finished(_) => {
                for kind in [TimerKind::Attempt, TimerKind::Total, TimerKind::Approval] {
                    self.clear_timer(key, kind);
                }
                self.wire.push(&[op::DONE, key as f64]);
            }
            Step::Decide { timeout } => {
                if let Some(after) = timeout {
                    self.arm_timer(TimerKind::Approval, key, 0, *after);
                }
                let tool = self.engine.tool_of(key).map_or(0, |t| tool_id(t));
                self.wire.push(&[op::DECIDE, key as f64, f64::from(tool)]);
            }
            Step::AwaitApproval { approval_id, timeout } => {
                if let Some(after) = timeout {
                    self.arm_timer(TimerKind::Approval, key, 0, *after);
                }
                self.wire.push(&[op::AWAIT_APPROVAL, key as f64]);
                self.wire.string(approval_id);
            }
            Step::Journal(request) => self.journal.push(request.clone()),
            Step::Stale | Step::Continue => {}
        }
        for spec in &t.admitted {
            self.run(spec, false);
        }
    }

    /// `RECOVERED`: an execution recovery started, which the host has no view of yet.
    fn recovered(&mut self, t: &Transition) {
        let record = match &t.step {
            Step::Finished(r) => Some(r.clone()),
            _ => self.engine.record_of(t.key),
        };
        let Some(r) = record else { return };
        self.wire.push(&[op::RECOVERED, t.key as f64]);
        self.wire.string(&r.id);
        self.wire.string(&r.tool_name);
        self.wire.string(&serde_json::to_string(&*r.args.to_value()).unwrap_or_else(|_| "{}".into()));
        self.wire.opt_string(r.session_id.as_deref());
        self.wire.opt_string(r.tool_call_id.as_deref());
        self.wire.string(r.idempotency_key.as_deref().unwrap_or_default());
    }

    fn run(&mut self, spec: &AttemptSpec, deferred: bool) {
        self.arm(spec);
        self.wire.push(&[
            op::RUN,
            spec.key as f64,
            f64::from(spec.attempt_number),
            f64::from(spec.max_attempts),
            f64::from(tool_id(&spec.tool)),
            if deferred { 1.0 } else { 0.0 },
            // The host sends the result as JSON text: to check it, or to store it.
            if spec.tool.output.is_some() || self.engine.is_journaled(spec.key) { 1.0 } else { 0.0 },
        ]);
    }

    /// Events come for the transition's own execution, but for `executing` events of
    /// executions admitted from the queue: those are found among the admitted attempts.
    fn event(&mut self, e: &ExecutionEvent, t: &Transition) {
        let w = &mut self.wire;
        let own = t.key as f64;
        match e {
            ExecutionEvent::Started { execution } => {
                w.push(&[op::EVENT, event::STARTED, own]);
                w.record(execution);
            }
            ExecutionEvent::Validating { .. } => w.push(&[op::EVENT, event::VALIDATING, own]),
            ExecutionEvent::Executing { execution_id, attempt_number, .. } => {
                let key = t.admitted.iter().find(|s| &s.execution_id == execution_id).map_or(own, |s| s.key as f64);
                w.push(&[op::EVENT, event::EXECUTING, key, f64::from(*attempt_number)]);
            }
            ExecutionEvent::Retrying { attempt_number, max_attempts, delay_ms, .. } => {
                w.push(&[op::EVENT, event::RETRYING, own, f64::from(*attempt_number), f64::from(*max_attempts), *delay_ms]);
            }
            ExecutionEvent::Succeeded { .. } => w.push(&[op::EVENT, event::SUCCEEDED, own]),
            ExecutionEvent::Failed { .. } => w.push(&[op::EVENT, event::FAILED, own]),
            ExecutionEvent::Cancelled { .. } => w.push(&[op::EVENT, event::CANCELLED, own]),
            ExecutionEvent::ApprovalRequested { execution, approval_id } => {
                w.push(&[op::EVENT, event::APPROVAL_REQUESTED, own]);
                w.record(execution);
                w.extras(execution);
                w.string(approval_id);
            }
            ExecutionEvent::Approved { approval_id, by, edited, .. } => {
                w.push(&[op::EVENT, event::APPROVED, own, if *edited { 1.0 } else { 0.0 }]);
                w.string(approval_id);
                w.opt_string(by.as_deref());
            }
            ExecutionEvent::Denied { approval_id, by, reason, .. } => {
                w.push(&[op::EVENT, event::DENIED, own]);
                w.string(approval_id);
                w.string(reason);
                w.opt_string(by.as_deref());
            }
            ExecutionEvent::Progress { progress, .. } => {
                w.push(&[op::EVENT, event::PROGRESS, own, progress.progress, progress.total.unwrap_or(f64::NAN)]);
                w.opt_string(progress.message.as_deref());
            }
            ExecutionEvent::PreliminaryResult { .. } => w.push(&[op::EVENT, event::PRELIMINARY_RESULT, own]),
            ExecutionEvent::Recovered { idempotency_key, action, .. } => {
                w.push(&[op::EVENT, event::RECOVERED, own]);
                w.string(idempotency_key);
                w.string(action);
            }
        }
    }

    /// The key of the execution a log line is about: the transition's own, or one it
    /// admitted from the queue; NaN for any other (the line then carries its names).
    fn line_key(&self, t: &Transition, execution_id: &str) -> f64 {
        let own = match &t.step {
            Step::Finished(record) => Some(record.id.as_str()),
            _ => self.engine.id_of(t.key),
        };
        if own == Some(execution_id) {
            return t.key as f64;
        }
        t.admitted.iter().find(|s| s.execution_id == execution_id).map_or(f64::NAN, |s| s.key as f64)
    }

    fn logs(&mut self, t: &Transition) {
        if !self.options.logger {
            t.logs.iter().for_each(crate::log_lines::trace_line);
            return;
        }
        for line in &t.logs {
            let f = &line.fields;
            let key = self.line_key(t, &f.execution_id);
            let named = key.is_nan();
            // A Starting line is always of the transition's own or an admitted execution.
            debug_assert!(!(named && f.args_given), "a line whose args the host fills in names its execution by key");
            let optional = [&f.args, &f.error, &f.stack, &f.result];
            let mask = optional.iter().enumerate().fold(if named { 0b11 } else { 0 }, |m, (i, v)| if v.is_some() { m | 1 << (i + 2) } else { m });
            let level = match line.level {
                crate::log_lines::LogLevel::Debug => 0.0,
                crate::log_lines::LogLevel::Info => 1.0,
                crate::log_lines::LogLevel::Warn => 2.0,
                crate::log_lines::LogLevel::Error => 3.0,
            };
            self.wire.push(&[
                op::LOG,
                key,
                level,
                f.attempt_number.map_or(f64::NAN, f64::from),
                f.duration_ms.unwrap_or(f64::NAN),
                f64::from(mask),
                if f.args_given { 1.0 } else { 0.0 },
            ]);
            self.wire.string(&line.message);
            if named {
                self.wire.string(&f.execution_id);
                self.wire.string(&f.tool_name);
            }
            for text in optional.into_iter().flatten() {
                self.wire.string(text);
            }
        }
    }

    /// Appends the record to the audit file (flushed before the result is returned) and
    /// hands it to the host; a write failure travels with it.
    fn audit(&mut self, record: &AuditRecord) {
        // A file that could not be opened (its directory not made yet) is tried again with
        // each record, as a file lost mid-run is: it was reported with every record for the
        // manager's life, even once it could be opened.
        if let (Some(Err(_)), Some(path)) = (&self.audit_file, &self.options.audit_log) {
            self.audit_file = Some(AuditLog::open_with(path, self.options.audit_sync).map_err(|e| format!("audit log {path} could not be opened: {e}")));
        }
        let failure = match &self.audit_file {
            Some(Ok(file)) => file.append(record).err().map(|e| format!("audit log {} could not be written: {e}", file.path().display())),
            Some(Err(open_error)) => Some(open_error.clone()),
            None => None,
        };
        self.wire.push(&[op::AUDIT, if failure.is_some() { 1.0 } else { 0.0 }]);
        self.wire.string(&serde_json::to_string(record).unwrap_or_default());
        if let Some(message) = failure {
            self.wire.string(&message);
        }
    }
}

/// A pending approval from the journal as `pendingApprovals()` lists it.
fn pending_json(a: &StoredApproval) -> serde_json::Value {
    let mut o = serde_json::json!({
        "approvalId": a.approval_id,
        "executionId": a.execution_id,
        "toolName": a.tool,
        "args": crate::json_text::parse(&a.args).unwrap_or(serde_json::Value::Null),
        "requestedAt": a.requested_at,
    });
    if let Some(id) = &a.tool_call_id {
        o["toolCallId"] = id.clone().into();
    }
    if !a.row.scope.is_empty() {
        o["sessionId"] = a.row.scope.clone().into();
    }
    if let Some(at) = a.expires_at {
        o["expiresAt"] = at.into();
    }
    o["idempotencyKey"] = a.row.key.clone().into();
    o
}

/// A task store's operation from its JSON (the host's task store writes these).
fn task_op(text: &str) -> Option<crate::journal::TaskOp> {
    use crate::journal::{TaskOp, TaskRow};
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let s = |k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::to_string);
    let now = crate::record::now_ms() as i64;
    Some(match v.get("op")?.as_str()? {
        "create" => TaskOp::Create(TaskRow {
            task_id: s("taskId")?,
            status: "working".into(),
            status_message: None,
            ttl: v.get("ttl").and_then(serde_json::Value::as_i64),
            poll_interval: v.get("pollInterval").and_then(serde_json::Value::as_i64),
            created_at: now,
            last_updated: now,
            result: None,
        }),
        "get" => TaskOp::Get { task_id: s("taskId")? },
        "update" => TaskOp::Update { task_id: s("taskId")?, status: s("status")?, status_message: s("statusMessage"), result: v.get("result").cloned(), now },
        "list" => TaskOp::List { cursor: s("cursor"), limit: v.get("limit").and_then(serde_json::Value::as_u64).unwrap_or(100) as usize },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::wire::op;

    fn registry() -> HostRegistry {
        let r = HostRegistry::new();
        let def = r#"{"name":"echo","description":"echoes","handler":true,
            "inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}"#;
        r.register(None, def).unwrap();
        r
    }

    /// The op codes of the last call, in order, read by the declared layouts: a writer
    /// that drifts from them fails here.
    fn codes(w: &Wire) -> Vec<f64> {
        crate::host::wire::walk(&w.ops, &w.text).unwrap_or_else(|e| panic!("the wire does not fit its layouts: {e}"))
    }

    /// The wire's ops, read by their layouts: fields by name, not by offset.
    fn read(w: &Wire) -> Vec<crate::host::wire::ReadOp> {
        crate::host::wire::read(&w.ops, &w.text)
    }

    /// The key of the execution the wire's first op (a NEW) made.
    fn new_key(w: &Wire) -> u64 {
        let first = &read(w)[0];
        assert_eq!(first.code, op::NEW, "{first:?}");
        first.num("key") as u64
    }

    #[test]
    fn a_log_line_names_its_execution_by_key_and_a_foreign_one_by_its_names() {
        let mut h = HostEngine::new(&registry(), r#"{"logging":true,"logger":true,"maxConcurrency":1}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        let first = new_key(&h.wire) as f64;
        // Queued behind the first: its Starting line comes with the first one's finish.
        h.start(0.0, "echo", r#"{"n":2}"#, "", "", false);
        let second = new_key(&h.wire) as f64;
        h.settle(first as u64, 1, None);
        let logs: Vec<(f64, f64, String)> = log_ops(&h.wire);
        // Completed (the transition's own), then Starting (admitted from the queue): by key.
        assert_eq!(logs.iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(), [(first, 0.0), (second, 0.0)], "{logs:?}");
        assert!(logs[0].2.starts_with("[TOOL EXECUTION] Completed echo"), "{logs:?}");

        // A line of an execution this transition does not hold carries its names.
        let mut t = Transition::new(second as u64, Step::Retry { delay: Duration::ZERO });
        let mut line = crate::log_lines::starting("echo", "someone-else", None, &crate::log_lines::LogOptions::default());
        line.fields.attempt_number = Some(1);
        t.logs.push(line);
        h.wire.clear();
        h.logs(&t);
        let logs = log_ops(&h.wire);
        assert!(logs[0].0.is_nan(), "no key: {logs:?}");
        assert_eq!(logs[0].1, 3.0, "execution id and tool name follow");
        assert!(h.wire.text.ends_with("[TOOL EXECUTION] Starting echosomeone-elseecho"), "{}", h.wire.text);
        codes(&h.wire);
    }

    #[test]
    fn a_starting_line_names_compact_argument_text_instead_of_copying_it() {
        // (args given, the args string) of the Starting line of a call of `args`.
        let starting = |options: &str, args: &str| {
            let mut h = HostEngine::new(&registry(), options).unwrap();
            h.start(0.0, "echo", args, "", "", false);
            let ops = read(&h.wire);
            let log = ops.iter().find(|o| o.code == op::LOG).expect("a Starting line");
            assert_eq!(log.str("message"), Some("[TOOL EXECUTION] Starting echo"));
            (log.num("args_given"), log.str("args").map(str::to_string))
        };
        let logging = r#"{"logging":true,"logger":true}"#;
        // Compact text of at most `truncateLogs` chars is its own preview: named, not copied.
        assert_eq!(starting(logging, r#"{"n":1,"q":"a b \" c","s":"é"}"#), (1.0, None));
        // Text with whitespace outside strings, or longer, is previewed by the engine.
        assert_eq!(starting(logging, r#"{ "n": 1 }"#), (0.0, Some(r#"{"n":1}"#.into())));
        let long = format!(r#"{{"n":1,"s":"{}"}}"#, "x".repeat(100));
        assert_eq!(starting(logging, &long), (0.0, Some(format!("{}…", &long[..100]))));
        assert_eq!(starting(r#"{"logging":true,"logger":true,"truncateLogs":5}"#, r#"{"n":1}"#), (0.0, Some(r#"{"n":…"#.into())));
        // Redaction and logArguments: false are the engine's to apply.
        assert_eq!(starting(r#"{"logging":true,"logger":true,"redact":["q"]}"#, r#"{"n":1,"q":"x"}"#), (0.0, Some(r#"{"n":1,"q":"[REDACTED]"}"#.into())));
        assert_eq!(starting(r#"{"logging":true,"logger":true,"logArguments":false}"#, r#"{"n":1,"q":"x"}"#), (0.0, None));
        // Without a host logger the line goes to `tracing`, which needs the text.
        let mut h = HostEngine::new(&registry(), r#"{"logging":true}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        assert_eq!(codes(&h.wire), [op::NEW, op::RUN]);
    }

    /// The LOG ops of a wire: key, the mask's name bits and the message.
    fn log_ops(w: &Wire) -> Vec<(f64, f64, String)> {
        let line = |o: crate::host::wire::ReadOp| (o.num("key"), f64::from(o.num("mask") as u32 & 3), o.str("message").unwrap_or_default().to_string());
        read(w).into_iter().filter(|o| o.code == op::LOG).map(line).collect()
    }

    /// A journal played by hand for `exchange_journal`: claims are claimed (fence 1),
    /// outcomes recorded. Returns (requests sent, waits asked for).
    fn exchange(h: &mut HostEngine) -> (Vec<JournalRequest>, usize) {
        let sent = std::cell::RefCell::new(Vec::new());
        let mut waits = 0;
        h.exchange_journal(
            |r| sent.borrow_mut().push(r),
            || {
                waits += 1;
                let answer = match sent.borrow().last() {
                    Some(JournalRequest::Claim(c)) => JournalAnswer::Claimed {
                        claim: Box::new(c.clone()),
                        answer: crate::journal::ClaimAnswer::Claimed { fence: 1, taken_over: None },
                    },
                    Some(JournalRequest::Record(r)) => JournalAnswer::Recorded { exec: r.exec, row: r.row.clone(), answer: crate::journal::RecordAnswer::Recorded },
                    _ => panic!("waited on something else than a claim or an outcome"),
                };
                vec![answer]
            },
        );
        (sent.into_inner(), waits)
    }

    #[test]
    fn journal_answers_a_lone_call_waits_for_are_written_within_its_call_and_its_attempt_still_deferred() {
        let mut h = HostEngine::new(&registry(), r#"{"journal":"sqlite:unused.db"}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", r#"{"idempotencyKey":"k1"}"#, false);
        assert_eq!(codes(&h.wire), [op::NEW], "the call waits for its claim");
        let key = new_key(&h.wire);
        let (sent, waits) = exchange(&mut h);
        assert!(matches!(sent[..], [JournalRequest::Claim(_)]) && waits == 1, "{} requests, {waits} waits", sent.len());
        // The claim's answer follows the call's own output, and its first attempt runs
        // after `execute` returns, as without a journal.
        assert_eq!(codes(&h.wire), [op::NEW, op::RUN]);
        assert_eq!(read(&h.wire)[1].num("deferred"), 1.0);
        h.settle(key, 1, Some(r#"{"n":1}"#));
        assert!(!codes(&h.wire).contains(&op::FINAL), "nothing ends before its outcome is stored");
        let (sent, waits) = exchange(&mut h);
        assert!(matches!(sent[..], [JournalRequest::Record(_)]) && waits == 1, "{} requests, {waits} waits", sent.len());
        assert_eq!(&codes(&h.wire)[codes(&h.wire).len() - 2..], [op::FINAL, op::DONE]);
        assert_eq!(h.in_flight(), 0);
    }

    #[test]
    fn with_another_call_in_flight_journal_answers_are_not_waited_for() {
        let mut h = HostEngine::new(&registry(), r#"{"journal":"sqlite:unused.db"}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", r#"{"idempotencyKey":"k1"}"#, false);
        h.start(0.0, "echo", r#"{"n":2}"#, "", r#"{"idempotencyKey":"k2"}"#, false);
        // Both calls wait on their claims: the driver has nothing else to do for them.
        let (sent, waits) = exchange(&mut h);
        assert!(matches!(sent[..], [JournalRequest::Claim(_), JournalRequest::Claim(_)]) && waits == 1);
        // The second's attempt runs, the first still waits on its claim: a third call's
        // claim is not waited for.
        h.start(0.0, "echo", r#"{"n":3}"#, "", r#"{"idempotencyKey":"k3"}"#, false);
        let (sent, waits) = exchange(&mut h);
        assert!(matches!(sent[..], [JournalRequest::Claim(_)]));
        assert_eq!(waits, 0, "another call is running");
    }

    #[test]
    fn a_call_runs_then_settles_and_its_timer_is_armed_then_cleared() {
        let mut h = HostEngine::new(&registry(), "null").unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        assert_eq!(codes(&h.wire), [op::NEW, op::RUN]);
        let key = new_key(&h.wire);
        assert_eq!(read(&h.wire)[1].num("deferred"), 1.0, "the first attempt is deferred");
        assert!(matches!(h.take_timers().collect::<Vec<_>>()[..], [TimerRequest::Arm { kind: TimerKind::Attempt, attempt: 1, .. }]));
        h.settle(key, 1, None);
        assert_eq!(codes(&h.wire), [op::FINAL, op::DONE]);
        assert_eq!(h.take_timers().collect::<Vec<_>>(), [TimerRequest::Clear { kind: TimerKind::Attempt, key }]);
        assert_eq!(h.in_flight(), 0);
    }

    #[test]
    fn a_transient_failure_is_retried_after_a_resume_timer() {
        let mut h = HostEngine::new(&registry(), r#"{"retry":{"baseDelay":5,"maxDelay":5,"jitter":"none"}}"#).unwrap();
        h.set_wanted(0b1000, false);
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        let key = new_key(&h.wire);
        h.take_timers().for_each(drop);
        h.fail(key, 1, r#"{"isObject":true,"name":"Error","message":"busy","retryable":true}"#);
        assert_eq!(codes(&h.wire), [op::ATTEMPT_ERROR, op::EVENT, op::RETRY]);
        assert!(h.wire.text.contains("\"hostCause\":true") && h.wire.text.contains("TRANSIENT_ERROR"));
        let timers: Vec<_> = h.take_timers().collect();
        assert_eq!(timers, [TimerRequest::Clear { kind: TimerKind::Attempt, key }, TimerRequest::Arm { kind: TimerKind::Resume, key, attempt: 0, after: Duration::from_millis(5) }]);
        h.resume(key);
        assert_eq!(codes(&h.wire), [op::RUN]);
        assert_eq!(read(&h.wire)[0].num("attempt"), 2.0, "the second attempt");
    }

    #[test]
    fn bad_call_options_are_refused_before_anything_starts() {
        let mut h = HostEngine::new(&registry(), "null").unwrap();
        h.start(7.0, "echo", "{}", "", r#"{"timeout":5}"#, false);
        assert_eq!(codes(&h.wire), [op::REFUSED]);
        assert_eq!(read(&h.wire)[0].num("ticket"), 7.0);
        assert!(h.wire.text.contains("did you mean `timeoutMs`?"), "{}", h.wire.text);
        assert_eq!(h.in_flight(), 0);
    }

    #[test]
    fn cancelling_a_running_and_a_queued_call_cancels_the_queued_one_first() {
        let mut h = HostEngine::new(&registry(), r#"{"maxConcurrency":1}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        let running = new_key(&h.wire);
        h.start(0.0, "echo", r#"{"n":2}"#, "", "", false);
        assert_eq!(codes(&h.wire), [op::NEW, op::QUEUED]);
        let queued = new_key(&h.wire);
        assert_eq!(h.cancel_keys(&[running, queued]), 2);
        // The queued one ends first, so the slot the running one frees admits nothing.
        assert_eq!(codes(&h.wire), [op::FINAL, op::DONE, op::FINAL, op::INTERRUPT, op::DONE]);
        assert_eq!(read(&h.wire)[0].num("key") as u64, queued);
        assert_eq!(h.in_flight(), 0);
    }

    #[test]
    fn a_policy_answer_that_is_not_a_boolean_refuses_the_call_without_running_it() {
        let mut h = HostEngine::new(&registry(), r#"{"needsApproval":"ask"}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        assert_eq!(codes(&h.wire), [op::NEW, op::DECIDE]);
        let key = new_key(&h.wire);
        h.approval_decided(key, false, "the number 500");
        assert_eq!(codes(&h.wire), [op::FINAL, op::DONE], "no RUN, no AWAIT_APPROVAL");
        assert!(h.wire.text.contains("INVALID_APPROVAL_POLICY"), "{}", h.wire.text);
        assert!(h.wire.text.contains("returned the number 500, not true or false"), "{}", h.wire.text);
        assert_eq!(h.in_flight(), 0);
    }

    #[test]
    fn a_policy_that_never_answers_is_bounded_by_the_approval_timeout() {
        let mut h = HostEngine::new(&registry(), r#"{"needsApproval":"ask","approvalTimeoutMs":40}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        let key = new_key(&h.wire);
        let timers: Vec<_> = h.take_timers().collect();
        assert_eq!(timers, [TimerRequest::Arm { kind: TimerKind::Approval, key, attempt: 0, after: Duration::from_millis(40) }]);
        h.approval_expired(key);
        assert_eq!(codes(&h.wire), [op::FINAL, op::DONE]);
        assert!(h.wire.text.contains("APPROVAL_DENIED") && h.wire.text.contains("did not answer within 40 ms"), "{}", h.wire.text);
        // A late answer is stale.
        h.approval_decided(key, false, "");
        assert!(h.wire.is_empty());
    }

    #[test]
    fn progress_that_restarts_the_timeout_is_bounded_by_default() {
        // No maxTotalTimeoutMs: 10 attempt timeouts.
        for (timeout, total) in [(100u64, 1_000u64), (120_000, 1_200_000)] {
            let options = format!(r#"{{"timeoutMs":{timeout},"resetTimeoutOnProgress":true}}"#);
            let mut h = HostEngine::new(&registry(), &options).unwrap();
            h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
            let key = new_key(&h.wire);
            let timers: Vec<_> = h.take_timers().collect();
            assert!(timers.contains(&TimerRequest::Arm { kind: TimerKind::Total, key, attempt: 1, after: Duration::from_millis(total) }), "{timers:?}");
            h.total_timed_out(key);
            assert!(h.wire.text.contains(&format!("exceeded its total time limit of {total} ms (maxTotalTimeoutMs, by default")), "{}", h.wire.text);
        }
        // Given, or without resetTimeoutOnProgress, nothing changes.
        let mut h = HostEngine::new(&registry(), r#"{"timeoutMs":100,"resetTimeoutOnProgress":true,"maxTotalTimeoutMs":300}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        assert!(h.take_timers().any(|t| matches!(t, TimerRequest::Arm { kind: TimerKind::Total, after, .. } if after == Duration::from_millis(300))));
        let mut h = HostEngine::new(&registry(), r#"{"timeoutMs":100}"#).unwrap();
        h.start(0.0, "echo", r#"{"n":1}"#, "", "", false);
        assert!(!h.take_timers().any(|t| matches!(t, TimerRequest::Arm { kind: TimerKind::Total, .. })));
    }

    #[test]
    fn history_drops_are_reported_oldest_first() {
        let mut h = HostEngine::new(&registry(), r#"{"historyLimit":1}"#).unwrap();
        for n in 0..2 {
            h.start(0.0, "echo", &format!(r#"{{"n":{n}}}"#), "", "", false);
            let key = new_key(&h.wire);
            h.settle(key, 1, None);
        }
        assert_eq!(codes(&h.wire), [op::FINAL, op::DONE, op::EVICT_OLDEST]);
    }
}
