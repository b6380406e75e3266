// B6's overhead measured in pairs: runs of B1 and of B6 (logging to a no-op logger +
// metadata) alternate, and the overhead is the median of the paired differences, which
// moves less between processes than the difference of two medians `npm run bench` reports.
//   node bench/b6-pairs.mjs [--calls 50000] [--pairs 15]
import { performance } from 'node:perf_hooks'
import { ToolRegistry, ToolExecutionManager } from '../js/node.mjs'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? +argv[argv.indexOf(name) + 1] : fallback)
const CALLS = opt('--calls', 50_000)
const PAIRS = opt('--pairs', 15)

// As bench/scenarios.mjs B1 and B6.
const smallSchema = {
  type: 'object',
  properties: { n: { type: 'integer', minimum: 0 }, q: { type: 'string', maxLength: 200 }, flag: { type: 'boolean' } },
  required: ['n', 'q'],
  additionalProperties: false,
}
const BASE = { timeoutMs: 30_000, historyLimit: 1000, retry: { maxAttempts: 3, baseDelay: 100, maxDelay: 10_000, backoffMultiplier: 2, jitter: 'none' } }
function setup(options) {
  const registry = new ToolRegistry()
  registry.register({ name: 'echo', description: 'returns n', inputSchema: smallSchema, handler: async (args) => ({ n: args.n }) })
  return new ToolExecutionManager(registry, { ...BASE, ...options })
}
let lines = 0
const plain = setup({})
const logged = setup({ logging: true, logger: () => { lines++ }, metadata: true })

async function run(manager, stamped) {
  const t0 = performance.now()
  for (let i = 0; i < CALLS; i++) {
    const r = await manager.execute('echo', { n: i, q: 'weather in Paris', flag: true })
    if (!r.success || r.result.n !== i || (stamped && r.result._execution_metadata?.tool_name !== 'echo')) throw new Error(`wrong result for call ${i}`)
  }
  return ((performance.now() - t0) * 1000) / CALLS
}

for (let w = 0; w < 2; w++) { await run(plain, false); await run(logged, true) } // warm both paths
lines = 0
const base = [], overhead = []
for (let p = 0; p < PAIRS; p++) {
  const b = await run(plain, false)
  const l = await run(logged, true)
  base.push(b)
  overhead.push(l - b)
}
if (lines !== 2 * CALLS * PAIRS) throw new Error(`expected 2 log lines a call, got ${lines / (CALLS * PAIRS)}`)
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`B1 ${median(base).toFixed(2)} µs/call; B6 overhead ${median(overhead).toFixed(3)} µs/call (median of ${PAIRS} pairs of ${CALLS.toLocaleString('en-US')} calls)`)
