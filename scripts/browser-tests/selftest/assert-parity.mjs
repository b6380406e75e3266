// Runs the same assertions through Node's node:assert and through the browser shim
// (shims/assert/, which also runs in Node) and reports every difference in outcome:
// passed or threw, the error's class, code, operator and generatedMessage, and its
// message. Run by `run.mjs --selftest`; also runnable alone:
//   node scripts/browser-tests/selftest/assert-parity.mjs
import nodeStrict from 'node:assert/strict'
import nodeLegacy from 'node:assert'
import { pathToFileURL } from 'node:url'
import shimLegacy, { strict as shimStrict } from '../shims/assert/assert.mjs'

class Point {
  constructor(x) {
    this.x = x
  }
}
const thrower = () => {
  throw Object.assign(new TypeError('bad input'), { code: 'E_BAD', details: { at: 3 } })
}
const circular = () => {
  const a = { x: 1 }
  a.self = a
  return a
}

/** [function, ...arguments]. */
const CASES = [
  ['equal', NaN, NaN], ['equal', 0, -0], ['equal', 1, '1'], ['equal', 'a', 'b'], ['equal', {}, {}],
  ['notEqual', 1, 2], ['notEqual', NaN, NaN], ['notEqual', 1, '1'],
  ['strictEqual', 1, 1], ['strictEqual', [1], [1]], ['notStrictEqual', 1, 1],
  ['deepEqual', { a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }], ['deepEqual', { a: [1, 2] }, { a: [1, 3] }],
  ['deepEqual', new Point(1), { x: 1 }], ['deepEqual', Object.create(null), {}], ['deepEqual', [1, 2], { 0: 1, 1: 2, length: 2 }],
  ['deepEqual', { a: undefined }, {}], ['deepEqual', [1, , 3], [1, undefined, 3]], // eslint-disable-line no-sparse-arrays
  ['deepEqual', Object.assign([1], { x: 1 }), [1]], ['deepEqual', { [Symbol.for('s')]: 1 }, { [Symbol.for('s')]: 2 }],
  ['deepEqual', new Map([[1, { a: 1 }]]), new Map([[1, { a: 1 }]])], ['deepEqual', new Map([[{ k: 1 }, 'a'], [{ k: 1 }, 'b']]), new Map([[{ k: 1 }, 'b'], [{ k: 1 }, 'a']])],
  ['deepEqual', new Map([[1, 'a']]), new Map([['1', 'a']])], ['deepEqual', new Set([{ a: 1 }, { a: 2 }]), new Set([{ a: 2 }, { a: 1 }])],
  ['deepEqual', new Set([1]), new Set(['1'])], ['deepEqual', new Date(1), new Date(2)], ['deepEqual', new Date(NaN), new Date(NaN)],
  ['deepEqual', /a/g, /a/i], ['deepEqual', Object.assign(/a/g, { lastIndex: 1 }), /a/g],
  ['deepEqual', new Uint8Array([1, 2]), new Uint8Array([1, 2])], ['deepEqual', new Uint8Array([1]), new Int8Array([1])],
  ['deepEqual', new Float64Array([0]), new Float64Array([-0])], ['deepEqual', Object.assign(new Uint8Array(1), { x: 1 }), new Uint8Array(1)],
  ['deepEqual', new Uint8Array([1]).buffer, new Uint8Array([2]).buffer], ['deepEqual', new DataView(new ArrayBuffer(2)), new DataView(new ArrayBuffer(2))],
  ['deepEqual', new Number(1), new Number(2)], ['deepEqual', new String('a'), 'a'], ['deepEqual', 1n, 1n], ['deepEqual', 0, -0], ['deepEqual', [0], [-0]],
  ['deepEqual', new Error('a'), new Error('b')], ['deepEqual', new Error('a'), new TypeError('a')], ['deepEqual', new Error('a'), new Error('a')],
  ['deepEqual', new Error('a', { cause: 1 }), new Error('a', { cause: 2 })], ['deepEqual', new Error('a', { cause: 1 }), new Error('a')],
  ['deepEqual', new AggregateError([1], 'm'), new AggregateError([2], 'm')], ['deepEqual', Object.assign(new Error('a'), { code: 1 }), Object.assign(new Error('a'), { code: 2 })],
  ['deepEqual', new URL('http://a.test/'), new URL('http://b.test/')], ['deepEqual', new URL('http://a.test/'), new URL('http://a.test/')],
  ['deepEqual', circular(), circular()], ['deepEqual', (function () { return arguments })(1), [1]], // eslint-disable-line prefer-rest-params
  ['deepEqual', { get a() { return 1 } }, { a: 1 }], ['deepEqual', function f() {}, function f() {}],
  ['notDeepEqual', { a: 1 }, { a: 1 }], ['notDeepEqual', { a: 1 }, { a: 2 }], ['notDeepEqual', { a: 1 }, { a: '1' }],
  ['deepStrictEqual', { a: [1] }, { a: [1] }], ['notDeepStrictEqual', new Point(1), new Point(1)],
  ['match', 'abc', /b/], ['match', 'abc', /x/], ['match', 1, /1/], ['doesNotMatch', 'abc', /x/], ['doesNotMatch', 'abc', /a/],
  ['ok', 1], ['ok'], ['fail'], ['fail', 'msg'], ['fail', new TypeError('own error')], ['ifError', null], ['ifError', new Error('e')],
  ['throws', thrower], ['throws', thrower, TypeError], ['throws', thrower, RangeError], ['throws', thrower, Error], ['throws', thrower, /bad/],
  ['throws', thrower, /good/], ['throws', thrower, (e) => e.code === 'E_BAD'], ['throws', thrower, () => false], ['throws', thrower, () => 1],
  ['throws', thrower, { code: 'E_BAD', details: { at: 3 } }], ['throws', thrower, { code: /^E_/, message: /bad/ }],
  ['throws', thrower, { details: { at: 4 } }], ['throws', thrower, { missing: 1 }], ['throws', thrower, new TypeError('bad input')],
  ['throws', thrower, new TypeError('other')], ['throws', thrower, {}], ['throws', () => {}], ['throws', () => {}, TypeError],
  ['throws', () => {}, 'message'], ['throws', thrower, 'bad input'], ['throws', () => { throw 'str' }, /str/], // eslint-disable-line no-throw-literal
  ['throws', () => { throw 'str' }, { a: 1 }], ['throws', () => { throw null }, TypeError], ['throws', thrower, class Foo {}], // eslint-disable-line no-throw-literal
  ['throws', thrower, Error, 'custom'], ['throws', 'not a function'],
  ['doesNotThrow', () => 1], ['doesNotThrow', thrower], ['doesNotThrow', thrower, RangeError], ['doesNotThrow', thrower, TypeError], ['doesNotThrow', thrower, 'msg'],
]

const ASYNC_CASES = [
  () => ['rejects', Promise.reject(new RangeError('r')), RangeError],
  () => ['rejects', () => Promise.reject(new RangeError('r')), TypeError],
  () => ['rejects', Promise.resolve(1)],
  () => ['rejects', () => 1],
  () => ['rejects', 5],
  () => ['rejects', async () => { throw new Error('x') }, { message: 'x' }],
  () => ['doesNotReject', Promise.resolve(1)],
  () => ['doesNotReject', Promise.reject(new Error('no'))],
  () => ['doesNotReject', () => Promise.reject(new Error('no')), RangeError],
]

/** Known message differences: not a difference in what passes or fails. */
const MESSAGE_MAY_DIFFER = [
  // Node quotes the source of the assert.ok() call, which a browser cannot read.
  (name) => name === 'ok',
]
// node-inspect-extracted follows a newer Node's util.inspect than Node 20's, which
// prints symbol keys as [Symbol(s)] and an ArrayBuffer's byteLength without brackets.
const normalizeInspect = (message) => message
  ?.replace(/\[(Symbol\([^)]*\))\]/g, '$1')
  .replace(/\[byteLength\]/g, 'byteLength')

const outcome = (error) => (error === undefined
  ? 'passed'
  : `threw ${error?.constructor?.name} code=${error?.code} operator=${error?.operator} generatedMessage=${error?.generatedMessage}`)

async function attempt(fn) {
  try {
    await fn()
    return undefined
  } catch (error) {
    return error
  }
}

/** Every difference, as text; none means the shim behaves as Node's assert here. */
export async function checkAssertParity() {
  const differences = []
  const compare = (label, name, nodeError, shimError) => {
    if (outcome(nodeError) !== outcome(shimError)) {
      differences.push(`${label}: node ${outcome(nodeError)}; shim ${outcome(shimError)}`)
    } else if (normalizeInspect(nodeError?.message) !== normalizeInspect(shimError?.message) && !MESSAGE_MAY_DIFFER.some((skip) => skip(name))) {
      differences.push(`${label}: messages differ\n  node: ${JSON.stringify(nodeError?.message)}\n  shim: ${JSON.stringify(shimError?.message)}`)
    }
  }
  for (const [mode, nodeAssert, shimAssert] of [['strict', nodeStrict, shimStrict], ['legacy', nodeLegacy, shimLegacy]]) {
    for (const [index, [name, ...args]] of CASES.entries()) {
      compare(`${mode} case ${index} ${name}`, name, await attempt(() => nodeAssert[name](...args)), await attempt(() => shimAssert[name](...args)))
    }
  }
  for (const [index, make] of ASYNC_CASES.entries()) {
    const [name, ...nodeArgs] = make()
    const [, ...shimArgs] = make()
    compare(`async case ${index} ${name}`, name, await attempt(() => nodeStrict[name](...nodeArgs)), await attempt(() => shimStrict[name](...shimArgs)))
  }
  return { cases: CASES.length * 2 + ASYNC_CASES.length, differences }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { cases, differences } = await checkAssertParity()
  for (const difference of differences) console.log(difference)
  console.log(`${cases} cases, ${differences.length} differences`)
  process.exitCode = differences.length ? 1 : 0
}
