//! Character-safe truncation of strings and JSON previews.
//!
//! Limits count Unicode scalar values (`char`s), never bytes, so a cut never
//! splits a UTF-8 code point. When text is cut, [`ELLIPSIS`] is appended;
//! it is not counted against the limit, so a truncated result has
//! `max_chars + 1` chars.

use serde_json::Value;
use std::borrow::Cow;

/// Marker appended to text that was cut.
pub const ELLIPSIS: &str = "…";

/// Keep at most `max_chars` chars of `s`, appending `"…"` if anything was
/// cut. Borrows when `s` already fits. With `max_chars == 0`, a non-empty
/// string becomes just `"…"`.
pub fn truncate(s: &str, max_chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max_chars) {
        None => Cow::Borrowed(s),
        Some((byte_idx, _)) => {
            let mut out = String::with_capacity(byte_idx + ELLIPSIS.len());
            out.push_str(&s[..byte_idx]);
            out.push_str(ELLIPSIS);
            Cow::Owned(out)
        }
    }
}

/// Compact JSON of `v` (serde_json's form, no whitespace), truncated to
/// `max_chars` chars as by [`truncate`].
pub fn preview(v: &Value, max_chars: usize) -> String {
    let mut out = String::new();
    preview_into(&mut out, v, max_chars);
    out
}

/// [`preview`] into `out` (emptied first), reusing its buffer.
pub fn preview_into(out: &mut String, v: &Value, max_chars: usize) {
    // Serialise only as far as the preview needs: a char is at most 4 bytes, so
    // `4 * max_chars + 4` bytes always hold `max_chars + 1` chars (enough to know the
    // text was cut). Large arguments are never serialised whole for a log line.
    let limit = max_chars.saturating_mul(4).saturating_add(4);
    let mut buf = std::mem::take(out).into_bytes();
    buf.clear();
    buf.reserve(limit.min(256));
    let mut bounded = Bounded { buf, limit };
    let complete = serde_json::to_writer(&mut bounded, v).is_ok();
    // serde_json writes UTF-8; only a cut at the byte limit can split a char, and
    // that char lies past the `max_chars` kept below.
    let text = String::from_utf8(bounded.buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    if complete && text.len() <= max_chars {
        *out = text; // at most `max_chars` bytes, so at most that many chars
        return;
    }
    *out = match (complete, truncate(&text, max_chars)) {
        (true, Cow::Borrowed(_)) => text,
        (false, Cow::Borrowed(t)) => format!("{t}{ELLIPSIS}"),
        (_, Cow::Owned(cut)) => cut,
    };
}

/// A preview of JSON `text` read off the text itself: whitespace outside strings
/// dropped, cut to `max_chars` chars as by [`truncate`]. Only as much of the text is
/// read as the preview needs, so it costs the same for 1 KB or 10 MB of arguments.
/// Unlike [`preview`] of the parsed value it keeps the text's key order and escapes.
/// `text` must be valid JSON (as kept argument text is); anything else is previewed as
/// it stands, whitespace aside.
pub fn preview_text(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(max_chars.min(text.len()) + ELLIPSIS.len());
    let (mut kept, mut in_string, mut escaped) = (0usize, false, false);
    for c in text.chars() {
        if !in_string && matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        if kept == max_chars {
            out.push_str(ELLIPSIS);
            return out;
        }
        out.push(c);
        kept += 1;
        if escaped {
            escaped = false;
        } else if in_string && c == '\\' {
            escaped = true;
        } else if c == '"' {
            in_string = !in_string;
        }
    }
    out
}

/// How many chars `text` has when it is its own preview: not empty, no whitespace
/// outside strings, at most `max_chars` chars, so that [`preview_text`] gives it back
/// unchanged. None otherwise. It reads bytes: JSON's structure is ASCII, and no byte of
/// a multi-byte UTF-8 char is.
pub fn compact_chars(text: &str, max_chars: usize) -> Option<usize> {
    let (mut chars, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text.as_bytes() {
        if b & 0xC0 != 0x80 {
            chars += 1;
            if chars > max_chars {
                return None;
            }
        }
        if escaped {
            escaped = false;
        } else if in_string {
            match b {
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => return None,
                b'"' => in_string = true,
                _ => {}
            }
        }
    }
    (chars > 0).then_some(chars)
}

/// A writer that keeps at most `limit` bytes and then refuses more.
struct Bounded {
    buf: Vec<u8>,
    limit: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let room = self.limit - self.buf.len();
        if room == 0 {
            return Err(std::io::Error::other("preview is long enough"));
        }
        let n = room.min(data.len());
        self.buf.extend_from_slice(&data[..n]);
        Ok(n)
    }

    // serde_json writes every token with `write_all`; the default loops over `write`.
    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        if data.len() <= self.limit - self.buf.len() {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        let room = self.limit - self.buf.len();
        self.buf.extend_from_slice(&data[..room]);
        Err(std::io::Error::other("preview is long enough"))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_previews_drop_whitespace_outside_strings_only() {
        let text = "{ \"a\" : [1, 2, {\"b\": \"x  y\"}],\n\t\"c\": true, \"q\": \"say \\\" hi \\\\\" }";
        let compact = r#"{"a":[1,2,{"b":"x  y"}],"c":true,"q":"say \" hi \\"}"#;
        assert_eq!(preview_text(text, 100), compact);
        // The same as the parsed value's preview when keys are sorted and nothing is escaped differently.
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(preview_text(text, 100), preview(&v, 100));
        assert_eq!(preview_text("  [1, 2]  ", 100), "[1,2]");
    }

    #[test]
    fn compact_text_is_its_own_preview() {
        for (text, max) in [
            (r#"{"n":1,"q":"weather in Paris","flag":true}"#, 100),
            (r#"{"s":"é\" \\","t":[1,2]}"#, 100),
            (r#"{"s":"ééé"}"#, 11),
            ("[]", 2),
        ] {
            assert_eq!(compact_chars(text, max), Some(text.chars().count()), "{text}");
            assert_eq!(preview_text(text, max), text, "{text}");
        }
        for (text, max) in [("", 100), ("{ }", 100), ("{\"a\":1}\n", 100), (r#"{"s":"ééé"}"#, 10), (r#"{"a":"\\" ,"b":1}"#, 100)] {
            assert_eq!(compact_chars(text, max), None, "{text:?}");
        }
    }

    #[test]
    fn text_previews_cut_like_value_previews() {
        let text = serde_json::to_string(&serde_json::json!({"s": "é".repeat(300)})).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        for max in [0, 1, 5, 100, 305, 306, 400] {
            assert_eq!(preview_text(&text, max), preview(&v, max), "max {max}");
        }
        let spaced = "{ \"k\" :   1 }   ";
        assert_eq!(preview_text(spaced, 7), r#"{"k":1}"#, "trailing whitespace is not a cut");
        assert_eq!(preview_text(spaced, 6), format!(r#"{{"k":1{ELLIPSIS}"#));
    }

    #[test]
    fn short_strings_are_borrowed_unchanged() {
        assert!(matches!(truncate("hello", 5), Cow::Borrowed("hello")));
        assert!(matches!(truncate("hello", 100), Cow::Borrowed("hello")));
        assert!(matches!(truncate("", 0), Cow::Borrowed("")));
    }

    #[test]
    fn long_strings_are_cut_with_ellipsis() {
        assert_eq!(truncate("hello world", 5), "hello…");
        assert_eq!(truncate("hello", 4), "hell…");
        assert_eq!(truncate("hello", 0), "…");
    }

    #[test]
    fn multibyte_is_never_split() {
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("😀😀😀", 2), "😀😀…");
        assert_eq!(truncate("😀😀", 2), "😀😀");
        assert_eq!(truncate("日本語テキスト", 3), "日本語…");
        // Combining sequences are chars too: e + U+0301 counts as two.
        assert_eq!(truncate("e\u{301}x", 1), "e…");
        let cut = truncate("aé😀b", 3);
        assert_eq!(cut.chars().count(), 4);
        assert_eq!(cut, "aé😀…");
    }

    #[test]
    fn preview_is_compact_and_truncated() {
        let v = json!({"a": [1, 2, 3], "b": "x y"});
        assert_eq!(preview(&v, 100), r#"{"a":[1,2,3],"b":"x y"}"#);
        assert_eq!(preview(&v, 6), r#"{"a":[…"#);
        assert_eq!(preview(&json!("é😀é"), 3), "\"é😀…");
        assert_eq!(preview(&json!(null), 4), "null");
        assert_eq!(preview(&json!(null), 3), "nul…");
    }
}

#[cfg(test)]
mod bounded_preview_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn previews_of_large_values_are_cut_without_serialising_them_whole() {
        let big = json!({ "items": vec!["x".repeat(100); 100_000] });
        let p = preview(&big, 20);
        assert_eq!(p.chars().count(), 21);
        assert!(p.starts_with("{\"items\":[\"xxxxxxxxx") && p.ends_with(ELLIPSIS), "{p}");
        assert_eq!(preview(&json!({"a": "é"}), 100), "{\"a\":\"é\"}");
        assert_eq!(preview(&json!("ééééé"), 3), "\"éé…");
    }
}
