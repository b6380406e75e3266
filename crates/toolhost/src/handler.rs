//! The extension point every tool implements: [`ToolHandler`].
//!
//! Rust tools implement it directly (or through [`handler_fn`] and the `#[tool]`
//! attribute); the Node binding implements it once, by calling a JS function.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;

/// A boxed, sendable future, as handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a handler knows about the call it serves.
#[derive(Clone, Debug)]
pub struct ToolContext {
    pub execution_id: String,
    pub tool_call_id: Option<String>,
    pub session_id: Option<String>,
    pub tool_name: String,
    /// 1-based number of this attempt.
    pub attempt_number: u32,
    pub max_attempts: u32,
    /// The call's idempotency key (its `idempotency_key` option, else its tool-call id,
    /// else its execution id): the same on every attempt, to pass on to an API that takes one.
    pub idempotency_key: String,
    /// Cancelled when the execution is cancelled or this attempt times out.
    pub cancellation: CancellationToken,
    /// Where [`ToolContext::report_progress`] goes (set by the executor).
    pub progress: Option<ProgressSink>,
}

/// Receives a handler's progress reports.
#[derive(Clone)]
pub struct ProgressSink(pub Arc<dyn Fn(crate::record::Progress) + Send + Sync>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

impl ToolContext {
    /// Reports progress: a `tool-execution-progress` event, and with
    /// `resetTimeoutOnProgress` a fresh attempt timeout (`maxTotalTimeoutMs` still bounds
    /// the execution). Does nothing outside an executor.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.progress {
            (sink.0)(crate::record::Progress { progress, total, message: message.map(str::to_string) });
        }
    }
}

/// A tool's implementation.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs one attempt. The engine validated `args` against the input schema first.
    ///
    /// # Cancellation safety
    /// The engine drops the returned future when the attempt is cancelled or times
    /// out; long-running work should also watch `ctx.cancellation`.
    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<Result<Value, ToolError>>;

    /// Lets a host find its own handler type again (the Node binding calls JS
    /// handlers directly on the JS thread instead of through [`ToolHandler::call`]).
    fn as_any(&self) -> &dyn Any;
}

struct FnHandler<F>(F);

impl<F, Fut> ToolHandler for FnHandler<F>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<Result<Value, ToolError>> {
        Box::pin((self.0)(args, ctx))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Wraps an async closure as a [`ToolHandler`].
pub fn handler_fn<F, Fut>(f: F) -> Arc<dyn ToolHandler>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Arc::new(FnHandler(f))
}
