//! What a tool declares about itself: name, description, input schema and metadata.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{RegistryError, RegistryErrorCode};

/// Longest tool name providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// A tool as a model sees it, plus the metadata the engine reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDeclaration {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub metadata: ToolMetadata,
}

impl ToolDeclaration {
    pub fn new(name: impl Into<String>, description: impl Into<String>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            metadata: ToolMetadata::default(),
        }
    }
}

/// Optional facts about a tool, and the per-tool settings that override a manager's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
    /// Per-tool timeout; a call's own `timeoutMs` wins over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Per-tool retry settings; a call's own settings win over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryOverrides>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circuit_breaker: Option<CircuitBreakerConfig>,
    /// Skip the built-in logging and metadata interceptors for this tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub self_instrumented: bool,
    /// Whether a call waits for a person to approve it before its first attempt; wins
    /// over the manager's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_approval: Option<NeedsApproval>,
    /// How long an approval may wait before the call ends denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_timeout_ms: Option<u64>,
    /// Each progress report restarts the attempt's timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_timeout_on_progress: Option<bool>,
    /// A bound on the whole execution, attempts and backoff included (approval waits
    /// excluded), that progress does not extend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_timeout_ms: Option<u64>,
    /// The most characters of this tool's result a model is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_chars: Option<u64>,
    /// What its calls do to the world (`read`, `idempotent`, `once`): what recovery may
    /// do with a call whose process died. Unset: `read` for `readOnly`, `idempotent`
    /// for `idempotent`, else `once`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<crate::journal::Effect>,
    /// Anything else: the hosts that read definitions as JSON accept only `custom` and
    /// `examples` here, refusing other unknown keys as likely typos.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Whether calls to a tool need approval: always, never, or as the host's own policy
/// decides per call (a JS `needsApproval(args, ctx)` function; written `"ask"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeedsApproval {
    Never,
    Always,
    Ask,
}

impl Serialize for NeedsApproval {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Never => s.serialize_bool(false),
            Self::Always => s.serialize_bool(true),
            Self::Ask => s.serialize_str("ask"),
        }
    }
}

impl<'de> Deserialize<'de> for NeedsApproval {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(false) => Ok(Self::Never),
            Value::Bool(true) => Ok(Self::Always),
            Value::String(s) if s == "ask" => Ok(Self::Ask),
            other => Err(serde::de::Error::custom(format!("needsApproval must be true, false or \"ask\", got {other}"))),
        }
    }
}

/// The metadata keys a tool definition may use (camelCase, as JSON writes them).
pub const METADATA_KEYS: &[&str] = &[
    "title", "category", "tags", "idempotent", "readOnly", "destructive", "openWorld", "timeoutMs", "retry",
    "circuitBreaker", "selfInstrumented", "needsApproval", "approvalTimeoutMs", "resetTimeoutOnProgress",
    "maxTotalTimeoutMs", "maxOutputChars", "effect", "custom", "examples",
];

/// Retry settings where every field is optional, layered call > tool > manager > default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_delay: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable_categories: Option<Vec<String>>,
}

/// Per-tool circuit breaker settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CircuitBreakerConfig {
    /// Consecutive failures that open the circuit.
    pub failure_threshold: u32,
    /// How long the circuit stays open before one trial call is let through.
    pub recovery_timeout_ms: u64,
    /// Successful trial calls needed to close it again.
    #[serde(default = "one")]
    pub success_threshold: u32,
}

fn one() -> u32 {
    1
}

/// Checks a name against `^[a-zA-Z0-9_-]{1,64}$`.
///
/// # Errors
/// `INVALID_TOOL_NAME` naming the offending name.
pub fn check_tool_name(name: &str) -> Result<(), RegistryError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(RegistryError::new(
            RegistryErrorCode::InvalidToolName,
            format!(
                "tool name {name:?} is invalid: use 1 to {MAX_TOOL_NAME_LEN} letters, digits, '_' or '-'"
            ),
        ))
    }
}

/// Checks the parts of a declaration that are not the schema.
///
/// # Errors
/// `INVALID_TOOL_NAME` or `INVALID_DEFINITION`.
pub fn check_declaration(decl: &ToolDeclaration) -> Result<(), RegistryError> {
    check_tool_name(&decl.name)?;
    if decl.description.trim().is_empty() {
        return Err(RegistryError::new(
            RegistryErrorCode::InvalidDefinition,
            format!("tool '{}' has no description: models choose tools by it", decl.name),
        ));
    }
    let refuse = |what: String| Err(RegistryError::new(RegistryErrorCode::InvalidDefinition, format!("tool '{}': {what}", decl.name)));
    if let Some(cb) = &decl.metadata.circuit_breaker {
        if cb.failure_threshold == 0 || cb.success_threshold == 0 {
            return refuse("circuitBreaker thresholds must be at least 1".into());
        }
    }
    if let Some(effect) = decl.metadata.effect {
        use crate::journal::Effect;
        let m = &decl.metadata;
        let contradiction = match effect {
            Effect::Read => m.read_only == Some(false),
            Effect::Idempotent => m.read_only == Some(true) || m.idempotent == Some(false),
            Effect::Once => m.read_only == Some(true) || m.idempotent == Some(true),
        };
        if contradiction {
            return refuse(format!(
                "metadata.effect '{}' contradicts readOnly: {:?} / idempotent: {:?} (effect 'read' is readOnly, 'idempotent' is idempotent, 'once' is neither)",
                effect.as_str(),
                m.read_only,
                m.idempotent
            ));
        }
    }
    // Values no manager could run with are refused here, not at every execute().
    let m = &decl.metadata;
    for (key, value, unit) in [
        ("timeoutMs", m.timeout_ms, "milliseconds"),
        ("approvalTimeoutMs", m.approval_timeout_ms, "milliseconds"),
        ("maxTotalTimeoutMs", m.max_total_timeout_ms, "milliseconds"),
        ("maxOutputChars", m.max_output_chars, "characters"),
    ] {
        if value == Some(0) {
            return refuse(format!("metadata.{key} must be a number of {unit} > 0, got 0"));
        }
    }
    if let Some(o) = &decl.metadata.retry {
        // Each value on its own; baseDelay against maxDelay only when both are set here,
        // since the other may come from the manager.
        let open = crate::retry::RetryConfig { base_delay_ms: 0.0, max_delay_ms: f64::MAX, ..Default::default() };
        if let Err(e) = open.with_overrides(o) {
            return refuse(format!("metadata.{}", e.message));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_provider_pattern() {
        for ok in ["a", "get_weather", "A-1", &"x".repeat(64)] {
            assert!(check_tool_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "dot.name", "ünï", &"x".repeat(65)] {
            let e = check_tool_name(bad).unwrap_err();
            assert_eq!(e.code(), "INVALID_TOOL_NAME", "{bad}");
        }
    }

    #[test]
    fn metadata_keeps_unknown_keys_and_reads_known_ones() {
        let m: ToolMetadata = serde_json::from_value(serde_json::json!({
            "category": "weather", "tags": ["read-only"], "timeoutMs": 50,
            "retry": {"maxAttempts": 5}, "owner": "team-a"
        }))
        .unwrap();
        assert_eq!(m.category.as_deref(), Some("weather"));
        assert_eq!(m.timeout_ms, Some(50));
        assert_eq!(m.retry.unwrap().max_attempts, Some(5));
        assert_eq!(m.extra["owner"], "team-a");
    }
}
