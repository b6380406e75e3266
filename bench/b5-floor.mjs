// What this machine allows B5 with the least a runtime can do: bench/scenarios.mjs's B5,
// unchanged, over a plain-JS runtime of a few lines (16 slots, a FIFO queue, retries on
// time: setTimeout to 1 ms before the delay ends, then setImmediate until it has), in 8
// fresh processes, the median of their p99s, as bench/b5-procs.mjs runs toolhost.
//
//   node bench/b5-floor.mjs [--procs 8] [--queued BYTES] [--result BYTES]
//
// `--queued` and `--result` give each queued call and each result that much more to
// keep on the JS heap (an array of that size), as a runtime's own state would: every
// young-generation collection during a run copies what is alive, and the retries due
// meanwhile wait for it. It is a diagnostic, not part of `npm run bench`.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { SCENARIOS, median } from './scenarios.mjs'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? +argv[argv.indexOf(name) + 1] : fallback)
const QUEUED = opt('--queued', 0)
const RESULT = opt('--result', 0)
/** An array of about `bytes` bytes (8 a slot, 32 of headers), or nothing for 0. */
const ballast = (bytes) => (bytes > 0 ? new Array(Math.max(1, Math.round((bytes - 32) / 8))).fill(0) : undefined)

/** The least runtime with B5's semantics (toolhost's defaults: 16 at a time, FIFO). */
function floorApi() {
  class ToolRegistry {
    tools = new Map()
    register(def) {
      this.tools.set(def.name, def)
    }
  }
  class ToolExecutionManager {
    constructor(registry, options) {
      this.registry = registry
      this.retry = options.retry
      this.running = 0
      this.queue = []
    }
    execute(name, args) {
      return new Promise((resolve) => {
        const call = { tool: this.registry.tools.get(name), args, resolve, attempt: 0, kept: ballast(QUEUED) }
        if (this.running < 16) {
          this.running++
          this.run(call)
        } else this.queue.push(call)
      })
    }
    run(call) {
      call.attempt++
      let p
      try {
        p = Promise.resolve(call.tool.handler(call.args, {}))
      } catch (err) {
        p = Promise.reject(err)
      }
      p.then((result) => this.done(call, { success: true, result, kept: ballast(RESULT) }), (err) => {
        if (err?.category !== 'transient' || call.attempt >= this.retry.maxAttempts) return this.done(call, { success: false, error: { message: String(err?.message) } })
        const delay = this.retry.baseDelay * this.retry.backoffMultiplier ** (call.attempt - 1)
        const due = performance.now() + delay
        const wait = () => (performance.now() >= due ? this.run(call) : setImmediate(wait))
        setTimeout(wait, delay - 1)
      })
    }
    done(call, outcome) {
      call.resolve(outcome)
      const next = this.queue.shift()
      if (next !== undefined) this.run(next)
      else this.running--
    }
  }
  const transientError = (message) => Object.assign(new Error(message), { category: 'transient' })
  return { ToolRegistry, ToolExecutionManager, transientError }
}

if (argv[0] === '--child') {
  const r = await SCENARIOS.B5(floorApi(), 1000, 5)
  process.stdout.write(`${r.devP99Ms}\n`)
} else {
  const procs = opt('--procs', 8)
  const p99s = []
  for (let k = 0; k < procs; k++) {
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--queued', String(QUEUED), '--result', String(RESULT)], { encoding: 'utf8' })
    if (child.status !== 0) throw new Error(`child ${k} failed (exit ${child.status}): ${child.stderr.trim().slice(-2000)}`)
    p99s.push(+child.stdout.trim())
  }
  console.log(`B5 over the least runtime, ${QUEUED} bytes more per queued call and ${RESULT} per result, ${procs} processes: median p99 ${median(p99s).toFixed(2)} ms (each: ${p99s.map((x) => x.toFixed(2)).join(', ')})`)
}
