//! Error text written for the model.
//!
//! Each message names the tool, says what went wrong in plain words, and
//! says what the model can do next. The text goes into a tool reply
//! (`ToolReply { outcome: Err(text) }`), so it is self-contained.

use serde_json::Value;

use crate::registry::{Scope, ToolRegistry};
use crate::schema::ValidationIssue;

/// Raw argument text longer than this is cut in error messages.
const MAX_ECHOED_CHARS: usize = 1000;

/// The most characters of a made-up tool name a reply quotes.
const MAX_ECHOED_NAME: usize = 200;

/// `text` up to `max` characters, then how many more there were.
fn echoed(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => std::borrow::Cow::Owned(format!("{}... ({} more characters)", &text[..end], text[end..].chars().count())),
    }
}

/// The arguments of `tool` failed schema validation.
pub fn validation_failed(tool: &str, issues: &[ValidationIssue], schema: &Value) -> String {
    let mut text =
        format!("Tool `{tool}` was not run: its arguments do not match its input schema.\n");
    if !issues.is_empty() {
        text.push_str("Problems:\n");
    }
    for issue in issues {
        let place = if issue.path.is_empty() {
            "arguments (top level)".to_string()
        } else {
            format!("`{}`", issue.path)
        };
        text.push_str(&format!(
            "- {place}: {} (rule `{}`)\n",
            issue.message, issue.keyword
        ));
    }
    let schema_text = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
    text.push_str(&format!(
        "Fix the arguments and call `{tool}` again. The arguments must be a JSON object matching this schema:\n{schema_text}"
    ));
    text
}

/// The model called a tool that does not exist.
pub fn unknown_tool(name: &str, available: &[String]) -> String {
    // A made-up name is the model's own text: a megabyte of it came back whole.
    let shown = echoed(name, MAX_ECHOED_NAME);
    if available.is_empty() {
        return format!("There is no tool named `{shown}`, and no tools are available right now. Continue without calling a tool.");
    }
    let list: Vec<String> = available.iter().map(|t| format!("`{t}`")).collect();
    let mut text = format!(
        "There is no tool named `{shown}`. Available tools: {}.",
        list.join(", ")
    );
    let names: Vec<&str> = available.iter().map(String::as_str).collect();
    if let Some(close) = crate::host::options::closest_name(name, &names) {
        text.push_str(&format!(" Did you mean `{close}`?"));
    }
    text.push_str(" Call one of the available tools by its exact name.");
    text
}

/// The arguments of `tool` were not valid JSON.
pub fn malformed_arguments(tool: &str, raw: &str, parse_error: &str) -> String {
    let shown: String = raw.chars().take(MAX_ECHOED_CHARS).collect();
    let cut = raw.chars().count().saturating_sub(MAX_ECHOED_CHARS);
    let more = if cut > 0 {
        format!(" ... ({cut} more characters)")
    } else {
        String::new()
    };
    format!(
        "Tool `{tool}` was not run: its arguments are not valid JSON ({parse_error}).\n\
         Arguments received: {shown}{more}\n\
         Call `{tool}` again with the arguments as a single JSON object that matches its input schema, with nothing before or after it."
    )
}

/// The arguments of `tool` were refused unread for being over
/// [`crate::MAX_ARGUMENT_BYTES`]; `why` says by how much.
pub fn oversized_arguments(tool: &str, why: &str) -> String {
    let limit = crate::MAX_ARGUMENT_BYTES;
    format!(
        "Tool `{tool}` was not run: its arguments are too large ({why}).\n\
         Call `{tool}` again with arguments under {limit} bytes ({} MiB) of JSON: send less, or pass large content by reference (a path, URL or id) if the tool takes one.",
        limit / (1024 * 1024)
    )
}

/// `tool` ran and failed.
pub fn tool_failed(
    tool: &str,
    category: &str,
    code: &str,
    message: &str,
    retryable: bool,
) -> String {
    let next = if retryable {
        "This failure may be temporary: you may retry the same call."
    } else {
        "Retrying the same call will not help: change the arguments, use another tool, or tell the user what went wrong."
    };
    format!("Tool `{tool}` failed: {message} (category: {category}, code: {code}). {next}")
}

/// `tool` was running when its process stopped, and must not run twice: its effect is
/// unknown (a journaled call recovered as `interrupted`).
pub fn interrupted(tool: &str) -> String {
    format!(
        "The outcome of tool `{tool}` is unknown: the process running it stopped before it finished, and it was not run again because it must not run twice (category: interrupted, code: INTERRUPTED). \
         Do not call `{tool}` again until you know whether it took effect: check with another tool, or ask the user."
    )
}

/// A call reused the idempotency key (the tool-call id) of an earlier, different call.
pub fn idempotency_conflict(tool: &str, message: &str) -> String {
    format!(
        "Tool `{tool}` was not run: {} (category: permanent, code: IDEMPOTENCY_CONFLICT). \
         The earlier call with this id already ran; if you mean a different call, make it as a new tool call.",
        message.strip_prefix(&format!("tool '{tool}' was not run: ")).unwrap_or(message)
    )
}

/// The text a model reads for a failed call of `name` in `scope` of `registry`:
/// validation issues with the expected schema, the tools it could have called, the parse
/// error of malformed text, the size limit of arguments too large to read, or the
/// failure's category and message. `arguments` is the
/// call's argument text, quoted when it was not JSON.
#[allow(clippy::too_many_arguments)]
pub fn for_failure(
    registry: &ToolRegistry,
    scope: Scope<'_>,
    name: &str,
    arguments: &str,
    category: &str,
    code: &str,
    message: &str,
    retryable: bool,
    issues: &[ValidationIssue],
) -> String {
    match code {
        "TOOL_NOT_FOUND" => {
            let available: Vec<String> = registry.visible(scope).unwrap_or_default().iter().map(|t| t.name().to_string()).collect();
            unknown_tool(name, &available)
        }
        "INVALID_ARGUMENTS" => match (issues.is_empty(), registry.resolve(scope, name)) {
            (false, Ok(tool)) => validation_failed(name, issues, &tool.declaration.input_schema),
            _ if crate::arguments::is_over_limit(message) => {
                let why = message.strip_prefix(&format!("invalid arguments for tool '{name}': ")).unwrap_or(message);
                oversized_arguments(name, why)
            }
            _ => malformed_arguments(name, arguments, message),
        },
        "INTERRUPTED" => interrupted(name),
        "IDEMPOTENCY_CONFLICT" => idempotency_conflict(name, message),
        _ => {
            // The reply names the tool itself; drop the engine's own "tool 'x' failed: "
            // (or "tool 'x' " before "timed out ...").
            let failed = format!("tool '{name}' failed: ");
            let named = format!("tool '{name}' ");
            let message = message.strip_prefix(&failed).or_else(|| message.strip_prefix(&named)).unwrap_or(message);
            tool_failed(name, category, code, message, retryable)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_tool_is_given_the_close_name_only_for_a_plausible_typo() {
        let tools = ["get_weather".to_string(), "send_email".to_string()];
        assert!(unknown_tool("get_wether", &tools).contains("Did you mean `get_weather`?"));
        assert!(unknown_tool("Send_Email", &tools).contains("Did you mean `send_email`?"));
        assert!(!unknown_tool("delete_everything", &tools).contains("Did you mean"));
        // A made-up name is quoted up to 200 characters.
        let long = "é".repeat(1_000_000);
        let text = unknown_tool(&long, &tools);
        assert!(text.starts_with(&format!("There is no tool named `{}... (999800 more characters)`. Available tools: ", "é".repeat(200))), "{}", &text[..500]);
        assert!(text.len() < 1_000);
    }
}
