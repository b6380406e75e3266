//! The wire between a [`HostEngine`](super::HostEngine) and the JS runtime: what each
//! engine call produced, as a stream of numbers (`ops`) and one string (`text`).
//!
//! Numbers cross the JS/Rust boundary for free when both sides look at the same
//! `Float64Array`, where each JS object or string built from Rust costs a call. So a
//! transition is written as ops of a few numbers each; a string an op carries is
//! appended to `text`, and the op holds its length in UTF-16 code units, so the JS side
//! takes it with `text.slice(at, at += length)`. Objects too rich for numbers (errors
//! with validation issues, audit records) travel as JSON text.
//!
//! Ops come in delivery order. Each starts with its code; the fields follow:
//!
//! | op | fields | strings |
//! |---|---|---|
//! | `NEW` | ticket, key | execution id |
//! | `REFUSED` | ticket | error JSON |
//! | `FINAL` | key, record (7), has error, has extras | error JSON when it has one, then extras JSON when it has them |
//! | `ATTEMPT_ERROR` | key | error JSON |
//! | `METADATA` | key, duration ms | ISO timestamp |
//! | `EVENT` | event type, key, per type (below) | |
//! | `LOG` | level, attempt or NaN, duration or NaN, string mask | message, execution id, tool name, then args, error, stack, result as the mask says |
//! | `AUDIT` | has write error | record JSON, then the error |
//! | `INTERRUPT` | key, attempt, timed out | the reason's message |
//! | `RUN` | key, attempt, max attempts, tool id, deferred, checks output | |
//! | `DECIDE` | key, tool id | (the host's approval policy must answer: `approval_decided`) |
//! | `AWAIT_APPROVAL` | key | the approval id |
//! | `ARGS` | key | the arguments an approver edited, as JSON text (the handler gets these) |
//! | `APPROVAL_REFUSED` | | error JSON (`approve`/`deny` refused: no such approval, invalid edited arguments) |
//! | `QUEUED` | key | |
//! | `RETRY` | key, delay ms | |
//! | `DONE` | key | |
//! | `EVICT` | | the id of a kept record dropped |
//! | `EVICT_OLDEST` | how many | (the oldest kept records were dropped) |
//! | `EVICT_NEWEST` | | (the record just finished is not kept) |
//! | `RELEASED` | tool id | |
//! | `SNAPSHOT` | key, record (7), has extras | extras JSON |
//! | `RECOVERED` | key | execution id, tool name, arguments JSON, optional session id, optional tool-call id, idempotency key (recovery started an execution nobody called) |
//! | `RESULT` | key | the result as JSON (a replayed outcome: the host has no value of its own) |
//! | `ANSWER` | ticket, ok | error JSON when not ok (a decision made through the journal) |
//! | `APPROVALS` | ticket, ok | the pending approvals as a JSON array (read from the journal) |
//! | `TASK` | ticket, ok | an MCP task store operation's answer, JSON |
//!
//! A record is `status, queuedAt, startedAt, completedAt, duration, attemptNumber,
//! maxAttempts`, with NaN for what is not known yet. Event fields: `STARTED` a record;
//! `EXECUTING` the attempt; `RETRYING` next attempt, max attempts, delay ms (its error
//! is the `ATTEMPT_ERROR` before it); `VALIDATING`, `SUCCEEDED`, `FAILED`, `CANCELLED`
//! nothing more (the last three describe the `FINAL` record before them);
//! `APPROVAL_REQUESTED` a record, has extras, then strings: extras, approval id;
//! `APPROVED` edited, then strings: approval id, optional approver; `DENIED` strings:
//! approval id, reason, optional approver; `PROGRESS` progress, total (NaN: none), then
//! an optional message; `PRELIMINARY_RESULT` nothing (the host has the value);
//! `RECOVERED` strings: idempotency key, action.
//! An optional string is a flag (0 or 1) followed, when 1, by the string's length.
//! Extras (`{ approval?, progress?, idempotencyKey?, replayed?, recovered? }` JSON) are a
//! flag followed, when 1, by its length.

use crate::error::ToolError;
use crate::record::{ExecutionRecord, ExecutionStatus};

/// Op codes. The JS runtime (`js/ops.mjs`) keeps the same numbers.
pub mod op {
    pub const NEW: f64 = 1.0;
    pub const REFUSED: f64 = 2.0;
    pub const FINAL: f64 = 3.0;
    pub const ATTEMPT_ERROR: f64 = 4.0;
    pub const METADATA: f64 = 5.0;
    pub const EVENT: f64 = 6.0;
    pub const LOG: f64 = 7.0;
    pub const AUDIT: f64 = 8.0;
    pub const INTERRUPT: f64 = 9.0;
    pub const RUN: f64 = 10.0;
    pub const QUEUED: f64 = 11.0;
    pub const RETRY: f64 = 12.0;
    pub const DONE: f64 = 13.0;
    pub const EVICT: f64 = 14.0;
    pub const RELEASED: f64 = 15.0;
    pub const SNAPSHOT: f64 = 16.0;
    pub const EVICT_OLDEST: f64 = 17.0;
    pub const EVICT_NEWEST: f64 = 18.0;
    pub const DECIDE: f64 = 19.0;
    pub const AWAIT_APPROVAL: f64 = 20.0;
    pub const APPROVAL_REFUSED: f64 = 21.0;
    pub const ARGS: f64 = 22.0;
    pub const RECOVERED: f64 = 23.0;
    pub const RESULT: f64 = 24.0;
    pub const ANSWER: f64 = 25.0;
    pub const APPROVALS: f64 = 26.0;
    pub const TASK: f64 = 27.0;
}

/// Event type numbers of `EVENT` ops, in `EventType` order.
pub mod event {
    pub const STARTED: f64 = 0.0;
    pub const VALIDATING: f64 = 1.0;
    pub const EXECUTING: f64 = 2.0;
    pub const RETRYING: f64 = 3.0;
    pub const SUCCEEDED: f64 = 4.0;
    pub const FAILED: f64 = 5.0;
    pub const CANCELLED: f64 = 6.0;
    pub const APPROVAL_REQUESTED: f64 = 7.0;
    pub const APPROVED: f64 = 8.0;
    pub const DENIED: f64 = 9.0;
    pub const PROGRESS: f64 = 10.0;
    pub const PRELIMINARY_RESULT: f64 = 11.0;
    pub const RECOVERED: f64 = 12.0;
}

/// Status numbers of records.
pub fn status_code(s: ExecutionStatus) -> f64 {
    match s {
        ExecutionStatus::Pending => 0.0,
        ExecutionStatus::Validating => 1.0,
        ExecutionStatus::Executing => 2.0,
        ExecutionStatus::Succeeded => 3.0,
        ExecutionStatus::Failed => 4.0,
        ExecutionStatus::Cancelled => 5.0,
        ExecutionStatus::AwaitingApproval => 6.0,
    }
}

/// One engine call's output.
#[derive(Default)]
pub struct Wire {
    pub ops: Vec<f64>,
    pub text: String,
}

impl Wire {
    pub fn clear(&mut self) {
        self.ops.clear();
        self.text.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn push(&mut self, values: &[f64]) {
        self.ops.extend_from_slice(values);
    }

    /// Appends a string and pushes its length in UTF-16 code units.
    pub fn string(&mut self, s: &str) {
        let units = if s.is_ascii() { s.len() } else { s.encode_utf16().count() };
        self.text.push_str(s);
        self.ops.push(units as f64);
    }

    pub fn record(&mut self, r: &ExecutionRecord) {
        let t = &r.timing;
        self.push(&[
            status_code(r.status),
            t.queued_at,
            t.started_at.unwrap_or(f64::NAN),
            t.completed_at.unwrap_or(f64::NAN),
            t.duration_ms.unwrap_or(f64::NAN),
            f64::from(r.attempt_number),
            f64::from(r.max_attempts),
        ]);
    }

    pub fn error(&mut self, e: &ToolError) {
        self.string(&error_json(e));
    }

    /// An optional string: a flag, then the string when there is one.
    pub fn opt_string(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.ops.push(1.0);
                self.string(s);
            }
            None => self.ops.push(0.0),
        }
    }

    /// What a record has beyond its numbers, when it has any: `{ approval?, progress? }`
    /// as JSON (a flag, then the text).
    pub fn extras(&mut self, r: &ExecutionRecord) {
        if r.approval.is_none() && r.progress.is_none() && r.idempotency_key.is_none() {
            self.ops.push(0.0);
            return;
        }
        let mut o = serde_json::Map::new();
        if let Some(a) = &r.approval {
            o.insert("approval".into(), serde_json::to_value(a).unwrap_or_default());
        }
        if let Some(p) = &r.progress {
            o.insert("progress".into(), serde_json::to_value(p).unwrap_or_default());
        }
        if let Some(k) = &r.idempotency_key {
            o.insert("idempotencyKey".into(), k.as_str().into());
        }
        if r.replayed {
            o.insert("replayed".into(), true.into());
        }
        if r.recovered {
            o.insert("recovered".into(), true.into());
        }
        self.ops.push(1.0);
        self.string(&serde_json::Value::Object(o).to_string());
    }
}

/// `{ category, code, message, retryable, retryAfterMs?, validationErrors?, hostCause? }`:
/// an error as the JS runtime shows it; `hostCause` says its cause is the value the
/// host reported as thrown for the attempt.
pub fn error_json(e: &ToolError) -> String {
    let mut o = serde_json::Map::new();
    o.insert("category".into(), e.category.as_str().into());
    o.insert("code".into(), e.code.as_str().into());
    o.insert("message".into(), e.message.as_str().into());
    o.insert("retryable".into(), e.retryable.into());
    if let Some(ms) = e.retry_after_ms {
        o.insert("retryAfterMs".into(), ms.into());
    }
    if !e.validation_errors.is_empty() {
        o.insert("validationErrors".into(), serde_json::to_value(&e.validation_errors).unwrap_or_default());
    }
    if e.cause.as_ref().is_some_and(|c| c.is::<super::HostCause>()) {
        o.insert("hostCause".into(), true.into());
    }
    serde_json::Value::Object(o).to_string()
}
