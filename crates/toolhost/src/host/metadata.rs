//! A tool definition's `metadata` as a host sends it, read as strictly as the manager's
//! options: every key known, every nested object (`retry`, `circuitBreaker`) too, and a
//! value of the wrong type refused naming the field and what it takes.
//!
//! Read by serde alone, `metadata.retry: { maxAttempt: 5 }` became `retry: {}` and
//! `timeoutMs: "100"` a message about `u64`: a typo turned the tool's policy off.

use serde_json::{Map, Value};

use super::options::{check_keys, retry_overrides, unknown_option};
use crate::declaration::{CircuitBreakerConfig, NeedsApproval, ToolMetadata, METADATA_KEYS};
use crate::error::{RegistryError, RegistryErrorCode};

const CIRCUIT_BREAKER_KEYS: &[&str] = &["failureThreshold", "recoveryTimeoutMs", "successThreshold"];

fn invalid(message: String) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidDefinition, message)
}

/// How a JSON value is named in a message: `the string "100"`, `an array`.
pub(crate) fn shown(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Reads `metadata` of the tool `label` names (`tool 'x'`).
///
/// # Errors
/// `INVALID_DEFINITION` naming the key: an unknown one (with the closest known one), or
/// a value of the wrong type (with the type it takes and what it was).
pub fn read_metadata(label: &str, value: &Value) -> Result<ToolMetadata, RegistryError> {
    let o = match value {
        Value::Null => return Ok(ToolMetadata::default()),
        Value::Object(o) => o,
        other => return Err(invalid(format!("{label}: metadata must be an object, got {}", shown(other)))),
    };
    if let Some(key) = o.keys().find(|k| !METADATA_KEYS.contains(&k.as_str())) {
        let message = unknown_option(key, METADATA_KEYS, &format!("the metadata of {label}"));
        return Err(invalid(format!("{message} (keep your own data under metadata.custom)")));
    }
    let field = Field { label, o };
    let mut m = ToolMetadata {
        title: field.string("title")?,
        category: field.string("category")?,
        tags: field.strings("tags")?,
        idempotent: field.flag("idempotent")?,
        read_only: field.flag("readOnly")?,
        destructive: field.flag("destructive")?,
        open_world: field.flag("openWorld")?,
        timeout_ms: field.whole("timeoutMs", 1, "a whole number of milliseconds > 0")?,
        self_instrumented: field.flag("selfInstrumented")?.unwrap_or(false),
        approval_timeout_ms: field.whole("approvalTimeoutMs", 1, "a whole number of milliseconds > 0")?,
        reset_timeout_on_progress: field.flag("resetTimeoutOnProgress")?,
        max_total_timeout_ms: field.whole("maxTotalTimeoutMs", 1, "a whole number of milliseconds > 0")?,
        max_output_chars: field.whole("maxOutputChars", 1, "a whole number of characters > 0")?,
        ..ToolMetadata::default()
    };
    if let Some(v) = field.get("needsApproval") {
        m.needs_approval = Some(serde_json::from_value::<NeedsApproval>(v.clone()).map_err(|_| {
            invalid(format!("{label}: metadata.needsApproval must be true or false (or a function, given as the definition's needsApproval), got {}", shown(v)))
        })?);
    }
    if let Some(v) = field.get("retry") {
        let Value::Object(r) = v else {
            return Err(invalid(format!("{label}: metadata.retry must be an object of retry settings, got {}", shown(v))));
        };
        let keys = super::options::RETRY_KEYS;
        check_keys(r, keys, &format!("metadata.retry of {label}"), RegistryErrorCode::InvalidDefinition)?;
        m.retry = Some(retry_overrides(v).map_err(|e| invalid(format!("{label}: metadata.{}", e.message)))?);
    }
    if let Some(v) = field.get("circuitBreaker") {
        m.circuit_breaker = Some(circuit_breaker(label, v)?);
    }
    if let Some(v) = field.get("effect") {
        let effect = v.as_str().and_then(crate::journal::Effect::parse);
        m.effect = Some(effect.ok_or_else(|| {
            let hint = v.as_str().and_then(|s| super::options::closest(s, crate::journal::Effect::NAMES)).map_or(String::new(), |k| format!("; did you mean '{k}'?"));
            invalid(format!("{label}: metadata.effect must be 'read', 'idempotent' or 'once', got {}{hint}", shown(v)))
        })?);
    }
    for key in ["custom", "examples"] {
        if let Some(v) = o.get(key) {
            m.extra.insert(key.to_string(), v.clone());
        }
    }
    Ok(m)
}

fn circuit_breaker(label: &str, v: &Value) -> Result<CircuitBreakerConfig, RegistryError> {
    let Value::Object(o) = v else {
        return Err(invalid(format!(
            "{label}: metadata.circuitBreaker must be an object {{ failureThreshold, recoveryTimeoutMs, successThreshold? }}, got {}",
            shown(v)
        )));
    };
    check_keys(o, CIRCUIT_BREAKER_KEYS, &format!("metadata.circuitBreaker of {label}"), RegistryErrorCode::InvalidDefinition)?;
    let field = Field { label, o };
    let required = |key: &str, min: u64, what: &str| {
        field.whole(&format!("circuitBreaker.{key}"), min, what).and_then(|n| {
            n.ok_or_else(|| invalid(format!("{label}: metadata.circuitBreaker.{key} is required ({what})")))
        })
    };
    Ok(CircuitBreakerConfig {
        failure_threshold: required("failureThreshold", 1, "a whole number of failures >= 1")? as u32,
        recovery_timeout_ms: required("recoveryTimeoutMs", 0, "a whole number of milliseconds >= 0")?,
        success_threshold: field.whole("circuitBreaker.successThreshold", 1, "a whole number of successes >= 1")?.map_or(1, |n| n as u32),
    })
}

/// The fields of one metadata object, read with messages naming `metadata.<key>`.
struct Field<'a> {
    label: &'a str,
    o: &'a Map<String, Value>,
}

impl Field<'_> {
    /// The value of `key` (the last segment of a dotted name), `null` read as absent.
    fn get(&self, key: &str) -> Option<&Value> {
        let own = key.rsplit('.').next().unwrap_or(key);
        self.o.get(own).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, takes: &str, v: &Value) -> RegistryError {
        invalid(format!("{}: metadata.{key} must be {takes}, got {}", self.label, shown(v)))
    }

    fn string(&self, key: &str) -> Result<Option<String>, RegistryError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(key, "a string", v)),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, RegistryError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(v @ Value::Array(items)) => items.iter().map(|s| s.as_str().map(str::to_string).ok_or_else(|| self.wrong(key, "an array of strings", v))).collect(),
            Some(v) => Err(self.wrong(key, "an array of strings", v)),
        }
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, RegistryError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(key, "true or false", v)),
        }
    }

    /// A whole number >= `min`. `"Infinity"` (how the host sends `Infinity`) is not one,
    /// nor is `null`: a manager's or call's `timeoutMs: null` means no limit, so here it
    /// read as absent gave the tool the manager's limit instead, in silence.
    fn whole(&self, key: &str, min: u64, takes: &str) -> Result<Option<u64>, RegistryError> {
        let own = key.rsplit('.').next().unwrap_or(key);
        if self.o.get(own).is_some_and(Value::is_null) {
            return Err(invalid(format!("{}: metadata.{key} must be {takes}, got null (leave it out for the default)", self.label)));
        }
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= 9_007_199_254_740_991.0 => Ok(Some(n as u64)),
                _ => Err(self.wrong(key, takes, v)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(metadata: Value) -> String {
        read_metadata("tool 't'", &metadata).unwrap_err().message
    }

    #[test]
    fn nested_objects_are_as_strict_as_the_top_level() {
        assert_eq!(refused(json!({"retry": {"maxAttempt": 5}})), "unknown option `maxAttempt` in metadata.retry of tool 't'; did you mean `maxAttempts`?");
        assert_eq!(
            refused(json!({"circuitBreaker": {"failureThreshold": 3, "recoveryTimeout": 100}})),
            "unknown option `recoveryTimeout` in metadata.circuitBreaker of tool 't'; did you mean `recoveryTimeoutMs`?"
        );
        assert_eq!(refused(json!({"timeout": 5})), "unknown option `timeout` in the metadata of tool 't'; did you mean `timeoutMs`? (keep your own data under metadata.custom)");
    }

    #[test]
    fn a_wrong_type_names_the_field_and_what_it_takes() {
        assert_eq!(refused(json!({"timeoutMs": "100"})), "tool 't': metadata.timeoutMs must be a whole number of milliseconds > 0, got the string \"100\"");
        assert_eq!(refused(json!({"timeoutMs": null})), "tool 't': metadata.timeoutMs must be a whole number of milliseconds > 0, got null (leave it out for the default)");
        assert_eq!(
            refused(json!({"circuitBreaker": {"failureThreshold": 2, "recoveryTimeoutMs": 10, "successThreshold": null}})),
            "tool 't': metadata.circuitBreaker.successThreshold must be a whole number of successes >= 1, got null (leave it out for the default)"
        );
        assert_eq!(refused(json!({"tags": "x"})), "tool 't': metadata.tags must be an array of strings, got the string \"x\"");
        assert_eq!(refused(json!({"readOnly": "yes"})), "tool 't': metadata.readOnly must be true or false, got the string \"yes\"");
        assert_eq!(refused(json!({"retry": {"baseDelay": "1s"}})), "tool 't': metadata.retry.baseDelay must be a number");
        assert_eq!(refused(json!({"retry": 3})), "tool 't': metadata.retry must be an object of retry settings, got the number 3");
        assert_eq!(
            refused(json!({"circuitBreaker": {"failureThreshold": 0, "recoveryTimeoutMs": 1}})),
            "tool 't': metadata.circuitBreaker.failureThreshold must be a whole number of failures >= 1, got the number 0"
        );
        assert_eq!(refused(json!({"circuitBreaker": {"failureThreshold": 2}})), "tool 't': metadata.circuitBreaker.recoveryTimeoutMs is required (a whole number of milliseconds >= 0)");
        assert_eq!(refused(json!([1])), "tool 't': metadata must be an object, got an array");
    }

    #[test]
    fn reads_every_documented_key() {
        let m = read_metadata(
            "tool 't'",
            &json!({"title": "T", "tags": ["a"], "timeoutMs": 50, "retry": {"maxAttempts": 5}, "circuitBreaker": {"failureThreshold": 2, "recoveryTimeoutMs": 10},
                    "needsApproval": true, "maxOutputChars": 100, "custom": {"owner": "me"}, "examples": [{}], "readOnly": null}),
        )
        .unwrap();
        assert_eq!((m.title.as_deref(), m.tags.as_slice(), m.timeout_ms), (Some("T"), &["a".to_string()][..], Some(50)));
        assert_eq!(m.retry.unwrap().max_attempts, Some(5));
        assert_eq!(m.circuit_breaker.unwrap().success_threshold, 1);
        assert_eq!(m.needs_approval, Some(NeedsApproval::Always));
        assert_eq!((m.max_output_chars, m.read_only), (Some(100), None));
        assert_eq!(m.extra["custom"], json!({"owner": "me"}));
    }
}
