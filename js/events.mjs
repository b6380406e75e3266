// The EventTarget every public class extends: DOM events in Node and in browsers alike.
//
// Listeners are registered on the platform's own EventTarget (so `once`, `signal`,
// `capture` and `dispatchEvent` behave as the DOM specifies), each through a wrapper
// that contains what it throws, or what the promise it returns rejects with: a listener
// that throws must not disturb an execution or the other listeners (Node's EventTarget
// would end the process with it, as it would an unhandled rejection). The wrappers also
// count listeners per type, so an event type nobody listens to is never built.
import { closestOf, reportCallbackError, reportRejection, toolhostError } from './errors.mjs'

// An `async` listener's rejection is reported as its throw is. The name is built only
// for an object: many listeners are arrows that return a number (`(e) => seen.push(e)`).
function containRejection(result, type) {
  if (result !== null && (typeof result === 'object' || typeof result === 'function')) {
    reportRejection(result, `a '${type}' listener`, 'ToolhostListenerWarning')
  }
}

const captureOf = (options) => (typeof options === 'boolean' ? options : options != null && Boolean(options.capture))

export class ToolEventTarget extends EventTarget {
  // The types this object dispatches, and its class's name, for on() to refuse others.
  #types
  #className
  // type -> Map(listener -> Map(capture -> wrapper))
  #wrappers = new Map()
  // type -> Map(fn -> wrapper) for `on()`
  #detailListeners = new Map()
  #counts = new Map()
  // wrapper -> [signal, its 'abort' listener], for the listeners added with `{ signal }`
  // alone (made on the first): the abort listener goes with the listener (once,
  // removeEventListener), or one long-lived signal would hold every listener ever added
  // and, through it, this object.
  #aborts

  /** `types`: the event types this object dispatches (`on()` refuses any other, which
   * would be a listener that never fires); `className` names the object in that error. */
  constructor(types, className) {
    super()
    this.#types = types
    this.#className = className
  }

  /** Listeners of `type` now (both kinds). */
  listenerCount(type) {
    return this.#counts.get(type) ?? 0
  }

  /** Called when the number of listeners of `type` went from 0 to 1 or back. */
  listenersChanged(_type) {}

  #count(type, delta) {
    const before = this.#counts.get(type) ?? 0
    this.#counts.set(type, before + delta)
    if ((before === 0) !== (before + delta === 0)) this.listenersChanged(type)
  }

  /** As the DOM's, for any type: unlike `on()`, a type this object never dispatches is
   * not refused, as a subclass or the caller's `dispatchEvent` may dispatch types of its
   * own (the TypeScript types accept only the documented ones). */
  addEventListener(type, listener, options) {
    if (listener === null || listener === undefined) return
    if (typeof listener !== 'function' && typeof listener !== 'object') {
      throw toolhostError('INVALID_ARGUMENTS', `addEventListener('${String(type)}', ...) takes a function or an object with handleEvent(), got ${typeof listener}`)
    }
    type = String(type)
    const capture = captureOf(options)
    const signal = options != null && typeof options === 'object' ? options.signal : undefined
    if (signal !== undefined) {
      if (signal === null || typeof signal !== 'object' || typeof signal.addEventListener !== 'function' || !('aborted' in signal)) {
        throw toolhostError('INVALID_ARGUMENTS', `addEventListener('${type}', ...): options.signal must be an AbortSignal, got ${signal === null ? 'null' : typeof signal}`)
      }
      if (signal.aborted) return
    }
    let byListener = this.#wrappers.get(type)
    if (byListener === undefined) this.#wrappers.set(type, (byListener = new Map()))
    let byCapture = byListener.get(listener)
    if (byCapture === undefined) byListener.set(listener, (byCapture = new Map()))
    if (byCapture.has(capture)) return
    const once = options != null && typeof options === 'object' && Boolean(options.once)
    const self = this
    const wrapper = function (event) {
      if (once) self.#forget(type, listener, capture)
      try {
        const result = typeof listener === 'function' ? listener.call(this, event) : listener.handleEvent(event)
        if (result !== undefined) containRejection(result, type)
      } catch (err) {
        reportCallbackError(err, `a '${type}' listener`, 'ToolhostListenerWarning')
      }
    }
    byCapture.set(capture, wrapper)
    this.#count(type, 1)
    const passive = options != null && typeof options === 'object' ? options.passive : undefined
    // The signal is handled here rather than by the platform's EventTarget, whose own abort
    // listener would stay on the signal after the listener goes (Node's until a GC).
    super.addEventListener(type, wrapper, { capture, once, passive })
    if (signal !== undefined) {
      const onAbort = () => {
        if (this.#forget(type, listener, capture) === wrapper) super.removeEventListener(type, wrapper, { capture })
      }
      ;(this.#aborts ??= new Map()).set(wrapper, [signal, onAbort])
      signal.addEventListener('abort', onAbort, { once: true })
    }
  }

  removeEventListener(type, listener, options) {
    type = String(type)
    const capture = captureOf(options)
    const wrapper = this.#forget(type, listener, capture)
    if (wrapper !== undefined) super.removeEventListener(type, wrapper, { capture })
  }

  /** Drops the bookkeeping of one listener; returns its wrapper if it was there. */
  #forget(type, listener, capture) {
    const byCapture = this.#wrappers.get(type)?.get(listener)
    const wrapper = byCapture?.get(capture)
    if (wrapper === undefined) return undefined
    byCapture.delete(capture)
    if (byCapture.size === 0) this.#wrappers.get(type).delete(listener)
    this.#count(type, -1)
    if (this.#aborts !== undefined && this.#aborts.size !== 0) {
      const abort = this.#aborts.get(wrapper)
      if (abort !== undefined) {
        this.#aborts.delete(wrapper)
        abort[0].removeEventListener('abort', abort[1])
      }
    }
    return wrapper
  }

  /** Listens with the detail alone; returns a function that unsubscribes (true when it did). */
  on(type, fn) {
    if (typeof fn !== 'function') {
      throw toolhostError('INVALID_ARGUMENTS', `on('${String(type)}', ...) takes a function (detail) => void, got ${typeof fn}`)
    }
    type = String(type)
    if (this.#types !== undefined && !this.#types.includes(type)) throw this.#unknownType(type)
    let byFn = this.#detailListeners.get(type)
    if (byFn === undefined) this.#detailListeners.set(type, (byFn = new Map()))
    let wrapper = byFn.get(fn)
    if (wrapper === undefined) {
      wrapper = function (event) {
        try {
          const result = fn.call(this, event.detail)
          if (result !== undefined) containRejection(result, type)
        } catch (err) {
          reportCallbackError(err, `a '${type}' listener`, 'ToolhostListenerWarning')
        }
      }
      byFn.set(fn, wrapper)
      this.#count(type, 1)
      super.addEventListener(type, wrapper)
    }
    return () => {
      if (byFn.get(fn) !== wrapper) return false
      byFn.delete(fn)
      this.#count(type, -1)
      super.removeEventListener(type, wrapper)
      return true
    }
  }

  /** A misspelt type would be a listener that never fires: INVALID_CONFIG naming it. */
  #unknownType(type) {
    const near = closestOf(type, this.#types)
    const hint = near !== undefined ? `did you mean '${near}'?` : `it dispatches ${this.#types.map((t) => `'${t}'`).join(', ')}`
    return toolhostError('INVALID_CONFIG', `on('${type}', ...): a ${this.#className} never dispatches '${type}'; ${hint}`)
  }

  /** Dispatches `type` with `detail` when someone listens. */
  emit(type, detail) {
    if ((this.#counts.get(type) ?? 0) > 0) this.dispatchEvent(new CustomEvent(type, { detail }))
  }
}
