// What a handler and an interceptor receive besides the arguments, and the built-in
// pieces around a handler call that only JS can do.

/** The second argument of every handler call. */
export class ToolCallContext {
  #controller = undefined
  #reason = undefined
  #report
  #exec
  #attempt
  #bound = undefined
  /** For attempt `attemptNumber` of the manager's execution `exec` (js/manager.mjs
   * `Execution`); `report(exec, attemptNumber, progress)` reports its progress. */
  constructor(exec, attemptNumber, report, idempotencyKey) {
    this.#report = report
    this.#exec = exec
    // Its own copy: `attemptNumber` below is the handler's to overwrite.
    this.#attempt = attemptNumber
    /** The `context` call option of the `execute` that started this execution. */
    this.context = exec.context
    /** Who called, as the transport authenticated them (`authInfo` call option; over
     * MCP, the SDK's `AuthInfo` of the request: `{ token, clientId, scopes, ... }`). */
    this.authInfo = exec.authInfo
    /** The call's idempotency key (its `idempotencyKey`, else its tool-call id, else its
     * execution id): the same on every attempt, to pass on to an API that takes one. */
    this.idempotencyKey = idempotencyKey
    this.executionId = exec.id
    this.toolCallId = exec.toolCallId
    this.sessionId = exec.sessionId
    this.toolName = exec.toolName
    this.attemptNumber = attemptNumber
    this.maxAttempts = exec.maxAttempts
  }

  /** Aborted when the execution is cancelled or this attempt times out (made on first use). */
  get signal() {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#reason !== undefined) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }

  /** Reports progress `{ progress, total?, message? }`: a `tool-execution-progress`
   * event, and with `resetTimeoutOnProgress` a fresh timeout for this attempt. A getter
   * of a bound function, so `const { reportProgress } = ctx` works too. */
  get reportProgress() {
    if (this.#bound === undefined) {
      const exec = this.#exec
      const attempt = this.#attempt
      this.#bound = (report) => this.#report(exec, attempt, report)
    }
    return this.#bound
  }

  /** The execution and attempt number `ctx` was made for. */
  static attemptOf(ctx) {
    return [ctx.#exec, ctx.#attempt]
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

// The intrinsic `then`, so a promise whose own `then` was replaced (throwing, or never
// calling back) still settles the attempt.
export const then = Promise.prototype.then

/** `manager.use()` interceptors around one attempt, in the order they were added.
 * `passOn(ctx, args)` is what the handler receives for the arguments they pass on
 * (checked again by the engine when they changed); it throws when they may not run. */
export function runChain(interceptors, handler, args, ctx, passOn) {
  const ictx = {
    toolName: ctx.toolName, args, executionId: ctx.executionId, toolCallId: ctx.toolCallId,
    sessionId: ctx.sessionId, attemptNumber: ctx.attemptNumber, maxAttempts: ctx.maxAttempts, context: ctx.context, authInfo: ctx.authInfo, idempotencyKey: ctx.idempotencyKey,
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
      return handler(passOn(ctx, ictx.args), ctx)
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

/** For the built-in metadata stamp: a copy of a plain-object result (`undefined` for any
 * other value), made when the handler's value settles, so that its getters are read once,
 * from where user code may run, and the stamp, made while the engine's output is read,
 * runs none. Throws what reading the result throws. */
export function plainCopy(result) {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return undefined
  const proto = Object.getPrototypeOf(result)
  if (proto !== Object.prototype && proto !== null) return undefined
  // Object.assign onto a fresh object is ~30 ns in Node 20 where a spread is ~270 ns.
  // Assign sets where a spread defines: an own "__proto__" key would set the copy's
  // prototype, and a key that is read-only on a frozen Object.prototype would throw,
  // so those (rare) cases take the spread. A getter that throws is not read again.
  if (Object.hasOwn(result, '__proto__')) return { ...result }
  try {
    return Object.assign({}, result)
  } catch (err) {
    if (err instanceof TypeError && Object.isFrozen(Object.prototype)) return { ...result }
    throw err
  }
}
