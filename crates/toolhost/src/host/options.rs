//! Options as a host hands them over (JSON text of the JS options object), read with
//! the messages a JS user sees: each names the option and what it takes, and an unknown
//! key is refused with the closest known one.
//!
//! JSON has no `Infinity` or `NaN`: the host sends those numbers as the objects
//! `{ "nonFinite": "Infinity" }` (`"-Infinity"`, `"NaN"`), so they are refused or read as
//! meant, never turned into `null` on the way, and never taken for a string option's
//! value (`toolCallId: NaN` read as the id "NaN").

use serde_json::{Map, Value};

use crate::engine::{CallOptions, ManagerConfig};
use crate::error::{RegistryError, RegistryErrorCode};
use crate::log_lines::LogOptions;
use crate::RetryOverrides;

pub(crate) fn invalid_config(message: impl Into<String>) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidConfig, message)
}

/// The known key closest to `key`, to suggest for a misspelt one: [`closest_name`], else
/// one sharing a prefix of at least 4 letters and most of the shorter one (`retries` ->
/// `retry`, `timeout` -> `timeoutMs`).
pub fn closest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    closest_name(key, known).or_else(|| {
        let folded = fold(key);
        known
            .iter()
            .map(|k| {
                let f = fold(k);
                let common = f.iter().zip(&folded).take_while(|(a, b)| a == b).count();
                (common, f.len().min(folded.len()), *k)
            })
            .filter(|(common, shorter, _)| *common >= 4 && *common * 5 >= *shorter * 3)
            .max_by_key(|(common, _, _)| *common)
            .map(|(_, _, k)| k)
    })
}

/// The known name closest to `name`, to suggest for a typo of it: the same letters
/// ignoring case and `_`/`-`, else at most two edits away (and at most a third of its
/// length plus one, and fewer than `name`'s length); the first of the closest. Unlike
/// [`closest`], no shared prefix is enough: a model that calls `delete_file` is not
/// pointed to `delete_everything`. Linear in the length of each name, so a long
/// untrusted one (a model's tool name, an MCP server's listing) costs no more than
/// reading it.
pub fn closest_name<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let folded = fold(name);
    let folds: Vec<Vec<char>> = known.iter().map(|k| fold(k)).collect();
    if let Some(at) = folds.iter().position(|f| *f == folded) {
        return Some(known[at]);
    }
    known
        .iter()
        .zip(&folds)
        .filter_map(|(k, f)| edit_distance_within(&folded, f, 2.min(f.len() / 3 + 1).min(folded.len().saturating_sub(1))).map(|d| (d, *k)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `s` in lower case without `_` and `-`.
fn fold(s: &str) -> Vec<char> {
    s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// The edit distance of `a` and `b` when it is at most `max`, else `None`: only the
/// cells within `max` of the diagonal are computed.
fn edit_distance_within(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let far = max + 1;
    // Cells outside the band read as `far`: those right of it are never written before
    // the band reaches them, and the one left of it is reset on each row.
    let mut prev: Vec<usize> = (0..=b.len()).map(|j| if j <= max { j } else { far }).collect();
    let mut row = vec![far; b.len() + 1];
    for i in 1..=a.len() {
        let (lo, hi) = (i.saturating_sub(max), (i + max).min(b.len()));
        if lo > 0 {
            row[lo - 1] = far;
        }
        let mut least = far;
        for j in lo..=hi {
            let d = if j == 0 { i } else { (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + usize::from(a[i - 1] != b[j - 1])) };
            row[j] = d.min(far);
            least = least.min(row[j]);
        }
        if least == far {
            return None;
        }
        std::mem::swap(&mut prev, &mut row);
    }
    Some(prev[b.len()]).filter(|&d| d <= max)
}

/// "unknown option `retries` in manager options; did you mean `retry`?" (or the known
/// keys, when none is close).
pub fn unknown_option(key: &str, known: &[&str], what: &str) -> String {
    unknown_option_or_synonym(key, known, &[], what)
}

/// [`unknown_option`], where a key another library uses for the same thing
/// (`synonyms`: theirs, ours) suggests ours: `execute` -> `handler`.
pub fn unknown_option_or_synonym(key: &str, known: &[&str], synonyms: &[(&str, &str)], what: &str) -> String {
    let synonym = synonyms.iter().find(|(theirs, _)| theirs.eq_ignore_ascii_case(key)).map(|(_, ours)| *ours);
    let hint = match synonym.or_else(|| closest(key, known)) {
        Some(k) => format!("; did you mean `{k}`?"),
        None => format!(" (known: {})", known.join(", ")),
    };
    format!("unknown option `{key}` in {what}{hint}")
}

/// Refuses keys of `o` not in `known`, with [`unknown_option`]'s message.
pub fn check_keys(o: &Map<String, Value>, known: &[&str], what: &str, code: RegistryErrorCode) -> Result<(), RegistryError> {
    // The JS host sends a value JSON cannot write as `{ notJson: 'function' }` (a symbol,
    // a function, a BigInt), `{ boxed: 'number' }` or `{ nonFinite: 'NaN' }` (js/manager.mjs
    // optionNumbers): where an object is expected, that is the value's kind, not an option
    // named `notJson`.
    if let (1, Some((marker, Value::String(kind)))) = (o.len(), o.iter().next()) {
        let shown = match marker.as_str() {
            "notJson" if kind == "bigint" => Some("a BigInt".to_string()),
            "notJson" => Some(format!("a {kind}")),
            "boxed" => Some(format!("a boxed {kind} (new {}(...))", capitalized(kind))),
            "nonFinite" => Some(kind.clone()),
            _ => None,
        };
        if let Some(shown) = shown {
            return Err(RegistryError::new(code, format!("{what} must be an object, got {shown}")));
        }
    }
    match o.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(RegistryError::new(code, unknown_option(key, known, what))),
        None => Ok(()),
    }
}

/// `n` as JS writes it (`NaN`, `Infinity`, `5`).
fn js_number(n: f64) -> String {
    match n {
        _ if n.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        _ => serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string()),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// A number the host sent, `Infinity`, `-Infinity` and `NaN` (`{ "nonFinite": "NaN" }`)
/// included.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Object(o) if o.len() == 1 => match o.get("nonFinite").and_then(Value::as_str) {
            Some("Infinity") => Some(f64::INFINITY),
            Some("-Infinity") => Some(f64::NEG_INFINITY),
            Some("NaN") => Some(f64::NAN),
            _ => None,
        },
        _ => None,
    }
}

fn present<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

fn flag(o: &Map<String, Value>, key: &str) -> Result<Option<bool>, RegistryError> {
    match present(o, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(invalid_config(format!("{key} must be true or false"))),
    }
}

fn count(o: &Map<String, Value>, key: &str, min: f64) -> Result<Option<usize>, RegistryError> {
    match present(o, key).map(number) {
        None => Ok(None),
        Some(Some(n)) if n == f64::INFINITY => Ok(Some(usize::MAX)),
        Some(Some(n)) if n.is_finite() && n >= min && n.fract() == 0.0 => Ok(Some(n as usize)),
        Some(_) => Err(invalid_config(format!("{key} must be a whole number >= {min}"))),
    }
}

/// `timeoutMs`: a number > 0; `null` or `Infinity` for none. `None` when absent.
fn timeout(o: &Map<String, Value>) -> Result<Option<Option<f64>>, RegistryError> {
    match o.get("timeoutMs") {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(v) => match number(v) {
            Some(n) if n == f64::INFINITY => Ok(Some(None)),
            Some(n) if n.is_finite() && n > 0.0 => Ok(Some(Some(n))),
            _ => Err(invalid_config("timeoutMs must be a number of milliseconds > 0 (or null for no timeout)")),
        },
    }
}

/// A number of milliseconds > 0, `Infinity` or `null` for none.
fn millis_option(o: &Map<String, Value>, key: &str) -> Result<Option<f64>, RegistryError> {
    match present(o, key).map(number) {
        None => Ok(None),
        Some(Some(n)) if n == f64::INFINITY => Ok(None),
        Some(Some(n)) if n.is_finite() && n > 0.0 => Ok(Some(n)),
        Some(_) => Err(invalid_config(format!("{key} must be a number of milliseconds > 0 (or null for none)"))),
    }
}

pub(crate) const RETRY_KEYS: &[&str] = &["maxAttempts", "baseDelay", "maxDelay", "backoffMultiplier", "jitter", "retryableCategories"];

/// Retry overrides, checked on their own (`maxAttempts >= 1`, delays finite, ...).
pub fn retry_overrides(v: &Value) -> Result<RetryOverrides, RegistryError> {
    let Value::Object(o) = v else { return Err(invalid_config("retry must be an object of retry settings")) };
    check_keys(o, RETRY_KEYS, "retry", RegistryErrorCode::InvalidConfig)?;
    let mut r = RetryOverrides::default();
    let num = |key: &str| -> Result<Option<f64>, RegistryError> {
        match present(o, key) {
            None => Ok(None),
            Some(v) => number(v).map(Some).ok_or_else(|| invalid_config(format!("retry.{key} must be a number"))),
        }
    };
    if let Some(n) = num("maxAttempts")? {
        if !(n.is_finite() && n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX)) {
            return Err(invalid_config(format!("retry.maxAttempts must be a whole number >= 1, got {n}")));
        }
        r.max_attempts = Some(n as u32);
    }
    r.base_delay = num("baseDelay")?;
    r.max_delay = num("maxDelay")?;
    r.backoff_multiplier = num("backoffMultiplier")?;
    if let Some(j) = present(o, "jitter") {
        r.jitter = Some(j.as_str().ok_or_else(|| invalid_config("retry.jitter must be one of none, full, equal, decorrelated"))?.to_string());
    }
    if let Some(c) = present(o, "retryableCategories") {
        let list = c.as_array().and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect::<Option<Vec<_>>>());
        r.retryable_categories = Some(list.ok_or_else(|| invalid_config("retry.retryableCategories must be an array of category names"))?);
    }
    // Checked alone: a baseDelay above the default maxDelay (or the reverse) is for the
    // layers combined to judge, so the delay not given here is taken as unbounded.
    let alone = RetryOverrides { base_delay: r.base_delay.or(Some(0.0)), max_delay: r.max_delay.or(Some(f64::MAX)), ..r.clone() };
    crate::RetryConfig::default().with_overrides(&alone)?;
    Ok(r)
}

const REGISTRY_KEYS: &[&str] = &["strictSchemas", "maxSchemaCost"];

/// A registry's options, as `new ToolRegistry(options)` takes them.
#[derive(Clone, Copy, Debug)]
pub struct RegistryOptions {
    /// Refuse schema keywords the schema's draft does not know (see
    /// [`crate::schema_keywords`]). Default `true`.
    pub strict_schemas: bool,
    /// The most validation steps one value may take against a schema registered here
    /// (see [`crate::schema_cost`]). Default `None`: no bound.
    pub max_schema_cost: Option<u64>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self { strict_schemas: true, max_schema_cost: None }
    }
}

/// Reads a registry's options (`{}` when absent).
///
/// # Errors
/// `INVALID_CONFIG` naming the option.
pub fn registry_options(json: &str) -> Result<RegistryOptions, RegistryError> {
    let value: Value = serde_json::from_str(json).map_err(|e| invalid_config(format!("registry options are not JSON: {e}")))?;
    let o = match value {
        Value::Null => return Ok(RegistryOptions::default()),
        Value::Object(o) => o,
        _ => return Err(invalid_config("registry options must be an object")),
    };
    check_keys(&o, REGISTRY_KEYS, "registry options", RegistryErrorCode::InvalidConfig)?;
    Ok(RegistryOptions {
        strict_schemas: flag(&o, "strictSchemas")?.unwrap_or(true),
        // `Infinity` (sent as null) or absent: no bound.
        max_schema_cost: count(&o, "maxSchemaCost", 1.0)?.filter(|n| *n != usize::MAX).map(|n| n as u64),
    })
}

const MANAGER_KEYS: &[&str] = &[
    "retry", "timeoutMs", "maxConcurrency", "historyLimit", "validation", "logging", "logArguments", "truncateLogs",
    "metadata", "redact", "logger", "auditLog", "auditSync", "needsApproval", "approvalTimeoutMs", "resetTimeoutOnProgress",
    "maxTotalTimeoutMs", "maxOutputChars", "journal", "toModelError",
];

/// What a manager's options ask of the host itself.
#[derive(Clone, Debug, Default)]
pub struct HostOptions {
    /// A JS logger receives the log lines (else they go to `tracing`).
    pub logger: bool,
    pub audit_log: Option<String>,
    /// How each audit record is pushed to the file (`auditSync`).
    pub audit_sync: crate::audit::AuditSync,
    /// The most characters of a result a model is sent (`executeToolCalls` replies).
    pub max_output_chars: Option<usize>,
    /// The journal's URL (`journal`), which the host opens.
    pub journal: Option<String>,
}

/// Reads a manager's options (`{}` when absent).
///
/// # Errors
/// `INVALID_CONFIG` naming the option.
pub fn manager_options(json: &str) -> Result<(ManagerConfig, HostOptions), RegistryError> {
    let mut config = ManagerConfig::default();
    let mut host = HostOptions::default();
    let value: Value = serde_json::from_str(json).map_err(|e| invalid_config(format!("options are not JSON: {e}")))?;
    let o = match value {
        Value::Null => return Ok((config, host)),
        Value::Object(o) => o,
        _ => return Err(invalid_config("options must be an object")),
    };
    check_keys(&o, MANAGER_KEYS, "manager options", RegistryErrorCode::InvalidConfig)?;
    if let Some(r) = present(&o, "retry") {
        config.retry = config.retry.with_overrides(&retry_overrides(r)?)?;
    }
    if let Some(t) = timeout(&o)? {
        config.timeout_ms = t;
    }
    if let Some(n) = count(&o, "maxConcurrency", 1.0)? {
        config.max_concurrency = n;
    }
    if let Some(n) = count(&o, "historyLimit", 0.0)? {
        config.history_limit = n;
    }
    if let Some(v) = flag(&o, "validation")? {
        config.validation = v;
    }
    if let Some(r) = present(&o, "redact") {
        let list = r.as_array().and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect::<Option<Vec<_>>>());
        config.redact = list.ok_or_else(|| invalid_config("redact must be an array of strings"))?;
    }
    let truncate_logs = count(&o, "truncateLogs", 0.0)?.unwrap_or(100);
    let log_arguments = flag(&o, "logArguments")?.unwrap_or(true);
    if flag(&o, "logging")?.unwrap_or(false) {
        config.logging = Some(LogOptions { log_arguments, truncate_logs, redact: config.redact.clone() });
    }
    config.metadata = flag(&o, "metadata")?.unwrap_or(false);
    if let Some(v) = present(&o, "needsApproval") {
        config.needs_approval = serde_json::from_value(v.clone()).map_err(|_| invalid_config("needsApproval must be true, false or a function (args, ctx) => boolean"))?;
    }
    config.approval_timeout_ms = millis_option(&o, "approvalTimeoutMs")?;
    config.reset_timeout_on_progress = flag(&o, "resetTimeoutOnProgress")?.unwrap_or(false);
    config.max_total_timeout_ms = millis_option(&o, "maxTotalTimeoutMs")?;
    host.max_output_chars = count(&o, "maxOutputChars", 1.0)?;
    // The host keeps the function and sends `true` for it.
    if present(&o, "toModelError").is_some_and(|v| v != &Value::Bool(true)) {
        return Err(invalid_config("toModelError must be a function (error, info) => string"));
    }
    host.logger = present(&o, "logger").is_some();
    host.audit_log = match present(&o, "auditLog") {
        None => None,
        // No file has that path: every record would fail to open it.
        Some(Value::String(p)) if p.is_empty() => return Err(invalid_config("auditLog must be a file path, not '' (an empty string)")),
        Some(Value::String(p)) => Some(p.clone()),
        Some(_) => return Err(invalid_config("auditLog must be a file path (a string)")),
    };
    host.audit_sync = match present(&o, "auditSync") {
        None => crate::audit::AuditSync::default(),
        Some(v) => audit_sync(v)?,
    };
    if host.audit_sync == crate::audit::AuditSync::Fsync && host.audit_log.is_none() {
        // The durability asked for has no file to give it.
        return Err(invalid_config("auditSync: 'fsync' syncs the auditLog file, but auditLog is not set: give auditLog the file's path, or leave auditSync out"));
    }
    if let Some(v) = present(&o, "journal") {
        let (url, policy) = journal(v)?;
        host.journal = Some(url);
        config.journal = Some(policy);
    }
    config.check()?;
    Ok((config, host))
}

const JOURNAL_KEYS: &[&str] = &["url", "retentionMs", "leaseMs", "pollMs", "operationTimeoutMs"];

/// `journal`: a URL, or `{ url, retentionMs?, leaseMs?, pollMs?, operationTimeoutMs? }`.
fn journal(v: &Value) -> Result<(String, crate::journal::JournalPolicy), RegistryError> {
    let mut policy = crate::journal::JournalPolicy::default();
    let url = match v {
        Value::String(url) => url.clone(),
        Value::Object(o) => {
            check_keys(o, JOURNAL_KEYS, "journal", RegistryErrorCode::InvalidConfig).map_err(|e| match e.message.strip_prefix("journal must be an object, got ") {
                // A function or a symbol: a string is as good as an object here.
                Some(shown) => invalid_config(format!("journal must be a URL ('sqlite:<path>' or 'postgres://…') or {{ url, retentionMs?, leaseMs?, pollMs?, operationTimeoutMs? }}, got {shown}")),
                None => e,
            })?;
            let url = match o.get("url") {
                Some(Value::String(url)) => url.clone(),
                _ => return Err(invalid_config("journal.url must be a string: 'sqlite:<path>' or 'postgres://…'")),
            };
            // At most 2^53 - 1: the journal keeps times as i64 milliseconds, and a larger
            // number (1e19) wrapped negative, so a "keep for ever" retention deleted every
            // outcome at once and a long lease had always run out.
            const SAFE: (f64, &str) = (9_007_199_254_740_991.0, "Number.MAX_SAFE_INTEGER");
            // SQLite counts its busy timeout in an i32 of milliseconds.
            const I32: (f64, &str) = (i32::MAX as f64, "about 24.8 days");
            let ms = |key: &str, min: f64, (max, max_is): (f64, &str)| -> Result<Option<u64>, RegistryError> {
                match present(o, key).map(number) {
                    None => Ok(None),
                    Some(Some(n)) if n.is_finite() && (min..=max).contains(&n) && n.fract() == 0.0 => Ok(Some(n as u64)),
                    Some(_) => Err(invalid_config(format!("journal.{key} must be a whole number of milliseconds from {min} to {max} ({max_is})"))),
                }
            };
            if let Some(n) = ms("retentionMs", 1.0, SAFE)? {
                policy.retention_ms = n;
            }
            if let Some(n) = ms("leaseMs", 100.0, SAFE)? {
                policy.lease_ms = n;
            }
            if let Some(n) = ms("pollMs", 1.0, SAFE)? {
                policy.poll_ms = n;
            }
            policy.operation_timeout_ms = ms("operationTimeoutMs", 1.0, I32)?;
            url
        }
        _ => return Err(invalid_config("journal must be a URL ('sqlite:<path>' or 'postgres://…') or { url, retentionMs?, leaseMs?, pollMs?, operationTimeoutMs? }")),
    };
    Ok((url, policy))
}

/// `auditSync`: one of [`crate::audit::AuditSync::NAMES`]; a misspelt one is refused with
/// the closest.
fn audit_sync(v: &Value) -> Result<crate::audit::AuditSync, RegistryError> {
    use crate::audit::AuditSync;
    let names = AuditSync::NAMES;
    let expected = || format!("auditSync must be '{}' (the default) or '{}'", names[0], names[1]);
    let name = v.as_str().ok_or_else(|| match number(v) {
        Some(n) => invalid_config(format!("{}, not {}", expected(), js_number(n))),
        None => invalid_config(format!("{}, not {v}", expected())),
    })?;
    AuditSync::parse(name).ok_or_else(|| {
        let hint = closest(name, names).map_or(String::new(), |k| format!("; did you mean '{k}'?"));
        invalid_config(format!("{}, not '{name}'{hint}", expected()))
    })
}

/// `context` and `authInfo` are the host's: they stay on the JS side (`ctx.context`,
/// `ctx.authInfo`) and never come here; they are listed so that a misspelt one is
/// refused with it suggested.
const CALL_KEYS: &[&str] = &[
    "toolCallId", "sessionId", "timeoutMs", "retry", "signal", "resetTimeoutOnProgress", "maxTotalTimeoutMs", "approved", "context",
    "authInfo", "idempotencyKey",
];

/// Why call options could not be read. JSON.stringify writes a lone surrogate (an id cut
/// inside an emoji) as a `\uD83D` escape that is not Unicode: the message names the option
/// it is in, not JSON the caller never wrote. Only on this error path.
fn unreadable_call_options(json: &str, e: &serde_json::Error) -> RegistryError {
    let text = e.to_string();
    if text.contains("surrogate") || text.contains("hex escape") {
        // The error's column is in the option's string: the key before it names it.
        let mut at = e.column().saturating_sub(1).min(json.len());
        while !json.is_char_boundary(at) {
            at -= 1;
        }
        let name = json[..at].rfind("\":").and_then(|end| json[..end].rfind('"').map(|start| &json[start + 1..end]));
        if let Some(name) = name.filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric())) {
            return invalid_config(format!("{name} is not well-formed Unicode: it holds a lone surrogate (a string cut inside a character such as an emoji)"));
        }
        return invalid_config("a call option's string is not well-formed Unicode: it holds a lone surrogate (a string cut inside a character such as an emoji)");
    }
    invalid_config(format!("call options are not JSON: {e}"))
}

/// Reads a call's options (`signal` is the host's: only its `aborted` state comes here,
/// as `aborted`).
///
/// # Errors
/// `INVALID_CONFIG` naming the option.
pub fn call_options(json: &str, aborted: bool) -> Result<CallOptions, RegistryError> {
    let mut call = CallOptions { already_cancelled: aborted, ..CallOptions::default() };
    if json.is_empty() {
        return Ok(call);
    }
    let value: Value = serde_json::from_str(json).map_err(|e| unreadable_call_options(json, &e))?;
    let o = match value {
        Value::Null => return Ok(call),
        Value::Object(o) => o,
        _ => return Err(invalid_config("call options must be an object")),
    };
    check_keys(&o, CALL_KEYS, "call options", RegistryErrorCode::InvalidConfig)?;
    let string = |key: &str| match present(&o, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid_config(format!("{key} must be a string"))),
    };
    call.tool_call_id = string("toolCallId")?;
    call.idempotency_key = string("idempotencyKey")?;
    if call.idempotency_key.as_deref() == Some("") {
        return Err(invalid_config("idempotencyKey must not be empty"));
    }
    call.session_id = string("sessionId")?;
    match timeout(&o)? {
        Some(Some(ms)) => call.timeout_ms = Some(ms),
        Some(None) => call.timeout_ms = Some(f64::INFINITY),
        None => {}
    }
    if let Some(r) = present(&o, "retry") {
        call.retry = Some(retry_overrides(r)?);
    }
    call.reset_timeout_on_progress = flag(&o, "resetTimeoutOnProgress")?;
    call.max_total_timeout_ms = millis_option(&o, "maxTotalTimeoutMs")?;
    call.preapproved = match present(&o, "approved") {
        None | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(None),
        Some(v @ Value::Object(a)) if number(v).is_none() => {
            check_keys(a, &["by"], "approved", RegistryErrorCode::InvalidConfig)?;
            match a.get("by") {
                None | Some(Value::Null) => Some(None),
                Some(Value::String(by)) => Some(Some(by.clone())),
                Some(_) => return Err(invalid_config("approved.by must be a string")),
            }
        }
        Some(_) => return Err(invalid_config("approved must be true or { by: string }")),
    };
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSON.stringify writes a lone surrogate as an escape serde_json refuses: the error
    /// spoke of "unexpected end of hex escape at line 1 column 32", naming no option.
    #[test]
    fn a_lone_surrogate_is_refused_naming_its_option() {
        for (json, name) in [
            (r#"{"idempotencyKey":"order-\ud83d"}"#, "idempotencyKey"),
            (r#"{"toolCallId":"é-\udc00x","sessionId":"s"}"#, "toolCallId"),
        ] {
            let e = call_options(json, false).unwrap_err();
            assert!(e.message.starts_with(&format!("{name} is not well-formed Unicode")), "{}", e.message);
        }
    }

    #[test]
    fn suggests_the_closest_known_key() {
        assert_eq!(closest("input_schema", &["name", "inputSchema", "handler"]), Some("inputSchema"));
        assert_eq!(closest("retries", MANAGER_KEYS), Some("retry"));
        assert_eq!(closest("timeout", MANAGER_KEYS), Some("timeoutMs"));
        assert_eq!(closest("zzz", MANAGER_KEYS), None);
        assert_eq!(closest("fsynk", crate::audit::AuditSync::NAMES), Some("fsync"));
        assert_eq!(closest("FSYNC", crate::audit::AuditSync::NAMES), Some("fsync"));
    }

    #[test]
    fn the_banded_distance_is_the_edit_distance_up_to_its_bound() {
        fn levenshtein(a: &[char], b: &[char]) -> usize {
            let mut row: Vec<usize> = (0..=b.len()).collect();
            for (i, ca) in a.iter().enumerate() {
                let mut diagonal = row[0];
                row[0] = i + 1;
                for (j, cb) in b.iter().enumerate() {
                    let above = row[j + 1];
                    row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
                    diagonal = above;
                }
            }
            row[b.len()]
        }
        // Every pair of words of up to 5 letters over `ab`, and some longer ones.
        let mut words: Vec<Vec<char>> = vec![vec![]];
        for len in 1..=5 {
            for bits in 0..1u32 << len {
                words.push((0..len).map(|i| if bits >> i & 1 == 1 { 'b' } else { 'a' }).collect());
            }
        }
        for w in ["kitten", "sitting", "get_weather", "get_wether", "fials", "fails", "retries", "retry"] {
            words.push(w.chars().collect());
        }
        let mut compared = 0;
        for a in &words {
            for b in &words {
                for max in 0..=3 {
                    let full = levenshtein(a, b);
                    assert_eq!(edit_distance_within(a, b, max), Some(full).filter(|&d| d <= max), "{a:?} {b:?} within {max}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 16_000, "{compared}");
        // A name far longer than any known one is read once, not compared cell by cell.
        let long = "x".repeat(1_000_000);
        assert_eq!(closest(&long, &["add", "fails"]), None);
        assert_eq!(closest("fials", &["add", "fails", &long]), Some("fails"));
        // A shared prefix names a key, not a tool.
        assert_eq!(closest("delete_file", &["delete_everything"]), Some("delete_everything"));
        assert_eq!(closest_name("delete_file", &["delete_everything"]), None);
        assert_eq!(closest_name("Get-Wether", &["get_weather"]), Some("get_weather"));
        assert_eq!(closest_name("a", &["b"]), None, "a whole name replaced is no typo");
    }

    #[test]
    fn refuses_unknown_and_mistyped_options_by_name() {
        let e = manager_options(r#"{"timeout":5000}"#).unwrap_err();
        assert_eq!(e.message, "unknown option `timeout` in manager options; did you mean `timeoutMs`?");
        assert_eq!(manager_options(r#"{"metadata":{"service":"api"}}"#).unwrap_err().message, "metadata must be true or false");
        assert!(manager_options(r#"{"retry":{"baseDelay":{"nonFinite":"NaN"}}}"#).unwrap_err().message.contains("baseDelay"));
        assert_eq!(manager_options(r#"{"maxConcurrency":{"nonFinite":"Infinity"}}"#).unwrap().0.max_concurrency, usize::MAX);
        assert_eq!(manager_options(r#"{"maxConcurrency":{"nonFinite":"NaN"}}"#).unwrap_err().message, "maxConcurrency must be a whole number >= 1");
        // A string is not a number, "Infinity" included.
        assert_eq!(manager_options(r#"{"maxConcurrency":"Infinity"}"#).unwrap_err().message, "maxConcurrency must be a whole number >= 1");
        // Nor is a number that JSON cannot write a string option's value.
        for key in ["toolCallId", "sessionId", "idempotencyKey"] {
            assert_eq!(call_options(&format!(r#"{{"{key}":{{"nonFinite":"NaN"}}}}"#), false).unwrap_err().message, format!("{key} must be a string"));
        }
        assert_eq!(manager_options(r#"{"auditLog":{"nonFinite":"NaN"}}"#).unwrap_err().message, "auditLog must be a file path (a string)");
        assert_eq!(manager_options(r#"{"retry":{"nonFinite":"Infinity"}}"#).unwrap_err().message, "retry must be an object, got Infinity");
        assert_eq!(manager_options(r#"{"auditSync":{"nonFinite":"NaN"}}"#).unwrap_err().message, "auditSync must be 'flush' (the default) or 'fsync', not NaN");
        assert_eq!(call_options(r#"{"approved":{"nonFinite":"NaN"}}"#, false).unwrap_err().message, "approved must be true or { by: string }");
        assert_eq!(manager_options(r#"{"timeoutMs":null}"#).unwrap().0.timeout_ms, None);
        let e = call_options(r#"{"retry":{"maxAttempt":2}}"#, false).unwrap_err();
        assert_eq!(e.message, "unknown option `maxAttempt` in retry; did you mean `maxAttempts`?");
        assert_eq!(call_options(r#"{"sessionId":42}"#, false).unwrap_err().message, "sessionId must be a string");
    }

    #[test]
    fn audit_options_that_would_lose_every_record_are_refused() {
        assert_eq!(manager_options(r#"{"auditLog":""}"#).unwrap_err().message, "auditLog must be a file path, not '' (an empty string)");
        assert!(manager_options(r#"{"auditSync":"fsync"}"#).unwrap_err().message.starts_with("auditSync: 'fsync' syncs the auditLog file, but auditLog is not set"));
        assert!(manager_options(r#"{"auditSync":"fsync","auditLog":"a.jsonl"}"#).is_ok());
        assert!(manager_options(r#"{"auditSync":"flush"}"#).is_ok());
        // A misspelt auditLog is named as that, not as a missing one.
        assert!(manager_options(r#"{"auditSync":"fsync","auditlog":"a.jsonl"}"#).unwrap_err().message.contains("did you mean `auditLog`?"));
    }

    #[test]
    fn a_value_json_cannot_write_is_named_where_an_object_is_expected() {
        // What the JS host sends for a function, a BigInt or a boxed primitive: it read as
        // an option named `notJson`.
        assert_eq!(manager_options(r#"{"retry":{"notJson":"function"}}"#).unwrap_err().message, "retry must be an object, got a function");
        assert_eq!(call_options(r#"{"retry":{"notJson":"bigint"}}"#, false).unwrap_err().message, "retry must be an object, got a BigInt");
        assert_eq!(manager_options(r#"{"retry":{"boxed":"number"}}"#).unwrap_err().message, "retry must be an object, got a boxed number (new Number(...))");
        assert_eq!(
            manager_options(r#"{"journal":{"notJson":"function"}}"#).unwrap_err().message,
            "journal must be a URL ('sqlite:<path>' or 'postgres://…') or { url, retentionMs?, leaseMs?, pollMs?, operationTimeoutMs? }, got a function"
        );
    }

    #[test]
    fn the_journal_operation_timeout_is_read_and_bounded() {
        let policy = |json: &str| manager_options(json).map(|(config, _)| config.journal.unwrap().operation_timeout_ms);
        assert_eq!(policy(r#"{"journal":"sqlite:x.db"}"#).unwrap(), None);
        assert_eq!(policy(r#"{"journal":{"url":"sqlite:x.db","operationTimeoutMs":2500}}"#).unwrap(), Some(2500));
        assert_eq!(policy(r#"{"journal":{"url":"sqlite:x.db","operationTimeoutMs":2147483647}}"#).unwrap(), Some(2147483647));
        for bad in ["0", "2147483648", "1.5", "\"5\"", r#"{"nonFinite":"Infinity"}"#] {
            let e = policy(&format!(r#"{{"journal":{{"url":"sqlite:x.db","operationTimeoutMs":{bad}}}}}"#)).unwrap_err();
            assert_eq!(e.message, "journal.operationTimeoutMs must be a whole number of milliseconds from 1 to 2147483647 (about 24.8 days)", "{bad}");
        }
    }

    #[test]
    fn call_retry_checked_alone_allows_a_base_delay_the_manager_may_allow() {
        // baseDelay above the default maxDelay: fine alone, the manager may allow more.
        assert!(call_options(r#"{"retry":{"baseDelay":60000}}"#, false).is_ok());
        assert!(call_options(r#"{"retry":{"baseDelay":100,"maxDelay":10}}"#, false).is_err());
        assert!(call_options(r#"{"retry":{"maxAttempts":0}}"#, false).is_err());
    }
}
