// B5 in several fresh processes: one process's p99 moves by more than a millisecond from
// run to run on a 2-core machine, so this runs bench/scenarios.mjs's B5 as `npm run bench`
// runs it for toolhost (1,000 calls; the median of the p99s of five runs after a warm-up
// of 200) in each of K child processes, one after another, and prints each process's p99
// and their median.
//   node bench/b5-procs.mjs [--procs 8] [--calls 1000]
// Node flags for the children (diagnostics, such as --no-opt) go in TOOLHOST_B5_NODE_FLAGS.
//
// `--by-run` (4 processes unless --procs says) shows B5 run by run instead, beside what V8
// did during each run: how much it compiled (TurboFan jobs, their background time), how
// often it threw optimized code away (deopts), and its collections; and, on Linux, how
// long the JS thread waited for a CPU while it could have run, and how long the deadline
// thread ran ('-': there is none, the timers wait on the JS thread's loop; the kernel's
// per-thread counters in /proc/self/task/*/schedstat). `npm run
// bench` prints it after B5's split. The children then run under `--trace-opt --trace-deopt
// --trace-gc`, which slows V8 a little; with `--plain` too they run without, and only
// each run's p99 is printed.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { median } from './scenarios.mjs'

const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? +argv[argv.indexOf(name) + 1] : fallback)
const CALLS = opt('--calls', 1000)

/** The runs of one child's output: each run's p99 and what V8's trace says it did. */
function runsOf(stdout, proc) {
  const rows = []
  let row
  for (const line of stdout.split('\n')) {
    const marker = /^=== B5 run (\d+) (start|end) (\S+)(?: (\S+) (\S+))?/.exec(line)
    if (marker !== null) {
      if (marker[2] === 'start') row = { proc, run: +marker[1], calls: +marker[3], p99: NaN, compiles: 0, compileMs: 0, deopts: 0, scavenges: 0, scavengeMs: 0, fullGcs: 0, fullGcMs: 0, jsWaitMs: NaN, deadlineMs: NaN }
      else {
        row.p99 = +marker[3]
        row.jsWaitMs = marker[4] === undefined || marker[4] === '-' ? NaN : +marker[4]
        row.deadlineMs = marker[5] === undefined || marker[5] === '-' ? NaN : +marker[5]
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
  return rows
}

/** Per thread of this process, by name ('main' for the JS thread): [ms on a CPU, ms
 * waiting for one while runnable], summed over threads of one name; {} where the kernel
 * does not say (not Linux, or schedstats off). */
function schedTimes() {
  const times = {}
  let tids
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return times
  }
  for (const tid of tids) {
    let run, wait, name
    try {
      ;[run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number)
      name = +tid === process.pid ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
    } catch {
      continue // a thread that ended meanwhile, or no schedstat
    }
    const t = (times[name] ??= [0, 0])
    t[0] += run / 1e6
    t[1] += wait / 1e6
  }
  return times
}

if (argv[0] === '--child') {
  const { SCENARIOS } = await import('./scenarios.mjs')
  const api = await import('../js/node.mjs')
  let run = 0
  let before
  // Markers between V8's own lines (when traced) on the same stdout, then the result;
  // the end marker carries the run's p99, the JS thread's wait for a CPU and the
  // deadline thread's time on one, in ms ('-' where unknown).
  const r = await SCENARIOS.B5(api, CALLS, 5, {
    start: (k) => {
      process.stdout.write(`\n=== B5 run ${run} start ${k}\n`)
      before = schedTimes()
    },
    end: (k, p99) => {
      const now = schedTimes()
      const delta = (name, i) => (now[name] === undefined ? '-' : (now[name][i] - (before[name]?.[i] ?? 0)).toFixed(1))
      process.stdout.write(`\n=== B5 run ${run++} end ${p99} ${delta('main', 1)} ${delta('toolhost-deadli', 0)}\n`)
    },
  })
  process.stdout.write(JSON.stringify({ p50: r.devP50Ms, p99: r.devP99Ms }) + '\n')
} else {
  const byRun = argv.includes('--by-run')
  const plain = argv.includes('--plain')
  const PROCS = opt('--procs', byRun ? 4 : 8)
  const flags = (process.env.TOOLHOST_B5_NODE_FLAGS ?? '').split(' ').filter(Boolean)
  if (byRun && !plain) flags.push('--trace-opt', '--trace-deopt', '--trace-gc')
  const p99s = []
  const rows = []
  for (let k = 0; k < PROCS; k++) {
    const child = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), '--child', '--calls', String(CALLS)], { encoding: 'utf8', maxBuffer: 1 << 28 })
    if (child.status !== 0) throw new Error(`process ${k + 1} failed (exit ${child.status}): ${child.stderr.trim().slice(-1000)}`)
    // The result is the child's last line of its own: V8's trace may still print after it.
    const result = child.stdout.split('\n').findLast((line) => line.startsWith('{"p50":'))
    if (result === undefined) throw new Error(`process ${k + 1} printed no result: ${child.stdout.trim().slice(-500)}`)
    p99s.push(JSON.parse(result).p99)
    if (byRun) rows.push(...runsOf(child.stdout, k + 1))
  }
  const f = (x, d = 1) => x.toFixed(d)
  if (!byRun) {
    console.log(`B5 p99 retry-delay deviation, ${PROCS} processes of ${CALLS} calls: median ${f(median(p99s), 2)} ms (each: ${p99s.map((x) => f(x, 2)).join(', ')})${flags.length ? ` with ${flags.join(' ')}` : ''}`)
  } else {
    console.log(`### B5 run by run (${PROCS} process${PROCS === 1 ? '' : 'es'}; run 0 is the warm-up of ${Math.ceil(CALLS / 5)} calls, the benchmark takes the median of runs 1-5)\n`)
    if (plain) {
      console.log('| process | ' + [0, 1, 2, 3, 4, 5].map((r) => `run ${r} p99 ms`).join(' | ') + ' |')
      console.log('|---|' + '---|'.repeat(6))
      for (let k = 1; k <= PROCS; k++) console.log(`| ${k} | ${rows.filter((r) => r.proc === k).map((r) => f(r.p99, 2)).join(' | ')} |`)
    } else {
      const ms = (x) => (Number.isNaN(x) ? '-' : f(x))
      console.log('| process | run | p99 ms | TurboFan jobs | their ms | deopts | scavenges | their pause ms | full GCs | their pause ms | JS thread waited for a CPU, ms | deadline thread ran, ms |')
      console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
      for (const r of rows) console.log(`| ${r.proc} | ${r.run} | ${f(r.p99, 2)} | ${r.compiles} | ${f(r.compileMs)} | ${r.deopts} | ${r.scavenges} | ${f(r.scavengeMs)} | ${r.fullGcs} | ${f(r.fullGcMs)} | ${ms(r.jsWaitMs)} | ${ms(r.deadlineMs)} |`)
      const measured = rows.filter((r) => r.run > 0)
      const busy = measured.filter((r) => r.compileMs >= 10)
      const quiet = measured.filter((r) => r.compileMs < 10)
      console.log(`\nMeasured runs (1-5) with 10 ms of compiling or more: ${busy.length}, median p99 ${f(median(busy.map((r) => r.p99)), 2)} ms; with less: ${quiet.length}, median p99 ${f(median(quiet.map((r) => r.p99)), 2)} ms.`)
    }
  }
}
