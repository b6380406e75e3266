// Op codes of the wire between the engine and this runtime; they match
// crates/toolhost/src/host/wire.rs, which documents each op's fields.
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

// Record statuses, by number.
export const STATUS = ['pending', 'validating', 'executing', 'succeeded', 'failed', 'cancelled', 'awaiting-approval']

// Lifecycle event types, by the engine's event number (also the bit of the wanted mask).
export const EVENT_TYPES = [
  'tool-execution-started', 'tool-execution-validating', 'tool-execution-executing', 'tool-execution-retrying',
  'tool-execution-succeeded', 'tool-execution-failed', 'tool-execution-cancelled',
  'tool-execution-approval-requested', 'tool-execution-approved', 'tool-execution-denied',
  'tool-execution-progress', 'tool-execution-preliminary-result', 'tool-execution-recovered',
]

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error']
