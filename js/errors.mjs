// Errors toolhost throws at its user, the error helpers for handlers, and what the
// engine needs to know about a value a handler threw.
import { backend } from './backend.mjs'

/** An error toolhost throws at its caller: a stable `code` and a sentence saying what to do. */
export class ToolhostError extends Error {
  constructor(code, message, extra) {
    super(message)
    this.name = 'ToolhostError'
    this.code = code
    if (extra !== undefined) Object.assign(this, extra)
  }
}

export function toolhostError(code, message, extra) {
  return new ToolhostError(code, message, extra)
}

/** A TypeError with code INVALID_ARGUMENTS for a method given the wrong kind of value. */
export function argumentTypeError(method, what, value) {
  const e = new TypeError(`${method}() takes ${what} as a string, got ${describe(value)}`)
  e.code = 'INVALID_ARGUMENTS'
  return e
}

export function describe(value) {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'undefined': return 'undefined'
    case 'boolean': return 'a boolean'
    case 'number': return 'a number'
    case 'symbol': return 'a symbol'
    case 'function': return 'a function'
    case 'bigint': return 'a bigint'
    case 'string': return 'a string'
    default: return 'an object'
  }
}

/** Refuses keys of an options object not in `known`, with the engine's wording
 * ("unknown option `x` in <what>; did you mean `y`?"). */
export function checkOptions(options, known, what, prefix = '') {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw toolhostError('INVALID_CONFIG', prefix + backend.unknownOption(key, known, what))
  }
}

/** The entry of `known` closest to `word` (a typo of it), by the measure of checkOptions'
 * did-you-mean, or undefined when none is close. */
export function closestOf(word, known) {
  const m = /did you mean `([^`]*)`/.exec(backend.unknownOption(word, known, 'a list'))
  return m === null ? undefined : m[1]
}

/** The entry of `known` (an iterable of strings) closest to the name `word` (a typo of
 * it: no shared prefix is enough, unlike closestOf), or undefined when none is close. */
export function closestName(word, known) {
  return backend.closestName(word, [...known]) ?? undefined
}

/** Throws the error an answer of a registry core carries, or returns its value. */
export function answered(text, prefix = '') {
  const r = JSON.parse(text)
  if (r.error !== undefined) {
    const { code, message, ...extra } = r.error
    throw toolhostError(code, prefix + message, Object.keys(extra).length > 0 ? extra : undefined)
  }
  return r.ok
}

// A classified error's stack starts at the code that asked for it, without
// `transientError` (or `permanentError`) and `classifiedError` on top, which would take
// two of the ten frames V8 keeps by default. `Error.captureStackTrace` does that (V8,
// and JavaScriptCore and SpiderMonkey of late); without it the stack is as `new Error`
// makes it.
const captureStack = typeof Error.captureStackTrace === 'function' ? Error.captureStackTrace : undefined

const TRANSIENT_OPTIONS = ['cause', 'code', 'retryAfterMs']
// A permanent error is never retried: a retryAfterMs on it would be ignored.
const PERMANENT_OPTIONS = ['cause', 'code']

// A misspelt option (`retryAfter`) would drop the hint in silence; so would options
// given as something other than an object.
function checkClassifiedOptions(options, name, known) {
  if (options === undefined) return
  if (options === null || typeof options !== 'object') {
    throw toolhostError('INVALID_CONFIG', `${name}(message, options): options must be an object { ${known.map((k) => `${k}?`).join(', ')} }, got ${describe(options)}`)
  }
  checkOptions(options, known, `${name} options`, `${name}: `)
}

function classifiedError(message, options, category, code, retryable, caller) {
  if (category === 'transient') checkClassifiedOptions(options, 'transientError', TRANSIENT_OPTIONS)
  else checkClassifiedOptions(options, 'permanentError', PERMANENT_OPTIONS)
  const cause = options && options.cause !== undefined ? { cause: options.cause } : undefined
  let error
  if (captureStack === undefined) error = new Error(String(message), cause)
  else {
    // Made without a stack, which is then captured once, from the caller's frame.
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      error = new Error(String(message), cause)
    } finally {
      Error.stackTraceLimit = limit
    }
    captureStack(error, caller)
  }
  error.name = category === 'transient' ? 'TransientError' : 'PermanentError'
  error.code = (options && options.code) || code
  error.category = category
  error.retryable = retryable
  if (options && options.retryAfterMs !== undefined) error.retryAfterMs = options.retryAfterMs
  return error
}

/** An `Error` the manager classifies as `transient` (retried by default). */
export function transientError(message, options) {
  return classifiedError(message, options, 'transient', 'TRANSIENT_ERROR', true, transientError)
}

/** An `Error` the manager classifies as `permanent` (never retried). */
export function permanentError(message, options) {
  return classifiedError(message, options, 'permanent', 'PERMANENT_ERROR', false, permanentError)
}

export function abortError(message) {
  return new DOMException(message, 'AbortError')
}

export function timeoutError(message) {
  return new DOMException(message, 'TimeoutError')
}

/** `{ category, code, message, retryable, retryAfterMs?, validationErrors?, cause? }` */
export function toolError(category, code, message, retryable, retryAfterMs, validationErrors, cause) {
  // A handler's error with nothing else: one literal, its cause in the object rather
  // than in a property store of its own (40 bytes more for each one history keeps).
  if (retryAfterMs === undefined && validationErrors === undefined && cause !== undefined) return { category, code, message, retryable, cause }
  const e = { category, code, message, retryable }
  if (retryAfterMs !== undefined) e.retryAfterMs = retryAfterMs
  if (validationErrors !== undefined) e.validationErrors = validationErrors
  if (cause !== undefined) e.cause = cause
  return e
}

/** An earlier attempt's error as an execution record keeps it: what it says, without
 * the value the handler threw. The retrying event hands that value to its listeners when
 * it is thrown; a history of `historyLimit` records holding every retried attempt's
 * thrown value (an HTTP client's error holds its request and response) would keep them
 * all alive. */
export function withoutCause(e) {
  return e.cause === undefined ? e : toolError(e.category, e.code, e.message, e.retryable, e.retryAfterMs, e.validationErrors, undefined)
}

/** An error of the engine's JSON (crates/toolhost/src/host/wire.rs), with the thrown
 * value as its cause when the engine says the cause is the host's. */
export function engineError(json, thrown) {
  const e = JSON.parse(json)
  return toolError(shared(e.category), shared(e.code), e.message, e.retryable, e.retryAfterMs, e.validationErrors, e.hostCause ? thrown : undefined)
}

// Categories and codes as one string each: JSON.parse makes new ones for every error, and
// a history of retried calls keeps them all (56 bytes of B5's 2.4 KB record). At most 64
// are kept, as a handler may set codes of its own.
const sharedStrings = new Map()
function shared(s) {
  if (typeof s !== 'string') return s
  const kept = sharedStrings.get(s)
  if (kept !== undefined) return kept
  if (sharedStrings.size < 64) sharedStrings.set(s, s)
  return s
}

// A property read that never throws (a getter, a revoked Proxy).
function read(o, key) {
  try {
    return o[key]
  } catch {
    return undefined
  }
}

const str = (v) => (typeof v === 'string' ? v : undefined)
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** The HTTP status of a failed request: `status` or `statusCode` on the error (fetch
 * wrappers, provider SDKs) or on its `response` (axios, ky). */
function statusOf(thrown) {
  const own = num(read(thrown, 'status')) ?? num(read(thrown, 'statusCode'))
  if (own !== undefined) return own
  const response = read(thrown, 'response')
  if (response === null || typeof response !== 'object') return undefined
  return num(read(response, 'status')) ?? num(read(response, 'statusCode'))
}

/** A `Retry-After` header from a fetch `Headers` (or anything with `get`, as axios's
 * headers have), or a plain object whose keys are any case. */
function retryAfterIn(headers) {
  if (headers === null || typeof headers !== 'object') return undefined
  try {
    if (typeof headers.get === 'function') {
      const v = headers.get('retry-after')
      if (v !== null && v !== undefined) return String(v)
    }
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() !== 'retry-after') continue
      const v = Array.isArray(headers[key]) ? headers[key][0] : headers[key]
      return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined
    }
  } catch {}
  return undefined
}

/** What the engine classifies a thrown value by (`Thrown` in crates/toolhost/src/error.rs),
 * as JSON text: its name, message, code, flags, and for a failed HTTP request its status
 * and `Retry-After` header. `withStack` reads the stack (only logging uses it; reading it formats
 * the whole trace). */
export function thrownFacts(thrown, withStack) {
  if (thrown === null || (typeof thrown !== 'object' && typeof thrown !== 'function')) {
    let text
    if (thrown === undefined) text = 'undefined'
    else if (thrown === null) text = 'null'
    else if (typeof thrown === 'symbol') text = 'a non-error value'
    else text = String(thrown)
    return JSON.stringify({ isObject: false, text })
  }
  const retryable = read(thrown, 'retryable')
  const retryAfterMs = read(thrown, 'retryAfterMs')
  const cause = read(thrown, 'cause')
  const facts = {
    isObject: true,
    name: str(read(thrown, 'name')),
    message: str(read(thrown, 'message')),
    code: str(read(thrown, 'code')),
    category: str(read(thrown, 'category')),
    retryable: typeof retryable === 'boolean' ? retryable : undefined,
    retryAfterMs: typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) ? retryAfterMs : undefined,
    causeCode: cause !== null && typeof cause === 'object' ? str(read(cause, 'code')) : undefined,
    stack: withStack ? str(read(thrown, 'stack')) : undefined,
    status: statusOf(thrown),
  }
  if (facts.status !== undefined) facts.retryAfter = retryAfterIn(read(thrown, 'headers')) ?? retryAfterIn(read(read(thrown, 'response') ?? {}, 'headers'))
  return JSON.stringify(facts)
}

/** What a thrown value says, for a message (its `message`, or its string): reading it
 * may throw too. */
export function thrownMessage(err) {
  try {
    return err instanceof Error ? String(err.message) : String(err)
  } catch {
    return 'what it threw could not be read'
  }
}

/** Text for a thrown value, which never throws itself. */
export function thrownText(err) {
  try {
    const stack = err !== null && (typeof err === 'object' || typeof err === 'function') ? err.stack : undefined
    return typeof stack === 'string' ? stack : String(err)
  } catch {
    try {
      return Object.prototype.toString.call(err)
    } catch {
      return 'a value that cannot be printed'
    }
  }
}

/** Reports what a user callback did that toolhost contained: in a browser as an uncaught
 * error of the page (`pageError`), in Node as a process warning of `warningType` whose
 * text `message()` makes. Never throws. */
function report(pageError, message, warningType) {
  try {
    if (typeof globalThis.reportError === 'function' && typeof globalThis.process === 'undefined') {
      globalThis.reportError(pageError)
    } else if (typeof globalThis.process?.emitWarning === 'function') {
      globalThis.process.emitWarning(message(), warningType)
    } else {
      console.error(message())
    }
  } catch {}
}

/** Reports a user callback's answer that toolhost could not use (`message` says which,
 * what it was and what was done instead). */
export function reportUnusable(message, warningType) {
  report(new TypeError(message), () => message, warningType)
}

/** Reports an error thrown by a user callback (a listener, a logger) without letting it
 * disturb toolhost. `verb` is 'rejected' for a returned promise's rejection. */
export function reportCallbackError(err, what, warningType, verb = 'threw') {
  report(err, () => `${what} ${verb}: ${thrownText(err)}`, warningType)
}

/** Reports the rejection of what a user callback (a listener, a logger) returned, when
 * it is a promise or another thenable, as `reportCallbackError` reports a throw: an
 * `async` listener that fails would otherwise be an unhandled rejection, which ends a
 * Node process. Callers check `result !== undefined` first, so a callback returning
 * nothing costs nothing here. */
export function reportRejection(result, what, warningType) {
  if (result === null || (typeof result !== 'object' && typeof result !== 'function')) return
  try {
    // Read once: `then` may be a getter, or the result a revoked Proxy.
    const then = result.then
    if (typeof then === 'function') then.call(result, undefined, (err) => reportCallbackError(err, what, warningType, 'rejected'))
  } catch (err) {
    reportCallbackError(err, what, warningType)
  }
}
