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
    /// A person (or an approval policy) refused the call, or did not answer in time.
    Denied,
    /// The process running the call died before it finished, and the tool's effect
    /// forbids running it again: whether it took effect is unknown.
    Interrupted,
}

impl ErrorCategory {
    pub const ALL: [ErrorCategory; 10] = [
        Self::Validation,
        Self::Execution,
        Self::Timeout,
        Self::Cancelled,
        Self::Transient,
        Self::Permanent,
        Self::NotFound,
        Self::Unknown,
        Self::Denied,
        Self::Interrupted,
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
            Self::Denied => "denied",
            Self::Interrupted => "interrupted",
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
    InvalidToolCalls,
    ApprovalNotFound,
    /// The journal could not be opened or reached (unreachable, locked, corrupt, IO).
    JournalUnavailable,
    /// The journal's database was written by a newer toolhost.
    JournalSchemaNewer,
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
            Self::InvalidToolCalls => "INVALID_TOOL_CALLS",
            Self::ApprovalNotFound => "APPROVAL_NOT_FOUND",
            Self::JournalUnavailable => "JOURNAL_UNAVAILABLE",
            Self::JournalSchemaNewer => "JOURNAL_SCHEMA_NEWER",
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
    /// Never retried, whatever `retryableCategories` lists: the handler ran and its
    /// outcome was refused (`INVALID_OUTPUT`, `INVALID_RESULT`), an interceptor's
    /// arguments were refused, or the handler said so (`retryable: false`),
    /// or its category is `permanent`. Listing `execution` retries a handler's plain errors, not these:
    /// running a handler again whose effect already happened would repeat it.
    pub no_retry: bool,
    pub retry_after_ms: Option<u64>,
    pub validation_errors: Vec<ValidationIssue>,
    /// The stack trace of the original error, when the host has one.
    pub stack: Option<String>,
    pub cause: Option<ErrorCause>,
}

/// The failures of a validation as one sentence: `path: message` each, `;`-separated.
fn issues_text(issues: &[ValidationIssue]) -> String {
    issues
        .iter()
        .map(|i| format!("{}: {}", if i.path.is_empty() { "/" } else { &i.path }, i.message))
        .collect::<Vec<_>>()
        .join("; ")
}

impl ToolError {
    pub fn new(category: ErrorCategory, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            category,
            code: code.into(),
            message: message.into(),
            retryable: matches!(category, ErrorCategory::Transient | ErrorCategory::Timeout),
            no_retry: category == ErrorCategory::Permanent,
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
        let detail = issues_text(&issues);
        let mut e = Self::new(
            ErrorCategory::Validation,
            "INVALID_ARGUMENTS",
            format!("invalid arguments for tool '{tool}': {detail}"),
        );
        e.validation_errors = issues;
        e
    }

    /// Arguments an interceptor of the host (`use()` in JS) passed on to the handler
    /// instead of the validated ones do not validate: `INVALID_ARGUMENTS`, with every
    /// failure, or `detail` alone when they are not JSON (no issues).
    pub fn invalid_intercepted_arguments(tool: &str, issues: Vec<ValidationIssue>, detail: Option<&str>) -> Self {
        // A refusal of the arguments' text (size, depth) says what, after its own prefix.
        let prefix = format!("invalid arguments for tool '{tool}': ");
        let detail = detail.map_or_else(|| issues_text(&issues), |d| d.strip_prefix(prefix.as_str()).unwrap_or(d).to_string());
        let mut e = Self::new(
            ErrorCategory::Validation,
            "INVALID_ARGUMENTS",
            format!("invalid arguments for tool '{tool}' from an interceptor: {detail}"),
        );
        e.validation_errors = issues;
        e.no_retry = true;
        e
    }

    /// The call was refused by whoever had to approve it: `APPROVAL_DENIED`, with the
    /// reason given (or that nobody answered in time).
    /// A `once` call whose process died while it ran: `interrupted`, never run again.
    pub fn interrupted(tool: &str) -> Self {
        let mut e = Self::new(
            ErrorCategory::Interrupted,
            "INTERRUPTED",
            format!("the outcome of tool '{tool}' is unknown: the process running it stopped before it finished, and it was not run again because it must not run twice. Check whether it took effect before calling it again"),
        );
        e.retryable = false;
        e
    }

    pub fn denied(tool: &str, reason: &str) -> Self {
        let mut e = Self::new(ErrorCategory::Denied, "APPROVAL_DENIED", format!("the call to tool '{tool}' was denied: {reason}"));
        e.retryable = false;
        e
    }

    /// The handler's result does not match the tool's `outputSchema`: `INVALID_OUTPUT`,
    /// category `execution` (not retried by default), every failure listed.
    pub fn invalid_output(tool: &str, issues: Vec<ValidationIssue>) -> Self {
        let detail = issues_text(&issues);
        let mut e = Self::new(ErrorCategory::Execution, "INVALID_OUTPUT", format!("tool '{tool}' returned output that does not match its outputSchema: {detail}"));
        e.validation_errors = issues;
        e.no_retry = true;
        e
    }

    /// The handler returned a value JSON cannot carry (a `Map`, a `BigInt`, a cycle, a
    /// function, an unawaited promise): `INVALID_RESULT`, category `execution`, with
    /// `detail` saying what and where. A model would otherwise read `{}` or `null`.
    pub fn invalid_result(tool: &str, detail: &str) -> Self {
        let mut e = Self::new(ErrorCategory::Execution, "INVALID_RESULT", format!("tool '{tool}' returned a result that is not JSON: {detail}"));
        e.retryable = false;
        e.no_retry = true;
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
            .field("no_retry", &self.no_retry)
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

/// What a host read off a value a handler threw (or rejected with), for
/// [`ToolError::from_thrown`]. Hosts read these properties defensively: a getter that
/// throws reads as absent.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Thrown {
    /// False for a thrown primitive (`throw 'x'`, `throw undefined`).
    pub is_object: bool,
    /// For a primitive: how it prints (`undefined`, `null`, the string, the number).
    pub text: Option<String>,
    pub name: Option<String>,
    pub message: Option<String>,
    pub code: Option<String>,
    /// A `category` property naming an [`ErrorCategory`].
    pub category: Option<String>,
    pub retryable: Option<bool>,
    pub retry_after_ms: Option<f64>,
    /// The `code` of the error's `cause`, when it has one (a network error wrapped by `fetch`).
    pub cause_code: Option<String>,
    /// Read only when the logging interceptor wants it (reading it formats the trace).
    pub stack: Option<String>,
    /// The HTTP status of a failed request: the error's `status` or `statusCode`, or its
    /// `response`'s (fetch wrappers, axios, provider SDKs).
    pub status: Option<f64>,
    /// The `Retry-After` header of that response (`err.headers` or
    /// `err.response.headers`), as the server wrote it.
    pub retry_after: Option<String>,
    /// Set, alone, when the handler did not throw but returned a value JSON cannot carry:
    /// what and where (`a Map is not JSON ... at /items`). The attempt fails
    /// `INVALID_RESULT` ([`ToolError::invalid_result`]).
    pub invalid_result: Option<String>,
}

/// HTTP statuses that mean "try again later": request timeout, too many requests, and a
/// gateway or server that is overloaded or down for a moment.
pub const TRANSIENT_STATUSES: &[u16] = &[408, 429, 502, 503, 504];

/// Error codes that mean the network failed: worth retrying.
const NETWORK_CODES: &[&str] = &[
    "ECONNRESET", "ETIMEDOUT", "ECONNREFUSED", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH",
    "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT",
];

impl ToolError {
    /// Classifies what a handler threw:
    /// - an `AbortError` means `cancelled`, a `TimeoutError` means `timeout`;
    /// - a `category` property naming a category means that category;
    /// - `retryable: true`, a network error code (`ECONNRESET`, `ETIMEDOUT`, ..., on the
    ///   error or its cause), `fetch failed`, or an HTTP status of [`TRANSIENT_STATUSES`]
    ///   (408, 429, 502, 503, 504) mean `transient`;
    /// - anything else, thrown values that are not errors included, means `execution`.
    ///
    /// `retryAfterMs` on the error is the wait before the next attempt; without it, the
    /// response's `Retry-After` (seconds or an HTTP date, see [`crate::retry_after`]).
    /// The message names the tool and is never blank. The caller attaches the cause.
    pub fn from_thrown(tool: &str, t: &Thrown) -> ToolError {
        Self::from_thrown_at(tool, t, crate::clock::SystemTime::now())
    }

    /// [`ToolError::from_thrown`] with the time an HTTP-date `Retry-After` is read against.
    pub fn from_thrown_at(tool: &str, t: &Thrown, now: crate::clock::SystemTime) -> ToolError {
        if let Some(detail) = &t.invalid_result {
            return ToolError::invalid_result(tool, detail);
        }
        if !t.is_object {
            let shown = t.text.as_deref().unwrap_or("a non-error value");
            return ToolError::execution(format!("tool '{tool}' threw {shown}"));
        }
        let name = t.name.as_deref().unwrap_or("");
        let message = t.message.as_deref().unwrap_or("");
        let network = |c: &Option<String>| c.as_deref().is_some_and(|c| NETWORK_CODES.contains(&c));
        let fetch_failed = name == "TypeError" && message == "fetch failed";
        let transient_status = t.status.is_some_and(|s| TRANSIENT_STATUSES.iter().any(|t| f64::from(*t) == s));
        let category = if name == "AbortError" {
            ErrorCategory::Cancelled
        } else if name == "TimeoutError" {
            ErrorCategory::Timeout
        } else if let Some(c) = t.category.as_deref().and_then(ErrorCategory::parse) {
            c
        } else if t.retryable == Some(true) || network(&t.code) || network(&t.cause_code) || fetch_failed || transient_status {
            ErrorCategory::Transient
        } else {
            ErrorCategory::Execution
        };
        let default_code = match category {
            ErrorCategory::Cancelled => "CANCELLED",
            ErrorCategory::Timeout => "TIMEOUT",
            ErrorCategory::Transient => "TRANSIENT_ERROR",
            ErrorCategory::Permanent => "PERMANENT_ERROR",
            ErrorCategory::Validation => "INVALID_ARGUMENTS",
            ErrorCategory::NotFound => "TOOL_NOT_FOUND",
            _ => "EXECUTION_ERROR",
        };
        // A model reads this text: never leave it blank.
        let shown = match (message.is_empty(), name.is_empty()) {
            (false, _) => message,
            (true, false) => name,
            (true, true) => "an error with no message",
        };
        let code = t.code.clone().unwrap_or_else(|| default_code.to_string());
        let mut e = ToolError::new(category, code, format!("tool '{tool}' failed: {shown}"));
        if let Some(flag) = t.retryable {
            e.retryable = flag;
            e.no_retry = !flag;
        }
        e.retry_after_ms = t.retry_after_ms.filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64);
        if e.retry_after_ms.is_none() {
            e.retry_after_ms = t.retry_after.as_deref().and_then(|v| crate::retry_after::retry_after_ms(v, now));
        }
        e.stack = t.stack.clone();
        e
    }
}

#[cfg(test)]
mod thrown_tests {
    use super::*;

    fn thrown(name: &str, message: &str) -> Thrown {
        Thrown { is_object: true, name: Some(name.into()), message: Some(message.into()), ..Thrown::default() }
    }

    #[test]
    fn classifies_by_name_category_flag_and_network_code() {
        assert_eq!(ToolError::from_thrown("t", &thrown("AbortError", "x")).category, ErrorCategory::Cancelled);
        let timeout = ToolError::from_thrown("t", &thrown("TimeoutError", "x"));
        assert_eq!((timeout.category, timeout.code.as_str(), timeout.retryable), (ErrorCategory::Timeout, "TIMEOUT", true));
        let declared = Thrown { category: Some("permanent".into()), ..thrown("Error", "no") };
        assert_eq!(ToolError::from_thrown("t", &declared).category, ErrorCategory::Permanent);
        let flagged = Thrown { retryable: Some(true), retry_after_ms: Some(250.0), ..thrown("Error", "busy") };
        let e = ToolError::from_thrown("t", &flagged);
        assert_eq!((e.category, e.retry_after_ms), (ErrorCategory::Transient, Some(250)));
        let wrapped = Thrown { cause_code: Some("ECONNRESET".into()), ..thrown("TypeError", "fetch failed") };
        assert_eq!(ToolError::from_thrown("t", &wrapped).category, ErrorCategory::Transient);
        assert_eq!(ToolError::from_thrown("t", &thrown("TypeError", "fetch failed")).category, ErrorCategory::Transient);
        let plain = ToolError::from_thrown("t", &thrown("Error", "boom"));
        assert_eq!((plain.category, plain.code.as_str(), plain.retryable), (ErrorCategory::Execution, "EXECUTION_ERROR", false));
        assert_eq!(plain.message, "tool 't' failed: boom");
    }

    #[test]
    fn http_statuses_that_mean_later_are_transient_and_retry_after_is_the_wait() {
        let http = |status: f64, retry_after: Option<&str>| Thrown { status: Some(status), retry_after: retry_after.map(str::to_string), ..thrown("HTTPError", "busy") };
        for status in [408.0, 429.0, 502.0, 503.0, 504.0] {
            let e = ToolError::from_thrown("t", &http(status, None));
            assert_eq!((e.category, e.code.as_str(), e.retryable), (ErrorCategory::Transient, "TRANSIENT_ERROR", true), "{status}");
        }
        for status in [400.0, 401.0, 404.0, 500.0] {
            assert_eq!(ToolError::from_thrown("t", &http(status, None)).category, ErrorCategory::Execution, "{status}");
        }
        assert_eq!(ToolError::from_thrown("t", &http(429.0, Some("2"))).retry_after_ms, Some(2000));
        let now = crate::clock::UNIX_EPOCH + std::time::Duration::from_secs(784_111_777 - 3);
        assert_eq!(ToolError::from_thrown_at("t", &http(503.0, Some("Sun, 06 Nov 1994 08:49:37 GMT")), now).retry_after_ms, Some(3000));
        // The error's own retryAfterMs wins; a category it declares wins over the status.
        let own = Thrown { retry_after_ms: Some(10.0), ..http(429.0, Some("2")) };
        assert_eq!(ToolError::from_thrown("t", &own).retry_after_ms, Some(10));
        let declared = Thrown { category: Some("permanent".into()), ..http(503.0, None) };
        assert_eq!(ToolError::from_thrown("t", &declared).category, ErrorCategory::Permanent);
    }

    #[test]
    fn a_result_that_is_not_json_is_invalid_result() {
        let t = Thrown { invalid_result: Some("a Map is not JSON at /items".into()), ..Thrown::default() };
        let e = ToolError::from_thrown("t", &t);
        assert_eq!((e.category, e.code.as_str(), e.retryable), (ErrorCategory::Execution, "INVALID_RESULT", false));
        assert_eq!(e.message, "tool 't' returned a result that is not JSON: a Map is not JSON at /items");
    }

    #[test]
    fn never_a_blank_message() {
        assert_eq!(ToolError::from_thrown("t", &thrown("", "")).message, "tool 't' failed: an error with no message");
        assert_eq!(ToolError::from_thrown("t", &thrown("RangeError", "")).message, "tool 't' failed: RangeError");
        let primitive = Thrown { text: Some("undefined".into()), ..Thrown::default() };
        assert_eq!(ToolError::from_thrown("t", &primitive).message, "tool 't' threw undefined");
        assert_eq!(ToolError::from_thrown("t", &Thrown::default()).message, "tool 't' threw a non-error value");
    }
}
