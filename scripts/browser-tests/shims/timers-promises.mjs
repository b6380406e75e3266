// Browser stand-in for `node:timers/promises`: promise timers that honour an
// AbortSignal the way Node's do (an already-aborted signal rejects at once; aborting
// later clears the timer and rejects), with Node's AbortError (name 'AbortError',
// code 'ABORT_ERR', the signal's reason as `cause`).

export class AbortError extends Error {
  constructor(message = 'The operation was aborted', options = undefined) {
    super(message, options)
    this.code = 'ABORT_ERR'
    this.name = 'AbortError'
  }
}

function invalidArg(name, expected, value) {
  const error = new TypeError(`The "${name}" argument must be ${expected}. Received ${value === null ? 'null' : typeof value}`)
  error.code = 'ERR_INVALID_ARG_TYPE'
  return error
}

/** Validates options as Node does; returns the signal, or throws. */
function signalOf(options) {
  if (options === null || typeof options !== 'object') throw invalidArg('options', 'of type object', options)
  const { signal } = options
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArg('options.signal', 'an instance of AbortSignal', signal)
  return signal
}

/** A promise settled by `schedule(resolve)` unless `signal` aborts first. */
function abortable(options, value, schedule, cancel) {
  let signal
  try {
    signal = signalOf(options)
  } catch (error) {
    return Promise.reject(error)
  }
  if (signal?.aborted) return Promise.reject(new AbortError(undefined, { cause: signal.reason }))
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      cancel(handle)
      reject(new AbortError(undefined, { cause: signal.reason }))
    }
    const handle = schedule(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(value)
    })
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export function setTimeout(delay = 1, value = undefined, options = {}) {
  return abortable(options, value, (fire) => globalThis.setTimeout(fire, delay), (id) => globalThis.clearTimeout(id))
}

// Browsers have no setImmediate; a MessageChannel message is the closest thing, a
// macrotask that is not clamped like setTimeout(0).
function queueMacrotask(fire) {
  const channel = new MessageChannel()
  let cancelled = false
  channel.port1.onmessage = () => {
    channel.port1.close()
    if (!cancelled) fire()
  }
  channel.port2.postMessage(undefined)
  return () => {
    cancelled = true
    channel.port1.close()
  }
}

export function setImmediate(value = undefined, options = {}) {
  return abortable(options, value, queueMacrotask, (cancel) => cancel())
}

/** Async iterator yielding `value` every `delay` ms until the signal aborts. */
export async function* setInterval(delay = 1, value = undefined, options = {}) {
  const signal = signalOf(options)
  for (;;) {
    yield await setTimeout(delay, value, { signal })
  }
}

export const scheduler = {
  wait: (delay, options) => setTimeout(delay, undefined, options),
  yield: () => setImmediate(),
}

export default { setTimeout, setImmediate, setInterval, scheduler }
