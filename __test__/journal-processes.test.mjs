// Exactly-once across processes and crashes (issue 21), on SQLite and on a real Postgres
// server. Processes are real (`node __test__/fixtures/journal-worker.mjs`), crashes are
// `kill -9`, and each tool writes its side effects to a log outside the journal, so the
// tests count how often each key really ran.
import { describe } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { each } from './fixtures/journals.mjs'

const WORKER = fileURLToPath(new URL('./fixtures/journal-worker.mjs', import.meta.url))
const LEASE = 400

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-journal-proc-'))
  return { dir, effects: join(dir, 'effects.log'), results: join(dir, 'results.jsonl'), done: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Starts a worker process; `line(text)` resolves when it prints a line starting so. */
function worker(ws, config, name) {
  const file = join(ws.dir, `${name}.json`)
  writeFileSync(file, JSON.stringify({ effects: ws.effects, results: ws.results, leaseMs: LEASE, pollMs: 20, ...config }))
  const child = spawn(process.execPath, [WORKER, file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  const waiters = []
  child.stdout.on('data', (d) => {
    out += d
    const lines = out.split('\n')
    for (let k = waiters.length - 1; k >= 0; k--) {
      if (lines.some((l) => l.startsWith(waiters[k].prefix))) waiters.splice(k, 1)[0].resolve()
    }
  })
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return {
    child,
    exited,
    output: () => out,
    line(prefix, ms = 30_000) {
      if (out.split('\n').some((l) => l.startsWith(prefix))) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no line '${prefix}' in ${ms} ms; stdout: ${out.slice(-500)} stderr: ${err.slice(-2000)}`)), ms)
        waiters.push({ prefix, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    async finished() {
      const { code, signal } = await exited
      assert.equal(code, 0, `${name} exited ${code ?? signal}: ${err.slice(-2000)}`)
    },
    kill() {
      child.kill('SIGKILL')
      return exited
    },
  }
}

/** effects log -> Map(key -> { start, done }), counting only `pids` when given, or all
 * but `except`. */
function effects(ws, { except } = {}) {
  const counts = new Map()
  if (!existsSync(ws.effects)) return counts
  for (const line of readFileSync(ws.effects, 'utf8').split('\n')) {
    if (line === '') continue
    const [event, key, pid] = line.split(' ')
    if (except !== undefined && Number(pid) === except) continue
    const c = counts.get(key) ?? { start: 0, done: 0 }
    c[event]++
    counts.set(key, c)
  }
  return counts
}

function results(ws) {
  if (!existsSync(ws.results)) return []
  return readFileSync(ws.results, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

describe('journal: exactly once across processes', () => {
  each('4 processes run 10,000 calls over 500 keys: each key runs once, and every caller gets its outcome', async (url) => {
    const ws = workspace()
    try {
      const keys = 500
      const perProcess = 2500
      const workers = []
      for (let p = 0; p < 4; p++) {
        const calls = []
        for (let i = 0; i < perProcess; i++) {
          const k = (i * 7 + p * 131 + Math.floor(Math.random() * keys)) % keys
          calls.push({ key: `k${k}`, tool: k % 3 === 0 ? 'sync_inventory' : 'pay', args: { n: k } })
        }
        workers.push(worker(ws, { url, mode: 'calls', calls, concurrency: 16, delayMs: 2 }, `p${p}`))
      }
      await Promise.all(workers.map((w) => w.finished()))
      const ran = effects(ws)
      const all = results(ws)
      assert.equal(all.length, 4 * perProcess)
      const byKey = new Map()
      for (const r of all) {
        assert.equal(r.success, true, JSON.stringify(r))
        const seen = byKey.get(r.key)
        if (seen === undefined) byKey.set(r.key, r.result)
        else assert.deepEqual(r.result, seen, `every caller of ${r.key} gets the same outcome`)
      }
      for (const key of byKey.keys()) {
        assert.deepEqual(ran.get(key), { start: 1, done: 1 }, `${key} ran exactly once`)
      }
      assert.equal([...ran.keys()].filter((k) => !byKey.has(k)).length, 0)
      const replayed = all.filter((r) => r.replayed).length
      assert.equal(replayed, all.length - byKey.size, 'every call but the first of each key was a replay')
    } finally {
      ws.done()
    }
  }, { timeout: 300_000 })
})

describe('journal: crashes (kill -9)', () => {
  each('a process killed mid-call: another recovers; the idempotent call completes once, the once call ends interrupted', async (url) => {
    const ws = workspace()
    try {
      const a = worker(ws, { url, mode: 'calls', concurrency: 2, hang: ['pay-1', 'inv-1'], calls: [
        { key: 'pay-1', tool: 'pay', args: { n: 1 } },
        { key: 'inv-1', tool: 'sync_inventory', args: { n: 1 } },
      ] }, 'a')
      await a.line('ready')
      for (let i = 0; i < 300 && !(effects(ws).get('pay-1')?.start && effects(ws).get('inv-1')?.start); i++) await new Promise((r) => setTimeout(r, 10))
      assert.equal((await a.kill()).signal, 'SIGKILL')
      // The next process recovers on start, then the agent loop replays both calls.
      const b = worker(ws, { url, mode: 'recover', waitMs: 3 * LEASE, calls: [
        { key: 'pay-1', tool: 'pay', args: { n: 1 } },
        { key: 'inv-1', tool: 'sync_inventory', args: { n: 1 } },
      ] }, 'b')
      await b.finished()
      const ran = effects(ws)
      assert.deepEqual(ran.get('pay-1'), { start: 1, done: 0 }, 'the once call never ran again')
      assert.deepEqual(ran.get('inv-1'), { start: 2, done: 1 }, 'the idempotent call ran again, and completed once')
      const [pay, inv] = ['pay-1', 'inv-1'].map((k) => results(ws).find((r) => r.key === k))
      assert.equal(pay.category, 'interrupted')
      assert.equal(pay.code, 'INTERRUPTED')
      assert.equal(inv.success, true)
      assert.match(b.output(), /recovered pay-1 interrupted/)
      assert.match(b.output(), /recovered inv-1 rerun/)
    } finally {
      ws.done()
    }
  }, { timeout: 120_000 })

  each('a process killed while a call awaits approval: another approves it, it runs exactly once, and a replay returns its result', async (url) => {
    const ws = workspace()
    try {
      const a = worker(ws, { url, mode: 'calls', calls: [{ key: 't-1', tool: 'transfer', args: { n: 7 } }] }, 'a')
      await a.line('waiting t-1')
      await a.kill()
      const b = worker(ws, { url, mode: 'approve', expect: 1, calls: [{ key: 't-1', tool: 'transfer', args: { n: 7 } }] }, 'b')
      await b.finished()
      assert.match(b.output(), /approved 1/)
      assert.deepEqual(effects(ws).get('t-1'), { start: 1, done: 1 })
      const replay = worker(ws, { url, mode: 'calls', calls: [{ key: 't-1', tool: 'transfer', args: { n: 7 } }] }, 'c')
      await replay.finished()
      const rs = results(ws).filter((r) => r.key === 't-1')
      assert.equal(rs.length, 2)
      assert.ok(rs.every((r) => r.success), JSON.stringify(rs))
      assert.deepEqual(rs[0].result, rs[1].result)
      assert.equal(rs[1].replayed, true)
      assert.deepEqual(effects(ws).get('t-1'), { start: 1, done: 1 }, 'the replay ran nothing')
    } finally {
      ws.done()
    }
  }, { timeout: 120_000 })

  each('50 kills at random points: 0 outcomes lost, 0 once calls run twice', async (url) => {
    const ws = workspace()
    try {
      const calls = []
      for (let i = 0; i < 50; i++) {
        const mine = []
        for (let j = 0; j < 12; j++) mine.push({ key: `r${i}-${j}`, tool: j % 3 === 0 ? 'sync_inventory' : 'pay', args: { n: j } })
        // The agent loop of the killed process is replayed too.
        if (i > 0) for (let j = 0; j < 4; j++) mine.push({ key: `r${i - 1}-${j}`, tool: j % 3 === 0 ? 'sync_inventory' : 'pay', args: { n: j } })
        calls.push(mine)
        const w = worker(ws, { url, mode: 'calls', calls: mine, concurrency: 4, delayMs: 8 }, `kill${i}`)
        await w.line('ready')
        await new Promise((r) => setTimeout(r, Math.random() * 60))
        await w.kill()
      }
      // A last process recovers what the others left, then replays every key.
      const every = calls.flat().filter((c, k, all) => all.findIndex((x) => x.key === c.key) === k)
      const check = worker(ws, { url, mode: 'recover', waitMs: 3 * LEASE, calls: every, concurrency: 8 }, 'check')
      await check.finished()
      const ran = effects(ws)
      const before = effects(ws, { except: check.child.pid })
      const final = new Map(results(ws).filter((r) => r.pid === check.child.pid).map((r) => [r.key, r]))
      assert.equal(final.size, every.length)
      for (const c of every) {
        const r = final.get(c.key)
        assert.ok(r.success || r.category === 'interrupted', `${c.key}: ${JSON.stringify(r)}`)
        if (c.tool === 'pay') {
          assert.ok((ran.get(c.key)?.start ?? 0) <= 1, `the once call ${c.key} ran twice`)
          // It started in a killed process: its outcome (or its interruption) was stored,
          // and the check replayed it instead of running it.
          if ((before.get(c.key)?.start ?? 0) > 0) assert.equal(r.replayed, true, `${c.key} started, and its outcome was lost`)
        } else {
          assert.equal(r.success, true, `the idempotent call ${c.key} completed`)
        }
      }
      const interrupted = [...final.values()].filter((r) => r.category === 'interrupted').length
      process.stderr.write(`# 50 kills: ${every.length} keys, ${interrupted} ended interrupted, ${[...ran.values()].reduce((n, r) => n + r.start, 0)} starts\n`)
    } finally {
      ws.done()
    }
  }, { timeout: 600_000 })
})
