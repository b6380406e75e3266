//! Anthropic Messages API: declarations out, a recorded message in, replies out.

mod common;

use toolhost::providers::{
    anthropic_tools, format_replies, parse_tool_calls, Provider, ToolCall, ToolCallArguments,
    ToolReply,
};
use serde_json::json;

#[test]
fn declarations_use_input_schema() {
    assert_eq!(
        anthropic_tools(&[common::get_weather()]).unwrap(),
        vec![json!({
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["location"]
            }
        })]
    );
}

/// Recorded from a Messages API response that mixes text and tool use.
fn recorded_message() -> serde_json::Value {
    json!({
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "text", "text": "I'll check the weather in both cities."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "San Francisco, CA", "unit": "celsius"}},
            {"type": "tool_use", "id": "toolu_01B8xQ2nm4kZ", "name": "get_time", "input": {}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {"input_tokens": 384, "output_tokens": 92}
    })
}

#[test]
fn parses_tool_use_blocks_in_order() {
    let expected = vec![
        ToolCall {
            id: "toolu_01A09q90qw90lq917835lq9".into(),
            name: "get_weather".into(),
            arguments: ToolCallArguments::Parsed(
                json!({"location": "San Francisco, CA", "unit": "celsius"}),
            ),
            arguments_at: Some("/content/1/input".into()),
        },
        ToolCall {
            id: "toolu_01B8xQ2nm4kZ".into(),
            name: "get_time".into(),
            arguments: ToolCallArguments::Parsed(json!({})),
            arguments_at: Some("/content/2/input".into()),
        },
    ];
    assert_eq!(
        parse_tool_calls(Provider::Anthropic, &recorded_message()).unwrap(),
        expected
    );
    assert_eq!(
        without_at(parse_tool_calls(Provider::Anthropic, &recorded_message()["content"]).unwrap()),
        without_at(expected)
    );
}

#[test]
fn text_only_message_has_no_calls_and_bad_shapes_are_errors() {
    let text = json!({"role": "assistant", "content": "Sunny."});
    assert_eq!(
        parse_tool_calls(Provider::Anthropic, &text).unwrap(),
        vec![]
    );
    let err = parse_tool_calls(Provider::Anthropic, &json!("hi")).unwrap_err();
    assert!(
        err.to_string()
            .contains("the response is not in the anthropic format: expected an Anthropic message ({ role, content }) or its content array of blocks ({ type, ... }); got a string"),
        "{err}"
    );
}

#[test]
fn replies_are_one_user_message_of_tool_results() {
    let replies = [
        ToolReply::ok(
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            json!({"temperature": 18}),
        ),
        ToolReply::err(
            "toolu_01B8xQ2nm4kZ",
            "get_time",
            "Tool `get_time` failed: clock unavailable.",
        ),
    ];
    assert_eq!(
        format_replies(Provider::Anthropic, &replies),
        vec![json!({
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                 "content": "{\"temperature\":18}", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_01B8xQ2nm4kZ",
                 "content": "Tool `get_time` failed: clock unavailable.", "is_error": true}
            ]
        })]
    );
    assert_eq!(
        format_replies(Provider::Anthropic, &[]),
        Vec::<serde_json::Value>::new()
    );
}

/// The calls with `arguments_at` left out: each shape of a payload puts the arguments
/// at its own pointer.
fn without_at(calls: Vec<ToolCall>) -> Vec<ToolCall> {
    calls.into_iter().map(|c| ToolCall { arguments_at: None, ..c }).collect()
}

/// What `for await (const event of stream)` yields, collected: the tool_use arrives in
/// pieces, so the array is refused, saying what to pass, rather than read as no calls.
#[test]
fn raw_stream_events_are_refused_not_read_as_no_calls() {
    let events = json!([
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "stop_reason": null}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"s\":\"x\"}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"}
    ]);
    let err = parse_tool_calls(Provider::Anthropic, &events).unwrap_err().to_string();
    assert!(err.contains(" at `/0`: expected an Anthropic message ({ role, content }) or its content array of blocks ({ type, ... }); got an Anthropic stream event (message_start)"), "{err}");
    assert!(err.ends_with("pass the message the stream builds (`await stream.finalMessage()` with the Anthropic SDK)"), "{err}");
    // Events after a block, or one event alone, are refused the same way.
    let mixed = json!([{"type": "text", "text": "hi"}, {"type": "content_block_stop", "index": 0}]);
    assert!(parse_tool_calls(Provider::Anthropic, &mixed).unwrap_err().to_string().contains("stream.finalMessage()"));
    assert!(parse_tool_calls(Provider::Anthropic, &events[1]).unwrap_err().to_string().contains("stream.finalMessage()"));
}
