//! Journaled executions: the engine's half of exactly-once (see [`crate::journal`]).
//!
//! With a journal, a validated call claims its key before anything else happens, and
//! what it does next is decided from the journal's answer: run (or wait for its
//! approval), replay the stored outcome, wait for the key's holder, or refuse a
//! conflict. A call that ran stores its outcome, and ends (its caller hears of it) only
//! once the journal has it. Approvals are decided through the journal, so exactly one
//! decision wins whichever process makes it, and the waiting execution hears of it by
//! watching its row. Recovery takes over the rows a dead process left, by their effect.
//!
//! Every answer comes back through [`ExecutionEngine::journal_answered`]; this module
//! never does IO.

use std::sync::Arc;

use serde_json::Value;

use super::{ExecutionEngine, Phase, Step, Transition};
use crate::error::{ErrorCategory, ToolError};
use crate::journal::{
    conflict_error, fingerprint, unavailable_error, ApprovalRequest, Claim, ClaimAnswer, DecisionCheck, Effect, JournalAnswer,
    JournalError, JournalRequest, Record, RecordAnswer, Recovery, RowKey, RowState, StoredError, StoredOutcome,
};
use crate::record::{
    now_ms, ApprovalDecision, ApprovalRecord, EventType, ExecutionEvent, ExecutionRecord, ExecutionStatus, ExecutionTiming, Payload,
    RecordedArgs,
};
use crate::registry::Scope;

/// A journaled execution's journal state.
pub(super) struct Journaled {
    row: RowKey,
    fingerprint: String,
    effect: Effect,
    /// The validated arguments as JSON text.
    args: String,
    /// The claim's fencing token, once claimed.
    fence: Option<i64>,
    /// The approval it claims its key with (id, requested at), when it needs one.
    approval: Option<(String, f64)>,
    /// The result as JSON, for the stored outcome (the host reports it on settle).
    result: Option<Value>,
    /// How it ended, kept while the journal stores its outcome.
    pending: Option<(ExecutionStatus, Option<Payload>, Option<ToolError>)>,
}

/// What a tool's calls do to the world: its `effect`, else `read` for `readOnly`,
/// `idempotent` for `idempotent`, else `once`.
pub fn effect_of(meta: &crate::declaration::ToolMetadata) -> Effect {
    meta.effect.unwrap_or(if meta.read_only == Some(true) {
        Effect::Read
    } else if meta.idempotent == Some(true) {
        Effect::Idempotent
    } else {
        Effect::Once
    })
}

fn status_of(outcome: &StoredOutcome) -> ExecutionStatus {
    match outcome.status.as_str() {
        "succeeded" => ExecutionStatus::Succeeded,
        "cancelled" => ExecutionStatus::Cancelled,
        _ => ExecutionStatus::Failed,
    }
}

fn approval_record(v: &Value) -> Option<ApprovalRecord> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    Some(ApprovalRecord {
        approval_id: s("approvalId")?,
        requested_at: v.get("requestedAt").and_then(Value::as_f64).unwrap_or(0.0),
        decision: match v.get("decision").and_then(Value::as_str) {
            Some("approved") => Some(ApprovalDecision::Approved),
            Some("denied") => Some(ApprovalDecision::Denied),
            _ => None,
        },
        decided_at: v.get("decidedAt").and_then(Value::as_f64),
        by: s("by"),
        reason: s("reason"),
        edited: v.get("edited").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// The longest key the journal stores, in bytes of UTF-8 (Postgres indexes at most about
/// 2.7 KB of a row's scope and key together).
pub const MAX_KEY_BYTES: usize = 1024;

/// A journaled call's key as every store can keep it: Postgres refuses a NUL character,
/// and a key over ~2.7 KB, every time (the call failed `JOURNAL_UNAVAILABLE`, "safe to
/// call again", for ever), where SQLite took both. Refused up front, for every store.
pub(super) fn check_key(options: &super::CallOptions) -> Result<(), crate::error::RegistryError> {
    let (name, key) = match (&options.idempotency_key, &options.tool_call_id) {
        (Some(k), _) => ("idempotencyKey", k),
        (None, Some(id)) => ("toolCallId", id),
        (None, None) => return Ok(()),
    };
    let bad = |why: String| {
        Err(crate::error::RegistryError::new(
            crate::error::RegistryErrorCode::InvalidConfig,
            format!("{name} {why}: with a journal it is the call's key, at most {MAX_KEY_BYTES} bytes of UTF-8 with no NUL character"),
        ))
    };
    if key.len() > MAX_KEY_BYTES {
        return bad(format!("is {} bytes long", key.len()));
    }
    if key.contains('\0') {
        return bad("contains a NUL character (\\u0000)".into());
    }
    Ok(())
}

impl ExecutionEngine {
    /// Gives a validated execution its journal state: its key (the call's own, else its
    /// tool-call id, else its execution id, scoped by session), fingerprint and effect.
    pub(super) fn journaled(&mut self, key: u64, idempotency_key: Option<&str>) {
        let a = self.active.get_mut(&key).expect("journaled executions are active");
        let args = a.record.args.to_value();
        let idempotency = idempotency_key.map(str::to_string).or_else(|| a.record.tool_call_id.clone()).unwrap_or_else(|| a.record.id.clone());
        let text = match &a.record.args {
            RecordedArgs::Text(t) if !t.trim().is_empty() => t.to_string(),
            _ => serde_json::to_string(&*args).unwrap_or_else(|_| "{}".into()),
        };
        a.record.idempotency_key = Some(idempotency.clone());
        a.journal = Some(Box::new(Journaled {
            row: RowKey { scope: a.record.session_id.clone().unwrap_or_default(), key: idempotency },
            fingerprint: fingerprint(&a.record.tool_name, &args),
            effect: effect_of(&a.tool.declaration.metadata),
            args: text,
            fence: None,
            approval: None,
            result: None,
            pending: None,
        }));
    }

    /// The fence a recovered execution's row was taken over with.
    pub(super) fn adopt_fence(&mut self, key: u64, fence: i64) {
        if let Some(j) = self.active.get_mut(&key).and_then(|a| a.journal.as_mut()) {
            j.fence = Some(fence);
        }
    }

    fn claim_of(&self, key: u64) -> Claim {
        let a = &self.active[&key];
        let j = a.journal.as_ref().expect("journaled");
        Claim {
            exec: key,
            row: j.row.clone(),
            fingerprint: j.fingerprint.clone(),
            tool: a.record.tool_name.clone(),
            effect: j.effect,
            args: j.args.clone(),
            execution_id: a.record.id.clone(),
            tool_call_id: a.record.tool_call_id.clone(),
            approval: j.approval.as_ref().map(|(id, at)| ApprovalRequest {
                approval_id: id.clone(),
                requested_at: *at,
                expires_at: a.approval_timeout.map(|d| at + d.as_secs_f64() * 1000.0),
            }),
        }
    }

    /// Its manager is closing: a journaled call started from now on fails
    /// `JOURNAL_UNAVAILABLE` without running, so that the calls in flight, which the
    /// close waits for, come to an end while new ones keep coming.
    pub fn refuse_new_journaled(&mut self) {
        self.closing_from.get_or_insert(self.next_key);
    }

    /// A journaled execution claims its key (with the approval it will wait for, if any).
    pub(super) fn claim(&mut self, key: u64, needs_approval: bool) -> Transition {
        if self.closing_from.is_some_and(|from| key >= from) {
            let a = self.active.get_mut(&key).expect("claimed executions are active");
            a.journal = None;
            let e = unavailable_error(&a.record.tool_name, "close() was called on its manager", true);
            return self.finish_now(key, ExecutionStatus::Failed, None, Some(e));
        }
        let a = self.active.get_mut(&key).expect("claimed executions are active");
        a.phase = Phase::Claiming;
        if needs_approval {
            a.journal.as_mut().expect("journaled").approval = Some((crate::ids::new_v4_string(), now_ms()));
        }
        Transition::new(key, Step::Journal(JournalRequest::Claim(self.claim_of(key))))
    }

    /// The journal answered: the transitions that follow, in order. Answers about a
    /// ticket (a decision, a listing) are the host's; this returns none for them.
    pub fn journal_answered(&mut self, answer: JournalAnswer) -> Vec<Transition> {
        match answer {
            JournalAnswer::Claimed { claim, answer } => vec![self.claimed(*claim, answer)],
            JournalAnswer::Recorded { exec, row, answer } => vec![self.recorded(exec, &row, answer)],
            JournalAnswer::Started { exec, ok } => vec![self.started(exec, ok)],
            JournalAnswer::ApprovalChanged { exec, row } => vec![self.approval_changed(exec, row.map(|r| *r))],
            JournalAnswer::Failed { exec: Some(exec), claim, error, .. } => vec![self.journal_failed(exec, claim.map(|c| *c), &error)],
            JournalAnswer::Due(rows) => {
                let mut t = Transition::new(0, Step::Stale);
                t.journal = self.recover(rows);
                vec![t]
            }
            JournalAnswer::TakenOver { row, fence: Some(fence), then, execution_id } => self.taken_over(*row, fence, then, execution_id).into_iter().collect(),
            JournalAnswer::TakenOver { .. }
            | JournalAnswer::Decided { .. }
            | JournalAnswer::Approvals { .. }
            | JournalAnswer::Task { .. }
            | JournalAnswer::Failed { .. } => {
                Vec::new()
            }
        }
    }

    fn waiting_for_journal(&self, key: u64, phases: &[Phase]) -> bool {
        self.active.get(&key).is_some_and(|a| a.journal.is_some() && phases.contains(&a.phase))
    }

    fn claimed(&mut self, claim: Claim, answer: ClaimAnswer) -> Transition {
        let key = claim.exec;
        if !self.waiting_for_journal(key, &[Phase::Claiming, Phase::WaitingForKey]) {
            // Cancelled while claiming: a key it got is let go again.
            let mut t = Transition::new(key, Step::Stale);
            if let ClaimAnswer::Claimed { fence, .. } = answer {
                t.journal.push(JournalRequest::Release { row: claim.row, fence });
            }
            return t;
        }
        match answer {
            ClaimAnswer::Claimed { fence, taken_over } => {
                let a = self.active.get_mut(&key).expect("checked above");
                let j = a.journal.as_mut().expect("journaled");
                j.fence = Some(fence);
                let Some(prior) = taken_over else {
                    return match j.approval.clone() {
                        Some((id, at)) => self.await_journaled_approval(key, id, at),
                        None => self.admit_new(key),
                    };
                };
                let events = self.recovered_event(key, "rerun");
                match prior.state.as_str() {
                    // Approved but never started where it was: run it as approved.
                    "approved" => {
                        self.adopt_approval(key, &prior);
                        self.start_approved(key).after(events)
                    }
                    // Waiting for a person: wait for that same approval.
                    "awaiting" => {
                        let a = self.active.get_mut(&key).expect("checked above");
                        let requested = prior.approval.as_ref().and_then(|v| v.get("requestedAt")).and_then(Value::as_f64).unwrap_or_else(now_ms);
                        let id = prior.approval_id.clone().unwrap_or_default();
                        a.journal.as_mut().expect("journaled").approval = Some((id.clone(), requested));
                        self.await_journaled_approval(key, id, requested)
                    }
                    // Running where its owner died: a read or idempotent call runs again.
                    _ => {
                        self.adopt_approval(key, &prior);
                        self.admit_new(key).after(events)
                    }
                }
            }
            ClaimAnswer::Finished(outcome) => self.finish_stored(key, &outcome, true),
            // Recovery's work, done by this claim: reported as recovery reports it.
            ClaimAnswer::Ended { outcome, action } => {
                let events = self.recovered_event(key, action);
                self.finish_stored(key, &outcome, true).after(events)
            }
            ClaimAnswer::InFlight => {
                self.active.get_mut(&key).expect("checked above").phase = Phase::WaitingForKey;
                Transition::new(key, Step::Journal(JournalRequest::Watch(claim)))
            }
            ClaimAnswer::Conflict { tool } => {
                let a = &self.active[&key];
                let e = conflict_error(&a.record.tool_name, &claim.row.key, &tool);
                self.finish_now(key, ExecutionStatus::Failed, None, Some(e))
            }
        }
    }

    /// The arguments and approval a row taken over holds (an approver may have edited them).
    fn adopt_approval(&mut self, key: u64, prior: &RowState) {
        let a = self.active.get_mut(&key).expect("adopting executions are active");
        if let Some(record) = prior.approval.as_ref().and_then(approval_record) {
            if record.decision == Some(ApprovalDecision::Approved) {
                a.record.approval = Some(record);
            }
        }
        let j = a.journal.as_mut().expect("journaled");
        if prior.args != j.args {
            if let Ok(v) = crate::json_text::parse(&prior.args) {
                a.record.args = RecordedArgs::Json(Arc::new(v));
                a.input_hash = None;
                a.given_args_chars = None;
                j.args = prior.args.clone();
            }
        }
    }

    fn await_journaled_approval(&mut self, key: u64, approval_id: String, requested_at: f64) -> Transition {
        let mut t = self.request_approval_as(key, approval_id, requested_at);
        let a = &self.active[&key];
        let j = a.journal.as_ref().expect("journaled");
        t.journal.push(JournalRequest::WatchApproval { exec: key, row: j.row.clone(), fence: j.fence.expect("claimed") });
        t
    }

    /// An approved call marks its row running before it runs (a crash after that makes
    /// it a call that may have run).
    pub(super) fn start_approved(&mut self, key: u64) -> Transition {
        let a = self.active.get_mut(&key).expect("approved executions are active");
        a.phase = Phase::Starting;
        a.record.status = ExecutionStatus::Pending;
        let j = a.journal.as_ref().expect("journaled");
        Transition::new(key, Step::Journal(JournalRequest::Start { exec: key, row: j.row.clone(), fence: j.fence.expect("claimed") }))
    }

    fn started(&mut self, key: u64, ok: bool) -> Transition {
        if !self.waiting_for_journal(key, &[Phase::Starting]) {
            return Transition::new(key, Step::Stale);
        }
        if ok {
            return self.admit_new(key);
        }
        // Its claim was taken (its lease expired): wait for whoever holds the key now.
        self.wait_for_key(key)
    }

    fn wait_for_key(&mut self, key: u64) -> Transition {
        let a = self.active.get_mut(&key).expect("waiting executions are active");
        a.phase = Phase::WaitingForKey;
        let j = a.journal.as_mut().expect("journaled");
        j.fence = None;
        j.approval = None;
        Transition::new(key, Step::Journal(JournalRequest::Watch(self.claim_of(key))))
    }

    /// The approval a journaled execution waits for changed (decided here or elsewhere).
    fn approval_changed(&mut self, key: u64, row: Option<RowState>) -> Transition {
        if !self.waiting_for_journal(key, &[Phase::AwaitingApproval]) {
            return Transition::new(key, Step::Stale);
        }
        let fence = self.active[&key].journal.as_ref().and_then(|j| j.fence);
        let Some(row) = row else {
            let tool = self.active[&key].record.tool_name.clone();
            let e = unavailable_error(&tool, "its journal row is gone", false);
            return self.finish_now(key, ExecutionStatus::Failed, None, Some(e));
        };
        if Some(row.fence) != fence {
            return self.wait_for_key(key);
        }
        match row.state.as_str() {
            "approved" => {
                let edited_before = self.active[&key].journal.as_ref().map(|j| j.args.clone());
                self.adopt_approval(key, &row);
                let a = self.active.get_mut(&key).expect("checked above");
                let record = a.record.approval.clone();
                let mut events = Vec::new();
                if let (true, Some(r)) = (self.wanted.wants(EventType::Approved), &record) {
                    events.push(ExecutionEvent::Approved {
                        execution_id: a.record.id.clone(),
                        tool_name: a.record.tool_name.clone(),
                        approval_id: r.approval_id.clone(),
                        by: r.by.clone(),
                        edited: r.edited,
                    });
                }
                let edited = (edited_before.as_deref() != Some(row.args.as_str())).then(|| row.args.clone());
                let mut t = self.start_approved(key).after(events);
                t.edited_args = edited;
                t
            }
            "done" => {
                let Some(outcome) = row.outcome else { return Transition::new(key, Step::Stale) };
                let a = self.active.get_mut(&key).expect("checked above");
                let record = outcome.approval.as_ref().and_then(approval_record);
                let mut events = Vec::new();
                if let (true, Some(r)) = (self.wanted.wants(EventType::Denied), &record) {
                    events.push(ExecutionEvent::Denied {
                        execution_id: a.record.id.clone(),
                        tool_name: a.record.tool_name.clone(),
                        approval_id: r.approval_id.clone(),
                        by: r.by.clone(),
                        reason: r.reason.clone().unwrap_or_default(),
                    });
                }
                self.finish_stored(key, &outcome, false).after(events)
            }
            _ => Transition::new(key, Step::Stale),
        }
    }

    /// Ends an execution with an outcome the journal already holds: a replay (a call with
    /// the same key finished before), or a denial decided through the journal.
    fn finish_stored(&mut self, key: u64, outcome: &StoredOutcome, replayed: bool) -> Transition {
        let a = self.active.get_mut(&key).expect("finished executions are active");
        a.record.replayed = replayed;
        if let Some(record) = outcome.approval.as_ref().and_then(approval_record) {
            a.record.approval = Some(record);
        }
        // Nothing to store: it is the journal's already.
        a.journal = None;
        let result = outcome.result.clone().map(|v| Arc::new(v) as Payload);
        let status = status_of(outcome);
        let error = outcome.error.as_ref().map(StoredError::to_tool_error);
        let result = if status == ExecutionStatus::Succeeded { Some(result.unwrap_or_else(|| Arc::new(Value::Null) as Payload)) } else { None };
        self.finish_now(key, status, result, error)
    }

    /// The result of a journaled execution as JSON, for its stored outcome (hosts that
    /// keep their own values report it as they settle the attempt).
    pub fn set_result_json(&mut self, key: u64, result: Value) {
        if let Some(j) = self.active.get_mut(&key).and_then(|a| a.journal.as_mut()) {
            j.result = Some(result);
        }
    }

    /// Whether an execution is journaled (its host reports its result as JSON).
    pub fn is_journaled(&self, key: u64) -> bool {
        self.active.get(&key).is_some_and(|a| a.journal.is_some())
    }

    /// Ends a journaled execution: one that never ran lets its key go; one that ran
    /// stores its outcome first ([`Phase::Recording`]).
    pub(super) fn finish_journaled(&mut self, key: u64, status: ExecutionStatus, result: Option<Payload>, error: Option<ToolError>) -> Transition {
        let a = self.active.get_mut(&key).expect("finished executions are active");
        let phase = a.phase;
        let j = a.journal.as_mut().expect("journaled");
        let (row, fence) = (j.row.clone(), j.fence);
        let ran = a.record.attempt_number > 0;
        let mut journal = Vec::new();
        match (phase, fence) {
            (Phase::WaitingForKey, _) => journal.push(JournalRequest::Unwatch { exec: key }),
            (Phase::AwaitingApproval, Some(fence)) => {
                journal.push(JournalRequest::Unwatch { exec: key });
                journal.push(JournalRequest::Release { row, fence });
            }
            // Cancelled before it ran, or a read or idempotent call cancelled while it
            // ran: nothing to keep, the key may be used again.
            (_, Some(fence)) if !ran || (status == ExecutionStatus::Cancelled && j.effect.may_run_again()) => {
                journal.push(JournalRequest::Release { row, fence });
            }
            (_, Some(fence)) => {
                let outcome = self.outcome_of(key, status, result.as_ref(), error.as_ref());
                let a = self.active.get_mut(&key).expect("checked above");
                a.phase = Phase::Recording;
                a.journal.as_mut().expect("journaled").pending = Some((status, result, error));
                return Transition::new(key, Step::Journal(JournalRequest::Record(Record { exec: key, row, fence, outcome })));
            }
            // Not claimed yet (deciding, claiming): a claim answered later is let go.
            (_, None) => {}
        }
        let mut t = self.finish_now(key, status, result, error);
        t.journal.append(&mut journal);
        t
    }

    fn outcome_of(&self, key: u64, status: ExecutionStatus, result: Option<&Payload>, error: Option<&ToolError>) -> StoredOutcome {
        let a = &self.active[&key];
        let j = a.journal.as_ref().expect("journaled");
        let now = now_ms();
        let result = (status == ExecutionStatus::Succeeded)
            .then(|| j.result.clone().or_else(|| result.and_then(crate::record::payload_json).cloned()).unwrap_or(Value::Null));
        StoredOutcome {
            status: status.as_str().to_string(),
            result,
            error: error.map(StoredError::from),
            execution_id: a.record.id.clone(),
            attempts: a.record.attempt_number,
            started_at: a.record.timing.started_at,
            completed_at: now,
            duration_ms: a.record.timing.started_at.map(|s| now - s),
            approval: a.record.approval.as_ref().and_then(|r| serde_json::to_value(r).ok()),
        }
    }

    fn recorded(&mut self, key: u64, row: &RowKey, answer: RecordAnswer) -> Transition {
        if !self.waiting_for_journal(key, &[Phase::Recording]) {
            return Transition::new(key, Step::Stale);
        }
        let a = self.active.get_mut(&key).expect("checked above");
        if a.journal.as_ref().is_some_and(|j| &j.row != row) {
            return Transition::new(key, Step::Stale);
        }
        match answer {
            RecordAnswer::Recorded => {
                let (status, result, error) = a.journal.as_mut().and_then(|j| j.pending.take()).expect("recording executions keep how they ended");
                a.journal = None;
                self.finish_now(key, status, result, error)
            }
            // Its claim was lost while it ran (its lease expired): every caller gets the
            // outcome the journal has, or waits for the one who holds the key now.
            RecordAnswer::Fenced(Some(outcome)) => self.finish_stored(key, &outcome, true),
            RecordAnswer::Fenced(None) => self.wait_for_key(key),
        }
    }

    /// A claim (or an approved call's start) the journal could not make: the call fails
    /// without running. An outcome it can never write (a corrupt file): the call that ran
    /// fails, saying so.
    fn journal_failed(&mut self, key: u64, claim: Option<Claim>, error: &JournalError) -> Transition {
        if self.waiting_for_journal(key, &[Phase::Recording]) {
            // The outcome of a call that ran cannot be written, ever (a corrupt file):
            // it ends failed, saying that it ran.
            let a = self.active.get_mut(&key).expect("checked above");
            let tool = a.record.tool_name.clone();
            let ended = a.journal.take().and_then(|j| j.pending).map_or("", |(status, _, _)| status.as_str());
            let mut e = ToolError::new(
                ErrorCategory::Permanent,
                "JOURNAL_UNAVAILABLE",
                format!(
                    "tool '{tool}' ran (it {ended}), but its outcome could not be recorded: {}. Its effect happened: do not call it again as if it had not; repair or replace the journal",
                    error.message
                ),
            );
            e.retryable = false;
            return self.finish_now(key, ExecutionStatus::Failed, None, Some(e));
        }
        if !self.waiting_for_journal(key, &[Phase::Claiming, Phase::WaitingForKey, Phase::Starting]) {
            return Transition::new(key, Step::Stale);
        }
        let _ = claim;
        let tool = self.active[&key].record.tool_name.clone();
        self.active.get_mut(&key).expect("checked above").journal = None;
        self.finish_now(key, ExecutionStatus::Failed, None, Some(unavailable_error(&tool, &error.message, error.lasting)))
    }

    /// `approvalTimeoutMs` passed for a journaled call: denied through the journal (an
    /// approval made elsewhere meanwhile wins, and the watch runs the call).
    pub(super) fn expire_journaled(&mut self, key: u64) -> Transition {
        let a = &self.active[&key];
        let ms = a.approval_timeout.map_or(0, |d| d.as_millis());
        let Some(id) = a.record.approval.as_ref().map(|r| r.approval_id.clone()) else { return Transition::new(key, Step::Stale) };
        let mut t = Transition::new(key, Step::Stale);
        // A DecisionCheck returns the public ToolError unboxed (see `journal::DecisionCheck`).
        #[allow(clippy::result_large_err)]
        t.journal.push(JournalRequest::Decide {
            ticket: 0,
            decision: crate::journal::Decision {
                approval_id: id,
                verdict: crate::journal::Verdict::Deny { reason: format!("nobody approved it within {ms} ms") },
                by: None,
                now_ms: now_ms(),
            },
            check: Arc::new(|_| Ok(())),
        });
        t
    }

    /// A decision on an approval, to make through the journal (any process may hold the
    /// call). Edited arguments are checked against the tool's schema as the row names it.
    ///
    /// # Errors
    /// `INVALID_ARGUMENTS` for edited arguments that are too deep (the schema is checked
    /// in the journal's transaction, where the row is).
    pub fn approval_decision(&self, ticket: u64, approval_id: &str, verdict: crate::journal::Verdict, edited: Option<Value>, by: Option<String>) -> JournalRequest {
        let registry = self.registry.clone();
        let (validation, redact) = (self.config.validation, self.config.redact.clone());
        // A DecisionCheck returns the public ToolError unboxed (see `journal::DecisionCheck`).
        #[allow(clippy::result_large_err)]
        let check: DecisionCheck = Arc::new(move |row| {
            let Some(args) = &edited else { return Ok(()) };
            crate::arguments::check_depth(&row.tool, args).map_err(ToolError::from)?;
            if !validation {
                return Ok(());
            }
            let scope = if row.row.scope.is_empty() { Scope::Global } else { Scope::Session(&row.row.scope) };
            let tool = registry.resolve(scope, &row.tool).map_err(|_| {
                ToolError::new(
                    ErrorCategory::Validation,
                    "INVALID_ARGUMENTS",
                    format!("the edited arguments for tool '{}' cannot be checked: the tool is not registered in this process", row.tool),
                )
            })?;
            let issues = tool.schema.validate_redacting(args, &redact);
            if issues.is_empty() {
                Ok(())
            } else {
                Err(ToolError::invalid_arguments(&row.tool, issues))
            }
        });
        JournalRequest::Decide { ticket, decision: crate::journal::Decision { approval_id: approval_id.to_string(), verdict, by, now_ms: now_ms() }, check }
    }

    fn recovered_event(&self, key: u64, action: &'static str) -> Vec<ExecutionEvent> {
        let a = &self.active[&key];
        if !self.wanted.wants(EventType::Recovered) {
            return Vec::new();
        }
        vec![ExecutionEvent::Recovered {
            execution_id: a.record.id.clone(),
            tool_name: a.record.tool_name.clone(),
            idempotency_key: a.record.idempotency_key.clone().unwrap_or_default(),
            action,
        }]
    }

    /// Rows a dead process left (their lease expired): what to do with each, decided by
    /// its state and effect. Rows whose tool this process does not have are left for one
    /// that does.
    fn recover(&mut self, rows: Vec<RowState>) -> Vec<JournalRequest> {
        let mut out = Vec::new();
        for row in rows {
            let ours = self.active.values().any(|a| a.journal.as_ref().is_some_and(|j| j.row == row.row && j.fence == Some(row.fence)));
            if ours {
                continue;
            }
            let has_tool = || {
                let scope = if row.row.scope.is_empty() { Scope::Global } else { Scope::Session(&row.row.scope) };
                self.registry.resolve(scope, &row.tool).is_ok()
            };
            let then = match row.state.as_str() {
                "running" if !row.effect.may_run_again() => Recovery::Interrupt,
                "running" | "approved" if has_tool() => Recovery::Run,
                "awaiting" if row.expires_at().is_some_and(|at| at <= now_ms()) => Recovery::Expire,
                _ => continue,
            };
            let state = if row.state == "awaiting" { "awaiting".into() } else { row.state.clone() };
            // The execution that will end it here, named in the row it takes over.
            out.push(JournalRequest::TakeOver { row: Box::new(row), state, then, execution_id: crate::ids::new_v4_string() });
        }
        out
    }

    /// A row recovery took over: a new execution here, with no caller, that runs it
    /// again or ends it, and stores its outcome.
    fn taken_over(&mut self, row: RowState, fence: i64, then: Recovery, execution_id: String) -> Option<Transition> {
        let scope = if row.row.scope.is_empty() { None } else { Some(row.row.scope.clone()) };
        let args = crate::json_text::parse(&row.args).unwrap_or(Value::Null);
        let options = super::CallOptions {
            tool_call_id: row.tool_call_id.clone(),
            session_id: scope,
            idempotency_key: Some(row.row.key.clone()),
            ..Default::default()
        };
        let (record, tool) = self.recovered_record(&row, args, &options, execution_id);
        let key = self.next_key;
        self.next_key += 1;
        let action = match then {
            Recovery::Run => "rerun",
            Recovery::Interrupt => "interrupted",
            Recovery::Expire => "expired",
        };
        let events = |engine: &Self, record: &ExecutionRecord| {
            let mut events = Vec::new();
            if engine.wanted.wants(EventType::Started) {
                events.push(ExecutionEvent::Started { execution: Arc::new(record.clone()) });
            }
            if engine.wanted.wants(EventType::Recovered) {
                events.push(ExecutionEvent::Recovered {
                    execution_id: record.id.clone(),
                    tool_name: record.tool_name.clone(),
                    idempotency_key: row.row.key.clone(),
                    action,
                });
            }
            events
        };
        let write = |outcome: StoredOutcome| JournalRequest::Record(Record { exec: key, row: row.row.clone(), fence, outcome });
        let mut t = match (then, tool) {
            (Recovery::Run, Some(tool)) => {
                let events = events(self, &record);
                let t = self.start_adopted(key, record, tool, &row, fence, options);
                t.after(events)
            }
            (Recovery::Interrupt, _) | (Recovery::Run, None) => {
                let events = events(self, &record);
                let error = ToolError::interrupted(&row.tool);
                let mut t = self.finish_unstarted(key, record, error, events);
                if let Step::Finished(r) = &t.step {
                    let mut outcome = crate::journal::interrupted_outcome(&row.tool, &r.id, now_ms());
                    outcome.execution_id = r.id.clone();
                    t.journal.push(write(outcome));
                }
                t
            }
            (Recovery::Expire, _) => {
                let events = events(self, &record);
                let reason = "nobody approved it in time";
                let error = ToolError::denied(&row.tool, reason);
                let mut t = self.finish_unstarted(key, record, error, events);
                if let Step::Finished(r) = &t.step {
                    let approval = crate::journal::rows::decided_approval(row.approval.as_ref(), &crate::journal::Decision {
                        approval_id: row.approval_id.clone().unwrap_or_default(),
                        verdict: crate::journal::Verdict::Deny { reason: reason.into() },
                        by: None,
                        now_ms: now_ms(),
                    }, &row.args);
                    t.journal.push(write(crate::journal::denied_outcome(&row.tool, &r.id, reason, approval, now_ms())));
                }
                t
            }
        };
        t.recovered = true;
        Some(t)
    }

    fn recovered_record(&self, row: &RowState, args: Value, options: &super::CallOptions, id: String) -> (ExecutionRecord, Option<Arc<crate::registry::RegisteredTool>>) {
        let scope = options.session_id.as_deref().map_or(Scope::Global, Scope::Session);
        let tool = self.registry.resolve(scope, &row.tool).ok();
        let record = ExecutionRecord {
            id,
            tool_call_id: row.tool_call_id.clone(),
            session_id: options.session_id.clone(),
            tool_name: row.tool.clone(),
            args: RecordedArgs::Json(Arc::new(args)),
            status: ExecutionStatus::Pending,
            result: None,
            error: None,
            timing: ExecutionTiming { queued_at: now_ms(), ..Default::default() },
            attempt_number: 0,
            max_attempts: self.config.retry.max_attempts,
            previous_errors: Vec::new(),
            approval: row.approval.as_ref().and_then(approval_record).filter(|r| r.decision == Some(ApprovalDecision::Approved)),
            progress: None,
            idempotency_key: Some(row.row.key.clone()),
            replayed: false,
            recovered: true,
        };
        (record, tool)
    }
}

#[cfg(test)]
mod tests;
