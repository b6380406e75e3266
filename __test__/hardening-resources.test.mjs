// Hardening (issue 16), the findings about resources: memory a terminated worker leaves
// behind, registry operations at scale, and the audit file. Each has a regression test
// here, named after its finding, through the public package.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { makeTempDir, removeTempDir } from './fixtures/temp-dir.mjs'

const run = promisify(execFile)

const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } }, required: ['city'] }

/** Milliseconds one block of `ops` registrations and as many unregistrations of other
 * names takes in `scope` (a registry or a session), at whatever size it has; the best of
 * three, so one pause of the machine does not decide it. */
function blockCost(scope, ops, label) {
  let best = Infinity
  for (let rep = 0; rep < 3; rep++) {
    const names = Array.from({ length: ops }, (_, i) => `${label}_${rep}_${i}`)
    const start = performance.now()
    for (const name of names) scope.register({ name, description: 'A tool', inputSchema: schema, handler: () => 1 })
    for (const name of names) scope.unregister(name)
    best = Math.min(best, performance.now() - start)
  }
  return best
}

function fill(scope, from, to) {
  for (let i = from; i < to; i++) scope.register({ name: `fill_${i}`, description: 'A tool', inputSchema: schema, handler: () => 1 })
}

describe('finding 8: registry operations cost the same at 1,000 and 16,000 tools', () => {
  // Before the fix each registration copied the scope's list of names and each
  // unregistration searched it: a block of 1,000 cost ~16x more at 16k tools than at 1k.
  // The bound is generous (timing on a shared machine is noisy) but far below that.
  const BOUND = 5

  test('registering and unregistering in the global scope', () => {
    const registry = new ToolRegistry()
    fill(registry, 0, 1000)
    const small = blockCost(registry, 1000, 'small')
    fill(registry, 1000, 16000)
    const large = blockCost(registry, 1000, 'large')
    assert.ok(large < BOUND * small, `a block of 1,000 operations took ${large.toFixed(0)} ms at 16k tools against ${small.toFixed(0)} ms at 1k`)
    assert.equal(registry.names.length, 16000)
  })

  test('in a session', () => {
    const registry = new ToolRegistry()
    fill(registry, 0, 100)
    const session = registry.createSession()
    fill(session, 0, 1000)
    const small = blockCost(session, 1000, 'small')
    fill(session, 1000, 16000)
    const large = blockCost(session, 1000, 'large')
    assert.ok(large < BOUND * small, `a block of 1,000 operations took ${large.toFixed(0)} ms at 16k tools against ${small.toFixed(0)} ms at 1k`)
    assert.equal(session.names.length, 16000, 'its own tools shadow the global ones of the same name')
  })

  // A change listener gets the names visible after each change, which is a list as long
  // as the registry (a copy, not a walk of the engine's registry): check they are right.
  test('change events list the names each scope sees afterwards', () => {
    const registry = new ToolRegistry()
    const open = registry.createSession()
    const isolated = registry.createSession({ isolated: true })
    const seen = []
    registry.on('tool-registry-change', (d) => seen.push(d))
    const add = (scope, name) => scope.register({ name, description: 'A tool', handler: () => 1 })
    const expect = (scope) => assert.deepEqual(seen.at(-1).toolNames, scope.names)
    add(registry, 'a'), expect(registry)
    add(registry, 'b'), expect(registry)
    add(open, 'b'), expect(open)
    add(open, 'c'), expect(open)
    add(isolated, 'd'), expect(isolated)
    add(registry, 'e'), expect(registry)
    assert.deepEqual(open.names, ['b', 'c', 'a', 'e'])
    registry.unregister('a'), expect(registry)
    open.unregister('b'), expect(open)
    assert.deepEqual(open.names, ['c', 'b', 'e'])
    registry.clear(), expect(registry)
    open.unregister('c'), expect(open)
    assert.deepEqual(seen.at(-1).toolNames, [])
    isolated.destroy()
    assert.deepEqual(seen.at(-1), { action: 'session-destroyed', toolNames: ['d'], sessionId: isolated.id })
  })
})

describe('finding 4: terminating a worker with executions pending frees their state', () => {
  // Each child process (node --expose-gc) warms up with 10 workers, then runs 20 more,
  // each starting 3,000 executions and terminated while they are pending; it reports
  // its RSS after GC before and after the 20. Measured on a 2-core machine: +0.5-1 MB
  // with all kinds mixed or only backoff delays, +4 MB for the control (workers that
  // only load toolhost). Before the fix the backoff delays' timers outlived the worker
  // (+30 MB: ~500 B per execution, held for the whole delay); the leak the review
  // measured was ~1.7 KB per execution (+100 MB here).
  const LIMIT_MB = 10
  const fixture = fileURLToPath(new URL('./fixtures/worker-termination.mjs', import.meta.url))
  const child = async (mode) => {
    const { stdout } = await run(process.execPath, ['--expose-gc', fixture, mode, '20', '3000'], { timeout: 60000 })
    return JSON.parse(stdout.trim().split('\n').at(-1))
  }

  test('RSS stays flat over 20 workers x 3,000 pending executions (every kind mixed, and only backoff delays)', async () => {
    const results = await Promise.all([child('pending'), child('backoff')])
    for (const r of results) {
      const growth = r.after - r.before
      assert.ok(growth < LIMIT_MB, `mode ${r.mode}: RSS grew ${growth.toFixed(1)} MB (${r.before.toFixed(0)} -> ${r.after.toFixed(0)} MB) over ${r.workers} workers x ${r.pending} pending`)
    }
  })
})

describe('finding 10: the audit file', () => {
  /** A manager auditing to `dir/logs/audit.jsonl`, with what it reports. */
  function audited(options = {}) {
    const dir = makeTempDir('toolhost-h16-')
    const logs = join(dir, 'logs')
    mkdirSync(logs)
    const path = join(logs, 'audit.jsonl')
    const registry = new ToolRegistry()
    registry.register({ name: 'echo', description: 'Echoes', handler: (a) => a })
    const errors = []
    const logged = []
    const manager = new ToolExecutionManager(registry, { auditLog: path, logger: (level, message) => logged.push({ level, message }), ...options })
    manager.on('tool-audit-error', (d) => errors.push(d))
    const lines = () => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l).executionId) : [])
    return { dir, logs, path, manager, errors, logged, lines, cleanup: () => removeTempDir(dir) }
  }

  // Windows does not let a folder holding an open file be deleted, and moving the open
  // file away is not checked there (crates/toolhost/src/audit.rs: Unix only).
  const UNIX_ONLY = { skip: process.platform === 'win32' && 'Windows keeps an open file at its path: it cannot be deleted with its folder, and rotation is not checked there' }

  test("its directory deleted after the manager opened it: each record is reported, and written again once it is back", UNIX_ONLY, async () => {
    const a = audited()
    try {
      const first = await a.manager.execute('echo', { n: 1 })
      assert.deepEqual(a.lines(), [first.execution.id])
      rmSync(a.logs, { recursive: true })
      const lost = await a.manager.execute('echo', { n: 2 })
      assert.equal(lost.success, true, 'the call still succeeds')
      assert.equal(a.errors.length, 1, 'the record that could not be written is reported')
      assert.equal(a.errors[0].record.executionId, lost.execution.id)
      assert.match(a.errors[0].message, /audit log .*audit\.jsonl could not be written: .*deleted/)
      assert.equal(a.logged.filter((l) => l.level === 'error').length, 1)
      await a.manager.execute('echo', { n: 3 })
      assert.equal(a.errors.length, 2, 'and every one after it')
      mkdirSync(a.logs)
      const back = await a.manager.execute('echo', { n: 4 })
      assert.equal(a.errors.length, 2)
      assert.deepEqual(a.lines(), [back.execution.id])
    } finally {
      a.cleanup()
    }
  })

  test('the file deleted or moved away (log rotation): created again at the path, nothing reported', UNIX_ONLY, async () => {
    const a = audited()
    try {
      await a.manager.execute('echo', { n: 1 })
      renameSync(a.path, `${a.path}.1`)
      // The path is checked at most once a second (a deleted file at every record).
      await new Promise((r) => setTimeout(r, 1100))
      const afterRotation = await a.manager.execute('echo', { n: 2 })
      assert.deepEqual(a.lines(), [afterRotation.execution.id])
      assert.equal(readFileSync(`${a.path}.1`, 'utf8').split('\n').filter(Boolean).length, 1, 'the rotated file gets nothing more')
      rmSync(a.path)
      const afterDelete = await a.manager.execute('echo', { n: 3 })
      assert.deepEqual(a.lines(), [afterDelete.execution.id])
      assert.equal(a.errors.length, 0)
    } finally {
      a.cleanup()
    }
  })

  test("auditSync: 'fsync' writes each record before execute() resolves, like the default 'flush'", async () => {
    for (const auditSync of ['fsync', 'flush', undefined]) {
      const a = audited({ auditSync })
      try {
        const ids = []
        for (let i = 0; i < 5; i++) {
          const r = await a.manager.execute('echo', { i })
          ids.push(r.execution.id)
          assert.deepEqual(a.lines(), ids, `auditSync ${auditSync}: on disk when the call resolves`)
        }
        assert.equal(a.errors.length, 0)
      } finally {
        a.cleanup()
      }
    }
  })

  test('auditSync is checked like the other options: a misspelt mode is refused with the closest one', () => {
    const registry = new ToolRegistry()
    const refused = (auditSync) => {
      try {
        new ToolExecutionManager(registry, { auditLog: join(tmpdir(), 'never-written.jsonl'), auditSync })
      } catch (e) {
        return e
      }
      assert.fail(`auditSync ${JSON.stringify(auditSync)} was accepted`)
    }
    for (const [value, message] of [
      ['fsynk', /auditSync must be 'flush' \(the default\) or 'fsync', not 'fsynk'; did you mean 'fsync'\?/],
      ['FLUSH', /did you mean 'flush'\?/],
      ['always', /auditSync must be 'flush' \(the default\) or 'fsync', not 'always'$/],
      [true, /auditSync must be 'flush' \(the default\) or 'fsync', not true/],
    ]) {
      const e = refused(value)
      assert.equal(e.code, 'INVALID_CONFIG')
      assert.match(e.message, message)
    }
  })
})

describe('a manager holds little until it is collected (adversarial pass, stop 44)', () => {
  // A loop that makes managers and awaits one call each never returns to the event loop,
  // so no finalizer runs: what each manager holds piles up. Each engine's scratch buffer
  // was 64 KB: 4,000 managers took 256 MB of external memory (Node) or wasm memory (the
  // WebAssembly backend, whose memory never shrinks). It is 4 KB now: measured, 4.0 KB a
  // manager in all (napi) and 7.9 KB (wasm, the engine's own state is in that memory
  // too); the bound is 16 KB.
  const MANAGERS = 4000
  const script = `
    import { ToolRegistry, ToolExecutionManager } from 'toolhost'
    const registry = new ToolRegistry()
    registry.register({ name: 'ok', description: 'Answers', handler: () => 1 })
    await new ToolExecutionManager(registry).execute('ok', {})
    const before = process.memoryUsage().external
    for (let i = 0; i < ${MANAGERS}; i++) {
      const r = await new ToolExecutionManager(registry).execute('ok', {})
      if (r.result !== 1) throw new Error('wrong result')
    }
    console.log(JSON.stringify({ grewKB: (process.memoryUsage().external - before) / 1024 }))
  `
  for (const backend of ['napi', 'wasm']) {
    test(`${MANAGERS.toLocaleString('en-US')} managers made in a loop, one call each, hold under 16 KB each (${backend})`, async () => {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60000, env: { ...process.env, TOOLHOST_BACKEND: backend } })
      const { grewKB } = JSON.parse(stdout.trim().split('\n').at(-1))
      assert.ok(grewKB / MANAGERS < 16, `${backend}: external memory grew ${(grewKB / 1024).toFixed(1)} MB, ${(grewKB / MANAGERS).toFixed(1)} KB a manager`)
    })
  }
})

describe('names a model makes up do not pile up in the manager (adversarial pass, stop 45)', () => {
  test('a TOOL_NOT_FOUND call is kept in the bounded history, and counted in no statistics', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'real', description: 'A tool', handler: () => 1 })
    const manager = new ToolExecutionManager(registry, { historyLimit: 10 })
    for (let i = 0; i < 50; i++) assert.equal((await manager.execute(`made_up_${i}`, {})).error.code, 'TOOL_NOT_FOUND')
    assert.deepEqual([manager.stats('made_up_49').executionCount, manager.stats('made_up_49').lastError], [0, undefined])
    assert.equal(manager.getExecutions().length, 10)
    assert.equal(manager.getExecutions()[0].toolName, 'made_up_49')
    // A tool's own failures are still counted.
    registry.register({ name: 'failing', description: 'A tool', handler: () => { throw new Error('down') } })
    await manager.execute('failing', {})
    assert.deepEqual([manager.stats('failing').failureCount, manager.stats('failing').lastError.message], [1, "tool 'failing' failed: down"])
  })
})
