// The engine's WebAssembly build as the fallback in Node: when no native addon loads,
// `import` and `require('toolhost')` run on it, with one warning; TOOLHOST_BACKEND=wasm
// chooses it, TOOLHOST_BACKEND=napi forbids it. On it, timers do not hold a finished
// script, executions in flight do, and `auditLog` is written from JS with the native
// writer's promises. Each case runs in a child process.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { makeTempDir, removeTempDir } from './fixtures/temp-dir.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const FIRST_EXAMPLE_OUTPUT = "true { city: 'Paris', tempC: 21 }\nfalse INVALID_ARGUMENTS\n"
let dir
/** A file index.js finds where a platform's addon should be, that no platform can load
 * (as a binary built for a newer glibc, or for another OS, fails). */
let unloadable

before(() => {
  dir = makeTempDir('toolhost-wasm-fallback-')
  unloadable = join(dir, 'toolhost.unloadable.node')
  writeFileSync(unloadable, 'not a shared library\n')
})
after(() => removeTempDir(dir))

/** The README's first example (the ```js block under "## Install"). */
function firstExample() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  return /^```js\n([\s\S]*?)^```$/m.exec(readme.slice(readme.indexOf('\n## Install\n')))[1]
}

/** Runs `source` (an ES module) from a file in the test folder with `env` added; it
 * imports toolhost by its file URL. Killed after 20 s so a hang fails the test. */
function run(name, source, env = {}) {
  const file = join(dir, `${name}.mjs`)
  writeFileSync(file, source.replaceAll("'toolhost'", JSON.stringify(pathToFileURL(join(ROOT, 'js', 'node.mjs')).href)))
  const childEnv = { ...process.env, ...env }
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key]
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const started = performance.now()
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started })
    })
  })
}

const NO_ADDON = { NAPI_RS_NATIVE_LIBRARY_PATH: undefined, TOOLHOST_BACKEND: undefined }
const warnings = (stderr) => stderr.match(/TOOLHOST_WASM_FALLBACK/g) ?? []

describe('choosing the backend', () => {
  test('no native addon loads: the first README example runs on the fallback, with one warning saying why', async () => {
    const r = await run('fallback', firstExample(), { ...NO_ADDON, NAPI_RS_NATIVE_LIBRARY_PATH: unloadable })
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, FIRST_EXAMPLE_OUTPUT)
    assert.equal(warnings(r.stderr).length, 1, r.stderr)
    assert.match(r.stderr, /ToolhostWarning: no native addon loads on [a-z0-9]+-[a-z0-9]+(-[a-z]+)? \(.*toolhost\.unloadable\.node.*\), so toolhost runs on the WebAssembly build/)
    assert.match(r.stderr, /TOOLHOST_BACKEND=wasm/)
  })

  test('import and require in one process load one backend and warn once', async () => {
    const r = await run('both', `
import { createRequire } from 'node:module'
const esm = await import('toolhost')
const cjs = createRequire(import.meta.url)(${JSON.stringify(join(ROOT, 'js', 'node.cjs'))})
console.log(esm.ToolRegistry === cjs.ToolRegistry)
const registry = new cjs.ToolRegistry()
registry.register({ name: 'echo', description: 'echoes', inputSchema: { type: 'object' }, handler: (a) => a })
console.log(JSON.stringify((await new esm.ToolExecutionManager(registry).execute('echo', { a: 1 })).result))
`, { ...NO_ADDON, NAPI_RS_NATIVE_LIBRARY_PATH: unloadable })
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'true\n{"a":1}\n')
    assert.equal(warnings(r.stderr).length, 1, r.stderr)
  })

  test('TOOLHOST_BACKEND=napi forbids the fallback: the import fails, saying why the addon does not load', async () => {
    const r = await run('napi-only', firstExample(), { ...NO_ADDON, NAPI_RS_NATIVE_LIBRARY_PATH: unloadable, TOOLHOST_BACKEND: 'napi' })
    assert.notEqual(r.code, 0)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /NATIVE_ADDON_NOT_LOADED/)
    assert.match(r.stderr, /TOOLHOST_BACKEND=napi, and no native addon loads on .*toolhost\.unloadable\.node/)
  })

  test('TOOLHOST_BACKEND=wasm runs on the WebAssembly build although the addon loads, without a warning', async () => {
    const r = await run('wasm-chosen', `
import { createRequire } from 'node:module'
${firstExample()}
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.endsWith('.node'))
console.log(loaded.length)
`, { ...NO_ADDON, TOOLHOST_BACKEND: 'wasm' })
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, `${FIRST_EXAMPLE_OUTPUT}0\n`, 'no .node file was loaded')
    assert.equal(warnings(r.stderr).length, 0, r.stderr)
    const native = await run('napi-chosen', `
import { createRequire } from 'node:module'
import 'toolhost'
console.log(Object.keys(createRequire(import.meta.url).cache).filter((f) => f.endsWith('.node')).length)
`, { ...NO_ADDON, TOOLHOST_BACKEND: 'napi' })
    assert.equal(native.stdout, '1\n', `the control loads the addon: ${native.stderr}`)
  })

  test('a manager whose calls ended is collected although its timeout timer is still armed', async () => {
    // The wasm backend leaves one timer armed for the earliest timeout after the call
    // ends (it fires later and finds nothing due): that timer must not keep the manager.
    const r = await run('wasm-timer-gc', `
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { backend } from ${JSON.stringify(pathToFileURL(join(ROOT, 'js', 'backend.mjs')).href)}
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')
// Each manager's engine (it holds the engine's state and history in wasm memory).
let collected = 0
const engines = new FinalizationRegistry(() => collected++)
const Engine = backend.EngineCore
backend.EngineCore = class extends Engine {
  constructor(registry) {
    super(registry)
    engines.register(this, 0)
  }
}
const registry = new ToolRegistry()
registry.register({ name: 'echo', description: 'echo', inputSchema: { type: 'object' }, handler: async (a) => a })
for (let i = 0; i < 20; i++) {
  const manager = new ToolExecutionManager(registry, { timeoutMs: 600_000 })
  const r = await manager.execute('echo', { i })
  if (!r.success) throw new Error(JSON.stringify(r.error))
}
for (let i = 0; i < 20 && collected < 20; i++) {
  gc()
  await new Promise((resolve) => setTimeout(resolve, 10))
}
console.log(collected)
`, { ...NO_ADDON, TOOLHOST_BACKEND: 'wasm' })
    assert.equal(r.code, 0, r.stderr)
    // All but the last (which the loop's scope may still hold).
    assert.ok(Number(r.stdout) >= 19, `engines collected: ${r.stdout}`)
  })

  test('a journal on the WebAssembly build is refused, saying it needs the native addon', async () => {
    const r = await run('wasm-journal', `
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
try {
  new ToolExecutionManager(new ToolRegistry(), { journal: 'sqlite::memory:' })
  console.log('accepted')
} catch (error) {
  console.log(error.code, error.message)
}
`, { ...NO_ADDON, TOOLHOST_BACKEND: 'wasm' })
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^INVALID_CONFIG journal is not available on the WebAssembly build of the engine \(a browser, or Node with no native addon for its platform\).*native addon\n$/)
  })

  test('a misspelt TOOLHOST_BACKEND is refused with the closest choice', async () => {
    for (const [value, hint] of [['wsam', "did you mean 'wasm'"], ['NAPI', "did you mean 'napi'"], ['native', null]]) {
      const r = await run('misspelt', "import 'toolhost'", { ...NO_ADDON, TOOLHOST_BACKEND: value })
      assert.notEqual(r.code, 0)
      assert.match(r.stderr, new RegExp(`TOOLHOST_BACKEND must be 'napi' \\(the native addon\\) or 'wasm' \\(the WebAssembly build\\), not '${value}'`))
      if (hint) assert.ok(r.stderr.includes(hint), r.stderr)
      else assert.doesNotMatch(r.stderr, /did you mean/)
    }
  })
})

describe('process lifetime on the fallback', () => {
  const WASM = { ...NO_ADDON, TOOLHOST_BACKEND: 'wasm' }
  const header = `import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'
const registry = new ToolRegistry()
`

  test('an awaited execution backing off keeps the script alive until it settles', async () => {
    const r = await run('backoff', `${header}
let calls = 0
registry.register({ name: 'flaky', description: 'd', inputSchema: { type: 'object' },
  handler: () => { if (++calls === 1) throw transientError('once'); return 'ok after ' + calls } })
const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 300, jitter: 'none' } })
const r = await manager.execute('flaky', {})
console.log(r.success, r.result)
`, WASM)
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'true ok after 2\n')
  })

  test('a handler that never settles is held until its timeout ends it', async () => {
    const r = await run('timeout', `${header}
registry.register({ name: 'hang', description: 'd', inputSchema: { type: 'object' }, handler: () => new Promise(() => {}) })
const manager = new ToolExecutionManager(registry, { timeoutMs: 300, retry: { maxAttempts: 1 } })
const r = await manager.execute('hang', {})
console.log(r.success, r.error.code)
`, WASM)
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'false TIMEOUT\n')
  })

  test("a finished script exits at once: a cancelled execution's 60 s backoff does not hold it", async () => {
    const r = await run('stale-backoff', `${header}
registry.register({ name: 'fails', description: 'd', inputSchema: { type: 'object' }, handler: () => { throw transientError('again') } })
const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 60000, maxDelay: 60000, jitter: 'none', maxAttempts: 3 }, timeoutMs: 120000 })
const controller = new AbortController()
const pending = manager.execute('fails', {}, { signal: controller.signal })
setTimeout(() => controller.abort(), 50)
const r = await pending
console.log(r.success, r.error.code)
`, WASM)
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'false CANCELLED\n')
    assert.ok(r.ms < 15_000, `exited after ${Math.round(r.ms)} ms`)
  })
})

/** Runs node --test on `args` with the WebAssembly backend chosen; resolves with its counts. */
function nodeTestOnWasm(args) {
  return new Promise((resolve) => {
    // NODE_TEST_CONTEXT (set by a parent test runner) would make the child report to it instead.
    const { NODE_TEST_CONTEXT, ...env } = process.env
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', ...args], {
      cwd: ROOT, env: { ...env, TOOLHOST_BACKEND: 'wasm' }, stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.on('data', (chunk) => (out += chunk))
    child.on('close', (code) => {
      const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(out)?.[1])
      resolve({ code, pass: count('pass'), fail: count('fail'), failures: out.split('\n').filter((l) => /not ok|Error|expected|actual/.test(l)).join('\n') })
    })
  })
}

test("auditLog on the fallback: audit.test.mjs and the audit file's crash-safety tests pass on the WebAssembly build", async () => {
  const audit = await nodeTestOnWasm([join(ROOT, '__test__', 'audit.test.mjs')])
  assert.equal(audit.code, 0, audit.failures)
  assert.ok(audit.fail === 0 && audit.pass >= 12, `${audit.pass} passed, ${audit.fail} failed`)
  const crashSafety = await nodeTestOnWasm(['--test-name-pattern=the audit file', join(ROOT, '__test__', 'hardening-resources.test.mjs')])
  assert.equal(crashSafety.code, 0, crashSafety.failures)
  // Two of the four are Unix-only (a deleted folder, a rotated file): skipped on Windows.
  const expected = process.platform === 'win32' ? 2 : 4
  assert.ok(crashSafety.fail === 0 && crashSafety.pass >= expected, `${crashSafety.pass} passed, ${crashSafety.fail} failed`)
})
