// Where B5's retry-delay deviation comes from: each retry's delay, from the moment the
// failed attempt's handler threw to the moment the next attempt's handler starts, split
// by the native addon's timer trace into
//   - "JS: to arm":  the throw reaching the engine, which arms the backoff timer;
//   - "timer":       the timer firing after it was due: on Linux the JS thread's event
//                    loop reaching it (src/loop_timers.rs), so the time that thread
//                    spent first on other work counts here; elsewhere the deadline thread;
//   - "hop":         on Linux, the wait behind the timers that fell due with it (the loop
//                    runs them in order, each one's attempt included); elsewhere the
//                    threadsafe function carrying it to the JS thread, including the
//                    time that thread spent first on other work;
// Other work is other retries' timers and garbage-collection pauses: both are counted
// and reported.
//   - "JS: to run":  from there to the handler (the engine, the runtime).
// The four add up to each retry's deviation (actual minus scheduled delay). The trace is
// the addon's `traceTimers`/`takeTimerTrace` (src/hop.rs), off unless this turns it on.
//   node bench/b5-split.mjs [--calls 1000] [--runs 5] [--json out.json]
import { createRequire } from 'node:module'
import { writeFileSync } from 'node:fs'
import { performance, PerformanceObserver } from 'node:perf_hooks'
import * as api from '../js/node.mjs'
import { pct } from './scenarios.mjs'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback)
const CALLS = +opt('--calls', 1000)
const RUNS = +opt('--runs', 5)
const binding = createRequire(import.meta.url)('../index.js')

export const PARTS = ['JS: to arm', 'timer', 'hop', 'JS: to run']

// As bench/scenarios.mjs B5: fails transiently twice, 2 then 4 ms backoff, no jitter.
const retry = { maxAttempts: 3, baseDelay: 2, maxDelay: 1000, backoffMultiplier: 2, jitter: 'none', retryableCategories: ['transient', 'timeout'] }
const scheduled = [0, 2, 4]
let attempts // executionId -> [{ start, end }] by attempt
const registry = new api.ToolRegistry()
registry.register({
  name: 'flaky', description: 'fails twice', inputSchema: { type: 'object', properties: { key: { type: 'integer' } }, required: ['key'] },
  handler: async (_args, ctx) => {
    const start = performance.now()
    let list = attempts.get(ctx.executionId)
    if (list === undefined) attempts.set(ctx.executionId, (list = []))
    const a = { start, end: NaN }
    list[ctx.attemptNumber] = a
    if (ctx.attemptNumber < 3) { a.end = performance.now(); throw api.transientError(`try again (${ctx.attemptNumber})`, {}) }
    return { ok: true }
  },
})
const manager = new api.ToolExecutionManager(registry, { timeoutMs: 30_000, historyLimit: 1000, retry })

// The collector's pauses, to see which slow retries waited for one.
const pauses = []
new PerformanceObserver((list) => { for (const e of list.getEntries()) pauses.push([e.startTime, e.startTime + e.duration]) }).observe({ entryTypes: ['gc'] })
const inPause = (from, to) => pauses.some(([a, b]) => a < to && b > from)

async function run(n) {
  attempts = new Map()
  // The trace clock and performance.now(), read back to back: their offset.
  const before = performance.now()
  const traceNow = binding.traceTimers(true)
  const offset = traceNow - (before + performance.now()) / 2
  const rs = await Promise.all(Array.from({ length: n }, (_, i) => manager.execute('flaky', { key: i })))
  binding.traceTimers(false)
  if (!rs.every((r) => r.success)) throw new Error('a call failed')
  const trace = JSON.parse(binding.takeTimerTrace()).filter((t) => t.kind === 'resume')
  // How many other timers the JS thread took first, between this one falling due and its turn.
  const received = trace.map((t) => t.received).sort((a, b) => a - b)
  const below = (x) => { let lo = 0, hi = received.length; while (lo < hi) { const mid = (lo + hi) >> 1; if (received[mid] < x) lo = mid + 1; else hi = mid } return lo }
  for (const t of trace) t.ahead = below(t.received) - below(t.due)
  const rows = []
  const seen = new Map() // executionId -> resume timers so far: the k-th follows attempt k
  for (const t of trace.sort((a, b) => a.armed - b.armed)) {
    const k = (seen.get(t.executionId) ?? 0) + 1
    seen.set(t.executionId, k)
    const list = attempts.get(t.executionId)
    const failed = list?.[k]
    const next = list?.[k + 1]
    if (failed === undefined || next === undefined) continue
    const at = (ms) => ms - offset // trace clock -> performance.now()
    const dev = next.start - failed.end - scheduled[k]
    rows.push({ delay: scheduled[k], dev, due: at(t.due), start: next.start, ahead: t.ahead, parts: [at(t.armed) - failed.end, t.fired - t.due, t.received - t.fired, next.start - at(t.received)] })
  }
  if (rows.length !== 2 * n) throw new Error(`matched ${rows.length} of ${2 * n} retries to their timers`)
  await new Promise((resolve) => setImmediate(resolve)) // the last GC entries
  for (const r of rows) r.gc = inPause(r.due, r.start)
  return rows
}

await run(Math.ceil(CALLS / 5)) // warm-up
const all = []
for (let r = 0; r < RUNS; r++) all.push(...(await run(CALLS)))
const out = { calls: CALLS, runs: RUNS, retries: all.length, total: {}, parts: {} }
const summary = (xs) => ({ p50: pct(xs, 0.5), p90: pct(xs, 0.9), p99: pct(xs, 0.99), max: pct(xs, 1) })
out.total = summary(all.map((r) => r.dev))
PARTS.forEach((p, i) => { out.parts[p] = summary(all.map((r) => r.parts[i])) })
// The retries in the slowest 1%: what their deviation was made of, on average.
const tail = [...all].sort((a, b) => b.dev - a.dev).slice(0, Math.max(1, Math.ceil(all.length / 100)))
out.tail = Object.fromEntries(PARTS.map((p, i) => [p, tail.reduce((s, r) => s + r.parts[i], 0) / tail.length]))

out.tailInGc = tail.filter((r) => r.gc).length / tail.length
out.tailQueued = tail.filter((r) => r.ahead > 0).length / tail.length
out.tailAhead = tail.reduce((sum, r) => sum + r.ahead, 0) / tail.length
out.allInGc = all.filter((r) => r.gc).length / all.length
out.gcPauses = { count: pauses.length, p50: pct(pauses.map(([a, b]) => b - a), 0.5), max: pct(pauses.map(([a, b]) => b - a), 1) }
// The timer's part by delay (both wait the same way).
out.timerByDelay = Object.fromEntries([2, 4].map((d) => [d, summary(all.filter((r) => r.delay === d).map((r) => r.parts[1]))]))
const f = (x) => x.toFixed(3)
console.log(`### B5: where a retry's delay deviation goes (${out.retries} retries, ${RUNS} runs of ${CALLS} calls)\n`)
console.log('| part | p50 ms | p90 ms | p99 ms | max ms | mean in the slowest 1% |')
console.log('|---|---|---|---|---|---|')
for (const p of PARTS) { const s = out.parts[p]; console.log(`| ${p} | ${f(s.p50)} | ${f(s.p90)} | ${f(s.p99)} | ${f(s.max)} | ${f(out.tail[p])} |`) }
const t = out.total
console.log(`| **deviation** | ${f(t.p50)} | ${f(t.p90)} | ${f(t.p99)} | ${f(t.max)} | ${f(PARTS.reduce((s, p) => s + out.tail[p], 0))} |`)
for (const d of [2, 4]) { const s = out.timerByDelay[d]; console.log(`| timer, ${d} ms delays only | ${f(s.p50)} | ${f(s.p90)} | ${f(s.p99)} | ${f(s.max)} | |`) }
console.log(`\nA garbage-collection pause overlapped ${(out.tailInGc * 100).toFixed(0)}% of the slowest 1% of retries (between due and start), and ${(out.allInGc * 100).toFixed(0)}% of all retries; ${out.gcPauses.count} pauses, median ${f(out.gcPauses.p50)} ms, longest ${f(out.gcPauses.max)} ms.`)
console.log(`In the slowest 1%, ${(out.tailQueued * 100).toFixed(0)}% of retries found the JS thread taking other retries' timers first (${out.tailAhead.toFixed(1)} of them on average).`)
if (opt('--json')) writeFileSync(opt('--json'), JSON.stringify(out, null, 2))
