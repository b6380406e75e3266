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

/// The seven lifecycle event types, in the order an execution passes through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Started,
    Validating,
    Executing,
    Retrying,
    Succeeded,
    Failed,
    Cancelled,
}

impl EventType {
    pub const ALL: [EventType; 7] =
        [Self::Started, Self::Validating, Self::Executing, Self::Retrying, Self::Succeeded, Self::Failed, Self::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "tool-execution-started",
            Self::Validating => "tool-execution-validating",
            Self::Executing => "tool-execution-executing",
            Self::Retrying => "tool-execution-retrying",
            Self::Succeeded => "tool-execution-succeeded",
            Self::Failed => "tool-execution-failed",
            Self::Cancelled => "tool-execution-cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// Which event types anyone listens to; events nobody wants are never built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventMask(pub u8);

impl EventMask {
    pub const ALL: EventMask = EventMask(0x7f);

    pub fn wants(self, t: EventType) -> bool {
        self.0 & t.bit() != 0
    }
}

/// A lifecycle event. Per execution they come in order: started, validating, executing,
/// then (retrying, executing) repeated, then exactly one of succeeded, failed, cancelled.
#[derive(Clone, Debug)]
pub enum ExecutionEvent {
    Started { execution: Arc<ExecutionRecord> },
    Validating { execution_id: String, tool_name: String, args: RecordedArgs },
    Executing { execution_id: String, tool_name: String, attempt_number: u32 },
    Retrying { execution_id: String, tool_name: String, attempt_number: u32, max_attempts: u32, error: ToolError, delay_ms: f64 },
    Succeeded { execution: Arc<ExecutionRecord> },
    Failed { execution: Arc<ExecutionRecord> },
    Cancelled { execution_id: String, tool_name: String },
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
        }
    }

    pub fn execution_id(&self) -> &str {
        match self {
            Self::Started { execution } | Self::Succeeded { execution } | Self::Failed { execution } => &execution.id,
            Self::Validating { execution_id, .. }
            | Self::Executing { execution_id, .. }
            | Self::Retrying { execution_id, .. }
            | Self::Cancelled { execution_id, .. } => execution_id,
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
