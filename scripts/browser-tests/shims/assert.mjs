// Browser stand-in for `node:assert`: as in Node, the default export is the legacy
// assert (equal is ==, deepEqual is loose); strictEqual, deepStrictEqual and
// `strict` are the strict ones. Implemented in ./assert/ (a port of Node 20's).
import assert from './assert/assert.mjs'

export default assert
export const {
  ok, equal, notEqual, deepEqual, notDeepEqual, strictEqual, notStrictEqual, deepStrictEqual,
  notDeepStrictEqual, throws, doesNotThrow, rejects, doesNotReject, ifError, match, doesNotMatch,
  fail, AssertionError, strict,
} = assert
