//! JS errors in, structured [`ToolError`]s out.
//!
//! - `AbortError` means `cancelled`, `TimeoutError` means `timeout`;
//! - errors from `transientError()`, with `retryable: true`, or network errors
//!   (`ECONNRESET`, `ETIMEDOUT`, `ECONNREFUSED`, ..., and `fetch failed`) mean `transient`;
//! - errors from `permanentError()` mean `permanent`;
//! - anything else, thrown values that are not errors included, means `execution`.
//!
//! The original thrown value is kept as `cause`.

use napi::sys;
use toolhost::{ErrorCategory, ToolError, ValidationIssue};

use crate::js::{self, RawEnv, RawValue};
use crate::payload::{cause, payload_value};
use crate::runtime::runtime;

const NETWORK_CODES: &[&str] = &[
    "ECONNRESET", "ETIMEDOUT", "ECONNREFUSED", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH",
    "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT",
];

fn network_code(env: RawEnv, err: RawValue) -> bool {
    let code = js::get_string_prop(env, err, c"code");
    code.is_some_and(|c| NETWORK_CODES.contains(&c.as_str()))
}

/// Classifies whatever a handler threw or rejected with. `with_stack` reads the
/// error's stack (only the logging interceptor uses it, and reading it makes V8 format
/// the whole trace).
pub fn classify(env: RawEnv, tool: &str, thrown: RawValue, with_stack: bool) -> ToolError {
    let t = js::type_of(env, thrown);
    if t != sys::ValueType::napi_object && t != sys::ValueType::napi_function {
        let shown = match t {
            sys::ValueType::napi_undefined => "undefined".to_string(),
            sys::ValueType::napi_null => "null".to_string(),
            _ => js::get_string(env, thrown)
                .or_else(|| js::get_number(env, thrown).map(|n| n.to_string()))
                .or_else(|| js::get_bool(env, thrown).map(|b| b.to_string()))
                .unwrap_or_else(|| "a non-error value".to_string()),
        };
        let mut e = ToolError::execution(format!("tool '{tool}' threw {shown}"));
        if t != sys::ValueType::napi_undefined {
            e.cause = Some(cause(env, thrown));
        }
        return e;
    }
    let name = js::get_string_prop(env, thrown, c"name").unwrap_or_default();
    let message = js::get_string_prop(env, thrown, c"message").unwrap_or_default();
    let code = js::get_string_prop(env, thrown, c"code");
    let declared = js::get_string_prop(env, thrown, c"category").and_then(|c| ErrorCategory::parse(&c));
    let retryable_flag = js::get_bool_prop(env, thrown, c"retryable");
    let retry_after = js::get_opt(env, thrown, c"retryAfterMs").and_then(|v| js::get_number(env, v)).filter(|n| n.is_finite() && *n >= 0.0);
    let nested_cause = js::get_opt(env, thrown, c"cause");
    let fetch_failed = name == "TypeError" && message == "fetch failed";
    let network = network_code(env, thrown) || nested_cause.is_some_and(|c| network_code(env, c)) || fetch_failed;

    let category = if name == "AbortError" {
        ErrorCategory::Cancelled
    } else if name == "TimeoutError" {
        ErrorCategory::Timeout
    } else if let Some(c) = declared {
        c
    } else if retryable_flag == Some(true) || network {
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
    // A model reads this text: never leave it blank (an object with no string
    // `message` or `name`, a revoked Proxy, a throwing getter).
    let shown = match (message.is_empty(), name.is_empty()) {
        (false, _) => message,
        (true, false) => name.clone(),
        (true, true) => "an error with no message".to_string(),
    };
    let mut e = ToolError::new(category, code.unwrap_or_else(|| default_code.to_string()), format!("tool '{tool}' failed: {shown}"));
    if let Some(flag) = retryable_flag {
        e.retryable = flag;
    }
    e.retry_after_ms = retry_after.map(|n| n as u64);
    if with_stack {
        e.stack = js::get_string_prop(env, thrown, c"stack");
    }
    e.cause = Some(cause(env, thrown));
    e
}

pub fn issues_to_js(env: RawEnv, issues: &[ValidationIssue]) -> RawValue {
    js::array(
        env,
        issues.iter().map(|i| {
            let o = js::object(env);
            js::set(env, o, c"path", js::string(env, &i.path));
            js::set(env, o, c"schemaPath", js::string(env, &i.schema_path));
            js::set(env, o, c"keyword", js::string(env, &i.keyword));
            js::set(env, o, c"message", js::string(env, &i.message));
            o
        }),
    )
}

/// `{ category, code, message, retryable, retryAfterMs?, validationErrors?, cause? }`
pub fn to_js(env: RawEnv, e: &ToolError) -> RawValue {
    let Ok(rt) = runtime(env) else { return js::undefined(env) };
    let issues = if e.validation_errors.is_empty() { js::undefined(env) } else { issues_to_js(env, &e.validation_errors) };
    let cause = e.cause.as_ref().map_or_else(|| js::undefined(env), |c| payload_value(env, c.as_ref()));
    let args = [
        js::string(env, e.category.as_str()),
        js::string(env, &e.code),
        js::string(env, &e.message),
        js::boolean(env, e.retryable),
        js::opt_number(env, e.retry_after_ms.map(|n| n as f64)),
        issues,
        cause,
    ];
    rt.call(env, &rt.tool_error, &args).unwrap_or_else(|_| js::undefined(env))
}
