// The harness's own test: every shim feature, used as the project's tests use them.
// It passes under `node --test` and in the browser, which is what keeps the shims
// honest: the same expectations hold against the real node:test / node:assert.
// Its expected counts are in expected.mjs (run.mjs --selftest checks them).
import { test, it, describe, before, after, beforeEach, afterEach } from 'node:test'
import assert from 'node:assert/strict'
import legacyAssert from 'node:assert'
import { setTimeout as sleep, setImmediate as nextMacrotask } from 'node:timers/promises'
import { getEventListeners } from 'node:events'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'

const inBrowser = typeof window !== 'undefined'

// ---------------------------------------------------------------------------------
// node:test: order of tests and hooks. The root after() checks the whole log. Root
// hooks run around every test of the file; only those of the tests here are logged.
const log = []
const ORDERED = new Set(['first', 'inner', 'nested inner', 'last'])
before(async () => {
  await sleep(1)
  log.push('root before')
})
beforeEach((t) => {
  if (ORDERED.has(t.name)) log.push(`root beforeEach ${t.name}`)
})
afterEach((t) => {
  if (ORDERED.has(t.name)) log.push('root afterEach')
})
after(() => {
  assert.deepEqual(log, [
    'root before',
    'root beforeEach first',
    'first',
    'root afterEach',
    'suite before',
    'root beforeEach inner',
    'suite beforeEach',
    'inner',
    'suite afterEach',
    'root afterEach',
    'root beforeEach nested inner',
    'suite beforeEach',
    'nested beforeEach',
    'nested inner',
    'nested afterEach',
    'suite afterEach',
    'root afterEach',
    'nested after',
    'suite after',
    'root beforeEach last',
    'last',
    'root afterEach',
    't.after of last',
  ])
})

test('first', () => {
  log.push('first')
})

describe('order', () => {
  before(() => log.push('suite before'))
  beforeEach(() => log.push('suite beforeEach'))
  afterEach(() => log.push('suite afterEach'))
  after(() => log.push('suite after'))
  it('inner', () => {
    log.push('inner')
  })
  describe('nested', () => {
    beforeEach(async () => {
      await sleep(1)
      log.push('nested beforeEach')
    })
    afterEach(() => log.push('nested afterEach'))
    after(() => log.push('nested after'))
    test('nested inner', async () => {
      await sleep(1)
      log.push('nested inner')
    })
  })
})

test('last', (t) => {
  t.after(() => log.push('t.after of last'))
  log.push('last')
})

// ---------------------------------------------------------------------------------
// node:test: options, skip, todo, context.
describe('test options and the context', () => {
  const subtestHooks = []
  beforeEach((t) => {
    if (t.name.startsWith('sub ')) subtestHooks.push(`beforeEach ${t.name}`)
  })
  test('skip option', { skip: 'not today' }, () => {
    throw new Error('a skipped test must not run')
  })
  test.skip('test.skip', () => {
    throw new Error('a skipped test must not run')
  })
  test('todo option: a failing todo test does not fail the file', { todo: 'later' }, () => {
    assert.equal(1, 2)
  })
  test.todo('test.todo without a function')
  describe.skip('describe.skip', () => {
    test('never declared', () => {
      throw new Error('a skipped suite must not run')
    })
  })
  test('a timeout option a test stays within', { timeout: 2000 }, async () => {
    await sleep(10)
  })
  test('t.skip() reports the test skipped, and the test goes on', (t) => {
    t.skip('skipped from inside')
    t.diagnostic('a diagnostic line')
  })
  test('the context: name, signal, diagnostic', (t) => {
    assert.equal(t.name, 'the context: name, signal, diagnostic')
    assert.ok(t.signal instanceof AbortSignal)
    assert.equal(t.signal.aborted, false)
    t.diagnostic('diagnostics are reported with the test')
  })
  test('a done callback', (t, done) => {
    setTimeout(() => done(), 5)
  })
  test('subtests run in order, with the beforeEach hooks, and the parent waits for them', async (t) => {
    const seen = []
    t.test('sub one', async (sub) => {
      await sleep(5)
      seen.push(sub.name)
    })
    await t.test('sub two', (sub) => {
      seen.push(sub.name)
    })
    assert.deepEqual(seen, ['sub one', 'sub two'])
    assert.deepEqual(subtestHooks, ['beforeEach sub one', 'beforeEach sub two'])
  })
})

// ---------------------------------------------------------------------------------
// node:assert/strict.
class Point {
  constructor(x) {
    this.x = x
  }
}

describe('assert/strict', () => {
  test('equal, notEqual and strictEqual use Object.is', () => {
    assert.equal(NaN, NaN)
    assert.equal('a', 'a')
    assert.strictEqual(1, 1)
    assert.notEqual(0, -0)
    assert.notEqual(1, '1')
    assert.throws(() => assert.equal(1, '1'), { name: 'AssertionError', code: 'ERR_ASSERTION', operator: 'strictEqual' })
    assert.throws(() => assert.equal(0, -0), assert.AssertionError)
    assert.throws(() => assert.notEqual(NaN, NaN), assert.AssertionError)
  })

  test('the failure message shows actual and expected', () => {
    assert.throws(() => assert.equal(1, 2), { message: /Expected values to be strictly equal:[\s\S]*1 !== 2/ })
    assert.throws(() => assert.deepEqual({ a: [1, 2] }, { a: [1, 3] }), { message: /\+ actual - expected[\s\S]*2[\s\S]*3/ })
    assert.throws(() => assert.equal(1, 2, 'custom message'), { message: /^custom message/, generatedMessage: false })
  })

  test('deepEqual compares prototypes, keys, symbols', () => {
    assert.deepEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })
    assert.deepEqual(new Point(1), new Point(1))
    assert.notDeepEqual(new Point(1), { x: 1 })
    assert.notDeepEqual(Object.create(null), {})
    assert.notDeepEqual([1, 2], { 0: 1, 1: 2, length: 2 })
    assert.notDeepEqual({ a: undefined }, {})
    assert.notDeepEqual([1, , 3], [1, undefined, 3]) // eslint-disable-line no-sparse-arrays
    assert.notDeepEqual(Object.assign([1], { extra: true }), [1])
    const s = Symbol('s')
    assert.deepEqual({ [s]: 1 }, { [s]: 1 })
    assert.notDeepEqual({ [s]: 1 }, { [s]: 2 })
    assert.notDeepEqual(1, '1')
    assert.notDeepEqual(0, -0)
    assert.deepEqual(NaN, NaN)
    assert.throws(() => assert.deepEqual(new Point(1), { x: 1 }), assert.AssertionError)
  })

  test('deepEqual on Maps, Sets, Dates, RegExps, typed arrays, boxed primitives, errors', () => {
    assert.deepEqual(new Map([[1, { a: 1 }], [{ k: 1 }, 'v']]), new Map([[1, { a: 1 }], [{ k: 1 }, 'v']]))
    assert.notDeepEqual(new Map([[1, 'a']]), new Map([[1, 'b']]))
    assert.deepEqual(new Set([1, { a: 1 }]), new Set([{ a: 1 }, 1]))
    assert.notDeepEqual(new Set([1]), new Set(['1']))
    assert.deepEqual(new Date(5), new Date(5))
    assert.notDeepEqual(new Date(5), new Date(6))
    assert.deepEqual(/a/gi, /a/gi)
    assert.notDeepEqual(/a/g, /a/i)
    assert.deepEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))
    assert.notDeepEqual(new Uint8Array([1]), new Int8Array([1]))
    assert.notDeepEqual(new Float64Array([0]), new Float64Array([-0]))
    assert.notDeepEqual(new Number(1), new Number(2))
    assert.deepEqual(new Error('same'), new Error('same'))
    assert.notDeepEqual(new Error('a'), new Error('b'))
    assert.notDeepEqual(new Error('a'), new TypeError('a'))
    // What Node 20 compares and older ports of its assert did not:
    assert.notDeepEqual(new Error('a', { cause: 1 }), new Error('a', { cause: 2 }))
    assert.notDeepEqual(new AggregateError([1], 'm'), new AggregateError([2], 'm'))
    assert.notDeepEqual(Object.assign(/a/g, { lastIndex: 1 }), /a/g)
    assert.notDeepEqual(new URL('http://a.test/'), new URL('http://b.test/'))
    assert.deepEqual(new URL('http://a.test/x'), new URL('http://a.test/x'))
  })

  test('ok, match, doesNotMatch, fail', () => {
    assert.ok(true)
    assert.ok(1)
    assert.throws(() => assert.ok(0), { code: 'ERR_ASSERTION' })
    assert.throws(() => assert.ok(''), assert.AssertionError)
    assert.match('toolhost', /host$/)
    assert.throws(() => assert.match('toolhost', /^host/), { message: /did not match/ })
    assert.doesNotMatch('toolhost', /^host/)
    assert.throws(() => assert.doesNotMatch('toolhost', /tool/), assert.AssertionError)
    assert.throws(() => assert.fail('boom'), { name: 'AssertionError', message: 'boom' })
  })

  test('throws accepts a constructor, a RegExp, a validation function or an object', () => {
    const thrower = () => {
      throw Object.assign(new TypeError('bad input'), { code: 'E_BAD', details: { at: 3 } })
    }
    assert.throws(thrower)
    assert.throws(thrower, TypeError)
    assert.throws(thrower, Error)
    assert.throws(thrower, /bad input/)
    assert.throws(thrower, (error) => error.code === 'E_BAD')
    assert.throws(thrower, { name: 'TypeError', message: 'bad input', code: 'E_BAD', details: { at: 3 } })
    assert.throws(thrower, { message: /^bad/, code: /^E_/ })
    assert.throws(thrower, new TypeError('bad input'))
    // Each of these mismatches fails.
    assert.throws(() => assert.throws(thrower, RangeError), { message: /expected to be an instance of "RangeError"/ })
    assert.throws(() => assert.throws(thrower, /other/), assert.AssertionError)
    assert.throws(() => assert.throws(thrower, () => false), { message: /validation function is expected to return "true"/ })
    assert.throws(() => assert.throws(thrower, { code: 'E_OTHER' }), { message: /E_OTHER/ })
    assert.throws(() => assert.throws(thrower, { details: { at: 4 } }), assert.AssertionError)
    assert.throws(() => assert.throws(thrower, { message: /^good/ }), assert.AssertionError)
    assert.throws(() => assert.throws(() => {}), { message: /Missing expected exception/ })
    // Non-Error values.
    assert.throws(() => {
      throw 'a string' // eslint-disable-line no-throw-literal
    }, (value) => value === 'a string')
    assert.doesNotThrow(() => 1)
    assert.throws(() => assert.doesNotThrow(thrower), { message: /Got unwanted exception/ })
  })

  test('rejects and doesNotReject', async () => {
    await assert.rejects(Promise.reject(new RangeError('late')), RangeError)
    await assert.rejects(async () => {
      throw new Error('from a function')
    }, { message: 'from a function' })
    await assert.rejects(assert.rejects(Promise.resolve(1)), { message: /Missing expected rejection/ })
    await assert.rejects(assert.rejects(Promise.reject(new Error('x')), { message: 'y' }), assert.AssertionError)
    await assert.doesNotReject(Promise.resolve(1))
    await assert.rejects(assert.doesNotReject(Promise.reject(new Error('no'))), { message: /Got unwanted rejection/ })
  })

  test('deepStrictEqual and node:assert (legacy, loose; its .strict is assert/strict)', () => {
    assert.deepStrictEqual({ a: [1] }, { a: [1] })
    legacyAssert.equal(1, '1') // loose, as in Node
    legacyAssert.deepEqual({ a: 1 }, { a: '1' })
    assert.throws(() => legacyAssert.strictEqual(1, '1'), legacyAssert.AssertionError)
    assert.throws(() => legacyAssert.deepStrictEqual(new Point(1), { x: 1 }), legacyAssert.AssertionError)
    assert.equal(legacyAssert.strict, assert)
  })
})

// ---------------------------------------------------------------------------------
// node:timers/promises.
describe('timers/promises', () => {
  test('setTimeout resolves with its value after the delay', async () => {
    const start = Date.now()
    assert.equal(await sleep(20, 'value'), 'value')
    assert.ok(Date.now() - start >= 15, `${Date.now() - start} ms`)
  })

  test('setTimeout rejects with an AbortError when its signal aborts, before or during', async () => {
    const abortError = { name: 'AbortError', code: 'ABORT_ERR', message: 'The operation was aborted' }
    await assert.rejects(sleep(10, 'v', { signal: AbortSignal.abort('early') }), { ...abortError, cause: 'early' })
    const controller = new AbortController()
    const pending = sleep(10_000, 'v', { signal: controller.signal })
    controller.abort('late')
    await assert.rejects(pending, { ...abortError, cause: 'late' })
    await assert.rejects(sleep(1, 'v', { signal: 'not a signal' }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  })

  test('setImmediate resolves with its value; an aborted signal rejects it', async () => {
    assert.equal(await nextMacrotask('next'), 'next')
    await assert.rejects(nextMacrotask('next', { signal: AbortSignal.abort() }), { name: 'AbortError' })
  })
})

// ---------------------------------------------------------------------------------
// node:events, and a Node-only API.
describe('events', () => {
  // Node-only (listed in selftest/node-only.mjs): a browser cannot list an EventTarget's listeners.
  test('getEventListeners counts the listeners of an AbortSignal', () => {
    const controller = new AbortController()
    const listener = () => {}
    controller.signal.addEventListener('abort', listener)
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1)
  })

  test('in the browser, getEventListeners on an EventTarget says it is Node-only', (t) => {
    if (!inBrowser) return t.skip('browser only')
    assert.throws(() => getEventListeners(new AbortController().signal, 'abort'), { code: 'ERR_NODE_ONLY', message: /cannot work in a browser/ })
  })
})

// Node-only as a whole suite (listed in selftest/node-only.mjs).
describe('needs Node', () => {
  test('process.versions.node', () => {
    assert.ok(process.versions.node)
  })
})

test('Node built-ins without a shim load, and throw only when used in the browser', () => {
  if (inBrowser) {
    assert.throws(() => createHash('sha256'), { code: 'ERR_NODE_ONLY', message: /node:crypto createHash is not available in the browser/ })
  } else {
    assert.equal(createHash('sha256').update('x').digest('hex').length, 64)
  }
})

// ---------------------------------------------------------------------------------
// Serving: import.meta.url is the module's own URL, .wasm is served as
// application/wasm, and the CSP allows compiling WebAssembly but not eval.
test('a .wasm file next to the module loads through import.meta.url', async () => {
  const url = new URL('./add.wasm', import.meta.url)
  const { instance } = inBrowser
    ? await WebAssembly.instantiateStreaming(fetch(url))
    : await WebAssembly.instantiate(await readFile(url))
  assert.equal(instance.exports.add(2, 3), 5)
})

test('in the browser, the page has no cross-origin isolation and refuses eval', (t) => {
  if (!inBrowser) return t.skip('browser only')
  assert.equal(globalThis.crossOriginIsolated, false)
  assert.throws(() => new Function('return 1'), EvalError) // eslint-disable-line no-new-func
})
