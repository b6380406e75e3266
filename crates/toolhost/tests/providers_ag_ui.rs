//! AG-UI: declarations out, a recorded event stream in, tool messages out.

mod common;

use toolhost::providers::{
    ag_ui_tools, format_replies, parse_tool_calls, Provider, ProviderError, ToolCall,
    ToolCallArguments, ToolReply,
};
use serde_json::json;

#[test]
fn declarations_use_parameters() {
    assert_eq!(
        ag_ui_tools(&[common::get_weather()]),
        vec![json!({
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": common::get_weather().input_schema
        })]
    );
}

/// Recorded from an AG-UI agent run: text, two interleaved tool calls, state events.
fn recorded_events() -> serde_json::Value {
    json!([
        {"type": "RUN_STARTED", "threadId": "thread_1", "runId": "run_42"},
        {"type": "TEXT_MESSAGE_START", "messageId": "msg_1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg_1", "delta": "Checking the weather."},
        {"type": "TEXT_MESSAGE_END", "messageId": "msg_1"},
        {"type": "TOOL_CALL_START", "toolCallId": "tc_a", "toolCallName": "get_weather", "parentMessageId": "msg_1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc_a", "delta": "{\"locat"},
        {"type": "TOOL_CALL_START", "toolCallId": "tc_b", "toolCallName": "get_time", "parentMessageId": "msg_1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc_a", "delta": "ion\": \"Lis"},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/busy", "value": true}]},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc_a", "delta": "bon\"}"},
        {"type": "TOOL_CALL_END", "toolCallId": "tc_b"},
        {"type": "TOOL_CALL_END", "toolCallId": "tc_a"},
        {"type": "RUN_FINISHED", "threadId": "thread_1", "runId": "run_42"}
    ])
}

#[test]
fn concatenates_deltas_per_call_in_start_order() {
    assert_eq!(
        parse_tool_calls(Provider::AgUi, &recorded_events()).unwrap(),
        vec![
            ToolCall {
                id: "tc_a".into(),
                name: "get_weather".into(),
                arguments: ToolCallArguments::Parsed(json!({"location": "Lisbon"})),
                arguments_at: None,
            },
            ToolCall {
                id: "tc_b".into(),
                name: "get_time".into(),
                arguments: ToolCallArguments::Parsed(json!({})),
                arguments_at: None,
            },
        ]
    );
}

#[test]
fn chunk_events_are_read_too() {
    let events = json!([
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "tc_c", "toolCallName": "search", "delta": "{\"q\":"},
        {"type": "TOOL_CALL_CHUNK", "delta": "\"ag-ui\"}"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    ]);
    assert_eq!(
        parse_tool_calls(Provider::AgUi, &events).unwrap(),
        vec![ToolCall {
            id: "tc_c".into(),
            name: "search".into(),
            arguments: ToolCallArguments::Parsed(json!({"q": "ag-ui"})),
            arguments_at: None,
        }]
    );
}

#[test]
fn malformed_concatenated_arguments_are_kept() {
    let events = json!([
        {"type": "TOOL_CALL_START", "toolCallId": "tc_x", "toolCallName": "search"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc_x", "delta": "{\"q\": "},
        {"type": "TOOL_CALL_END", "toolCallId": "tc_x"}
    ]);
    let calls = parse_tool_calls(Provider::AgUi, &events).unwrap();
    assert!(
        matches!(&calls[0].arguments, ToolCallArguments::Malformed { raw, .. } if raw == "{\"q\": ")
    );
}

#[test]
fn a_call_without_end_is_an_error_naming_it() {
    let events = json!([
        {"type": "TOOL_CALL_START", "toolCallId": "tc_open", "toolCallName": "get_weather"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc_open", "delta": "{}"}
    ]);
    let err = parse_tool_calls(Provider::AgUi, &events).unwrap_err();
    assert_eq!(
        err,
        ProviderError::UnterminatedToolCall {
            call_id: "tc_open".into(),
            name: "get_weather".into()
        }
    );
    assert!(err
        .to_string()
        .contains("`tc_open` (tool `get_weather`) was started but never ended"));
}

#[test]
fn args_for_unknown_or_ended_calls_are_errors() {
    let unknown = json!([{"type": "TOOL_CALL_ARGS", "toolCallId": "ghost", "delta": "{}"}]);
    assert_eq!(
        parse_tool_calls(Provider::AgUi, &unknown).unwrap_err().to_string(),
        "invalid ag-ui payload at `/0`: TOOL_CALL_ARGS for tool call `ghost`, which was never started"
    );
    let late = json!([
        {"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "t"},
        {"type": "TOOL_CALL_END", "toolCallId": "a"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": "{}"}
    ]);
    assert!(parse_tool_calls(Provider::AgUi, &late)
        .unwrap_err()
        .to_string()
        .contains("after it ended"));
}

#[test]
fn replies_are_tool_messages_with_unique_ids() {
    let replies = [
        ToolReply::ok("tc_a", "get_weather", json!({"temperature": 22})),
        ToolReply::err(
            "tc_b",
            "get_time",
            "Tool `get_time` failed: clock unavailable.",
        ),
    ];
    let mut messages = format_replies(Provider::AgUi, &replies);
    let ids: Vec<String> = messages
        .iter_mut()
        .map(|m| {
            m.as_object_mut()
                .unwrap()
                .remove("id")
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(ids.iter().all(|id| !id.is_empty()));
    assert_ne!(ids[0], ids[1]);
    assert_eq!(
        messages,
        vec![
            json!({"role": "tool", "toolCallId": "tc_a", "content": "{\"temperature\":22}"}),
            json!({"role": "tool", "toolCallId": "tc_b", "content": "Tool `get_time` failed: clock unavailable.",
                   "error": "Tool `get_time` failed: clock unavailable."}),
        ]
    );
}
