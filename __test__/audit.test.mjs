// Audit trail (issue 4): one record per finished execution, sent as
// `tool-invocation-recorded` and appended to `auditLog` as one JSON line, flushed before
// execute() resolves; inputHash is SHA-256 of the canonical (key-sorted) arguments, with
// redacted fields; an unwritable file is reported and the call still completes.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'
import { makeTempDir, removeTempDir } from './fixtures/temp-dir.mjs'

const FAST_RETRY = { baseDelay: 1, jitter: 'none' }
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
const RECORD_KEYS = ['attempts', 'durationMs', 'executionId', 'finishedAt', 'inputHash', 'sessionId', 'startedAt', 'status', 'toolCallId', 'toolName']

let dir
before(() => { dir = makeTempDir('toolhost-audit-') })
after(() => removeTempDir(dir))

let fileCounter = 0
/** A fresh audit file path in the test directory. */
function auditPath() {
  return join(dir, `audit-${++fileCounter}.jsonl`)
}

/** Every line of an audit file, parsed; the file must end with a newline. */
function readAudit(path) {
  const text = readFileSync(path, 'utf8')
  assert.ok(text === '' || text.endsWith('\n'), 'the file ends with a newline')
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))
}

/** JSON with object keys sorted, recursively, and no whitespace. */
function canonicalJson(v) {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`
  }
  return JSON.stringify(v)
}

const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex')

/** A tool definition with an object schema. */
function tool(name, handler, extra = {}) {
  return { name, description: `the ${name} tool`, inputSchema: { type: 'object' }, handler, ...extra }
}

/** A registry with `tools`, a manager over it, and the records it emits. */
function setup(tools, options = {}) {
  const registry = new ToolRegistry()
  for (const t of tools) registry.register(t)
  const manager = new ToolExecutionManager(registry, { retry: FAST_RETRY, ...options })
  const records = []
  manager.on('tool-invocation-recorded', (r) => records.push(r))
  return { registry, manager, records }
}

describe('what is recorded', () => {
  test('a successful execution: every field, ISO timestamps, no errorCode', async () => {
    const { manager, records } = setup([tool('echo', async (a) => { await sleep(5); return a })])
    const before = Date.now()
    const r = await manager.execute('echo', { q: 1 }, { toolCallId: 'call_1' })
    assert.equal(records.length, 1, 'recorded before execute() resolved')
    const rec = records[0]
    assert.deepEqual(Object.keys(rec).sort(), RECORD_KEYS)
    assert.equal(rec.executionId, r.execution.id)
    assert.equal(rec.toolCallId, 'call_1')
    assert.equal(rec.sessionId ?? undefined, undefined)
    assert.equal(rec.toolName, 'echo')
    assert.match(rec.inputHash, /^[0-9a-f]{64}$/)
    assert.equal(rec.status, 'succeeded')
    assert.equal(rec.attempts, 1)
    assert.match(rec.startedAt, ISO_8601)
    assert.match(rec.finishedAt, ISO_8601)
    const started = Date.parse(rec.startedAt)
    const finished = Date.parse(rec.finishedAt)
    assert.ok(started >= before - 1 && finished <= Date.now() + 1)
    assert.ok(finished >= started)
    assert.ok(rec.durationMs >= 4, String(rec.durationMs))
    assert.ok(Math.abs(rec.durationMs - (finished - started)) <= 2)
  })

  test('attempts counts retries; failures carry status and errorCode', async () => {
    const { manager, records } = setup([
      tool('flaky', (a, ctx) => { if (ctx.attemptNumber < 3) throw transientError('again'); return 'ok' }),
      tool('boom', () => { throw new Error('nope') }),
      tool('strict', () => 1, { inputSchema: { type: 'object', required: ['n'] } }),
      tool('slow', (a, ctx) => sleep(500, 'late', { signal: ctx.signal }).catch(() => 'aborted')),
    ])
    await manager.execute('flaky', {})
    await manager.execute('boom', {})
    await manager.execute('strict', {})
    await manager.execute('missing', {})
    await manager.execute('slow', {}, { timeoutMs: 10, retry: { maxAttempts: 1 } })
    const cancelled = manager.execute('slow', {}, { toolCallId: 'to_cancel' })
    await sleep(5)
    manager.cancel(manager.getExecutionsForToolCall('to_cancel')[0].id)
    await cancelled
    const summary = records.map((r) => [r.toolName, r.status, r.attempts, r.errorCode])
    assert.deepEqual(summary.slice(0, 4), [
      ['flaky', 'succeeded', 3, undefined],
      ['boom', 'failed', 1, 'EXECUTION_ERROR'],
      ['strict', 'failed', 0, 'INVALID_ARGUMENTS'],
      ['missing', 'failed', 0, 'TOOL_NOT_FOUND'],
    ])
    assert.deepEqual(summary[4], ['slow', 'failed', 1, 'TIMEOUT'])
    assert.deepEqual(summary[5], ['slow', 'cancelled', 1, 'CANCELLED'])
    assert.equal('errorCode' in records[0], false)
  })

  test('records carry the sessionId; executions cancelled by destroy() are recorded too', async () => {
    const { registry, manager, records } = setup([])
    const s = registry.createSession()
    s.register(tool('own', () => 1))
    s.register(tool('wait', (a, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))))
    await manager.execute('own', {}, { sessionId: s.id })
    const pending = manager.execute('wait', {}, { sessionId: s.id })
    await sleep(5)
    s.destroy()
    await pending
    await manager.execute('own', {}, { sessionId: s.id })
    assert.deepEqual(records.map((r) => [r.sessionId, r.status, r.errorCode]), [
      [s.id, 'succeeded', undefined],
      [s.id, 'cancelled', 'CANCELLED'],
      [s.id, 'failed', 'SESSION_NOT_FOUND'],
    ])
  })

  test('addEventListener receives { type, detail }', async () => {
    const { manager } = setup([tool('echo', (a) => a)])
    const events = []
    manager.addEventListener('tool-invocation-recorded', (e) => events.push(e))
    const r = await manager.execute('echo', {})
    assert.equal(events.length, 1)
    assert.equal(events[0].type, 'tool-invocation-recorded')
    assert.equal(events[0].detail.executionId, r.execution.id)
  })
})

describe('inputHash', () => {
  test('is the SHA-256 hex of the canonical (key-sorted, compact) JSON of the arguments', async () => {
    const { manager, records } = setup([tool('echo', (a) => a)])
    const args = { zeta: 1, alpha: { y: 'é😀', b: [3, 1, 2], a: null }, mid: true, neg: -7, s: 'line\n"quoted"' }
    await manager.execute('echo', args)
    const expected = sha256(canonicalJson(args))
    assert.equal(expected, sha256('{"alpha":{"a":null,"b":[3,1,2],"y":"é😀"},"mid":true,"neg":-7,"s":"line\\n\\"quoted\\"","zeta":1}'))
    assert.equal(records[0].inputHash, expected)
    await manager.execute('echo', {})
    assert.equal(records[1].inputHash, sha256('{}'))
  })

  test('key order does not change it; JSON text and objects hash equal; different values differ', async () => {
    const { manager, records } = setup([tool('echo', (a) => a)])
    await manager.execute('echo', { a: 1, b: { c: 2, d: [1, 2] } })
    await manager.execute('echo', { b: { d: [1, 2], c: 2 }, a: 1 })
    await manager.execute('echo', '{ "b" : { "d": [1, 2], "c": 2 }, "a": 1 }')
    await manager.execute('echo', { a: 1, b: { c: 2, d: [2, 1] } })
    await manager.execute('echo', { a: 2, b: { c: 2, d: [1, 2] } })
    const [h1, h2, h3, h4, h5] = records.map((r) => r.inputHash)
    assert.equal(h1, h2)
    assert.equal(h1, h3)
    assert.notEqual(h1, h4, 'array order matters')
    assert.notEqual(h1, h5)
    assert.equal(h1, sha256('{"a":1,"b":{"c":2,"d":[1,2]}}'))
  })

  test('redacted fields are hashed as [REDACTED]: equal whatever the secret, and no secret in the file', async () => {
    const path = auditPath()
    const { manager, records } = setup([tool('login', (a) => a.user)], { redact: ['password', 'apiKey'], auditLog: path })
    await manager.execute('login', { user: 'bob', password: 'hunter2', creds: { apiKey: 'sk-1' } })
    await manager.execute('login', { creds: { apiKey: 'sk-2' }, password: 'correct horse', user: 'bob' })
    await manager.execute('login', { user: 'alice', password: 'hunter2', creds: { apiKey: 'sk-1' } })
    const [h1, h2, h3] = records.map((r) => r.inputHash)
    assert.equal(h1, h2)
    assert.notEqual(h1, h3, 'unredacted fields still count')
    assert.equal(h1, sha256(canonicalJson({ user: 'bob', password: '[REDACTED]', creds: { apiKey: '[REDACTED]' } })))
    assert.notEqual(h1, sha256(canonicalJson({ user: 'bob', password: 'hunter2', creds: { apiKey: 'sk-1' } })))
    const text = readFileSync(path, 'utf8')
    for (const secret of ['hunter2', 'correct horse', 'sk-1', 'sk-2']) assert.equal(text.includes(secret), false, secret)
    assert.deepEqual(readAudit(path).map((r) => r.inputHash), [h1, h2, h3])
  })
})

describe('the audit file', () => {
  test('each record is one JSON line, written before execute() resolves, equal to the event', async () => {
    const path = auditPath()
    const { manager, records } = setup([tool('echo', (a) => a), tool('boom', () => { throw new Error('x') })], { auditLog: path })
    const r1 = await manager.execute('echo', { a: 1 }, { toolCallId: 'c1' })
    const afterFirst = readAudit(path)
    assert.equal(afterFirst.length, 1)
    assert.equal(afterFirst[0].executionId, r1.execution.id)
    const r2 = await manager.execute('boom', {})
    const afterSecond = readAudit(path)
    assert.equal(afterSecond.length, 2)
    assert.equal(afterSecond[1].executionId, r2.execution.id)
    assert.equal(afterSecond[1].errorCode, 'EXECUTION_ERROR')
    assert.deepEqual(afterSecond, records.map((r) => JSON.parse(JSON.stringify(r))))
  })

  test('appends to an existing file', async () => {
    const path = auditPath()
    writeFileSync(path, '{"existing":true}\n')
    const { manager } = setup([tool('echo', (a) => a)], { auditLog: path })
    const r = await manager.execute('echo', {})
    const lines = readAudit(path)
    assert.deepEqual(lines[0], { existing: true })
    assert.equal(lines.length, 2)
    assert.equal(lines[1].executionId, r.execution.id)
  })

  test('1,000 concurrent calls leave exactly one line per finished execution, each on disk when its call resolves', async () => {
    const path = auditPath()
    const { manager } = setup([tool('work', async (a, ctx) => {
      await sleep(a.i % 5)
      if (a.i % 10 === 0 && ctx.attemptNumber === 1) throw transientError('retry me')
      if (a.i % 13 === 0) throw new Error('permanent')
      return { i: a.i, padding: 'p'.repeat(2000) }
    })], { auditLog: path, maxConcurrency: 1000 })
    const missingAtResolve = []
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) =>
      manager.execute('work', { i, text: 'x'.repeat(i) }, { toolCallId: `call_${i}` }).then((r) => {
        if (!readFileSync(path, 'utf8').includes(r.execution.id)) missingAtResolve.push(r.execution.id)
        return r
      })))
    assert.deepEqual(missingAtResolve, [])
    const lines = readFileSync(path, 'utf8').split('\n')
    assert.equal(lines.pop(), '', 'ends with a newline')
    assert.equal(lines.length, 1000)
    const records = lines.map((l) => JSON.parse(l))
    const ids = new Set(records.map((r) => r.executionId))
    assert.equal(ids.size, 1000)
    assert.deepEqual([...ids].sort(), results.map((r) => r.execution.id).sort())
    const byCall = new Map(records.map((r) => [r.toolCallId, r]))
    for (let i = 0; i < 1000; i++) {
      const rec = byCall.get(`call_${i}`)
      assert.equal(rec.executionId, results[i].execution.id)
      assert.equal(rec.status, results[i].execution.status)
      assert.equal(rec.inputHash, sha256(canonicalJson({ i, text: 'x'.repeat(i) })))
      assert.equal(rec.attempts, i % 10 === 0 ? 2 : 1)
    }
    assert.equal(records.filter((r) => r.status === 'failed').length, results.filter((r) => !r.success).length)
  })

  test('an unwritable file is reported to the logger and as tool-audit-error; the call still succeeds', async () => {
    const path = join(dir, 'no-such-dir', 'deeper', 'audit.jsonl')
    const logs = []
    const { manager, records } = setup([tool('echo', (a) => a)], {
      auditLog: path,
      logger: (level, message, fields) => logs.push({ level, message, fields }),
    })
    const auditErrors = []
    manager.on('tool-audit-error', (d) => auditErrors.push(d))
    const r = await manager.execute('echo', { a: 1 })
    assert.equal(r.success, true)
    assert.deepEqual(r.result, { a: 1 })
    assert.equal(auditErrors.length, 1)
    assert.equal(typeof auditErrors[0].message, 'string')
    assert.ok(auditErrors[0].message.length > 0)
    assert.equal(auditErrors[0].record.executionId, r.execution.id)
    assert.equal(auditErrors[0].record.status, 'succeeded')
    const errorLogs = logs.filter((l) => l.level === 'error')
    assert.equal(errorLogs.length, 1)
    assert.ok(errorLogs[0].message.includes(path) || errorLogs[0].message.includes('audit'), errorLogs[0].message)
    assert.equal(records.length, 1, 'the event is still sent')
    // the next call is reported again and still completes
    assert.equal((await manager.execute('echo', {})).success, true)
    assert.equal(auditErrors.length, 2)
  })

  test('a file whose directory does not exist yet is reported, then written once it does', async () => {
    // It was opened once, at construction: every record of the manager's life was lost.
    const later = join(dir, `later-${++fileCounter}`)
    const path = join(later, 'audit.jsonl')
    const { manager } = setup([tool('echo', (a) => a)], { auditLog: path, logger: () => {} })
    const auditErrors = []
    manager.on('tool-audit-error', (d) => auditErrors.push(d.message))
    assert.equal((await manager.execute('echo', { n: 1 })).success, true)
    assert.equal(auditErrors.length, 1)
    assert.match(auditErrors[0], /could not be opened/)
    mkdirSync(later)
    const r = await manager.execute('echo', { n: 2 })
    assert.equal(auditErrors.length, 1, 'no error once the directory exists')
    assert.deepEqual(readAudit(path).map((l) => l.executionId), [r.execution.id])
  })

  test('a directory as auditLog is reported and the call still completes', async () => {
    const { manager } = setup([tool('echo', (a) => a)], { auditLog: dir, logger: () => {} })
    const auditErrors = []
    manager.on('tool-audit-error', (d) => auditErrors.push(d))
    const r = await manager.execute('echo', {})
    assert.equal(r.success, true)
    assert.equal(auditErrors.length, 1)
    assert.equal(auditErrors[0].record.executionId, r.execution.id)
  })
})

describe('the audit options', () => {
  const refused = (options, message) => assert.throws(() => new ToolExecutionManager(new ToolRegistry(), options), { code: 'INVALID_CONFIG', message })

  test("auditLog: '' is refused: no file has that path, so every record would fail", () => {
    refused({ auditLog: '' }, /^auditLog must be a file path, not '' \(an empty string\)/)
  })

  test("auditSync: 'fsync' without auditLog is refused: there is no file to sync", () => {
    for (const auditLog of [undefined, null]) {
      refused({ auditSync: 'fsync', auditLog }, /^auditSync: 'fsync' syncs the auditLog file, but auditLog is not set/)
    }
    // A misspelt auditLog is named as such by the check of unknown options.
    refused({ auditSync: 'fsync', auditlog: auditPath() }, /unknown option `auditlog` in manager options; did you mean `auditLog`\?/)
    // The default mode asks nothing of a file, and with a file 'fsync' is taken.
    new ToolExecutionManager(new ToolRegistry(), { auditSync: 'flush' })
    new ToolExecutionManager(new ToolRegistry(), { auditSync: 'fsync', auditLog: auditPath() })
  })
})
