// The browser entry: the API over the wasm-bindgen build of the engine (wasm/, made by
// `npm run build:wasm`). No special headers, no eval, no workers. Importing it blocks
// nothing: the engine (a .wasm fetched next to this file) loads on the first `ready()`,
// and the classes need it from their constructor on, so a page renders first and
// awaits `ready()` where it first needs tools. Timers are the page's own setTimeout.
import init, { EngineCore as WasmEngine, RegistryCore, unknownOption } from '../wasm/toolhost_wasm.js'
import { setBackend } from './backend.mjs'
import { checkOptions, toolhostError } from './errors.mjs'
import { wake } from './manager.mjs'

/** The wasm module's exports, once `ready()` has loaded them. */
let wasm = null
/** The load: null before the first `ready()` (and after a load that failed). */
let loading = null

function notReady() {
  // The first use starts the load, so a page that tries again later finds the engine.
  ready().catch(() => {})
  return toolhostError('ENGINE_NOT_READY', "toolhost's engine (WebAssembly) is not loaded yet in this page: `await ready()` (import { ready } from 'toolhost') before creating a ToolRegistry or a ToolExecutionManager")
}

/** The backend until the engine is loaded: what needs the engine says to await `ready()`. */
class Unloaded {
  constructor() {
    throw notReady()
  }
}
setBackend({
  name: 'wasm', RegistryCore: Unloaded, EngineCore: Unloaded, largeText: undefined, auditFile: false,
  // For a misspelt option before the engine is there (`ready({ wams })`): no did-you-mean.
  unknownOption: (key, known, what) => `unknown option \`${key}\` in ${what}; expected one of ${known.map((k) => `\`${k}\``).join(', ')}`,
})

const READY_OPTIONS = ['wasm']

/**
 * Loads the engine: fetches and instantiates its `.wasm` (once; later calls return the
 * same promise). Until it resolves, `new ToolRegistry()` throws `ENGINE_NOT_READY`.
 * `options.wasm` says where the `.wasm` is when it is not next to this module (a bundler
 * that does not copy it, a CDN): a URL or string, a `Response`, its bytes, or a compiled
 * `WebAssembly.Module`. A failed load rejects with `ENGINE_LOAD_FAILED`; the next call
 * tries again. A misspelt option rejects with `INVALID_CONFIG`.
 */
export function ready(options) {
  if (options !== undefined) {
    try {
      if (options === null || typeof options !== 'object') throw toolhostError('INVALID_CONFIG', 'ready() takes { wasm } or nothing')
      checkOptions(options, READY_OPTIONS, 'ready() options')
    } catch (err) {
      return Promise.reject(err)
    }
  }
  if (loading === null) {
    const source = options?.wasm
    loading = init(source === undefined ? undefined : { module_or_path: source }).then(
      (exports) => {
        wasm = exports
        setBackend({ name: 'wasm', RegistryCore, EngineCore, largeText: undefined, auditFile: false, unknownOption })
      },
      (err) => {
        loading = null
        // wasm-bindgen's message names the URL of a fetch that failed.
        throw toolhostError('ENGINE_LOAD_FAILED', `toolhost could not load its WebAssembly engine: ${err?.message ?? err}. ` +
          'A bundler that does not copy the .wasm next to the bundle (esbuild, Rollup) needs it copied there from node_modules/toolhost/wasm/, or its URL passed as ready({ wasm: url })', { cause: err })
      },
    )
  }
  return loading
}

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

export * from './api.mjs'
