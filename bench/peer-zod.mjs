// The second peer: the stack the AI SDK's users most often have. zod 4 validates
// (each JSON Schema converted once, at register, with z.fromJSONSchema: the schema a
// user would write with z.object), p-retry retries with exponential backoff, and
// p-timeout bounds each attempt (its AbortSignal aborted when it fires). Events,
// history, logging and metadata are bench/peer.mjs's own, so the two peers differ only
// in those three libraries.
import { z } from 'zod'
import pRetry from 'p-retry'
import pTimeout, { TimeoutError } from 'p-timeout'
import { Problem, ToolExecutionManager as AjvCockatielManager, TransientError, transientError } from './peer.mjs'

export { TransientError, transientError }

export class ToolRegistry {
  constructor() {
    this.tools = new Map()
  }
  register({ name, description, inputSchema, handler, metadata = {} }) {
    if (this.tools.has(name)) throw new Error(`tool already registered: ${name}`)
    const schema = z.fromJSONSchema(inputSchema) // converted once, at register
    this.tools.set(name, { name, description, inputSchema, handler, metadata, schema })
  }
  get(name) { return this.tools.get(name) }
  /** The arguments the handler gets (zod's parsed copy, as the AI SDK passes), or a Problem. */
  check(tool, args) {
    const r = tool.schema.safeParse(args)
    return r.success ? r.data : new Problem(z.prettifyError(r.error), r.error.issues)
  }
}

export class ToolExecutionManager extends AjvCockatielManager {
  constructor(registry, opts = {}) {
    super(registry, opts)
    const r = opts.retry ?? {}
    this.retryOptions = {
      retries: this.maxAttempts - 1,
      minTimeout: r.baseDelay ?? 100,
      maxTimeout: r.maxDelay ?? 30_000,
      factor: r.backoffMultiplier ?? 2,
      randomize: (r.jitter ?? 'full') !== 'none',
      shouldRetry: ({ error }) => this.isRetryable(error),
    }
  }

  categorize(err) {
    if (err instanceof TimeoutError) return 'timeout'
    if (err instanceof TransientError) return 'transient'
    return 'execution'
  }

  attempts(attempt, ms, signal) {
    return pRetry(async (attemptNumber) => {
      const controller = new AbortController()
      try {
        return await pTimeout(attempt({ signal: controller.signal, attempt: attemptNumber - 1 }), { milliseconds: ms })
      } catch (err) {
        if (err instanceof TimeoutError) controller.abort(err)
        throw err
      }
    }, signal === undefined ? this.retryOptions : { ...this.retryOptions, signal })
  }
}
