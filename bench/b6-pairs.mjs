// B6's overhead measured in pairs: runs of B1 and of B6 (logging to a no-op logger +
// metadata) alternate, and the overhead is the median of the paired differences, which
// moves less between processes than the difference of two medians `npm run bench` reports.
// The manager, tool and calls are bench/scenarios.mjs's B1 and B6.
//   node bench/b6-pairs.mjs [--calls 50000] [--pairs 15]
import * as api from '../js/node.mjs'
import { setup, sequential } from './scenarios.mjs'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? +argv[argv.indexOf(name) + 1] : fallback)
const CALLS = opt('--calls', 50_000)
const PAIRS = opt('--pairs', 15)

let lines = 0
const plain = setup(api)
const logged = setup(api, { logging: true, logger: () => { lines++ }, metadata: true })
const usPerCall = async (manager, stamped) => ((await sequential(manager, CALLS, stamped)) * 1000) / CALLS

for (let w = 0; w < 2; w++) { await usPerCall(plain, false); await usPerCall(logged, true) } // warm both paths
lines = 0
const base = [], overhead = []
for (let p = 0; p < PAIRS; p++) {
  const b = await usPerCall(plain, false)
  const l = await usPerCall(logged, true)
  base.push(b)
  overhead.push(l - b)
}
if (lines !== 2 * CALLS * PAIRS) throw new Error(`expected 2 log lines a call, got ${lines / (CALLS * PAIRS)}`)
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`B1 ${median(base).toFixed(2)} µs/call; B6 overhead ${median(overhead).toFixed(3)} µs/call (median of ${PAIRS} pairs of ${CALLS.toLocaleString('en-US')} calls)`)
