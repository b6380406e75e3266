// The browser entry: the API over the wasm-bindgen build of the engine (wasm/, made by
// `npm run build:wasm`). No special headers, no eval, no workers: the module is fetched
// next to this file and instantiated once, before the API is handed out (top-level
// await). Timers are the page's own setTimeout.
import init, { EngineCore as WasmEngine, RegistryCore, unknownOption } from '../wasm/toolhost_wasm.js'
import { setBackend } from './backend.mjs'
import { wake } from './manager.mjs'

const wasm = await init()

let nextEngine = 1

// setTimeout fires at once for a delay past 2^31 - 1 ms (about 24.8 days): longer
// waits are made of several timers. `handle.id` is the current one, for clearTimeout.
const LONGEST = 2 ** 31 - 1
function later(f, ms, handle = {}) {
  handle.id = ms > LONGEST ? setTimeout(() => later(f, ms - LONGEST, handle), LONGEST) : setTimeout(f, ms)
  return handle
}

/** The wasm EngineCore with what the runtime expects of a backend's engine: a scratch
 * view over wasm memory, and the timers the engine asks for armed on setTimeout. */
class EngineCore {
  #core
  #view = null
  /** `${kind}:${key}` -> the `later` handle of that timer (all but backoff delays) */
  #timeouts = new Map()

  constructor(registry) {
    this.#core = new WasmEngine(registry)
    this.id = nextEngine++
  }

  init(options) {
    return this.#core.init(options)
  }

  /** A view of the engine's scratch buffer, made again when wasm memory has grown. */
  get scratch() {
    if (this.#view === null || this.#view.buffer !== wasm.memory.buffer) {
      this.#view = new Float64Array(wasm.memory.buffer, this.#core.scratchPtr(), this.#core.scratchLen())
    }
    return this.#view
  }

  bigOps() {
    return this.#core.bigOps()
  }

  setWanted(mask, audit) {
    this.#core.setWanted(mask, audit)
  }

  // The engine's timer requests: [action (0 arm, 1 clear), kind (0 attempt timeout,
  // 1 backoff, 2 total timeout, 3 approval timeout), key, attempt, ms] each.
  #timers(text) {
    if (!this.#core.hasTimers()) return text
    const t = this.#core.takeTimers()
    for (let i = 0; i < t.length; i += 5) {
      const arm = t[i] === 0, kind = t[i + 1], key = t[i + 2], attempt = t[i + 3], ms = t[i + 4]
      // A backoff that ends for an execution no longer backing off is stale to the
      // engine, so backoff timers are never cleared.
      if (kind === 1) {
        if (arm) later(() => this.#fired(1, key, 0), ms)
        continue
      }
      const id = `${kind}:${key}`
      const old = this.#timeouts.get(id)
      if (old !== undefined) {
        clearTimeout(old.id)
        this.#timeouts.delete(id)
      }
      if (arm) this.#timeouts.set(id, later(() => this.#fired(kind, key, attempt), ms))
    }
    return text
  }

  #fired(kind, key, attempt) {
    if (kind !== 1) this.#timeouts.delete(`${kind}:${key}`)
    const core = this.#core
    const text = kind === 0 ? core.timedOut(key, attempt) : kind === 1 ? core.resume(key) : kind === 2 ? core.totalTimedOut(key) : core.approvalExpired(key)
    wake(this.id, 0, this.#timers(text))
  }

  start(ticket, name, args, options, aborted, unreadable) {
    return this.#timers(this.#core.start(ticket, name, args, options, aborted, unreadable))
  }

  settle(key, attempt, result) {
    return this.#timers(this.#core.settle(key, attempt, result))
  }

  approvalDecided(key, needed, invalid) {
    return this.#timers(this.#core.approvalDecided(key, needed, invalid))
  }

  // The ticket is the journal's: the browser has none, so every answer is at once.
  approve(id, args, by) {
    return this.#timers(this.#core.approve(id, args, by))
  }

  deny(id, reason, by) {
    return this.#timers(this.#core.deny(id, reason, by))
  }

  pendingApprovals() {
    return this.#core.pendingApprovals()
  }

  progress(key, attempt, progress, total, message) {
    return this.#timers(this.#core.progress(key, attempt, progress, total, message))
  }

  preliminary(key, attempt) {
    return this.#timers(this.#core.preliminary(key, attempt))
  }

  fail(key, attempt, thrown) {
    return this.#timers(this.#core.fail(key, attempt, thrown))
  }

  cancel(id) {
    return this.#timers(this.#core.cancel(id))
  }

  cancelKeys(keys) {
    return this.#timers(this.#core.cancelKeys(keys))
  }

  cancelAll(session) {
    return this.#timers(this.#core.cancelAll(session ?? undefined))
  }

  destroySession(session) {
    return this.#timers(this.#core.destroySession(session))
  }

  snapshot(id) {
    return this.#core.snapshot(id)
  }

  idsForToolCall(id) {
    return this.#core.idsForToolCall(id)
  }

  stats(name) {
    return this.#core.stats(name)
  }
}

setBackend({ name: 'wasm', RegistryCore, EngineCore, largeText: undefined, auditFile: false, unknownOption })

export * from './api.mjs'
