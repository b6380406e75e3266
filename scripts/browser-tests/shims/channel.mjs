// The page's side of the runner channel: every event (test started, test finished,
// uncaught error, done) goes to the function the runner exposed with puppeteer's
// page.exposeFunction. Opened by hand in a browser (no runner), events are logged
// to the console instead, so a page can still be debugged in DevTools.
//
// Globals are read once, at load: a test may replace console, JSON or timers, or
// freeze Object.prototype, and the harness must keep reporting regardless.

import { inspect } from 'node-inspect-extracted'

const sink = globalThis.__harnessReport
const log = globalThis.console.log.bind(globalThis.console)
const stringify = JSON.stringify
const objectToString = Object.prototype.toString

/** Every event sent so far, for inspection from DevTools. */
export const events = []

export function send(event) {
  events.push(event)
  if (typeof sink === 'function') sink(event)
  else log('[harness]', stringify(event))
}

/** A string for any thrown value, never throwing itself (Symbols, null-prototype
 * objects and throwing getters included), printed as Node's inspect would. */
export function describeValue(value) {
  try {
    if (typeof value === 'string') return value
    return inspect(value, { depth: 2, breakLength: Infinity })
  } catch {
    try {
      return objectToString.call(value)
    } catch {
      return '[unprintable value]'
    }
  }
}

function read(object, key) {
  try {
    return object[key]
  } catch {
    return undefined
  }
}

/** A JSON-safe copy of a thrown value: name, message, stack, and the code,
 * assertion operator and cause when it has them. */
export function serializeError(error) {
  if (error === null || (typeof error !== 'object' && typeof error !== 'function')) {
    return { name: typeof error, message: describeValue(error), stack: '' }
  }
  const name = read(error, 'name')
  const message = read(error, 'message')
  const stack = read(error, 'stack')
  const code = read(error, 'code')
  const cause = read(error, 'cause')
  return {
    name: typeof name === 'string' ? name : 'thrown value',
    message: typeof message === 'string' ? message : describeValue(error),
    stack: typeof stack === 'string' ? stack : '',
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof read(error, 'operator') === 'string' ? { operator: read(error, 'operator') } : {}),
    ...(cause !== undefined ? { cause: describeValue(cause) } : {}),
  }
}
