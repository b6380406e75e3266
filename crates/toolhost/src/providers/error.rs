//! The error type shared by every provider adapter.

use std::fmt;

use super::Provider;

/// Why a declaration could not be converted or a payload could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum ProviderError {
    /// `Provider::from_str` was given a name it does not know.
    UnknownProvider { name: String },
    /// A tool's schema cannot be expressed in the target format.
    UnsupportedSchema {
        /// The target format, e.g. `"OpenAI strict mode"` or `"Gemini"`.
        target: &'static str,
        tool: String,
        /// JSON pointer into the tool's input schema (`""` = root).
        schema_path: String,
        reason: String,
    },
    /// A provider payload does not have the shape the provider documents.
    InvalidPayload {
        provider: Provider,
        /// JSON pointer into the payload that was passed in.
        path: String,
        reason: String,
    },
    /// A payload that is not in the provider's format at all (another provider's
    /// response, an OpenAI choice instead of its message, ...): it is refused rather than
    /// read as "no tool calls".
    WrongShape {
        provider: Provider,
        /// JSON pointer into the payload (`""`: the payload itself).
        path: String,
        /// The shapes the provider accepts.
        expected: &'static str,
        /// What was given, as [`super::shape::recognise`] reads it.
        given: String,
        /// What to do instead: the provider whose format it is, or how to hand it over.
        hint: Option<String>,
    },
    /// An AG-UI tool call was started but no `TOOL_CALL_END` arrived.
    UnterminatedToolCall { call_id: String, name: String },
}

impl ProviderError {
    pub(crate) fn payload(
        provider: Provider,
        path: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        ProviderError::InvalidPayload {
            provider,
            path: path.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::UnknownProvider { name } => {
                const NAMES: &[&str] = &["openai", "openai-responses", "anthropic", "gemini", "ag-ui", "mcp"];
                write!(f, "unknown provider `{name}`; expected one of: {}", NAMES.join(", "))?;
                match crate::host::options::closest(name.trim(), NAMES) {
                    Some(near) => write!(f, "; did you mean `{near}`?"),
                    None => Ok(()),
                }
            }
            ProviderError::UnsupportedSchema { target, tool, schema_path, reason } => write!(
                f,
                "tool `{tool}`: input schema at `#{schema_path}` cannot be converted for {target}: {reason}"
            ),
            ProviderError::InvalidPayload { provider, path, reason } => {
                write!(f, "invalid {provider} payload at `{path}`: {reason}")
            }
            ProviderError::WrongShape { provider, path, expected, given, hint } => {
                let at = if path.is_empty() { String::new() } else { format!(" at `{path}`") };
                write!(f, "the response is not in the {provider} format{at}: expected {expected}; got {given}")?;
                match hint {
                    Some(hint) => write!(f, ": {hint}"),
                    None => Ok(()),
                }
            }
            ProviderError::UnterminatedToolCall { call_id, name } => write!(
                f,
                "AG-UI tool call `{call_id}` (tool `{name}`) was started but never ended (no TOOL_CALL_END event)"
            ),
        }
    }
}

impl std::error::Error for ProviderError {}
