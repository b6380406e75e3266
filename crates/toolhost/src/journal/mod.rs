//! The durable journal: what makes a tool call exactly-once across crashes, restarts and
//! processes.
//!
//! Every journaled execution has a key (the call's idempotency key, else its tool-call
//! id, else its execution id), scoped by session, and a fingerprint (the hash of the tool
//! name and the validated input). The journal stores one row per key: who holds it (an
//! owner with a lease it renews and a fencing token), its state, the approval it waits
//! for, and its outcome once finished.
//!
//! Like LangGraph's checkpoint savers, there is one interface ([`JournalStore`]) with a
//! module per backend ([`sqlite`], [`postgres`]); the state machine never knows which.
//! The engine stays sans-IO: it asks for journal work as [`JournalRequest`]s and takes
//! the store's answers back as [`JournalAnswer`]s, as it takes "timer due" today
//! ([`crate::ExecutionEngine::journal_answered`]). A driver runs the requests off its main
//! thread ([`worker::JournalWorker`], behind the `journal` cargo feature).
//!
//! | row state | meaning |
//! |---|---|
//! | `running` | claimed by `owner`; its handler may have started |
//! | `awaiting` | claimed, waiting for a person's approval; never ran |
//! | `approved` | approved, not started yet; never ran |
//! | `done` | finished: `outcome` holds what every caller of the key gets |
//!
//! A row whose lease expired was left by a process that died (or stopped renewing):
//! recovery decides from the tool's [`Effect`] what becomes of it.

#[cfg(feature = "journal")]
pub mod inbox;
pub mod migrations;
pub mod rows;
#[cfg(feature = "journal")]
pub mod sqlite;
#[cfg(feature = "journal")]
pub mod postgres;
#[cfg(feature = "journal")]
pub mod worker;
#[cfg(feature = "journal")]
mod store_url;

#[cfg(feature = "journal")]
pub use store_url::{open, open_with, Store};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorCategory, RegistryError, RegistryErrorCode, ToolError};
use crate::schema::ValidationIssue;

/// What a tool's call does to the world, which decides what recovery may do with a call
/// whose process died while it ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Reads only: run again freely (MCP `readOnlyHint`).
    Read,
    /// Running it twice has the effect of running it once (MCP `idempotentHint`): run again.
    Idempotent,
    /// Must not run twice (a payment, an email): never run again by recovery; it ends
    /// `interrupted`, its outcome unknown.
    #[default]
    Once,
}

impl Effect {
    pub const NAMES: &'static [&'static str] = &["read", "idempotent", "once"];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Idempotent => "idempotent",
            Self::Once => "once",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" => Some(Self::Read),
            "idempotent" => Some(Self::Idempotent),
            "once" => Some(Self::Once),
            _ => None,
        }
    }

    /// Whether recovery may run a call again.
    pub fn may_run_again(self) -> bool {
        self != Self::Once
    }
}

/// How long things last, chosen by the manager.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JournalPolicy {
    /// How long a claim holds without being renewed; the owner renews it every third of it.
    pub lease_ms: u64,
    /// How long a finished outcome is kept for replays.
    pub retention_ms: u64,
    /// How often a caller waiting on a key held elsewhere, or an approval decided
    /// elsewhere, looks again (Postgres also wakes on `NOTIFY`).
    pub poll_ms: u64,
    /// How long one journal operation may wait: for a Postgres server to answer (30 s
    /// when None, `postgres::DEADLINE`), or for another process's lock on a SQLite file
    /// (5 s when None, `sqlite::BUSY_TIMEOUT`).
    pub operation_timeout_ms: Option<u64>,
}

impl Default for JournalPolicy {
    fn default() -> Self {
        Self { lease_ms: 10_000, retention_ms: 24 * 3_600_000, poll_ms: 50, operation_timeout_ms: None }
    }
}

/// The fingerprint of a call: SHA-256 of the tool name and the canonical JSON of its
/// validated input. The same key with another fingerprint is a conflict.
pub fn fingerprint(tool: &str, args: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0u8]);
    h.update(crate::canonical::canonical_json(args).as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Identifies a row: the session scope (`""` for global tools) and the key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowKey {
    pub scope: String,
    pub key: String,
}

/// An approval a claim starts waiting for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub approval_id: String,
    /// Milliseconds since the Unix epoch.
    pub requested_at: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<f64>,
}

/// A claim of a key for one execution.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The engine's key of the execution.
    pub exec: u64,
    pub row: RowKey,
    pub fingerprint: String,
    pub tool: String,
    pub effect: Effect,
    /// The validated arguments as JSON text (recovery and approvers read them).
    pub args: String,
    pub execution_id: String,
    pub tool_call_id: Option<String>,
    /// The call waits for approval once claimed.
    pub approval: Option<ApprovalRequest>,
}

/// What a claim found.
#[derive(Clone, Debug)]
pub enum ClaimAnswer {
    /// The key is this execution's: run it (or wait for its approval). `fence` guards
    /// every later write. `taken_over`: the row a dead process held before (its lease
    /// expired), as it was: `running` (only a `read` or `idempotent` call is taken over
    /// to run again), `approved` (never ran: run it as approved, with its arguments) or
    /// `awaiting` (wait for that same approval).
    Claimed { fence: i64, taken_over: Option<Box<RowState>> },
    /// The key finished before: every caller gets this outcome.
    Finished(Box<StoredOutcome>),
    /// This claim ended a dead process's row (its lease expired) as recovery would have:
    /// a `once` call that was running `interrupted`, an approval past its
    /// `approvalTimeoutMs` `expired`. Every caller gets this outcome; this one reports
    /// the recovery.
    Ended { outcome: Box<StoredOutcome>, action: &'static str },
    /// Running or waiting for approval under another live claim: wait for it.
    InFlight,
    /// The key was used for another call (another tool or other arguments).
    Conflict { tool: String },
}

/// An execution's outcome as the journal keeps it, and as a replay returns it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredOutcome {
    /// `succeeded`, `failed` or `cancelled`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<StoredError>,
    /// The execution that produced it.
    pub execution_id: String,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<f64>,
    pub completed_at: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The approval record (`ApprovalRecord` as JSON), when the call was asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Value>,
}

/// A [`ToolError`] as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredError {
    pub category: String,
    pub code: String,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation_errors: Vec<ValidationIssue>,
}

impl From<&ToolError> for StoredError {
    fn from(e: &ToolError) -> Self {
        Self {
            category: e.category.as_str().to_string(),
            code: e.code.clone(),
            message: e.message.clone(),
            retryable: e.retryable,
            retry_after_ms: e.retry_after_ms,
            validation_errors: e.validation_errors.clone(),
        }
    }
}

impl StoredError {
    pub fn to_tool_error(&self) -> ToolError {
        let category = ErrorCategory::parse(&self.category).unwrap_or(ErrorCategory::Unknown);
        let mut e = ToolError::new(category, self.code.clone(), self.message.clone());
        e.retryable = self.retryable;
        e.retry_after_ms = self.retry_after_ms;
        e.validation_errors = self.validation_errors.clone();
        e
    }
}

/// The outcome of a `once` call whose process died while it ran: `interrupted`, never run
/// again, its effect unknown.
pub fn interrupted_outcome(tool: &str, execution_id: &str, now_ms: f64) -> StoredOutcome {
    let e = ToolError::interrupted(tool);
    StoredOutcome {
        status: "failed".into(),
        result: None,
        error: Some(StoredError::from(&e)),
        execution_id: execution_id.to_string(),
        attempts: 0,
        started_at: None,
        completed_at: now_ms,
        duration_ms: None,
        approval: None,
    }
}

/// The outcome of a call denied through the journal (by a person, or its approval expired).
pub fn denied_outcome(tool: &str, execution_id: &str, reason: &str, approval: Value, now_ms: f64) -> StoredOutcome {
    let e = ToolError::denied(tool, reason);
    StoredOutcome {
        status: "failed".into(),
        result: None,
        error: Some(StoredError::from(&e)),
        execution_id: execution_id.to_string(),
        attempts: 0,
        started_at: None,
        completed_at: now_ms,
        duration_ms: Some(0.0),
        approval: Some(approval),
    }
}

/// A fenced write of a finished execution's outcome.
#[derive(Clone, Debug)]
pub struct Record {
    pub exec: u64,
    pub row: RowKey,
    pub fence: i64,
    pub outcome: StoredOutcome,
}

/// What a record found.
#[derive(Clone, Debug)]
pub enum RecordAnswer {
    Recorded,
    /// The claim was lost (its lease expired and another process took the key): the
    /// outcome there, if it has one yet.
    Fenced(Option<Box<StoredOutcome>>),
}

/// An approval decision: by any process on the journal; exactly one wins.
#[derive(Clone, Debug)]
pub struct Decision {
    pub approval_id: String,
    pub verdict: Verdict,
    pub by: Option<String>,
    pub now_ms: f64,
}

#[derive(Clone, Debug)]
pub enum Verdict {
    /// Approved, with the approver's edited arguments (JSON text) if any.
    Approve { args: Option<String> },
    Deny { reason: String },
}

/// A row waiting for a person, as `pendingApprovals()` lists it.
#[derive(Clone, Debug)]
pub struct StoredApproval {
    pub row: RowKey,
    pub approval_id: String,
    pub execution_id: String,
    pub tool_call_id: Option<String>,
    pub tool: String,
    pub args: String,
    pub requested_at: f64,
    pub expires_at: Option<f64>,
    pub owner: String,
    pub fence: i64,
}

/// What a decision found.
#[derive(Clone, Debug)]
pub enum DecideAnswer {
    /// Recorded. For a denial the row is done with the denied outcome.
    Decided(StoredApproval),
    /// No call waits for that approval (never did, or it was answered, cancelled or expired).
    NotFound,
    /// The check of the edited arguments refused them; nothing changed.
    Refused(ToolError),
}

/// A row as a watcher or recovery reads it.
#[derive(Clone, Debug)]
pub struct RowState {
    pub row: RowKey,
    pub state: String,
    pub owner: String,
    pub fence: i64,
    pub lease_until: i64,
    pub effect: Effect,
    pub tool: String,
    pub args: String,
    pub execution_id: String,
    pub tool_call_id: Option<String>,
    pub approval_id: Option<String>,
    /// The approval as JSON (`ApprovalRecord` fields plus `expiresAt`).
    pub approval: Option<Value>,
    pub outcome: Option<StoredOutcome>,
}

impl RowState {
    /// When its approval expires, if it has a deadline.
    pub fn expires_at(&self) -> Option<f64> {
        self.approval.as_ref()?.get("expiresAt")?.as_f64()
    }
}

/// A journal failure: the store could not be reached or answered in a way it should not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalError {
    /// `JOURNAL_UNAVAILABLE` (unreachable, locked, lost connection, IO) or
    /// `JOURNAL_SCHEMA_NEWER`.
    pub code: RegistryErrorCode,
    pub message: String,
    /// Trying again cannot help (a corrupt SQLite file): a write that failed so is not
    /// retried, its execution ends with the error instead of waiting for ever.
    pub lasting: bool,
    /// The request may have reached the store and been written although it failed (a
    /// connection lost or timed out after the request was sent): a failed claim may
    /// have left its row ([`JournalStore::forget`]).
    pub maybe_written: bool,
}

impl JournalError {
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self { code: RegistryErrorCode::JournalUnavailable, message: message.into(), lasting: false, maybe_written: false }
    }
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<JournalError> for RegistryError {
    fn from(e: JournalError) -> Self {
        RegistryError::new(e.code, e.message)
    }
}

/// The store behind a journal: one row per key, every write fenced. Each method is one
/// transaction; implementations serialise concurrent writers across processes.
pub trait JournalStore: Send {
    /// Claims each key for `owner` until `lease_until` (ms since the epoch), in order.
    fn claim(&mut self, owner: &str, lease_until: i64, now: i64, claims: &[Claim]) -> Result<Vec<ClaimAnswer>, JournalError>;

    /// Writes finished outcomes, each only if its fence still holds.
    fn record(&mut self, now: i64, records: &[Record]) -> Result<Vec<RecordAnswer>, JournalError>;

    /// Forgets claims of calls that never ran (cancelled before their first attempt), if
    /// their fence still holds and they are not finished: the key may be used again.
    fn release(&mut self, rows: &[(RowKey, i64)]) -> Result<(), JournalError>;

    /// Undoes what claims (and recovery's takeovers) whose answers were lost may have
    /// written, for each row held by `owner` for that execution id and not finished: one
    /// claimed afresh (fence 1) is deleted; one taken over (fence > 1) is let go, its
    /// owner cleared and its lease expired, as the dead process left it. Such a call never
    /// ran (it failed without running when its claim got no answer), and the row would
    /// otherwise be held, its lease renewed, for as long as `owner` lives.
    fn forget(&mut self, owner: &str, rows: &[(RowKey, String)]) -> Result<(), JournalError>;

    /// Marks approved rows as running (the handler is about to start), if the fence holds.
    fn start(&mut self, owner: &str, lease_until: i64, rows: &[(RowKey, i64)]) -> Result<Vec<bool>, JournalError>;

    /// Decides an approval. `check` sees the row before anything is written and may
    /// refuse edited arguments. A denial writes the denied outcome.
    fn decide(&mut self, decision: &Decision, check: &dyn Fn(&StoredApproval) -> Result<(), ToolError>) -> Result<DecideAnswer, JournalError>;

    /// Every row waiting for approval, oldest first.
    fn approvals(&mut self) -> Result<Vec<StoredApproval>, JournalError>;

    /// The rows of these keys (absent ones left out).
    fn rows(&mut self, rows: &[RowKey]) -> Result<Vec<RowState>, JournalError>;

    /// Renews the lease of every unfinished row `owner` holds.
    fn renew(&mut self, owner: &str, lease_until: i64) -> Result<(), JournalError>;

    /// Unfinished rows whose lease expired before `now` that recovery may act on, at most
    /// `limit`, ordered by `(lease_until, scope, key)` and after `after` (the last row of
    /// the page before) when given. A row waiting for approval is left out until its
    /// approval has expired (with no deadline, never): recovery leaves those waiting, and
    /// a dead process's unanswered approvals filled the list for ever, so that nothing
    /// that crashed later was recovered.
    fn due(&mut self, now: i64, after: Option<&DueCursor>, limit: usize) -> Result<Vec<RowState>, JournalError>;

    /// Takes over an expired row for `owner` if its fence is still the one `take` read:
    /// the new fence.
    fn take_over(&mut self, owner: &str, lease_until: i64, now: i64, take: &TakeOver) -> Result<Option<i64>, JournalError>;

    /// Deletes finished rows finished before `done_before`; `read` and `idempotent` calls
    /// left running whose lease expired before `stale_before` (by a dead process, and no
    /// process since had the tool to run them again); and tasks past their ttl. Never a
    /// `once` call that was running, whose `interrupted` outcome recovery must store
    /// first, nor a call waiting for approval or approved and not yet run: a person may
    /// still decide it, or a process with the tool still run it. Returns how many.
    fn prune(&mut self, done_before: i64, stale_before: i64) -> Result<u64, JournalError>;

    /// Does what an MCP task store asks; answers JSON (`null` for a task not found).
    fn task(&mut self, op: &TaskOp) -> Result<Value, JournalError>;
}

/// What recovery takes over: a row whose lease expired, if its fence is still `fence`,
/// set to `state`, held for the execution `execution_id` that will end it here.
#[derive(Clone, Debug)]
pub struct TakeOver {
    pub row: RowKey,
    pub fence: i64,
    pub state: String,
    pub execution_id: String,
}

/// Where a listing of due rows goes on from: the last row of the page before.
pub type DueCursor = (i64, RowKey);

/// `{ task, call? }` for [`TaskOp::Get`]: the task row and its call's state, outcome, tool
/// and arguments (JSON text).
pub fn task_json(task: Option<TaskRow>, call: Option<RowState>) -> Value {
    let Some(task) = task else { return Value::Null };
    let mut o = serde_json::json!({ "task": task });
    if let Some(call) = call {
        // The tool and its arguments: a server writes the reply of a call another process
        // finished as the model would read it (the tool's toModelError / toModelOutput).
        o["call"] = serde_json::json!({ "state": call.state, "outcome": call.outcome, "tool": call.tool, "args": call.args });
    }
    o
}

/// An MCP task a server stores in its journal (the SDK's `TaskStore`, see [`TaskOp`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRow {
    pub task_id: String,
    /// What was set explicitly (`working` until then: the task follows its call's row).
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<i64>,
    pub created_at: i64,
    pub last_updated: i64,
    /// A stored `CallToolResult`, JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// The key of a task's call in `toolhost_calls` (global scope).
pub fn task_call_key(task_id: &str) -> RowKey {
    RowKey { scope: String::new(), key: format!("task:{task_id}") }
}

/// What a task store asks of the journal.
#[derive(Clone, Debug)]
pub enum TaskOp {
    Create(TaskRow),
    /// The task, with the state and outcome of its call (`{ task, call? }` JSON).
    Get { task_id: String },
    /// Sets the status, and a stored result with it when given; `false` (and nothing
    /// written) for a task whose status is already final (`completed`, `failed`,
    /// `cancelled`): a cancelled task's call that ends afterwards does not undo it.
    Update { task_id: String, status: String, status_message: Option<String>, result: Option<Value>, now: i64 },
    /// Tasks after `cursor` (a task id), oldest first, at most `limit`.
    List { cursor: Option<String>, limit: usize },
}

/// Checks an approver's decision against the row it decides, before anything is written
/// (the engine validates edited arguments against the tool's schema here).
pub type DecisionCheck = std::sync::Arc<dyn Fn(&StoredApproval) -> Result<(), ToolError> + Send + Sync>;

/// What recovery does with a row it took over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Run it here (a `read` or `idempotent` call that was running, or an approved one).
    Run,
    /// End it `interrupted` (a `once` call that was running).
    Interrupt,
    /// End it denied: its approval expired with nobody waiting for it.
    Expire,
}

/// Journal work the engine asks a driver to do off its main thread.
#[derive(Clone)]
pub enum JournalRequest {
    /// Claim a key; answered by [`JournalAnswer::Claimed`].
    Claim(Claim),
    /// Claim a key again every poll (or at once on a Postgres notification) until the
    /// answer is not `InFlight`; answered once, by [`JournalAnswer::Claimed`].
    Watch(Claim),
    /// Stop watching for an execution (it was cancelled).
    Unwatch { exec: u64 },
    /// Write an outcome; answered by [`JournalAnswer::Recorded`]. Retried by the driver
    /// until it is written: an outcome is never dropped.
    Record(Record),
    /// Forget a claim that never ran (no answer).
    Release { row: RowKey, fence: i64 },
    /// An approved call is about to run: mark its row running; answered by
    /// [`JournalAnswer::Started`].
    Start { exec: u64, row: RowKey, fence: i64 },
    /// Watch the approval an execution waits for: answered by
    /// [`JournalAnswer::ApprovalChanged`] once its row is decided (here or elsewhere),
    /// gone, or taken by another owner.
    WatchApproval { exec: u64, row: RowKey, fence: i64 },
    /// Decide an approval; answered by [`JournalAnswer::Decided`] with the ticket.
    Decide { ticket: u64, decision: Decision, check: DecisionCheck },
    /// List pending approvals; answered by [`JournalAnswer::Approvals`].
    Approvals { ticket: u64 },
    /// Recovery: take over an expired row for a new execution (its id, `execution_id`);
    /// answered by [`JournalAnswer::TakenOver`].
    TakeOver { row: Box<RowState>, state: String, then: Recovery, execution_id: String },
    /// An MCP task store's operation; answered by [`JournalAnswer::Task`].
    Task { ticket: u64, op: TaskOp },
}

/// What the journal answered, handed back to the engine.
#[derive(Clone, Debug)]
pub enum JournalAnswer {
    Claimed { claim: Box<Claim>, answer: ClaimAnswer },
    Recorded { exec: u64, row: RowKey, answer: RecordAnswer },
    Started { exec: u64, ok: bool },
    ApprovalChanged { exec: u64, row: Option<Box<RowState>> },
    Decided { ticket: u64, answer: DecideAnswer },
    Approvals { ticket: u64, approvals: Vec<StoredApproval> },
    /// Unfinished rows whose lease expired (recovery looks at them on start and then
    /// periodically).
    Due(Vec<RowState>),
    TakenOver { row: Box<RowState>, fence: Option<i64>, then: Recovery, execution_id: String },
    Task { ticket: u64, answer: Value },
    /// A request that needed an answer could not be done: the store is unreachable.
    /// `exec` for a claim or start, `ticket` for a decision or a listing.
    Failed { exec: Option<u64>, ticket: Option<u64>, claim: Option<Box<Claim>>, error: JournalError },
}

/// `ToolError` for a call refused because its key was used for another call.
pub fn conflict_error(tool: &str, key: &str, other_tool: &str) -> ToolError {
    let what = if other_tool == tool { format!("a call of '{tool}' with other arguments") } else { format!("a call of tool '{other_tool}'") };
    let mut e = ToolError::new(
        ErrorCategory::Permanent,
        "IDEMPOTENCY_CONFLICT",
        format!("tool '{tool}' was not run: its idempotency key '{key}' was already used for {what}. Use a new key (a new tool call) for a different call"),
    );
    e.retryable = false;
    e
}

/// `ToolError` for a call whose journal could not be reached: it did not run. A
/// `lasting` failure (the file deleted, corrupt or read-only, the manager closing) fails
/// every call of this manager the same way: calling again is not worth it, and the error
/// says so.
pub fn unavailable_error(tool: &str, why: &str, lasting: bool) -> ToolError {
    if lasting {
        let mut e = ToolError::new(
            ErrorCategory::Permanent,
            "JOURNAL_UNAVAILABLE",
            format!("tool '{tool}' was not run: its journal cannot be used ({why}); calling it again fails the same way"),
        );
        e.retryable = false;
        return e;
    }
    ToolError::new(
        ErrorCategory::Transient,
        "JOURNAL_UNAVAILABLE",
        format!("tool '{tool}' was not run: its journal could not be reached ({why}); it is safe to call again"),
    )
}
