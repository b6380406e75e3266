//! Errors: registry refusals ([`RegistryError`]) and execution failures ([`ToolError`]).
//!
//! Every error carries a stable `code` string that JS and Rust users can match on.
//! A [`ToolError`] also carries an [`ErrorCategory`], which the retry classifier reads.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::schema::ValidationIssue;

/// Why a tool call failed, in the terms a retry policy and a model care about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// The arguments did not match the tool's input schema.
    Validation,
    /// The handler failed with an ordinary error; not retried by default.
    Execution,
    /// An attempt ran past its timeout.
    Timeout,
    /// The caller cancelled the execution.
    Cancelled,
    /// A failure worth retrying (network errors, `transientError`, `retryable: true`).
    Transient,
    /// A failure that will not go away by retrying (`permanentError`, an open circuit).
    Permanent,
    /// The tool or the session does not exist.
    NotFound,
    /// Anything that could not be classified.
    Unknown,
}

impl ErrorCategory {
    pub const ALL: [ErrorCategory; 8] = [
        Self::Validation,
        Self::Execution,
        Self::Timeout,
        Self::Cancelled,
        Self::Transient,
        Self::Permanent,
        Self::NotFound,
        Self::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Validation => "validation",
            Self::Execution => "execution",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Transient => "transient",
            Self::Permanent => "permanent",
            Self::NotFound => "not_found",
            Self::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for ErrorCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stable codes of registry and configuration refusals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryErrorCode {
    InvalidToolName,
    DuplicateTool,
    InvalidDefinition,
    InvalidSchema,
    ToolNotFound,
    InvalidArguments,
    SessionNotFound,
    InvalidConfig,
}

impl RegistryErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidToolName => "INVALID_TOOL_NAME",
            Self::DuplicateTool => "DUPLICATE_TOOL",
            Self::InvalidDefinition => "INVALID_DEFINITION",
            Self::InvalidSchema => "INVALID_SCHEMA",
            Self::ToolNotFound => "TOOL_NOT_FOUND",
            Self::InvalidArguments => "INVALID_ARGUMENTS",
            Self::SessionNotFound => "SESSION_NOT_FOUND",
            Self::InvalidConfig => "INVALID_CONFIG",
        }
    }
}

/// A refusal by the registry or a constructor. Nothing was changed when one is returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError {
    pub code: RegistryErrorCode,
    pub message: String,
    /// For `INVALID_SCHEMA`: a JSON Pointer into the schema where the problem is.
    pub schema_path: Option<String>,
}

impl RegistryError {
    pub fn new(code: RegistryErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), schema_path: None }
    }

    pub fn invalid_schema(message: impl Into<String>, schema_path: impl Into<String>) -> Self {
        Self {
            code: RegistryErrorCode::InvalidSchema,
            message: message.into(),
            schema_path: Some(schema_path.into()),
        }
    }

    pub fn not_found(tool: &str) -> Self {
        Self::new(RegistryErrorCode::ToolNotFound, format!("tool '{tool}' is not registered"))
    }

    pub fn code(&self) -> &'static str {
        self.code.as_str()
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for RegistryError {}

/// The original error a handler failed with, kept opaque so the engine stays free of
/// any host types (the Node binding stores the JS error object here).
pub type ErrorCause = Arc<dyn Any + Send + Sync>;

/// A structured execution failure a caller or a model can recover from.
#[derive(Clone)]
pub struct ToolError {
    pub category: ErrorCategory,
    pub code: String,
    pub message: String,
    pub retryable: bool,
    pub retry_after_ms: Option<u64>,
    pub validation_errors: Vec<ValidationIssue>,
    /// The stack trace of the original error, when the host has one.
    pub stack: Option<String>,
    pub cause: Option<ErrorCause>,
}

impl ToolError {
    pub fn new(category: ErrorCategory, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            category,
            code: code.into(),
            message: message.into(),
            retryable: matches!(category, ErrorCategory::Transient | ErrorCategory::Timeout),
            retry_after_ms: None,
            validation_errors: Vec::new(),
            stack: None,
            cause: None,
        }
    }

    /// A handler failure of category `execution` (not retried by default).
    pub fn execution(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Execution, "EXECUTION_ERROR", message)
    }

    /// A failure worth retrying, optionally with the server's `Retry-After` hint.
    pub fn transient(message: impl Into<String>, retry_after_ms: Option<u64>) -> Self {
        let mut e = Self::new(ErrorCategory::Transient, "TRANSIENT_ERROR", message);
        e.retry_after_ms = retry_after_ms;
        e
    }

    /// A failure that retrying will not fix.
    pub fn permanent(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Permanent, "PERMANENT_ERROR", message)
    }

    pub fn timeout(tool: &str, timeout_ms: u64) -> Self {
        Self::new(
            ErrorCategory::Timeout,
            "TIMEOUT",
            format!("tool '{tool}' timed out after {timeout_ms} ms"),
        )
    }

    pub fn cancelled(tool: &str) -> Self {
        let mut e = Self::new(ErrorCategory::Cancelled, "CANCELLED", format!("execution of tool '{tool}' was cancelled"));
        e.retryable = false;
        e
    }

    pub fn invalid_arguments(tool: &str, issues: Vec<ValidationIssue>) -> Self {
        let detail = issues
            .iter()
            .map(|i| format!("{}: {}", if i.path.is_empty() { "/" } else { &i.path }, i.message))
            .collect::<Vec<_>>()
            .join("; ");
        let mut e = Self::new(
            ErrorCategory::Validation,
            "INVALID_ARGUMENTS",
            format!("invalid arguments for tool '{tool}': {detail}"),
        );
        e.validation_errors = issues;
        e
    }

    pub fn with_cause(mut self, cause: ErrorCause) -> Self {
        self.cause = Some(cause);
        self
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("category", &self.category)
            .field("code", &self.code)
            .field("message", &self.message)
            .field("retryable", &self.retryable)
            .field("retry_after_ms", &self.retry_after_ms)
            .field("validation_errors", &self.validation_errors)
            .field("has_cause", &self.cause.is_some())
            .finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.category, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<RegistryError> for ToolError {
    fn from(e: RegistryError) -> Self {
        let category = match e.code {
            RegistryErrorCode::ToolNotFound | RegistryErrorCode::SessionNotFound => ErrorCategory::NotFound,
            RegistryErrorCode::InvalidArguments => ErrorCategory::Validation,
            _ => ErrorCategory::Permanent,
        };
        let mut t = ToolError::new(category, e.code.as_str(), e.message);
        t.retryable = false;
        t
    }
}
