//! A JSON text described as a flat tape, from which a JS decoder builds the value
//! `JSON.parse` would build, without parsing the text again.
//!
//! `JSON.parse` of large arguments is most of what a call costs the JS thread (2.9 ms of
//! about 3.2 for 1 MB in the benchmark's B4), and only the JS thread can create JS
//! objects. So a worker, which already parses and validates the text, also lists its
//! values here, and the JS side (`decodeTape` in the package's `js/tape.mjs`) only creates
//! them: a string is a slice of the original JS string (by UTF-16 offsets), a number
//! comes parsed, and objects with the same keys in the same order are built by one
//! object literal.
//!
//! The tape is built from the text's UTF-16 code units, as JS holds it. Each value is:
//! - [`NULL`], [`TRUE`], [`FALSE`];
//! - [`NUMBER`], whose value is the next of [`Tape::numbers`];
//! - [`STRING`] `start end`: the code units between the quotes, with no escape;
//! - [`ESCAPED`] `start end`: a string with escapes, quotes included, for `JSON.parse`;
//! - [`ARRAY`] `length`, then that many values;
//! - [`OBJECT`] `shape`, then one value per key of that shape, in order.

use std::collections::HashMap;

pub const NULL: i32 = 0;
pub const TRUE: i32 = 1;
pub const FALSE: i32 = 2;
pub const NUMBER: i32 = 3;
pub const STRING: i32 = 4;
pub const ESCAPED: i32 = 5;
pub const ARRAY: i32 = 6;
pub const OBJECT: i32 = 7;

const RECENT_KEYS: usize = 256;

/// Nesting deeper than this gets no tape: the JS decoder recurses, `JSON.parse` does not.
pub const MAX_DEPTH: usize = 200;

/// The values of one JSON text; see the module documentation.
#[derive(Debug, Default, PartialEq)]
pub struct Tape {
    pub ops: Vec<i32>,
    pub numbers: Vec<f64>,
    /// The objects' key lists as JSON text, one array per shape, each starting with how
    /// many objects of the text have that shape: `[[2,"a","b"],[1]]`.
    pub shapes: String,
}

/// The tape of `units`, a JSON text as UTF-16 code units; `None` when the text is not
/// one well-formed JSON value, nests deeper than [`MAX_DEPTH`], is too long for `i32`
/// offsets, or has a key that is not valid Unicode (a lone surrogate).
pub fn build(units: &[u16]) -> Option<Tape> {
    if units.len() >= i32::MAX as usize {
        return None;
    }
    let mut b = Builder {
        units,
        at: 0,
        tape: Tape { ops: Vec::with_capacity(units.len() / 4), ..Tape::default() },
        recent: [(0, 0, u32::MAX); RECENT_KEYS],
        keys: HashMap::new(),
        key_names: Vec::new(),
        stack: Vec::new(),
        shapes: HashMap::new(),
        uses: Vec::new(),
    };
    b.value(0)?;
    b.skip_ws();
    if b.at != units.len() {
        return None;
    }
    let mut shapes = vec![serde_json::Value::Null; b.uses.len()];
    for (keys, &id) in &b.shapes {
        let mut entry = vec![serde_json::Value::from(b.uses[id as usize])];
        entry.extend(keys.iter().map(|&k| serde_json::Value::from(b.key_names[k as usize].as_str())));
        shapes[id as usize] = serde_json::Value::Array(entry);
    }
    b.tape.shapes = serde_json::to_string(&shapes).ok()?;
    Some(b.tape)
}

struct Builder<'a> {
    units: &'a [u16],
    at: usize,
    tape: Tape,
    /// Keys seen lately, as (start, end, id), in a slot picked from the key's length and
    /// first and last units; a hit is checked by comparing the units, so keys the text
    /// chooses can only cause misses. It spares most lookups in `keys`, whose hashing
    /// took a third of the time.
    recent: [(usize, usize, u32); RECENT_KEYS],
    /// Key ids by the key's code units as written (escapes included).
    keys: HashMap<&'a [u16], u32>,
    key_names: Vec<String>,
    /// The key ids of the objects being read, innermost last.
    stack: Vec<u32>,
    /// Shape ids by their key ids.
    shapes: HashMap<Vec<u32>, u32>,
    /// How many objects use each shape, by shape id.
    uses: Vec<u32>,
}

impl<'a> Builder<'a> {
    fn skip_ws(&mut self) {
        while let Some(&(0x20 | 0x09 | 0x0A | 0x0D)) = self.units.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, unit: u8) -> Option<()> {
        self.skip_ws();
        (self.units.get(self.at) == Some(&(unit as u16))).then(|| self.at += 1)
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_ws();
        match *self.units.get(self.at)? {
            0x7B => self.object(depth),
            0x5B => self.array(depth),
            0x22 => {
                let (start, end, escaped) = self.string()?;
                if escaped {
                    self.tape.ops.extend([ESCAPED, start as i32 - 1, end as i32 + 1]);
                } else {
                    self.tape.ops.extend([STRING, start as i32, end as i32]);
                }
                Some(())
            }
            0x74 => self.literal("true", TRUE),
            0x66 => self.literal("false", FALSE),
            0x6E => self.literal("null", NULL),
            _ => self.number(),
        }
    }

    fn literal(&mut self, word: &str, op: i32) -> Option<()> {
        let end = self.at + word.len();
        let found = self.units.get(self.at..end)?;
        if !found.iter().zip(word.bytes()).all(|(&u, b)| u == b as u16) {
            return None;
        }
        self.at = end;
        self.tape.ops.push(op);
        Some(())
    }

    /// A string at the cursor: the offsets of its contents, and whether it has escapes.
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            match *self.units.get(self.at)? {
                0x22 => break,
                0x5C => {
                    escaped = true;
                    self.at += 2;
                }
                u if u < 0x20 => return None,
                _ => self.at += 1,
            }
        }
        let end = self.at;
        self.at += 1;
        Some((start, end, escaped))
    }

    fn number(&mut self) -> Option<()> {
        let start = self.at;
        while let Some(&u) = self.units.get(self.at) {
            if !matches!(u, 0x30..=0x39 | 0x2D | 0x2B | 0x2E | 0x45 | 0x65) {
                break;
            }
            self.at += 1;
        }
        let written = &self.units[start..self.at];
        // Numbers are short: narrowed into a stack buffer (all are ASCII here).
        let mut buffer = [0u8; 64];
        let heap: Vec<u8>;
        let bytes = if written.len() <= buffer.len() {
            for (b, &u) in buffer.iter_mut().zip(written) {
                *b = u as u8;
            }
            &buffer[..written.len()]
        } else {
            heap = written.iter().map(|&u| u as u8).collect();
            &heap
        };
        let text = std::str::from_utf8(bytes).ok()?;
        if !json_number(text) {
            return None;
        }
        let value = match integer(bytes) {
            Some(n) => n,
            None => text.parse().ok()?,
        };
        self.tape.numbers.push(value);
        self.tape.ops.push(NUMBER);
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.at += 1;
        let at = self.tape.ops.len();
        self.tape.ops.extend([ARRAY, 0]);
        let mut length = 0;
        if self.eat(b']').is_none() {
            loop {
                self.value(depth + 1)?;
                length += 1;
                if self.eat(b',').is_none() {
                    self.eat(b']')?;
                    break;
                }
            }
        }
        self.tape.ops[at + 1] = length;
        Some(())
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.at += 1;
        let at = self.tape.ops.len();
        self.tape.ops.extend([OBJECT, 0]);
        let base = self.stack.len();
        if self.eat(b'}').is_none() {
            loop {
                self.skip_ws();
                if self.units.get(self.at) != Some(&0x22) {
                    return None;
                }
                let (start, end, escaped) = self.string()?;
                let key = self.key(start, end, escaped)?;
                self.stack.push(key);
                self.eat(b':')?;
                self.value(depth + 1)?;
                if self.eat(b',').is_none() {
                    self.eat(b'}')?;
                    break;
                }
            }
        }
        let shape = match self.shapes.get(&self.stack[base..]) {
            Some(&id) => id,
            None => {
                let id = self.uses.len() as u32;
                self.shapes.insert(self.stack[base..].to_vec(), id);
                self.uses.push(0);
                id
            }
        };
        self.uses[shape as usize] += 1;
        self.stack.truncate(base);
        self.tape.ops[at + 1] = shape as i32;
        Some(())
    }

    /// The id of the key written as `units[start..end]`, decoded on first sight.
    fn key(&mut self, start: usize, end: usize, escaped: bool) -> Option<u32> {
        let written = &self.units[start..end];
        let slot = match written {
            [] => 0,
            [first, .., last] | [first @ last] => (written.len() * 31 + *first as usize * 7 + *last as usize) % RECENT_KEYS,
        };
        let (s, e, id) = self.recent[slot];
        if id != u32::MAX && self.units[s..e] == *written {
            return Some(id);
        }
        if let Some(&id) = self.keys.get(written) {
            self.recent[slot] = (start, end, id);
            return Some(id);
        }
        let name = if escaped {
            // The quotes make it a JSON string; serde_json refuses lone surrogates.
            let quoted = String::from_utf16(&self.units[start - 1..end + 1]).ok()?;
            serde_json::from_str::<String>(&quoted).ok()?
        } else {
            String::from_utf16(written).ok()?
        };
        let id = self.key_names.len() as u32;
        self.key_names.push(name);
        self.keys.insert(written, id);
        self.recent[slot] = (start, end, id);
        Some(id)
    }
}

/// A well-formed JSON number of at most 15 digits and no fraction or exponent, which
/// is exact as an `f64` (so no rounding to get right). `-0` is `-0.0`, as in JS.
fn integer(bytes: &[u8]) -> Option<f64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64;
    Some(if negative { -n } else { n })
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
fn json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tape(text: &str) -> Option<Tape> {
        build(&text.encode_utf16().collect::<Vec<_>>())
    }

    #[test]
    fn objects_of_one_key_list_share_a_shape() {
        let t = tape(r#"[{"a":1,"b":"xy"},{"a":-0.5e1,"b":null}, {"b":true,"a":false}]"#).unwrap();
        assert_eq!(t.ops, vec![ARRAY, 3, OBJECT, 0, NUMBER, STRING, 13, 15, OBJECT, 0, NUMBER, NULL, OBJECT, 1, TRUE, FALSE]);
        assert_eq!(t.numbers, vec![1.0, -5.0]);
        assert_eq!(t.shapes, r#"[[2,"a","b"],[1,"b","a"]]"#);
    }

    #[test]
    fn strings_with_escapes_keep_their_quotes_and_keys_are_decoded() {
        let t = tape(r#"{"k\u00e9y":"a\"b","":[]}"#).unwrap();
        assert_eq!(t.ops, vec![OBJECT, 0, ESCAPED, 12, 18, ARRAY, 0]);
        assert_eq!(t.shapes, r#"[[1,"kéy",""]]"#);
    }

    #[test]
    fn offsets_count_utf16_code_units() {
        // '😀' is two code units (four bytes in UTF-8): the second string's contents start at 8.
        let t = tape("[\"😀\", \"z\"]").unwrap();
        assert_eq!(t.ops, vec![ARRAY, 2, STRING, 2, 4, STRING, 8, 9]);
    }

    #[test]
    fn a_raw_lone_surrogate_in_a_value_is_kept_but_not_in_a_key() {
        let mut units: Vec<u16> = "[\"x\"]".encode_utf16().collect();
        units[2] = 0xD800;
        assert_eq!(build(&units).unwrap().ops, vec![ARRAY, 1, STRING, 2, 3]);
        let mut units: Vec<u16> = "{\"x\":1}".encode_utf16().collect();
        units[2] = 0xD800;
        assert_eq!(build(&units), None);
        assert_eq!(tape(r#"{"\ud800":1}"#), None);
    }

    #[test]
    fn what_json_parse_refuses_gets_no_tape() {
        for bad in ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "-", "1e", "tru", "nul", "[1] 2", "{'a':1}", "\"a\nb\"", "NaN", "{\"a\"}"] {
            assert_eq!(tape(bad), None, "{bad:?}");
        }
        for good in ["0", "-0", "1e400", " [ ] ", "\"\"", "{}", "1E+2", "[[[]]]"] {
            assert!(tape(good).is_some(), "{good:?}");
        }
    }

    #[test]
    fn numbers_are_what_js_reads() {
        let t = tape("[0,-0,7,-12,123456789012345,1234567890123456789,1.5,-2.5e-3,1E2,5e-324,1e400]").unwrap();
        let expected = [0.0, -0.0, 7.0, -12.0, 123456789012345.0, 1234567890123456789.0, 1.5, -0.0025, 100.0, 5e-324, f64::INFINITY];
        assert_eq!(t.numbers.len(), expected.len());
        for (got, want) in t.numbers.iter().zip(expected) {
            assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}");
        }
    }

    #[test]
    fn nesting_deeper_than_the_limit_gets_no_tape() {
        let nested = |depth: usize| "[".repeat(depth) + &"]".repeat(depth);
        assert!(tape(&nested(MAX_DEPTH + 1)).is_some());
        assert_eq!(tape(&nested(MAX_DEPTH + 2)), None);
    }
}
