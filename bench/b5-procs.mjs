// B5 in several fresh processes: one process's p99 moves by more than a millisecond from
// run to run on a 2-core machine, so this runs bench/scenarios.mjs's B5 as `npm run bench`
// runs it for toolhost (1,000 calls, 5 runs, the median of runs 2-5) in each of K child
// processes, one after another, and prints each process's p99 and their median.
//   node bench/b5-procs.mjs [--procs 8] [--calls 1000]
// Node flags for the children (diagnostics, such as --no-opt) go in TOOLHOST_B5_NODE_FLAGS.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? +argv[argv.indexOf(name) + 1] : fallback)
const CALLS = opt('--calls', 1000)

if (argv[0] === '--child') {
  const { SCENARIOS } = await import('./scenarios.mjs')
  const api = await import('../js/node.mjs')
  const r = await SCENARIOS.B5(api, CALLS, 5)
  process.stdout.write(JSON.stringify({ p50: r.devP50Ms, p99: r.devP99Ms }) + '\n')
} else {
  const PROCS = opt('--procs', 8)
  const flags = (process.env.TOOLHOST_B5_NODE_FLAGS ?? '').split(' ').filter(Boolean)
  const p99s = []
  for (let k = 0; k < PROCS; k++) {
    const child = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), '--child', '--calls', String(CALLS)], { encoding: 'utf8' })
    if (child.status !== 0) throw new Error(`process ${k + 1} failed (exit ${child.status}): ${child.stderr.trim().slice(-1000)}`)
    p99s.push(JSON.parse(child.stdout.trim().split('\n').pop()).p99)
  }
  const sorted = [...p99s].sort((a, b) => a - b)
  const median = sorted.length % 2 ? sorted[sorted.length >> 1] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
  console.log(`B5 p99 retry-delay deviation, ${PROCS} processes of ${CALLS} calls: median ${median.toFixed(2)} ms (each: ${p99s.map((x) => x.toFixed(2)).join(', ')})${flags.length ? ` with ${flags.join(' ')}` : ''}`)
}
