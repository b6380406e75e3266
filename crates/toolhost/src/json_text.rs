//! JSON text read as `JSON.parse` reads it, where serde_json is stricter.
//!
//! - **Lone surrogates.** `"\uD800"` is valid JSON text, and `JSON.parse` gives a string
//!   holding that one UTF-16 code unit. A Rust string cannot hold it, and serde_json
//!   refuses the text. Here such an escape reads as U+FFFD (one character, as the
//!   surrogate is one code unit), which is also what N-API makes of a lone surrogate in a
//!   JS string: the text validates as the value does. A host that hands the handler
//!   `JSON.parse` of the same text gives it the surrogate itself.
//! - **Numbers.** `JSON.parse` reads every number as a double, so `9007199254740993`
//!   reaches a handler as `9007199254740992`. serde_json reads an integer that fits `u64`
//!   or `i64` exactly, and a schema would then judge a number the handler never gets
//!   (`exclusiveMinimum: 9007199254740992` would pass it). Here an integer beyond
//!   ±2^53 reads as the nearest double, as JS reads it (within ±2^53 every integer is a
//!   double exactly, and stays an integer), and decimals are parsed exactly rounded
//!   (serde_json's `float_roundtrip`), as JS parses them: the value validated is the
//!   value the handler gets.
//! - **Depth of a model response.** A response nests a call's arguments a few levels
//!   down, so serde_json's 128-level limit on the whole response would cut the arguments'
//!   own limit short, and throw for every call at once. [`payload_from_str`] reads a
//!   response to [`MAX_PAYLOAD_DEPTH`] levels and cuts what is deeper (replaced by
//!   `null`, skipped without recursion): arguments deeper than [`MAX_ARGUMENT_DEPTH`]
//!   stay deeper than it after the cut, so each such call is refused on its own.
//! - **Size of a model response.** A call's arguments of 20 MB of small values (4M
//!   `null`s) took seconds to read, copy and write out again before the argument limit
//!   refused them. [`payload_cutting_from_str`] stops reading an array or object once
//!   its own entries are more text than [`MAX_ARGUMENT_BYTES`] (each counted at its
//!   least: `null,` 5 bytes, a string 2 plus its key), replaces it by `null` and reports
//!   where: arguments holding it are over the limit whatever else they hold.

use std::cell::RefCell;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::arguments::{MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH};

/// How deep a model response is read before values are cut: room for any provider's
/// envelope (Gemini's, the deepest, puts arguments 7 levels down) above the arguments'
/// own [`MAX_ARGUMENT_DEPTH`] levels.
pub const MAX_PAYLOAD_DEPTH: usize = MAX_ARGUMENT_DEPTH + 64;

/// Parses JSON text, reading lone surrogate escapes as U+FFFD and numbers as JS reads
/// them; 128 levels at most.
///
/// # Errors
/// serde_json's error for text that is not JSON (or nests 128 levels deep).
pub fn from_str(text: &str) -> serde_json::Result<Value> {
    lossy(text, parse).map(|(v, _)| v)
}

/// `read(text)`, or, when that fails on a lone surrogate escape, `read` of the text with
/// each such escape written as `\uFFFD`; the flag says whether it was.
fn lossy<T>(text: &str, read: impl Fn(&str) -> serde_json::Result<T>) -> serde_json::Result<(T, bool)> {
    match read(text) {
        Err(e) if e.is_syntax() => match without_lone_surrogates(text) {
            Some(fixed) => read(&fixed).map(|v| (v, true)),
            None => Err(e),
        },
        other => other.map(|v| (v, false)),
    }
}

/// Reads JSON text a JS host wrote into `T`, a lone surrogate escape as U+FFFD:
/// `JSON.stringify` writes a string cut inside a surrogate pair (`s.slice(0, n)` of an
/// emoji) as `"\ud83d"`, which serde_json refuses.
///
/// # Errors
/// serde_json's error for text that is not JSON, or not a `T`.
pub fn from_str_as<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    lossy(text, |t| serde_json::from_str(t)).map(|(v, _)| v)
}

/// Parses JSON text with numbers read as JS reads them; 128 levels at most, and a lone
/// surrogate escape is an error (see [`from_str`] for text from a model).
///
/// # Errors
/// serde_json's error for text that is not JSON (or nests 128 levels deep).
pub fn parse(text: &str) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    // serde_json's own recursion limit (128) still applies: it is checked by the
    // deserializer at each `[` and `{`, whatever the visitor.
    let v = Capped { depth: usize::MAX, cuts: None }.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Parses a model response: lone surrogate escapes read as U+FFFD, values below
/// [`MAX_PAYLOAD_DEPTH`] levels replaced by `null`. The flag says whether a lone
/// surrogate was replaced (a value of the response then differs from `JSON.parse`'s).
///
/// # Errors
/// serde_json's error for text that is not JSON.
pub fn payload_from_str(text: &str) -> serde_json::Result<(Value, bool)> {
    lossy(text, capped)
}

/// As [`payload_from_str`], and arrays and objects whose own entries are more text than
/// [`MAX_ARGUMENT_BYTES`] are cut: read no further, replaced by `null`, and listed by
/// their JSON pointers in the response.
///
/// # Errors
/// serde_json's error for text that is not JSON.
pub fn payload_cutting_from_str(text: &str) -> serde_json::Result<(Value, bool, Vec<String>)> {
    let cuts = RefCell::new(Vec::new());
    let read = |text: &str| {
        cuts.borrow_mut().clear();
        capped_with(text, Some(&cuts))
    };
    let (value, replaced) = lossy(text, read)?;
    // Each path was built from the cut value up.
    let pointers = cuts.into_inner().into_iter().map(|segments| segments.iter().rev().map(|s| format!("/{s}")).collect()).collect();
    Ok((value, replaced, pointers))
}

fn capped(text: &str) -> serde_json::Result<Value> {
    capped_with(text, None)
}

fn capped_with(text: &str, cuts: Option<&Cuts>) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    // The seed's own depth count bounds the recursion instead.
    de.disable_recursion_limit();
    let v = Capped { depth: MAX_PAYLOAD_DEPTH, cuts }.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// The values cut so far, each as its path's segments (JSON-pointer escaped) from the
/// cut value up to the root: a parent adds its own segment to the cuts its child made.
type Cuts = RefCell<Vec<Vec<String>>>;

/// The least text `v` takes as an entry of an array, its separator included: a string
/// counts only its quotes, and an array or object only its brackets.
fn least_text(v: &Value) -> usize {
    1 + match v {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(_) => 1,
        Value::String(_) | Value::Array(_) | Value::Object(_) => 2,
    }
}

/// `text` with every `\u` escape of a lone surrogate written as `\uFFFD`, or `None`
/// when it has none. Escaped backslashes are skipped as pairs, so `\\uD800` (a
/// backslash, then `uD800`) is left alone.
pub fn without_lone_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| std::str::from_utf8(b.get(at + 2..at + 6)?).ok().and_then(|h| u16::from_str_radix(h, 16).ok()))
            .flatten()
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match unit(i) {
            // A pair: kept.
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
            Some(0xD800..=0xDFFF) => {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..i]);
                o.push_str("\\uFFFD");
                i += 6;
                copied = i;
            }
            _ => i += 2,
        }
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// Integers of at most this magnitude are doubles exactly: JS reads them unchanged.
const EXACT_IN_DOUBLE: u64 = 1 << 53;

/// A JSON value read to at most `depth` levels of arrays and objects, its numbers read
/// as JS reads them, and, given `cuts`, its large arrays and objects cut (see the module
/// documentation).
#[derive(Clone, Copy)]
struct Capped<'c> {
    depth: usize,
    cuts: Option<&'c Cuts>,
}

impl Capped<'_> {
    fn child(self) -> Self {
        Capped { depth: self.depth - 1, ..self }
    }

    fn cut_count(self) -> usize {
        self.cuts.map_or(0, |c| c.borrow().len())
    }

    /// Adds `segment` to the paths of the cuts made since there were `before`.
    fn up(self, before: usize, segment: impl FnOnce() -> String) {
        if let Some(cuts) = self.cuts {
            let mut cuts = cuts.borrow_mut();
            if cuts.len() > before {
                let segment = segment();
                cuts[before..].iter_mut().for_each(|path| path.push(segment.clone()));
            }
        }
    }

    /// Whether an array or object whose own entries take at least `least` bytes of text
    /// is cut here; if so it is listed as cut.
    fn cuts_at(self, least: usize) -> bool {
        let Some(cuts) = self.cuts.filter(|_| least > MAX_ARGUMENT_BYTES) else { return false };
        cuts.borrow_mut().push(Vec::new());
        true
    }
}

impl<'de> DeserializeSeed<'de> for Capped<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.depth == 0 {
            d.deserialize_ignored_any(IgnoredAny)?;
            return Ok(Value::Null);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Capped<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        if v.unsigned_abs() <= EXACT_IN_DOUBLE {
            Ok(Value::Number(v.into()))
        } else {
            // `as` rounds to the nearest double, ties to even: JS's reading of the digits.
            self.visit_f64(v as f64)
        }
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        if v <= EXACT_IN_DOUBLE {
            Ok(Value::Number(v.into()))
        } else {
            self.visit_f64(v as f64)
        }
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        let mut least = 1;
        loop {
            let before = self.cut_count();
            let Some(v) = seq.next_element_seed(self.child())? else { break };
            self.up(before, || items.len().to_string());
            least += least_text(&v);
            items.push(v);
            if self.cuts_at(least) {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(Value::Null);
            }
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let mut least = 1;
        while let Some(key) = map.next_key::<String>()? {
            let before = self.cut_count();
            let v = map.next_value_seed(self.child())?;
            self.up(before, || key.replace('~', "~0").replace('/', "~1"));
            least += key.len() + 3 + least_text(&v);
            out.insert(key, v);
            if self.cuts_at(least) {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(Value::Null);
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lone_surrogates_read_as_the_replacement_character() {
        assert_eq!(from_str(r#"{"s":"\uD800"}"#).unwrap(), json!({"s": "\u{FFFD}"}));
        assert_eq!(from_str(r#"{"s":"\udc00\uD800x"}"#).unwrap(), json!({"s": "\u{FFFD}\u{FFFD}x"}));
        assert_eq!(from_str(r#"{"s":"\ud83d\ude00"}"#).unwrap(), json!({"s": "😀"}));
        // An escaped backslash, then the letters uD800: no surrogate at all.
        assert_eq!(from_str(r#"{"s":"\\uD800"}"#).unwrap(), json!({"s": "\\uD800"}));
        assert_eq!(without_lone_surrogates(r#"["\\uD800", "\ud83d\ude00"]"#), None);
        // Text that is not JSON for another reason keeps its own error.
        assert!(from_str(r#"{"s":"\uD800""#).unwrap_err().to_string().contains("EOF"));
    }

    #[test]
    fn a_response_is_read_past_128_levels_and_cut_below_its_cap() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let (v, lossy) = payload_from_str(&format!(r#"{{"m":{{"input":{}}}}}"#, deep(127))).unwrap();
        assert!(!lossy);
        assert!(crate::arguments::parse_arguments("t", &v["m"]["input"].to_string()).is_ok());
        // Far too deep: cut, yet still deeper than the arguments' limit.
        let (v, _) = payload_from_str(&format!(r#"{{"m":{{"input":{}}}}}"#, deep(100_000))).unwrap();
        let e = crate::arguments::parse_arguments("t", &v["m"]["input"].to_string()).unwrap_err();
        assert!(e.message.contains("nested more than 127 levels deep"), "{}", e.message);
        let (v, lossy) = payload_from_str(r#"[{"s":"\uDBFF"}]"#).unwrap();
        assert!(lossy);
        assert_eq!(v, json!([{"s": "\u{FFFD}"}]));
        assert!(payload_from_str("[1,]").is_err());
    }

    /// The double JS's `JSON.parse` makes of each number text, written out by hand.
    const JS_NUMBERS: [(&str, f64); 12] = [
        ("9007199254740992", 9007199254740992.0),
        ("9007199254740993", 9007199254740992.0),
        ("9007199254740995", 9007199254740996.0),
        ("-9007199254740993", -9007199254740992.0),
        ("18446744073709551615", 18446744073709551616.0),
        ("18446744073709551617", 18446744073709551616.0),
        ("-9223372036854775809", -9223372036854775808.0),
        ("9007199254740993.0", 9007199254740992.0),
        ("90071992547409930e-1", 9007199254740992.0),
        ("9007199254740992.9999999999", 9007199254740992.0),
        ("2.2250738585072011e-308", 2.225073858507201e-308),
        ("0.1", 0.1),
    ];

    #[test]
    fn numbers_read_as_js_reads_them() {
        for (text, js) in JS_NUMBERS {
            for parsed in [from_str(text).unwrap(), parse(text).unwrap(), payload_from_str(text).unwrap().0] {
                assert_eq!(parsed.as_f64().map(f64::to_bits), Some(js.to_bits()), "{text} read as {parsed}");
                // Past 2^53 an integer is a double, as in JS: no exact u64 or i64 is left.
                assert!(parsed.as_u64().is_none_or(|n| n <= EXACT_IN_DOUBLE) && parsed.as_i64().is_none_or(|n| n.unsigned_abs() <= EXACT_IN_DOUBLE), "{text}");
            }
        }
        // Within ±2^53 integers stay integers (`type: integer`, exact `const`).
        assert_eq!(parse("[9007199254740992,-9007199254740992,0,-5]").unwrap(), json!([9007199254740992u64, -9007199254740992i64, 0, -5]));
        assert!(parse("9007199254740992").unwrap().is_u64());
        // In a model response's arguments too.
        let (v, _) = payload_from_str(r#"{"input":{"n":9007199254740993}}"#).unwrap();
        assert_eq!(v["input"]["n"].as_f64(), Some(9007199254740992.0));
        assert!(!v["input"]["n"].is_u64());
    }

    #[test]
    fn a_schema_judges_the_number_js_reads() {
        let schema = crate::schema::CompiledSchema::compile("t", &json!({"type": "object", "properties": {"n": {"exclusiveMinimum": 9007199254740992u64}}})).unwrap();
        assert!(!schema.is_valid(&from_str(r#"{"n":9007199254740993}"#).unwrap()));
        assert!(schema.is_valid(&from_str(r#"{"n":9007199254740995}"#).unwrap()));
        let schema = crate::schema::CompiledSchema::compile("t", &json!({"type": "object", "properties": {"n": {"maximum": 9007199254740992u64}}})).unwrap();
        assert!(schema.is_valid(&from_str(r#"{"n":9007199254740993}"#).unwrap()));
        // The tape a worker builds for the JS thread holds the same numbers.
        for (text, _) in JS_NUMBERS {
            let units: Vec<u16> = text.encode_utf16().collect();
            let tape = crate::tape::build(&units).unwrap();
            assert_eq!(tape.numbers[0].to_bits(), parse(text).unwrap().as_f64().unwrap().to_bits(), "{text}");
        }
    }

    #[test]
    fn a_response_is_cut_where_an_array_or_object_alone_is_over_the_argument_limit() {
        let nulls = |n: usize| format!("[{}null]", "null,".repeat(n - 1));
        // 5 bytes a null: the cut comes once the entries pass 16 MiB.
        let over = nulls(MAX_ARGUMENT_BYTES / 5 + 1);
        let (v, lossy, cuts) = payload_cutting_from_str(&format!(r#"{{"c":[{{"in~put":{{"a/b":{over}}}}},{{"in":{{}}}}],"d":{over}}}"#)).unwrap();
        assert!(!lossy);
        assert_eq!(cuts, ["/c/0/in~0put/a~1b", "/d"]);
        assert_eq!(v, json!({"c": [{"in~put": {"a/b": null}}, {"in": {}}], "d": null}));
        // Just within: kept whole.
        let within = nulls((MAX_ARGUMENT_BYTES - 1) / 5);
        let (v, _, cuts) = payload_cutting_from_str(&within).unwrap();
        assert!(cuts.is_empty());
        assert_eq!(v.as_array().unwrap().len(), (MAX_ARGUMENT_BYTES - 1) / 5);
        // A long string is cheap to read whole: it does not count towards a cut.
        let (_, _, cuts) = payload_cutting_from_str(&format!(r#"{{"s":"{}"}}"#, "x".repeat(MAX_ARGUMENT_BYTES + 10))).unwrap();
        assert!(cuts.is_empty());
    }
}
