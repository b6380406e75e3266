//! The wire between a [`HostEngine`](super::HostEngine) and the JS runtime: what each
//! engine call produced, as a stream of numbers (`ops`) and one string (`text`).
//!
//! Numbers cross the JS/Rust boundary for free when both sides look at the same
//! `Float64Array`, where each JS object or string built from Rust costs a call. So a
//! transition is written as ops of a few numbers each; a string an op carries is
//! appended to `text`, and the op holds its length in UTF-16 code units, so the JS side
//! takes it with `text.slice(at, at += length)`. Objects too rich for numbers (errors
//! with validation issues, audit records) travel as JSON text.
//!
//! Ops come in delivery order. Each starts with its code; the fields follow. The
//! layouts are declared once, in [`OPS`], [`EVENTS`] and [`RECORD`]: the JS runtime's
//! `js/ops.mjs` is generated from them ([`js_module`]; a test fails when the file is
//! stale), and [`walk`] (here) and `js/wire-check.mjs` (there) read a wire by them, so
//! a writer or a decoder that drifts from the declaration fails the tests. In short:
//!
//! | op | fields | strings |
//! |---|---|---|
//! | `NEW` | ticket, key | execution id |
//! | `REFUSED` | ticket | error JSON |
//! | `FINAL` | key, record (7), has error, has extras | error JSON when it has one, then extras JSON when it has them |
//! | `ATTEMPT_ERROR` | key | error JSON |
//! | `METADATA` | key, duration ms | ISO timestamp |
//! | `EVENT` | event type, key, per type (below) | |
//! | `LOG` | key or NaN, level, attempt or NaN, duration or NaN, string mask, args given (1: the args are the call's own text, which the host keeps) | message, then execution id, tool name (only when the key is NaN), args, error, stack, result as the mask says |
//! | `AUDIT` | has write error | record JSON, then the error |
//! | `INTERRUPT` | key, attempt, timed out | the reason's message |
//! | `RUN` | key, attempt, max attempts, tool id, deferred, checks output | |
//! | `DECIDE` | key, tool id | (the host's approval policy must answer: `approval_decided`) |
//! | `AWAIT_APPROVAL` | key | the approval id |
//! | `ARGS` | key | the arguments an approver edited, as JSON text (the handler gets these) |
//! | `APPROVAL_REFUSED` | | error JSON (`approve`/`deny` refused: no such approval, invalid edited arguments) |
//! | `QUEUED` | key | |
//! | `RETRY` | key, delay ms | |
//! | `DONE` | key | |
//! | `EVICT` | | the id of a kept record dropped |
//! | `EVICT_OLDEST` | how many | (the oldest kept records were dropped) |
//! | `EVICT_NEWEST` | | (the record just finished is not kept) |
//! | `RELEASED` | tool id | |
//! | `SNAPSHOT` | key, record (7), has extras | extras JSON |
//! | `RECOVERED` | key | execution id, tool name, arguments JSON, optional session id, optional tool-call id, idempotency key (recovery started an execution nobody called) |
//! | `RESULT` | key | the result as JSON (a replayed outcome: the host has no value of its own) |
//! | `ANSWER` | ticket, ok | error JSON when not ok (a decision made through the journal) |
//! | `APPROVALS` | ticket, ok | the pending approvals as a JSON array (read from the journal) |
//! | `TASK` | ticket, ok | an MCP task store operation's answer, JSON |
//!
//! A record is `status, queuedAt, startedAt, completedAt, duration, attemptNumber,
//! maxAttempts`, with NaN for what is not known yet. Event fields: `STARTED` a record;
//! `EXECUTING` the attempt; `RETRYING` next attempt, max attempts, delay ms (its error
//! is the `ATTEMPT_ERROR` before it); `VALIDATING`, `SUCCEEDED`, `FAILED`, `CANCELLED`
//! nothing more (the last three describe the `FINAL` record before them);
//! `APPROVAL_REQUESTED` a record, has extras, then strings: extras, approval id;
//! `APPROVED` edited, then strings: approval id, optional approver; `DENIED` strings:
//! approval id, reason, optional approver; `PROGRESS` progress, total (NaN: none), then
//! an optional message; `PRELIMINARY_RESULT` nothing (the host has the value);
//! `RECOVERED` strings: idempotency key, action.
//! An optional string is a flag (0 or 1) followed, when 1, by the string's length.
//! Extras (`{ approval?, progress?, idempotencyKey?, replayed?, recovered? }` JSON) are a
//! flag followed, when 1, by its length.

use crate::error::ToolError;
use crate::log_lines::LogLevel;
use crate::record::{EventType, ExecutionRecord, ExecutionStatus};

/// Op codes. The JS runtime's `js/ops.mjs` is generated from [`OPS`].
pub mod op {
    pub const NEW: f64 = 1.0;
    pub const REFUSED: f64 = 2.0;
    pub const FINAL: f64 = 3.0;
    pub const ATTEMPT_ERROR: f64 = 4.0;
    pub const METADATA: f64 = 5.0;
    pub const EVENT: f64 = 6.0;
    pub const LOG: f64 = 7.0;
    pub const AUDIT: f64 = 8.0;
    pub const INTERRUPT: f64 = 9.0;
    pub const RUN: f64 = 10.0;
    pub const QUEUED: f64 = 11.0;
    pub const RETRY: f64 = 12.0;
    pub const DONE: f64 = 13.0;
    pub const EVICT: f64 = 14.0;
    pub const RELEASED: f64 = 15.0;
    pub const SNAPSHOT: f64 = 16.0;
    pub const EVICT_OLDEST: f64 = 17.0;
    pub const EVICT_NEWEST: f64 = 18.0;
    pub const DECIDE: f64 = 19.0;
    pub const AWAIT_APPROVAL: f64 = 20.0;
    pub const APPROVAL_REFUSED: f64 = 21.0;
    pub const ARGS: f64 = 22.0;
    pub const RECOVERED: f64 = 23.0;
    pub const RESULT: f64 = 24.0;
    pub const ANSWER: f64 = 25.0;
    pub const APPROVALS: f64 = 26.0;
    pub const TASK: f64 = 27.0;
}

/// Event type numbers of `EVENT` ops, in `EventType` order.
pub mod event {
    pub const STARTED: f64 = 0.0;
    pub const VALIDATING: f64 = 1.0;
    pub const EXECUTING: f64 = 2.0;
    pub const RETRYING: f64 = 3.0;
    pub const SUCCEEDED: f64 = 4.0;
    pub const FAILED: f64 = 5.0;
    pub const CANCELLED: f64 = 6.0;
    pub const APPROVAL_REQUESTED: f64 = 7.0;
    pub const APPROVED: f64 = 8.0;
    pub const DENIED: f64 = 9.0;
    pub const PROGRESS: f64 = 10.0;
    pub const PRELIMINARY_RESULT: f64 = 11.0;
    pub const RECOVERED: f64 = 12.0;
}

/// Records' statuses, in the order of their numbers ([`status_code`]).
pub const STATUSES: [ExecutionStatus; 7] = [
    ExecutionStatus::Pending,
    ExecutionStatus::Validating,
    ExecutionStatus::Executing,
    ExecutionStatus::Succeeded,
    ExecutionStatus::Failed,
    ExecutionStatus::Cancelled,
    ExecutionStatus::AwaitingApproval,
];

/// Status numbers of records.
pub fn status_code(s: ExecutionStatus) -> f64 {
    match s {
        ExecutionStatus::Pending => 0.0,
        ExecutionStatus::Validating => 1.0,
        ExecutionStatus::Executing => 2.0,
        ExecutionStatus::Succeeded => 3.0,
        ExecutionStatus::Failed => 4.0,
        ExecutionStatus::Cancelled => 5.0,
        ExecutionStatus::AwaitingApproval => 6.0,
    }
}

/// One field of an op, in wire order.
#[derive(Clone, Copy, Debug)]
pub enum Field {
    /// One number.
    Num(&'static str),
    /// A string: its length here, its text in `text`.
    Str(&'static str),
    /// An optional string: a flag (0 or 1), then, when 1, the string's length.
    OptStr(&'static str),
    /// A record: the [`RECORD`] numbers.
    Record,
    /// A record's extras (`{ approval?, progress?, idempotencyKey?, replayed?, recovered? }`
    /// JSON), as an optional string.
    Extras,
    /// A string that is there when the op's number `flag` is `when`.
    StrIf { name: &'static str, flag: &'static str, when: f64 },
    /// A string per bit set in the op's number `mask`, in bit order.
    Masked { mask: &'static str, names: &'static [&'static str] },
    /// The fields of the event whose number is the op's `type` ([`EVENTS`]).
    Event,
}

/// An op (or an `EVENT` op's event): its name, its code and its fields after the code.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub name: &'static str,
    pub code: f64,
    pub fields: &'static [Field],
}

use Field::{Event as EventFields, Extras, Masked, Num, OptStr, Record, Str, StrIf};

/// The numbers of a record, in order; NaN for what is not known yet.
pub const RECORD: [&str; 7] = ["status", "queued_at", "started_at", "completed_at", "duration", "attempt_number", "max_attempts"];

/// Every op's layout.
pub const OPS: &[Layout] = &[
    Layout { name: "NEW", code: op::NEW, fields: &[Num("ticket"), Num("key"), Str("execution_id")] },
    Layout { name: "REFUSED", code: op::REFUSED, fields: &[Num("ticket"), Str("error")] },
    Layout { name: "FINAL", code: op::FINAL, fields: &[Num("key"), Record, OptStr("error"), Extras] },
    Layout { name: "ATTEMPT_ERROR", code: op::ATTEMPT_ERROR, fields: &[Num("key"), Str("error")] },
    Layout { name: "METADATA", code: op::METADATA, fields: &[Num("key"), Num("duration_ms"), Str("timestamp")] },
    Layout { name: "EVENT", code: op::EVENT, fields: &[Num("type"), Num("key"), EventFields] },
    Layout {
        name: "LOG",
        code: op::LOG,
        // A line names its execution by key: the host has its id and tool name. A line
        // of an execution the host holds no key for carries them (mask bits 1 and 2).
        fields: &[
            Num("key"),
            Num("level"),
            Num("attempt"),
            Num("duration_ms"),
            Num("mask"),
            // 1: the arguments are the call's own text, which the host keeps (no string).
            Num("args_given"),
            Str("message"),
            Masked { mask: "mask", names: &["execution_id", "tool_name", "args", "error", "stack", "result"] },
        ],
    },
    Layout { name: "AUDIT", code: op::AUDIT, fields: &[Num("failed"), Str("record"), StrIf { name: "failure", flag: "failed", when: 1.0 }] },
    Layout { name: "INTERRUPT", code: op::INTERRUPT, fields: &[Num("key"), Num("attempt"), Num("timed_out"), Str("reason")] },
    Layout {
        name: "RUN",
        code: op::RUN,
        fields: &[Num("key"), Num("attempt"), Num("max_attempts"), Num("tool"), Num("deferred"), Num("checks_output")],
    },
    Layout { name: "QUEUED", code: op::QUEUED, fields: &[Num("key")] },
    Layout { name: "RETRY", code: op::RETRY, fields: &[Num("key"), Num("delay_ms")] },
    Layout { name: "DONE", code: op::DONE, fields: &[Num("key")] },
    Layout { name: "EVICT", code: op::EVICT, fields: &[Str("execution_id")] },
    Layout { name: "RELEASED", code: op::RELEASED, fields: &[Num("tool")] },
    Layout { name: "SNAPSHOT", code: op::SNAPSHOT, fields: &[Num("key"), Record, Extras] },
    Layout { name: "EVICT_OLDEST", code: op::EVICT_OLDEST, fields: &[Num("count")] },
    Layout { name: "EVICT_NEWEST", code: op::EVICT_NEWEST, fields: &[] },
    Layout { name: "DECIDE", code: op::DECIDE, fields: &[Num("key"), Num("tool")] },
    Layout { name: "AWAIT_APPROVAL", code: op::AWAIT_APPROVAL, fields: &[Num("key"), Str("approval_id")] },
    Layout { name: "APPROVAL_REFUSED", code: op::APPROVAL_REFUSED, fields: &[Str("error")] },
    Layout { name: "ARGS", code: op::ARGS, fields: &[Num("key"), Str("arguments")] },
    Layout {
        name: "RECOVERED",
        code: op::RECOVERED,
        fields: &[
            Num("key"),
            Str("execution_id"),
            Str("tool_name"),
            Str("arguments"),
            OptStr("session_id"),
            OptStr("tool_call_id"),
            Str("idempotency_key"),
        ],
    },
    Layout { name: "RESULT", code: op::RESULT, fields: &[Num("key"), Str("result")] },
    Layout { name: "ANSWER", code: op::ANSWER, fields: &[Num("ticket"), Num("ok"), StrIf { name: "error", flag: "ok", when: 0.0 }] },
    Layout { name: "APPROVALS", code: op::APPROVALS, fields: &[Num("ticket"), Num("ok"), Str("answer")] },
    Layout { name: "TASK", code: op::TASK, fields: &[Num("ticket"), Num("ok"), Str("answer")] },
];

/// Each event's fields after the `EVENT` op's type and key, by event number.
pub const EVENTS: &[Layout] = &[
    Layout { name: "STARTED", code: event::STARTED, fields: &[Record] },
    Layout { name: "VALIDATING", code: event::VALIDATING, fields: &[] },
    Layout { name: "EXECUTING", code: event::EXECUTING, fields: &[Num("attempt")] },
    Layout { name: "RETRYING", code: event::RETRYING, fields: &[Num("attempt"), Num("max_attempts"), Num("delay_ms")] },
    Layout { name: "SUCCEEDED", code: event::SUCCEEDED, fields: &[] },
    Layout { name: "FAILED", code: event::FAILED, fields: &[] },
    Layout { name: "CANCELLED", code: event::CANCELLED, fields: &[] },
    Layout { name: "APPROVAL_REQUESTED", code: event::APPROVAL_REQUESTED, fields: &[Record, Extras, Str("approval_id")] },
    Layout { name: "APPROVED", code: event::APPROVED, fields: &[Num("edited"), Str("approval_id"), OptStr("by")] },
    Layout { name: "DENIED", code: event::DENIED, fields: &[Str("approval_id"), Str("reason"), OptStr("by")] },
    Layout { name: "PROGRESS", code: event::PROGRESS, fields: &[Num("progress"), Num("total"), OptStr("message")] },
    Layout { name: "PRELIMINARY_RESULT", code: event::PRELIMINARY_RESULT, fields: &[] },
    Layout { name: "RECOVERED", code: event::RECOVERED, fields: &[Str("idempotency_key"), Str("action")] },
];

/// The log levels, by the number `LOG` ops carry.
pub const LOG_LEVELS: [LogLevel; 4] = [LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error];

pub(crate) fn layout_of(table: &'static [Layout], code: f64) -> Option<&'static Layout> {
    table.iter().find(|l| l.code == code)
}

/// A string's length: a whole number of UTF-16 code units.
fn length_at(ops: &[f64], i: usize, what: &str) -> Result<usize, String> {
    match ops.get(i) {
        Some(&n) if n >= 0.0 && n.fract() == 0.0 => Ok(n as usize),
        Some(n) => Err(format!("{what}: {n} is no string length")),
        None => Err(format!("{what}: the ops end before its length")),
    }
}

/// Reads `fields` from `ops[i..]`; returns where they end and how many UTF-16 code
/// units of `text` their strings take. Their numbers (a record's by [`RECORD`]'s names)
/// go to `values` and their strings' lengths to `strings`, in order, by field name.
pub(crate) fn walk_fields(
    name: &str,
    fields: &[Field],
    ops: &[f64],
    mut i: usize,
    values: &mut Vec<(&'static str, f64)>,
    strings: &mut Vec<(&'static str, usize)>,
) -> Result<(usize, usize), String> {
    let mut units = 0;
    let string = |strings: &mut Vec<(&'static str, usize)>, n: &'static str, len: usize, units: &mut usize| {
        *units += len;
        strings.push((n, len));
    };
    let value_of = |values: &[(&'static str, f64)], flag: &str| values.iter().find(|(n, _)| *n == flag).map(|(_, v)| *v);
    for field in fields {
        match *field {
            Num(n) => {
                let v = *ops.get(i).ok_or_else(|| format!("{name}: the ops end before its field {n}"))?;
                values.push((n, v));
                i += 1;
            }
            Str(n) => {
                string(strings, n, length_at(ops, i, &format!("{name}.{n}"))?, &mut units);
                i += 1;
            }
            OptStr(_) | Extras => {
                let n = if let OptStr(n) = *field { n } else { "extras" };
                match ops.get(i) {
                    Some(&0.0) => i += 1,
                    Some(&1.0) => {
                        string(strings, n, length_at(ops, i + 1, &format!("{name}.{n}"))?, &mut units);
                        i += 2;
                    }
                    other => return Err(format!("{name}.{n}: flag {other:?} is neither 0 nor 1")),
                }
            }
            Record => {
                let status = *ops.get(i).ok_or_else(|| format!("{name}: the ops end before its record"))?;
                if !(status >= 0.0 && (status as usize) < STATUSES.len() && status.fract() == 0.0) {
                    return Err(format!("{name}: record status {status} is no status"));
                }
                if ops.len() < i + RECORD.len() {
                    return Err(format!("{name}: the ops end inside its record"));
                }
                values.extend(RECORD.iter().zip(&ops[i..i + RECORD.len()]).map(|(n, v)| (*n, *v)));
                i += RECORD.len();
            }
            StrIf { name: n, flag, when } => {
                let v = value_of(values, flag).ok_or_else(|| format!("{name}.{n}: no field {flag} before it"))?;
                if v == when {
                    string(strings, n, length_at(ops, i, &format!("{name}.{n}"))?, &mut units);
                    i += 1;
                }
            }
            Masked { mask, names } => {
                let m = value_of(values, mask).ok_or_else(|| format!("{name}: no field {mask} before its masked strings"))?;
                if !(m >= 0.0 && m.fract() == 0.0 && (m as u32) >> names.len() == 0) {
                    return Err(format!("{name}.{mask}: {m} has bits beyond {}", names.join(", ")));
                }
                for (bit, n) in names.iter().enumerate() {
                    if (m as u32) & (1 << bit) != 0 {
                        string(strings, n, length_at(ops, i, &format!("{name}.{n}"))?, &mut units);
                        i += 1;
                    }
                }
            }
            EventFields => {
                let t = value_of(values, "type").ok_or_else(|| format!("{name}: no field type before its event"))?;
                let e = layout_of(EVENTS, t).ok_or_else(|| format!("{name}: {t} is no event"))?;
                let (end, u) = walk_fields(e.name, e.fields, ops, i, values, strings)?;
                i = end;
                units += u;
            }
        }
    }
    Ok((i, units))
}

/// Reads a wire by the declared layouts: the op codes in order, or what does not fit
/// (an unknown op, a field missing, a flag neither 0 nor 1, strings that do not add up
/// to `text`).
///
/// # Errors
/// What does not fit, naming the op and its field.
pub fn walk(ops: &[f64], text: &str) -> Result<Vec<f64>, String> {
    let (mut i, mut units, mut codes) = (0, 0, Vec::new());
    let (mut values, mut strings) = (Vec::new(), Vec::new());
    while i < ops.len() {
        let code = ops[i];
        let layout = layout_of(OPS, code).ok_or_else(|| format!("{code} at {i} is no op"))?;
        values.clear();
        strings.clear();
        let (end, u) = walk_fields(layout.name, layout.fields, ops, i + 1, &mut values, &mut strings).map_err(|e| format!("{e} (op at {i})"))?;
        codes.push(code);
        i = end;
        units += u;
    }
    let text_units = text.encode_utf16().count();
    if units != text_units {
        return Err(format!("the ops' strings take {units} UTF-16 code units, the text has {text_units}"));
    }
    Ok(codes)
}

/// The fields of `fields` at a fixed offset, counted from `at`, with that offset (a
/// string's is where its length is, an optional string's its flag; a record is named
/// `record`, a record's extras `extras`, masked strings `masked`), up to and including
/// the first field of variable length; and the length of the whole when every field
/// is fixed. `js/ops.mjs` is written from these, and [`offset`] reads them.
fn fixed_fields(fields: &[Field], mut at: usize) -> (Vec<(&'static str, usize)>, Option<usize>) {
    let mut out = Vec::new();
    for f in fields {
        match *f {
            Num(n) | Str(n) => {
                out.push((n, at));
                at += 1;
            }
            Record => {
                out.push(("record", at));
                at += RECORD.len();
            }
            OptStr(n) | StrIf { name: n, .. } => {
                out.push((n, at));
                return (out, None);
            }
            Extras => {
                out.push(("extras", at));
                return (out, None);
            }
            Masked { .. } => {
                out.push(("masked", at));
                return (out, None);
            }
            EventFields => return (out, None),
        }
    }
    (out, Some(at))
}

/// The offset of the op `code`'s field `field` from the op's code, for a reader in Rust
/// (as `js/ops.mjs` gives the JS decoder); `None` when the op has no such field at a
/// fixed offset.
pub fn offset(code: f64, field: &str) -> Option<usize> {
    let layout = layout_of(OPS, code)?;
    fixed_fields(layout.fields, 1).0.into_iter().find(|(n, _)| *n == field).map(|(_, at)| at)
}

/// `js/ops.mjs`: the op codes, the offset of every field before an op's first
/// variable-length field, each fixed-length op's length, the record's offsets, the
/// status, event and log level names, and the layouts themselves for
/// `js/wire-check.mjs`.
pub fn js_module() -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let upper = |n: &str| n.to_ascii_uppercase();
    s.push_str("// Generated from crates/toolhost/src/host/wire.rs by its test `js_module_is_current`:\n");
    s.push_str("// do not edit. `TOOLHOST_WRITE_WIRE=1 cargo test -p toolhost js_module` writes it again.\n");
    s.push_str("//\n// Offsets count from an op's code (0); a string's offset is where its length is, and\n");
    s.push_str("// an optional string's is its flag. Fields after an op's first variable-length one\n");
    s.push_str("// have no fixed offset: a decoder reads them in order from there.\n\n");
    s.push_str("// Op codes.\n");
    for l in OPS {
        let _ = writeln!(s, "export const {} = {}", l.name, l.code);
    }
    s.push_str("\n// Event numbers (EVENT ops' type).\n");
    for l in EVENTS {
        let _ = writeln!(s, "export const EV_{} = {}", l.name, l.code);
    }
    s.push_str("\n// A record's numbers, from its offset.\n");
    for (k, n) in RECORD.iter().enumerate() {
        let _ = writeln!(s, "export const RECORD_{} = {k}", upper(n));
    }
    // Offsets of fixed fields, and the length when the whole op is fixed.
    let offsets = |prefix: &str, fields: &[Field], at: usize, s: &mut String| {
        let (fixed, length) = fixed_fields(fields, at);
        for (n, at) in fixed {
            let _ = writeln!(s, "export const {prefix}_{} = {at}", upper(n));
        }
        if let Some(length) = length {
            let _ = writeln!(s, "export const {prefix}_LENGTH = {length}");
        }
    };
    s.push_str("\n// Field offsets, by op.\n");
    for l in OPS {
        offsets(l.name, l.fields, 1, &mut s);
    }
    s.push_str("\n// Field offsets of each event, from the EVENT op's code.\n");
    let event_start = layout_of(OPS, op::EVENT).map_or(0, |l| l.fields.iter().take_while(|f| !matches!(f, EventFields)).count()) + 1;
    for l in EVENTS {
        offsets(&format!("EV_{}", l.name), l.fields, event_start, &mut s);
    }
    let names = |items: Vec<&str>| items.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    s.push_str("\n// Record statuses, by number.\n");
    let _ = writeln!(s, "export const STATUS = [{}]", names(STATUSES.iter().map(|st| st.as_str()).collect()));
    s.push_str("\n// Lifecycle event types, by the engine's event number (also the bit of the wanted mask).\n");
    let _ = writeln!(s, "export const EVENT_TYPES = [{}]", names(EventType::ALL.iter().map(|t| t.as_str()).collect()));
    s.push_str("\n// Log levels, by number.\n");
    let _ = writeln!(s, "export const LOG_LEVELS = [{}]", names(LOG_LEVELS.iter().map(|l| l.as_str()).collect()));
    // The layouts as data, for js/wire-check.mjs: [kind, name, flag, when | names].
    let field = |f: &Field| match *f {
        Num(n) => format!("['num', '{n}']"),
        Str(n) => format!("['str', '{n}']"),
        OptStr(n) => format!("['opt', '{n}']"),
        Record => "['record']".to_string(),
        Extras => "['opt', 'extras']".to_string(),
        StrIf { name, flag, when } => format!("['if', '{name}', '{flag}', {when}]"),
        Masked { mask, names: ns } => format!("['masked', '{mask}', [{}]]", names(ns.to_vec())),
        EventFields => "['event']".to_string(),
    };
    let table = |ls: &[Layout]| {
        ls.iter()
            .map(|l| format!("  [{}, '{}', [{}]],", l.code, l.name, l.fields.iter().map(field).collect::<Vec<_>>().join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    s.push_str("\n// The layouts as data (js/wire-check.mjs reads a wire by them): [code, name, fields].\n");
    let _ = writeln!(s, "export const OP_LAYOUTS = [\n{}\n]", table(OPS));
    let _ = writeln!(s, "export const EVENT_LAYOUTS = [\n{}\n]", table(EVENTS));
    let _ = writeln!(s, "export const RECORD_LENGTH = {}", RECORD.len());
    s
}

/// One engine call's output.
#[derive(Default)]
pub struct Wire {
    pub ops: Vec<f64>,
    pub text: String,
}

impl Wire {
    pub fn clear(&mut self) {
        self.ops.clear();
        self.text.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn push(&mut self, values: &[f64]) {
        self.ops.extend_from_slice(values);
    }

    /// Appends a string and pushes its length in UTF-16 code units.
    pub fn string(&mut self, s: &str) {
        let units = if s.is_ascii() { s.len() } else { s.encode_utf16().count() };
        self.text.push_str(s);
        self.ops.push(units as f64);
    }

    /// Appends the ASCII string `write` writes and pushes its length.
    pub fn ascii_with(&mut self, write: impl FnOnce(&mut String)) {
        let start = self.text.len();
        write(&mut self.text);
        debug_assert!(self.text[start..].is_ascii());
        self.ops.push((self.text.len() - start) as f64);
    }

    pub fn record(&mut self, r: &ExecutionRecord) {
        let t = &r.timing;
        self.push(&[
            status_code(r.status),
            t.queued_at,
            t.started_at.unwrap_or(f64::NAN),
            t.completed_at.unwrap_or(f64::NAN),
            t.duration_ms.unwrap_or(f64::NAN),
            f64::from(r.attempt_number),
            f64::from(r.max_attempts),
        ]);
    }

    pub fn error(&mut self, e: &ToolError) {
        self.string(&error_json(e));
    }

    /// An optional string: a flag, then the string when there is one.
    pub fn opt_string(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.ops.push(1.0);
                self.string(s);
            }
            None => self.ops.push(0.0),
        }
    }

    /// What a record has beyond its numbers, when it has any: `{ approval?, progress? }`
    /// as JSON (a flag, then the text).
    pub fn extras(&mut self, r: &ExecutionRecord) {
        if r.approval.is_none() && r.progress.is_none() && r.idempotency_key.is_none() {
            self.ops.push(0.0);
            return;
        }
        let mut o = serde_json::Map::new();
        if let Some(a) = &r.approval {
            o.insert("approval".into(), serde_json::to_value(a).unwrap_or_default());
        }
        if let Some(p) = &r.progress {
            o.insert("progress".into(), serde_json::to_value(p).unwrap_or_default());
        }
        if let Some(k) = &r.idempotency_key {
            o.insert("idempotencyKey".into(), k.as_str().into());
        }
        if r.replayed {
            o.insert("replayed".into(), true.into());
        }
        if r.recovered {
            o.insert("recovered".into(), true.into());
        }
        self.ops.push(1.0);
        self.string(&serde_json::Value::Object(o).to_string());
    }
}

/// `{ category, code, message, retryable, retryAfterMs?, validationErrors?, hostCause? }`:
/// an error as the JS runtime shows it; `hostCause` says its cause is the value the
/// host reported as thrown for the attempt.
pub fn error_json(e: &ToolError) -> String {
    let mut o = serde_json::Map::new();
    o.insert("category".into(), e.category.as_str().into());
    o.insert("code".into(), e.code.as_str().into());
    o.insert("message".into(), e.message.as_str().into());
    o.insert("retryable".into(), e.retryable.into());
    if let Some(ms) = e.retry_after_ms {
        o.insert("retryAfterMs".into(), ms.into());
    }
    if !e.validation_errors.is_empty() {
        o.insert("validationErrors".into(), serde_json::to_value(&e.validation_errors).unwrap_or_default());
    }
    if e.cause.as_ref().is_some_and(|c| c.is::<super::HostCause>()) {
        o.insert("hostCause".into(), true.into());
    }
    serde_json::Value::Object(o).to_string()
}

/// One op of a wire read by its layout, for tests: its numbers and strings by field
/// name (a record's numbers by [`RECORD`]'s names).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct ReadOp {
    pub name: &'static str,
    pub code: f64,
    nums: Vec<(&'static str, f64)>,
    strs: Vec<(&'static str, String)>,
}

#[cfg(test)]
impl ReadOp {
    /// The number `field`; panics, naming the op, when it has none.
    pub fn num(&self, field: &str) -> f64 {
        self.nums.iter().find(|(n, _)| *n == field).map(|(_, v)| *v).unwrap_or_else(|| panic!("{} has no number {field}: {self:?}", self.name))
    }

    /// The string `field`, when the op carries it.
    pub fn str(&self, field: &str) -> Option<&str> {
        self.strs.iter().find(|(n, _)| *n == field).map(|(_, v)| v.as_str())
    }
}

/// Reads a wire's ops by their layouts; panics on what does not fit them.
#[cfg(test)]
pub(crate) fn read(ops: &[f64], text: &str) -> Vec<ReadOp> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let (mut i, mut at, mut out) = (0, 0, Vec::new());
    while i < ops.len() {
        let layout = layout_of(OPS, ops[i]).unwrap_or_else(|| panic!("{} at {i} is no op", ops[i]));
        let (mut nums, mut lengths) = (Vec::new(), Vec::new());
        let (end, _) = walk_fields(layout.name, layout.fields, ops, i + 1, &mut nums, &mut lengths).unwrap_or_else(|e| panic!("{e} (op at {i})"));
        let strs = lengths
            .into_iter()
            .map(|(n, len)| {
                let s = String::from_utf16(&units[at..at + len]).unwrap_or_else(|e| panic!("{}.{n}: {e}", layout.name));
                at += len;
                (n, s)
            })
            .collect();
        out.push(ReadOp { name: layout.name, code: ops[i], nums, strs });
        i = end;
    }
    assert_eq!(at, units.len(), "the ops' strings do not take the whole text");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn rust_readers_get_the_offsets_the_js_decoder_gets() {
        // As `js/ops.mjs` has them: NEW_KEY, LOG_MESSAGE, FINAL_RECORD, FINAL_ERROR.
        assert_eq!(offset(op::NEW, "key"), Some(2));
        assert_eq!(offset(op::LOG, "message"), Some(7));
        assert_eq!(offset(op::FINAL, "record"), Some(2));
        assert_eq!(offset(op::FINAL, "error"), Some(2 + RECORD.len()));
        // After a variable-length field, or no such field: no fixed offset.
        assert_eq!(offset(op::FINAL, "extras"), None);
        assert_eq!(offset(op::NEW, "no_such_field"), None);
        assert_eq!(offset(99.0, "key"), None);
    }

    #[test]
    fn a_wire_reads_back_by_field_name() {
        // A LOG op with a non-ASCII message and one masked string (the tool name), then a
        // DONE: lengths count UTF-16 units.
        let ops = [op::LOG, 4.0, 1.0, 2.0, f64::NAN, 2.0, 0.0, 3.0, 4.0, op::DONE, 4.0];
        let read = read(&ops, "é😀echo");
        assert_eq!(read.iter().map(|o| o.name).collect::<Vec<_>>(), ["LOG", "DONE"]);
        assert_eq!((read[0].num("key"), read[0].num("level"), read[0].num("mask")), (4.0, 1.0, 2.0));
        assert_eq!(read[0].str("message"), Some("é😀"));
        assert_eq!(read[0].str("tool_name"), Some("echo"));
        assert_eq!(read[0].str("args"), None);
        assert_eq!(read[1].num("key"), 4.0);
    }

    /// `js/ops.mjs` is what [`js_module`] writes: change a layout here and the JS
    /// runtime's constants and checked layouts follow, or this test fails.
    #[test]
    fn js_module_is_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let path = root.join("js/ops.mjs");
        // Only in the repository: the crate on its own has no JS runtime beside it.
        if !root.join("package.json").exists() {
            return;
        }
        let want = js_module();
        if std::env::var_os("TOOLHOST_WRITE_WIRE").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "js/ops.mjs is not what crates/toolhost/src/host/wire.rs declares: run `TOOLHOST_WRITE_WIRE=1 cargo test -p toolhost js_module` and update js/manager.mjs's decoder to match"
        );
    }

    #[test]
    fn numbers_follow_the_engine_enums() {
        for (k, s) in STATUSES.iter().enumerate() {
            assert_eq!(status_code(*s), k as f64, "{}", s.as_str());
        }
        for (k, l) in EVENTS.iter().enumerate() {
            assert_eq!(l.code, k as f64, "event {} is out of order", l.name);
            let t = EventType::ALL[k];
            assert_eq!(t.as_str().trim_start_matches("tool-execution-").replace('-', "_").to_ascii_uppercase(), l.name);
        }
        let mut codes: Vec<f64> = OPS.iter().map(|l| l.code).collect();
        codes.sort_by(f64::total_cmp);
        codes.dedup();
        assert_eq!(codes.len(), OPS.len(), "two ops share a code");
    }

    #[test]
    fn walk_reads_what_the_writers_write_and_refuses_what_does_not_fit() {
        let mut w = Wire::default();
        w.push(&[op::NEW, 0.0, 7.0]);
        w.string("exec-é");
        w.push(&[op::FINAL, 7.0]);
        // A succeeded record, no error, no extras.
        w.push(&[status_code(ExecutionStatus::Succeeded), 0.0, 1.0, 2.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        w.push(&[op::EVENT, event::PROGRESS, 7.0, 1.0, f64::NAN]);
        w.opt_string(Some("half"));
        w.push(&[op::LOG, f64::NAN, 1.0, 1.0, f64::NAN, 0b101011 as f64, 0.0]);
        for s in ["m", "id", "echo", "boom", "{}"] {
            w.string(s);
        }
        w.push(&[op::ANSWER, 3.0, 0.0]);
        w.string("{}");
        w.push(&[op::DONE, 7.0]);
        assert_eq!(walk(&w.ops, &w.text).unwrap(), [op::NEW, op::FINAL, op::EVENT, op::LOG, op::ANSWER, op::DONE]);

        // A field too many, an unknown op, a string that is not there, a bad flag.
        let mut extra = w.ops.clone();
        extra.insert(3 + 1, 0.0);
        assert!(walk(&extra, &w.text).is_err());
        assert!(walk(&[99.0], "").unwrap_err().contains("no op"));
        assert!(walk(&[op::EVICT, 3.0], "ab").unwrap_err().contains("UTF-16"));
        assert!(walk(&[op::EVENT, event::APPROVED, 1.0, 0.0, 0.0, 2.0], "").unwrap_err().contains("APPROVED.by"));
        assert!(walk(&[op::LOG, 7.0, 0.0, 0.0, 0.0, 64.0, 0.0, 0.0], "").unwrap_err().contains("bits"));
    }
}
