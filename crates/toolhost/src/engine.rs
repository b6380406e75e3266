//! The execution state machine, free of any I/O.
//!
//! [`ExecutionEngine`] owns every policy decision: tool resolution, validation, the
//! concurrency gate, retries and backoff delays, the circuit breakers, records, history,
//! statistics and which lifecycle events to build. It never runs a handler, sleeps or
//! calls a listener: each method returns a [`Transition`] saying what the driver must do
//! next and which events to dispatch. Two drivers use it: [`crate::ToolExecutor`] (tokio,
//! for Rust handlers) and the Node binding (on the JS thread, for JS handlers), so both
//! kinds of tool get the same behaviour.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;
use serde_json::Value;
use crate::clock::{Instant, SystemTime};

use crate::audit::AuditRecord;
use crate::circuit::CircuitBreaker;
use crate::log_lines::{self, LogLine, LogOptions};
use crate::declaration::{NeedsApproval, RetryOverrides};
use crate::error::{ErrorCategory, RegistryError, RegistryErrorCode, ToolError};
use crate::record::{
    ApprovalDecision, ApprovalRecord, Progress, RecordedArgs,
    epoch_ms, now_ms, EventMask, EventType, ExecutionEvent, ExecutionRecord, ExecutionStatus, ExecutionTiming, Payload, ToolStats,
};
use crate::registry::{RegisteredTool, Scope, ToolRegistry};
use crate::retry::{Backoff, RetryConfig};

mod durable;

/// A manager's settings. Per call, the call's options win, then the tool's metadata,
/// then these.
#[derive(Clone, Debug)]
pub struct ManagerConfig {
    pub retry: RetryConfig,
    /// Per-attempt timeout in ms; `None` for none.
    pub timeout_ms: Option<f64>,
    pub max_concurrency: usize,
    /// Finished records kept, oldest dropped first.
    pub history_limit: usize,
    /// Validate arguments before the first attempt.
    pub validation: bool,
    /// The built-in logging interceptor; `None` when off.
    pub logging: Option<LogOptions>,
    /// The built-in metadata interceptor: stamp `_execution_metadata` on object results.
    pub metadata: bool,
    /// Argument fields shown as `[REDACTED]` in logs and left out of audit hashes.
    pub redact: Vec<String>,
    /// Whether calls wait for approval (a tool's own `needsApproval` wins).
    pub needs_approval: NeedsApproval,
    /// How long an approval may wait before the call ends denied; `None` for ever.
    pub approval_timeout_ms: Option<f64>,
    /// Each progress report restarts the attempt's timeout.
    pub reset_timeout_on_progress: bool,
    /// A bound on a whole execution that progress does not extend; `None` for none.
    pub max_total_timeout_ms: Option<f64>,
    /// Executions are journaled (see [`crate::journal`]): claimed by key before they run,
    /// their outcomes stored, replayed, recovered. `None`: in memory only.
    pub journal: Option<crate::journal::JournalPolicy>,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        Self {
            retry: RetryConfig::default(),
            timeout_ms: Some(30_000.0),
            max_concurrency: 16,
            history_limit: 1000,
            validation: true,
            logging: None,
            metadata: false,
            redact: Vec::new(),
            needs_approval: NeedsApproval::Never,
            approval_timeout_ms: None,
            reset_timeout_on_progress: false,
            max_total_timeout_ms: None,
            journal: None,
        }
    }
}

impl ManagerConfig {
    /// # Errors
    /// `INVALID_CONFIG` for a non-positive timeout or concurrency, or bad retry numbers.
    pub fn check(&self) -> Result<(), RegistryError> {
        self.retry.check()?;
        check_timeout(self.timeout_ms)?;
        check_named(self.approval_timeout_ms, "approvalTimeoutMs")?;
        check_named(self.max_total_timeout_ms, "maxTotalTimeoutMs")?;
        if self.max_concurrency == 0 {
            return Err(RegistryError::new(RegistryErrorCode::InvalidConfig, "maxConcurrency must be at least 1"));
        }
        Ok(())
    }
}

fn check_timeout(t: Option<f64>) -> Result<(), RegistryError> {
    check_named(t, "timeoutMs")
}

fn check_named(t: Option<f64>, name: &str) -> Result<(), RegistryError> {
    match t {
        Some(ms) if ms.is_nan() || ms <= 0.0 => Err(RegistryError::new(
            RegistryErrorCode::InvalidConfig,
            format!("{name} must be a number of milliseconds > 0, got {ms}"),
        )),
        _ => Ok(()),
    }
}

/// A duration of `ms` milliseconds; `None` for none, or one too long to represent.
fn millis(ms: Option<f64>) -> Option<Duration> {
    ms.and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
}

/// What the metadata interceptor stamps on a result as `_execution_metadata`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionMetadata {
    /// Rounded to 2 decimals.
    pub duration_ms: f64,
    pub tool_name: String,
    /// ISO 8601, UTC, milliseconds.
    pub timestamp: String,
}

impl ExecutionMetadata {
    /// `{ duration_ms, tool_name, timestamp }`
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "duration_ms": self.duration_ms, "tool_name": self.tool_name, "timestamp": self.timestamp })
    }
}

/// The audit trail's `inputHash` of `args`: SHA-256 of their canonical JSON, with the
/// fields named in `redact` redacted first.
pub fn audit_input_hash(args: &Value, redact: &[String]) -> String {
    if redact.is_empty() {
        crate::canonical::input_hash(args)
    } else {
        crate::canonical::input_hash(&crate::redaction::redact(args, redact))
    }
}

/// A call's arguments as a driver hands them to [`ExecutionEngine::start_with`].
pub enum Arguments {
    /// Parsed arguments, or why they could not be read.
    Parsed(Result<Value, RegistryError>),
    /// JSON text already parsed and validated elsewhere against `tool`. The record keeps
    /// the text; if the call now resolves to another tool, the text is parsed and
    /// validated again. `input_hash` is the audit hash of the parsed value
    /// ([`audit_input_hash`]), when the driver computed it there; without it, auditing
    /// parses the text again.
    Validated { text: Arc<str>, tool: Arc<RegisteredTool>, issues: Vec<crate::schema::ValidationIssue>, input_hash: Option<String> },
}

/// A finished record dropped from history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evicted {
    /// The oldest kept record (`historyLimit` was reached).
    Oldest,
    /// The record just finished (`historyLimit` is 0: nothing is kept).
    Newest,
    /// The record with this id (its session was destroyed).
    Id(String),
}

/// A call's own options.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    pub tool_call_id: Option<String>,
    pub session_id: Option<String>,
    pub timeout_ms: Option<f64>,
    pub retry: Option<RetryOverrides>,
    /// The caller's signal was already aborted: end `cancelled` without running.
    pub already_cancelled: bool,
    pub reset_timeout_on_progress: Option<bool>,
    pub max_total_timeout_ms: Option<f64>,
    /// The call was approved before it came here (by another system's approval flow,
    /// such as the Vercel AI SDK's): `Some(by)`. A call that needs approval then runs
    /// at once, its record saying who approved it.
    pub preapproved: Option<Option<String>>,
    /// The call's idempotency key (with a journal: a call with the key of a finished
    /// one is not run again); else its tool-call id is the key.
    pub idempotency_key: Option<String>,
    /// The driver keeps the call's argument text, which is compact JSON (no whitespace
    /// outside strings) of this many chars, and puts it in the Starting log lines that
    /// say [`LogFields::args_given`](crate::log_lines::LogFields::args_given). Where that
    /// text is the preview (within [`LogOptions::given_args_limit`](crate::log_lines::LogOptions::given_args_limit)),
    /// the engine then writes none: serializing the parsed arguments again was a third of
    /// what logging cost a call (B6).
    pub given_args_chars: Option<usize>,
}

/// Everything a driver needs to run one attempt.
#[derive(Clone)]
pub struct AttemptSpec {
    pub key: u64,
    pub execution_id: String,
    pub tool_call_id: Option<String>,
    pub session_id: Option<String>,
    pub tool: Arc<RegisteredTool>,
    pub args: RecordedArgs,
    pub attempt_number: u32,
    pub max_attempts: u32,
    pub timeout: Option<Duration>,
    /// The call's idempotency key when it has one of its own (a caller's, or the
    /// journal's); else it is the tool-call id, else the execution id
    /// ([`AttemptSpec::idempotency_key`]).
    pub own_idempotency_key: Option<String>,
    /// On an execution's first attempt, the bound on the whole execution
    /// (`maxTotalTimeoutMs`): call [`ExecutionEngine::total_timed_out`] when it passes.
    pub total_timeout: Option<Duration>,
}

impl AttemptSpec {
    /// The call's idempotency key: its own, else its tool-call id, else its execution id
    /// (the same on every attempt, as JS `ctx.idempotencyKey`).
    pub fn idempotency_key(&self) -> &str {
        self.own_idempotency_key.as_deref().or(self.tool_call_id.as_deref()).unwrap_or(&self.execution_id)
    }
}

/// What the driver must do next for the execution the call was about.
// Every call's transitions carry a Step; boxing the journal request would add an
// allocation to each journaled call's path.
#[allow(clippy::large_enum_variant)]
pub enum Step {
    /// Run this attempt now.
    Run(AttemptSpec),
    /// Waiting for a concurrency slot; a later transition admits it.
    Queued,
    /// Wait `delay`, then call [`ExecutionEngine::begin_attempt`].
    Retry { delay: Duration },
    /// The execution ended; this is its final record.
    Finished(Arc<ExecutionRecord>),
    /// The call referred to an attempt that is no longer current (a late settlement
    /// after a timeout or a cancel): nothing to do.
    Stale,
    /// The attempt goes on (a progress report): nothing to do but what the transition
    /// says (events, `rearm`).
    Continue,
    /// The host's own approval policy decides whether this call needs approval: call
    /// [`ExecutionEngine::approval_decided`]. A policy that has not answered after
    /// `timeout` (the approval timeout) is bounded by it: call
    /// [`ExecutionEngine::approval_expired`].
    Decide { timeout: Option<Duration> },
    /// Waiting for [`ExecutionEngine::approve`] or [`ExecutionEngine::deny`]; after
    /// `timeout`, call [`ExecutionEngine::approval_expired`].
    AwaitApproval { approval_id: String, timeout: Option<Duration> },
    /// The execution waits for the journal's answer to this request (see
    /// [`ExecutionEngine::journal_answered`]).
    Journal(crate::journal::JournalRequest),
}

/// What a host's approval policy answered for a call in [`Step::Decide`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalVerdict {
    /// `true`: the call waits for a person.
    Needed,
    /// `false`: the call runs.
    NotNeeded,
    /// Anything else (`500`, `"yes"`, `{}`), described for the message: the call is
    /// refused with `INVALID_APPROVAL_POLICY`.
    Invalid(String),
}

impl From<bool> for ApprovalVerdict {
    fn from(needed: bool) -> Self {
        if needed {
            Self::Needed
        } else {
            Self::NotNeeded
        }
    }
}

/// The result of one engine call.
pub struct Transition {
    /// The engine key of the execution this transition is about.
    pub key: u64,
    pub step: Step,
    /// Events to dispatch, in order (only the types someone wants).
    pub events: Vec<ExecutionEvent>,
    /// Queued executions that got a slot: run these attempts too.
    pub admitted: Vec<AttemptSpec>,
    /// When an attempt was running and must be told to stop (cancel), its number.
    pub interrupted_attempt: Option<u32>,
    /// Lines of the built-in logging interceptor, in order.
    pub logs: Vec<LogLine>,
    /// The audit record of the execution that finished, when audit records are wanted.
    pub audit: Option<AuditRecord>,
    /// Progress restarted the running attempt's timeout: `(attempt, timeout)`.
    pub rearm: Option<(u32, Duration)>,
    /// Journal work to do that nobody waits for (releases, watches, decisions).
    pub journal: Vec<crate::journal::JournalRequest>,
    /// This transition started an execution nobody called: recovery took over a call a
    /// dead process left (the host makes its own view of it from the record).
    pub recovered: bool,
    /// An approver edited the arguments (JSON text): the handler gets these.
    pub edited_args: Option<String>,
}

impl Transition {
    pub fn new(key: u64, step: Step) -> Self {
        Self {
            key,
            step,
            events: Vec::new(),
            admitted: Vec::new(),
            interrupted_attempt: None,
            logs: Vec::new(),
            audit: None,
            rearm: None,
            journal: Vec::new(),
            recovered: false,
            edited_args: None,
        }
    }

    /// `self` after `events`: events already built by the caller come first.
    pub(crate) fn after(mut self, mut events: Vec<ExecutionEvent>) -> Self {
        events.append(&mut self.events);
        self.events = events;
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Queued,
    Running,
    BackingOff,
    /// The host's approval policy is deciding.
    Deciding,
    AwaitingApproval,
    /// Waiting for the journal's answer to its claim.
    Claiming,
    /// Its key is held by another execution (here or in another process): waiting for it.
    WaitingForKey,
    /// Approved: waiting for the journal to mark it running before it runs.
    Starting,
    /// Finished: waiting for the journal to store its outcome before anyone hears of it.
    Recording,
}

struct Active {
    record: ExecutionRecord,
    tool: Arc<RegisteredTool>,
    backoff: Backoff,
    timeout: Option<Duration>,
    phase: Phase,
    started: Option<Instant>,
    queued: Instant,
    holds_slot: bool,
    uses_breaker: bool,
    /// The last attempt's error was already logged.
    error_logged: bool,
    /// When the metadata stamp read the clocks; the finish reuses those readings.
    ended: Option<(Instant, SystemTime)>,
    /// The audit hash of the arguments, when the driver computed it with the parse.
    input_hash: Option<String>,
    reset_on_progress: bool,
    total_timeout: Option<Duration>,
    /// `total_timeout` is [`default_total_timeout`]'s, not a `maxTotalTimeoutMs` given.
    total_by_default: bool,
    approval_timeout: Option<Duration>,
    /// Its journal state, when the manager has a journal.
    journal: Option<Box<durable::Journaled>>,
    /// [`CallOptions::given_args_chars`], until the arguments are replaced.
    given_args_chars: Option<usize>,
    /// The caller's [`CallOptions::idempotency_key`].
    caller_key: Option<String>,
    /// When it waits for approval: its place among the requests, which orders
    /// `pending_approvals` when two have the same `requested_at` (a browser's clock
    /// counts whole milliseconds).
    approval_order: u64,
}

/// How many attempt timeouts bound a whole execution that restarts its timeout on
/// progress (`resetTimeoutOnProgress`) when no `maxTotalTimeoutMs` is given.
pub const DEFAULT_TOTAL_TIMEOUTS: u32 = 10;

/// The bound on a whole execution that may restart its timeout on progress when no
/// `maxTotalTimeoutMs` is given: [`DEFAULT_TOTAL_TIMEOUTS`] attempt timeouts, so progress
/// alone cannot hold a slot for ever. None when attempts have no timeout (nothing then
/// bounds them anyway).
pub fn default_total_timeout(attempt_timeout: Option<Duration>) -> Option<Duration> {
    attempt_timeout.map(|t| t.saturating_mul(DEFAULT_TOTAL_TIMEOUTS))
}

/// A call waiting for approval, as `pendingApprovals()` lists it: plain JSON, so a
/// server can hand it to whoever approves across an HTTP round trip.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub approval_id: String,
    pub execution_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub tool_name: String,
    pub args: Value,
    /// Milliseconds since the Unix epoch.
    pub requested_at: f64,
    /// When it ends denied if nobody answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<f64>,
}

/// The statistics of one name, and whose tools they count.
struct KeptStats {
    stats: ToolStats,
    owner: StatsOwner,
}

/// Whose tools a name's statistics count. Those of one session's own tools alone go with
/// the session ([`ExecutionEngine::forget_session`]); those of a global tool stay when it
/// is unregistered, so a tool registered again under its name (a hot reload) keeps its
/// counts, as its circuit breaker does.
#[derive(PartialEq)]
enum StatsOwner {
    /// A global tool's, or several sessions' tools'.
    Shared,
    Session(String),
}

/// The execution state machine. See the module docs.
pub struct ExecutionEngine {
    registry: ToolRegistry,
    config: ManagerConfig,
    wanted: EventMask,
    next_key: u64,
    /// The next [`Active::approval_order`].
    next_approval: u64,
    /// Keyed by our own counter, so the cheap Fx hash is safe.
    active: FxHashMap<u64, Active>,
    queue: VecDeque<u64>,
    running: usize,
    history: VecDeque<Arc<ExecutionRecord>>,
    /// By tool name, as [`Self::stats`] answers; with whose tools each counted.
    stats: HashMap<String, KeptStats>,
    /// The circuit breakers of global tools, by name: one survives its tool's unregister
    /// and register again (a hot reload).
    breakers: HashMap<String, CircuitBreaker>,
    /// Those of session tools: session id -> name -> breaker. A session's tool is not
    /// another session's tool or a global one of the same name, and its breakers go with
    /// the session ([`Self::forget_session`]).
    session_breakers: HashMap<String, HashMap<String, CircuitBreaker>>,
    rng: rand::rngs::SmallRng,
    audit_wanted: bool,
    /// Lines logged by `begin` for executions admitted from the queue.
    pending_logs: Vec<LogLine>,
    /// Spare buffers of written log lines, for the next ones.
    line_buffers: log_lines::LineBuffers,
    /// Finished records dropped from history since [`ExecutionEngine::take_evicted`].
    evicted: Vec<Evicted>,
    /// Journaled executions from this key on are refused: their manager is closing
    /// ([`ExecutionEngine::refuse_new_journaled`]).
    closing_from: Option<u64>,
}

impl ExecutionEngine {
    /// # Errors
    /// `INVALID_CONFIG` when the config does not [check](ManagerConfig::check).
    pub fn new(registry: ToolRegistry, config: ManagerConfig) -> Result<Self, RegistryError> {
        config.check()?;
        use rand::SeedableRng;
        Ok(Self {
            registry,
            config,
            wanted: EventMask::default(),
            next_key: 1,
            closing_from: None,
            next_approval: 0,
            active: FxHashMap::default(),
            queue: VecDeque::new(),
            running: 0,
            history: VecDeque::new(),
            stats: HashMap::new(),
            breakers: HashMap::new(),
            session_breakers: HashMap::new(),
            rng: rand::rngs::SmallRng::from_os_rng(),
            audit_wanted: false,
            pending_logs: Vec::new(),
            line_buffers: log_lines::LineBuffers::default(),
            evicted: Vec::new(),
        })
    }

    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    pub fn config(&self) -> &ManagerConfig {
        &self.config
    }

    /// Asks the host's policy about every call whose tool says nothing of approval, where
    /// the manager's rule was `Never`: a host that sets a policy means it to decide.
    pub fn ask_by_default(&mut self) {
        if self.config.needs_approval == NeedsApproval::Never {
            self.config.needs_approval = NeedsApproval::Ask;
        }
    }

    /// Sets which event types are built.
    pub fn set_wanted_events(&mut self, mask: EventMask) {
        self.wanted = mask;
    }

    pub fn wanted_events(&self) -> EventMask {
        self.wanted
    }

    /// The redaction list the audit hash uses, when audit records are wanted: a driver
    /// that parses large arguments off its main thread hashes them there too.
    pub fn audit_redaction(&self) -> Option<&[String]> {
        self.audit_wanted.then_some(self.config.redact.as_slice())
    }

    /// Whether finished executions produce an [`AuditRecord`].
    pub fn set_audit_wanted(&mut self, wanted: bool) {
        self.audit_wanted = wanted;
    }

    /// The logging options for `tool`'s lines (`logging` is the config's; a field, not
    /// `&self`, so a line can be built in `line_buffers` meanwhile).
    fn logs_for<'a>(logging: &'a Option<LogOptions>, tool: &RegisteredTool) -> Option<&'a LogOptions> {
        logging.as_ref().filter(|_| !tool.declaration.metadata.self_instrumented)
    }

    /// The `_execution_metadata` to stamp on a successful result of execution `key`,
    /// when the metadata interceptor is on and the tool does not instrument itself.
    pub fn metadata_for(&mut self, key: u64) -> Option<ExecutionMetadata> {
        let (duration_ms, wall) = self.metadata_clock(key)?;
        Some(ExecutionMetadata {
            duration_ms,
            tool_name: self.active[&key].record.tool_name.clone(),
            timestamp: crate::timestamp::iso8601_millis(wall),
        })
    }

    /// Gives back a transition's log lines once they are written: the next lines reuse
    /// the vector (two log lines a call each allocated one, of a few hundred bytes) and
    /// the lines' strings ([`log_lines::LineBuffers`]).
    pub fn recycle_logs(&mut self, mut logs: Vec<LogLine>) {
        self.line_buffers.recycle(&mut logs);
        if self.pending_logs.capacity() == 0 {
            self.pending_logs = logs;
        }
    }

    /// What [`metadata_for`](Self::metadata_for) stamps, before it is formatted: the
    /// duration (ms, 2 decimals) and the wall clock the stamp's timestamp shows.
    pub fn metadata_clock(&mut self, key: u64) -> Option<(f64, SystemTime)> {
        let a = self.active.get_mut(&key)?;
        if !self.config.metadata || a.tool.declaration.metadata.self_instrumented {
            return None;
        }
        // The stamp is taken as the execution ends: the finish that follows reuses
        // these clock readings, so the record and the stamp agree.
        let (end, wall) = (Instant::now(), SystemTime::now());
        a.ended = Some((end, wall));
        let ms = end.duration_since(a.started.unwrap_or(a.queued)).as_secs_f64() * 1000.0;
        Some(((ms * 100.0).round() / 100.0, wall))
    }

    /// Number of executions not yet finished.
    pub fn in_flight(&self) -> usize {
        self.active.len()
    }

    /// Number of attempts running now (holding a concurrency slot).
    pub fn running(&self) -> usize {
        self.running
    }

    /// Starts an execution. `args` is the parsed arguments or why they could not be read.
    pub fn start(&mut self, tool_name: &str, args: Result<Value, RegistryError>, options: CallOptions) -> Transition {
        self.start_with(tool_name, Arguments::Parsed(args), options)
    }

    /// As [`ExecutionEngine::start`], with arguments a driver may have parsed and
    /// validated off its main thread (see [`Arguments::Validated`]).
    pub fn start_with(&mut self, tool_name: &str, arguments: Arguments, options: CallOptions) -> Transition {
        let key = self.next_key;
        self.next_key += 1;
        let (recorded, args_error, validated, input_hash) = match arguments {
            Arguments::Parsed(Ok(v)) => (RecordedArgs::Json(Arc::new(v)), None, None, None),
            Arguments::Parsed(Err(e)) => (RecordedArgs::Json(Arc::new(Value::Null)), Some(e), None, None),
            Arguments::Validated { text, tool, issues, input_hash } => (RecordedArgs::Text(text), None, Some((tool, issues)), input_hash),
        };
        let record = ExecutionRecord {
            id: crate::ids::new_v4_string(),
            tool_call_id: options.tool_call_id.clone(),
            session_id: options.session_id.clone(),
            tool_name: tool_name.to_string(),
            args: recorded,
            status: ExecutionStatus::Pending,
            result: None,
            error: None,
            timing: ExecutionTiming { queued_at: now_ms(), ..Default::default() },
            attempt_number: 0,
            max_attempts: self.config.retry.max_attempts,
            previous_errors: Vec::new(),
            approval: None,
            progress: None,
            idempotency_key: None,
            replayed: false,
            recovered: false,
        };
        let mut events = Vec::new();
        if self.wanted.wants(EventType::Started) {
            events.push(ExecutionEvent::Started { execution: Arc::new(record.clone()) });
        }
        let scope = match &record.session_id {
            Some(id) => Scope::Session(id),
            None => Scope::Global,
        };
        let resolved = self.registry.resolve(scope, tool_name);
        // A call cancelled before it started (an aborted signal; its session destroyed
        // while a worker parsed its arguments) ends cancelled, whatever resolving says.
        if options.already_cancelled && resolved.is_err() {
            return self.finish_unstarted(key, record, ToolError::cancelled(tool_name), events);
        }
        let policy = resolved.as_ref().ok().map(|tool| self.policy_for(tool, &options));
        let (tool, policy) = match (resolved, policy) {
            (Ok(tool), Some(Ok(policy))) => (tool, policy),
            (Err(e), _) | (_, Some(Err(e))) => return self.finish_unstarted(key, record, ToolError::from(e), events),
            (Ok(_), None) => unreachable!("a policy is computed for every resolved tool"),
        };
        self.activate(key, record, tool, policy, &options, input_hash);

        if options.already_cancelled {
            let mut t = self.finish(key, ExecutionStatus::Cancelled, None, Some(ToolError::cancelled(tool_name)));
            events.append(&mut t.events);
            t.events = events;
            return t;
        }
        if self.config.validation {
            let a = self.active.get_mut(&key).expect("inserted above");
            a.record.status = ExecutionStatus::Validating;
            if self.wanted.wants(EventType::Validating) {
                events.push(ExecutionEvent::Validating {
                    execution_id: a.record.id.clone(),
                    tool_name: a.record.tool_name.clone(),
                    args: a.record.args.clone(),
                });
            }
            let precomputed = validated.filter(|(tool, _)| Arc::ptr_eq(tool, &a.tool)).map(|(_, issues)| issues);
            let failure = match (args_error, precomputed) {
                (Some(e), _) => Some(ToolError::from(e)),
                (None, Some(issues)) if issues.is_empty() => None,
                (None, Some(issues)) => Some(ToolError::invalid_arguments(&a.record.tool_name, issues)),
                (None, None) => {
                    let args = a.record.args.to_value();
                    (!a.tool.schema.is_valid(&args)).then(|| ToolError::invalid_arguments(&a.record.tool_name, a.tool.schema.validate_redacting(&args, &self.config.redact)))
                }
            };
            if let Some(e) = failure {
                let mut t = self.finish(key, ExecutionStatus::Failed, None, Some(e));
                events.append(&mut t.events);
                t.events = events;
                return t;
            }
        } else if let Some(e) = args_error {
            let mut t = self.finish(key, ExecutionStatus::Failed, None, Some(ToolError::from(e)));
            events.append(&mut t.events);
            t.events = events;
            return t;
        }
        if self.config.journal.is_some() {
            self.journaled(key, options.idempotency_key.as_deref());
        }
        let rule = self.active[&key].tool.declaration.metadata.needs_approval.unwrap_or(self.config.needs_approval);
        if let (Some(by), NeedsApproval::Always | NeedsApproval::Ask) = (&options.preapproved, rule) {
            let events = self.approved_before(key, by.clone(), events);
            return self.proceed(key, false).after(events);
        }
        match rule {
            NeedsApproval::Never => self.proceed(key, false).after(events),
            NeedsApproval::Always => self.proceed(key, true).after(events),
            NeedsApproval::Ask => {
                let a = self.active.get_mut(&key).expect("inserted above");
                a.phase = Phase::Deciding;
                Transition::new(key, Step::Decide { timeout: a.approval_timeout }).after(events)
            }
        }
    }

    /// Makes a resolved execution active, with its policy.
    fn activate(&mut self, key: u64, record: ExecutionRecord, tool: Arc<RegisteredTool>, policy: (RetryConfig, Option<Duration>), options: &CallOptions, input_hash: Option<String>) {
        let (retry, timeout) = policy;
        let meta = &tool.declaration.metadata;
        let reset_on_progress = options.reset_timeout_on_progress.or(meta.reset_timeout_on_progress).unwrap_or(self.config.reset_timeout_on_progress);
        let given_total = millis(options.max_total_timeout_ms.or(meta.max_total_timeout_ms.map(|t| t as f64)).or(self.config.max_total_timeout_ms));
        let total_by_default = given_total.is_none() && reset_on_progress;
        let total_timeout = if total_by_default { default_total_timeout(timeout) } else { given_total };
        let approval_timeout = millis(meta.approval_timeout_ms.map(|t| t as f64).or(self.config.approval_timeout_ms));
        let mut active = Active {
            record,
            tool,
            backoff: Backoff::new(retry),
            timeout,
            phase: Phase::Queued,
            started: None,
            queued: Instant::now(),
            holds_slot: false,
            uses_breaker: false,
            error_logged: false,
            ended: None,
            input_hash,
            reset_on_progress,
            total_timeout,
            total_by_default,
            approval_timeout,
            journal: None,
            given_args_chars: options.given_args_chars,
            caller_key: options.idempotency_key.clone(),
            approval_order: 0,
        };
        active.record.max_attempts = active.backoff.config().max_attempts;
        self.active.insert(key, active);
    }

    /// Starts an execution recovery took over from a dead process: its row's arguments
    /// are validated again, then it runs (an approved one marks its row running first).
    fn start_adopted(&mut self, key: u64, record: ExecutionRecord, tool: Arc<RegisteredTool>, row: &crate::journal::RowState, fence: i64, options: CallOptions) -> Transition {
        let policy = match self.policy_for(&tool, &options) {
            Ok(p) => p,
            Err(e) => return self.finish_unstarted(key, record, ToolError::from(e), Vec::new()),
        };
        self.activate(key, record, tool, policy, &options, None);
        self.journaled(key, options.idempotency_key.as_deref());
        self.adopt_fence(key, fence);
        if self.config.validation {
            let a = &self.active[&key];
            let args = a.record.args.to_value();
            if !a.tool.schema.is_valid(&args) {
                let e = ToolError::invalid_arguments(&a.record.tool_name, a.tool.schema.validate_redacting(&args, &self.config.redact));
                return self.finish(key, ExecutionStatus::Failed, None, Some(e));
            }
        }
        if row.state == "approved" {
            self.start_approved(key)
        } else {
            self.admit_new(key)
        }
    }

    /// A validated (and, if it needed it, approved) execution: through its circuit
    /// breaker, then run now or queued for a slot.
    fn admit_new(&mut self, key: u64) -> Transition {
        let a = &self.active[&key];
        if let Some(cb) = a.tool.declaration.metadata.circuit_breaker {
            let tool_name = &a.record.tool_name;
            let breakers = match a.tool.session_id.as_deref() {
                None => &mut self.breakers,
                Some(session) => match self.session_breakers.get_mut(session) {
                    Some(b) => b,
                    None => self.session_breakers.entry(session.to_string()).or_default(),
                },
            };
            let breaker = match breakers.get_mut(tool_name) {
                Some(b) => b,
                None => breakers.entry(tool_name.clone()).or_insert_with(|| CircuitBreaker::new(cb)),
            };
            if !breaker.try_acquire(Instant::now()) {
                let mut e = ToolError::new(
                    ErrorCategory::Permanent,
                    "CIRCUIT_OPEN",
                    format!("tool '{tool_name}' is failing repeatedly; its circuit is open, try again later"),
                );
                e.retryable = false;
                return self.finish(key, ExecutionStatus::Failed, None, Some(e));
            }
            self.active.get_mut(&key).expect("admitted executions are active").uses_breaker = true;
        }
        let a = self.active.get_mut(&key).expect("admitted executions are active");
        a.record.status = ExecutionStatus::Pending;
        a.phase = Phase::Queued;
        let mut t = if self.running < self.config.max_concurrency {
            self.running += 1;
            self.active.get_mut(&key).expect("admitted executions are active").holds_slot = true;
            let (spec, ev) = self.begin(key);
            let mut t = Transition::new(key, Step::Run(spec));
            t.events = ev;
            t
        } else {
            self.queue.push_back(key);
            Transition::new(key, Step::Queued)
        };
        t.logs = std::mem::take(&mut self.pending_logs);
        t
    }

    /// Records the approval a call came with (see [`CallOptions::preapproved`]).
    fn approved_before(&mut self, key: u64, by: Option<String>, mut events: Vec<ExecutionEvent>) -> Vec<ExecutionEvent> {
        let approval_id = crate::ids::new_v4_string();
        let now = now_ms();
        let wants = self.wanted.wants(EventType::Approved);
        let a = self.active.get_mut(&key).expect("approved executions are active");
        a.record.approval = Some(ApprovalRecord {
            approval_id: approval_id.clone(),
            requested_at: now,
            decision: Some(ApprovalDecision::Approved),
            decided_at: Some(now),
            by: by.clone(),
            reason: None,
            edited: false,
        });
        if wants {
            events.push(ExecutionEvent::Approved { execution_id: a.record.id.clone(), tool_name: a.record.tool_name.clone(), approval_id, by, edited: false });
        }
        events
    }

    /// A validated execution, its approval decided: in memory, it waits for its approval
    /// or runs; with a journal, it claims its key first ([`durable`]).
    fn proceed(&mut self, key: u64, needs_approval: bool) -> Transition {
        if self.active[&key].journal.is_some() {
            return self.claim(key, needs_approval);
        }
        if needs_approval {
            self.request_approval(key)
        } else {
            self.admit_new(key)
        }
    }

    /// Puts a validated execution in `awaiting-approval`: no slot, no timeout.
    fn request_approval(&mut self, key: u64) -> Transition {
        let approval_id = crate::ids::new_v4_string();
        self.request_approval_as(key, approval_id, now_ms())
    }

    /// As [`ExecutionEngine::request_approval`], with the approval's id and time given (a
    /// journaled call claims its key with them).
    fn request_approval_as(&mut self, key: u64, approval_id: String, requested_at: f64) -> Transition {
        let wants = self.wanted.wants(EventType::ApprovalRequested);
        let order = self.next_approval;
        self.next_approval += 1;
        let a = self.active.get_mut(&key).expect("approval is asked for active executions");
        a.phase = Phase::AwaitingApproval;
        a.approval_order = order;
        a.record.status = ExecutionStatus::AwaitingApproval;
        a.record.approval = Some(ApprovalRecord {
            approval_id: approval_id.clone(),
            requested_at,
            decision: None,
            decided_at: None,
            by: None,
            reason: None,
            edited: false,
        });
        let timeout = a.approval_timeout;
        let mut t = Transition::new(key, Step::AwaitApproval { approval_id: approval_id.clone(), timeout });
        if wants {
            t.events.push(ExecutionEvent::ApprovalRequested { execution: Arc::new(a.record.clone()), approval_id });
        }
        t
    }

    /// The host's approval policy answered for an execution in [`Step::Decide`]. An
    /// answer that is not a boolean fails closed: the call is refused, never run.
    pub fn approval_decided(&mut self, key: u64, verdict: ApprovalVerdict) -> Transition {
        match self.active.get(&key) {
            Some(a) if a.phase == Phase::Deciding => match verdict {
                ApprovalVerdict::Needed => self.proceed(key, true),
                ApprovalVerdict::NotNeeded => self.proceed(key, false),
                ApprovalVerdict::Invalid(what) => {
                    let mut e = ToolError::new(
                        ErrorCategory::Permanent,
                        "INVALID_APPROVAL_POLICY",
                        format!("tool '{}' was not run: its needsApproval function returned {what}, not true or false", a.record.tool_name),
                    );
                    e.retryable = false;
                    self.finish(key, ExecutionStatus::Failed, None, Some(e))
                }
            },
            _ => Transition::new(key, Step::Stale),
        }
    }

    /// The tool of the call waiting for approval `approval_id`, when this engine holds it.
    pub fn tool_awaiting(&self, approval_id: &str) -> Option<&str> {
        let key = self.awaiting(approval_id).ok()?;
        Some(self.active[&key].record.tool_name.as_str())
    }

    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    fn awaiting(&self, approval_id: &str) -> Result<u64, ToolError> {
        self.active
            .iter()
            .find(|(_, a)| a.phase == Phase::AwaitingApproval && a.record.approval.as_ref().is_some_and(|r| r.approval_id == approval_id))
            .map(|(k, _)| *k)
            .ok_or_else(|| {
                // An execution id where an approval id belongs: say so, and give the right one.
                let execution = self.active.values().find(|a| a.record.id == approval_id);
                let message = match execution.map(|a| (a.phase == Phase::AwaitingApproval, a.record.approval.as_ref())) {
                    Some((true, Some(r))) => format!(
                        "'{approval_id}' is an execution id, not an approval id: this execution waits for approval '{}' (the approvalId of its tool-execution-approval-requested event and of pendingApprovals())",
                        r.approval_id
                    ),
                    Some(_) => format!("'{approval_id}' is an execution id, not an approval id, and that execution does not wait for approval"),
                    None => format!("no call waits for approval '{approval_id}' (it was answered, cancelled or timed out)"),
                };
                ToolError::new(ErrorCategory::NotFound, RegistryErrorCode::ApprovalNotFound.as_str(), message)
            })
    }

    /// Approves a waiting call, optionally with edited arguments (validated again and
    /// recorded as edited); it then runs, or queues for a slot.
    ///
    /// # Errors
    /// `APPROVAL_NOT_FOUND` when no call waits for `approval_id`; `INVALID_ARGUMENTS`
    /// with every failure when edited arguments do not validate (the call keeps waiting).
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    pub fn approve(&mut self, approval_id: &str, edited: Option<Value>, by: Option<String>) -> Result<Transition, ToolError> {
        let key = self.awaiting(approval_id)?;
        let validate = self.config.validation;
        let a = self.active.get_mut(&key).expect("found above");
        if let Some(args) = &edited {
            crate::arguments::check_depth(&a.record.tool_name, args).map_err(ToolError::from)?;
            if validate {
                let issues = a.tool.schema.validate_redacting(args, &self.config.redact);
                if !issues.is_empty() {
                    return Err(ToolError::invalid_arguments(&a.record.tool_name, issues));
                }
            }
        }
        // Arguments handed back unchanged (a form that always sends them) are not an edit.
        let edited = edited.filter(|args| *a.record.args.to_value() != *args);
        let edited_flag = edited.is_some();
        if let Some(args) = edited {
            a.record.args = RecordedArgs::Json(Arc::new(args));
            a.input_hash = None;
            a.given_args_chars = None;
        }
        let record = a.record.approval.as_mut().expect("awaiting executions have an approval");
        record.decision = Some(ApprovalDecision::Approved);
        record.decided_at = Some(now_ms());
        record.by = by.clone();
        record.edited = edited_flag;
        let mut events = Vec::new();
        if self.wanted.wants(EventType::Approved) {
            events.push(ExecutionEvent::Approved {
                execution_id: a.record.id.clone(),
                tool_name: a.record.tool_name.clone(),
                approval_id: approval_id.to_string(),
                by,
                edited: edited_flag,
            });
        }
        Ok(self.admit_new(key).after(events))
    }

    /// Denies a waiting call: it ends failed, category `denied`, code `APPROVAL_DENIED`.
    ///
    /// # Errors
    /// `APPROVAL_NOT_FOUND` when no call waits for `approval_id`.
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    pub fn deny(&mut self, approval_id: &str, reason: Option<String>, by: Option<String>) -> Result<Transition, ToolError> {
        let key = self.awaiting(approval_id)?;
        Ok(self.deny_key(key, reason.unwrap_or_else(|| "denied by the approver".into()), by))
    }

    /// An approval's timeout passed: the call ends denied. A host policy that has not
    /// answered by then ([`Step::Decide`]) is bounded by the same timeout.
    pub fn approval_expired(&mut self, key: u64) -> Transition {
        match self.active.get(&key) {
            // Another process may be approving it right now: the journal decides.
            Some(a) if a.phase == Phase::AwaitingApproval && a.journal.is_some() => self.expire_journaled(key),
            Some(a) if a.phase == Phase::AwaitingApproval => {
                let ms = a.approval_timeout.map_or(0, |d| d.as_millis());
                self.deny_key(key, format!("nobody approved it within {ms} ms"), None)
            }
            Some(a) if a.phase == Phase::Deciding => {
                let ms = a.approval_timeout.map_or(0, |d| d.as_millis());
                let e = ToolError::denied(&a.record.tool_name, &format!("its needsApproval function did not answer within {ms} ms"));
                self.finish(key, ExecutionStatus::Failed, None, Some(e))
            }
            _ => Transition::new(key, Step::Stale),
        }
    }

    fn deny_key(&mut self, key: u64, reason: String, by: Option<String>) -> Transition {
        let a = self.active.get_mut(&key).expect("denied executions are active");
        let record = a.record.approval.as_mut().expect("awaiting executions have an approval");
        record.decision = Some(ApprovalDecision::Denied);
        record.decided_at = Some(now_ms());
        record.by = by.clone();
        record.reason = Some(reason.clone());
        let approval_id = record.approval_id.clone();
        let error = ToolError::denied(&a.record.tool_name, &reason);
        let mut events = Vec::new();
        if self.wanted.wants(EventType::Denied) {
            events.push(ExecutionEvent::Denied { execution_id: a.record.id.clone(), tool_name: a.record.tool_name.clone(), approval_id, by, reason });
        }
        self.finish(key, ExecutionStatus::Failed, None, Some(error)).after(events)
    }

    /// Every call waiting for approval, oldest first; those asked for in the same
    /// instant in the order they were asked for (not the map's).
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        let mut out: Vec<(u64, PendingApproval)> = self
            .active
            .values()
            .filter(|a| a.phase == Phase::AwaitingApproval)
            .filter_map(|a| {
                let approval = a.record.approval.as_ref()?;
                Some((a.approval_order, PendingApproval {
                    approval_id: approval.approval_id.clone(),
                    execution_id: a.record.id.clone(),
                    tool_call_id: a.record.tool_call_id.clone(),
                    session_id: a.record.session_id.clone(),
                    tool_name: a.record.tool_name.clone(),
                    args: a.record.args.to_value().into_owned(),
                    requested_at: approval.requested_at,
                    expires_at: a.approval_timeout.map(|d| approval.requested_at + d.as_secs_f64() * 1000.0),
                }))
            })
            .collect();
        out.sort_unstable_by(|(a_order, a), (b_order, b)| a.requested_at.total_cmp(&b.requested_at).then(a_order.cmp(b_order)));
        out.into_iter().map(|(_, p)| p).collect()
    }

    /// The running attempt reported progress. With `resetTimeoutOnProgress`, its
    /// timeout starts again (`rearm`); `maxTotalTimeoutMs` still bounds the execution.
    pub fn progress(&mut self, key: u64, attempt: u32, progress: Progress) -> Transition {
        if !self.is_current(key, attempt) {
            return Transition::new(key, Step::Stale);
        }
        let wants = self.wanted.wants(EventType::Progress);
        let a = self.active.get_mut(&key).expect("checked above");
        let mut t = Transition::new(key, Step::Continue);
        if wants {
            t.events.push(ExecutionEvent::Progress { execution_id: a.record.id.clone(), tool_name: a.record.tool_name.clone(), progress: progress.clone() });
        }
        a.record.progress = Some(progress);
        if a.reset_on_progress {
            t.rearm = a.timeout.map(|d| (attempt, d));
        }
        t
    }

    /// The running attempt produced a preliminary result (the host keeps the value):
    /// an event, and, like progress, a restarted timeout with `resetTimeoutOnProgress`.
    pub fn preliminary_result(&mut self, key: u64, attempt: u32) -> Transition {
        if !self.is_current(key, attempt) {
            return Transition::new(key, Step::Stale);
        }
        let wants = self.wanted.wants(EventType::PreliminaryResult);
        let a = self.active.get_mut(&key).expect("checked above");
        let mut t = Transition::new(key, Step::Continue);
        if wants {
            t.events.push(ExecutionEvent::PreliminaryResult { execution_id: a.record.id.clone(), tool_name: a.record.tool_name.clone() });
        }
        if a.reset_on_progress {
            t.rearm = a.timeout.map(|d| (attempt, d));
        }
        t
    }

    /// An execution's `maxTotalTimeoutMs` passed: it ends failed with `timeout` /
    /// `TIMEOUT`, not retried, its running attempt interrupted.
    pub fn total_timed_out(&mut self, key: u64) -> Transition {
        let Some(a) = self.active.get(&key).filter(|a| a.phase != Phase::Recording) else { return Transition::new(key, Step::Stale) };
        let Some(total) = a.total_timeout else { return Transition::new(key, Step::Stale) };
        let interrupted = (a.phase == Phase::Running).then_some(a.record.attempt_number);
        let why = if a.total_by_default { "maxTotalTimeoutMs, by default 10 × timeoutMs with resetTimeoutOnProgress" } else { "maxTotalTimeoutMs" };
        let mut e = ToolError::new(
            ErrorCategory::Timeout,
            "TIMEOUT",
            format!("tool '{}' exceeded its total time limit of {} ms ({why})", a.record.tool_name, total.as_millis()),
        );
        e.retryable = false;
        let mut t = self.finish(key, ExecutionStatus::Failed, None, Some(e));
        t.interrupted_attempt = interrupted;
        t
    }

    /// Whether the tool of an execution in flight has an `outputSchema`.
    pub fn checks_output(&self, key: u64) -> bool {
        self.active.get(&key).is_some_and(|a| a.tool.output.is_some())
    }

    /// Checks a result against the tool's `outputSchema` (none: always fine).
    ///
    /// # Errors
    /// `INVALID_OUTPUT` (category `execution`) with every failure.
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    pub fn check_output(&self, key: u64, result: &Value) -> Result<(), ToolError> {
        let Some(a) = self.active.get(&key) else { return Ok(()) };
        let Some(schema) = &a.tool.output else { return Ok(()) };
        if schema.is_valid(result) {
            return Ok(());
        }
        Err(ToolError::invalid_output(&a.record.tool_name, schema.validate_redacting(result, &self.config.redact)))
    }

    fn policy_for(&self, tool: &RegisteredTool, options: &CallOptions) -> Result<(RetryConfig, Option<Duration>), RegistryError> {
        let mut retry = self.config.retry.clone();
        if let Some(o) = &tool.declaration.metadata.retry {
            // Valid alone (checked at registration), but maybe not with this manager's
            // settings: say where the other value came from.
            retry = retry.with_overrides(o).map_err(|mut e| {
                e.message = format!("tool '{}' metadata with this manager's retry settings: {}", tool.name(), e.message);
                e
            })?;
        }
        if let Some(o) = &options.retry {
            retry = retry.with_overrides(o)?;
        }
        if self.config.journal.is_some() {
            durable::check_key(options)?;
        }
        let timeout_ms = options
            .timeout_ms
            .or(tool.declaration.metadata.timeout_ms.map(|t| t as f64))
            .or(self.config.timeout_ms);
        check_timeout(timeout_ms)?;
        // Negative or NaN, it read as "too long to represent", so no bound at all.
        check_named(options.max_total_timeout_ms, "maxTotalTimeoutMs")?;
        // An infinite timeout (or one too long to represent) means none.
        Ok((retry, timeout_ms.and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())))
    }

    /// Begins the next attempt of an execution that was backing off. An execution keeps
    /// its concurrency slot while it backs off: a tool being retried (often because it
    /// is overloaded or rate-limited) is not joined by queued calls meanwhile, and a
    /// burst of retries is paced to `maxConcurrency`.
    pub fn begin_attempt(&mut self, key: u64) -> Transition {
        match self.active.get(&key) {
            Some(a) if a.phase == Phase::BackingOff => {
                let (spec, events) = self.begin(key);
                let mut t = Transition::new(key, Step::Run(spec));
                t.events = events;
                t.logs = std::mem::take(&mut self.pending_logs);
                t
            }
            _ => Transition::new(key, Step::Stale),
        }
    }

    fn begin(&mut self, key: u64) -> (AttemptSpec, Vec<ExecutionEvent>) {
        let wants = self.wanted.wants(EventType::Executing);
        let a = self.active.get_mut(&key).expect("begin is called for active executions");
        a.phase = Phase::Running;
        a.record.status = ExecutionStatus::Executing;
        a.record.attempt_number += 1;
        let first = a.started.is_none();
        if first {
            a.started = Some(Instant::now());
            a.record.timing.started_at = Some(now_ms());
        }
        a.error_logged = false;
        if let Some(opts) = Self::logs_for(&self.config.logging, &a.tool) {
            let mut line = match &a.record.args {
                // The driver's text is the preview: the line names it instead of a copy.
                RecordedArgs::Json(_) if a.given_args_chars.is_some_and(|n| opts.given_args_limit().is_some_and(|max| n <= max)) => {
                    let mut line = self.line_buffers.starting(&a.record.tool_name, &a.record.id, None, opts);
                    line.fields.args_given = true;
                    line
                }
                RecordedArgs::Json(args) => self.line_buffers.starting(&a.record.tool_name, &a.record.id, Some(args), opts),
                RecordedArgs::Text(text) => self.line_buffers.starting_from_text(&a.record.tool_name, &a.record.id, text, opts),
            };
            line.fields.attempt_number = Some(a.record.attempt_number);
            self.pending_logs.push(line);
        }
        let mut events = Vec::new();
        if wants {
            events.push(ExecutionEvent::Executing {
                execution_id: a.record.id.clone(),
                tool_name: a.record.tool_name.clone(),
                attempt_number: a.record.attempt_number,
            });
        }
        let spec = AttemptSpec {
            key,
            execution_id: a.record.id.clone(),
            tool_call_id: a.record.tool_call_id.clone(),
            session_id: a.record.session_id.clone(),
            tool: a.tool.clone(),
            args: a.record.args.clone(),
            attempt_number: a.record.attempt_number,
            max_attempts: a.record.max_attempts,
            timeout: a.timeout,
            own_idempotency_key: a.record.idempotency_key.clone().or_else(|| a.caller_key.clone()),
            total_timeout: if first { a.total_timeout } else { None },
        };
        (spec, events)
    }

    /// Checks arguments an interceptor of the host (`use()` in JS) hands the handler of
    /// execution `key`'s running attempt instead of the validated ones, as edited
    /// arguments of an approval are checked: their depth, then the tool's schema unless
    /// validation is off. `Err` is the attempt's error (`INVALID_ARGUMENTS`), to finish it
    /// with ([`ExecutionEngine::attempt_finished`]). The record keeps the arguments the
    /// call was made with: an interceptor's are the attempt's own.
    // ToolError is the public error type, unboxed as every handler returns it; boxing it
    // here would only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    pub fn check_intercepted_args(&self, key: u64, args: &Value) -> Result<(), ToolError> {
        let Some(a) = self.active.get(&key) else { return Ok(()) };
        let tool = &a.record.tool_name;
        if let Err(e) = crate::arguments::check_depth(tool, args) {
            return Err(ToolError::invalid_intercepted_arguments(tool, Vec::new(), Some(&ToolError::from(e).message)));
        }
        if self.config.validation {
            let issues = a.tool.schema.validate_redacting(args, &self.config.redact);
            if !issues.is_empty() {
                return Err(ToolError::invalid_intercepted_arguments(tool, issues, None));
            }
        }
        Ok(())
    }

    /// Whether `attempt` is the running attempt of execution `key`.
    pub fn is_current(&self, key: u64, attempt: u32) -> bool {
        matches!(self.active.get(&key), Some(a) if a.phase == Phase::Running && a.record.attempt_number == attempt)
    }

    /// The tool name and per-attempt timeout of an execution in flight.
    pub fn timeout_of(&self, key: u64) -> Option<(&str, Option<Duration>)> {
        self.active.get(&key).map(|a| (a.record.tool_name.as_str(), a.timeout))
    }

    /// Reports how an attempt ended.
    pub fn attempt_finished(&mut self, key: u64, attempt: u32, outcome: Result<Payload, ToolError>) -> Transition {
        if !self.is_current(key, attempt) {
            return Transition::new(key, Step::Stale);
        }
        match outcome {
            Ok(result) => self.finish(key, ExecutionStatus::Succeeded, Some(result), None),
            Err(error) => {
                let line = self.active.get(&key).and_then(|a| {
                    let opts = Self::logs_for(&self.config.logging, &a.tool)?;
                    Some(self.line_buffers.error(&a.record.tool_name, &a.record.id, &error.message, error.stack.as_deref(), opts))
                });
                let a = self.active.get_mut(&key).expect("checked above");
                a.error_logged = line.is_some();
                if let Some(line) = line {
                    self.pending_logs.push(line);
                }
                if error.category == ErrorCategory::Cancelled {
                    return self.finish(key, ExecutionStatus::Cancelled, None, Some(error));
                }
                if !a.backoff.config().should_retry(&error, attempt) {
                    return self.finish(key, ExecutionStatus::Failed, None, Some(error));
                }
                let delay = a.backoff.next_delay(attempt, &error, &mut self.rng);
                a.phase = Phase::BackingOff;
                let mut t = Transition::new(key, Step::Retry { delay });
                if self.wanted.wants(EventType::Retrying) {
                    t.events.push(ExecutionEvent::Retrying {
                        execution_id: a.record.id.clone(),
                        tool_name: a.record.tool_name.clone(),
                        attempt_number: attempt + 1,
                        max_attempts: a.record.max_attempts,
                        error: error.clone(),
                        delay_ms: delay.as_secs_f64() * 1000.0,
                    });
                }
                a.record.previous_errors.push(error);
                t.logs.append(&mut self.pending_logs);
                t
            }
        }
    }

    /// Fills free concurrency slots from the queue, oldest (or resumed) first.
    fn admit(&mut self, t: &mut Transition) {
        while self.running < self.config.max_concurrency {
            let Some(next) = self.queue.pop_front() else { break };
            self.running += 1;
            self.active.get_mut(&next).expect("queued executions are active").holds_slot = true;
            let (spec, events) = self.begin(next);
            t.events.extend(events);
            t.admitted.push(spec);
        }
    }

    /// Cancels an execution by id. `None` when it is not in flight (finished or unknown).
    pub fn cancel(&mut self, execution_id: &str) -> Option<Transition> {
        let key = self.execution_key(execution_id)?;
        Some(self.cancel_key(key))
    }

    /// Cancels an execution by its engine key.
    pub fn cancel_key(&mut self, key: u64) -> Transition {
        let Some(a) = self.active.get(&key) else {
            return Transition::new(key, Step::Stale);
        };
        // Its handler finished: the journal is storing the outcome every caller will get.
        if a.phase == Phase::Recording {
            return Transition::new(key, Step::Stale);
        }
        let interrupted = (a.phase == Phase::Running).then_some(a.record.attempt_number);
        let tool = a.record.tool_name.clone();
        let mut t = self.finish(key, ExecutionStatus::Cancelled, None, Some(ToolError::cancelled(&tool)));
        t.interrupted_attempt = interrupted;
        t
    }

    /// The record of an execution in flight, by its engine key.
    pub fn record_of(&self, key: u64) -> Option<Arc<ExecutionRecord>> {
        self.active.get(&key).map(|a| Arc::new(a.record.clone()))
    }

    /// The tool of an execution in flight.
    pub fn tool_of(&self, key: u64) -> Option<&Arc<RegisteredTool>> {
        self.active.get(&key).map(|a| &a.tool)
    }

    /// The id of an execution in flight.
    pub fn id_of(&self, key: u64) -> Option<&str> {
        self.active.get(&key).map(|a| a.record.id.as_str())
    }

    /// The engine key of an execution in flight.
    pub fn execution_key(&self, execution_id: &str) -> Option<u64> {
        self.active.iter().find(|(_, a)| a.record.id == execution_id).map(|(k, _)| *k)
    }

    /// Keys of every execution in flight, optionally only those of one session: the
    /// queued ones first, each group in submission order. Cancelling in this order never
    /// admits an execution that is about to be cancelled too.
    pub fn in_flight_keys(&self, session_id: Option<&str>) -> Vec<u64> {
        let mut keys: Vec<(bool, u64)> = self
            .active
            .iter()
            .filter(|(_, a)| session_id.is_none() || a.record.session_id.as_deref() == session_id)
            .map(|(k, a)| (a.phase != Phase::Queued, *k))
            .collect();
        keys.sort_unstable();
        keys.into_iter().map(|(_, k)| k).collect()
    }

    /// Ends an execution that never got a tool: failed, or cancelled for a `cancelled` error.
    fn finish_unstarted(&mut self, key: u64, mut record: ExecutionRecord, error: ToolError, mut events: Vec<ExecutionEvent>) -> Transition {
        let cancelled = error.category == ErrorCategory::Cancelled;
        record.status = if cancelled { ExecutionStatus::Cancelled } else { ExecutionStatus::Failed };
        let now = now_ms();
        record.timing.completed_at = Some(now);
        record.timing.duration_ms = Some(0.0);
        record.error = Some(error);
        let record = Arc::new(record);
        // A call in a session destroyed meanwhile is not counted: its statistics would
        // outlive the session (and one without a tool, or in a session that never was,
        // counts for no tool). The record is history, as any. Otherwise the owner is
        // looked up, on this path of failures alone.
        let owner = match record.session_id.as_deref() {
            None => Some(None),
            Some(s) if !self.registry.has_session(s) => None,
            Some(s) => Some(self.registry.resolve(Scope::Session(s), &record.tool_name).ok().filter(|t| t.session_id.is_some()).map(|_| s)),
        };
        self.account(&record, owner);
        if cancelled {
            if self.wanted.wants(EventType::Cancelled) {
                events.push(ExecutionEvent::Cancelled { execution_id: record.id.clone(), tool_name: record.tool_name.clone() });
            }
        } else if self.wanted.wants(EventType::Failed) {
            events.push(ExecutionEvent::Failed { execution: record.clone() });
        }
        let mut t = Transition::new(key, Step::Finished(record.clone()));
        t.events = events;
        if let (Some(opts), Some(e)) = (&self.config.logging, &record.error) {
            t.logs.push(self.line_buffers.error(&record.tool_name, &record.id, &e.message, None, opts));
        }
        if self.audit_wanted {
            t.audit = Some(self.audit_record(&record, None));
        }
        t
    }

    fn audit_record(&self, record: &ExecutionRecord, input_hash: Option<String>) -> AuditRecord {
        let args = input_hash.unwrap_or_else(|| audit_input_hash(&record.args.to_value(), &self.config.redact));
        let iso = |ms: f64| {
            let since_epoch = Duration::try_from_secs_f64(ms.max(0.0) / 1000.0).unwrap_or_default();
            crate::timestamp::iso8601_millis(crate::clock::UNIX_EPOCH + since_epoch)
        };
        AuditRecord {
            execution_id: record.id.clone(),
            tool_call_id: record.tool_call_id.clone(),
            session_id: record.session_id.clone(),
            tool_name: record.tool_name.clone(),
            input_hash: args,
            started_at: iso(record.timing.started_at.unwrap_or(record.timing.queued_at)),
            finished_at: iso(record.timing.completed_at.unwrap_or(record.timing.queued_at)),
            duration_ms: record.timing.duration_ms.unwrap_or(0.0),
            status: record.status.as_str().to_string(),
            attempts: record.attempt_number,
            error_code: record.error.as_ref().map(|e| e.code.clone()),
            approval: record.approval.as_ref().map(|a| crate::audit::AuditApproval {
                decision: match a.decision {
                    Some(ApprovalDecision::Approved) => "approved",
                    Some(ApprovalDecision::Denied) => "denied",
                    None => "pending",
                }
                .to_string(),
                by: a.by.clone(),
                decided_at: a.decided_at.map(iso),
                edited: a.edited,
            }),
            idempotency_key: record.idempotency_key.clone(),
            replayed: record.replayed,
            recovered: record.recovered,
        }
    }

    /// Drops the kept records and the circuit breakers of a destroyed session.
    pub fn forget_session(&mut self, session_id: &str) {
        self.session_breakers.remove(session_id);
        self.stats.retain(|_, k| !matches!(&k.owner, StatsOwner::Session(s) if s == session_id));
        let evicted = &mut self.evicted;
        self.history.retain(|r| {
            let keep = r.session_id.as_deref() != Some(session_id);
            if !keep {
                evicted.push(Evicted::Id(r.id.clone()));
            }
            keep
        });
    }

    /// The finished records dropped from history (by `historyLimit` or a destroyed
    /// session) since the last call: a host that keeps its own view of each record
    /// drops those.
    pub fn take_evicted(&mut self) -> Vec<Evicted> {
        std::mem::take(&mut self.evicted)
    }

    /// The error of the last failed attempt of an execution in flight (the one a
    /// `Retry` step is about).
    pub fn last_attempt_error(&self, key: u64) -> Option<&ToolError> {
        self.active.get(&key).and_then(|a| a.record.previous_errors.last())
    }

    /// Ends an execution. A journaled one that ran first stores its outcome, and ends
    /// when the journal has it ([`durable`]).
    fn finish(&mut self, key: u64, status: ExecutionStatus, result: Option<Payload>, error: Option<ToolError>) -> Transition {
        if self.active[&key].journal.is_some() {
            return self.finish_journaled(key, status, result, error);
        }
        self.finish_now(key, status, result, error)
    }

    /// Ends an execution now: its record, statistics, log line, audit record and event,
    /// and the slot it frees.
    fn finish_now(&mut self, key: u64, status: ExecutionStatus, result: Option<Payload>, error: Option<ToolError>) -> Transition {
        let mut a = self.active.remove(&key).expect("finish is called for active executions");
        if a.phase == Phase::Queued {
            self.queue.retain(|k| *k != key);
        }
        let (end, wall) = a.ended.take().unwrap_or_else(|| (Instant::now(), SystemTime::now()));
        a.record.status = status;
        a.record.result = result;
        a.record.error = error;
        a.record.timing.completed_at = Some(epoch_ms(wall));
        a.record.timing.duration_ms = Some(end.duration_since(a.started.unwrap_or(a.queued)).as_secs_f64() * 1000.0);
        if a.uses_breaker {
            let breaker = match a.tool.session_id.as_deref() {
                None => self.breakers.get_mut(&a.record.tool_name),
                Some(session) => self.session_breakers.get_mut(session).and_then(|b| b.get_mut(&a.record.tool_name)),
            };
            if let Some(b) = breaker {
                match status {
                    ExecutionStatus::Succeeded => b.on_success(),
                    ExecutionStatus::Failed => b.on_failure(end),
                    _ => b.on_abandoned(),
                }
            }
        }
        let opts = Self::logs_for(&self.config.logging, &a.tool);
        let line = opts.and_then(|opts| match (status, &a.record.error) {
            (ExecutionStatus::Succeeded, _) => Some(self.line_buffers.completed(
                &a.record.tool_name,
                &a.record.id,
                a.record.timing.duration_ms.unwrap_or(0.0),
                None,
                opts,
            )),
            (_, Some(e)) if !a.error_logged => {
                Some(self.line_buffers.error(&a.record.tool_name, &a.record.id, &e.message, e.stack.as_deref(), opts))
            }
            _ => None,
        });
        let record = Arc::new(a.record);
        // One its session's destroy cancelled is not counted: the statistics would outlive
        // the session (a host may forget the session before the cancelled calls end).
        let owner = match a.tool.session_id.as_deref() {
            Some(s) if status == ExecutionStatus::Cancelled && !self.registry.has_session(s) => None,
            s => Some(s),
        };
        self.account(&record, owner);
        let mut t = Transition::new(key, Step::Finished(record.clone()));
        t.logs = std::mem::take(&mut self.pending_logs);
        t.logs.extend(line);
        if self.audit_wanted {
            t.audit = Some(self.audit_record(&record, a.input_hash));
        }
        let kind = match status {
            ExecutionStatus::Succeeded => EventType::Succeeded,
            ExecutionStatus::Cancelled => EventType::Cancelled,
            _ => EventType::Failed,
        };
        if self.wanted.wants(kind) {
            t.events.push(match kind {
                EventType::Succeeded => ExecutionEvent::Succeeded { execution: record.clone() },
                EventType::Cancelled => {
                    ExecutionEvent::Cancelled { execution_id: record.id.clone(), tool_name: record.tool_name.clone() }
                }
                _ => ExecutionEvent::Failed { execution: record.clone() },
            });
        }
        if a.holds_slot {
            self.running -= 1;
            self.admit(&mut t);
            t.logs.append(&mut self.pending_logs);
        }
        t
    }

    /// Counts a finished record in its name's statistics (`owner`: the session whose own
    /// tool it ran, `Some(None)` for a global tool; `None`: not counted) and keeps it in
    /// history.
    fn account(&mut self, record: &Arc<ExecutionRecord>, owner: Option<Option<&str>>) {
        // A name no tool has (a model's made-up one) gets no statistics: they would be kept
        // for every distinct name for the manager's life. Its record is history, bounded.
        let counted = owner.filter(|_| record.error.as_ref().is_none_or(|e| e.code != crate::error::RegistryErrorCode::ToolNotFound.as_str()));
        if let Some(owner) = counted {
            let kept = match self.stats.get_mut(&record.tool_name) {
                Some(k) => {
                    if matches!(&k.owner, StatsOwner::Session(s) if Some(s.as_str()) != owner) {
                        k.owner = StatsOwner::Shared;
                    }
                    k
                }
                None => self.stats.entry(record.tool_name.clone()).or_insert_with(|| KeptStats {
                    stats: ToolStats::default(),
                    owner: owner.map_or(StatsOwner::Shared, |s| StatsOwner::Session(s.to_string())),
                }),
            };
            let stats = &mut kept.stats;
            stats.execution_count += 1;
            stats.total_duration_ms += record.timing.duration_ms.unwrap_or(0.0);
            if record.status == ExecutionStatus::Succeeded {
                stats.success_count += 1;
            } else {
                stats.failure_count += 1;
                stats.last_error = record.error.clone();
            }
        }
        if self.config.history_limit == 0 {
            self.evicted.push(Evicted::Newest);
            return;
        }
        if self.history.len() >= self.config.history_limit && self.history.pop_front().is_some() {
            self.evicted.push(Evicted::Oldest);
        }
        self.history.push_back(record.clone());
    }

    /// A record by execution id: in flight or among the kept history.
    pub fn execution(&self, execution_id: &str) -> Option<Arc<ExecutionRecord>> {
        self.active
            .values()
            .find(|a| a.record.id == execution_id)
            .map(|a| Arc::new(a.record.clone()))
            .or_else(|| self.history.iter().rev().find(|r| r.id == execution_id).cloned())
    }

    /// Every record (in flight or kept) of one model tool call, oldest first.
    pub fn executions_for_tool_call(&self, tool_call_id: &str) -> Vec<Arc<ExecutionRecord>> {
        let mut out: Vec<Arc<ExecutionRecord>> =
            self.history.iter().filter(|r| r.tool_call_id.as_deref() == Some(tool_call_id)).cloned().collect();
        let mut live: Vec<&Active> = self.active.values().filter(|a| a.record.tool_call_id.as_deref() == Some(tool_call_id)).collect();
        live.sort_by(|a, b| a.record.timing.queued_at.total_cmp(&b.record.timing.queued_at));
        out.extend(live.into_iter().map(|a| Arc::new(a.record.clone())));
        out
    }

    /// Records of the executions in flight, the last started first, then of the finished
    /// ones kept in history, the last finished first: at most `limit` of them.
    pub fn executions(&self, limit: usize) -> Vec<Arc<ExecutionRecord>> {
        let mut live: Vec<(&u64, &Active)> = self.active.iter().collect();
        // Keys are given out in the order executions start.
        live.sort_unstable_by(|a, b| b.0.cmp(a.0));
        live.into_iter().map(|(_, a)| Arc::new(a.record.clone())).chain(self.history.iter().rev().cloned()).take(limit).collect()
    }

    /// Finished records kept in history, oldest first.
    pub fn history(&self) -> impl Iterator<Item = &Arc<ExecutionRecord>> {
        self.history.iter()
    }

    pub fn stats(&self, tool_name: &str) -> ToolStats {
        self.stats.get(tool_name).map(|k| k.stats.clone()).unwrap_or_default()
    }
}
