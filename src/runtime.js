// The binding's small JS layer, evaluated once per env by src/runtime.rs.
//
// It holds what is cheaper or only possible in JS: object literals with a stable shape
// (records, results, events), the handler context with a lazily created AbortSignal,
// promise settlement, AbortSignal listeners, and listener lists. Rust calls these
// functions; `notify` is the one Rust function they call back.
(function (notify, formatReplies) {
  'use strict'

  const SETTLED = 0
  const SIGNAL_ABORTED = 1
  const RUN_SOON = 2

  class ToolCallContext {
    #controller = undefined
    #reason = undefined
    constructor(executionId, toolCallId, sessionId, toolName, attemptNumber, maxAttempts) {
      this.executionId = executionId
      this.toolCallId = toolCallId
      this.sessionId = sessionId
      this.toolName = toolName
      this.attemptNumber = attemptNumber
      this.maxAttempts = maxAttempts
    }
    /** Aborted when the execution is cancelled or this attempt times out. */
    get signal() {
      if (this.#controller === undefined) {
        this.#controller = new AbortController()
        if (this.#reason !== undefined) this.#controller.abort(this.#reason)
      }
      return this.#controller.signal
    }
    static abort(ctx, reason) {
      if (ctx.#reason !== undefined) return
      ctx.#reason = reason
      if (ctx.#controller !== undefined) ctx.#controller.abort(reason)
    }
    /** Why the attempt was aborted (cancelled or timed out), or undefined. */
    static abortReason(ctx) {
      return ctx instanceof ToolCallContext ? ctx.#reason : undefined
    }
  }

  // `logger` etc. carry the attempt's Starting log line when Rust has one to deliver
  // right before the handler runs (one crossing instead of two).
  function makeContext(executionId, toolCallId, sessionId, toolName, attemptNumber, maxAttempts, logger, message, args) {
    if (logger !== undefined) logStarting(logger, message, executionId, toolName, attemptNumber, args)
    return new ToolCallContext(executionId, toolCallId, sessionId, toolName, attemptNumber, maxAttempts)
  }

  // For the argument walker in Rust: an object's toJSON method if it has one (unless
  // told to ignore it), else its own enumerable string keys, as JSON.stringify reads
  // them. One call does both lookups, and Object.keys answers from V8's enum cache,
  // where napi_get_all_property_names builds a key set (about 3x the instructions).
  function keys(o, ignoreToJSON) {
    if (!ignoreToJSON) {
      const toJSON = o.toJSON
      if (typeof toJSON === 'function') return toJSON
    }
    return Object.keys(o)
  }

  // Builds what JSON.parse(text) would, from the tape a worker made of it (see
  // crates/toolhost/src/tape.rs): strings are slices of `text` (V8 shares the text's
  // memory for 13 characters or more), numbers come parsed, and the objects of a key
  // list used often are built by a constructor compiled once per key list.
  //
  // The objects and arrays are not made by literals: V8 tracks where literals allocate,
  // and when a collection ran in the middle of a decode, it found those objects alive
  // and allocated them in the old generation from then on (one B4 process in four ran
  // 70 full collections and spent 4.8 ms per call instead of 1.5). Objects of common key
  // lists come from `new`, arrays are copied out of a stack with the intrinsic `slice`,
  // and only the few objects of rare key lists start as `{}`.
  const NULL = 0, TRUE = 1, FALSE = 2, NUMBER = 3, STRING = 4, ESCAPED = 5, ARRAY = 6, OBJECT = 7
  const stringSlice = String.prototype.slice
  const arraySlice = Array.prototype.slice
  const parse = JSON.parse
  const defineProperty = Object.defineProperty
  // A key list gets a constructor when this many objects of one text use it and it has
  // at most this many keys; at most this many constructors are kept.
  const COMPILED_USES = 8, COMPILED_KEYS = 64, COMPILED = 256
  const compiled = new Map()
  let codegen = true

  // JSON.parse defines own properties. Assigning a key Object.prototype has would
  // instead set the prototype (`__proto__`), call a setter, or throw where
  // Object.prototype is frozen (the override mistake), so those keys are defined.
  const objectPrototype = Object.prototype
  const inherited = (key) => key === '__proto__' || key in objectPrototype
  const own = { value: undefined, writable: true, enumerable: true, configurable: true }
  function defineOwn(o, key, value) {
    own.value = value
    defineProperty(o, key, own)
    own.value = undefined
  }

  // Keys enter the compiled source through JSON.stringify, whose output is a JS string
  // literal for any string.
  function compiledFor(keys) {
    const id = JSON.stringify(keys)
    let make = compiled.get(id)
    if (make === undefined && codegen) {
      const body = keys.map((k) => (inherited(k) ? `defineOwn(this, ${JSON.stringify(k)}, v())` : `this[${JSON.stringify(k)}] = v()`)).join('\n')
      let Shape
      try {
        Shape = new Function('defineOwn', `'use strict'; return function Shape(v) {\n${body}\n}`)(defineOwn)
      } catch {
        codegen = false // code generation from strings is disallowed
        return undefined
      }
      Shape.prototype = objectPrototype
      make = (v) => new Shape(v)
      if (compiled.size >= COMPILED) compiled.clear()
      compiled.set(id, make)
    }
    return make
  }

  function keyByKey(keys) {
    return (v) => {
      const o = {}
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k]
        if (inherited(key)) defineOwn(o, key, v())
        else o[key] = v()
      }
      return o
    }
  }

  // One decode at a time, in these variables rather than in a closure per call: the
  // compiled constructors then always call the same `value`, so V8 keeps the code it
  // optimized for the first decode (a closure per call cost a deoptimization of every
  // constructor on the second call).
  let tText = '', tOps = null, tNumbers = null, tBuilders = null, tStack = null, tAt = 0, tNumber = 0, tTop = 0

  function decodeTape(text, ops, numbers, shapes) {
    if (tOps !== null) throw new Error('toolhost: a tape is already being decoded')
    const list = parse(shapes)
    const builders = []
    for (let s = 0; s < list.length; s++) {
      const keys = arraySlice.call(list[s], 1)
      builders[s] = (list[s][0] >= COMPILED_USES && keys.length <= COMPILED_KEYS && compiledFor(keys)) || keyByKey(keys)
    }
    tText = text
    tOps = ops
    tNumbers = numbers
    tBuilders = builders
    tStack = [null] // general elements from the start: no elements-kind transitions
    tAt = tNumber = tTop = 0
    try {
      return value()
    } finally {
      tText = ''
      tOps = tNumbers = tBuilders = tStack = null
    }
  }

  function value() {
    switch (tOps[tAt++]) {
      case STRING: {
        const start = tOps[tAt]
        const end = tOps[tAt + 1]
        tAt += 2
        return stringSlice.call(tText, start, end)
      }
      case NUMBER: return tNumbers[tNumber++]
      case OBJECT: return tBuilders[tOps[tAt++]](value)
      case ARRAY: {
        const length = tOps[tAt++]
        const base = tTop
        for (let k = 0; k < length; k++) {
          const element = value()
          tStack[tTop++] = element
        }
        const array = arraySlice.call(tStack, base, tTop)
        tTop = base
        return array
      }
      case ESCAPED: {
        const start = tOps[tAt]
        const end = tOps[tAt + 1]
        tAt += 2
        return parse(stringSlice.call(tText, start, end))
      }
      case TRUE: return true
      case FALSE: return false
      case NULL: return null
    }
    throw new Error('toolhost: malformed argument tape')
  }

  // The intrinsic `then`, so a promise whose own `then` was replaced (throwing, or never
  // calling back) still settles the attempt. A broken species constructor makes this
  // throw, and Rust fails the attempt with that error.
  const then = Promise.prototype.then
  function watch(promise, manager, key, attempt) {
    then.call(
      promise,
      (value) => notify(SETTLED, manager, key, attempt, true, value),
      (error) => notify(SETTLED, manager, key, attempt, false, error),
    )
  }

  // Runs a manager's admitted attempts once the current synchronous code is done: Rust
  // passes this function to the intrinsic `then` of `settled`, which queues it as a
  // microtask (`queueMicrotask` would also make an AsyncResource each time).
  const settled = Promise.resolve()
  function runner(manager) {
    return () => notify(RUN_SOON, manager, 0, 0, false, undefined)
  }

  function listenSignal(signal, manager, key) {
    const onAbort = () => notify(SIGNAL_ABORTED, manager, key, 0, false, signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    return onAbort
  }

  function unlistenSignal(signal, onAbort) {
    signal.removeEventListener('abort', onAbort)
  }

  function record(id, toolCallId, sessionId, toolName, args, status, result, error, queuedAt, startedAt, completedAt, duration, attemptNumber, maxAttempts, previousErrors) {
    return {
      id, toolCallId, sessionId, toolName, args, status, result, error,
      timing: { queuedAt, startedAt, completedAt, duration },
      retry: { attemptNumber, maxAttempts, previousErrors },
    }
  }

  // As makeContext: `logger` etc. carry the Completed line delivered before the result.
  function outcome(success, value, execution, logger, message, durationMs) {
    if (logger !== undefined) logCompleted(logger, message, execution.id, execution.toolName, durationMs)
    return success ? { success: true, result: value, execution } : { success: false, error: value, execution }
  }

  function toolError(category, code, message, retryable, retryAfterMs, validationErrors, cause) {
    const e = { category, code, message, retryable }
    if (retryAfterMs !== undefined) e.retryAfterMs = retryAfterMs
    if (validationErrors !== undefined) e.validationErrors = validationErrors
    if (cause !== undefined) e.cause = cause
    return e
  }

  function abortError(message) {
    return new DOMException(message, 'AbortError')
  }

  function timeoutError(message) {
    return new DOMException(message, 'TimeoutError')
  }

  function classifiedError(message, options, category, code, retryable) {
    const error = new Error(String(message), options && options.cause !== undefined ? { cause: options.cause } : undefined)
    error.name = category === 'transient' ? 'TransientError' : 'PermanentError'
    error.code = (options && options.code) || code
    error.category = category
    error.retryable = retryable
    if (options && options.retryAfterMs !== undefined) error.retryAfterMs = options.retryAfterMs
    return error
  }

  function transientError(message, options) {
    return classifiedError(message, options, 'transient', 'TRANSIENT_ERROR', true)
  }

  function permanentError(message, options) {
    return classifiedError(message, options, 'permanent', 'PERMANENT_ERROR', false)
  }

  // The built-in metadata interceptor: a copy of a plain-object result, stamped.
  function withMetadata(result, duration_ms, tool_name, timestamp) {
    if (result === null || typeof result !== 'object' || Array.isArray(result)) return result
    const proto = Object.getPrototypeOf(result)
    if (proto !== Object.prototype && proto !== null) return result
    // Object.assign onto a fresh object is ~30 ns in Node 20 where a spread is ~270 ns.
    // Assign sets where a spread defines: an own "__proto__" key would set the copy's
    // prototype, and a key that is read-only on a frozen Object.prototype would throw,
    // so those (rare) cases take the spread.
    let out
    try {
      out = Object.hasOwn(result, '__proto__') ? { ...result } : Object.assign({}, result)
    } catch {
      out = { ...result }
    }
    out._execution_metadata = { duration_ms, tool_name, timestamp }
    return out
  }

  // `manager.use()` interceptors around one attempt, in the order they were added.
  function runChain(interceptors, handler, args, ctx) {
    const ictx = {
      toolName: ctx.toolName, args, executionId: ctx.executionId, toolCallId: ctx.toolCallId,
      sessionId: ctx.sessionId, attemptNumber: ctx.attemptNumber, maxAttempts: ctx.maxAttempts,
      get signal() { return ctx.signal },
    }
    let reached = -1
    const dispatch = (i) => {
      if (i <= reached) throw new Error('next() called more than once by an interceptor')
      reached = i
      if (i === interceptors.length) {
        // An interceptor that cancelled the execution (or let it time out) before
        // calling next() does not get the handler run.
        const aborted = ToolCallContext.abortReason(ctx)
        if (aborted !== undefined) throw aborted
        return handler(ictx.args, ctx)
      }
      // `next()` always returns a promise, whether the handler is sync or async.
      return interceptors[i](ictx, () => {
        try {
          // A fresh promise, through the intrinsic `then`, so a handler's promise with a
          // replaced `then` reaches the interceptor settled like any other.
          const result = dispatch(i + 1)
          return result instanceof Promise ? then.call(result, (value) => value) : Promise.resolve(result)
        } catch (err) {
          return Promise.reject(err)
        }
      })
    }
    return dispatch(0)
  }

  // Text for a thrown value, which never throws itself: a Symbol, a null-prototype
  // object, or a throwing `stack` getter or `toString` all get some text.
  function thrownText(err) {
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

  // A warning about a user callback that threw; it must not throw in turn.
  function warn(message, type) {
    try {
      process.emitWarning(message, type)
    } catch {}
  }

  // The built-in logging interceptor's lines, with their fields passed one by one:
  // one function per kind of line, so each passes only the fields it has.
  function deliver(logger, level, message, fields) {
    try {
      logger(level, message, fields)
    } catch (err) {
      warn(`the toolhost logger threw: ${thrownText(err)}`, 'ToolhostLoggerWarning')
    }
  }

  function logStarting(logger, message, executionId, toolName, attemptNumber, args) {
    deliver(logger, 'info', message, args === undefined ? { executionId, toolName, attemptNumber } : { executionId, toolName, attemptNumber, args })
  }

  function logCompleted(logger, message, executionId, toolName, durationMs) {
    deliver(logger, 'info', message, { executionId, toolName, durationMs })
  }

  function callLogger(logger, level, message, executionId, toolName, attemptNumber, args, durationMs, error, stack) {
    const fields = { executionId, toolName }
    if (attemptNumber !== undefined) fields.attemptNumber = attemptNumber
    if (args !== undefined) fields.args = args
    if (durationMs !== undefined) fields.durationMs = durationMs
    if (error !== undefined) fields.error = error
    if (stack !== undefined) fields.stack = stack
    deliver(logger, level, message, fields)
  }

  // Listener lists. `counts[i]` is read by Rust straight from memory to skip building
  // events nobody listens to; TYPES gives each event type its slot.
  const TYPES = [
    'tool-execution-started', 'tool-execution-validating', 'tool-execution-executing',
    'tool-execution-retrying', 'tool-execution-succeeded', 'tool-execution-failed',
    'tool-execution-cancelled', 'tool-invocation-recorded', 'tool-registry-change', 'tool-audit-error',
  ]
  const SLOT = new Map(TYPES.map((t, i) => [t, i]))

  function emitter() {
    return { lists: new Map(), counts: new Uint32Array(16) }
  }

  function addListener(em, type, fn, detailOnly) {
    type = String(type)
    if (typeof fn !== 'function' && !(fn && typeof fn.handleEvent === 'function')) {
      throw new TypeError(`listener for '${type}' must be a function or an object with handleEvent()`)
    }
    let list = em.lists.get(type)
    if (list === undefined) em.lists.set(type, (list = []))
    if (!list.some((l) => l.fn === fn && l.detailOnly === detailOnly)) {
      list.push({ fn, detailOnly })
      const slot = SLOT.get(type)
      if (slot !== undefined) em.counts[slot]++
    }
    return detailOnly ? () => removeListener(em, type, fn, true) : undefined
  }

  function removeListener(em, type, fn, detailOnly) {
    type = String(type)
    const list = em.lists.get(type)
    if (list === undefined) return false
    const i = list.findIndex((l) => l.fn === fn && l.detailOnly === detailOnly)
    if (i < 0) return false
    list.splice(i, 1)
    const slot = SLOT.get(type)
    if (slot !== undefined) em.counts[slot]--
    return true
  }

  function emit(em, type, detail, target) {
    const list = em.lists.get(type)
    if (list === undefined || list.length === 0) return
    const event = { type, detail, target }
    for (const l of list.length === 1 ? list : list.slice()) {
      try {
        if (l.detailOnly) l.fn.call(target, detail)
        else if (typeof l.fn === 'function') l.fn.call(target, event)
        else l.fn.handleEvent(event)
      } catch (err) {
        // A throwing listener must not disturb the execution or the other listeners.
        warn(`a '${type}' listener threw: ${thrownText(err)}`, 'ToolhostListenerWarning')
      }
    }
  }

  // Lifecycle event builders: positional arguments keep each detail's shape stable.
  const emitStarted = (em, execution) => emit(em, 'tool-execution-started', { execution })
  const emitValidating = (em, executionId, toolName, args) => emit(em, 'tool-execution-validating', { executionId, toolName, args })
  const emitExecuting = (em, executionId, toolName, attemptNumber) =>
    emit(em, 'tool-execution-executing', { executionId, toolName, attemptNumber })
  const emitRetrying = (em, executionId, toolName, attemptNumber, maxAttempts, error, delayMs) =>
    emit(em, 'tool-execution-retrying', { executionId, toolName, attemptNumber, maxAttempts, error, delayMs })
  const emitSucceeded = (em, execution, result) => emit(em, 'tool-execution-succeeded', { execution, result })
  const emitFailed = (em, execution, error) => emit(em, 'tool-execution-failed', { execution, error })
  const emitCancelled = (em, executionId, toolName) => emit(em, 'tool-execution-cancelled', { executionId, toolName })

  // `manager.executeToolCalls`: runs the calls through the manager, at most
  // `concurrency` at once, and formats the replies in call order.
  async function executeToolCalls(manager, managerId, provider, calls, options) {
    const concurrency = Math.max(1, Math.floor(Number(options.concurrency) || 4))
    const results = new Array(calls.length)
    let next = 0
    const worker = async () => {
      while (next < calls.length) {
        const i = next++
        const call = calls[i]
        results[i] = await manager.execute(call.name, call.arguments, {
          toolCallId: call.id, sessionId: options.sessionId, signal: options.signal,
          timeoutMs: options.timeoutMs, retry: options.retry,
        })
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, worker))
    const { messages } = formatReplies(managerId, provider, options.sessionId, calls, results)
    return { messages, calls, results }
  }

  // The text a model gets for one failed call: the same error reply
  // `executeToolCalls` would send (validation issues with the expected schema, the
  // list of available tools, ...), written in Rust.
  function modelErrorText(managerId, sessionId, call, result) {
    const replies = formatReplies(managerId, 'openai', sessionId, [call], [result])
    return replies !== undefined ? replies.messages[0].content : result.error.message
  }

  // Thrown by an AI SDK tool's `execute`, so the AI SDK reports a tool error to the
  // model: `message` is written for the model, `toolError` is the structured error,
  // `cause` the handler's own error when it threw one.
  function toolCallError(text, error, execution) {
    const e = new Error(text, error.cause !== undefined ? { cause: error.cause } : undefined)
    e.name = 'ToolCallError'
    e.code = error.code
    e.toolError = error
    e.execution = execution
    return e
  }

  // `toAiSdkTools`: `{ [name]: tool }` in the Vercel AI SDK's shape. The input schema
  // is what `ai`'s `jsonSchema()` returns (marked with `Symbol.for('vercel.ai.schema')`),
  // built here because the package does not depend on `ai`. Its `validate` lets every
  // value through: the manager validates in Rust, so a bad call is answered with
  // toolhost's error text and still shows in events and audit.
  const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema')

  function aiSdkSchema(schema) {
    return { [AI_SDK_SCHEMA]: true, _type: undefined, jsonSchema: schema, validate: (value) => ({ success: true, value }) }
  }

  function aiSdkTools(manager, managerId, sessionId, declarations) {
    const tools = {}
    for (const { name, description, inputSchema, metadata } of declarations) {
      const tool = { description, inputSchema: aiSdkSchema(inputSchema) }
      if (metadata.title !== undefined) tool.title = metadata.title
      tool.execute = async (input, options) => {
        const toolCallId = options !== undefined ? options.toolCallId : undefined
        const signal = options !== undefined ? options.abortSignal : undefined
        const result = await manager.execute(name, input, { toolCallId, signal, sessionId })
        if (result.success) return result.result
        const text = modelErrorText(managerId, sessionId, { id: toolCallId || '', name, arguments: input }, result)
        throw toolCallError(text, result.error, result.execution)
      }
      tools[name] = tool
    }
    return tools
  }

  return {
    executeToolCalls,
    aiSdkTools,
    withMetadata, runChain, callLogger, logStarting, logCompleted,
    emitStarted, emitValidating, emitExecuting, emitRetrying, emitSucceeded, emitFailed, emitCancelled,
    makeContext,
    abortContext: (ctx, reason) => ToolCallContext.abort(ctx, reason),
    watch,
    listenSignal,
    unlistenSignal,
    record,
    outcome,
    toolError,
    abortError,
    timeoutError,
    transientError,
    permanentError,
    emitter,
    addListener,
    removeListener,
    emit,
    parse: JSON.parse,
    decodeTape,
    keys,
    runner,
    settled,
    then,
  }
})
