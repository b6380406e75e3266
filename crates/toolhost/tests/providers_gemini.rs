//! Gemini: declarations out, a recorded response in, replies out.

mod common;

use toolhost::providers::{
    format_replies, gemini_function_declaration_to_tool, gemini_tools, parse_tool_calls, Provider,
    ToolCall, ToolCallArguments, ToolReply,
};
use serde_json::json;

#[test]
fn declarations_use_the_gemini_schema_dialect() {
    let book = common::tool(
        "book_flight",
        "Book a flight.",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "airport": {
                    "type": "string",
                    "pattern": "^[A-Z]{3}$",
                    "description": "IATA code"
                },
                "passenger": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 130}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }
            },
            "properties": {
                "from": {"$ref": "#/$defs/airport"},
                "to": {"$ref": "#/$defs/airport", "description": "Destination IATA code"},
                "passengers": {"type": "array", "items": {"$ref": "#/$defs/passenger"}, "minItems": 1, "uniqueItems": true},
                "seat": {"type": ["string", "null"], "enum": ["aisle", "window", null]},
                "notes": {"anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}]},
                "cabin": {"const": "economy"},
                "when": {"type": "string", "format": "date-time", "examples": ["2025-06-01T09:00:00Z"]}
            },
            "required": ["from", "to", "passengers"],
            "additionalProperties": false
        }),
    );
    let ping = common::tool(
        "ping",
        "Check the service is up.",
        json!({"type": "object", "properties": {}}),
    );
    assert_eq!(
        gemini_tools(&[book, ping]).unwrap(),
        json!({"functionDeclarations": [
            {
                "name": "book_flight",
                "description": "Book a flight.",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {
                        "from": {"type": "STRING", "pattern": "^[A-Z]{3}$", "description": "IATA code"},
                        "to": {"type": "STRING", "pattern": "^[A-Z]{3}$", "description": "Destination IATA code"},
                        "passengers": {
                            "type": "ARRAY",
                            "minItems": 1,
                            "items": {
                                "type": "OBJECT",
                                "properties": {
                                    "name": {"type": "STRING", "minLength": 1},
                                    "age": {"type": "INTEGER", "minimum": 0}
                                },
                                "required": ["name"]
                            }
                        },
                        "seat": {"type": "STRING", "nullable": true, "enum": ["aisle", "window"]},
                        "notes": {"type": "STRING", "maxLength": 200, "nullable": true},
                        "cabin": {"type": "STRING", "enum": ["economy"]},
                        "when": {"type": "STRING", "format": "date-time", "example": "2025-06-01T09:00:00Z"}
                    },
                    "required": ["from", "to", "passengers"]
                }
            },
            {"name": "ping", "description": "Check the service is up."}
        ]})
    );
}

#[test]
fn function_declarations_are_read_into_tool_declarations() {
    let declaration = json!({
        "name": "set_light",
        "description": "Set the light colour.",
        "parameters": {
            "type": "OBJECT",
            "properties": {"rgb": {"type": "STRING"}, "brightness": {"type": "NUMBER", "nullable": true}},
            "required": ["rgb"]
        }
    });
    let tool = gemini_function_declaration_to_tool(&declaration).unwrap();
    assert_eq!(tool.name, "set_light");
    assert_eq!(tool.description, "Set the light colour.");
    assert_eq!(
        tool.input_schema,
        json!({
            "type": "object",
            "properties": {"rgb": {"type": "string"}, "brightness": {"type": ["number", "null"]}},
            "required": ["rgb"]
        })
    );
    assert_eq!(tool.output_schema, None);
    let bare = gemini_function_declaration_to_tool(&json!({"name": "now"})).unwrap();
    assert_eq!(
        bare.input_schema,
        json!({"type": "object", "properties": {}})
    );
    assert!(gemini_function_declaration_to_tool(&json!({"description": "x"})).is_err());
}

/// Recorded from a gemini-2.5-flash `generateContent` response with parallel calls.
fn recorded_response() -> serde_json::Value {
    json!({
        "candidates": [{
            "content": {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "get_weather", "args": {"location": "Boston, MA"}},
                     "thoughtSignature": "CiQBVKhc7k2CjXh1mG1y"},
                    {"functionCall": {"name": "get_weather", "args": {"location": "Tokyo", "unit": "celsius"}}}
                ]
            },
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 34, "totalTokenCount": 154},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mF7aaJ2YKqXJnvgP0bDs4QE"
    })
}

#[test]
fn parses_recorded_response_with_generated_ids() {
    let expected = vec![
        ToolCall {
            id: "gemini-call-0".into(),
            name: "get_weather".into(),
            arguments: ToolCallArguments::Parsed(json!({"location": "Boston, MA"})),
            arguments_at: None,
        },
        ToolCall {
            id: "gemini-call-1".into(),
            name: "get_weather".into(),
            arguments: ToolCallArguments::Parsed(json!({"location": "Tokyo", "unit": "celsius"})),
            arguments_at: None,
        },
    ];
    let response = recorded_response();
    let calls = parse_tool_calls(Provider::Gemini, &response).unwrap();
    assert_eq!(calls[1].arguments_at.as_deref(), Some("/candidates/0/content/parts/1/functionCall/args"));
    assert_eq!(without_at(calls), expected);
    // Candidate, Content and a FunctionCall array give the same calls.
    let candidate = &response["candidates"][0];
    assert_eq!(
        without_at(parse_tool_calls(Provider::Gemini, candidate).unwrap()),
        expected
    );
    assert_eq!(
        without_at(parse_tool_calls(Provider::Gemini, &candidate["content"]).unwrap()),
        expected
    );
    let bare: Vec<_> = candidate["content"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionCall"].clone())
        .collect();
    assert_eq!(
        without_at(parse_tool_calls(Provider::Gemini, &json!(bare)).unwrap()),
        expected
    );
}

#[test]
fn provided_ids_are_kept_and_text_parts_skipped() {
    let content = json!({"role": "model", "parts": [
        {"text": "Let me look that up."},
        {"functionCall": {"id": "fc-7a1", "name": "search", "args": {"q": "rust"}}},
        {"functionCall": {"name": "now"}}
    ]});
    let calls = parse_tool_calls(Provider::Gemini, &content).unwrap();
    assert_eq!(calls[0].id, "fc-7a1");
    assert_eq!(
        calls[1],
        ToolCall {
            id: "gemini-call-1".into(),
            name: "now".into(),
            arguments: ToolCallArguments::Parsed(json!({})),
            arguments_at: None,
        }
    );
}

#[test]
fn replies_are_one_user_content_of_function_responses() {
    let replies = [
        ToolReply::ok("gemini-call-0", "get_weather", json!({"temperature": 21})),
        ToolReply::ok("fc-7a1", "search", json!(["a", "b"])),
        ToolReply::err(
            "gemini-call-2",
            "now",
            "Tool `now` failed: clock unavailable.",
        ),
    ];
    assert_eq!(
        format_replies(Provider::Gemini, &replies),
        vec![json!({
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"temperature": 21}}},
                {"functionResponse": {"name": "search", "response": {"result": ["a", "b"]}, "id": "fc-7a1"}},
                {"functionResponse": {"name": "now", "response": {"error": "Tool `now` failed: clock unavailable."}}}
            ]
        })]
    );
}

/// The calls with `arguments_at` left out: each shape of a payload puts the arguments
/// at its own pointer.
fn without_at(calls: Vec<ToolCall>) -> Vec<ToolCall> {
    calls.into_iter().map(|c| ToolCall { arguments_at: None, ..c }).collect()
}

/// Two candidates (`candidateCount: 2`) are alternative answers: refused, whether given
/// as the response or as its `candidates` array, not both run.
#[test]
fn several_candidates_are_refused_not_all_run() {
    let candidate = |i: usize| {
        json!({"index": i, "finishReason": "STOP", "content": {"role": "model", "parts": [{"functionCall": {"name": "send_email", "args": {"to": "boss@x.com"}}}]}})
    };
    let response = json!({"candidates": [candidate(0), candidate(1)]});
    let err = parse_tool_calls(Provider::Gemini, &response).unwrap_err().to_string();
    assert!(err.starts_with("invalid gemini payload at `/candidates`: the response has 2 candidates (a request with candidateCount > 1)"), "{err}");
    assert!(err.ends_with("pass the chosen candidate (candidates[i])"), "{err}");
    let err = parse_tool_calls(Provider::Gemini, &response["candidates"]).unwrap_err().to_string();
    assert!(err.contains("the response has 2 candidates"), "{err}");
    // The chosen candidate is read.
    assert_eq!(parse_tool_calls(Provider::Gemini, &response["candidates"][1]).unwrap().len(), 1);
}

/// A blocked prompt's response has `promptFeedback` and no candidates: no calls, as a
/// text answer has none, not a response in another format.
#[test]
fn a_blocked_prompt_has_no_calls() {
    let blocked = json!({
        "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
        "usageMetadata": {"promptTokenCount": 3},
        "modelVersion": "gemini-2.5-flash"
    });
    assert_eq!(parse_tool_calls(Provider::Gemini, &blocked), Ok(vec![]));
    // Given to another provider, it is named as Gemini's.
    let err = parse_tool_calls(Provider::OpenAi, &blocked).unwrap_err().to_string();
    assert!(err.ends_with("for that format pass { provider: 'gemini' }"), "{err}");
}
