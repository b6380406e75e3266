//! OpenAI Chat Completions: declarations out, a recorded response in, replies out.

mod common;

use toolhost::providers::{
    format_replies, openai_chat_tools, parse_tool_calls, Provider, ToolCall, ToolCallArguments,
    ToolReply,
};
use serde_json::json;

#[test]
fn declarations_without_strict_pass_the_schema_through() {
    let tools = openai_chat_tools(&[common::get_weather()], false).unwrap();
    assert_eq!(
        tools,
        vec![json!({
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the current weather for a city.",
                "parameters": common::get_weather().input_schema
            }
        })]
    );
}

#[test]
fn strict_declarations_rewrite_nested_schemas() {
    let tools = openai_chat_tools(&[common::create_event()], true).unwrap();
    assert_eq!(
        tools,
        vec![json!({
            "type": "function",
            "function": {
                "name": "create_event",
                "description": "Create a calendar event.",
                "parameters": common::create_event_strict_schema(),
                "strict": true
            }
        })]
    );
}

/// Recorded from a Chat Completions response with parallel tool calls.
fn recorded_completion() -> serde_json::Value {
    json!({
        "id": "chatcmpl-B9MHDbslfQhuSHK9C1GNwz1nJrm1b",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_12345xyz", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"}},
                    {"id": "call_67890abc", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"location\":\"Bogotá, Colombia\",\"unit\":\"celsius\"}"}}
                ],
                "refusal": null,
                "annotations": []
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 82, "completion_tokens": 50, "total_tokens": 132},
        "service_tier": "default",
        "system_fingerprint": "fp_fc9f1d7035"
    })
}

#[test]
fn parses_a_recorded_chat_completion() {
    let calls = parse_tool_calls(Provider::OpenAi, &recorded_completion()).unwrap();
    assert_eq!(
        calls,
        vec![
            ToolCall {
                id: "call_12345xyz".into(),
                name: "get_weather".into(),
                arguments: ToolCallArguments::Parsed(json!({"location": "Paris, France"})),
                arguments_at: Some("/choices/0/message/tool_calls/0/function/arguments".into()),
            },
            ToolCall {
                id: "call_67890abc".into(),
                name: "get_weather".into(),
                arguments: ToolCallArguments::Parsed(
                    json!({"location": "Bogotá, Colombia", "unit": "celsius"})
                ),
                arguments_at: Some("/choices/0/message/tool_calls/1/function/arguments".into()),
            },
        ]
    );
    // The assistant message alone gives the same calls, each pointing into the message.
    let message = &recorded_completion()["choices"][0]["message"];
    let alone = parse_tool_calls(Provider::OpenAi, message).unwrap();
    assert_eq!(alone[1].arguments_at.as_deref(), Some("/tool_calls/1/function/arguments"));
    let without_at = |calls: Vec<ToolCall>| calls.into_iter().map(|c| ToolCall { arguments_at: None, ..c }).collect::<Vec<_>>();
    assert_eq!(without_at(alone), without_at(calls));
}

#[test]
fn message_without_tool_calls_has_none() {
    let message = json!({"role": "assistant", "content": "Hello!", "tool_calls": null});
    assert_eq!(
        parse_tool_calls(Provider::OpenAi, &message).unwrap(),
        vec![]
    );
}

#[test]
fn malformed_argument_text_is_kept_not_rejected() {
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Par"}}
    ]});
    let calls = parse_tool_calls(Provider::OpenAi, &message).unwrap();
    assert_eq!(calls.len(), 1);
    match &calls[0].arguments {
        ToolCallArguments::Malformed { raw, error } => {
            assert_eq!(raw, "{\"location\": \"Par");
            assert!(error.contains("EOF while parsing"), "{error}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn missing_call_id_is_an_error_with_its_path() {
    let message = json!({"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    ]});
    let err = parse_tool_calls(Provider::OpenAi, &message).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid openai payload at `/tool_calls/0`: missing required field `id`"
    );
}

#[test]
fn non_function_tool_calls_are_refused() {
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "call_9", "type": "custom", "custom": {"name": "grammar", "input": "x"}}
    ]});
    let err = parse_tool_calls(Provider::OpenAi, &message).unwrap_err();
    assert!(
        err.to_string()
            .contains("unsupported tool call type `custom` (call `call_9`)"),
        "{err}"
    );
}

#[test]
fn replies_are_tool_messages_in_call_order() {
    let replies = [
        ToolReply::ok("call_12345xyz", "get_weather", json!({"temperature": 14})),
        ToolReply::err(
            "call_67890abc",
            "get_weather",
            "Tool `get_weather` failed: upstream timeout.",
        ),
    ];
    assert_eq!(
        format_replies(Provider::OpenAi, &replies),
        vec![
            json!({"role": "tool", "tool_call_id": "call_12345xyz", "content": "{\"temperature\":14}"}),
            json!({"role": "tool", "tool_call_id": "call_67890abc", "content": "Tool `get_weather` failed: upstream timeout."}),
        ]
    );
}

/// A message with the legacy `function_call` holds a call: it is refused, saying what to
/// send instead, rather than read as a message without calls.
#[test]
fn legacy_function_call_is_refused_not_read_as_no_calls() {
    let message = json!({"role": "assistant", "content": null, "function_call": {"name": "echo", "arguments": "{\"s\":\"y\"}"}});
    let completion = json!({"choices": [{"index": 0, "message": message, "finish_reason": "function_call"}]});
    for (payload, at) in [(&message, "/function_call"), (&completion, "/choices/0/message/function_call")] {
        let err = parse_tool_calls(Provider::OpenAi, payload).unwrap_err().to_string();
        assert!(err.starts_with(&format!("invalid openai payload at `{at}`: the message calls a function through the legacy `function_call` field")), "{err}");
        assert!(err.contains("send the tools as `tools` (toOpenAITools())"), "{err}");
    }
    // Servers that send `function_call: null` beside `tool_calls` are read as before.
    let with_null = json!({"role": "assistant", "content": "hi", "function_call": null});
    assert_eq!(parse_tool_calls(Provider::OpenAi, &with_null), Ok(vec![]));
}

/// A completion of `n: 2` holds two alternative answers: running both would send the
/// same email twice, so it is refused, saying to pass the chosen choice's message.
#[test]
fn several_choices_are_refused_not_all_run() {
    let choice = |i: usize| {
        json!({"index": i, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}"), "type": "function", "function": {"name": "send_email", "arguments": "{\"to\":\"boss@x.com\"}"}}
        ]}})
    };
    let completion = json!({"object": "chat.completion", "choices": [choice(0), choice(1)]});
    let err = parse_tool_calls(Provider::OpenAi, &completion).unwrap_err().to_string();
    assert!(err.starts_with("invalid openai payload at `/choices`: the completion has 2 choices (a request with n > 1)"), "{err}");
    assert!(err.ends_with("pass the chosen choice's message (choices[i].message)"), "{err}");
    // The chosen choice's message, or a completion of one choice, is read.
    assert_eq!(parse_tool_calls(Provider::OpenAi, &completion["choices"][1]["message"]).unwrap()[0].id, "call_1");
    assert_eq!(parse_tool_calls(Provider::OpenAi, &json!({"choices": [choice(0)]})).unwrap()[0].id, "call_0");
}
