//! A valid ECMA-262 pattern rewritten so that a Rust engine matches what
//! `new RegExp(pattern, 'u')` matches: the linear-time `regex` engine, or the backtracking
//! `fancy-regex` engine for what `regex` cannot run (see [`crate::pattern_dialect`]).
//!
//! Both engines:
//! - `.` leaves out the line terminators `\n`, `\r`, U+2028 and U+2029 (the engines'
//!   only leave out `\n`); within a `(?s:...)` group it is any character.
//! - `\b` and `\B` are boundaries of ASCII word characters (`[A-Za-z0-9_]`, as `\w` is;
//!   the engines' are Unicode-aware). Within `(?i:...)` ECMA-262 also counts `ſ` (U+017F)
//!   and the Kelvin sign (U+212A), which fold to `s` and `k`: only the backtracking
//!   engine can say that, so such a pattern needs it.
//! - `[\b]` is U+0008, `\0` is U+0000, `[^]` is any character and `[]` none.
//!
//! Backtracking engine only (the linear path leaves these to
//! `jsonschema_regex::to_rust_regex`, which translates `\d`, `\w`, `\s` and `\cX`, but
//! leaves a pattern with look-around untouched):
//! - `\d`, `\w`, `\s` and their negations are ECMA-262's classes, spelt out;
//! - a backreference to a group that did not take part matches the empty string, as in
//!   ECMA-262 (`(?(1)\1)`; fancy-regex's own `\1` fails there);
//! - within `(?m:...)`, `^` and `$` are at every line terminator of the four, not only at
//!   `\n` (look-behind and look-ahead), so such a pattern needs this engine.

use std::borrow::Cow;

/// The engine a pattern is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Engine {
    /// The linear-time `regex` engine: no pattern can stall it.
    Linear,
    /// `fancy-regex`, backtracking within [`crate::pattern_dialect::BACKTRACK_LIMIT`] steps.
    Backtracking,
}

/// A pattern rewritten for an engine.
#[derive(Debug, PartialEq)]
pub struct Rewritten<'a> {
    pub text: Cow<'a, str>,
    /// Whether only the backtracking engine runs the pattern with ECMA-262's meaning:
    /// look-around, a backreference, `\b` or `\B` within `(?i:...)`, `^` or `$` within
    /// `(?m:...)`.
    pub needs_backtracking: bool,
}

/// ECMA-262's `\s`: WhiteSpace and LineTerminator.
const WHITESPACE: &[(u32, u32)] = &[
    (0x9, 0xD), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
    (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF),
];
const DIGITS: &[(u32, u32)] = &[(0x30, 0x39)];
const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// `\w` within `(?i:...)`: `ſ` and `K` fold into it.
const WORD_FOLDED: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A), (0x17F, 0x17F), (0x212A, 0x212A)];
const LINE_TERMINATORS: &str = "\\n\\r\\x{2028}\\x{2029}";

/// The flags of the innermost group: `(?i:`, `(?m:`, `(?s:` and `(?-i:` ... modifiers.
#[derive(Clone, Copy, Default)]
struct Flags {
    i: bool,
    m: bool,
    s: bool,
}

/// The flags inside a group whose `(` is followed by `after`: a modifier group's, or the
/// enclosing `flags` for any other group.
fn group_flags(after: &str, mut flags: Flags) -> Flags {
    let Some(rest) = after.strip_prefix('?') else { return flags };
    let Some(end) = rest.find(|c: char| !matches!(c, 'i' | 'm' | 's' | '-')) else { return flags };
    if !rest[end..].starts_with(':') {
        return flags;
    }
    let (added, removed) = rest[..end].split_once('-').unwrap_or((&rest[..end], ""));
    for (set, on) in [(added, true), (removed, false)] {
        for c in set.chars() {
            match c {
                'i' => flags.i = on,
                'm' => flags.m = on,
                _ => flags.s = on,
            }
        }
    }
    flags
}

/// `ranges` as class items (`0-9A-Z`), or their complement when `negated`.
fn class_items(ranges: &[(u32, u32)], negated: bool) -> String {
    let mut spans = Vec::new();
    if negated {
        let mut next = 0u32;
        for &(lo, hi) in ranges {
            if lo > next {
                spans.push((next, lo - 1));
            }
            next = hi + 1;
        }
        spans.push((next, 0x10FFFF));
    } else {
        spans.extend_from_slice(ranges);
    }
    spans.iter().map(|(lo, hi)| if lo == hi { format!("\\x{{{lo:X}}}") } else { format!("\\x{{{lo:X}}}-\\x{{{hi:X}}}") }).collect()
}

/// `\d`, `\w`, `\s` (or a negation) spelt out: class items inside a class, a class outside.
fn class_escape(e: char, in_class: bool, flags: Flags) -> String {
    let ranges = match e.to_ascii_lowercase() {
        'd' => DIGITS,
        's' => WHITESPACE,
        _ if flags.i => WORD_FOLDED,
        _ => WORD,
    };
    let negated = e.is_ascii_uppercase();
    if in_class {
        class_items(ranges, negated)
    } else {
        format!("[{}{}]", if negated { "^" } else { "" }, class_items(ranges, false))
    }
}

/// `\b` (or `\B` when `not`) as look-around on ECMA-262's word characters.
fn boundary(not: bool, flags: Flags) -> String {
    let w = format!("[{}]", class_items(if flags.i { WORD_FOLDED } else { WORD }, false));
    if not {
        format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
    } else {
        format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
    }
}

/// Rewrites `pattern` (valid ECMA-262 with the `u` flag) for `engine`: see the module
/// documentation. Borrowed when nothing needs rewriting.
pub fn rewrite(pattern: &str, engine: Engine) -> Rewritten<'_> {
    let backtracking = engine == Engine::Backtracking;
    if !pattern.contains(['.', '\\', '[', '(']) {
        return Rewritten { text: Cow::Borrowed(pattern), needs_backtracking: false };
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = false;
    let mut needs = false;
    // A backreference became a conditional, which jsonschema's translation cannot parse.
    let mut conditional = false;
    let mut flags = vec![Flags::default()];
    let mut chars = pattern.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let f = flags.last().copied().unwrap_or_default();
        match c {
            '\\' => match chars.next() {
                Some((_, 'b')) if in_class => out.push_str("\\x08"),
                // Valid ECMA-262 has no digit after `\0`: it is U+0000, not a backreference.
                Some((_, '0')) => out.push_str("\\x00"),
                Some((_, e @ ('b' | 'B'))) => {
                    needs |= f.i;
                    if backtracking {
                        out.push_str(&boundary(e == 'B', f));
                    } else {
                        out.push_str("(?-u:\\");
                        out.push(e);
                        out.push(')');
                    }
                }
                Some((_, e @ ('d' | 'D' | 'w' | 'W' | 's' | 'S'))) if backtracking => out.push_str(&class_escape(e, in_class, f)),
                Some((_, d @ '1'..='9')) if !in_class => {
                    needs = true;
                    let mut group = String::from(d);
                    while let Some((_, d)) = chars.next_if(|(_, d)| d.is_ascii_digit()) {
                        group.push(d);
                    }
                    if backtracking {
                        conditional = true;
                        out.push_str(&format!("(?({group})\\{group})"));
                    } else {
                        out.push('\\');
                        out.push_str(&group);
                    }
                }
                Some((_, 'k')) if !in_class && chars.peek().is_some_and(|(_, c)| *c == '<') => {
                    needs = true;
                    let mut name = String::new();
                    chars.next();
                    while let Some((_, c)) = chars.next_if(|(_, c)| *c != '>') {
                        name.push(c);
                    }
                    chars.next();
                    if backtracking {
                        conditional = true;
                        out.push_str(&format!("(?(<{name}>)\\k<{name}>)"));
                    } else {
                        out.push_str(&format!("\\k<{name}>"));
                    }
                }
                Some((_, 'c')) if backtracking && chars.peek().is_some_and(|(_, c)| c.is_ascii_alphabetic()) => {
                    let (_, letter) = chars.next().expect("peeked");
                    out.push_str(&format!("\\x{{{:X}}}", letter as u32 % 32));
                }
                // Any other escape is copied; what follows it (hex digits, a `{...}`
                // property or code point) holds none of `.[]()^$`.
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ if in_class => out.push(c),
            '[' if pattern[at..].starts_with("[^]") => {
                chars.nth(1);
                out.push_str("(?s:.)");
            }
            '[' if pattern[at..].starts_with("[]") => {
                chars.next();
                out.push_str("[^\\x{0}-\\x{10FFFF}]");
            }
            '[' => {
                in_class = true;
                out.push(c);
            }
            '(' => {
                let after = &pattern[at + 1..];
                needs |= ["?=", "?!", "?<=", "?<!"].iter().any(|l| after.starts_with(l));
                flags.push(group_flags(after, f));
                out.push(c);
            }
            ')' => {
                if flags.len() > 1 {
                    flags.pop();
                }
                out.push(c);
            }
            '.' if !f.s => out.push_str("[^\\n\\r\\u2028\\u2029]"),
            '^' | '$' if f.m => {
                needs = true;
                if !backtracking {
                    out.push(c);
                } else if c == '^' {
                    out.push_str(&format!("(?<![^{LINE_TERMINATORS}])"));
                } else {
                    out.push_str(&format!("(?![^{LINE_TERMINATORS}])"));
                }
            }
            _ => out.push(c),
        }
    }
    if conditional {
        // An empty look-ahead first: jsonschema's translation stops at the first
        // look-around and hands the pattern on as it is, where a conditional would fail it.
        out.insert_str(0, "(?=)");
    }
    let text = if out == pattern { Cow::Borrowed(pattern) } else { Cow::Owned(out) };
    Rewritten { text, needs_backtracking: needs }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(p: &str) -> String {
        rewrite(p, Engine::Linear).text.into_owned()
    }

    fn backtracking(p: &str) -> String {
        rewrite(p, Engine::Backtracking).text.into_owned()
    }

    #[test]
    fn says_which_patterns_need_the_backtracking_engine() {
        for p in ["^(?=.*\\d)", "(?<!x)y", "(a)\\1", "(?<n>a)\\k<n>", "(?i:\\bab)", "(?m:^a$)", "(?im:a$)"] {
            assert!(rewrite(p, Engine::Linear).needs_backtracking, "{p}");
        }
        for p in ["^[a-z]+$", "\\bab\\b", "(?i:ab)", "(?m:ab)", "[(?=x)]", "^(?:a)$", "(?<name>a)", "[\\1]", "(?s:.)$"] {
            assert!(!rewrite(p, Engine::Linear).needs_backtracking, "{p}");
        }
    }

    #[test]
    fn the_linear_rewrite_is_as_before() {
        assert_eq!(linear("^a.\\bz$"), "^a[^\\n\\r\\u2028\\u2029](?-u:\\b)z$");
        assert_eq!(linear("[\\b]\\0[^][]"), "[\\x08]\\x00(?s:.)[^\\x{0}-\\x{10FFFF}]");
        assert_eq!(linear("(?s:.)(.)"), "(?s:.)([^\\n\\r\\u2028\\u2029])");
        assert!(matches!(rewrite("^[a-z]+\\d$", Engine::Linear).text, Cow::Borrowed(_)));
    }

    #[test]
    fn the_backtracking_rewrite_spells_out_ecma_meanings() {
        assert_eq!(backtracking("\\d\\W"), "[\\x{30}-\\x{39}][^\\x{30}-\\x{39}\\x{41}-\\x{5A}\\x{5F}\\x{61}-\\x{7A}]");
        assert_eq!(backtracking("[\\D]"), "[\\x{0}-\\x{2F}\\x{3A}-\\x{10FFFF}]");
        assert_eq!(backtracking("(a)?\\1"), "(?=)(a)?(?(1)\\1)");
        assert_eq!(backtracking("(?<y>a)\\k<y>"), "(?=)(?<y>a)(?(<y>)\\k<y>)");
        assert_eq!(backtracking("\\cJ"), "\\x{A}");
        assert_eq!(backtracking("(?m:^)a^"), "(?m:(?<![^\\n\\r\\x{2028}\\x{2029}]))a^");
        assert!(backtracking("(?i:\\b)").contains("\\x{17F}\\x{212A}"));
        assert!(!backtracking("\\b").contains("\\x{17F}"));
    }
}
