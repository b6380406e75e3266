//! Execution records, lifecycle events and per-tool statistics.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use crate::clock::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::error::ToolError;

/// A handler's result, kept opaque so a host can keep its own value (the Node binding
/// keeps the JS value itself); Rust tools store a `serde_json::Value`.
pub type Payload = Arc<dyn Any + Send + Sync>;

/// Reads a payload as JSON when it is one.
pub fn payload_json(p: &Payload) -> Option<&Value> {
    p.downcast_ref::<Value>()
}

/// A call's arguments as its record keeps them.
#[derive(Clone, Debug)]
pub enum RecordedArgs {
    /// Parsed JSON.
    Json(Arc<Value>),
    /// Large argument text that a driver parsed and validated off its main thread: kept
    /// as text, several times smaller than its parsed form.
    Text(Arc<str>),
}

impl RecordedArgs {
    /// The arguments as JSON (parsing kept text on demand).
    pub fn to_value(&self) -> Cow<'_, Value> {
        match self {
            Self::Json(v) => Cow::Borrowed(v),
            Self::Text(t) => Cow::Owned(serde_json::from_str(t).unwrap_or(Value::Null)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionStatus {
    Pending,
    Validating,
    /// Validated, waiting for a person (or the host's approval policy) to approve it.
    AwaitingApproval,
    Executing,
    Succeeded,
    Failed,
    Cancelled,
}

impl ExecutionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Validating => "validating",
            Self::AwaitingApproval => "awaiting-approval",
            Self::Executing => "executing",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }
}

/// Wall-clock times in milliseconds since the Unix epoch, as JS `Date.now()` gives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecutionTiming {
    pub queued_at: f64,
    pub started_at: Option<f64>,
    pub completed_at: Option<f64>,
    /// From the first attempt's start (or from queueing, if none started) to completion.
    pub duration_ms: Option<f64>,
}

/// Everything known about one execution.
#[derive(Clone)]
pub struct ExecutionRecord {
    pub id: String,
    pub tool_call_id: Option<String>,
    pub session_id: Option<String>,
    pub tool_name: String,
    pub args: RecordedArgs,
    pub status: ExecutionStatus,
    pub result: Option<Payload>,
    pub error: Option<ToolError>,
    pub timing: ExecutionTiming,
    /// The number of the current (or last) attempt; 0 before the first.
    pub attempt_number: u32,
    pub max_attempts: u32,
    /// Errors of the attempts before the last one.
    pub previous_errors: Vec<ToolError>,
    /// The approval asked for this call, and how it was answered.
    pub approval: Option<ApprovalRecord>,
    /// The last progress its handler reported.
    pub progress: Option<Progress>,
    /// With a journal: the call's idempotency key (its own, else its tool-call id, else
    /// its execution id).
    pub idempotency_key: Option<String>,
    /// Its outcome was not run here but read from the journal: a call with the same key
    /// finished before.
    pub replayed: bool,
    /// Recovery started it: a process holding it died, and this one took it over.
    pub recovered: bool,
}

/// An approval asked for a call, and its answer.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    pub approval_id: String,
    /// Milliseconds since the Unix epoch.
    pub requested_at: f64,
    /// `approved` or `denied`; absent while waiting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<ApprovalDecision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<f64>,
    /// Who decided (`approve(id, { by })`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Why it was denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The approver changed the arguments.
    pub edited: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalDecision {
    Approved,
    Denied,
}

/// Progress a handler reported.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Progress {
    pub progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl std::fmt::Debug for ExecutionRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionRecord")
            .field("id", &self.id)
            .field("tool_name", &self.tool_name)
            .field("status", &self.status)
            .field("attempt_number", &self.attempt_number)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

pub fn now_ms() -> f64 {
    epoch_ms(SystemTime::now())
}

/// Milliseconds since the Unix epoch of `t` (0 before it).
pub fn epoch_ms(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

/// The lifecycle event types, in the order an execution can pass through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Started,
    Validating,
    Executing,
    Retrying,
    Succeeded,
    Failed,
    Cancelled,
    ApprovalRequested,
    Approved,
    Denied,
    Progress,
    PreliminaryResult,
    /// Recovery took over a call a dead process left (with a journal).
    Recovered,
}

impl EventType {
    pub const ALL: [EventType; 13] = [
        Self::Started,
        Self::Validating,
        Self::Executing,
        Self::Retrying,
        Self::Succeeded,
        Self::Failed,
        Self::Cancelled,
        Self::ApprovalRequested,
        Self::Approved,
        Self::Denied,
        Self::Progress,
        Self::PreliminaryResult,
        Self::Recovered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "tool-execution-started",
            Self::Validating => "tool-execution-validating",
            Self::Executing => "tool-execution-executing",
            Self::Retrying => "tool-execution-retrying",
            Self::Succeeded => "tool-execution-succeeded",
            Self::Failed => "tool-execution-failed",
            Self::Cancelled => "tool-execution-cancelled",
            Self::ApprovalRequested => "tool-execution-approval-requested",
            Self::Approved => "tool-execution-approved",
            Self::Denied => "tool-execution-denied",
            Self::Progress => "tool-execution-progress",
            Self::PreliminaryResult => "tool-execution-preliminary-result",
            Self::Recovered => "tool-execution-recovered",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// Which event types anyone listens to; events nobody wants are never built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventMask(pub u16);

impl EventMask {
    pub const ALL: EventMask = EventMask((1 << EventType::ALL.len()) - 1);

    pub fn wants(self, t: EventType) -> bool {
        self.0 & t.bit() != 0
    }
}

/// A lifecycle event. Per execution they come in order: started, validating, then
/// (approval-requested, approved or denied) when the call needs approval, executing,
/// then (retrying, executing) repeated, then exactly one of succeeded, failed,
/// cancelled; progress and preliminary results come while an attempt runs.
#[derive(Clone, Debug)]
pub enum ExecutionEvent {
    Started { execution: Arc<ExecutionRecord> },
    Validating { execution_id: String, tool_name: String, args: RecordedArgs },
    Executing { execution_id: String, tool_name: String, attempt_number: u32 },
    Retrying { execution_id: String, tool_name: String, attempt_number: u32, max_attempts: u32, error: ToolError, delay_ms: f64 },
    Succeeded { execution: Arc<ExecutionRecord> },
    Failed { execution: Arc<ExecutionRecord> },
    Cancelled { execution_id: String, tool_name: String },
    ApprovalRequested { execution: Arc<ExecutionRecord>, approval_id: String },
    Approved { execution_id: String, tool_name: String, approval_id: String, by: Option<String>, edited: bool },
    Denied { execution_id: String, tool_name: String, approval_id: String, by: Option<String>, reason: String },
    Progress { execution_id: String, tool_name: String, progress: Progress },
    PreliminaryResult { execution_id: String, tool_name: String },
    /// `action`: `rerun` (a `read` or `idempotent` call, or an approved one, run here),
    /// `interrupted` (a `once` call, ended with its outcome unknown) or `expired` (an
    /// approval nobody answered in time).
    Recovered { execution_id: String, tool_name: String, idempotency_key: String, action: &'static str },
}

impl ExecutionEvent {
    pub fn event_type(&self) -> EventType {
        match self {
            Self::Started { .. } => EventType::Started,
            Self::Validating { .. } => EventType::Validating,
            Self::Executing { .. } => EventType::Executing,
            Self::Retrying { .. } => EventType::Retrying,
            Self::Succeeded { .. } => EventType::Succeeded,
            Self::Failed { .. } => EventType::Failed,
            Self::Cancelled { .. } => EventType::Cancelled,
            Self::ApprovalRequested { .. } => EventType::ApprovalRequested,
            Self::Approved { .. } => EventType::Approved,
            Self::Denied { .. } => EventType::Denied,
            Self::Progress { .. } => EventType::Progress,
            Self::PreliminaryResult { .. } => EventType::PreliminaryResult,
            Self::Recovered { .. } => EventType::Recovered,
        }
    }

    pub fn execution_id(&self) -> &str {
        match self {
            Self::Started { execution }
            | Self::Succeeded { execution }
            | Self::Failed { execution }
            | Self::ApprovalRequested { execution, .. } => &execution.id,
            Self::Validating { execution_id, .. }
            | Self::Executing { execution_id, .. }
            | Self::Retrying { execution_id, .. }
            | Self::Cancelled { execution_id, .. }
            | Self::Approved { execution_id, .. }
            | Self::Denied { execution_id, .. }
            | Self::Progress { execution_id, .. }
            | Self::PreliminaryResult { execution_id, .. }
            | Self::Recovered { execution_id, .. } => execution_id,
        }
    }
}

/// Counters for one tool, over finished executions.
#[derive(Clone, Debug, Default)]
pub struct ToolStats {
    pub execution_count: u64,
    pub success_count: u64,
    /// Failed and cancelled executions.
    pub failure_count: u64,
    pub total_duration_ms: f64,
    pub last_error: Option<ToolError>,
}

impl ToolStats {
    pub fn average_duration_ms(&self) -> f64 {
        if self.execution_count == 0 {
            0.0
        } else {
            self.total_duration_ms / self.execution_count as f64
        }
    }

    pub fn success_rate(&self) -> f64 {
        if self.execution_count == 0 {
            0.0
        } else {
            self.success_count as f64 / self.execution_count as f64
        }
    }
}
