// The stack a user would build instead of toolhost, from real libraries used as
// their docs recommend: ajv (+ ajv-formats) for validation, cockatiel for
// retry/backoff/timeout, an EventTarget for lifecycle events, and a bounded
// in-memory execution history. Same API shape as toolhost so the scenarios
// drive both sides with identical code.
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import {
  retry, handleWhen, timeout, wrap, TimeoutStrategy, TaskCancelledError, ExponentialBackoff,
  noJitterGenerator, fullJitterGenerator, halfJitterGenerator, decorrelatedJitterGenerator,
} from 'cockatiel'

const JITTER = {
  none: noJitterGenerator, full: fullJitterGenerator,
  equal: halfJitterGenerator, decorrelated: decorrelatedJitterGenerator,
}

export class TransientError extends Error {
  constructor(message, { retryAfterMs } = {}) {
    super(message)
    this.name = 'TransientError'
    this.retryAfterMs = retryAfterMs
  }
}
export const transientError = (message, opts) => new TransientError(message, opts)

function categorize(err) {
  if (err instanceof TaskCancelledError) return 'timeout'
  if (err instanceof TransientError) return 'transient'
  return 'execution'
}

/** Arguments that failed validation (what `ToolRegistry.check` returns for them). */
export class Problem {
  constructor(message, details) {
    this.message = message
    this.details = details
  }
}

export class ToolRegistry {
  constructor() {
    this.ajv = new Ajv()
    addFormats(this.ajv)
    this.tools = new Map()
  }
  register({ name, description, inputSchema, handler, metadata = {} }) {
    if (this.tools.has(name)) throw new Error(`tool already registered: ${name}`)
    const validate = this.ajv.compile(inputSchema) // compiled once, at register
    this.tools.set(name, { name, description, inputSchema, handler, metadata, validate })
  }
  get(name) { return this.tools.get(name) }
  /** The arguments the handler gets, or a Problem. */
  check(tool, args) {
    return tool.validate(args) ? args : new Problem(this.ajv.errorsText(tool.validate.errors), tool.validate.errors)
  }
}

// Cooperative timeout: the handler gets the signal; we also stop waiting for a
// handler that ignores it, so a call can never outlive its timeout.
function untilAborted(promise, signal, ms) {
  if (!promise || typeof promise.then !== 'function') return promise
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new TaskCancelledError(`Operation timed out after ${ms}ms`))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v) },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e) },
    )
  })
}

export class ToolExecutionManager {
  constructor(registry, opts = {}) {
    const r = opts.retry ?? {}
    this.registry = registry
    this.maxAttempts = r.maxAttempts ?? 3
    const categories = new Set(r.retryableCategories ?? ['transient', 'timeout'])
    this.isRetryable = (err) => categories.has(this.categorize(err))
    this.backoff = new ExponentialBackoff({
      initialDelay: r.baseDelay ?? 100,
      maxDelay: r.maxDelay ?? 30_000,
      exponent: r.backoffMultiplier ?? 2,
      generator: JITTER[r.jitter ?? 'full'],
    })
    this.timeoutMs = opts.timeoutMs ?? 30_000
    this.policies = new Map() // one cockatiel policy per distinct timeout value
    this.historyLimit = opts.historyLimit ?? 1000
    this.history = []
    this.events = new EventTarget()
    this.listenerCounts = Object.create(null)
    this.logger = opts.logging && opts.logger ? opts.logger : null
    // As toolhost's option: stamp plain-object results with _execution_metadata.
    this.metadata = opts.metadata === true
  }

  categorize(err) { return categorize(err) }

  /** Runs `attempt({ signal, attempt })` with retries, each attempt under a timeout of `ms`. */
  attempts(attempt, ms, signal) { return this.policyFor(ms).execute(attempt, signal) }

  policyFor(ms) {
    let p = this.policies.get(ms)
    if (!p) {
      // cockatiel's maxAttempts counts retries; ours counts attempts.
      const retryPolicy = retry(handleWhen(this.isRetryable), { maxAttempts: this.maxAttempts - 1, backoff: this.backoff })
      p = wrap(retryPolicy, timeout(ms, TimeoutStrategy.Cooperative)) // timeout per attempt
      this.policies.set(ms, p)
    }
    return p
  }

  addEventListener(type, fn) {
    this.listenerCounts[type] = (this.listenerCounts[type] ?? 0) + 1
    this.events.addEventListener(type, fn)
  }
  removeEventListener(type, fn) {
    if (this.listenerCounts[type]) this.listenerCounts[type]--
    this.events.removeEventListener(type, fn)
  }
  emit(type, detail) {
    if (this.listenerCounts[type]) this.events.dispatchEvent(new CustomEvent(type, { detail }))
  }
  log(level, message, exec, extra) {
    this.logger(level, message, { executionId: exec.id, toolName: exec.toolName, status: exec.status, ...extra })
  }

  async execute(toolName, input, opts = {}) {
    const id = randomUUID()
    const exec = {
      id, toolCallId: opts.toolCallId ?? id, toolName, args: input, status: 'queued', result: undefined, error: undefined,
      timing: { queuedAt: Date.now(), startedAt: undefined, completedAt: undefined, duration: undefined },
      retry: { attemptNumber: 0, maxAttempts: this.maxAttempts, previousErrors: [] },
    }
    const tool = this.registry.get(toolName)
    this.history.push(exec)
    if (this.history.length > this.historyLimit) this.history.shift()
    const t0 = performance.now()
    exec.timing.startedAt = Date.now()
    exec.status = 'running'
    this.emit('tool-execution-started', { execution: exec })
    // The arguments preview toolhost logs by default (truncateLogs: 100).
    if (this.logger) this.log('info', 'tool execution started', exec, { args: (typeof input === 'string' ? input : JSON.stringify(input)).slice(0, 100) })
    if (!tool) return this.fail(exec, t0, { category: 'not_found', message: `unknown tool: ${toolName}` })

    // validate
    let args = input
    this.emit('tool-execution-validating', { execution: exec })
    if (typeof input === 'string') {
      try { args = JSON.parse(input) } catch (e) {
        return this.fail(exec, t0, { category: 'validation', message: `invalid JSON: ${e.message}` })
      }
    }
    exec.args = args
    const checked = this.registry.check(tool, args)
    if (checked instanceof Problem) return this.fail(exec, t0, { category: 'validation', message: checked.message, details: checked.details })
    args = checked

    // execute with retry + timeout
    const ms = opts.timeoutMs ?? this.timeoutMs
    try {
      let result = await this.attempts(async ({ signal, attempt }) => {
        exec.retry.attemptNumber = attempt + 1
        if (attempt > 0) {
          this.emit('tool-execution-retrying', { execution: exec, attempt: attempt + 1 })
          if (this.logger) this.log('warn', 'tool execution retrying', exec, { attempt: attempt + 1 })
        }
        this.emit('tool-execution-executing', { execution: exec, attempt: attempt + 1 })
        try {
          return await untilAborted(tool.handler(args, { signal, attempt: attempt + 1, executionId: id }), signal, ms)
        } catch (err) {
          exec.retry.previousErrors.push({ category: this.categorize(err), message: err?.message })
          throw err
        }
      }, ms, opts.signal)
      exec.status = 'succeeded'
      this.finish(exec, t0)
      if (this.metadata && result !== null && typeof result === 'object' && Object.getPrototypeOf(result) === Object.prototype) {
        const duration_ms = Math.round(exec.timing.duration * 100) / 100
        result = { ...result, _execution_metadata: { duration_ms, tool_name: toolName, timestamp: new Date().toISOString() } }
      }
      exec.result = result
      this.emit('tool-execution-succeeded', { execution: exec, result })
      if (this.logger) this.log('info', 'tool execution succeeded', exec, { durationMs: exec.timing.duration })
      return { success: true, result, execution: exec }
    } catch (err) {
      if (opts.signal?.aborted) {
        exec.status = 'cancelled'
        exec.error = { category: 'cancelled', message: 'execution cancelled' }
        this.finish(exec, t0)
        this.emit('tool-execution-cancelled', { execution: exec })
        if (this.logger) this.log('warn', 'tool execution cancelled', exec)
        return { success: false, error: exec.error, execution: exec }
      }
      return this.fail(exec, t0, { category: this.categorize(err), message: err?.message ?? String(err) })
    }
  }

  finish(exec, t0) {
    exec.timing.completedAt = Date.now()
    exec.timing.duration = performance.now() - t0
  }
  fail(exec, t0, error) {
    exec.status = 'failed'
    exec.error = error
    this.finish(exec, t0)
    this.emit('tool-execution-failed', { execution: exec, error })
    if (this.logger) this.log('error', 'tool execution failed', exec, { category: error.category, durationMs: exec.timing.duration })
    return { success: false, error, execution: exec }
  }
}
