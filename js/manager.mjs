// ToolExecutionManager: runs JS handlers as the engine directs.
//
// The engine (crates/toolhost/src/host/engine.rs, behind the backend) decides
// everything: resolution, validation, admission, retries and delays, timeouts, circuit
// breakers, records, events, log lines and audit records. This side keeps what only
// JS can hold (each execution's promise, arguments, handler context and signal), calls
// handlers, watches their promises, and delivers what the engine asks for.
//
// Each engine call leaves ops in `scratch` and returns their strings. `#apply` reads
// them in two passes: the first takes in every op's data, running no user code (a
// listener or handler may call the engine again, which overwrites `scratch`); the
// second delivers, in order: events, log lines, audit records, interruptions, attempts.
import { backend } from './backend.mjs'
import { argumentsText, resultProblem } from './arguments.mjs'
import { ToolCallContext, runChain, then, plainCopy } from './context.mjs'
import {
  abortError, argumentTypeError, checkOptions, closestOf, describe, engineError, reportCallbackError, reportRejection, thrownFacts, thrownMessage, timeoutError, toolhostError, withoutCause,
} from './errors.mjs'
import { ToolEventTarget } from './events.mjs'
import * as OP from './ops.mjs'
import { checkOp } from './wire-check.mjs'
import { stateOf } from './registry.mjs'
import { executeToolCalls } from './tool-calls.mjs'

/** Managers with executions in flight, by engine id: they are kept alive until their
 * executions end, and found again when one of their timers fires. */
const busy = []

/** Called by the backend when a timer fired (ticket 0) or large arguments are ready. */
export function wake(engineId, ticket, text) {
  const onWake = busy[engineId]
  if (onWake !== undefined) onWake(ticket, text)
}

const NO_OPTIONS = ''
/** TOOLHOST_CHECK_WIRE=1: check each op the decoder reads against its declared layout. */
const CHECK_WIRE = globalThis.process?.env?.TOOLHOST_CHECK_WIRE === '1'
const noop = () => {}

/** The caller's async context, for the backend that has one (Node's AsyncResource):
 * `runInAsyncScope(fn, thisArg, ...args)`. */
function captureScope() {
  return backend.captureScope === undefined ? undefined : backend.captureScope()
}
const settled = Promise.resolve()

// Option values JSON cannot write as they are: sent as objects the engine reads back
// (crates/toolhost/src/host/options.rs), so `NaN` is refused rather than read as null, and
// a string option refuses it as it refuses any number (not as the string "NaN").
function optionNumbers(key, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) return { nonFinite: String(value) }
  // A boxed primitive (`new String(id)`) is not the primitive it wraps, and JSON would
  // drop a symbol, a function or a BigInt: sent as an object, the engine refuses each
  // naming the option.
  if (value instanceof String || value instanceof Number || value instanceof Boolean) return { boxed: typeof value.valueOf() }
  if (typeof value === 'symbol' || typeof value === 'function' || typeof value === 'bigint') return { notJson: typeof value }
  // The signal, the context and the caller's identity stay on this side: they are the
  // caller's objects.
  if ((key === 'signal' || key === 'context' || key === 'authInfo') && this !== null && typeof this === 'object' && value === this[key]) return undefined
  return value
}

function optionsText(options, what) {
  try {
    return JSON.stringify(options, optionNumbers)
  } catch (e) {
    throw toolhostError('INVALID_CONFIG', `${what} are not JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** Whether `s` can be used as an AbortSignal: read with care, since a look-alike's getters
 * may throw (a throwing one is not a signal). */
function isAbortSignal(s) {
  if (s === null || typeof s !== 'object') return false
  try {
    return typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function' && typeof s.removeEventListener === 'function'
  } catch {
    return false
  }
}

/** `signal.addEventListener` / `removeEventListener` of the caller's signal; what a
 * look-alike throws is reported, never let through the engine's bookkeeping. */
function listen(signal, add, onAbort) {
  try {
    if (add) signal.addEventListener('abort', onAbort, { once: true })
    else signal.removeEventListener('abort', onAbort)
  } catch (err) {
    reportCallbackError(err, `the signal's ${add ? 'addEventListener' : 'removeEventListener'}`, 'ToolhostSignalWarning')
  }
}

/** `{ by?, args?, reason? }` of approve()/deny(), checked. */
function approvalOptions(options, known, method) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw toolhostError('INVALID_CONFIG', `${method}: options must be an object`)
  checkOptions(options, known, `${method} options`, `${method}: `)
  for (const key of ['by', 'reason']) {
    if (options[key] !== undefined && typeof options[key] !== 'string') throw toolhostError('INVALID_CONFIG', `${method}: ${key} must be a string`)
  }
  return options
}

/** One execution as this side knows it. */
class Execution {
  constructor(name, text) {
    this.key = 0
    this.id = ''
    this.toolName = name
    this.toolCallId = undefined
    this.sessionId = undefined
    /** Argument text ('' for none). */
    this.text = text
    this.args = undefined
    this.parsed = false
    /** The tape of large argument text, decoded instead of `JSON.parse` (Node). */
    this.tape = undefined
    this.resolve = null
    this.reject = null
    this.signal = undefined
    /** Whether it is counted in its manager's watch of its signal (`#watchSignal`). */
    this.watching = false
    /** Set when cancelled while its large arguments were still being parsed. */
    this.cancelled = false
    /** The running attempt's number, 0 when none runs. */
    this.current = 0
    /** The attempt limit and the tool (its registry id) of the attempt the engine last
     * admitted, and that attempt's Starting log line (message, fields), kept until it runs. */
    this.maxAttempts = 0
    this.toolId = 0
    this.startingMessage = ''
    this.starting = undefined
    /** Whether the engine checks this execution's results against an output schema. */
    this.checksOutput = false
    this.ctx = null
    this.thrown = undefined
    /** The errors of failed attempts: made at the first failure, so that it is as young
     * as the errors it holds (see `#finished`). */
    this.previousErrors = null
    this.result = undefined
    /** Whether `result` is this side's copy of a plain-object result, to stamp with
     * `_execution_metadata` (the `metadata` option). */
    this.copied = false
    this.final = null
    /** The last preliminary result an async-generator handler yielded. */
    this.preliminary = undefined
    this.approvalId = undefined
    /** The caller's `context` option (`ctx.context` of each attempt). */
    this.context = undefined
    /** The caller's `idempotencyKey` option. */
    this.idempotencyKey = undefined
    /** The caller's `authInfo` option (`ctx.authInfo`). */
    this.authInfo = undefined
    /** `{ verdict }` of needsApproval given with the call (`decidedApprovals`). */
    this.decided = undefined
    /** Told the execution's id as soon as the engine gives it (`executionIdListeners`). */
    this.onId = undefined
    /** The async context `execute` was called in (Node: an AsyncResource), in which every
     * attempt, queued, retried or approved, runs; undefined where there is none. */
    this.scope = undefined
  }

  /** The arguments as the record and the events show them: JSON parsed from the
   * validated text. */
  value() {
    if (!this.parsed) {
      this.parsed = true
      if (this.tape !== undefined && this.text.trim() !== '') {
        this.args = backend.decodeTape(this.text, this.tape)
        this.tape = undefined
      } else this.args = parsedCopy(this)
    }
    return this.args
  }

  /** The arguments for an attempt's handler: a parse of its own, so that what it changes
   * in place is neither what the record keeps nor what the next attempt gets. Large
   * arguments are parsed once (decoded from a tape in Node), and shared with the record:
   * a second tree of a 1 MB call would cost the JS thread as much as the first. */
  own() {
    return this.text.length >= KEEP_AS_TEXT ? this.value() : parsedCopy(this)
  }
}

/** JSON.parse of an execution's validated argument text, a tree no one else holds. */
function parsedCopy(exec) {
  if (exec.text.trim() === '') return {}
  try {
    return JSON.parse(exec.text)
  } catch {
    return null
  }
}

/** What an engine call left for the second pass: entries of three (a `W_*`, then two
 * values) in `items[0..length]`. Each manager keeps these for reuse: a fresh array per
 * engine call, and its store, was most of the 1.0 KB a B5 call allocated in `push`
 * (0.3 KB with this and `#admit`). */
class Work {
  constructor() {
    this.items = []
    this.length = 0
  }

  push(kind, a, b) {
    const items = this.items
    const n = this.length
    items[n] = kind
    items[n + 1] = a
    items[n + 2] = b
    this.length = n + 3
  }

  /** Lets go of what the entries held, keeping the array. A loop: `fill` is a call into
   * the runtime, slower for the few entries there are. */
  clear() {
    const items = this.items
    for (let k = 0; k < this.length; k++) items[k] = undefined
    this.length = 0
  }
}

/** Takes the Starting log line of an attempt out of `work` into `exec.starting` (its
 * fields) and `exec.startingMessage`: it is logged when the attempt runs, so an attempt
 * cancelled before it starts is never announced. */
function takeStartingLine(work, exec, attempt) {
  const items = work.items
  for (let w = work.length - 3; w >= 0; w -= 3) {
    if (items[w] !== W_LOG_INFO) continue
    const fields = items[w + 2]
    // The same string as exec.id when the line named its execution by key.
    if (fields.executionId === exec.id && fields.attemptNumber === attempt && fields.durationMs === undefined && fields.error === undefined) {
      items[w] = W_NONE
      exec.startingMessage = items[w + 1]
      exec.starting = fields
      return
    }
  }
  exec.starting = undefined
}

/** JSON text of a result, for its output schema: `undefined` reads as `null`, and a
 * value JSON cannot carry gives text that is not JSON, which the engine reports. */
function resultText(value) {
  if (value === undefined) return 'null'
  try {
    return JSON.stringify(value) ?? 'null'
  } catch (e) {
    return `(not JSON: ${e instanceof Error ? e.message : String(e)})`
  }
}

const nan = (n) => (Number.isNaN(n) ? undefined : n)

/** A whole number of the ops (a key, an attempt, an id, a count) as a small integer where
 * it is one. V8's optimized code stores an element it read from a Float64Array as a boxed
 * number even when it is whole, where unoptimized code stores a small integer; a field
 * that gets both changes representation, and V8 drops the code compiled against it. */
const whole = (n) => (n <= 0x7fffffff ? n | 0 : n)

/** A `needsApproval` answer that is not a boolean, for the refusal's message. */
function verdictText(value) {
  switch (typeof value) {
    case 'number': return `the number ${value}`
    case 'string': return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`
    case 'undefined': return 'undefined'
    case 'object':
      if (value === null) return 'null'
      if (typeof value.then === 'function') return 'a thenable that is not a native Promise'
      return Array.isArray(value) ? 'an array' : 'an object'
    default: return `a ${typeof value}`
  }
}

/** Argument text at least this long is kept as text by finished records. */
const KEEP_AS_TEXT = 65_536

/** A copy of `record` whose `args` is JSON.parse of `text`, parsed when first read. */
function withArgsAsText(record, text) {
  const copy = { ...record }
  let args
  Object.defineProperty(copy, 'args', {
    get() {
      if (args === undefined) {
        try {
          args = text.trim() === '' ? {} : JSON.parse(text)
        } catch {
          args = null
        }
      }
      return args
    },
    set(value) {
      args = value
    },
    enumerable: true,
    configurable: true,
  })
  return copy
}

/** A native promise that follows `value` when it is a thenable (an object or function
 * with a `then` method, as a promise library's promises are), and `undefined` when it is
 * not one. As `await` does, its `then` is read once and called once, the first of its
 * callbacks to be called settles the promise, and one that throws rejects it; it runs in
 * `scope`, the execution's async context. A native promise is followed without this (its
 * own `then` is not looked up: see `#outcome`). Throws what reading `then` throws. */
function thenableOf(value, scope) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined
  const thenMethod = value.then
  if (typeof thenMethod !== 'function') return undefined
  return new Promise((resolve, reject) => {
    if (scope === undefined) thenMethod.call(value, resolve, reject)
    else scope.runInAsyncScope(thenMethod, value, resolve, reject)
  })
}

/** The arguments `use()` interceptors get for the attempt `ctx` is for: a copy of their
 * own, parsed from the call's text, so that what they change in place is the attempt's
 * alone, not the record's nor the next attempt's. */
function ownArgs(ctx) {
  const [exec] = ToolCallContext.attemptOf(ctx)
  return parsedCopy(exec)
}

/** Reads a record's extras (`{ approval?, progress? }`) at `ops[i]`: the flag, and its
 * text from `text` at `at`. Returns [extras, next op index, next text index]. */
function extrasAt(ops, i, text, at) {
  if (ops[i] !== 1) return [undefined, i + 1, at]
  const len = ops[i + 1]
  return [JSON.parse(text.slice(at, at + len)), i + 2, at + len]
}

function record(exec, ops, i, error, extras) {
  const status = OP.STATUS[ops[i + OP.RECORD_STATUS]]
  const r = {
    id: exec.id,
    toolCallId: exec.toolCallId,
    sessionId: exec.sessionId,
    toolName: exec.toolName,
    args: exec.value(),
    status,
    // A failed attempt's value (an output that failed its schema) is not a result.
    result: status === 'succeeded' ? exec.result : undefined,
    error,
    timing: {
      queuedAt: ops[i + OP.RECORD_QUEUED_AT],
      startedAt: nan(ops[i + OP.RECORD_STARTED_AT]),
      completedAt: nan(ops[i + OP.RECORD_COMPLETED_AT]),
      duration: nan(ops[i + OP.RECORD_DURATION]),
    },
    // A copy at its exact size (the execution's list grew by push, and its store, 17
    // slots, would be kept with the record in history), of each error without the value
    // the handler threw (`withoutCause`).
    retry: { attemptNumber: whole(ops[i + OP.RECORD_ATTEMPT_NUMBER]), maxAttempts: whole(ops[i + OP.RECORD_MAX_ATTEMPTS]), previousErrors: exec.previousErrors?.map(withoutCause) ?? [] },
    approval: extras?.approval,
    progress: extras?.progress,
  }
  if (extras?.idempotencyKey !== undefined) {
    // With a journal: the key, and whether the outcome was replayed or recovered.
    r.idempotencyKey = extras.idempotencyKey
    r.replayed = extras.replayed === true
    r.recovered = extras.recovered === true
  }
  return r
}

/** An optional string at `ops[i]` (a flag, then its length). Returns [string, next op, next text index]. */
function optionalAt(ops, i, text, at) {
  if (ops[i] !== 1) return [undefined, i + 1, at]
  const len = ops[i + 1]
  return [text.slice(at, at + len), i + 2, at + len]
}

/** Each manager's `maxOutputChars`, for the replies `executeToolCalls` writes. */
export const outputBudgets = new WeakMap()

/** Each manager's `needsApproval` option (true, false or a function), for toAiSdkTools. */
export const approvalPolicies = new WeakMap()

/** Call options (the object given to execute) -> `{ verdict }`, what the call's
 * needsApproval function already answered toAiSdkTools (false, or a value that is not an
 * answer), which the AI SDK acted on by running the call at once. The manager decides
 * with that verdict instead of asking the function again: a second answer could differ
 * (true would leave the call waiting for a person the SDK never asked). */
export const decidedApprovals = new WeakMap()

/** Call options (the object given to execute) -> a function told the execution's id
 * when the engine gives it, before any of its events: `toolhost/ag-ui` dispatches the
 * events of its own executions on its host, which a tool call id (the same in two
 * runs) cannot tell apart. */
export const executionIdListeners = new WeakMap()

/** Each manager's `toModelError(error, info)` function, for the replies to a model. */
export const modelErrorRewriters = new WeakMap()

/** `(manager, op) => Promise<JSON> | undefined`: an MCP task store's operation on the
 * manager's journal (js/mcp-tasks.mjs); undefined for a manager without a journal. */
export let journalTask

/** `(manager) => boolean`: whether the manager has an open journal. */
export let isJournaled

/** `(manager, name, reason, options) => Promise`: runs a call of a model response whose
 * arguments the engine refused while reading the response (`reason`: they are over the
 * argument limit), answered as `execute` answers arguments it cannot read (events,
 * audit, an `INVALID_ARGUMENTS` result), with no text to hand over. For executeToolCalls. */
export let executeRefused


// Work of the second pass.
const W_EVENT = 0, W_RUN_SOON = 1, W_AUDIT = 2, W_INTERRUPT = 3, W_RUN = 4, W_DONE = 5, W_EVICT = 6, W_NONE = 7, W_EVICT_OLDEST = 8, W_EVICT_NEWEST = 9, W_DECIDE = 10, W_LISTEN = 11
/** A log line is `W_LOG + level, message, fields`. */
const W_LOG = 12, W_LOG_INFO = W_LOG + 1

const PROGRESS_KEYS = ['progress', 'total', 'message']
const unknownProgressKey = (key) => {
  const near = closestOf(key, PROGRESS_KEYS)
  return `unknown key '${key}'${near !== undefined ? `; did you mean '${near}'?` : ''}`
}

// What a manager dispatches: the engine's events and the audit's two.
const MANAGER_EVENTS = [...OP.EVENT_TYPES, 'tool-invocation-recorded', 'tool-audit-error']

/** Runs tools with validation, retries, backoff, timeouts, cancellation and events. */
export class ToolExecutionManager extends ToolEventTarget {
  #state
  #core
  #scratch
  #engineId
  #logger
  #logsStacks
  /** The `metadata` option: plain-object results are copied, to be stamped. */
  #stamps = false
  /** The manager's `needsApproval` function, when it is one. */
  #approvalPolicy
  /** An approve() or deny() refusal the last engine call wrote. */
  #refused = undefined
  /** The manager has a journal: approvals are decided through it (Promises). */
  #journaled = false
  /** close() calls waiting for the executions in flight to end. */
  #onIdle = []
  /** close() let the journal go. */
  #closed = false
  /** ticket -> { resolve, reject } of a journal answer awaited (approve, deny, pendingApprovals) */
  #answers = new Map()
  #nextAnswer = 0
  /** Whether this manager warned that a call waits for an approval nobody listens for. */
  #warnedUnheard = false
  #interceptors = []
  /** key -> Execution, in flight */
  #live = new Map()
  /** ticket -> Execution whose large arguments are being parsed */
  #pending = new Map()
  /** signal -> { count, onAbort }: the executions in flight watching it, and its listener. */
  #signals = new Map()
  #tickets = 0
  /** The execution `start` is being called for. */
  #starting = null
  /** Finished records kept, oldest first from `#historyHead` (the engine says which to drop). */
  #history = []
  #historyHead = 0
  /** tool name -> the error of its last failed execution */
  #lastErrors = new Map()
  /** session id -> names whose last error came from a call in that (live) session: the
   * ones to look at when it is destroyed, as the engine drops its own tools' statistics. */
  #sessionFailures = new Map()
  /** Attempts to run: an execution, then its attempt number, from 0 to `#admittedEnd`. */
  #admitted = []
  #admittedEnd = 0
  /** `Work` lists not in use. */
  #idleWork = []
  #runningAdmitted = false
  #runQueued = false
  #runner = () => {
    this.#runQueued = false
    this.#runAdmitted()
  }
  #dispatching = false
  /** Set while an approval is answered synchronously from user code that execute() (or
   * another engine call) is running: the approved attempt is then run from a microtask. */
  #deferRuns = false
  #laterEvents = []
  #onWake = (ticket, text) => (ticket === 0 ? this.#apply(text) : this.#argumentsReady(ticket))
  /** `ctx.reportProgress` of every attempt: one function, not one closure per attempt. */
  #reportProgress = (exec, attempt, report) => this.#progress(exec, attempt, report)

  /** Throws `INVALID_CONFIG` naming the option for nonsensical or unknown options. */
  constructor(registry, options) {
    super(MANAGER_EVENTS, 'ToolExecutionManager')
    this.#state = stateOf(registry, 'new ToolExecutionManager(registry)')
    let text = 'null'
    if (options !== undefined && options !== null) {
      // An array was spread into {} and taken for no options.
      if (typeof options !== 'object' || Array.isArray(options)) throw toolhostError('INVALID_CONFIG', `options must be an object, got ${Array.isArray(options) ? 'an array' : `a ${typeof options}`}`)
      if (options.logger !== undefined && options.logger !== null) {
        if (typeof options.logger !== 'function') throw toolhostError('INVALID_CONFIG', 'logger must be a function (level, message, fields) => void')
        this.#logger = options.logger
      }
      if (typeof options.auditLog === 'string' && !backend.auditFile) {
        throw toolhostError('INVALID_CONFIG', `auditLog (a file) is not available in ${backend.name === 'wasm' ? 'the browser' : 'this runtime'}: listen to 'tool-invocation-recorded' and store the records yourself`)
      }
      let needsApproval = options.needsApproval
      // 'ask' and `true` below are what this side sends the engine for a function: the
      // same values given by the user are not functions, and are refused as such.
      if (needsApproval === 'ask') throw toolhostError('INVALID_CONFIG', 'needsApproval must be true, false or a function (args, ctx) => boolean')
      if (needsApproval !== undefined) approvalPolicies.set(this, needsApproval)
      if (typeof needsApproval === 'function') {
        this.#approvalPolicy = needsApproval
        needsApproval = 'ask'
      }
      if (typeof options.maxOutputChars === 'number') outputBudgets.set(this, options.maxOutputChars)
      this.#journaled = options.journal !== undefined && options.journal !== null
      // The function stays here; the engine learns that there is one.
      let toModelError = options.toModelError
      if (typeof toModelError === 'function') {
        modelErrorRewriters.set(this, toModelError)
        toModelError = true
      } else if (toModelError === true) throw toolhostError('INVALID_CONFIG', 'toModelError must be a function (error, info) => string')
      text = optionsText({ ...options, logger: this.#logger === undefined ? undefined : true, needsApproval, toModelError }, 'options')
    }
    this.#core = new backend.EngineCore(this.#state.core)
    const refused = this.#core.init(text)
    if (refused !== '') {
      const { code, message } = JSON.parse(refused)
      throw toolhostError(code, message)
    }
    this.#scratch = this.#core.scratch
    this.#engineId = this.#core.id
    this.#logsStacks = options?.logging === true
    this.#stamps = options?.metadata === true
    this.#state.addManager(this)
    if (this.#journaled) this.#busy()
  }

  listenersChanged() {
    let mask = 0
    for (let i = 0; i < OP.EVENT_TYPES.length; i++) if (this.listenerCount(OP.EVENT_TYPES[i]) > 0) mask |= 1 << i
    this.#core.setWanted(mask, this.listenerCount('tool-invocation-recorded') > 0)
  }

  /**
   * Runs a tool. `args` is an object or JSON text. Resolves `{ success: true, result,
   * execution }` or `{ success: false, error, execution }`; never rejects for a
   * tool-level failure. Rejects (never throws) for a caller's mistake: a name that is
   * not a string, unknown or mistyped options.
   */
  execute(name, args, options) {
    // The declaration register() returned stands for its name (and types the result).
    if (name !== null && typeof name === 'object') {
      let declared
      try {
        declared = name.name
      } catch {}
      if (typeof declared === 'string') name = declared
    }
    if (typeof name !== 'string') return Promise.reject(argumentTypeError('execute', 'the tool name', name))
    let text = ''
    let unreadable = ''
    if (typeof args === 'string') text = args
    else if (args !== undefined) {
      const converted = argumentsText(args)
      if (converted.error === undefined) text = converted.text
      else unreadable = `invalid arguments for tool '${name}': ${converted.error}`
    }
    return this.#start(name, text, unreadable, options)
  }

  static {
    executeRefused = (manager, name, reason, options) => manager.#start(name, '', reason, options)
    journalTask = (manager, op) => {
      if (!manager.#journaled) return undefined
      return manager.#ask((ticket) => manager.#apply(manager.#core.journalTask(ticket, JSON.stringify(op))))
    }
    isJournaled = (manager) => manager.#journaled && !manager.#closed
  }

  /** `execute` of argument text, or of arguments refused as `unreadable` says ('' when not). */
  #start(name, text, unreadable, options) {
    let optionText = NO_OPTIONS
    let signal
    let aborted = false
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') return Promise.reject(toolhostError('INVALID_CONFIG', 'execute: options must be an object'))
      try {
        signal = options.signal
        if (signal !== undefined && signal !== null) {
          if (!isAbortSignal(signal)) throw toolhostError('INVALID_CONFIG', 'signal must be an AbortSignal (an object with aborted, addEventListener and removeEventListener)')
          aborted = signal.aborted
        } else signal = undefined
        optionText = optionsText(options, 'call options')
      } catch (e) {
        return Promise.reject(e)
      }
    }
    const exec = new Execution(name, text)
    exec.signal = signal
    if (options !== undefined && options !== null) {
      if (typeof options.toolCallId === 'string') exec.toolCallId = options.toolCallId
      if (typeof options.sessionId === 'string') exec.sessionId = options.sessionId
      if (typeof options.idempotencyKey === 'string') exec.idempotencyKey = options.idempotencyKey
      exec.context = options.context
      exec.authInfo = options.authInfo
      exec.decided = decidedApprovals.get(options)
      exec.onId = executionIdListeners.get(options)
    }
    exec.scope = captureScope()
    const promise = new Promise((resolve, reject) => {
      exec.resolve = resolve
      exec.reject = reject
    })
    if (backend.largeText !== undefined && text.length >= backend.largeText && unreadable === '') {
      const ticket = ++this.#tickets
      this.#pending.set(ticket, exec)
      this.#busy()
      this.#apply(this.#core.startLarge(ticket, name, text, optionText, aborted))
      return promise
    }
    this.#starting = exec
    this.#apply(this.#core.start(0, name, text, optionText, aborted, unreadable))
    return promise
  }

  #argumentsReady(ticket) {
    const exec = this.#pending.get(ticket)
    if (exec === undefined) return
    let aborted = exec.cancelled
    try {
      aborted ||= exec.signal !== undefined && exec.signal.aborted === true
    } catch {}
    const out = this.#core.startPrepared(ticket, aborted)
    exec.tape = this.#core.takeTape(ticket)
    this.#apply(out)
  }

  #busy() {
    // A journaled manager hears from its journal at any time (recovery starts executions
    // nobody called): it stays reachable until close().
    const reachable = (this.#journaled && !this.#closed) || this.#live.size + this.#pending.size + this.#answers.size > 0
    busy[this.#engineId] = reachable ? this.#onWake : undefined
  }

  /** Applies an engine call's output; returns how many executions it finished. */
  #apply(text) {
    // A listener or handler the second pass calls may call the engine again: that call
    // takes another `Work`.
    const work = this.#idleWork.pop() ?? new Work()
    try {
      const done = this.#decode(text, work)
      // Kept apart from the decoding: handlers run from `#deliver`, and an error a handler
      // creates captures its stack, which costs V8 time in proportion to the size of each
      // unoptimized function on it (B5: 17 µs an error with the decoder below it, 8 without).
      if (work.length > 0) this.#deliver(work.items, work.length)
      return done
    } finally {
      work.clear()
      this.#idleWork.push(work)
    }
  }

  /** Decodes an engine call's ops: state changes now, user-visible work into `work`. */
  #decode(text, work) {
    let ops = this.#scratch
    // A view over wasm memory is detached (length 0) once the memory grows.
    if (ops.length === 0) ops = this.#scratch = this.#core.scratch
    let n = ops[0]
    if (n === 0) return 0
    if (n < 0) {
      ops = this.#core.bigOps()
      n = ops[0]
    }
    const end = n + 1
    let done = 0
    let i = 1
    let at = 0
    while (i < end) {
      const from = i
      const fromAt = at
      switch (ops[i]) {
        case OP.NEW: {
          const ticket = ops[i + OP.NEW_TICKET]
          const exec = ticket === 0 ? this.#starting : this.#pending.get(ticket)
          if (ticket === 0) this.#starting = null
          else this.#pending.delete(ticket)
          exec.key = whole(ops[i + OP.NEW_KEY])
          exec.id = text.slice(at, (at += ops[i + OP.NEW_EXECUTION_ID]))
          if (exec.onId !== undefined) exec.onId(exec.id)
          // Only a refusal, which comes before this, rejects: the reject function can go.
          // A queued call then keeps 86 bytes less on the JS heap (740 -> 654).
          exec.reject = null
          i += OP.NEW_LENGTH
          this.#live.set(exec.key, exec)
          if (exec.signal !== undefined) {
            // A look-alike's addEventListener is user code (it may call the engine, which
            // overwrites the ops being read): it is called from the second pass.
            work.push(W_LISTEN, exec, undefined)
          }
          this.#busy()
          break
        }
        case OP.REFUSED: {
          const ticket = ops[i + OP.REFUSED_TICKET]
          const exec = ticket === 0 ? this.#starting : this.#pending.get(ticket)
          if (ticket === 0) this.#starting = null
          else this.#pending.delete(ticket)
          const { code, message } = JSON.parse(text.slice(at, (at += ops[i + OP.REFUSED_ERROR])))
          i += OP.REFUSED_LENGTH
          exec.reject(toolhostError(code, message))
          this.#busy()
          break
        }
        case OP.FINAL: {
          const exec = this.#live.get(ops[i + OP.FINAL_KEY])
          const start = i + OP.FINAL_RECORD
          // The error is an optional string (a flag, then its length): read in place, as
          // every call has one FINAL.
          i += OP.FINAL_ERROR
          let error
          if (ops[i] === 1) {
            error = engineError(text.slice(at, (at += ops[i + 1])), exec.thrown)
            i += 2
          } else i += 1
          let extras
          ;[extras, i, at] = extrasAt(ops, i, text, at)
          exec.final = record(exec, ops, start, error, extras)
          break
        }
        case OP.ATTEMPT_ERROR: {
          const exec = this.#live.get(ops[i + OP.ATTEMPT_ERROR_KEY])
          ;(exec.previousErrors ??= []).push(engineError(text.slice(at, (at += ops[i + OP.ATTEMPT_ERROR_ERROR])), exec.thrown))
          i += OP.ATTEMPT_ERROR_LENGTH
          break
        }
        case OP.METADATA: {
          // The copy `#settled` made: stamping it runs no user code.
          const exec = this.#live.get(ops[i + OP.METADATA_KEY])
          const timestamp = text.slice(at, (at += ops[i + OP.METADATA_TIMESTAMP]))
          if (exec.copied) exec.result._execution_metadata = { duration_ms: ops[i + OP.METADATA_DURATION_MS], tool_name: exec.toolName, timestamp }
          i += OP.METADATA_LENGTH
          break
        }
        case OP.EVENT: {
          const type = ops[i + OP.EVENT_TYPE]
          const exec = this.#live.get(ops[i + OP.EVENT_KEY])
          let detail
          switch (type) {
            case OP.EV_STARTED:
              detail = { execution: record(exec, ops, i + OP.EV_STARTED_RECORD, undefined) }
              i += OP.EV_STARTED_LENGTH
              break
            case OP.EV_VALIDATING:
              detail = { executionId: exec.id, toolName: exec.toolName, args: exec.value() }
              i += OP.EV_VALIDATING_LENGTH
              break
            case OP.EV_EXECUTING:
              detail = { executionId: exec.id, toolName: exec.toolName, attemptNumber: whole(ops[i + OP.EV_EXECUTING_ATTEMPT]) }
              i += OP.EV_EXECUTING_LENGTH
              break
            case OP.EV_RETRYING:
              detail = {
                executionId: exec.id, toolName: exec.toolName,
                attemptNumber: whole(ops[i + OP.EV_RETRYING_ATTEMPT]), maxAttempts: whole(ops[i + OP.EV_RETRYING_MAX_ATTEMPTS]),
                error: exec.previousErrors?.at(-1), delayMs: ops[i + OP.EV_RETRYING_DELAY_MS],
              }
              i += OP.EV_RETRYING_LENGTH
              break
            case OP.EV_SUCCEEDED:
              detail = { execution: exec.final, result: exec.final.result }
              i += OP.EV_SUCCEEDED_LENGTH
              break
            case OP.EV_FAILED:
              detail = { execution: exec.final, error: exec.final.error }
              i += OP.EV_FAILED_LENGTH
              break
            case OP.EV_CANCELLED:
              detail = { executionId: exec.id, toolName: exec.toolName }
              i += OP.EV_CANCELLED_LENGTH
              break
            case OP.EV_APPROVAL_REQUESTED: {
              const start = i + OP.EV_APPROVAL_REQUESTED_RECORD
              let extras
              ;[extras, i, at] = extrasAt(ops, i + OP.EV_APPROVAL_REQUESTED_EXTRAS, text, at)
              const execution = record(exec, ops, start, undefined, extras)
              const approvalId = text.slice(at, (at += ops[i++]))
              detail = { execution, approvalId }
              break
            }
            case OP.EV_APPROVED: {
              const edited = ops[i + OP.EV_APPROVED_EDITED] === 1
              const approvalId = text.slice(at, (at += ops[i + OP.EV_APPROVED_APPROVAL_ID]))
              let by
              ;[by, i, at] = optionalAt(ops, i + OP.EV_APPROVED_BY, text, at)
              detail = { executionId: exec.id, toolName: exec.toolName, approvalId, by, edited }
              break
            }
            case OP.EV_DENIED: {
              const approvalId = text.slice(at, (at += ops[i + OP.EV_DENIED_APPROVAL_ID]))
              const reason = text.slice(at, (at += ops[i + OP.EV_DENIED_REASON]))
              let by
              ;[by, i, at] = optionalAt(ops, i + OP.EV_DENIED_BY, text, at)
              detail = { executionId: exec.id, toolName: exec.toolName, approvalId, reason, by }
              break
            }
            case OP.EV_PROGRESS: {
              const progress = ops[i + OP.EV_PROGRESS_PROGRESS]
              const total = nan(ops[i + OP.EV_PROGRESS_TOTAL])
              let message
              ;[message, i, at] = optionalAt(ops, i + OP.EV_PROGRESS_MESSAGE, text, at)
              detail = { executionId: exec.id, toolName: exec.toolName, progress, total, message }
              break
            }
            case OP.EV_RECOVERED: {
              const idempotencyKey = text.slice(at, (at += ops[i + OP.EV_RECOVERED_IDEMPOTENCY_KEY]))
              const action = text.slice(at, (at += ops[i + OP.EV_RECOVERED_ACTION]))
              detail = { executionId: exec.id, toolName: exec.toolName, idempotencyKey, action }
              i += OP.EV_RECOVERED_LENGTH
              break
            }
            case OP.EV_PRELIMINARY_RESULT:
              detail = { executionId: exec.id, toolName: exec.toolName, result: exec.preliminary }
              i += OP.EV_PRELIMINARY_RESULT_LENGTH
              break
            default:
              throw new Error(`toolhost: unknown engine event ${type} at ${i}`)
          }
          work.push(W_EVENT, OP.EVENT_TYPES[type], detail)
          break
        }
        case OP.LOG: {
          const attempt = whole(ops[i + OP.LOG_ATTEMPT])
          const duration = ops[i + OP.LOG_DURATION_MS]
          const mask = ops[i + OP.LOG_MASK]
          const level = ops[i + OP.LOG_LEVEL]
          // The arguments are the call's own text, which the engine did not copy.
          const argsGiven = ops[i + OP.LOG_ARGS_GIVEN] === 1
          const message = text.slice(at, (at += ops[i + OP.LOG_MESSAGE]))
          // The line names its execution by key, unless the engine holds none for it here.
          const exec = (mask & 3) === 0 ? this.#live.get(ops[i + OP.LOG_KEY]) : undefined
          i += OP.LOG_MASKED
          // The Starting line of every attempt, with its arguments, is made whole, not grown
          // a field at a time as the others are.
          if (exec !== undefined && !Number.isNaN(attempt) && Number.isNaN(duration) && (mask === 4 || (mask === 0 && argsGiven))) {
            const args = mask === 4 ? text.slice(at, (at += ops[i++])) : exec.text
            work.push(W_LOG + level, message, { executionId: exec.id, toolName: exec.toolName, attemptNumber: attempt, args })
            break
          }
          const fields = exec !== undefined
            ? { executionId: exec.id, toolName: exec.toolName }
            : { executionId: text.slice(at, (at += ops[i++])), toolName: text.slice(at, (at += ops[i++])) }
          if (!Number.isNaN(attempt)) fields.attemptNumber = attempt
          // Then a string for each further bit of the mask: args, error, stack, result.
          if (mask & 4) fields.args = text.slice(at, (at += ops[i++]))
          else if (argsGiven && exec !== undefined) fields.args = exec.text
          if (!Number.isNaN(duration)) fields.durationMs = duration
          if (mask & 8) fields.error = text.slice(at, (at += ops[i++]))
          if (mask & 16) fields.stack = text.slice(at, (at += ops[i++]))
          if (mask & 32) fields.result = text.slice(at, (at += ops[i++]))
          work.push(W_LOG + level, message, fields)
          break
        }
        case OP.AUDIT: {
          const failed = ops[i + OP.AUDIT_FAILED] === 1
          const line = text.slice(at, (at += ops[i + OP.AUDIT_RECORD]))
          i += OP.AUDIT_FAILURE
          let failure = failed ? text.slice(at, (at += ops[i++])) : undefined
          // A backend with no file system in its engine (wasm in Node) writes the file here.
          if (this.#core.auditFile !== undefined) failure ??= this.#core.auditFile.append(line)
          work.push(W_AUDIT, JSON.parse(line), failure)
          break
        }
        case OP.INTERRUPT: {
          const exec = this.#live.get(ops[i + OP.INTERRUPT_KEY])
          const attempt = whole(ops[i + OP.INTERRUPT_ATTEMPT])
          const timedOut = ops[i + OP.INTERRUPT_TIMED_OUT] === 1
          const message = text.slice(at, (at += ops[i + OP.INTERRUPT_REASON]))
          i += OP.INTERRUPT_LENGTH
          if (exec !== undefined && exec.current === attempt) {
            exec.current = 0
            const ctx = exec.ctx
            exec.ctx = null
            if (ctx !== null) work.push(W_INTERRUPT, ctx, timedOut ? timeoutError(message) : abortError(message))
          }
          break
        }
        case OP.RUN: {
          const exec = this.#live.get(ops[i + OP.RUN_KEY])
          const attempt = whole(ops[i + OP.RUN_ATTEMPT])
          exec.current = attempt
          exec.maxAttempts = whole(ops[i + OP.RUN_MAX_ATTEMPTS])
          exec.toolId = whole(ops[i + OP.RUN_TOOL])
          exec.checksOutput = ops[i + OP.RUN_CHECKS_OUTPUT] === 1
          takeStartingLine(work, exec, attempt)
          // No array of the attempt's numbers: that was an object per attempt, taken apart
          // by destructuring (an iterator per attempt where the code is not optimized), and
          // V8 boxed its numbers when the Starting line joined them.
          work.push(ops[i + OP.RUN_DEFERRED] === 1 ? W_RUN_SOON : W_RUN, exec, attempt)
          i += OP.RUN_LENGTH
          break
        }
        case OP.DECIDE:
          work.push(W_DECIDE, this.#live.get(ops[i + OP.DECIDE_KEY]), whole(ops[i + OP.DECIDE_TOOL]))
          i += OP.DECIDE_LENGTH
          break
        case OP.AWAIT_APPROVAL: {
          const exec = this.#live.get(ops[i + OP.AWAIT_APPROVAL_KEY])
          exec.approvalId = text.slice(at, (at += ops[i + OP.AWAIT_APPROVAL_APPROVAL_ID]))
          i += OP.AWAIT_APPROVAL_LENGTH
          if (!this.#warnedUnheard && this.listenerCount('tool-execution-approval-requested') === 0) this.#warnUnheard(exec)
          break
        }
        case OP.ARGS: {
          // An approver edited the arguments: the handler gets those.
          const exec = this.#live.get(ops[i + OP.ARGS_KEY])
          exec.text = text.slice(at, (at += ops[i + OP.ARGS_ARGUMENTS]))
          exec.parsed = false
          exec.tape = undefined
          i += OP.ARGS_LENGTH
          break
        }
        case OP.RECOVERED: {
          // Recovery took over a call a dead process left: an execution nobody awaits.
          const key = whole(ops[i + OP.RECOVERED_KEY])
          const id = text.slice(at, (at += ops[i + OP.RECOVERED_EXECUTION_ID]))
          const name = text.slice(at, (at += ops[i + OP.RECOVERED_TOOL_NAME]))
          const args = text.slice(at, (at += ops[i + OP.RECOVERED_ARGUMENTS]))
          const exec = new Execution(name, args)
          exec.key = key
          exec.id = id
          exec.resolve = noop
          exec.reject = noop
          ;[exec.sessionId, i, at] = optionalAt(ops, i + OP.RECOVERED_SESSION_ID, text, at)
          ;[exec.toolCallId, i, at] = optionalAt(ops, i, text, at)
          exec.idempotencyKey = text.slice(at, (at += ops[i++]))
          this.#live.set(key, exec)
          this.#busy()
          break
        }
        case OP.RESULT: {
          // A replayed outcome's result, from the journal.
          const exec = this.#live.get(ops[i + OP.RESULT_KEY])
          exec.result = JSON.parse(text.slice(at, (at += ops[i + OP.RESULT_RESULT])))
          i += OP.RESULT_LENGTH
          break
        }
        case OP.ANSWER: {
          const ticket = ops[i + OP.ANSWER_TICKET]
          const waiting = this.#answers.get(ticket)
          this.#answers.delete(ticket)
          // The error is there when the answer is not ok.
          if (ops[i + OP.ANSWER_OK] === 1) {
            i += OP.ANSWER_ERROR
            waiting?.resolve()
          } else {
            const error = engineError(text.slice(at, (at += ops[i + OP.ANSWER_ERROR])), undefined)
            i += OP.ANSWER_ERROR + 1 // past the error's length
            const { code, message, ...extra } = error
            waiting?.reject(toolhostError(code, message, extra.validationErrors ? { validationErrors: extra.validationErrors } : undefined))
          }
          break
        }
        case OP.TASK: {
          const ticket = ops[i + OP.TASK_TICKET]
          const waiting = this.#answers.get(ticket)
          this.#answers.delete(ticket)
          const answer = JSON.parse(text.slice(at, (at += ops[i + OP.TASK_ANSWER])))
          i += OP.TASK_LENGTH
          waiting?.resolve(answer)
          break
        }
        case OP.APPROVALS: {
          const ticket = ops[i + OP.APPROVALS_TICKET]
          const waiting = this.#answers.get(ticket)
          this.#answers.delete(ticket)
          const list = JSON.parse(text.slice(at, (at += ops[i + OP.APPROVALS_ANSWER])))
          i += OP.APPROVALS_LENGTH
          waiting?.resolve(list)
          break
        }
        case OP.APPROVAL_REFUSED:
          this.#refused = engineError(text.slice(at, (at += ops[i + OP.APPROVAL_REFUSED_ERROR])), undefined)
          i += OP.APPROVAL_REFUSED_LENGTH
          break
        case OP.QUEUED:
          i += OP.QUEUED_LENGTH
          break
        case OP.RETRY: {
          const exec = this.#live.get(ops[i + OP.RETRY_KEY])
          exec.current = 0
          exec.ctx = null
          i += OP.RETRY_LENGTH
          break
        }
        case OP.DONE: {
          work.push(W_DONE, this.#live.get(ops[i + OP.DONE_KEY]), undefined)
          i += OP.DONE_LENGTH
          done++
          break
        }
        case OP.EVICT:
          work.push(W_EVICT, text.slice(at, (at += ops[i + OP.EVICT_EXECUTION_ID])), undefined)
          i += OP.EVICT_LENGTH
          break
        case OP.EVICT_OLDEST:
          work.push(W_EVICT_OLDEST, whole(ops[i + OP.EVICT_OLDEST_COUNT]), undefined)
          i += OP.EVICT_OLDEST_LENGTH
          break
        case OP.EVICT_NEWEST:
          work.push(W_EVICT_NEWEST, undefined, undefined)
          i += OP.EVICT_NEWEST_LENGTH
          break
        case OP.RELEASED:
          this.#state.release([ops[i + OP.RELEASED_TOOL]])
          i += OP.RELEASED_LENGTH
          break
        default:
          throw new Error(`toolhost: unknown engine op ${ops[i]} at ${i}`)
      }
      if (CHECK_WIRE) checkOp(ops, from, i, text, fromAt, at)
    }
    return done
  }

  #finished(exec) {
    this.#live.delete(exec.key)
    exec.current = 0
    exec.ctx = null
    if (exec.watching) this.#unwatchSignal(exec)
    const execution = exec.final
    // A finished record keeps large arguments as their text, and parses it again when
    // read: a history of a thousand 1 MB calls would otherwise keep a thousand trees
    // alive, which the collector then marks over and over (B4: 9.4 ms of JS-thread time
    // per call instead of 4.5, and 3 GB instead of 1.1).
    this.#history.push(exec.text.length >= KEEP_AS_TEXT ? withArgsAsText(execution, exec.text) : execution)
    if (execution.status === 'succeeded') {
      exec.resolve(execution.replayed === true ? { success: true, result: execution.result, execution, replayed: true } : { success: true, result: execution.result, execution })
    } else {
      // Not for a made-up name (as the engine's statistics): one per name would be kept;
      // nor in a session destroyed meanwhile (or unknown), whose statistics went with it.
      const session = exec.sessionId
      if (execution.error.code !== 'TOOL_NOT_FOUND' && (session === undefined || this.#state.sessions.has(session))) {
        this.#lastErrors.set(exec.toolName, execution.error)
        if (session !== undefined) {
          let names = this.#sessionFailures.get(session)
          if (names === undefined) this.#sessionFailures.set(session, (names = new Set()))
          names.add(exec.toolName)
        }
      }
      exec.resolve(execution.replayed === true ? { success: false, error: execution.error, execution, replayed: true } : { success: false, error: execution.error, execution })
    }
    // It lets go of what its attempts made. An execution that waited long enough in the
    // queue is in V8's old generation by now, and until the next full collection what it
    // points to would survive every scavenge, dead or not (B5 with its results dropped:
    // its last five scavenges copied 2.0-5.0 MB before this, 0.6-2.1 MB with it).
    exec.final = null
    exec.thrown = undefined
    exec.result = undefined
    exec.preliminary = undefined
    exec.previousErrors = null
    exec.args = undefined
    exec.parsed = false
    this.#busy()
    if (this.#onIdle.length > 0 && this.inFlight === 0) for (const resolve of this.#onIdle.splice(0)) resolve()
  }

  #deliver(work, length) {
    for (let w = 0; w < length; w += 3) {
      switch (work[w]) {
        case W_EVENT: {
          // A transition's events are delivered as one batch.
          let last = w
          while (last + 3 < length && work[last + 3] === W_EVENT) last += 3
          this.#events(work, w, last)
          w = last
          break
        }
        case W_LOG:
        case W_LOG_INFO:
        case W_LOG + 2:
        case W_LOG + 3:
          this.#log(OP.LOG_LEVELS[work[w] - W_LOG], work[w + 1], work[w + 2])
          break
        case W_AUDIT:
          this.#audit(work[w + 1], work[w + 2])
          break
        case W_INTERRUPT:
          ToolCallContext.abort(work[w + 1], work[w + 2])
          break
        case W_DONE:
          this.#finished(work[w + 1])
          break
        case W_EVICT: {
          const at = this.#historyIndex(work[w + 1])
          if (at >= 0) this.#history.splice(at, 1)
          break
        }
        case W_EVICT_OLDEST:
          this.#dropOldest(work[w + 1])
          break
        case W_DECIDE:
          this.#decide(work[w + 1], work[w + 2])
          break
        case W_LISTEN: {
          // Unless it already finished (a listener before this one ended it).
          const exec = work[w + 1]
          if (this.#live.get(exec.key) === exec) this.#watchSignal(exec)
          break
        }
        case W_EVICT_NEWEST:
          if (this.#history.length > this.#historyHead) this.#history.pop()
          break
        case W_RUN:
          this.#admit(work[w + 1], work[w + 2])
          if (this.#deferRuns) this.#runSoon()
          else this.#runAdmitted()
          break
        case W_RUN_SOON:
          this.#admit(work[w + 1], work[w + 2])
          this.#runSoon()
          break
      }
    }
  }

  #historyIndex(id) {
    for (let k = this.#history.length - 1; k >= this.#historyHead; k--) if (this.#history[k].id === id) return k
    return -1
  }

  #dropOldest(n) {
    const h = this.#history
    const end = Math.min(h.length, this.#historyHead + n)
    for (let k = this.#historyHead; k < end; k++) h[k] = undefined
    this.#historyHead = end
    // Compacted now and then, so dropping the oldest costs no shifting per call.
    if (this.#historyHead >= 1024 && this.#historyHead * 2 >= h.length) {
      this.#history = h.slice(this.#historyHead)
      this.#historyHead = 0
    }
  }

  /** Delivers the events in `work[from..=to]`; events a listener causes meanwhile wait
   * for those being delivered. */
  #events(work, from, to) {
    if (this.#dispatching) {
      for (let w = from; w <= to; w += 3) this.#laterEvents.push(work[w + 1], work[w + 2])
      return
    }
    this.#dispatching = true
    try {
      for (let w = from; w <= to; w += 3) this.emit(work[w + 1], work[w + 2])
      for (let k = 0; k < this.#laterEvents.length; k += 2) this.emit(this.#laterEvents[k], this.#laterEvents[k + 1])
    } finally {
      this.#laterEvents.length = 0
      this.#dispatching = false
    }
  }

  #log(level, message, fields) {
    try {
      const result = this.#logger(level, message, fields)
      // An async logger (one shipping lines over HTTP) that fails is reported as a throw is.
      if (result !== undefined) reportRejection(result, 'the toolhost logger', 'ToolhostLoggerWarning')
    } catch (err) {
      reportCallbackError(err, 'the toolhost logger', 'ToolhostLoggerWarning')
    }
  }

  #audit(auditRecord, failure) {
    if (failure !== undefined) {
      if (this.#logger !== undefined) {
        this.#log('error', `[TOOL EXECUTION] ${failure}`, { executionId: auditRecord.executionId, toolName: auditRecord.toolName })
      }
      this.emit('tool-audit-error', { message: failure, record: auditRecord })
    }
    this.emit('tool-invocation-recorded', auditRecord)
  }

  /** Runs the admitted attempts once the caller's synchronous code is done: a caller
   * that starts many executions in a loop would otherwise see their first failures
   * only after the loop, and their retries fall due late by the loop's length. */
  #runSoon() {
    if (this.#runQueued) return
    this.#runQueued = true
    then.call(settled, this.#runner)
  }

  /** Runs admitted attempts in order. An attempt admitted while this loop runs (a
   * synchronous handler freed its slot) is appended and run by the loop already on the
   * stack, so a long queue of synchronous handlers cannot overflow the stack. */
  #runAdmitted() {
    if (this.#runningAdmitted) return
    this.#runningAdmitted = true
    try {
      for (let k = 0; k < this.#admittedEnd; k += 2) {
        const exec = this.#admitted[k]
        const attempt = this.#admitted[k + 1]
        try {
          this.#run(exec, attempt)
        } catch (err) {
          // Whatever escaped fails this attempt alone: the attempts admitted with it
          // still run.
          this.#failed(exec, attempt, err)
        }
      }
    } finally {
      // Emptied in place: `length = 0` would drop the array's store, to be made again.
      for (let k = 0; k < this.#admittedEnd; k++) this.#admitted[k] = undefined
      this.#admittedEnd = 0
      this.#runningAdmitted = false
    }
  }

  #admit(exec, attempt) {
    const end = this.#admittedEnd
    this.#admitted[end] = exec
    this.#admitted[end + 1] = attempt
    this.#admittedEnd = end + 2
  }

  #run(exec, attempt) {
    const starting = exec.starting
    exec.starting = undefined
    // An attempt cancelled before it could start is not run, nor announced as starting.
    if (exec.current !== attempt) return
    if (starting !== undefined) {
      this.#log('info', exec.startingMessage, starting)
      // The logger may have cancelled it.
      if (exec.current !== attempt) return
    }
    const handler = this.#state.handlers.get(exec.toolId)
    if (handler === undefined) return this.#failed(exec, attempt, toolhostError('PERMANENT_ERROR', `tool '${exec.toolName}' has no handler any more`, { category: 'permanent' }))
    const args = exec.own()
    const ctx = new ToolCallContext(exec, attempt, this.#reportProgress, exec.idempotencyKey ?? exec.toolCallId ?? exec.id)
    // Kept before the handler runs, so that a cancel or timeout from its synchronous
    // part or an interceptor aborts this context's signal.
    exec.ctx = ctx
    let value
    try {
      // In the async context of the `execute` that started it, whoever runs it now (a
      // microtask of another call, a retry timer, the slot another call freed, approve()).
      value = exec.scope === undefined ? this.#invoke(handler, args, ctx) : exec.scope.runInAsyncScope(this.#invoke, this, handler, args, ctx)
    } catch (err) {
      return this.#failed(exec, attempt, err)
    }
    this.#outcome(exec, attempt, value)
  }

  #invoke(handler, args, ctx) {
    return this.#interceptors.length === 0 ? handler(args, ctx) : runChain(this.#interceptors, handler, ownArgs(ctx), ctx, this.#passOn)
  }

  /** What a handler receives for the arguments `use()` interceptors pass on (`value`):
   * unchanged ones (the call's JSON text) as they are; changed ones checked by the
   * engine as arguments are, then parsed from their JSON text, as a call's arguments
   * are. Arguments that may not run fail the attempt (INVALID_ARGUMENTS), and the
   * interceptors' `next()` rejects with that error. */
  #passOn = (ctx, value) => {
    const [exec, attempt] = ToolCallContext.attemptOf(ctx)
    // A next() called after its attempt ended (a stale-while-revalidate interceptor's
    // background refresh after the call succeeded) would run the handler outside any
    // execution: no timeout, events or record, and a signal that never aborts.
    if (exec.current !== attempt) {
      throw toolhostError('INVALID_CALL', `next() was called after attempt ${attempt} of tool '${exec.toolName}' (execution ${exec.id}) ended: the handler runs only within its attempt; call execute() again to run it`)
    }
    const converted = argumentsText(value)
    if (converted.error === undefined && converted.text === exec.text) return value
    this.#apply(this.#core.interceptedArgs(exec.key, attempt, converted.error === undefined ? converted.text : '', converted.error ?? ''))
    if (exec.current === attempt && converted.error === undefined) return JSON.parse(converted.text)
    // The engine failed the attempt: its error is the last of a retried execution's,
    // or a finished one's.
    const error = this.#live.get(exec.key) === exec ? exec.previousErrors?.at(-1) : this.#lastErrors.get(exec.toolName)
    throw toolhostError(error?.code ?? 'INVALID_ARGUMENTS', error?.message ?? `invalid arguments for tool '${exec.toolName}' from an interceptor`, error?.validationErrors === undefined ? undefined : { validationErrors: error.validationErrors })
  }

  /** Follows what a handler returned: a value, a promise or other thenable, or an async
   * iterable whose yields are preliminary results and whose last one is the result. */
  #outcome(exec, attempt, value) {
    let native = false
    try {
      native = value instanceof Promise
    } catch {
      // A Proxy whose prototype cannot be read (revoked, or a trap that throws): not a
      // promise, and `then` and the result's checks below say what is wrong with it.
    }
    if (native) {
      try {
        then.call(value, (v) => this.#outcome(exec, attempt, v), (err) => this.#failed(exec, attempt, err))
      } catch (err) {
        // A broken species constructor: the attempt fails with that error.
        this.#failed(exec, attempt, err)
      }
      return
    }
    let adopted
    let iterable = false
    try {
      adopted = thenableOf(value, exec.scope)
      iterable = adopted === undefined && value !== null && typeof value === 'object' && typeof value[Symbol.asyncIterator] === 'function'
    } catch (err) {
      // Reading its `then` or its async iterator threw.
      return this.#failed(exec, attempt, err)
    }
    if (adopted !== undefined) this.#outcome(exec, attempt, adopted)
    else if (iterable) this.#iterate(exec, attempt, value)
    else this.#settled(exec, attempt, value)
  }

  #iterate(exec, attempt, iterable) {
    let iterator
    try {
      iterator = iterable[Symbol.asyncIterator]()
    } catch (err) {
      return this.#failed(exec, attempt, err)
    }
    let last
    let stopped = false
    // Cancelled or timed out: the iterator is told to stop, once, even while its next()
    // has not settled (an iterator that never answers would otherwise never hear of it).
    const stop = () => {
      if (stopped) return
      stopped = true
      try {
        then.call(Promise.resolve(iterator.return?.()), undefined, () => {})
      } catch {}
    }
    const ctx = exec.current === attempt ? exec.ctx : null
    if (ctx === null) return stop()
    const signal = ctx.signal
    signal.addEventListener('abort', stop, { once: true })
    const ended = () => signal.removeEventListener('abort', stop)
    const step = () => {
      let next
      try {
        // An async generator's body runs in the context of whoever calls next().
        next = Promise.resolve(exec.scope === undefined ? iterator.next() : exec.scope.runInAsyncScope(iterator.next, iterator))
      } catch (err) {
        ended()
        return this.#failed(exec, attempt, err)
      }
      then.call(next, (r) => {
        if (exec.current !== attempt) return stop()
        // A hand-written iterator's result may not be one (undefined, a throwing `done`):
        // the attempt fails, as `for await` would throw, rather than this callback's
        // promise rejecting unhandled and the attempt waiting for its timeout.
        let done
        let value
        try {
          if (r === null || (typeof r !== 'object' && typeof r !== 'function')) throw new TypeError(`the async iterator's next() resolved to ${describe(r)}, not an iterator result { done, value }`)
          done = r.done
          value = r.value
        } catch (err) {
          ended()
          return this.#failed(exec, attempt, err)
        }
        if (done) {
          ended()
          return this.#settled(exec, attempt, value !== undefined ? value : last)
        }
        // Held to a result's rule: listeners (and an MCP client's progress) read it as JSON.
        const problem = resultProblem(value)
        if (problem !== undefined) {
          ended()
          stop()
          return this.#apply(this.#core.fail(exec.key, attempt, JSON.stringify({ invalidResult: `${problem} (in a preliminary result it yielded)` })))
        }
        last = value
        exec.preliminary = value
        this.#apply(this.#core.preliminary(exec.key, attempt))
        step()
      }, (err) => {
        ended()
        this.#failed(exec, attempt, err)
      })
    }
    step()
  }

  /** `ctx.reportProgress({ progress, total?, message? })`. */
  #progress(exec, attempt, report) {
    const bad = (why) => {
      const e = new TypeError(`reportProgress() takes { progress: number, total?: number, message?: string }: ${why}`)
      e.code = 'INVALID_ARGUMENTS'
      return e
    }
    if (report === null || typeof report !== 'object') throw bad(`got ${typeof report}`)
    // A misspelt key (`totl`) would be dropped in silence. for-in makes no array.
    for (const key in report) {
      if (!PROGRESS_KEYS.includes(key) && Object.hasOwn(report, key)) throw bad(unknownProgressKey(key))
    }
    const { progress, total, message } = report
    if (typeof progress !== 'number' || !Number.isFinite(progress)) throw bad('progress must be a finite number')
    if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total))) throw bad('total must be a finite number')
    if (message !== undefined && typeof message !== 'string') throw bad('message must be a string')
    if (exec.current !== attempt) return
    this.#apply(this.#core.progress(exec.key, attempt, progress, total ?? NaN, message))
  }

  /** `DECIDE`: the tool's (or the manager's) `needsApproval` function says whether this
   * call needs approval. Only `true` and `false` are answers: anything else refuses the
   * call (the engine says so), so a predicate returning `500` or `'yes'` fails closed. */
  #decide(exec, toolId) {
    const policy = this.#state.approvalPredicates.get(toolId) ?? this.#approvalPolicy
    const answer = (verdict) => {
      if (exec.final !== null || this.#live.get(exec.key) !== exec) return
      if (typeof verdict === 'boolean') this.#apply(this.#core.approvalDecided(exec.key, verdict, ''))
      else this.#apply(this.#core.approvalDecided(exec.key, false, verdictText(verdict)))
    }
    const failed = (err) => {
      // A policy that throws asks a person rather than letting the call through.
      reportCallbackError(err, `the needsApproval function of '${exec.toolName}'`, 'ToolhostApprovalWarning')
      answer(true)
    }
    if (exec.decided !== undefined) return this.#deferringRuns(() => answer(exec.decided.verdict))
    if (typeof policy !== 'function') return answer(true)
    let verdict
    let adopted
    try {
      const ctx = { executionId: exec.id, toolCallId: exec.toolCallId, sessionId: exec.sessionId, toolName: exec.toolName, context: exec.context, authInfo: exec.authInfo }
      // A copy of its own: what it changes in place is not what the approver is shown,
      // nor what then runs.
      const args = parsedCopy(exec)
      verdict = exec.scope === undefined ? policy(args, ctx) : exec.scope.runInAsyncScope(policy, undefined, args, ctx)
      adopted = verdict instanceof Promise ? verdict : thenableOf(verdict, exec.scope)
    } catch (err) {
      return failed(err)
    }
    if (adopted !== undefined) then.call(adopted, answer, failed)
    // A synchronous verdict is given inside execute(): an attempt it lets through runs
    // from a microtask, as it would without the policy.
    else this.#deferringRuns(() => answer(verdict))
  }

  #settled(exec, attempt, value) {
    if (exec.current !== attempt) return
    if (this.#stamps) {
      // The copy to stamp is made here, reading the result's getters once: one that
      // throws fails the attempt, as a result JSON cannot carry does.
      let copy
      try {
        copy = plainCopy(value)
      } catch (err) {
        return this.#apply(this.#core.fail(exec.key, attempt, JSON.stringify({ invalidResult: `it could not be read (${thrownMessage(err)})` })))
      }
      exec.copied = copy !== undefined
      if (exec.copied) value = copy
    }
    // A result JSON cannot carry fails the attempt (INVALID_RESULT), saying what and where.
    const problem = resultProblem(value)
    if (problem !== undefined) return this.#apply(this.#core.fail(exec.key, attempt, JSON.stringify({ invalidResult: problem })))
    exec.result = value
    this.#apply(this.#core.settle(exec.key, attempt, exec.checksOutput ? resultText(value) : ''))
  }

  #failed(exec, attempt, err) {
    if (exec.current !== attempt) return
    exec.thrown = err
    this.#apply(this.#core.fail(exec.key, attempt, thrownFacts(err, this.#logsStacks)))
  }

  /** Listens to an execution's signal: one listener for every execution of this manager
   * that shares it (one request's signal passed to many calls), since its abort cancels
   * them all; a listener each made Node warn of a leak past ten. */
  #watchSignal(exec) {
    const signal = exec.signal
    exec.watching = true
    const watch = this.#signals.get(signal)
    if (watch !== undefined) {
      watch.count++
      return
    }
    const onAbort = () => this.#signalAborted(signal)
    this.#signals.set(signal, { count: 1, onAbort })
    listen(signal, true, onAbort)
  }

  #unwatchSignal(exec) {
    exec.watching = false
    const watch = this.#signals.get(exec.signal)
    if (watch === undefined || --watch.count > 0) return
    this.#signals.delete(exec.signal)
    listen(exec.signal, false, watch.onAbort)
  }

  /** Every execution of this manager given this signal is cancelled, queued ones first. */
  #signalAborted(signal) {
    const keys = []
    for (const exec of this.#live.values()) if (exec.signal === signal) keys.push(exec.key)
    for (const exec of this.#pending.values()) if (exec.signal === signal) exec.cancelled = true
    if (keys.length > 0) this.#apply(this.#core.cancelKeys(keys))
  }

  /** Runs the tool calls of a model response through this manager (see js/tool-calls.mjs). */
  executeToolCalls(response, options) {
    return executeToolCalls(this, this.#state, response, options)
  }

  /** Cancels an execution in flight: it ends `cancelled`, its signal aborts, and no further attempt starts. `false` when it already finished. */
  cancel(executionId) {
    if (typeof executionId !== 'string') throw argumentTypeError('cancel', 'the execution id', executionId)
    return this.#apply(this.#core.cancel(executionId)) > 0
  }

  /** Cancels every execution in flight. Returns how many were cancelled. */
  cancelAll() {
    return this.#cancelInFlight(null)
  }

  #cancelInFlight(session) {
    let waiting = 0
    for (const exec of this.#pending.values()) {
      if (!exec.cancelled && (session === null || exec.sessionId === session)) {
        exec.cancelled = true
        waiting++
      }
    }
    const out = session === null ? this.#core.cancelAll(null) : this.#core.destroySession(session)
    return this.#apply(out) + waiting
  }

  /** A session of this manager's registry was destroyed: its executions end cancelled. */
  sessionDestroyed(sessionId) {
    this.#cancelInFlight(sessionId)
    // The engine dropped the statistics of the session's own tools: their last errors
    // (and what the thrown values hold) go too. A name another scope counted keeps its.
    const names = this.#sessionFailures.get(sessionId)
    if (names !== undefined) {
      this.#sessionFailures.delete(sessionId)
      for (const name of names) if (JSON.parse(this.#core.stats(name)).executionCount === 0) this.#lastErrors.delete(name)
    }
  }

  /** The record of an execution in flight or kept in history, or `undefined`. */
  getExecution(executionId) {
    if (typeof executionId !== 'string') throw argumentTypeError('getExecution', 'the execution id', executionId)
    const at = this.#historyIndex(executionId)
    if (at >= 0) return this.#history[at]
    const text = this.#core.snapshot(executionId)
    if (this.#scratch.length === 0) this.#scratch = this.#core.scratch
    if (this.#scratch[0] > 0) {
      const ops = this.#scratch
      // One SNAPSHOT op, after the count at 0.
      const exec = this.#live.get(ops[1 + OP.SNAPSHOT_KEY])
      const [extras, end, at] = extrasAt(ops, 1 + OP.SNAPSHOT_EXTRAS, text, 0)
      if (CHECK_WIRE) checkOp(ops, 1, end, text, 0, at)
      if (exec !== undefined) return exec.final ?? record(exec, ops, 1 + OP.SNAPSHOT_RECORD, undefined, extras)
    }
    // Finished, with its result still being delivered (a listener asking about it).
    for (const exec of this.#live.values()) if (exec.id === executionId && exec.final !== null) return exec.final
    return undefined
  }

  /** Records of the executions in flight, the last started first, then of the finished
   * ones history keeps, the last finished first: at most `limit` of them (all by default). */
  getExecutions(options) {
    let limit = Infinity
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') throw toolhostError('INVALID_ARGUMENTS', `getExecutions() takes { limit? } as its options, got ${describe(options)}`)
      checkOptions(options, ['limit'], 'getExecutions options', 'getExecutions: ')
      const l = options.limit
      if (l !== undefined) {
        if (!(l === Infinity || (Number.isInteger(l) && l >= 0))) throw toolhostError('INVALID_ARGUMENTS', `getExecutions: limit must be a whole number, 0 or more, or Infinity, got ${typeof l === 'number' ? l : describe(l)}`)
        limit = l
      }
    }
    const out = []
    // In flight: in the order they started (the map's), read from the last.
    const live = [...this.#live.values()]
    for (let k = live.length - 1; k >= 0 && out.length < limit; k--) {
      const r = this.getExecution(live[k].id)
      if (r !== undefined) out.push(r)
    }
    for (let k = this.#history.length - 1; k >= this.#historyHead && out.length < limit; k--) out.push(this.#history[k])
    return out
  }

  /** Every record of one model tool call (in flight or kept), oldest first. */
  getExecutionsForToolCall(toolCallId) {
    if (typeof toolCallId !== 'string') throw argumentTypeError('getExecutionsForToolCall', 'the tool call id', toolCallId)
    return JSON.parse(this.#core.idsForToolCall(toolCallId)).map((id) => this.getExecution(id)).filter((r) => r !== undefined)
  }

  /** Statistics of one tool over finished executions. */
  stats(toolName) {
    if (typeof toolName !== 'string') throw argumentTypeError('stats', 'the tool name', toolName)
    const s = JSON.parse(this.#core.stats(toolName))
    s.lastError = this.#lastErrors.get(toolName)
    return s
  }

  /** Adds an interceptor around every attempt: `async (ctx, next) => { ...; const r = await next(); ...; return r }`. */
  use(interceptor) {
    if (typeof interceptor !== 'function') throw toolhostError('INVALID_CONFIG', 'use() takes an interceptor function (ctx, next) => result')
    this.#interceptors.push(interceptor)
  }

  /** A call waits for approval and this manager has no 'tool-execution-approval-requested'
   * listener: says so once per manager (a loop of such calls warns once; each manager
   * set up without a listener warns), after the ops are read, since a warning reaches
   * user code (a process 'warning' listener, a patched console). */
  #warnUnheard(exec) {
    this.#warnedUnheard = true
    const { toolName, approvalId } = exec
    queueMicrotask(() => {
      // (A journaled manager's pendingApprovals() asks the journal: its fate is not said.)
      const pending = this.#journaled ? undefined : this.pendingApprovals().find((p) => p.approvalId === approvalId)
      const fate = pending === undefined
        ? ''
        : pending.expiresAt === undefined
          ? ', and with no approvalTimeoutMs it waits forever'
          : `, and it is denied when approvalTimeoutMs runs out (${pending.expiresAt - pending.requestedAt} ms)`
      const message = `tool '${toolName}' waits for approval (${approvalId}), but this manager has no ` +
        `'tool-execution-approval-requested' listener: nothing is asked to approve or deny it${fate}. Listen to that ` +
        'event (or read pendingApprovals()) and call approve() or deny(); set approvalTimeoutMs; or pass ' +
        '{ approved: true } for a call approved elsewhere. This manager warns once.'
      try {
        if (typeof globalThis.process?.emitWarning === 'function') {
          globalThis.process.emitWarning(message, { type: 'ToolhostApprovalWarning', code: 'APPROVAL_UNHEARD' })
        } else console.warn(`toolhost: ${message}`)
      } catch {}
    })
  }

  /** Every call waiting for approval, oldest first, as plain JSON data:
   * `[{ approvalId, executionId, toolCallId?, sessionId?, toolName, args, requestedAt, expiresAt? }]`. */
  pendingApprovals() {
    if (this.#journaled) return this.#ask((ticket) => this.#apply(this.#core.pendingApprovals(ticket)))
    return JSON.parse(this.#core.pendingApprovals(0))
  }

  /** A journal answer to wait for: `send(ticket)` makes the request. */
  #ask(send) {
    const ticket = ++this.#nextAnswer
    const answer = new Promise((resolve, reject) => this.#answers.set(ticket, { resolve, reject }))
    try {
      send(ticket)
    } catch (err) {
      this.#answers.get(ticket)?.reject(err)
      this.#answers.delete(ticket)
    }
    this.#busy()
    return answer
  }

  /** Approves a waiting call: it runs (or queues for a slot), with `args` instead of
   * its own when given (validated again, and recorded as edited). Throws
   * `APPROVAL_NOT_FOUND`, or `INVALID_ARGUMENTS` (the call keeps waiting). */
  approve(approvalId, options) {
    if (typeof approvalId !== 'string') throw argumentTypeError('approve', 'the approval id', approvalId)
    const { args, by } = approvalOptions(options, ['args', 'by'], 'approve')
    let text = ''
    if (args !== undefined) {
      const converted = typeof args === 'string' ? { text: args } : argumentsText(args)
      if (converted.error !== undefined) throw toolhostError('INVALID_ARGUMENTS', `approve: the edited arguments are not JSON: ${converted.error}`)
      text = converted.text
    }
    if (this.#journaled) return this.#ask((ticket) => this.#apply(this.#core.approve(approvalId, text, by, ticket)))
    // From a listener (an auto-approve policy answering 'approval-requested', which
    // execute() dispatches): the handler would run inside execute(), before its caller
    // could cancel. It runs from a microtask instead, as a first attempt does.
    if (this.#dispatching) return this.#deferringRuns(() => this.#answer(this.#core.approve(approvalId, text, by, 0)))
    this.#answer(this.#core.approve(approvalId, text, by, 0))
  }

  #deferringRuns(fn) {
    const outer = this.#deferRuns
    this.#deferRuns = true
    try {
      return fn()
    } finally {
      this.#deferRuns = outer
    }
  }

  /** Denies a waiting call: it ends failed, category `denied`, code `APPROVAL_DENIED`.
   * Throws `APPROVAL_NOT_FOUND`. */
  deny(approvalId, options) {
    if (typeof approvalId !== 'string') throw argumentTypeError('deny', 'the approval id', approvalId)
    const { reason, by } = approvalOptions(options, ['reason', 'by'], 'deny')
    if (this.#journaled) return this.#ask((ticket) => this.#apply(this.#core.deny(approvalId, reason, by, ticket)))
    this.#answer(this.#core.deny(approvalId, reason, by, 0))
  }

  #answer(text) {
    this.#refused = undefined
    this.#apply(text)
    const refused = this.#refused
    if (refused !== undefined) {
      this.#refused = undefined
      const { code, message, ...extra } = refused
      throw toolhostError(code, message, extra.validationErrors ? { validationErrors: extra.validationErrors } : undefined)
    }
  }

  /**
   * Lets the journal go (a manager without one has nothing to close): journaled calls
   * made from now on fail `JOURNAL_UNAVAILABLE` without running; it waits for the
   * executions in flight to end, then stops the journal's thread, its lease renewal and
   * its recovery, and closes its connection. (While calls made meanwhile still ran,
   * traffic that never paused kept it waiting for ever.)
   */
  async close() {
    if (!this.#journaled) return
    this.#core.refuseNewJournaled()
    while (this.inFlight > 0) await new Promise((resolve) => this.#onIdle.push(resolve))
    if (!this.#closed) {
      this.#closed = true
      const stopped = this.#core.closeJournal()
      this.#busy()
      await stopped
    }
  }

  /** Executions not yet finished. */
  get inFlight() {
    return this.#live.size + this.#pending.size
  }

  /** The registry whose tools this manager runs. */
  get registry() {
    return this.#state.registry
  }
}
