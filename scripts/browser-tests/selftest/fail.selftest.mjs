// Deliberate failures: the runner must report each of them. Expected results are
// in expected.mjs; run.mjs --selftest checks them. (This file fails under node too.)
import { test, describe, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'

class Point {
  constructor(x) {
    this.x = x
  }
}

test('a passing test among failures', () => {
  assert.equal(1, 1)
})

test('a failing equal', () => {
  assert.equal(1, 2)
})

test('deepEqual with a prototype difference', () => {
  assert.deepEqual(new Point(1), { x: 1 })
})

test('throws with the wrong error class', () => {
  assert.throws(() => {
    throw new TypeError('wrong kind')
  }, RangeError)
})

test('throws with a validation object that does not match', () => {
  assert.throws(() => {
    throw Object.assign(new Error('boom'), { code: 'E_ONE' })
  }, { code: 'E_TWO' })
})

test('a hung test hits its timeout option', { timeout: 300 }, (t) => {
  return new Promise((resolve) => t.signal.addEventListener('abort', resolve))
})

test('a hung test hits the default timeout', () => new Promise(() => {}))

test('an unhandled rejection fails the file, not the test', () => {
  Promise.reject(new Error('nobody handles this rejection'))
})

test('an uncaught exception fails the file', async () => {
  setTimeout(() => {
    throw new Error('thrown from a timer')
  })
  await new Promise((resolve) => setTimeout(resolve, 20))
})

test('console.error fails the file', () => {
  console.error('an error logged to the console')
})

test('throwing something that is not an Error', () => {
  throw Object.create(null)
})

describe('a suite whose before hook fails', () => {
  before(() => {
    throw new Error('before hook broke')
  })
  test('not run because of the before hook', () => {})
})

describe('a suite whose after hook fails', () => {
  after(() => {
    throw new Error('after hook broke')
  })
  test('runs and passes before the after hook', () => {})
})

describe('a suite whose beforeEach hook fails', () => {
  beforeEach(() => {
    throw new Error('beforeEach hook broke')
  })
  test('fails because of the beforeEach hook', () => {})
})

test('a test fails when its subtest fails', async (t) => {
  await t.test('a failing subtest', () => {
    assert.equal(1, 2)
  })
})

test('a failing todo test is not a failure', { todo: 'known bug' }, () => {
  assert.fail('still broken')
})
