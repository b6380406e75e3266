//! What a model is sent of a successful call: the result as JSON text, or what the
//! tool's `toModelOutput` made of it (text, or content parts), kept within an output
//! budget (`maxOutputChars`) so a large result never floods the context.
//!
//! Over the budget, the text is cut at a JSON-aware boundary (after a whole element of
//! an array or object, never inside a token or an escape) and a note says how much was
//! left out, that the full result is kept, and how to ask for less at once.

use serde_json::{json, Value};

/// A piece of content a tool's `toModelOutput` returns.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentPart {
    Text(String),
    /// Base64 image data and its media type (`image/png`).
    Image { data: String, media_type: String },
}

impl ContentPart {
    /// Reads `{ type: 'text', text }` or `{ type: 'image', data, mediaType }`.
    pub fn from_json(v: &Value) -> Option<ContentPart> {
        match v.get("type")?.as_str()? {
            "text" => Some(ContentPart::Text(v.get("text")?.as_str()?.to_string())),
            "image" => Some(ContentPart::Image {
                data: v.get("data")?.as_str()?.to_string(),
                media_type: v.get("mediaType").or_else(|| v.get("mimeType"))?.as_str()?.to_string(),
            }),
            _ => None,
        }
    }
}

/// What the model is shown instead of the result's JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelOutput {
    Text(String),
    Parts(Vec<ContentPart>),
}

impl ModelOutput {
    /// A `toModelOutput` value: a string, or an array of content parts.
    ///
    /// # Errors
    /// A message naming what is wrong with it.
    pub fn from_json(v: &Value) -> Result<ModelOutput, String> {
        match v {
            Value::String(s) => Ok(ModelOutput::Text(s.clone())),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, p)| ContentPart::from_json(p).ok_or_else(|| format!("returned a part {i} that is not {{ type: 'text', text }} or {{ type: 'image', data, mediaType }}")))
                .collect::<Result<Vec<_>, _>>()
                .map(ModelOutput::Parts),
            other => {
                let kind = match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    _ => "an object",
                };
                Err(format!("returned {kind}, not a string or an array of content parts"))
            }
        }
    }
}

/// Cuts `text` to `max_chars` characters (counted as `char`s) when it is longer, at a
/// JSON-aware boundary, and appends the note. `execution_id` names where the full
/// result is kept.
pub fn within_budget(text: &str, max_chars: usize, execution_id: Option<&str>) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let cut = boundary(text, max_chars);
    let kept = text[..cut].chars().count();
    let kept_in = match execution_id {
        Some(id) => format!("kept in execution {id}"),
        None => "kept by the application".to_string(),
    };
    format!(
        "{}…\n[toolhost: output cut to {kept} of {total} characters (maxOutputChars {max_chars}); {} characters were left out. The full result is {kept_in}. To see more, call the tool again asking for less at once: a narrower query, one page, or fewer fields.]",
        &text[..cut],
        total - kept,
    )
}

/// The byte offset to cut `text` at: the end of the last whole element within the first
/// `max_chars` characters at the shallowest level that has one (after a `,` or a closing
/// bracket, outside strings), or, when there is none, the last character boundary that
/// splits no escape sequence.
fn boundary(text: &str, max_chars: usize) -> usize {
    let (mut in_string, mut escaped, mut last_safe, mut depth) = (false, false, 0usize, 0usize);
    // The last element end seen at each depth (1 = inside the outermost container).
    let mut ends: Vec<usize> = Vec::new();
    let mark = |ends: &mut Vec<usize>, depth: usize, at: usize| {
        if depth == 0 {
            return;
        }
        if ends.len() < depth {
            ends.resize(depth, 0);
        }
        ends[depth - 1] = at;
    };
    for (n, (i, c)) in text.char_indices().enumerate() {
        if n == max_chars {
            break;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
                continue;
            } else if c == '"' {
                in_string = false;
            }
        } else {
            match c {
                '"' => in_string = true,
                '{' | '[' => depth += 1,
                ',' => mark(&mut ends, depth, i),
                '}' | ']' => {
                    depth = depth.saturating_sub(1);
                    mark(&mut ends, depth, i + 1);
                }
                _ => {}
            }
        }
        if !escaped {
            last_safe = i + c.len_utf8();
        }
    }
    if let Some(&end) = ends.iter().find(|&&e| e > 0) {
        return end;
    }
    // Plain text, or one long token: cut at a space when there is one not far back.
    let head = &text[..last_safe];
    match head.rfind(char::is_whitespace) {
        Some(space) if space > last_safe / 2 => space,
        _ => last_safe,
    }
}

/// The text of parts, images noted, for providers whose tool replies are text only.
pub fn parts_text(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text(t) => t.clone(),
            ContentPart::Image { media_type, .. } => format!("[image: {media_type}]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Anthropic `tool_result` content blocks of parts, text parts cut to the budget.
pub fn anthropic_blocks(parts: &[ContentPart], budget: impl Fn(&str) -> String) -> Vec<Value> {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text(t) => json!({ "type": "text", "text": budget(t) }),
            ContentPart::Image { data, media_type } => json!({ "type": "image", "source": { "type": "base64", "media_type": media_type, "data": data } }),
        })
        .collect()
}

/// MCP `content` items of parts, text parts cut to the budget.
pub fn mcp_content(parts: &[ContentPart], budget: impl Fn(&str) -> String) -> Vec<Value> {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text(t) => json!({ "type": "text", "text": budget(t) }),
            ContentPart::Image { data, media_type } => json!({ "type": "image", "data": data, "mimeType": media_type }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(within_budget("[1,2,3]", 7, None), "[1,2,3]");
    }

    #[test]
    fn json_is_cut_after_a_whole_element_with_a_note() {
        let items: Vec<Value> = (0..1000).map(|i| json!({ "id": i, "name": format!("item {i}") })).collect();
        let text = Value::Array(items).to_string();
        let out = within_budget(&text, 200, Some("exec-1"));
        let (head, note) = out.split_once("…\n").unwrap();
        assert!(head.chars().count() <= 200);
        assert!(head.ends_with('}'), "cut after a whole element: {head}");
        assert!(!head.ends_with(r#"{"id":11"#) && head.matches('{').count() == head.matches('}').count(), "{head}");
        assert!(note.contains("execution exec-1") && note.contains(&format!("of {} characters", text.chars().count())), "{note}");
        // What was kept parses once the array is closed.
        let repaired: Value = serde_json::from_str(&format!("{head}]")).unwrap();
        assert!(!repaired.as_array().unwrap().is_empty());
    }

    #[test]
    fn one_long_string_is_cut_outside_escapes() {
        let text = Value::String(format!("{}\\\"{}", "a".repeat(50), "b".repeat(100))).to_string();
        for max in 40..80 {
            let out = within_budget(&text, max, None);
            let head = out.split('…').next().unwrap();
            let trailing = head.chars().rev().take_while(|c| *c == '\\').count();
            assert!(trailing % 2 == 0, "an escape is never split: max {max}: {head}");
        }
        // Plain text is cut at a space.
        assert!(within_budget("one two three four five", 12, None).starts_with("one two…"));
    }

    #[test]
    fn multibyte_text_counts_characters() {
        let text = "é".repeat(100);
        let out = within_budget(&text, 10, None);
        assert!(out.starts_with(&"é".repeat(10)) && out.contains("90 characters were left out"), "{out}");
    }
}
