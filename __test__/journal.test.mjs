// The durable journal (issue 21), through the public package, on SQLite and on a real
// Postgres server: idempotency keys, replay, conflict, waiting for a key in flight,
// approvals decided from another manager, retention, effects, and bad journals.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'
import { each, journalUrl, pgCluster } from './fixtures/journals.mjs'

const CENTS = { type: 'object', properties: { cents: { type: 'integer' }, to: { type: 'string' } }, required: ['cents'] }

function payments() {
  const registry = new ToolRegistry()
  const effects = []
  registry.register({
    name: 'pay', description: 'Pays', inputSchema: CENTS,
    handler: async ({ cents, to }, ctx) => {
      effects.push({ cents, key: ctx.idempotencyKey })
      if (to === 'nobody') throw new Error('no such payee')
      return { paid: cents }
    },
  })
  return { registry, effects }
}

describe('journal: idempotency', () => {
  each('the same key and arguments run once; the replay is marked and gets the stored outcome', async (url) => {
    const { registry, effects } = payments()
    const manager = new ToolExecutionManager(registry, { journal: url })
    const first = await manager.execute('pay', { cents: 5 }, { idempotencyKey: 'order-1' })
    assert.equal(first.success, true)
    assert.deepEqual(first.result, { paid: 5 })
    assert.equal(first.replayed, undefined)
    assert.equal(first.execution.idempotencyKey, 'order-1')
    assert.equal(first.execution.replayed, false)
    const again = await manager.execute('pay', { cents: 5 }, { idempotencyKey: 'order-1' })
    assert.equal(again.replayed, true)
    assert.equal(again.execution.replayed, true)
    assert.deepEqual(again.result, { paid: 5 })
    assert.deepEqual(effects, [{ cents: 5, key: 'order-1' }], 'the handler ran once, and saw its key')
    // A second manager on the same journal (another process would do the same).
    const other = new ToolExecutionManager(registry, { journal: url })
    assert.deepEqual((await other.execute('pay', { cents: 5 }, { idempotencyKey: 'order-1' })).result, { paid: 5 })
    assert.equal(effects.length, 1)
  })

  each('a result with a string cut inside a surrogate pair is replayed with U+FFFD, not as null', async (url) => {
    const registry = new ToolRegistry()
    registry.register({ name: 'cut', description: 'Cuts', inputSchema: { type: 'object' }, handler: () => ({ text: '💥💥'.slice(0, 3), [`k${'💥'.slice(1)}`]: 1 }) })
    const manager = new ToolExecutionManager(registry, { journal: url })
    const first = await manager.execute('cut', {}, { idempotencyKey: 'cut-1' })
    assert.deepEqual(first.result, { text: '💥\ud83d', ['k\udca5']: 1 })
    const again = await manager.execute('cut', {}, { idempotencyKey: 'cut-1' })
    assert.equal(again.replayed, true)
    assert.deepEqual(again.result, { text: '💥\ufffd', ['k\ufffd']: 1 })
  })

  each('one call at a time: each handler runs after execute() returns, as without a journal', async (url) => {
    // A lone call's journal answers may be waited for within execute() (the JS thread
    // spins briefly instead of sleeping): its attempt still starts after it returns.
    const registry = new ToolRegistry()
    let running = false
    registry.register({ name: 'mark', description: 'Marks', inputSchema: { type: 'object' }, handler: async () => { running = true; return 1 } })
    const manager = new ToolExecutionManager(registry, { journal: url })
    for (let i = 0; i < 20; i++) {
      running = false
      const call = manager.execute('mark', {}, { idempotencyKey: `lone-${i}` })
      assert.equal(running, false, `call ${i}: the handler ran inside execute()`)
      const r = await call
      assert.equal(r.success, true)
      assert.equal(running, true)
    }
  })

  each('a failure is stored and replayed too; a validation failure is not', async (url) => {
    const { registry, effects } = payments()
    const manager = new ToolExecutionManager(registry, { journal: url })
    const failed = await manager.execute('pay', { cents: 1, to: 'nobody' }, { idempotencyKey: 'f' })
    assert.equal(failed.error.code, 'EXECUTION_ERROR')
    const replay = await manager.execute('pay', { cents: 1, to: 'nobody' }, { idempotencyKey: 'f' })
    assert.equal(replay.replayed, true)
    assert.equal(replay.error.code, 'EXECUTION_ERROR')
    assert.equal(replay.error.message, failed.error.message)
    assert.equal(effects.length, 1)
    const invalid = await manager.execute('pay', { cents: 'x' }, { idempotencyKey: 'v' })
    assert.equal(invalid.error.code, 'INVALID_ARGUMENTS')
    const valid = await manager.execute('pay', { cents: 2 }, { idempotencyKey: 'v' })
    assert.equal(valid.success, true, 'the key was free: the invalid call was not stored')
    assert.equal(valid.replayed, undefined)
  })

  each('the same key with other arguments is refused with IDEMPOTENCY_CONFLICT, never run', async (url) => {
    const { registry, effects } = payments()
    const manager = new ToolExecutionManager(registry, { journal: url })
    await manager.execute('pay', { cents: 5 }, { idempotencyKey: 'k' })
    const conflict = await manager.execute('pay', { cents: 500 }, { idempotencyKey: 'k' })
    assert.equal(conflict.success, false)
    assert.equal(conflict.error.code, 'IDEMPOTENCY_CONFLICT')
    assert.equal(conflict.error.category, 'permanent')
    assert.match(conflict.error.message, /idempotency key 'k' was already used for a call of 'pay' with other arguments/)
    assert.equal(effects.length, 1)
    // Key order does not matter: the fingerprint is of the canonical JSON.
    registry.register({ name: 'pair', description: 'Two', handler: (a) => a })
    await manager.execute('pair', { a: 1, b: 2 }, { idempotencyKey: 'p' })
    assert.equal((await manager.execute('pair', { b: 2, a: 1 }, { idempotencyKey: 'p' })).replayed, true)
  })

  each('a caller of a key in flight waits for it and gets the same outcome', async (url) => {
    const registry = new ToolRegistry()
    let runs = 0
    let release
    const gate = new Promise((resolve) => (release = resolve))
    registry.register({ name: 'slow', description: 'Slow', handler: async () => { runs++; await gate; return { n: runs } } })
    const a = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 } })
    const b = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 } })
    const first = a.execute('slow', {}, { idempotencyKey: 'same' })
    await sleep(100)
    const second = b.execute('slow', {}, { idempotencyKey: 'same' })
    const third = a.execute('slow', {}, { idempotencyKey: 'same' })
    await sleep(100)
    assert.equal(runs, 1)
    release()
    const [r1, r2, r3] = await Promise.all([first, second, third])
    assert.deepEqual([r1.result, r2.result, r3.result], [{ n: 1 }, { n: 1 }, { n: 1 }])
    assert.deepEqual([r1.replayed, r2.replayed, r3.replayed], [undefined, true, true])
    assert.equal(runs, 1)
  })

  each('the key is the call option, else the tool-call id, scoped by session', async (url) => {
    const { registry, effects } = payments()
    const manager = new ToolExecutionManager(registry, { journal: url })
    await manager.execute('pay', { cents: 1 }, { toolCallId: 'call_1' })
    assert.equal((await manager.execute('pay', { cents: 1 }, { toolCallId: 'call_1' })).replayed, true)
    const s1 = registry.createSession()
    const s2 = registry.createSession()
    await manager.execute('pay', { cents: 1 }, { toolCallId: 'call_1', sessionId: s1.id })
    await manager.execute('pay', { cents: 1 }, { toolCallId: 'call_1', sessionId: s2.id })
    assert.equal(effects.length, 3, 'each session has its own keys')
    // Without a key or a tool-call id, each call is its own (its execution id).
    await manager.execute('pay', { cents: 1 })
    await manager.execute('pay', { cents: 1 })
    assert.equal(effects.length, 5)
    assert.equal(effects[3].key === effects[4].key, false)
  })

  each('retention: a finished outcome past journal.retentionMs is pruned, and the key runs again', async (url) => {
    const { registry, effects } = payments()
    const manager = new ToolExecutionManager(registry, { journal: { url, retentionMs: 100 } })
    await manager.execute('pay', { cents: 1 }, { idempotencyKey: 'old' })
    await sleep(600)
    // A new manager prunes on start (and every retention period, at most every minute).
    const later = new ToolExecutionManager(registry, { journal: { url, retentionMs: 100 } })
    await sleep(200)
    const r = await later.execute('pay', { cents: 1 }, { idempotencyKey: 'old' })
    assert.equal(r.replayed, undefined)
    assert.equal(effects.length, 2)
  })

  each('retries within an execution are one call: the key is stored once, with the final outcome', async (url) => {
    const registry = new ToolRegistry()
    let attempts = 0
    registry.register({ name: 'flaky', description: 'Busy once', handler: () => { if (++attempts === 1) throw transientError('busy'); return 'ok' } })
    const manager = new ToolExecutionManager(registry, { journal: url, retry: { maxAttempts: 3, baseDelay: 1, jitter: 'none' } })
    const r = await manager.execute('flaky', {}, { idempotencyKey: 'r' })
    assert.equal(r.result, 'ok')
    assert.equal(r.execution.retry.attemptNumber, 2)
    assert.equal((await manager.execute('flaky', {}, { idempotencyKey: 'r' })).result, 'ok')
    assert.equal(attempts, 2)
  })
})

describe('journal: approvals that outlive the process', () => {
  each('another manager on the journal lists, and approves, a call this one waits on', async (url) => {
    const { registry, effects } = payments()
    registry.unregister('pay')
    registry.register({ name: 'pay', description: 'Pays', inputSchema: CENTS, needsApproval: true, handler: ({ cents }) => { effects.push(cents); return { paid: cents } } })
    const waiting = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 } })
    const approver = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 } })
    const call = waiting.execute('pay', { cents: 40 }, { idempotencyKey: 'a1' })
    let pending = []
    for (let i = 0; i < 100 && pending.length === 0; i++) {
      pending = await approver.pendingApprovals()
      await sleep(10)
    }
    assert.equal(pending.length, 1)
    assert.equal(pending[0].toolName, 'pay')
    assert.deepEqual(pending[0].args, { cents: 40 })
    assert.equal(pending[0].idempotencyKey, 'a1')
    // The call waits in another manager: an edit that is not JSON is named by its approval.
    await assert.rejects(approver.approve(pending[0].approvalId, { args: '{"cents": 3' }), {
      code: 'INVALID_ARGUMENTS', message: new RegExp(`^invalid edited arguments for approval '${pending[0].approvalId}': malformed JSON`),
    })
    await approver.approve(pending[0].approvalId, { args: { cents: 30 }, by: 'grace' })
    const r = await call
    assert.deepEqual(r.result, { paid: 30 }, 'edited arguments reach the handler')
    assert.equal(r.execution.approval.by, 'grace')
    assert.equal(r.execution.approval.edited, true)
    assert.deepEqual(effects, [30])
    await assert.rejects(approver.approve(pending[0].approvalId), { code: 'APPROVAL_NOT_FOUND' })
    assert.deepEqual(await waiting.pendingApprovals(), [])
  })

  each('exactly one decision wins when two managers answer at once', async (url) => {
    const registry = new ToolRegistry()
    let runs = 0
    registry.register({ name: 'wire', description: 'Wires', needsApproval: true, handler: () => ++runs })
    const a = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 } })
    const b = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 } })
    const calls = []
    for (let k = 0; k < 10; k++) calls.push(a.execute('wire', {}, { idempotencyKey: `w${k}` }))
    let pending = []
    while (pending.length < 10) pending = await a.pendingApprovals()
    const decisions = pending.flatMap(({ approvalId }) => [
      a.approve(approvalId).then(() => 'approved', (e) => e.code),
      b.deny(approvalId, { reason: 'no' }).then(() => 'denied', (e) => e.code),
    ])
    const answered = await Promise.all(decisions)
    const results = await Promise.all(calls)
    for (let k = 0; k < 10; k++) {
      const [approve, deny] = answered.slice(2 * k, 2 * k + 2)
      assert.equal([approve, deny].filter((d) => d === 'APPROVAL_NOT_FOUND').length, 1, `one of ${approve} / ${deny} lost`)
      const r = results.find((x) => x.execution.idempotencyKey === pending[k].idempotencyKey)
      assert.equal(r.success, approve === 'approved', 'the call did what the winning decision said')
    }
    assert.equal(runs, results.filter((r) => r.success).length)
  })

  each('approvalTimeoutMs still denies, and a cancel lets the key go', async (url) => {
    const registry = new ToolRegistry()
    registry.register({ name: 'wire', description: 'Wires', needsApproval: true, handler: () => 'sent' })
    const manager = new ToolExecutionManager(registry, { journal: { url, pollMs: 10 }, approvalTimeoutMs: 100 })
    const r = await manager.execute('wire', {}, { idempotencyKey: 't' })
    assert.equal(r.error.code, 'APPROVAL_DENIED')
    assert.match(r.error.message, /nobody approved it within 100 ms/)
    assert.equal((await manager.execute('wire', {}, { idempotencyKey: 't' })).replayed, true, 'the denial is the stored outcome')
    const controller = new AbortController()
    const call = manager.execute('wire', {}, { idempotencyKey: 'c', signal: controller.signal, timeoutMs: 1000 })
    await sleep(50)
    controller.abort()
    assert.equal((await call).error.code, 'CANCELLED')
    await sleep(50)
    assert.deepEqual(await manager.pendingApprovals(), [], 'the cancelled call no longer waits')
  })
})

describe('journal: close()', () => {
  each('close() waits for the calls in flight, then lets the journal go; calls made from close() on fail without running', async (url) => {
    const registry = new ToolRegistry()
    let release
    const runs = []
    registry.register({ name: 'slow', description: 'Slow', handler: async (args) => { runs.push(args.n); if (args.n === 1) await new Promise((r) => (release = r)); return args.n } })
    const manager = new ToolExecutionManager(registry, { journal: url })
    const inFlight = manager.execute('slow', { n: 1 }, { idempotencyKey: 'one' })
    await sleep(50)
    let closed = false
    const closing = manager.close().then(() => (closed = true))
    // A call made while it waits is refused: calls that kept coming kept close() waiting
    // for ever.
    const during = await manager.execute('slow', { n: 3 }, { idempotencyKey: 'three' })
    assert.equal(during.error.code, 'JOURNAL_UNAVAILABLE')
    assert.equal(during.error.category, 'permanent')
    assert.equal(during.error.retryable, false)
    assert.equal(during.error.message, "tool 'slow' was not run: its journal cannot be used (close() was called on its manager); calling it again fails the same way")
    await sleep(50)
    assert.equal(closed, false, 'close() waits for the call in flight')
    release()
    assert.equal((await inFlight).result, 1)
    await closing
    if (url.startsWith('sqlite:')) {
      // The connection is closed when close() resolves (SQLite removes its -wal file with
      // the last one): it resolved while the thread still held it, so a backup or a move
      // of the file just after raced it.
      assert.equal(existsSync(`${url.slice('sqlite:'.length)}-wal`), false)
    }
    const after = await manager.execute('slow', { n: 2 }, { idempotencyKey: 'two' })
    assert.equal(after.error.code, 'JOURNAL_UNAVAILABLE')
    assert.equal(after.error.message, during.error.message)
    assert.deepEqual(runs, [1])
    await assert.rejects(manager.pendingApprovals(), { code: 'JOURNAL_UNAVAILABLE' })
    // They never settled, and kept the process alive.
    await assert.rejects(manager.approve('any-id'), { code: 'JOURNAL_UNAVAILABLE', message: /journal was closed/ })
    await assert.rejects(manager.deny('any-id'), { code: 'JOURNAL_UNAVAILABLE', message: /journal was closed/ })
  })
})

describe('journal: effects', () => {
  each('effect is declared in metadata, defaults to once, and maps to and from MCP hints', async (url) => {
    const registry = new ToolRegistry()
    registry.register({ name: 'search', description: 'Reads', metadata: { effect: 'read' }, handler: () => 1 })
    registry.register({ name: 'upsert', description: 'Writes twice safely', metadata: { effect: 'idempotent' }, handler: () => 1 })
    registry.register({ name: 'lookup', description: 'Reads', metadata: { readOnly: true }, handler: () => 1 })
    const hints = Object.fromEntries(registry.toMcpTools().map((t) => [t.name, t.annotations]))
    assert.deepEqual(hints.search, { readOnlyHint: true })
    assert.deepEqual(hints.upsert, { idempotentHint: true })
    assert.throws(() => registry.register({ name: 'x', description: 'x', metadata: { effect: 'once', readOnly: true }, handler() {} }), { code: 'INVALID_DEFINITION', message: /effect 'once' contradicts readOnly/ })
    assert.throws(() => registry.register({ name: 'y', description: 'y', metadata: { effect: 'twice' }, handler() {} }), { code: 'INVALID_DEFINITION', message: /twice/ })
    assert.ok(new ToolExecutionManager(registry, { journal: url }))
  })
})

describe('journal: bad journals fail at construction', () => {
  const registry = new ToolRegistry()
  // SQLite's case is in the Rust tests (crates/toolhost/tests/journal_stores.rs): Node 20
  // has no SQLite client to write the version with.
  test('a newer schema is refused with JOURNAL_SCHEMA_NEWER [postgres]', async () => {
    const url = await journalUrl('postgres')
    new ToolExecutionManager(registry, { journal: url })
    const pg = await pgCluster()
    pg.sql(url.slice(url.lastIndexOf('/') + 1), "UPDATE toolhost_meta SET value = '999' WHERE name = 'schema_version'")
    assert.throws(() => new ToolExecutionManager(registry, { journal: url }), { code: 'JOURNAL_SCHEMA_NEWER', message: /newer than this toolhost knows/ })
  })

  test('malformed URLs are INVALID_CONFIG, naming what is expected', () => {
    for (const journal of ['mysql://x', 'sqlite:', 'postgres://u@h:notaport/db', 42, { url: 'sqlite:x.db', retention: 5 }]) {
      assert.throws(() => new ToolExecutionManager(registry, { journal }), { code: 'INVALID_CONFIG' }, JSON.stringify(journal))
    }
    assert.throws(() => new ToolExecutionManager(registry, { journal: { url: 'sqlite:x.db', retention: 5 } }), { message: /did you mean `retentionMs`\?/ })
    assert.throws(() => new ToolExecutionManager(registry, { jurnal: 'sqlite:x.db' }), { message: /did you mean `journal`\?/ })
    // Past 2^53 - 1 they wrapped negative in the store: a "keep for ever" retention
    // deleted every outcome at once (a replayed payment ran again), a long lease had
    // always run out.
    for (const key of ['retentionMs', 'leaseMs', 'pollMs']) {
      assert.throws(() => new ToolExecutionManager(registry, { journal: { url: 'sqlite:x.db', [key]: 1e19 } }), {
        code: 'INVALID_CONFIG',
        message: new RegExp(`journal\\.${key} must be a whole number of milliseconds from \\d+ to 9007199254740991`),
      })
    }
    // SQLite counts its busy timeout in an i32 of milliseconds.
    for (const operationTimeoutMs of [0, -1, 1.5, 2 ** 31, Infinity, '3000']) {
      assert.throws(() => new ToolExecutionManager(registry, { journal: { url: 'sqlite:x.db', operationTimeoutMs } }), {
        code: 'INVALID_CONFIG',
        message: 'journal.operationTimeoutMs must be a whole number of milliseconds from 1 to 2147483647 (about 24.8 days)',
      }, String(operationTimeoutMs))
    }
    assert.throws(() => new ToolExecutionManager(registry, { journal: { url: 'sqlite:x.db', operationTimeout: 5 } }), { message: /did you mean `operationTimeoutMs`\?/ })
  })

  test('an unreachable Postgres is JOURNAL_UNAVAILABLE at construction, not at the first call', async () => {
    const started = Date.now()
    assert.throws(() => new ToolExecutionManager(registry, { journal: 'postgres://postgres@127.0.0.1:1/none' }), { code: 'JOURNAL_UNAVAILABLE', message: /127\.0\.0\.1:1/ })
    assert.ok(Date.now() - started < 5000)
  })

  test('a corrupt SQLite file and a missing folder are JOURNAL_UNAVAILABLE, never a silent fallback to memory', async () => {
    const url = await journalUrl('sqlite')
    const path = url.slice('sqlite:'.length)
    writeFileSync(path, 'not a database, just text that is long enough to fill a header of one hundred bytes...........')
    assert.throws(() => new ToolExecutionManager(registry, { journal: url }), { code: 'JOURNAL_UNAVAILABLE', message: /not a SQLite database/ })
    assert.throws(() => new ToolExecutionManager(registry, { journal: `${url}.missing/dir/x.db` }), { code: 'JOURNAL_UNAVAILABLE' })
  })

  test('a SQLite file this process may only read is JOURNAL_UNAVAILABLE at construction, not a manager whose every call fails', async () => {
    // SQLite opens such a file read-only without a word; a journal whose schema was
    // already there then failed each call "transient, safe to call again", for ever.
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-readonly-'))
    const path = join(dir, 'j.db')
    try {
      await new ToolExecutionManager(registry, { journal: `sqlite:${path}` }).close()
      chmodSync(dir, 0o777)
      chmodSync(path, 0o444)
      // root writes any file: the child drops to nobody (65534), as a service user would be.
      const open = `import('toolhost').then(({ ToolRegistry, ToolExecutionManager }) => {
        try { new ToolExecutionManager(new ToolRegistry(), { journal: ${JSON.stringify(`sqlite:${path}`)} }); console.log('OPENED') }
        catch (e) { console.log(e.code, e.message) }
      })`
      const [cmd, ...args] = process.getuid?.() === 0
        ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', open]
        : [process.execPath, '-e', open]
      const out = await new Promise((resolve, reject) => {
        const child = spawn(cmd, args, { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] })
        let text = ''
        child.stdout.on('data', (d) => { text += d })
        child.on('error', reject)
        child.on('exit', (code) => (code === 0 ? resolve(text.trim()) : reject(new Error(`exit ${code}: ${text}`))))
      })
      assert.equal(out, `JOURNAL_UNAVAILABLE the SQLite journal at ${path}: the file is read-only to this process, and a journal must be written`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a SQLite file deleted under a manager fails its new calls permanent, not "safe to call again"', async () => {
    const url = await journalUrl('sqlite')
    const path = url.slice('sqlite:'.length)
    const { registry: reg, effects } = payments()
    const manager = new ToolExecutionManager(reg, { journal: url })
    assert.equal((await manager.execute('pay', { cents: 1 }, { idempotencyKey: 'before' })).success, true)
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
    for (const key of ['after-1', 'after-2']) {
      const r = await manager.execute('pay', { cents: 2 }, { idempotencyKey: key })
      assert.equal(r.error.code, 'JOURNAL_UNAVAILABLE')
      assert.equal(r.error.category, 'permanent')
      assert.equal(r.error.retryable, false)
      assert.match(r.error.message, /^tool 'pay' was not run: its journal cannot be used \(.*deleted or replaced.*\); calling it again fails the same way$/)
    }
    assert.equal(effects.length, 1, 'nothing ran after the deletion')
    await manager.close()
  })

  test('a page corrupted while in use fails a call that ran JOURNAL_UNAVAILABLE, saying it ran, instead of hanging', async () => {
    // The outcome's write failed "malformed" and was retried for ever: execute() and
    // close() never settled, and nothing said why.
    const url = await journalUrl('sqlite')
    const path = url.slice('sqlite:'.length)
    const reg = new ToolRegistry()
    let ran = 0
    reg.register({ name: 'pay', description: 'p', inputSchema: { type: 'object', properties: { pad: { type: 'string' } } }, handler: () => ({ n: ++ran }) })
    const filling = new ToolExecutionManager(reg, { journal: url })
    await Promise.all(Array.from({ length: 300 }, (_, i) => filling.execute('pay', { pad: 'x'.repeat(200) + i }, { idempotencyKey: 'k' + i })))
    await filling.close()
    ran = 0
    const fd = openSync(path, 'r+'); writeSync(fd, Buffer.alloc(4096, 0x41), 0, 4096, 6 * 4096); closeSync(fd)
    const manager = new ToolExecutionManager(reg, { journal: url })
    const r = await Promise.race([manager.execute('pay', { pad: 'new' }, { idempotencyKey: 'new1' }), sleep(10_000, 'PENDING')])
    assert.notEqual(r, 'PENDING', 'the call settles')
    assert.equal(ran, 1)
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'JOURNAL_UNAVAILABLE')
    assert.equal(r.error.retryable, false)
    assert.match(r.error.message, /ran .*could not be recorded.*malformed.*Its effect happened/s)
    assert.ok(r.error.message.includes(path), r.error.message)
    assert.equal(await Promise.race([manager.close().then(() => 'closed'), sleep(5000, 'PENDING')]), 'closed')
  })

  test('idempotencyKey must be a non-empty string', async () => {
    const manager = new ToolExecutionManager(registry)
    await assert.rejects(manager.execute('x', {}, { idempotencyKey: '' }), { code: 'INVALID_CONFIG', message: /idempotencyKey must not be empty/ })
    await assert.rejects(manager.execute('x', {}, { idempotencyKey: 5 }), { code: 'INVALID_CONFIG', message: /idempotencyKey must be a string/ })
  })
})

describe('journal: a SQLite file another process holds', () => {
  // Python's sqlite3 holds the write lock (python3 is what the MCP client tests use too).
  // Leases are the default 10 s, so the first renewal falls due 3.3 s after the manager
  // starts: inside the new call's 5 s wait. Its answer must not wait for that renewal,
  // which waits out the same timeout (10 s before).
  test('a new call waits out the 5 s busy timeout, then fails JOURNAL_UNAVAILABLE without running', { timeout: 60_000 }, async () => {
    const { registry, effects } = payments()
    const url = await journalUrl('sqlite')
    const manager = new ToolExecutionManager(registry, { journal: url })
    assert.equal((await manager.execute('pay', { cents: 1 }, { idempotencyKey: 'before' })).success, true)
    const script = 'import sqlite3, sys, time\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute("BEGIN IMMEDIATE")\nprint("held", flush=True)\ntime.sleep(30)'
    const holder = spawn('python3', ['-c', script, url.slice('sqlite:'.length)], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      await new Promise((resolve, reject) => {
        holder.once('error', (e) => reject(new Error(`python3 holds the lock for this test: ${e.message}`)))
        holder.once('exit', (code) => reject(new Error(`python3 exited ${code} before it held the lock`)))
        holder.stdout.once('data', resolve)
      })
      const started = Date.now()
      const r = await manager.execute('pay', { cents: 2 }, { idempotencyKey: 'while-held' })
      const waited = Date.now() - started
      assert.equal(r.success, false)
      assert.equal(r.error.code, 'JOURNAL_UNAVAILABLE')
      assert.equal(r.error.category, 'transient')
      assert.match(r.error.message, /database is locked/)
      assert.ok(waited >= 4_500 && waited < 8_000, `failed after ${waited} ms: the busy timeout is 5 s`)
      assert.deepEqual(effects.map((e) => e.key), ['before'], 'the call did not run')
    } finally {
      holder.kill('SIGKILL')
    }
    await manager.close()
  })
})

describe('journal: Postgres lost mid-run', () => {
  test('calls fail JOURNAL_UNAVAILABLE without running; the outcome of a call in flight is written once the server is back; nothing runs twice [postgres]', { timeout: 120_000 }, async () => {
    const pg = await pgCluster()
    const url = await journalUrl('postgres')
    const registry = new ToolRegistry()
    const runs = []
    let release
    let started
    const gate = new Promise((resolve) => (release = resolve))
    const running = new Promise((resolve) => (started = resolve))
    registry.register({
      name: 'pay', description: 'Pays', inputSchema: CENTS,
      handler: async ({ cents }) => {
        runs.push(cents)
        if (cents === 1) {
          started()
          await gate
        }
        return { paid: cents }
      },
    })
    const manager = new ToolExecutionManager(registry, { journal: { url, pollMs: 20 } })
    const inFlight = manager.execute('pay', { cents: 1 }, { idempotencyKey: 'in-flight' })
    // Its claim is written once its handler runs: the server goes down after that.
    await Promise.race([running, inFlight.then((r) => assert.fail(`the first call ended before the crash: ${JSON.stringify(r)}`))])
    pg.crash()
    try {
      const refused = await manager.execute('pay', { cents: 2 }, { idempotencyKey: 'while-down' })
      assert.equal(refused.success, false)
      assert.equal(refused.error.code, 'JOURNAL_UNAVAILABLE')
      assert.equal(refused.error.category, 'transient')
      assert.match(refused.error.message, /tool 'pay' was not run: its journal could not be reached/)
      assert.deepEqual(runs, [1], 'a call that cannot be claimed never runs')
      // The call in flight finishes while the server is down: its outcome waits to be written.
      release()
      let settled = false
      inFlight.then(() => (settled = true))
      await sleep(300)
      assert.equal(settled, false, 'its caller hears of it only once the journal has it')
    } finally {
      pg.restart()
    }
    const r = await inFlight
    assert.deepEqual(r.result, { paid: 1 })
    // Both keys: one replayed, the other runs now that the journal is back.
    assert.equal((await manager.execute('pay', { cents: 1 }, { idempotencyKey: 'in-flight' })).replayed, true)
    assert.equal((await manager.execute('pay', { cents: 2 }, { idempotencyKey: 'while-down' })).success, true)
    assert.deepEqual(runs, [1, 2])
  })

  test('a script whose call waits for the journal to take its outcome stays alive until the journal is back, then exits by itself [postgres]', { timeout: 120_000 }, async () => {
    const pg = await pgCluster()
    const url = await journalUrl('postgres')
    const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/journal-outage.mjs', import.meta.url)), url], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    const said = async (line, ms = 30_000) => {
      for (const until = Date.now() + ms; !out.split('\n').includes(line); await sleep(20)) {
        if (child.exitCode !== null || Date.now() > until) assert.fail(`no line '${line}' (exit ${child.exitCode}); stdout: ${out} stderr: ${err.slice(-2000)}`)
      }
    }
    try {
      await said('running')
      pg.crash()
      try {
        child.kill('SIGUSR2')
        await said('returned')
        // The outcome cannot be written: the script has nothing else to do, and stays.
        await sleep(1_500)
        assert.equal(child.exitCode, null, `the script exited while its call's outcome was unwritten; stdout: ${out} stderr: ${err.slice(-2000)}`)
        assert.doesNotMatch(out, /settled/, 'its caller hears of it only once the journal has it')
      } finally {
        pg.restart()
      }
      const { code, signal } = await exited
      assert.equal(code, 0, `exit ${code ?? signal}: ${err.slice(-2000)}`)
      assert.match(out, /^settled \{"paid":1\}$/m)
    } finally {
      child.kill('SIGKILL')
    }
    // The outcome is in the journal: the same key is a replay, and nothing runs here.
    const registry = new ToolRegistry()
    registry.register({ name: 'pay', description: 'Pays', inputSchema: { type: 'object' }, handler: () => assert.fail('ran again') })
    const manager = new ToolExecutionManager(registry, { journal: url })
    const again = await manager.execute('pay', {}, { idempotencyKey: 'outage' })
    assert.equal(again.replayed, true, JSON.stringify(again))
    assert.deepEqual(again.result, { paid: 1 })
    await manager.close()
  })
})
