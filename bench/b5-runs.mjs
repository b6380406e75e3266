// B5 run by run, beside what V8 did during each run: how much it compiled (TurboFan
// jobs, their background time), how often it threw optimized code away (deopts), and its
// collections. `npm run bench` reports B5 as the median of the p99s of five runs of 1,000
// calls after a warm-up of 200 (bench/scenarios.mjs); this shows why runs differ.
//   node bench/b5-runs.mjs [--procs 4] [--calls 1000] [--plain]
// Each process is a fresh `node --trace-opt --trace-deopt --trace-gc` running B5 as the
// benchmark does; the tracing itself slows V8 a little. `--plain` runs without it and
// prints only each run's p99.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? +argv[argv.indexOf(name) + 1] : fallback)
const CALLS = opt('--calls', 1000)

if (argv[0] === '--child') {
  const { SCENARIOS } = await import('./scenarios.mjs')
  const api = await import('../js/node.mjs')
  let run = 0
  // Markers between V8's own lines on the same stdout.
  await SCENARIOS.B5(api, CALLS, 5, {
    start: (k) => process.stdout.write(`\n=== B5 run ${run} start ${k}\n`),
    end: (k, p99) => process.stdout.write(`\n=== B5 run ${run++} end ${p99}\n`),
  })
} else {
  const PROCS = opt('--procs', 4)
  const plain = argv.includes('--plain')
  const flags = plain ? [] : ['--trace-opt', '--trace-deopt', '--trace-gc']
  const rows = []
  for (let k = 0; k < PROCS; k++) {
    const child = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), '--child', '--calls', String(CALLS)], { encoding: 'utf8', maxBuffer: 1 << 28 })
    if (child.status !== 0) throw new Error(`process ${k + 1} failed (exit ${child.status}): ${child.stderr.trim().slice(-1000)}`)
    let row
    for (const line of child.stdout.split('\n')) {
      const marker = /^=== B5 run (\d+) (start|end) (\S+)/.exec(line)
      if (marker !== null) {
        if (marker[2] === 'start') row = { proc: k + 1, run: +marker[1], calls: +marker[3], p99: NaN, compiles: 0, compileMs: 0, deopts: 0, scavenges: 0, scavengeMs: 0, fullGcs: 0, fullGcMs: 0 }
        else {
          row.p99 = +marker[3]
          rows.push(row)
          row = undefined
        }
        continue
      }
      if (row === undefined) continue
      if (line.includes('completed compiling')) {
        const took = /took ([\d.]+), ([\d.]+), ([\d.]+) ms/.exec(line)
        row.compiles++
        if (took !== null) row.compileMs += +took[1] + +took[2] + +took[3]
      } else if (line.startsWith('[bailout (kind: deopt')) row.deopts++
      else if (/: (Scavenge|Mark-Compact|Mark-sweep)/.test(line)) {
        const pause = /, ([\d.]+) \/ ([\d.]+) ms/.exec(line)
        if (line.includes('Scavenge')) { row.scavenges++; row.scavengeMs += pause ? +pause[1] : 0 } else { row.fullGcs++; row.fullGcMs += pause ? +pause[1] : 0 }
      }
    }
  }
  const f = (x, d = 1) => x.toFixed(d)
  console.log(`### B5 run by run (${PROCS} process${PROCS === 1 ? "" : "es"}; run 0 is the warm-up of ${Math.ceil(CALLS / 5)} calls, the benchmark takes the median of runs 1-5)\n`)
  if (plain) {
    console.log('| process | ' + [0, 1, 2, 3, 4, 5].map((r) => `run ${r} p99 ms`).join(' | ') + ' |')
    console.log('|---|' + '---|'.repeat(6))
    for (let k = 1; k <= PROCS; k++) console.log(`| ${k} | ${rows.filter((r) => r.proc === k).map((r) => f(r.p99, 2)).join(' | ')} |`)
  } else {
    console.log('| process | run | p99 ms | TurboFan jobs | their ms | deopts | scavenges | their pause ms | full GCs | their pause ms |')
    console.log('|---|---|---|---|---|---|---|---|---|---|')
    for (const r of rows) console.log(`| ${r.proc} | ${r.run} | ${f(r.p99, 2)} | ${r.compiles} | ${f(r.compileMs)} | ${r.deopts} | ${r.scavenges} | ${f(r.scavengeMs)} | ${r.fullGcs} | ${f(r.fullGcMs)} |`)
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
    const measured = rows.filter((r) => r.run > 0)
    const busy = measured.filter((r) => r.compileMs >= 10)
    const quiet = measured.filter((r) => r.compileMs < 10)
    console.log(`\nMeasured runs (1-5) with 10 ms of compiling or more: ${busy.length}, median p99 ${f(median(busy.map((r) => r.p99)), 2)} ms; with less: ${quiet.length}, median p99 ${f(median(quiet.map((r) => r.p99)), 2)} ms.`)
  }
}
