// Generated from crates/toolhost/src/host/wire.rs by its test `js_module_is_current`:
// do not edit. `TOOLHOST_WRITE_WIRE=1 cargo test -p toolhost js_module` writes it again.
//
// Offsets count from an op's code (0); a string's offset is where its length is, and
// an optional string's is its flag. Fields after an op's first variable-length one
// have no fixed offset: a decoder reads them in order from there.

// Op codes.
export const NEW = 1
export const REFUSED = 2
export const FINAL = 3
export const ATTEMPT_ERROR = 4
export const METADATA = 5
export const EVENT = 6
export const LOG = 7
export const AUDIT = 8
export const INTERRUPT = 9
export const RUN = 10
export const QUEUED = 11
export const RETRY = 12
export const DONE = 13
export const EVICT = 14
export const RELEASED = 15
export const SNAPSHOT = 16
export const EVICT_OLDEST = 17
export const EVICT_NEWEST = 18
export const DECIDE = 19
export const AWAIT_APPROVAL = 20
export const APPROVAL_REFUSED = 21
export const ARGS = 22
export const RECOVERED = 23
export const RESULT = 24
export const ANSWER = 25
export const APPROVALS = 26
export const TASK = 27

// Event numbers (EVENT ops' type).
export const EV_STARTED = 0
export const EV_VALIDATING = 1
export const EV_EXECUTING = 2
export const EV_RETRYING = 3
export const EV_SUCCEEDED = 4
export const EV_FAILED = 5
export const EV_CANCELLED = 6
export const EV_APPROVAL_REQUESTED = 7
export const EV_APPROVED = 8
export const EV_DENIED = 9
export const EV_PROGRESS = 10
export const EV_PRELIMINARY_RESULT = 11
export const EV_RECOVERED = 12

// A record's numbers, from its offset.
export const RECORD_STATUS = 0
export const RECORD_QUEUED_AT = 1
export const RECORD_STARTED_AT = 2
export const RECORD_COMPLETED_AT = 3
export const RECORD_DURATION = 4
export const RECORD_ATTEMPT_NUMBER = 5
export const RECORD_MAX_ATTEMPTS = 6

// Field offsets, by op.
export const NEW_TICKET = 1
export const NEW_KEY = 2
export const NEW_EXECUTION_ID = 3
export const NEW_LENGTH = 4
export const REFUSED_TICKET = 1
export const REFUSED_ERROR = 2
export const REFUSED_LENGTH = 3
export const FINAL_KEY = 1
export const FINAL_RECORD = 2
export const FINAL_ERROR = 9
export const ATTEMPT_ERROR_KEY = 1
export const ATTEMPT_ERROR_ERROR = 2
export const ATTEMPT_ERROR_LENGTH = 3
export const METADATA_KEY = 1
export const METADATA_DURATION_MS = 2
export const METADATA_TIMESTAMP = 3
export const METADATA_LENGTH = 4
export const EVENT_TYPE = 1
export const EVENT_KEY = 2
export const LOG_KEY = 1
export const LOG_LEVEL = 2
export const LOG_ATTEMPT = 3
export const LOG_DURATION_MS = 4
export const LOG_MASK = 5
export const LOG_ARGS_GIVEN = 6
export const LOG_MESSAGE = 7
export const LOG_MASKED = 8
export const AUDIT_FAILED = 1
export const AUDIT_RECORD = 2
export const AUDIT_FAILURE = 3
export const INTERRUPT_KEY = 1
export const INTERRUPT_ATTEMPT = 2
export const INTERRUPT_TIMED_OUT = 3
export const INTERRUPT_REASON = 4
export const INTERRUPT_LENGTH = 5
export const RUN_KEY = 1
export const RUN_ATTEMPT = 2
export const RUN_MAX_ATTEMPTS = 3
export const RUN_TOOL = 4
export const RUN_DEFERRED = 5
export const RUN_CHECKS_OUTPUT = 6
export const RUN_LENGTH = 7
export const QUEUED_KEY = 1
export const QUEUED_LENGTH = 2
export const RETRY_KEY = 1
export const RETRY_DELAY_MS = 2
export const RETRY_LENGTH = 3
export const DONE_KEY = 1
export const DONE_LENGTH = 2
export const EVICT_EXECUTION_ID = 1
export const EVICT_LENGTH = 2
export const RELEASED_TOOL = 1
export const RELEASED_LENGTH = 2
export const SNAPSHOT_KEY = 1
export const SNAPSHOT_RECORD = 2
export const SNAPSHOT_EXTRAS = 9
export const EVICT_OLDEST_COUNT = 1
export const EVICT_OLDEST_LENGTH = 2
export const EVICT_NEWEST_LENGTH = 1
export const DECIDE_KEY = 1
export const DECIDE_TOOL = 2
export const DECIDE_LENGTH = 3
export const AWAIT_APPROVAL_KEY = 1
export const AWAIT_APPROVAL_APPROVAL_ID = 2
export const AWAIT_APPROVAL_LENGTH = 3
export const APPROVAL_REFUSED_ERROR = 1
export const APPROVAL_REFUSED_LENGTH = 2
export const ARGS_KEY = 1
export const ARGS_ARGUMENTS = 2
export const ARGS_LENGTH = 3
export const RECOVERED_KEY = 1
export const RECOVERED_EXECUTION_ID = 2
export const RECOVERED_TOOL_NAME = 3
export const RECOVERED_ARGUMENTS = 4
export const RECOVERED_SESSION_ID = 5
export const RESULT_KEY = 1
export const RESULT_RESULT = 2
export const RESULT_LENGTH = 3
export const ANSWER_TICKET = 1
export const ANSWER_OK = 2
export const ANSWER_ERROR = 3
export const APPROVALS_TICKET = 1
export const APPROVALS_OK = 2
export const APPROVALS_ANSWER = 3
export const APPROVALS_LENGTH = 4
export const TASK_TICKET = 1
export const TASK_OK = 2
export const TASK_ANSWER = 3
export const TASK_LENGTH = 4

// Field offsets of each event, from the EVENT op's code.
export const EV_STARTED_RECORD = 3
export const EV_STARTED_LENGTH = 10
export const EV_VALIDATING_LENGTH = 3
export const EV_EXECUTING_ATTEMPT = 3
export const EV_EXECUTING_LENGTH = 4
export const EV_RETRYING_ATTEMPT = 3
export const EV_RETRYING_MAX_ATTEMPTS = 4
export const EV_RETRYING_DELAY_MS = 5
export const EV_RETRYING_LENGTH = 6
export const EV_SUCCEEDED_LENGTH = 3
export const EV_FAILED_LENGTH = 3
export const EV_CANCELLED_LENGTH = 3
export const EV_APPROVAL_REQUESTED_RECORD = 3
export const EV_APPROVAL_REQUESTED_EXTRAS = 10
export const EV_APPROVED_EDITED = 3
export const EV_APPROVED_APPROVAL_ID = 4
export const EV_APPROVED_BY = 5
export const EV_DENIED_APPROVAL_ID = 3
export const EV_DENIED_REASON = 4
export const EV_DENIED_BY = 5
export const EV_PROGRESS_PROGRESS = 3
export const EV_PROGRESS_TOTAL = 4
export const EV_PROGRESS_MESSAGE = 5
export const EV_PRELIMINARY_RESULT_LENGTH = 3
export const EV_RECOVERED_IDEMPOTENCY_KEY = 3
export const EV_RECOVERED_ACTION = 4
export const EV_RECOVERED_LENGTH = 5

// Record statuses, by number.
export const STATUS = ['pending', 'validating', 'executing', 'succeeded', 'failed', 'cancelled', 'awaiting-approval']

// Lifecycle event types, by the engine's event number (also the bit of the wanted mask).
export const EVENT_TYPES = ['tool-execution-started', 'tool-execution-validating', 'tool-execution-executing', 'tool-execution-retrying', 'tool-execution-succeeded', 'tool-execution-failed', 'tool-execution-cancelled', 'tool-execution-approval-requested', 'tool-execution-approved', 'tool-execution-denied', 'tool-execution-progress', 'tool-execution-preliminary-result', 'tool-execution-recovered']

// Log levels, by number.
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error']

// The layouts as data (js/wire-check.mjs reads a wire by them): [code, name, fields].
export const OP_LAYOUTS = [
  [1, 'NEW', [['num', 'ticket'], ['num', 'key'], ['str', 'execution_id']]],
  [2, 'REFUSED', [['num', 'ticket'], ['str', 'error']]],
  [3, 'FINAL', [['num', 'key'], ['record'], ['opt', 'error'], ['opt', 'extras']]],
  [4, 'ATTEMPT_ERROR', [['num', 'key'], ['str', 'error']]],
  [5, 'METADATA', [['num', 'key'], ['num', 'duration_ms'], ['str', 'timestamp']]],
  [6, 'EVENT', [['num', 'type'], ['num', 'key'], ['event']]],
  [7, 'LOG', [['num', 'key'], ['num', 'level'], ['num', 'attempt'], ['num', 'duration_ms'], ['num', 'mask'], ['num', 'args_given'], ['str', 'message'], ['masked', 'mask', ['execution_id', 'tool_name', 'args', 'error', 'stack', 'result']]]],
  [8, 'AUDIT', [['num', 'failed'], ['str', 'record'], ['if', 'failure', 'failed', 1]]],
  [9, 'INTERRUPT', [['num', 'key'], ['num', 'attempt'], ['num', 'timed_out'], ['str', 'reason']]],
  [10, 'RUN', [['num', 'key'], ['num', 'attempt'], ['num', 'max_attempts'], ['num', 'tool'], ['num', 'deferred'], ['num', 'checks_output']]],
  [11, 'QUEUED', [['num', 'key']]],
  [12, 'RETRY', [['num', 'key'], ['num', 'delay_ms']]],
  [13, 'DONE', [['num', 'key']]],
  [14, 'EVICT', [['str', 'execution_id']]],
  [15, 'RELEASED', [['num', 'tool']]],
  [16, 'SNAPSHOT', [['num', 'key'], ['record'], ['opt', 'extras']]],
  [17, 'EVICT_OLDEST', [['num', 'count']]],
  [18, 'EVICT_NEWEST', []],
  [19, 'DECIDE', [['num', 'key'], ['num', 'tool']]],
  [20, 'AWAIT_APPROVAL', [['num', 'key'], ['str', 'approval_id']]],
  [21, 'APPROVAL_REFUSED', [['str', 'error']]],
  [22, 'ARGS', [['num', 'key'], ['str', 'arguments']]],
  [23, 'RECOVERED', [['num', 'key'], ['str', 'execution_id'], ['str', 'tool_name'], ['str', 'arguments'], ['opt', 'session_id'], ['opt', 'tool_call_id'], ['str', 'idempotency_key']]],
  [24, 'RESULT', [['num', 'key'], ['str', 'result']]],
  [25, 'ANSWER', [['num', 'ticket'], ['num', 'ok'], ['if', 'error', 'ok', 0]]],
  [26, 'APPROVALS', [['num', 'ticket'], ['num', 'ok'], ['str', 'answer']]],
  [27, 'TASK', [['num', 'ticket'], ['num', 'ok'], ['str', 'answer']]],
]
export const EVENT_LAYOUTS = [
  [0, 'STARTED', [['record']]],
  [1, 'VALIDATING', []],
  [2, 'EXECUTING', [['num', 'attempt']]],
  [3, 'RETRYING', [['num', 'attempt'], ['num', 'max_attempts'], ['num', 'delay_ms']]],
  [4, 'SUCCEEDED', []],
  [5, 'FAILED', []],
  [6, 'CANCELLED', []],
  [7, 'APPROVAL_REQUESTED', [['record'], ['opt', 'extras'], ['str', 'approval_id']]],
  [8, 'APPROVED', [['num', 'edited'], ['str', 'approval_id'], ['opt', 'by']]],
  [9, 'DENIED', [['str', 'approval_id'], ['str', 'reason'], ['opt', 'by']]],
  [10, 'PROGRESS', [['num', 'progress'], ['num', 'total'], ['opt', 'message']]],
  [11, 'PRELIMINARY_RESULT', []],
  [12, 'RECOVERED', [['str', 'idempotency_key'], ['str', 'action']]],
]
export const RECORD_LENGTH = 7
