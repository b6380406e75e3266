// The durable journal's benchmark (part of `npm run bench`; alone: node bench/journal.mjs
// [--quick]):
//   BJ1: B1 (sequential, trivial handler, validation on) with a SQLite journal, each call
//        with its own idempotency key, against B1 without a journal and the ajv +
//        cockatiel peer, each in a fresh process, median of 5 runs;
//   BJ4: journaled calls per second from 4 processes on one Postgres server (Debian's
//        postgresql, a cluster made for the run: scripts/postgres.mjs), each process
//        running its own keys, 32 at a time.
// Prints a markdown table; exits non-zero only when a run fails or a result is wrong.
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './scenarios.mjs'

const QUICK = process.argv.includes('--quick')
const RUNS = 5

async function child(mode, config) {
  const api = mode === 'peer' ? await import('./peer.mjs') : await import('../js/node.mjs')
  const { ToolRegistry, ToolExecutionManager } = api
  const registry = new ToolRegistry()
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0 }, q: { type: 'string', maxLength: 200 }, flag: { type: 'boolean' } }, required: ['n', 'q'], additionalProperties: false }
  registry.register({ name: 'echo', description: 'returns n', inputSchema: schema, handler: async (args) => ({ n: args.n }) })
  const base = { timeoutMs: 30_000, historyLimit: 1000, retry: { maxAttempts: 3, baseDelay: 100, maxDelay: 10_000, backoffMultiplier: 2, jitter: 'none' } }
  const manager = new ToolExecutionManager(registry, config.journal === undefined ? base : { ...base, journal: config.journal })
  const run = `${process.pid}-${Date.now()}`
  const call = async (i, key) => {
    const r = await manager.execute('echo', { n: i, q: 'weather in Paris', flag: true }, key === undefined ? undefined : { idempotencyKey: key })
    if (!r.success || r.result.n !== i || r.replayed) throw new Error(`call ${i}: ${JSON.stringify(r.error ?? r)}`)
  }
  if (config.concurrency === undefined) {
    // Sequential, as B1: a warm-up of a fifth, then the runs.
    const once = async (k, tag) => {
      const t0 = performance.now()
      for (let i = 0; i < k; i++) await call(i, config.journal === undefined ? undefined : `${run}-${tag}-${i}`)
      return performance.now() - t0
    }
    await once(Math.ceil(config.n / 5), 'warm')
    const wall = []
    for (let r = 0; r < RUNS; r++) wall.push(await once(config.n, r))
    return { usPerCall: (median(wall) * 1000) / config.n, runsUs: wall.map((w) => +((w * 1000) / config.n).toFixed(2)) }
  }
  // Concurrent: `concurrency` calls in flight, each with its own key, after a start signal.
  await new Promise((resolve) => process.once('message', resolve))
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: config.concurrency }, async () => {
    while (next < config.n) {
      const i = next++
      await call(i, `${run}-${i}`)
    }
  }))
  const ms = performance.now() - t0
  await manager.close?.()
  return { ms, calls: config.n }
}

function spawnChild(mode, config) {
  const cp = fork(fileURLToPath(import.meta.url), ['--child', mode, JSON.stringify(config)])
  let result
  const done = new Promise((resolve, reject) => {
    cp.on('message', (m) => {
      if (m.ok) result = m
      else if (m.error) reject(new Error(m.error))
    })
    cp.on('exit', (code) => (result !== undefined ? resolve(result) : reject(new Error(`${mode} child exited ${code}`))))
  })
  return { cp, done }
}

async function main() {
  const n = QUICK ? 1_000 : 20_000
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-bench-journal-'))
  const rows = []
  try {
    const plain = await spawnChild('toolhost', { n }).done
    const sqlite = await spawnChild('toolhost', { n, journal: `sqlite:${join(dir, 'b1.db')}` }).done
    const peer = await spawnChild('peer', { n }).done
    rows.push(['BJ1 B1 without a journal', n, plain.usPerCall, '', plain.runsUs])
    rows.push(['BJ1 B1 with a SQLite journal', n, sqlite.usPerCall, `+${(sqlite.usPerCall - plain.usPerCall).toFixed(2)} µs/call over B1; ${(sqlite.usPerCall / peer.usPerCall).toFixed(2)}× the peer`, sqlite.runsUs])
    rows.push(['BJ1 peer (ajv + cockatiel), no journal', n, peer.usPerCall, '', peer.runsUs])

    const { startPostgres } = await import('../scripts/postgres.mjs')
    const pg = await startPostgres()
    try {
      const url = pg.database('bench')
      const perProcess = QUICK ? 500 : 5_000
      const children = Array.from({ length: 4 }, () => spawnChild('toolhost', { n: perProcess, concurrency: 32, journal: { url } }))
      // Each opens its journal first; then all start together.
      await new Promise((r) => setTimeout(r, 1500))
      const t0 = performance.now()
      for (const c of children) c.cp.send('go')
      const results = await Promise.all(children.map((c) => c.done))
      const wall = performance.now() - t0
      const total = results.reduce((s, r) => s + r.calls, 0)
      rows.push(['BJ4 4 processes, 32 calls each in flight, one Postgres', total, (wall * 1000) / total, `${Math.round(total / (wall / 1000)).toLocaleString('en-US')} journaled calls/s in all (goal ≥ 2,000)`, results.map((r) => Math.round(r.calls / (r.ms / 1000)))])
    } finally {
      await pg.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`\n### the journal (${QUICK ? 'quick' : 'full'})\n`)
  console.log('| scenario | calls | µs/call | notes | per run (µs/call) or per process (calls/s) |')
  console.log('|---|---|---|---|---|')
  for (const [name, calls, us, note, runs] of rows) console.log(`| ${name} | ${calls.toLocaleString('en-US')} | ${us.toFixed(2)} | ${note} | ${runs.join(', ')} |`)
}

if (process.argv[2] === '--child') {
  const [, , , mode, config] = process.argv
  child(mode, JSON.parse(config)).then(
    (r) => process.send({ ok: true, ...r }, () => process.exit(0)),
    (e) => process.send({ ok: false, error: String(e?.stack ?? e) }, () => process.exit(1)),
  )
} else {
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
}
