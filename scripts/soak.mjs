// Soak: many executions through the public package with a realistic mix, RSS sampled
// as it goes. Exits 1 if RSS after the warm-up grows more than the bound.
//
//   node --expose-gc scripts/soak.mjs [--executions 1000000] [--concurrency 64]
//        [--warmup 100000] [--bound-mb 32] [--every 100000]
//
// The mix, per 100 executions: 70 valid calls to a tool with a schema (objects, and JSON
// text as a model sends it), 10 with arguments the schema refuses, 10 to a tool that
// fails transiently once and succeeds on its retry, 5 to a tool that fails permanently,
// 5 through `executeToolCalls` (OpenAI format). Started, retrying and finished events
// and audit records are listened to. RSS is read after a GC when --expose-gc is given.
import { parseArgs } from 'node:util'
import { ToolRegistry, ToolExecutionManager, transientError, permanentError } from 'toolhost'

const { values } = parseArgs({
  options: {
    executions: { type: 'string', default: '1000000' },
    concurrency: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '100000' },
    'bound-mb': { type: 'string', default: '32' },
    every: { type: 'string', default: '100000' },
  },
})
const num = (name) => {
  const n = Number(values[name])
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a positive integer, got ${values[name]}`)
    process.exit(2)
  }
  return n
}
const TOTAL = num('executions')
const CONCURRENCY = num('concurrency')
const EVERY = num('every')
const WARMUP = Math.min(num('warmup'), TOTAL)
const BOUND_MB = num('bound-mb')

const registry = new ToolRegistry()
registry.register({
  name: 'search',
  description: 'Searches flights',
  inputSchema: {
    type: 'object',
    properties: {
      from: { type: 'string', minLength: 3, maxLength: 3 },
      to: { type: 'string', minLength: 3, maxLength: 3 },
      passengers: { type: 'integer', minimum: 1, maximum: 9 },
      flexible: { type: 'boolean' },
    },
    required: ['from', 'to', 'passengers'],
    additionalProperties: false,
  },
  handler: (args) => ({ flights: [{ from: args.from, to: args.to, price: 100 + args.passengers }] }),
})
const seenFlaky = new Set()
registry.register({
  name: 'flaky',
  description: 'Fails once per key, then succeeds',
  inputSchema: { type: 'object', properties: { key: { type: 'integer' } }, required: ['key'] },
  handler: async ({ key }) => {
    if (!seenFlaky.has(key)) {
      seenFlaky.add(key)
      throw transientError('upstream busy')
    }
    seenFlaky.delete(key)
    return { ok: key }
  },
})
registry.register({
  name: 'broken',
  description: 'Always fails',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
  handler: () => {
    throw permanentError('not allowed')
  },
})

const manager = new ToolExecutionManager(registry, {
  maxConcurrency: CONCURRENCY,
  timeoutMs: 5000,
  retry: { maxAttempts: 3, baseDelay: 1, maxDelay: 2, jitter: 'none' },
})
const counts = { started: 0, retrying: 0, recorded: 0, succeeded: 0, failed: 0 }
manager.on('tool-execution-started', () => counts.started++)
manager.on('tool-execution-retrying', () => counts.retrying++)
manager.on('tool-invocation-recorded', () => counts.recorded++)

const airports = ['AMS', 'CDG', 'LHR', 'JFK', 'SFO', 'NRT']
async function one(i) {
  const k = i % 100
  if (k < 35) {
    return manager.execute('search', { from: airports[i % 6], to: airports[(i + 1) % 6], passengers: 1 + (i % 9), flexible: i % 2 === 0 })
  }
  if (k < 70) {
    return manager.execute('search', `{"from":"${airports[i % 6]}","to":"${airports[(i + 2) % 6]}","passengers":${1 + (i % 9)}}`, { toolCallId: `call_${i}` })
  }
  if (k < 80) return manager.execute('search', { from: 'AMSTERDAM', passengers: 0 })
  if (k < 90) return manager.execute('flaky', { key: i })
  if (k < 95) return manager.execute('broken', { n: i })
  const response = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'search', arguments: `{"from":"LHR","to":"JFK","passengers":2}` } }],
  }
  const { results } = await manager.executeToolCalls(response, { provider: 'openai' })
  return results[0]
}

const expected = (i) => {
  const k = i % 100
  return k < 70 || (k >= 80 && k < 90) || k >= 95
}

const mb = (bytes) => bytes / 1048576
function sampleRss() {
  globalThis.gc?.()
  return mb(process.memoryUsage().rss)
}

const rows = []
const started = performance.now()
let next = 0
let wrong = 0
let warmRss
/** Runs executions up to `end`, CONCURRENCY at a time. */
async function runTo(end) {
  const lane = async () => {
    while (next < end) {
      const i = next++
      const r = await one(i)
      if (r.success) counts.succeeded++
      else counts.failed++
      if (r.success !== expected(i)) wrong++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, lane))
}
// Sampled between batches, with nothing in flight, at every EVERY executions and at the
// end of the warm-up.
const marks = new Set([WARMUP, TOTAL])
for (let m = EVERY; m < TOTAL; m += EVERY) marks.add(m)
for (const mark of [...marks].sort((a, b) => a - b)) {
  await runTo(mark)
  const rss = sampleRss()
  if (mark === WARMUP) warmRss = rss
  rows.push({ executions: mark, seconds: (performance.now() - started) / 1000, rss, heap: mb(process.memoryUsage().heapUsed) })
}

const pad = (s, n) => String(s).padStart(n)
console.log(`toolhost soak: ${TOTAL.toLocaleString('en')} executions, ${CONCURRENCY} at a time, node ${process.version}${globalThis.gc ? '' : ' (no --expose-gc: RSS without a GC first)'}`)
console.log(`${pad('executions', 12)} ${pad('time s', 8)} ${pad('RSS MB', 8)} ${pad('heap MB', 8)}`)
for (const r of rows) console.log(`${pad(r.executions.toLocaleString('en'), 12)} ${pad(r.seconds.toFixed(1), 8)} ${pad(r.rss.toFixed(1), 8)} ${pad(r.heap.toFixed(1), 8)}`)
const seconds = rows.at(-1).seconds
console.log(`${(TOTAL / seconds).toFixed(0)} executions/s; ${counts.succeeded} succeeded, ${counts.failed} failed as meant; events: ${counts.started} started, ${counts.retrying} retrying, ${counts.recorded} audit records`)

let failed = false
if (wrong > 0) {
  console.error(`FAIL: ${wrong} executions ended otherwise than the mix meant`)
  failed = true
}
if (counts.started !== TOTAL || counts.recorded !== TOTAL) {
  console.error(`FAIL: ${TOTAL} executions but ${counts.started} started events and ${counts.recorded} audit records`)
  failed = true
}
if (warmRss !== undefined && rows.at(-1).executions > WARMUP) {
  const peak = Math.max(...rows.filter((r) => r.executions > WARMUP).map((r) => r.rss))
  const growth = peak - warmRss
  console.log(`RSS after the ${WARMUP.toLocaleString('en')}-execution warm-up: ${warmRss.toFixed(1)} MB; highest after it: ${peak.toFixed(1)} MB (${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB, bound ${BOUND_MB} MB)`)
  if (growth > BOUND_MB) {
    console.error(`FAIL: RSS grew ${growth.toFixed(1)} MB after the warm-up, more than ${BOUND_MB} MB`)
    failed = true
  }
}
process.exit(failed ? 1 : 0)
