//! # toolhost
//!
//! The runtime between a language model and the functions it may call: a registry of
//! tools with JSON Schema input validation, and an executor that runs each call with
//! retries, exponential backoff with jitter, timeouts, cancellation, a circuit breaker,
//! lifecycle events and execution records.
//!
//! The same engine serves Rust tools (through [`ToolExecutor`]) and the Node.js
//! binding (which drives [`ExecutionEngine`] on the JS thread).
//!
//! Cargo features: `journal` (the durable journal's SQLite and Postgres stores) and
//! `mcp` (MCP over the official Rust SDK, `rmcp`: [`mcp::mount_mcp`] mounts a server's
//! tools, [`mcp::McpServer`] serves an executor's).

pub mod arguments;
pub mod audit;
pub mod canonical;
pub mod circuit;
pub mod clock;
pub mod declaration;
pub mod deadline;
pub mod engine;
pub mod error;
pub mod executor;
pub mod handler;
pub mod host;
pub mod ids;
pub mod journal;
pub mod json_text;
pub mod log_lines;
pub mod mcp;
pub mod pattern_dialect;
pub mod pattern_rewrite;
pub mod providers;
pub mod record;
pub mod ref_cycles;
pub mod redaction;
pub mod registry;
pub mod retry;
pub mod retry_after;
pub mod schema;
pub mod schema_cost;
pub mod schema_keywords;
pub mod tape;
pub mod timestamp;
pub mod truncation;
pub mod tool_definition;

pub use arguments::{parse_arguments, MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH};
pub use circuit::{CircuitBreaker, CircuitState};
pub use declaration::{CircuitBreakerConfig, NeedsApproval, RetryOverrides, ToolDeclaration, ToolMetadata};
pub use deadline::{DeadlineKey, DeadlineStats, DeadlineTimer, Deadlines};
pub use engine::{audit_input_hash, ApprovalVerdict, Arguments, Evicted, PendingApproval, AttemptSpec, CallOptions, ExecutionEngine, ExecutionMetadata, ManagerConfig, Step, Transition};
pub use error::{ErrorCategory, ErrorCause, RegistryError, RegistryErrorCode, Thrown, ToolError};
pub use executor::{ExecutionOutcome, ToolExecutor};
pub use handler::{handler_fn, BoxFuture, ProgressSink, ToolContext, ToolHandler};
pub use record::{
    payload_json, ApprovalDecision, ApprovalRecord, Progress, EventMask, RecordedArgs, EventType, ExecutionEvent, ExecutionRecord, ExecutionStatus, ExecutionTiming, Payload, ToolStats,
};
pub use registry::{Origin, RegisteredTool, RegistryChange, Scope, ToolRegistry};
pub use retry::{Backoff, CategorySet, Jitter, RetryConfig};
pub use schema::{CompiledSchema, ValidationIssue};
pub use tokio_util::sync::CancellationToken;
#[doc(hidden)]
pub use tool_definition::__private;
pub use tool_definition::{current_cancellation, current_context, ToolDefinition};
pub use toolhost_macros::tool;
