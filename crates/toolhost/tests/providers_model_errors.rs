//! Error text written for the model.

use toolhost::providers::model_errors::{
    malformed_arguments, tool_failed, unknown_tool, validation_failed,
};
use toolhost::ValidationIssue;
use serde_json::json;

#[test]
fn validation_failure_lists_each_path_then_the_schema() {
    let schema = json!({"type": "object", "properties": {"days": {"type": "integer"}}, "required": ["city"]});
    let issues = [
        ValidationIssue {
            path: "".into(),
            schema_path: "/required".into(),
            keyword: "required".into(),
            message: "missing required property \"city\"".into(),
        },
        ValidationIssue {
            path: "/days".into(),
            schema_path: "/properties/days/type".into(),
            keyword: "type".into(),
            message: "\"three\" is not an integer".into(),
        },
    ];
    let text = validation_failed("get_forecast", &issues, &schema);
    let expected_head = "Tool `get_forecast` was not run: its arguments do not match its input schema.\n\
        Problems:\n\
        - arguments (top level): missing required property \"city\" (rule `required`)\n\
        - `/days`: \"three\" is not an integer (rule `type`)\n\
        Fix the arguments and call `get_forecast` again. The arguments must be a JSON object matching this schema:\n";
    assert!(text.starts_with(expected_head), "{text}");
    let schema_text = &text[expected_head.len()..];
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(schema_text).unwrap(),
        schema
    );
}

#[test]
fn unknown_tool_lists_what_exists_and_suggests_a_close_name() {
    let available = vec!["get_weather".to_string(), "get_time".to_string()];
    assert_eq!(
        unknown_tool("get_wheather", &available),
        "There is no tool named `get_wheather`. Available tools: `get_weather`, `get_time`. \
         Did you mean `get_weather`? Call one of the available tools by its exact name."
    );
    assert_eq!(
        unknown_tool("launch_rocket", &available),
        "There is no tool named `launch_rocket`. Available tools: `get_weather`, `get_time`. \
         Call one of the available tools by its exact name."
    );
    assert!(unknown_tool("x", &[]).contains("no tools are available right now"));
}

#[test]
fn malformed_arguments_echo_the_text_and_the_parse_error() {
    let text = malformed_arguments(
        "search",
        "{\"q\": ",
        "EOF while parsing a value at line 1 column 6",
    );
    assert_eq!(
        text,
        "Tool `search` was not run: its arguments are not valid JSON (EOF while parsing a value at line 1 column 6).\n\
         Arguments received: {\"q\": \n\
         Call `search` again with the arguments as a single JSON object that matches its input schema, with nothing before or after it."
    );
    let long = "x".repeat(1500);
    assert!(malformed_arguments("search", &long, "e").contains("... (500 more characters)"));
}

#[test]
fn tool_failure_says_whether_to_retry() {
    assert_eq!(
        tool_failed("send_email", "upstream", "smtp_timeout", "the mail server did not answer within 10 s", true),
        "Tool `send_email` failed: the mail server did not answer within 10 s (category: upstream, code: smtp_timeout). \
         This failure may be temporary: you may retry the same call."
    );
    assert!(
        tool_failed("send_email", "invalid_input", "bad_recipient", "no such mailbox", false)
            .ends_with("Retrying the same call will not help: change the arguments, use another tool, or tell the user what went wrong.")
    );
}

/// Arguments refused unread for their size are too large, not "not valid JSON" with
/// "Arguments received: (empty)": the model is told the limit, to send less.
#[test]
fn oversized_arguments_say_they_are_too_large_and_the_limit() {
    use toolhost::arguments::{check_size, oversized_part};
    use toolhost::providers::model_errors::for_failure;
    use toolhost::registry::{Scope, ToolRegistry};
    let registry = ToolRegistry::new();
    let over = check_size("echo", 17 * 1024 * 1024).unwrap_err();
    let text = for_failure(&registry, Scope::Global, "echo", "", "validation", "INVALID_ARGUMENTS", &over.message, false, &[]);
    assert_eq!(
        text,
        "Tool `echo` was not run: its arguments are too large (17825792 bytes of JSON exceed the 16777216-byte argument limit).\n\
         Call `echo` again with arguments under 16777216 bytes (16 MiB) of JSON: send less, or pass large content by reference (a path, URL or id) if the tool takes one."
    );
    let part = oversized_part("echo", "/s");
    let text = for_failure(&registry, Scope::Global, "echo", "", "validation", "INVALID_ARGUMENTS", &part.message, false, &[]);
    assert!(text.starts_with("Tool `echo` was not run: its arguments are too large (the value at /s alone is more JSON than the 16777216-byte argument limit)"), "{text}");
    // Text that is not JSON is still answered with the parse error.
    let text = for_failure(&registry, Scope::Global, "echo", "{", "validation", "INVALID_ARGUMENTS", "malformed JSON: EOF", false, &[]);
    assert!(text.contains("its arguments are not valid JSON"), "{text}");
}
