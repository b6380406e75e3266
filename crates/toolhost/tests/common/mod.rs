//! Tool declarations shared by the integration tests.
#![allow(dead_code)]

use toolhost::{ToolDeclaration, ToolMetadata};
use serde_json::{json, Value};

pub fn tool(name: &str, description: &str, input_schema: Value) -> ToolDeclaration {
    ToolDeclaration {
        name: name.into(),
        description: description.into(),
        input_schema,
        output_schema: None,
        metadata: ToolMetadata::default(),
    }
}

/// A simple read-only tool with an optional enum parameter.
pub fn get_weather() -> ToolDeclaration {
    ToolDeclaration {
        name: "get_weather".into(),
        description: "Get the current weather for a city.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            },
            "required": ["location"]
        }),
        output_schema: Some(json!({
            "type": "object",
            "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
            "required": ["temperature"]
        })),
        metadata: ToolMetadata {
            title: Some("Weather".into()),
            read_only: Some(true),
            destructive: None,
            idempotent: Some(true),
            open_world: Some(true),
            ..Default::default()
        },
    }
}

/// A tool with nested objects, arrays of objects and optional fields.
pub fn create_event() -> ToolDeclaration {
    tool(
        "create_event",
        "Create a calendar event.",
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "Event title"},
                "start": {"type": "string", "format": "date-time"},
                "attendees": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"email": {"type": "string"}, "name": {"type": "string"}},
                        "required": ["email"]
                    }
                },
                "location": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "room": {"type": "integer"}},
                    "required": ["city"]
                },
                "priority": {"type": "string", "enum": ["low", "high"]}
            },
            "required": ["title", "start"]
        }),
    )
}

/// `create_event`'s schema as OpenAI strict mode needs it.
pub fn create_event_strict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Event title"},
            "start": {"type": "string", "format": "date-time"},
            "attendees": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {"email": {"type": "string"}, "name": {"type": ["string", "null"]}},
                    "required": ["email", "name"],
                    "additionalProperties": false
                }
            },
            "location": {
                "type": ["object", "null"],
                "properties": {"city": {"type": "string"}, "room": {"type": ["integer", "null"]}},
                "required": ["city", "room"],
                "additionalProperties": false
            },
            "priority": {"type": ["string", "null"], "enum": ["low", "high", null]}
        },
        "required": ["title", "start", "attendees", "location", "priority"],
        "additionalProperties": false
    })
}
