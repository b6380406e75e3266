// With Object.prototype frozen (as __test__/frozen-prototype.test.mjs does), the
// harness still runs tests, builds assertion messages and reports results.
import { test } from 'node:test'
import assert from 'node:assert/strict'

Object.freeze(Object.prototype)

test('passes with Object.prototype frozen', async () => {
  await new Promise((resolve) => setTimeout(resolve, 1))
  assert.deepEqual({ toString: 'own', a: [1, { b: new Map([[1, 2]]) }] }, { toString: 'own', a: [1, { b: new Map([[1, 2]]) }] })
  await assert.rejects(Promise.reject(new Error('x')), { message: 'x' })
})

test('a failure is still reported with its diff', () => {
  assert.deepEqual({ a: 1, nested: { list: [1, 2] } }, { a: 1, nested: { list: [1, 3] } })
})
