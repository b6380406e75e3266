//! Line formatting for the built-in logging interceptor.
//!
//! Each builder returns a [`LogLine`]: a level, a human message and a map of
//! structured fields (camelCase keys). Payloads (`args`, `result`) are only
//! included when [`LogOptions::log_arguments`] is set, and then as a
//! preview string: redacted first (see [`crate::redaction`]), then
//! serialised compactly and cut to [`LogOptions::truncate_logs`] chars (see
//! [`crate::truncation`]). [`emit_tracing`] sends a line through `tracing`.

use crate::redaction::redact;
use crate::truncation::preview_into;
use serde_json::{Map, Value};
use std::fmt::{self, Write as _};

/// Number of stack lines kept in an error line's `stack` field.
pub const STACK_LINES: usize = 5;
/// Characters kept of each stack line when `truncate_logs` is smaller: a frame's line
/// with its file path fits.
pub const STACK_LINE_CHARS: usize = 300;

/// Severity of a log line. Displays in lower case (`debug`, `info`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options of the logging interceptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogOptions {
    /// Include `args` (and `result`) previews. Default `true`.
    pub log_arguments: bool,
    /// Max chars of a payload preview, "…" excluded. Default `100`.
    pub truncate_logs: usize,
    /// Object keys whose values are redacted (case-insensitive). Default empty.
    pub redact: Vec<String>,
}

impl LogOptions {
    /// The most chars of argument text that can be its own preview: `truncate_logs` when
    /// arguments are logged and there is nothing to redact, else None. Within it, text with
    /// no whitespace outside strings is what a Starting line shows
    /// ([`CallOptions::given_args_chars`](crate::CallOptions::given_args_chars)).
    pub fn given_args_limit(&self) -> Option<usize> {
        (self.log_arguments && self.redact.is_empty()).then_some(self.truncate_logs)
    }
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            log_arguments: true,
            truncate_logs: 100,
            redact: Vec::new(),
        }
    }
}

/// A formatted line: level, message, structured fields.
/// One line of the built-in logging interceptor.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
    pub fields: LogFields,
}

/// The structured fields of a [`LogLine`]; absent ones are left out of [`LogFields::to_map`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogFields {
    pub execution_id: String,
    pub tool_name: String,
    pub attempt_number: Option<u32>,
    /// A preview of the arguments: redacted, then cut to `truncate_logs` characters.
    pub args: Option<String>,
    /// The preview is the call's own argument text, which its driver keeps and fills in
    /// (`args` is then None): see [`CallOptions::given_args_chars`](crate::CallOptions::given_args_chars).
    pub args_given: bool,
    pub duration_ms: Option<f64>,
    /// A preview of the result, like `args`.
    pub result: Option<String>,
    pub error: Option<String>,
    /// The first [`STACK_LINES`] lines of the error's stack.
    pub stack: Option<String>,
}

impl LogFields {
    /// The fields as JSON with camelCase keys: `executionId`, `toolName`, then those present.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("executionId".into(), Value::String(self.execution_id.clone()));
        m.insert("toolName".into(), Value::String(self.tool_name.clone()));
        if let Some(n) = self.attempt_number {
            m.insert("attemptNumber".into(), n.into());
        }
        let strings = [("args", &self.args), ("result", &self.result), ("error", &self.error), ("stack", &self.stack)];
        for (k, v) in strings {
            if let Some(v) = v {
                m.insert(k.into(), Value::String(v.clone()));
            }
        }
        if let Some(d) = self.duration_ms {
            m.insert("durationMs".into(), Value::from(d));
        }
        m
    }
}

/// Spare lines and strings for the next lines to reuse: the engine writes two lines a
/// call when logging, and building them fresh cost ten allocations and frees (B6).
/// [`recycle`](Self::recycle) takes lines back once they are written.
#[derive(Debug, Default)]
pub struct LineBuffers {
    lines: Vec<LogLine>,
    strings: Vec<String>,
}

/// Spares kept at most, so a burst of lines does not keep its memory.
const SPARES: usize = 16;

impl LineBuffers {
    /// Takes back written lines, keeping their buffers; `lines` is left empty.
    ///
    /// The strings are taken out where the lines lie and the lines kept are moved as
    /// one block: taking each line out by value, its four optional strings into an array,
    /// cost ~25 ns a call in stalled copies (`perf annotate`, B6's engine bench).
    pub fn recycle(&mut self, lines: &mut Vec<LogLine>) {
        let kept = SPARES.saturating_sub(self.lines.len()).min(lines.len());
        for line in &mut lines[..kept] {
            let f = &mut line.fields;
            for slot in [&mut f.args, &mut f.result, &mut f.error, &mut f.stack] {
                if let Some(s) = slot.take() {
                    if self.strings.len() < SPARES {
                        self.strings.push(s);
                    }
                }
            }
        }
        self.lines.extend(lines.drain(..kept));
        lines.clear();
    }

    /// An empty string, with a spare buffer when there is one.
    fn string(&mut self) -> String {
        let mut s = self.strings.pop().unwrap_or_default();
        s.clear();
        s
    }

    /// A line of `level` for `tool` and `execution_id`, its message `parts` joined; the
    /// other fields empty.
    fn line(&mut self, level: LogLevel, tool: &str, execution_id: &str, parts: &[&str]) -> LogLine {
        let mut line = self.lines.pop().unwrap_or_else(|| LogLine { level, message: String::new(), fields: LogFields::default() });
        line.level = level;
        line.message.clear();
        line.message.reserve(parts.iter().map(|p| p.len()).sum::<usize>() + 16);
        parts.iter().for_each(|p| line.message.push_str(p));
        let f = &mut line.fields;
        f.execution_id.clear();
        f.execution_id.push_str(execution_id);
        f.tool_name.clear();
        f.tool_name.push_str(tool);
        f.attempt_number = None;
        f.duration_ms = None;
        f.args_given = false;
        // `args`, `result`, `error` and `stack` are None: recycle() took them.
        line
    }

    fn payload_preview(&mut self, v: &Value, opts: &LogOptions) -> String {
        let mut out = self.string();
        if opts.redact.is_empty() {
            preview_into(&mut out, v, opts.truncate_logs);
        } else {
            preview_into(&mut out, &redact(v, &opts.redact), opts.truncate_logs);
        }
        out
    }
}

/// Appends `ms` with two decimals, rounded half away from zero on `ms * 100` as the
/// metadata stamp's `duration_ms` is. `{:.2}` expands the exact binary value and
/// cost ~40 ns per line; the two differ only on ties of that product.
fn push_two_decimals(out: &mut String, ms: f64) {
    let hundredths = (ms * 100.0).round();
    if !(0.0..1e15).contains(&hundredths) {
        let _ = write!(out, "{ms:.2}");
        return;
    }
    let h = hundredths as u64;
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut whole = h / 100;
    loop {
        at -= 1;
        digits[at] = b'0' + (whole % 10) as u8;
        whole /= 10;
        if whole == 0 {
            break;
        }
    }
    let cents = (h % 100) as u8;
    out.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
    out.push('.');
    out.push((b'0' + cents / 10) as char);
    out.push((b'0' + cents % 10) as char);
}

/// `info`: `[TOOL EXECUTION] Starting {tool}`; fields `executionId`,
/// `toolName`, and `args` (preview) when `log_arguments` and args given.
pub fn starting(tool: &str, execution_id: &str, args: Option<&Value>, opts: &LogOptions) -> LogLine {
    LineBuffers::default().starting(tool, execution_id, args, opts)
}

/// As [`starting`], for arguments kept as JSON text (large arguments). Without
/// redaction the preview is read off the text ([`crate::truncation::preview_text`]),
/// so a 10 MB argument is not parsed again for a 100-character preview; with redaction
/// the text is parsed, since which values to hide depends on its structure.
pub fn starting_from_text(tool: &str, execution_id: &str, text: &str, opts: &LogOptions) -> LogLine {
    LineBuffers::default().starting_from_text(tool, execution_id, text, opts)
}

/// `info`: `[TOOL EXECUTION] Completed {tool} ({duration}ms)` with the
/// duration to 2 decimals; fields `executionId`, `toolName`, `durationMs`
/// (number), and `result` (preview) when `log_arguments` and a result given.
pub fn completed(tool: &str, execution_id: &str, duration_ms: f64, result: Option<&Value>, opts: &LogOptions) -> LogLine {
    LineBuffers::default().completed(tool, execution_id, duration_ms, result, opts)
}

/// `error`: `[TOOL EXECUTION] Error in {tool}: {message}`; fields
/// `executionId`, `toolName`, `error` (the message) and, when given,
/// `stack` holding only its first [`STACK_LINES`] lines (joined by `\n`).
/// `_opts` is taken for a uniform signature; nothing in it applies here.
pub fn error(tool: &str, execution_id: &str, message: &str, stack: Option<&str>, opts: &LogOptions) -> LogLine {
    LineBuffers::default().error(tool, execution_id, message, stack, opts)
}

/// The same lines as the functions of this module, built in spare buffers.
impl LineBuffers {
    pub fn starting(&mut self, tool: &str, execution_id: &str, args: Option<&Value>, opts: &LogOptions) -> LogLine {
        let mut line = self.line(LogLevel::Info, tool, execution_id, &["[TOOL EXECUTION] Starting ", tool]);
        if let (true, Some(args)) = (opts.log_arguments, args) {
            line.fields.args = Some(self.payload_preview(args, opts));
        }
        line
    }

    pub fn starting_from_text(&mut self, tool: &str, execution_id: &str, text: &str, opts: &LogOptions) -> LogLine {
        if opts.log_arguments && !opts.redact.is_empty() {
            let args = crate::json_text::from_str(text).unwrap_or(Value::Null);
            return self.starting(tool, execution_id, Some(&args), opts);
        }
        let mut line = self.starting(tool, execution_id, None, opts);
        if opts.log_arguments {
            line.fields.args = Some(crate::truncation::preview_text(text, opts.truncate_logs));
        }
        line
    }

    pub fn completed(&mut self, tool: &str, execution_id: &str, duration_ms: f64, result: Option<&Value>, opts: &LogOptions) -> LogLine {
        let mut line = self.line(LogLevel::Info, tool, execution_id, &["[TOOL EXECUTION] Completed ", tool, " ("]);
        push_two_decimals(&mut line.message, duration_ms);
        line.message.push_str("ms)");
        line.fields.duration_ms = Some(duration_ms);
        if let (true, Some(result)) = (opts.log_arguments, result) {
            line.fields.result = Some(self.payload_preview(result, opts));
        }
        line
    }

    /// The message is cut to `truncate_logs` characters, and each stack line to
    /// [`STACK_LINE_CHARS`] or `truncate_logs`, the larger: a 100 KB message (which V8
    /// repeats in the stack's first line) is not logged whole.
    pub fn error(&mut self, tool: &str, execution_id: &str, message: &str, stack: Option<&str>, opts: &LogOptions) -> LogLine {
        let message = crate::truncation::truncate(message, opts.truncate_logs);
        let mut line = self.line(LogLevel::Error, tool, execution_id, &["[TOOL EXECUTION] Error in ", tool, ": ", &message]);
        let mut error = self.string();
        error.push_str(&message);
        line.fields.error = Some(error);
        let line_chars = opts.truncate_logs.max(STACK_LINE_CHARS);
        line.fields.stack = stack.map(|s| {
            let mut out = self.string();
            for (i, l) in s.lines().take(STACK_LINES).enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&crate::truncation::truncate(l, line_chars));
            }
            out
        });
        line
    }
}

/// Displays a field map as compact JSON without cloning it.
struct FieldsDisplay<'a>(&'a Map<String, Value>);

impl fmt::Display for FieldsDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = serde_json::to_string(self.0).map_err(|_| fmt::Error)?;
        f.write_str(&json)
    }
}

/// Log `message` through `tracing` at `level`, with `fields` attached as a
/// structured `fields` value displayed as compact JSON.
pub fn emit_tracing(level: LogLevel, message: &str, fields: &Map<String, Value>) {
    let fields = FieldsDisplay(fields);
    match level {
        LogLevel::Debug => tracing::debug!(fields = %fields, "{}", message),
        LogLevel::Info => tracing::info!(fields = %fields, "{}", message),
        LogLevel::Warn => tracing::warn!(fields = %fields, "{}", message),
        LogLevel::Error => tracing::error!(fields = %fields, "{}", message),
    }
}

/// Logs a [`LogLine`] through `tracing`.
pub fn trace_line(line: &LogLine) {
    emit_tracing(line.level, &line.message, &line.fields.to_map());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::{Arc, Mutex};
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Level, Metadata, Subscriber};

    fn with(log_arguments: bool, truncate_logs: usize, redact: &[&str]) -> LogOptions {
        let redact = redact.iter().map(|s| s.to_string()).collect();
        LogOptions {
            log_arguments,
            truncate_logs,
            redact,
        }
    }

    #[test]
    fn an_error_line_cuts_its_message_to_truncate_logs_and_its_stack_lines_too() {
        let huge = "x".repeat(120_000);
        let stack = format!("Error: {huge}\n    at handler (file:///app/tools.mjs:3:9)");
        let line = error("t", "id", &huge, Some(&stack), &with(true, 100, &[]));
        assert_eq!(line.fields.error.as_deref().map(|e| e.chars().count()), Some(101), "100 and the ellipsis");
        assert!(line.message.len() < 200 && line.message.ends_with("x…"), "{}", line.message.len());
        let stack_lines: Vec<&str> = line.fields.stack.as_deref().unwrap().lines().collect();
        assert_eq!(stack_lines[0].chars().count(), STACK_LINE_CHARS + 1);
        assert_eq!(stack_lines[1], "    at handler (file:///app/tools.mjs:3:9)");
        // A short message is logged as it is.
        assert_eq!(error("t", "id", "down", None, &with(true, 100, &[])).fields.error.as_deref(), Some("down"));
    }

    #[test]
    fn level_display_and_defaults() {
        use LogLevel::*;
        let shown = [Debug, Info, Warn, Error].map(|l| l.to_string());
        assert_eq!(shown, ["debug", "info", "warn", "error"]);
        assert_eq!(LogOptions::default(), with(true, 100, &[]));
    }

    #[test]
    fn lines_built_in_recycled_buffers_equal_fresh_ones() {
        let opts = with(true, 10, &["secret"]);
        let args = json!({"q": "weather in Paris", "secret": "x"});
        let mut buffers = LineBuffers::default();
        // Every kind after every other kind: no field of a line leaks into the next.
        for _ in 0..3 {
            let lines = vec![
                buffers.starting("echo", "id-1", Some(&args), &opts),
                buffers.error("echo", "id-2", "boom", Some("a\nb\nc\nd\ne\nf\ng"), &opts),
                buffers.completed("other", "id-3", 12.345, Some(&json!([1, 2, 3])), &opts),
                buffers.starting_from_text("echo", "id-4", r#"{"n": 1}"#, &opts),
                buffers.error("echo", "id-5", "no stack", None, &opts),
                buffers.completed("echo", "id-6", 1.0, None, &opts),
            ];
            assert_eq!(lines[0], starting("echo", "id-1", Some(&args), &opts));
            assert_eq!(lines[1], error("echo", "id-2", "boom", Some("a\nb\nc\nd\ne\nf\ng"), &opts));
            assert_eq!(lines[2], completed("other", "id-3", 12.345, Some(&json!([1, 2, 3])), &opts));
            assert_eq!(lines[3], starting_from_text("echo", "id-4", r#"{"n": 1}"#, &opts));
            assert_eq!(lines[4], error("echo", "id-5", "no stack", None, &opts));
            assert_eq!(lines[5], completed("echo", "id-6", 1.0, None, &opts));
            let mut lines: Vec<_> = lines.into_iter().rev().collect();
            buffers.recycle(&mut lines);
        }
        assert!(buffers.lines.len() == 6 && !buffers.strings.is_empty(), "the spares are kept");
    }

    #[test]
    fn starting_line() {
        let args = json!({"q": "rust"});
        let line = starting("ls", "ex-1", Some(&args), &LogOptions::default());
        assert_eq!(line.level, LogLevel::Info);
        assert_eq!(line.message, "[TOOL EXECUTION] Starting ls");
        let expected = json!({"executionId": "ex-1", "toolName": "ls", "args": "{\"q\":\"rust\"}"});
        assert_eq!(Value::Object(line.fields.to_map()), expected);
        let line = starting("t", "e", Some(&args), &with(false, 100, &[]));
        assert!(line.fields.args.is_none());
        let fields = starting("t", "e", None, &LogOptions::default()).fields.to_map();
        assert!(!fields.contains_key("args"));
        assert_eq!(fields.len(), 2);
    }

    #[test]
    fn args_are_redacted_then_truncated() {
        let opts = with(true, 100, &["Password"]);
        // Keys in sorted order so the preview is the same with serde_json's
        // `preserve_order` feature on or off.
        let args = json!({"auth": {"password": "hunter2"}, "user": "bob"});
        let fields = starting("login", "e", Some(&args), &opts).fields.to_map();
        let redacted = r#"{"auth":{"password":"[REDACTED]"},"user":"bob"}"#;
        assert_eq!(fields["args"], redacted);
        // Large text is read as the arguments are, lone surrogates and all.
        let fields = starting_from_text("login", "e", r#"{"password":"hunter2","s":"\uD800"}"#, &opts).fields.to_map();
        assert_eq!(fields["args"], "{\"password\":\"[REDACTED]\",\"s\":\"\u{FFFD}\"}");

        let secret = json!({"password": "hunter2"});
        let fields = starting("login", "e", Some(&secret), &with(true, 10, &["password"])).fields.to_map();
        // Redaction happens before the cut: the secret never appears.
        assert_eq!(fields["args"], "{\"password…");
        let long = json!("é".repeat(500));
        let fields = starting("t", "e", Some(&long), &LogOptions::default()).fields.to_map();
        assert_eq!(fields["args"].as_str().unwrap().chars().count(), 101);
    }

    #[test]
    fn two_decimals_match_std_formatting_off_ties() {
        for i in 0..2_000_000u64 {
            let ms = i as f64 * 0.000_7 + (i % 7) as f64 * 1e-9;
            let mut ours = String::new();
            push_two_decimals(&mut ours, ms);
            let std = format!("{ms:.2}");
            if ours != std {
                // Only a product that lands on a tie may round the other way.
                assert!(((ms * 100.0).fract() - 0.5).abs() < 1e-6, "{ms}: {ours} vs {std}");
            }
        }
        for (ms, text) in [(0.0, "0.00"), (7.0, "7.00"), (12.3456, "12.35"), (0.004, "0.00"), (1234567.891, "1234567.89")] {
            let mut ours = String::new();
            push_two_decimals(&mut ours, ms);
            assert_eq!(ours, text);
        }
        let mut huge = String::new();
        push_two_decimals(&mut huge, f64::NAN);
        assert_eq!(huge, "NaN");
    }

    #[test]
    fn completed_line() {
        let opts = with(true, 5, &[]);
        let line = completed("ls", "e", 12.3456, Some(&json!([1, 2, 3])), &opts);
        assert_eq!(line.level, LogLevel::Info);
        assert_eq!(line.message, "[TOOL EXECUTION] Completed ls (12.35ms)");
        let fields = line.fields.to_map();
        assert_eq!(fields["durationMs"], json!(12.3456));
        assert_eq!(fields["result"], "[1,2,…");
        let line = completed("t", "e", 7.0, None, &opts);
        assert_eq!(line.message, "[TOOL EXECUTION] Completed t (7.00ms)");
        assert!(!line.fields.to_map().contains_key("result"));
    }

    #[test]
    fn error_line_keeps_five_stack_lines() {
        let stack = "Error: boom\n  at a\n  at b\r\n  at c\n  at d\n  at e\n  at f";
        let line = error("fetch", "ex-9", "boom", Some(stack), &LogOptions::default());
        assert_eq!(line.level, LogLevel::Error);
        assert_eq!(line.message, "[TOOL EXECUTION] Error in fetch: boom");
        let fields = line.fields.to_map();
        let stack = "Error: boom\n  at a\n  at b\n  at c\n  at d";
        let expected =
            json!({"executionId": "ex-9", "toolName": "fetch", "error": "boom", "stack": stack});
        assert_eq!(Value::Object(fields), expected);
        let line = error("fetch", "ex-9", "boom", None, &LogOptions::default());
        assert!(!line.fields.to_map().contains_key("stack"));
    }

    /// Minimal subscriber recording each event field as "LEVEL name=value".
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<String>>>);

    struct Visitor<'a>(&'a Capture, Level);

    impl Visit for Visitor<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            let entry = format!("{} {}={value:?}", self.1, field.name());
            self.0 .0.lock().unwrap().push(entry);
        }
    }

    impl Subscriber for Capture {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            event.record(&mut Visitor(self, *event.metadata().level()));
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn emit_tracing_logs_level_message_and_fields() {
        let capture = Capture::default();
        let line = error("fetch", "ex-9", "boom", None, &LogOptions::default());
        let msg = line.message;
        let mut fields = line.fields.to_map();
        fields.retain(|k, _| k == "toolName"); // one key: same order with or without preserve_order
        tracing::subscriber::with_default(capture.clone(), || {
            emit_tracing(LogLevel::Error, &msg, &fields);
            emit_tracing(LogLevel::Warn, "w", &Map::new());
        });
        let got = capture.0.lock().unwrap().clone();
        let want = [
            "ERROR message=[TOOL EXECUTION] Error in fetch: boom",
            r#"ERROR fields={"toolName":"fetch"}"#,
            "WARN message=w",
            "WARN fields={}",
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for line in want {
            assert!(got.iter().any(|g| g == line), "{line:?} not in {got:?}");
        }
    }
}
