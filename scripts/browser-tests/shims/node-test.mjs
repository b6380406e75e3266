// Browser stand-in for `node:test`. Declaring works as in node:test: describe()
// bodies run at once to collect their tests and hooks; tests then run one at a
// time in declaration order, each wrapped in the beforeEach/afterEach hooks of
// every enclosing suite (outermost first before, innermost first after).
//
// Differences from node:test, on purpose:
// - every test and hook gets a timeout (default 30 s, set by the runner) so a hung
//   test fails instead of hanging the file;
// - a failing before() fails the tests of its suite, an after() failure is reported
//   as an error of the file (node reports both on the suite);
// - `only` is ignored (as node does without --test-only); mock, plan and snapshot
//   are not provided, so importing them fails the bundle with a clear message.
import { send, serializeError, describeValue } from './channel.mjs'

// Captured at load: tests may replace these globals.
const setTimer = globalThis.setTimeout.bind(globalThis)
const clearTimer = globalThis.clearTimeout.bind(globalThis)
const now = globalThis.performance.now.bind(globalThis.performance)

const config = {
  defaultTimeout: 30_000,
  /** full test or suite name -> why it runs in Node only */
  nodeOnly: new Map(),
}

/** Set by the page runtime before the test file loads. */
export function configure({ defaultTimeout, nodeOnly } = {}) {
  if (typeof defaultTimeout === 'number') config.defaultTimeout = defaultTimeout
  if (nodeOnly) config.nodeOnly = new Map(Object.entries(nodeOnly))
}

class Suite {
  constructor(name, parent, options = {}) {
    this.name = name
    this.parent = parent
    this.options = options
    this.path = parent ? [...parent.path, name] : []
    this.children = []
    this.hooks = { before: [], after: [], beforeEach: [], afterEach: [] }
    this.ready = undefined // the promise an async describe() body returned
    this.declareError = undefined
  }
}

const root = new Suite(undefined, undefined)
/** The suite whose body is being declared; tests and hooks go into it. */
let declaring = root
/** The test running now, for attributing uncaught errors. */
let running
let started = false

export function currentTestName() {
  return running
}

const fullName = (path) => path.join(' > ')

/** node:test's overloads: (name?, options?, fn?) in any of its accepted shapes. */
function parseArgs(args, fallbackName) {
  let [name, options, fn] = args
  if (typeof name === 'function') [name, options, fn] = [name.name || fallbackName, {}, name]
  else if (name !== null && typeof name === 'object') [name, options, fn] = [fn?.name || fallbackName, name, options]
  if (typeof options === 'function') [options, fn] = [{}, options]
  return { name: name === undefined ? fallbackName : String(name), options: options ?? {}, fn }
}

function declareTest(args, extra) {
  const { name, options, fn } = parseArgs(args, '<anonymous>')
  const entry = { kind: 'test', name, options: { ...options, ...extra }, fn, parent: declaring }
  let resolve
  entry.finished = new Promise((r) => { resolve = r })
  entry.finish = resolve
  declaring.children.push(entry)
  // node:test returns a promise settled when the test is done; it never rejects.
  return entry.finished
}

function declareSuite(args, extra) {
  const { name, options, fn } = parseArgs(args, '<anonymous>')
  const suite = new Suite(name, declaring, { ...options, ...extra })
  declaring.children.push(suite)
  // A skipped suite's body is not run, as in node:test.
  if (suite.options.skip || typeof fn !== 'function') return Promise.resolve()
  const outer = declaring
  declaring = suite
  try {
    const result = fn.call(suite, { name, signal: new AbortController().signal })
    if (result && typeof result.then === 'function') suite.ready = result
  } catch (error) {
    suite.declareError = error
  } finally {
    declaring = outer
  }
  return Promise.resolve()
}

export function test(...args) {
  return declareTest(args)
}
test.skip = (...args) => declareTest(args, { skip: true })
test.todo = (...args) => declareTest(args, { todo: true })
test.only = (...args) => declareTest(args)
export const it = test

export function describe(...args) {
  return declareSuite(args)
}
describe.skip = (...args) => declareSuite(args, { skip: true })
describe.todo = (...args) => declareSuite(args, { todo: true })
describe.only = (...args) => declareSuite(args)
export const suite = describe

function hook(kind) {
  return (fn, options = {}) => {
    declaring.hooks[kind].push({ fn, options })
  }
}
export const before = hook('before')
export const after = hook('after')
export const beforeEach = hook('beforeEach')
export const afterEach = hook('afterEach')

/** The error of a test or hook that timed out, worded as node:test words it. */
class TestTimeoutError extends Error {
  constructor(what, ms) {
    super(`${what} timed out after ${ms}ms`)
    this.name = 'TestTimeoutError'
    this.code = 'ERR_TEST_FAILURE'
    this.stack = `${this.name}: ${this.message}` // where the timer fired says nothing
  }
}

/** Resolves after the current task: lets the browser report unhandled rejections
 * and uncaught errors of a test while it still counts as the running one. */
function nextTask() {
  return new Promise((resolve) => {
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      setTimer(resolve, 0)
    }
    channel.port2.postMessage(undefined)
  })
}

/** Runs fn, failing it after `ms` (the promise it left keeps running, as in node). */
async function withTimeout(what, ms, run, onTimeout) {
  if (!(ms > 0 && ms < Infinity)) return run()
  let timer
  const expired = new Promise((_, reject) => {
    timer = setTimer(() => {
      onTimeout?.()
      reject(new TestTimeoutError(what, ms))
    }, ms)
  })
  try {
    return await Promise.race([run(), expired])
  } finally {
    clearTimer(timer)
  }
}

/** Calls a test or hook function, with a done callback when it declares one. */
function invoke(fn, thisArg, context) {
  if (typeof fn !== 'function') return undefined
  if (fn.length >= 2) {
    return new Promise((resolve, reject) => {
      fn.call(thisArg, context, (error) => (error ? reject(error) : resolve()))
    })
  }
  return fn.call(thisArg, context)
}

async function runHook(suite, kind, hookEntry, context) {
  const label = `${kind} hook${suite.path.length ? ` of "${fullName(suite.path)}"` : ''}`
  const timeout = hookEntry.options.timeout ?? config.defaultTimeout
  await withTimeout(label, timeout, () => invoke(hookEntry.fn, context, context))
}

/** The `t` argument of a test. */
class TestContext {
  #abort = new AbortController()
  #subtests = Promise.resolve()
  constructor(entry, path, suites) {
    this.suites = suites // whose beforeEach/afterEach hooks wrap subtests too, as in node
    this.name = entry.name
    this.fullName = fullName(path)
    this.path = path
    this.diagnostics = []
    this.afterCallbacks = []
    this.skipReason = undefined
    this.todoReason = undefined
    this.failedSubtests = 0
  }

  get signal() {
    return this.#abort.signal
  }

  abort(reason) {
    this.#abort.abort(reason)
  }

  skip(message = '') {
    this.skipReason = String(message)
  }

  todo(message = '') {
    this.todoReason = String(message)
  }

  diagnostic(message) {
    this.diagnostics.push(describeValue(message))
  }

  after(fn) {
    this.afterCallbacks.push(fn)
  }

  /** A subtest: runs after the subtests before it; the parent waits for it. */
  test(...args) {
    const { name, options, fn } = parseArgs(args, '<anonymous>')
    const sub = { kind: 'test', name, options, fn, parent: undefined, path: [...this.path, name] }
    const run = this.#subtests.then(() => runTest(sub, this.suites)).then((result) => {
      if (result.status === 'fail') this.failedSubtests++
    })
    this.#subtests = run
    return run
  }

  waitForSubtests() {
    return this.#subtests
  }
}

/** Every suite from the root down to `suite`. */
function lineage(suite) {
  const chain = []
  for (let s = suite; s; s = s.parent) chain.unshift(s)
  return chain
}

function report(entry, path, status, extra = {}) {
  const result = { type: 'test', name: entry.name, fullName: fullName(path), status, durationMs: 0, ...extra }
  send(result)
  return result
}

/** Reports a test (or each test in a suite) without running it. */
function reportNotRun(node, path, status, extra) {
  if (node.kind === 'test') {
    report(node, path, status, extra)
    node.finish()
    return
  }
  if (!node.children.length) {
    report(node, path, status, { ...extra, suite: true })
    return
  }
  for (const child of node.children) reportNotRun(child, [...path, child.name], status, extra)
}

async function runTest(entry, suites) {
  const path = entry.path ?? [...entry.parent.path, entry.name]
  const name = fullName(path)
  const { options } = entry
  const nodeOnly = config.nodeOnly.get(name)
  if (nodeOnly !== undefined) return reportSkipped(entry, path, { nodeOnly })
  if (options.skip) return reportSkipped(entry, path, { reason: options.skip === true ? '' : String(options.skip) })

  const context = new TestContext(entry, path, suites)
  send({ type: 'testStart', fullName: name })
  const outer = running // a subtest runs inside its parent
  running = name
  const startedAt = now()
  let error
  const keep = (e) => {
    if (error === undefined) error = e
  }
  try {
    for (const suite of suites) for (const h of suite.hooks.beforeEach) await runHook(suite, 'beforeEach', h, context)
    const timeout = options.timeout ?? config.defaultTimeout
    await withTimeout('test', timeout, async () => {
      await invoke(entry.fn, context, context)
      await context.waitForSubtests()
    }, () => context.abort(new TestTimeoutError('test', timeout)))
    // As in node, a test fails when one of its subtests does.
    const failed = context.failedSubtests
    if (failed) throw Object.assign(new Error(`${failed} subtest${failed > 1 ? 's' : ''} failed`), { code: 'ERR_TEST_FAILURE', stack: '' })
  } catch (e) {
    keep(e)
  }
  // afterEach runs even when the test failed, innermost suite first; then t.after().
  for (const suite of [...suites].reverse()) {
    for (const h of suite.hooks.afterEach) await runHook(suite, 'afterEach', h, context).catch(keep)
  }
  for (const fn of context.afterCallbacks) {
    await withTimeout('t.after callback', config.defaultTimeout, () => invoke(fn, context, context)).catch(keep)
  }
  context.abort()
  await nextTask()
  running = outer

  // As in node: a todo test runs, and counts as todo whether it passed or failed
  // (a test in a describe.todo suite counts as usual, as in node 20); t.skip()
  // does not stop the test, it only changes how it is reported.
  const todo = options.todo ? (options.todo === true ? '' : String(options.todo)) : context.todoReason
  let status = error === undefined ? 'pass' : 'fail'
  if (todo !== undefined) status = 'todo'
  else if (context.skipReason !== undefined && error === undefined) status = 'skip'
  const reason = status === 'todo' ? todo : status === 'skip' ? context.skipReason : undefined
  const result = report(entry, path, status, {
    durationMs: Math.round((now() - startedAt) * 1000) / 1000,
    ...(reason !== undefined ? { reason } : {}),
    ...(error !== undefined ? { error: serializeError(error) } : {}),
    ...(context.diagnostics.length ? { diagnostics: context.diagnostics } : {}),
  })
  entry.finish?.()
  return result
}

function reportSkipped(entry, path, extra) {
  const result = report(entry, path, 'skip', extra)
  entry.finish?.()
  return result
}

async function runSuite(suite) {
  const path = suite.path
  const name = fullName(path)
  const nodeOnly = path.length ? config.nodeOnly.get(name) : undefined
  if (nodeOnly !== undefined) return reportNotRun(suite, path, 'skip', { nodeOnly })
  if (suite.options.skip) {
    const reason = suite.options.skip === true ? '' : String(suite.options.skip)
    return reportNotRun(suite, path, 'skip', { reason })
  }
  try {
    if (suite.ready) await suite.ready
    if (suite.declareError !== undefined) throw suite.declareError
  } catch (error) {
    send({ type: 'error', kind: 'describe', during: name, error: serializeError(error) })
    return reportNotRun(suite, path, 'fail', { error: { name: 'Error', message: `not run: the body of "${name}" threw`, stack: '' } })
  }

  const suites = lineage(suite)
  const context = { name: suite.name, fullName: name }
  try {
    for (const h of suite.hooks.before) await runHook(suite, 'before', h, context)
  } catch (error) {
    const serialized = serializeError(error)
    const failure = { ...serialized, message: `not run: the before hook failed: ${serialized.message}` }
    for (const child of suite.children) reportNotRun(child, [...path, child.name], 'fail', { error: failure })
    return undefined
  }
  for (const child of suite.children) {
    if (child instanceof Suite) await runSuite(child)
    else await runTest(child, suites)
  }
  for (const h of suite.hooks.after) {
    try {
      await runHook(suite, 'after', h, context)
    } catch (error) {
      const serialized = serializeError(error)
      send({ type: 'error', kind: 'hook', error: { ...serialized, message: `after hook${name ? ` of "${name}"` : ''}: ${serialized.message}` } })
    }
  }
  return undefined
}

/** Runs everything declared so far. Called once, after the test file has loaded. */
export async function run() {
  if (started) throw new Error('node:test shim: run() called twice')
  started = true
  // Tests declared while others run (node would make them subtests) are appended
  // to the suite being iterated, so they run too, last.
  await runSuite(root)
}
