//! Provider adapters: tool declarations out, tool calls in, tool replies out.
//!
//! | provider            | declarations                         | calls / replies         |
//! |---------------------|--------------------------------------|-------------------------|
//! | OpenAI Chat         | [`openai_chat_tools`]                | [`Provider::OpenAi`]    |
//! | OpenAI Responses    | [`openai_responses_tools`]           | [`Provider::OpenAiResponses`] |
//! | Anthropic Messages  | [`anthropic_tools`]                  | [`Provider::Anthropic`] |
//! | Gemini              | [`gemini_tools`]                     | [`Provider::Gemini`]    |
//! | AG-UI               | [`ag_ui_tools`]                      | [`Provider::AgUi`]      |
//! | MCP                 | [`mcp_tools`]                        | [`Provider::Mcp`]       |

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

mod ag_ui;
mod anthropic;
mod call;
mod error;
mod from_gemini_schema;
mod gemini;
mod mcp;
pub mod model_errors;
pub mod model_output;
mod openai;
mod optional_nulls;
mod payload;
mod responses;
mod root_schema;
mod shape;
mod strict;
mod to_gemini_schema;

pub use ag_ui::ag_ui_tools;
pub use anthropic::anthropic_tools;
pub use call::{ToolCall, ToolCallArguments, ToolReply};
pub use error::ProviderError;
pub use from_gemini_schema::gemini_schema_to_json_schema;
pub use gemini::{gemini_function_declaration_to_tool, gemini_tools, GENERATED_ID_PREFIX};
pub use mcp::{mcp_tool, mcp_tools};
pub use openai::openai_chat_tools;
pub use responses::openai_responses_tools;
pub use optional_nulls::drop_optional_nulls;
pub use strict::make_strict_schema;
pub use to_gemini_schema::json_schema_to_gemini_schema;

/// A model provider whose tool-call wire format toolhost speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI Chat Completions (and compatible servers).
    OpenAi,
    /// OpenAI Responses API.
    OpenAiResponses,
    /// Anthropic Messages API.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
    /// AG-UI event streams.
    AgUi,
    /// MCP `tools/call` requests in, `CallToolResult`s out.
    Mcp,
}

impl Provider {
    /// The name accepted by [`FromStr`].
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::AgUi => "ag-ui",
            Provider::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = ProviderError;

    /// Accepts `openai`, `openai-responses`, `anthropic`, `gemini`, `ag-ui`, `mcp`
    /// (ASCII case-insensitive, surrounding whitespace ignored).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Provider::OpenAi),
            "openai-responses" => Ok(Provider::OpenAiResponses),
            "anthropic" => Ok(Provider::Anthropic),
            "gemini" => Ok(Provider::Gemini),
            "ag-ui" => Ok(Provider::AgUi),
            "mcp" => Ok(Provider::Mcp),
            _ => Err(ProviderError::UnknownProvider {
                name: s.to_string(),
            }),
        }
    }
}

/// Extracts the tool calls from a provider payload, in order of appearance.
///
/// See each provider's module for the accepted shapes. Argument text that is
/// not valid JSON becomes [`ToolCallArguments::Malformed`], not an error.
pub fn parse_tool_calls(
    provider: Provider,
    payload: &Value,
) -> Result<Vec<ToolCall>, ProviderError> {
    match provider {
        Provider::OpenAi => openai::parse_tool_calls(payload),
        Provider::OpenAiResponses => responses::parse_tool_calls(payload),
        Provider::Anthropic => anthropic::parse_tool_calls(payload),
        Provider::Gemini => gemini::parse_tool_calls(payload),
        Provider::AgUi => ag_ui::parse_tool_calls(payload),
        Provider::Mcp => mcp::parse_tool_calls(payload),
    }
}

/// Formats tool replies as the provider's input items, in call order.
///
/// OpenAI, Responses and AG-UI get one item per reply; Anthropic and Gemini
/// get a single message carrying every reply (none if `replies` is empty).
pub fn format_replies(provider: Provider, replies: &[ToolReply]) -> Vec<Value> {
    match provider {
        Provider::OpenAi => openai::format_replies(replies),
        Provider::OpenAiResponses => responses::format_replies(replies),
        Provider::Anthropic => anthropic::format_replies(replies),
        Provider::Gemini => gemini::format_replies(replies),
        Provider::AgUi => ag_ui::format_replies(replies),
        Provider::Mcp => mcp::format_replies(replies),
    }
}

/// Whether `id` is one toolhost made up for a call the provider sent without an id (a
/// Gemini `functionCall` without `id`, an MCP request without a JSON-RPC id): such an id
/// says only where the call was in its response, so it cannot recognise the same call
/// sent again. (A provider id that happens to look like one is taken as made up: the
/// call then runs again rather than being wrongly replayed.)
pub fn id_is_generated(provider: Provider, id: &str) -> bool {
    match provider {
        Provider::Gemini => id.starts_with(gemini::GENERATED_ID_PREFIX),
        Provider::Mcp => id.strip_prefix("mcp_").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_round_trip() {
        for p in [
            Provider::OpenAi,
            Provider::OpenAiResponses,
            Provider::Anthropic,
            Provider::Gemini,
            Provider::AgUi,
            Provider::Mcp,
        ] {
            assert_eq!(p.as_str().parse::<Provider>(), Ok(p));
        }
        assert_eq!(" Gemini ".parse::<Provider>(), Ok(Provider::Gemini));
        let err = "cohere".parse::<Provider>().unwrap_err();
        assert!(
            err.to_string().contains("unknown provider `cohere`"),
            "{err}"
        );
        assert!(!err.to_string().contains("did you mean"), "{err}");
        let err = "opnai".parse::<Provider>().unwrap_err();
        assert!(err.to_string().ends_with("; did you mean `openai`?"), "{err}");
    }

    fn all() -> [Provider; 6] {
        [Provider::OpenAi, Provider::OpenAiResponses, Provider::Anthropic, Provider::Gemini, Provider::AgUi, Provider::Mcp]
    }

    /// One call of `t({"q": 1})` in each provider's usual shape.
    fn calls(p: Provider) -> Value {
        use serde_json::json;
        match p {
            Provider::OpenAi => json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "t", "arguments": "{\"q\":1}"}}]}),
            Provider::OpenAiResponses => json!({"object": "response", "output": [{"type": "function_call", "call_id": "c", "name": "t", "arguments": "{\"q\":1}"}]}),
            Provider::Anthropic => json!({"type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "t", "input": {"q": 1}}]}),
            Provider::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "t", "args": {"q": 1}}}]}}]}),
            Provider::AgUi => json!([{"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "t"}, {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{\"q\":1}"}, {"type": "TOOL_CALL_END", "toolCallId": "c"}]),
            Provider::Mcp => json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "t", "arguments": {"q": 1}}}),
        }
    }

    #[test]
    fn each_provider_refuses_every_other_providers_calls_as_the_wrong_shape() {
        for p in all() {
            let read = parse_tool_calls(p, &calls(p)).unwrap();
            assert_eq!((read.len(), read[0].name.as_str()), (1, "t"), "{p}");
            for other in all().into_iter().filter(|o| *o != p) {
                match parse_tool_calls(p, &calls(other)) {
                    Err(ProviderError::WrongShape { provider, given, hint, .. }) => {
                        assert_eq!(provider, p);
                        assert!(hint.is_some_and(|h| h.contains(other.as_str())), "{other} as {p}: {given}");
                    }
                    read => panic!("{other} read as {p}: {read:?}"),
                }
            }
        }
    }

    #[test]
    fn plain_text_answers_have_no_calls() {
        use serde_json::json;
        let texts = [
            (Provider::OpenAi, json!({"role": "assistant", "content": "hi", "refusal": null})),
            (Provider::OpenAiResponses, json!({"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]})),
            (Provider::Anthropic, json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}]})),
            (Provider::Gemini, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}]})),
            (Provider::AgUi, json!([{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}])),
            (Provider::Mcp, json!([])),
        ];
        for (p, text) in texts {
            assert_eq!(parse_tool_calls(p, &text), Ok(Vec::new()), "{p}");
        }
    }
}
