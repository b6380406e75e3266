//! OpenAI Responses API: declarations out, a recorded response in, replies out.

mod common;

use toolhost::providers::{
    format_replies, openai_responses_tools, parse_tool_calls, Provider, ToolCall,
    ToolCallArguments, ToolReply,
};
use serde_json::json;

#[test]
fn declarations_are_flat_and_always_carry_strict() {
    assert_eq!(
        openai_responses_tools(&[common::get_weather()], false).unwrap(),
        vec![json!({
            "type": "function",
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": common::get_weather().input_schema,
            "strict": false
        })]
    );
    assert_eq!(
        openai_responses_tools(&[common::create_event()], true).unwrap(),
        vec![json!({
            "type": "function",
            "name": "create_event",
            "description": "Create a calendar event.",
            "parameters": common::create_event_strict_schema(),
            "strict": true
        })]
    );
}

/// Recorded from a Responses API call with reasoning before the function call.
fn recorded_response() -> serde_json::Value {
    json!({
        "id": "resp_67ca09c5efe0819096d0511c92b8c890096610f474011cc0",
        "object": "response",
        "created_at": 1741294021,
        "status": "completed",
        "model": "o4-mini-2025-04-16",
        "output": [
            {"id": "rs_67ca09c5f2e08190a1d8b5f8e7c1f0b6", "type": "reasoning", "summary": []},
            {
                "type": "function_call",
                "id": "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0",
                "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k",
                "name": "get_weather",
                "arguments": "{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}",
                "status": "completed"
            },
            {
                "type": "function_call",
                "id": "fc_67ca09c6bedc8190a7abfec07b1a1333",
                "call_id": "call_Q2vJk1pQ0zE3",
                "name": "get_weather",
                "arguments": "{\"location\": \"Oslo\"",
                "status": "completed"
            }
        ],
        "parallel_tool_calls": true,
        "usage": {"input_tokens": 291, "output_tokens": 23, "total_tokens": 314}
    })
}

#[test]
fn parses_function_call_items_and_skips_the_rest() {
    let calls = parse_tool_calls(Provider::OpenAiResponses, &recorded_response()).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0],
        ToolCall {
            id: "call_unLAR8MvFNptuiZK6K6HCy5k".into(),
            name: "get_weather".into(),
            arguments: ToolCallArguments::Parsed(
                json!({"location": "Boston, MA", "unit": "celsius"})
            ),
            arguments_at: Some("/output/1/arguments".into()),
        }
    );
    assert_eq!(calls[1].id, "call_Q2vJk1pQ0zE3");
    assert!(
        matches!(&calls[1].arguments, ToolCallArguments::Malformed { raw, .. } if raw == "{\"location\": \"Oslo\"")
    );
    // The bare output array works too.
    let output = &recorded_response()["output"];
    let bare = parse_tool_calls(Provider::OpenAiResponses, output).unwrap();
    assert_eq!(bare[0].arguments_at.as_deref(), Some("/1/arguments"));
    let without_at = |calls: Vec<ToolCall>| calls.into_iter().map(|c| ToolCall { arguments_at: None, ..c }).collect::<Vec<_>>();
    assert_eq!(without_at(bare), without_at(calls));
}

#[test]
fn missing_call_id_names_the_item() {
    let output = json!([{"type": "function_call", "name": "get_weather", "arguments": "{}"}]);
    let err = parse_tool_calls(Provider::OpenAiResponses, &output).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid openai-responses payload at `/0`: missing required field `call_id`"
    );
}

#[test]
fn replies_are_function_call_outputs() {
    let replies = [
        ToolReply::ok(
            "call_unLAR8MvFNptuiZK6K6HCy5k",
            "get_weather",
            json!("14°C and raining"),
        ),
        ToolReply::err(
            "call_Q2vJk1pQ0zE3",
            "get_weather",
            "Tool `get_weather` was not run: its arguments are not valid JSON.",
        ),
    ];
    assert_eq!(
        format_replies(Provider::OpenAiResponses, &replies),
        vec![
            json!({"type": "function_call_output", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k", "output": "14°C and raining"}),
            json!({"type": "function_call_output", "call_id": "call_Q2vJk1pQ0zE3",
                   "output": "Tool `get_weather` was not run: its arguments are not valid JSON."}),
        ]
    );
}
