// Process lifetime (issue 3): scripts using toolhost exit by themselves, survive
// throwing handlers, can exit while executions are pending, and are not cut short
// while an awaited execution waits in backoff. Each case runs in a child process.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { makeTempDir, removeTempDir } from './fixtures/temp-dir.mjs'

const PACKAGE = new URL('../js/node.mjs', import.meta.url).href
let dir

before(() => {
  dir = makeTempDir('toolhost-lifetime-')
})
after(() => {
  removeTempDir(dir)
})

/**
 * Writes `body` to a script importing toolhost, runs it, and resolves with its exit
 * code, signal, output, and how long after the line `DONE` it took to exit.
 * The child is killed after `killAfterMs` so a hang fails the test instead of stalling it.
 */
function runScript(name, body, { killAfterMs = 8000, nodeArgs = [] } = {}) {
  const file = join(dir, `${name}.mjs`)
  writeFileSync(file, `import { ToolRegistry, ToolExecutionManager, transientError, permanentError } from ${JSON.stringify(PACKAGE)}\n${body}\n`)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs, file], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let doneAt
    const started = performance.now()
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (doneAt === undefined && /^DONE$/m.test(stdout)) doneAt = performance.now()
    })
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      const exitedAt = performance.now()
      resolve({
        code, signal, stdout, stderr,
        totalMs: exitedAt - started,
        afterDoneMs: doneAt === undefined ? undefined : exitedAt - doneAt,
      })
    })
  })
}

function assertCleanExit(result) {
  assert.equal(result.signal, null, `killed by ${result.signal}; stdout:\n${result.stdout}\nstderr:\n${result.stderr}`)
  assert.equal(result.code, 0, `exit code ${result.code}; stderr:\n${result.stderr}`)
  assert.doesNotMatch(result.stderr, /panick|fatal|segmentation|Uncaught|unhandled/i)
}

test('a script with listeners and finished executions exits by itself within 2 s', async () => {
  const result = await runScript('exits', `
const registry = new ToolRegistry()
registry.addEventListener('tool-registry-change', () => {})
let calls = 0
registry.register({ name: 'flaky', description: 'd', inputSchema: { type: 'object' },
  handler: async () => { if (++calls === 1) throw transientError('once'); return 'ok' } })
registry.register({ name: 'echo', description: 'd', inputSchema: { type: 'object' }, handler: (a) => a })
const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 10, maxDelay: 50, jitter: 'none' }, timeoutMs: 5000 })
const events = []
for (const type of ['tool-execution-started', 'tool-execution-validating', 'tool-execution-executing', 'tool-execution-retrying',
  'tool-execution-succeeded', 'tool-execution-failed', 'tool-execution-cancelled']) {
  manager.addEventListener(type, (e) => events.push(e.type))
  manager.on(type, () => {})
}
const results = await Promise.all([
  manager.execute('flaky', {}),
  manager.execute('echo', '{"x":1}'),
  manager.execute('missing', {}),
  manager.execute('echo', {}, { signal: new AbortController().signal }),
])
console.log(JSON.stringify(results.map((r) => r.success)))
console.log('retrying events:', events.filter((t) => t === 'tool-execution-retrying').length)
console.log('DONE')
`)
  assertCleanExit(result)
  assert.match(result.stdout, /\[true,true,false,true\]/)
  assert.match(result.stdout, /retrying events: 1/)
  assert.ok(result.afterDoneMs !== undefined, 'the script finished its work')
  assert.ok(result.afterDoneMs < 2000, `exited ${result.afterDoneMs} ms after finishing its work`)
})

test('handlers that throw synchronously or reject do not crash the process', async () => {
  const result = await runScript('throws', `
const registry = new ToolRegistry()
registry.register({ name: 'sync_throw', description: 'd', inputSchema: { type: 'object' }, handler: () => { throw new Error('sync boom') } })
registry.register({ name: 'rejects', description: 'd', inputSchema: { type: 'object' }, handler: async () => { throw new Error('async boom') } })
registry.register({ name: 'throws_string', description: 'd', inputSchema: { type: 'object' }, handler: () => { throw 'just a string' } })
registry.register({ name: 'rejects_undefined', description: 'd', inputSchema: { type: 'object' }, handler: () => Promise.reject(undefined) })
const manager = new ToolExecutionManager(registry)
for (const name of ['sync_throw', 'rejects', 'throws_string', 'rejects_undefined']) {
  const r = await manager.execute(name, {})
  console.log(name, r.success, r.error.category, r.error.message)
}
console.log('DONE')
`)
  assertCleanExit(result)
  assert.match(result.stdout, /^sync_throw false execution .*sync boom$/m)
  assert.match(result.stdout, /^rejects false execution .*async boom$/m)
  assert.match(result.stdout, /^throws_string false (execution|unknown) /m)
  assert.match(result.stdout, /^rejects_undefined false (execution|unknown) /m)
  assert.match(result.stdout, /^DONE$/m)
})

test('process.exit(0) while executions are pending (one in backoff, one in a long handler) exits cleanly', async () => {
  const result = await runScript('exit-pending', `
const registry = new ToolRegistry()
registry.register({ name: 'flaky', description: 'd', inputSchema: { type: 'object' }, handler: () => { throw transientError('again') } })
registry.register({ name: 'long', description: 'd', inputSchema: { type: 'object' },
  handler: () => new Promise((resolve) => setTimeout(resolve, 10_000)) })
const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 5000, maxDelay: 5000, jitter: 'none' }, timeoutMs: 20_000 })
let inBackoff = false
manager.on('tool-execution-retrying', () => { inBackoff = true })
manager.execute('flaky', {}).then(() => console.log('flaky settled (unexpected)'))
manager.execute('long', {}).then(() => console.log('long settled (unexpected)'))
setTimeout(() => {
  console.log('in backoff:', inBackoff, 'in flight:', manager.inFlight)
  console.log('DONE')
  process.exit(0)
}, 100)
`)
  assertCleanExit(result)
  assert.match(result.stdout, /in backoff: true in flight: 2/)
  assert.doesNotMatch(result.stdout, /unexpected/)
})

test('a script awaiting an execution in backoff is not cut short', async () => {
  const result = await runScript('await-backoff', `
const registry = new ToolRegistry()
let calls = 0
registry.register({ name: 'flaky', description: 'd', inputSchema: { type: 'object' },
  handler: () => { if (++calls === 1) throw transientError('first attempt fails'); return 'second attempt' } })
const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 200, maxDelay: 1000, jitter: 'none' } })
const started = Date.now()
const r = await manager.execute('flaky', {})
console.log('result:', r.success, r.result, 'attempts:', calls, 'waited:', Date.now() - started >= 190)
console.log('DONE')
`)
  assertCleanExit(result)
  assert.match(result.stdout, /^result: true second attempt attempts: 2 waited: true$/m)
})

test('an execution settles even if its manager object is garbage-collected meanwhile', async () => {
  const r = await runScript('gc-manager', `
const registry = new ToolRegistry()
registry.register({ name: 'slow', description: 'settles after 100 ms', handler: () => new Promise((res) => setTimeout(() => res('done'), 100)) })
const pending = new ToolExecutionManager(registry).execute('slow', {})
for (let i = 0; i < 5; i++) { global.gc(); await new Promise((res) => setTimeout(res, 10)) }
console.log('RESULT ' + (await pending).result)
console.log('DONE')
`, { nodeArgs: ['--expose-gc'] })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /RESULT done/)
})

test('a registry does not keep a WeakRef for every collected manager made over it', async () => {
  // A backend making a manager per request over one registry: the registry's set of
  // managers kept a WeakRef (+80 B) for each ever made, until a session was destroyed.
  const r = await runScript('collected-managers', `
const { states } = await import(${JSON.stringify(new URL('../js/registry.mjs', import.meta.url).href)})
const registry = new ToolRegistry()
registry.register({ name: 'echo', description: 'd', handler: () => 1 })
const kept = new ToolExecutionManager(registry)
const refs = []
for (let i = 0; i < 2000; i++) {
  const m = new ToolExecutionManager(registry, { timeoutMs: 5000 })
  if (i % 100 === 0) refs.push(new WeakRef(m))
  await m.execute('echo', {})
  if (i % 500 === 499) { global.gc(); await new Promise((res) => setTimeout(res, 10)) }
}
for (let i = 0; i < 6; i++) { global.gc(); await new Promise((res) => setTimeout(res, 10)) }
console.log('collected: ' + refs.every((ref) => ref.deref() === undefined))
console.log('managers: ' + states.get(registry).managers.size)
// The live one is still told of a destroyed session.
const session = registry.createSession()
session.register({ name: 'slow', description: 'd', handler: () => new Promise(() => {}) })
const pending = kept.execute('slow', {}, { sessionId: session.id })
session.destroy()
console.log('cancelled: ' + (await pending).error?.code)
console.log('DONE')
`, { nodeArgs: ['--expose-gc'] })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^collected: true$/m)
  assert.match(r.stdout, /^managers: 1$/m)
  assert.match(r.stdout, /^cancelled: [A-Z_]+$/m)
})

test("history does not keep a retried attempt's thrown value alive", async () => {
  const r = await runScript('history-causes', `
const registry = new ToolRegistry()
const refs = []
let calls = 0
registry.register({ name: 'flaky', description: 'fails twice, each time with 1 MB attached', inputSchema: { type: 'object' },
  handler: () => {
    if (++calls === 3) return 'third'
    const e = transientError('attempt ' + calls + ' fails')
    e.response = { body: 'x'.repeat(1 << 20) }
    refs.push(new WeakRef(e))
    throw e
  } })
const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 1, jitter: 'none', maxAttempts: 3 } })
const result = await manager.execute('flaky', {})
for (let i = 0; i < 5; i++) { global.gc(); await new Promise((res) => setTimeout(res, 10)) }
const kept = manager.getExecution(result.execution.id)
console.log('result:', result.success, result.result, 'record errors:', kept.retry.previousErrors.map((e) => e.message).join(', '))
console.log('collected:', refs.map((ref) => ref.deref() === undefined).join(' '))
console.log('DONE')
`, { nodeArgs: ['--expose-gc'] })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^result: true third record errors: tool 'flaky' failed: attempt 1 fails, tool 'flaky' failed: attempt 2 fails$/m)
  assert.match(r.stdout, /^collected: true true$/m)
})

test('worker threads each get their own toolhost, and terminating one with executions pending is safe', async () => {
  const r = await runScript('workers', `
import { Worker, isMainThread, parentPort } from 'node:worker_threads'
async function work() {
  const registry = new ToolRegistry()
  let n = 0
  registry.register({ name: 'f', description: 'fails every other call', handler: async (a) => { if (n++ % 2 === 0) throw transientError('again'); return a.i } })
  const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 2, jitter: 'none', maxAttempts: 10 } })
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => manager.execute('f', { i })))
  return results.every((x, i) => x.success && x.result === i)
}
if (isMainThread) {
  const workers = Array.from({ length: 2 }, () => new Worker(new URL(import.meta.url)))
  const all = await Promise.all([work(), ...workers.map((w) => new Promise((res, rej) => { w.on('message', res); w.on('error', rej) }))])
  console.log('ALL ' + all.join(','))
  const stuck = new Worker(new URL(import.meta.url), { argv: ['stuck'] })
  await new Promise((res) => stuck.on('message', res))
  await stuck.terminate()
  await new Promise((res) => setTimeout(res, 100))
  console.log('DONE')
} else if (process.argv[2] === 'stuck') {
  const registry = new ToolRegistry()
  registry.register({ name: 's', description: 'never settles', handler: () => new Promise(() => {}) })
  const manager = new ToolExecutionManager(registry, { timeoutMs: 50 })
  for (let i = 0; i < 10; i++) manager.execute('s', {})
  parentPort.postMessage('started')
} else {
  parentPort.postMessage(await work())
}
`)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /ALL true,true,true/)
  assert.match(r.stdout, /DONE/)
})
