// The EngineCore of the engine's WebAssembly build (wasm/, crates/toolhost-wasm), as the
// runtime (js/manager.mjs) expects a backend's engine: a scratch view over wasm memory,
// and the timers the engine asks for armed by the host. Two hosts use it: a browser
// (js/browser.mjs: the page's setTimeout) and Node when no native addon loads
// (js/wasm-node.mjs: unref'd timers, the process kept alive while executions are in
// flight, and the audit file written from JS).
import { wake } from './manager.mjs'

// setTimeout fires at once for a delay past 2^31 - 1 ms (about 24.8 days): longer
// waits are made of several timers. `handle.id` is the current one, for clearing it.
const LONGEST = 2 ** 31 - 1

/**
 * The EngineCore class over `glue` (the wasm-bindgen module, initialised) for `host`:
 * - `setTimer(f, ms)` / `clearTimer(id)`: the host's timers;
 * - `keepAlive(busy)` (optional): called when an engine gets executions in flight
 *   (`true`) and when its last one ends (`false`);
 * - `openAuditFile(path, sync)` (optional): `{ append(line) }` writing `auditLog`, whose
 *   answer is why a record could not be written, or undefined.
 */
export function wasmEngineCore(glue, host) {
  const { setTimer, clearTimer, keepAlive, openAuditFile } = host
  let nextEngine = 1

  function later(f, ms, handle = {}) {
    handle.id = ms > LONGEST ? setTimer(() => later(f, ms - LONGEST, handle), LONGEST) : setTimer(f, ms)
    return handle
  }

  /** `view` while it still covers wasm memory, else a new `Kind` view of `length`
   * elements at `address` (growing the memory detaches the buffer views were made over). */
  function over(view, Kind, address, length) {
    const buffer = glue.memory().buffer
    return view !== null && view.buffer === buffer ? view : new Kind(buffer, address, length)
  }

  const decoder = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true })
  let bytes = null // a Uint8Array over all of wasm memory

  /** The ops' strings the last engine call left in wasm memory (status: address,
   * length, whether ASCII). A short ASCII text is read byte by byte: in Chromium that
   * is cheaper than a TextDecoder call for the few dozen bytes a call's strings take. */
  function textOf(status) {
    const ptr = status[2], len = status[3]
    if (len === 0) return ''
    bytes = over(bytes, Uint8Array, 0, undefined)
    if (status[4] === 1 && len <= 160) {
      let text = ''
      for (let i = ptr, end = ptr + len; i < end; i++) text += String.fromCharCode(bytes[i])
      return text
    }
    return decoder.decode(bytes.subarray(ptr, ptr + len))
  }

  return class EngineCore {
    #core
    #view = null
    #status = null
    /** Where the scratch buffer and the status block are in wasm memory: fixed for the
     * engine's life, so read once. */
    #scratchAt
    #scratchLen
    #statusAt
    #statusLen
    /** The timeouts armed (all but backoff delays), by `key * 4 + kind`: `{ due, kind,
     * key, attempt }`, `due` on the performance.now() clock. */
    #deadlines = new Map()
    /** One host timer, for the earliest deadline (when it was armed: `#hostDue`). It is
     * not cleared when that deadline is: it fires, finds nothing due and arms for the
     * next. So a call that ends before its timeout, as nearly all do, arms and clears
     * no host timer at all (in Chromium a setTimeout and a clearTimeout were 2.9 of a
     * B1 call's 17.6 µs). */
    #hostTimer = undefined
    #hostDue = Infinity
    /** Whether this engine holds the host alive (executions in flight). */
    #held = false
    /** The audit file this host writes (`{ append(line) }`), when `auditLog` names one;
     * the manager hands it each record. */
    auditFile = undefined

    constructor(registry) {
      this.#core = new glue.EngineCore(registry)
      this.#scratchAt = this.#core.scratchPtr()
      this.#scratchLen = this.#core.scratchLen()
      this.#statusAt = this.#core.statusPtr()
      this.#statusLen = this.#core.statusLen()
      this.id = nextEngine++
    }

    init(options) {
      let auditLog
      let auditSync
      if (openAuditFile !== undefined && options.includes('"auditLog"')) {
        // The file is the host's: the engine gets the options without it, once it has
        // checked them whole (auditLog '' and the like are its to refuse).
        const parsed = JSON.parse(options)
        if (typeof parsed?.auditLog === 'string') {
          const refused = this.#core.checkOptions(options)
          if (refused !== '') return refused
          ;({ auditLog, auditSync } = parsed)
          delete parsed.auditLog
          delete parsed.auditSync
          options = JSON.stringify(parsed)
        }
      }
      const refused = this.#core.init(options)
      if (refused === '' && auditLog !== undefined) {
        this.auditFile = openAuditFile(auditLog, auditSync)
        this.#core.setWanted(0, true)
      }
      return refused
    }

    /** A view of the engine's scratch buffer, made again when wasm memory has grown. */
    get scratch() {
      return (this.#view = over(this.#view, Float64Array, this.#scratchAt, this.#scratchLen))
    }

    /** The status block the last engine call filled (crates/toolhost-wasm: STATUS). */
    #statusView() {
      return (this.#status = over(this.#status, Float64Array, this.#statusAt, this.#statusLen))
    }

    bigOps() {
      return this.#core.bigOps()
    }

    setWanted(mask, audit) {
      this.#core.setWanted(mask, audit || this.auditFile !== undefined)
    }

    // After each engine call, from its status block: whether the host must stay alive
    // for executions in flight, the timers it asked for ([action (0 arm, 1 clear), kind
    // (0 attempt timeout, 1 backoff, 2 total timeout, 3 approval timeout), key, attempt,
    // ms] each), and its ops' strings, returned.
    #after() {
      const status = this.#statusView()
      if (keepAlive !== undefined) {
        const busy = status[0] > 0
        if (busy !== this.#held) {
          this.#held = busy
          keepAlive(busy)
        }
      }
      const text = textOf(status)
      const requests = status[1]
      if (requests === 0) return text
      // More requests than the block holds: the engine keeps them for takeTimers().
      const t = requests > 0 ? status : this.#core.takeTimers()
      const from = requests > 0 ? 5 : 0, to = requests > 0 ? 5 + requests * 5 : t.length
      for (let i = from; i < to; i += 5) {
        const arm = t[i] === 0, kind = t[i + 1], key = t[i + 2], attempt = t[i + 3], ms = t[i + 4]
        // A backoff that ends for an execution no longer backing off is stale to the
        // engine, so backoff timers are never cleared.
        if (kind === 1) {
          if (arm) later(() => this.#fired(1, key, 0), ms)
          continue
        }
        if (!arm) {
          this.#deadlines.delete(key * 4 + kind)
          continue
        }
        const due = performance.now() + ms
        this.#deadlines.set(key * 4 + kind, { due, kind, key, attempt })
        if (due < this.#hostDue) this.#armHost(due)
      }
      return text
    }

    #armHost(due) {
      if (this.#hostTimer !== undefined) clearTimer(this.#hostTimer.id)
      this.#hostDue = due
      // The timer stays armed after its deadline is cleared: it holds the engine weakly,
      // so a manager dropped with no execution in flight is not kept until it fires.
      const self = new WeakRef(this)
      this.#hostTimer = later(() => self.deref()?.#onHostTimer(), Math.max(0, due - performance.now()))
    }

    /** The host timer fired: every deadline due fires, and the timer is armed for the next. */
    #onHostTimer() {
      this.#hostTimer = undefined
      this.#hostDue = Infinity
      const now = performance.now()
      const due = []
      let next = Infinity
      for (const d of this.#deadlines.values()) {
        if (d.due <= now) due.push(d)
        else if (d.due < next) next = d.due
      }
      // In the order they were due, as separate timers would have fired; one that an
      // earlier one's transition cleared or armed again does not fire.
      due.sort((a, b) => a.due - b.due)
      for (const d of due) {
        const id = d.key * 4 + d.kind
        if (this.#deadlines.get(id) !== d) continue
        this.#deadlines.delete(id)
        this.#fired(d.kind, d.key, d.attempt)
      }
      if (next < this.#hostDue) this.#armHost(next)
    }

    #fired(kind, key, attempt) {
      const core = this.#core
      if (kind === 0) core.timedOut(key, attempt)
      else if (kind === 1) core.resume(key)
      else if (kind === 2) core.totalTimedOut(key)
      else core.approvalExpired(key)
      wake(this.id, 0, this.#after())
    }

    start(ticket, name, args, options, aborted, unreadable) {
      this.#core.start(ticket, name, args, options === '' ? undefined : options, aborted, unreadable === '' ? undefined : unreadable)
      return this.#after()
    }

    settle(key, attempt, result) {
      this.#core.settle(key, attempt, result === '' ? undefined : result)
      return this.#after()
    }

    approvalDecided(key, needed, invalid) {
      return (this.#core.approvalDecided(key, needed, invalid), this.#after())
    }

    approve(id, args, by) {
      return (this.#core.approve(id, args, by), this.#after())
    }

    deny(id, reason, by) {
      return (this.#core.deny(id, reason, by), this.#after())
    }

    pendingApprovals() {
      return this.#core.pendingApprovals()
    }

    progress(key, attempt, progress, total, message) {
      return (this.#core.progress(key, attempt, progress, total, message), this.#after())
    }

    preliminary(key, attempt) {
      return (this.#core.preliminary(key, attempt), this.#after())
    }

    fail(key, attempt, thrown) {
      return (this.#core.fail(key, attempt, thrown), this.#after())
    }

    interceptedArgs(key, attempt, text, unreadable) {
      return (this.#core.interceptedArgs(key, attempt, text, unreadable), this.#after())
    }

    cancel(id) {
      return (this.#core.cancel(id), this.#after())
    }

    cancelKeys(keys) {
      return (this.#core.cancelKeys(keys), this.#after())
    }

    cancelAll(session) {
      return (this.#core.cancelAll(session ?? undefined), this.#after())
    }

    destroySession(session) {
      return (this.#core.destroySession(session), this.#after())
    }

    snapshot(id) {
      this.#core.snapshot(id)
      return textOf(this.#statusView())
    }

    idsForToolCall(id) {
      return this.#core.idsForToolCall(id)
    }

    stats(name) {
      return this.#core.stats(name)
    }
  }
}
