// Browser stand-in for `node:assert/strict`: equal is Object.is, deepEqual is
// deepStrictEqual. Implemented in ./assert/ (a port of Node 20's).
import { strict } from './assert/assert.mjs'

export default strict
export const {
  ok, equal, notEqual, deepEqual, notDeepEqual, strictEqual, notStrictEqual, deepStrictEqual,
  notDeepStrictEqual, throws, doesNotThrow, rejects, doesNotReject, ifError, match, doesNotMatch,
  fail, AssertionError,
} = strict
export { strict }
