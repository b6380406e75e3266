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
    let compact = v.to_string();
    match truncate(&compact, max_chars) {
        Cow::Borrowed(_) => compact,
        Cow::Owned(cut) => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
