// Fuzz (issue 16, "Must show"): generated schemas and arguments, hostile values
// included, through register, validate, execute (object and JSON text) and
// executeToolCalls for every provider. Every case asserts that
//   1. nothing throws but a documented toolhost error (failures are results/replies);
//   2. a handler that runs sees exactly what JSON.parse of the validated JSON text
//      gives (own `__proto__` keys included), and a call the schema accepts does run:
//      the verdict is checked against a small reference validator of the generated
//      subset, run on the value the handler receives;
//   3. no single call takes over 2 s.
//
// Seeded: the seed is printed; TOOLHOST_FUZZ_SEED=<seed> replays a run, and
// TOOLHOST_FUZZ_CASE=<class>:<index> replays one case. Each case has its own PRNG
// derived from (seed, class, index), so a case replays whatever budget found it.
// Bounded by time: about 30 s in all by default; TOOLHOST_FUZZ_SECONDS=<n> runs longer.
// A failing class reports the first case of each kind of failure (seed, case, schema,
// a preview of the arguments, the command that replays it) with how many cases failed
// that way. No Node-only API is used: the browser runner runs it on the wasm backend.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager, ToolhostError } from 'toolhost'

const env = globalThis.process?.env ?? {}
const SEED = env.TOOLHOST_FUZZ_SEED !== undefined ? Number(env.TOOLHOST_FUZZ_SEED) >>> 0 : (Math.random() * 2 ** 32) >>> 0
const SECONDS = Number(env.TOOLHOST_FUZZ_SECONDS) > 0 ? Number(env.TOOLHOST_FUZZ_SECONDS) : 30
const ONLY = env.TOOLHOST_FUZZ_CASE // "<class>:<index>"
const CALL_LIMIT_MS = 2000
const MAX_BYTES = 16 * 1024 * 1024
const LIMIT_DEPTH = 128
const MAX_FAILURES = 12
const REPLAY = (cls, i) => `TOOLHOST_FUZZ_SEED=${SEED} TOOLHOST_FUZZ_CASE=${cls}:${i} node --test __test__/fuzz.test.mjs`

console.log(`fuzz seed ${SEED} (replay with TOOLHOST_FUZZ_SEED=${SEED}), ${SECONDS} s`)

// ---------------------------------------------------------------------------------
// PRNG: mulberry32, one per case, seeded by a hash of (seed, class, index).

function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function caseSeed(...parts) {
  let h = 2166136261
  for (const ch of parts.join('/')) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0
  return h
}

class Rng {
  constructor(seed) {
    this.next = mulberry32(seed)
  }
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }
  chance(p) {
    return this.next() < p
  }
  pick(list) {
    return list[Math.floor(this.next() * list.length)]
  }
}

// ---------------------------------------------------------------------------------
// Building blocks. Objects are built with defineProperty so that `__proto__` is an own
// key, as JSON.parse makes it (an assignment would set the prototype instead).

function own(entries) {
  const o = {}
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  return o
}

// Lone surrogates have a class of their own (`surrogates`), so that a failure on them
// does not hide what the other classes would find.
const KEYS = ['a', 'b', 'c', 'name', 'n', 'list', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'isAdmin', '', 'a/b', '~0', 'é', '😀']
const LONE = ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud800b', '\udc00\ud800', 'x\ud83dz']
const STRINGS = ['', 'a', 'ab', 'abc', 'hello', 'ABC', 'a1', '12', '1234', 'é', 'ß', '😀', 'x\ny', 'x\ry', 'x\u2028y', '\u0000', 'foo@bar', 'cd', 'abcdabcd', ' ', '\t', '"', '\\', '__proto__', 'ÄÖÜ', 'k\u0301']
const NUMBERS = [0, -0, 1, -1, 2, 0.5, -2.5, 3, 10, 100, 1e21, 1e308, -1e308, 5e-324, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 31, 0.1 + 0.2, 123.456, 7]
const BOUNDS = [0, -0, 1, -1, 2, 3, 10, 0.5, 100, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), 1e308, 5e-324]

// Patterns valid in ECMA-262 (with and without the `u` flag), and patterns valid in
// neither mode, which must be refused at registration. The test checks the
// classification itself. Look-around and back-references run on the backtracking
// engine; whatever runs where, JS's own RegExp gives each verdict.
const ECMA_PATTERNS = ['^a', 'b$', '^[a-z]+$', '\\d{2,4}', '^(ab|cd)*$', '[^x]', '^\\w+@\\w+$', '^.{0,3}$', '\\s', '^[A-Z][a-z]*$', 'é', '^\\S+$', '(a|b)c?', '^$', '[0-9a-f]{4}', 'x*?y', '^\\w*$', '^.$', '\\bab', 'a{2}', '^(?:a|b)+$', '[\\u00e0-\\u00ff]', '^\\d+$', '\\.']
// ECMA-262 patterns the README does not say are refused, rarer in schemas: only the
// `patterns` class uses them, so that a refusal does not hide the other classes' cases.
const ECMA_RARE_PATTERNS = ['^[^]*$', '^\\p{L}+$', '[^\\d\\s]', '^\\u{1F600}$', 'a{0}', '(?:)', '[\\b]', '\\cJ', '^\\0$',
  '^(?=.*\\d).{2,}$', '(?<!a)b', '^(\\w)\\1', '^(?<q>a|b)?\\k<q>c?$', '(?<=é)1', '^(?!\\s)[\\s\\S]*\\b$', '^(a)?\\1b$', '^(?:(?=\\w)\\W|.)+$']
const NON_ECMA_PATTERNS = ['(?i)abc', '(?P<n>a)b', 'a++', '(?#note)a', '[b-a]', 'a{2,1}', '*a', '(?x) a', 'a)', '(?s).']
const regexOf = (p, flags) => {
  try {
    return new RegExp(p, flags)
  } catch {
    return undefined
  }
}
for (const p of [...ECMA_PATTERNS, ...ECMA_RARE_PATTERNS]) assert.ok(regexOf(p, '') && regexOf(p, 'u'), `fixture: ${p} is ECMA in both modes`)
for (const p of NON_ECMA_PATTERNS) assert.ok(!regexOf(p, '') && !regexOf(p, 'u'), `fixture: ${p} is ECMA in neither mode`)

// ---------------------------------------------------------------------------------
// Schemas.

function genSchema(rng, depth) {
  const leaf = depth >= 3
  const kinds = leaf
    ? ['string', 'number', 'integer', 'boolean', 'null', 'enum', 'const', 'any', 'multi']
    : ['string', 'number', 'integer', 'boolean', 'enum', 'const', 'array', 'array', 'object', 'object', 'object', 'anyOf', 'oneOf', 'not', 'multi', 'any']
  const kind = rng.pick(kinds)
  switch (kind) {
    case 'string': {
      const s = { type: 'string' }
      if (rng.chance(0.4)) s.minLength = rng.int(0, 3)
      if (rng.chance(0.4)) s.maxLength = rng.int(s.minLength ?? 0, 5)
      if (rng.chance(0.35)) s.pattern = rng.pick(ECMA_PATTERNS)
      return s
    }
    case 'number':
    case 'integer': {
      const s = { type: kind }
      for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) if (rng.chance(0.25)) s[k] = rng.pick(BOUNDS) * (rng.chance(0.2) ? -1 : 1)
      return s
    }
    case 'boolean':
    case 'null':
      return { type: kind }
    case 'enum':
      return { enum: Array.from({ length: rng.int(1, 4) }, () => genValue(rng, { type: rng.pick(['string', 'number', 'boolean', 'null']) }, 3, true)) }
    case 'const':
      return { const: genValue(rng, rng.chance(0.2) ? genSchema(rng, 3) : { type: rng.pick(['string', 'number', 'integer', 'null']) }, 3, true) }
    case 'array': {
      const s = { type: 'array', items: genSchema(rng, depth + 1) }
      if (rng.chance(0.3)) s.minItems = rng.int(0, 2)
      if (rng.chance(0.3)) s.maxItems = rng.int(s.minItems ?? 0, 4)
      if (rng.chance(0.15)) s.uniqueItems = true
      return s
    }
    case 'object':
      return objectSchema(rng, depth)
    case 'anyOf':
    case 'oneOf':
      return { [kind]: Array.from({ length: rng.int(1, 3) }, () => genSchema(rng, depth + 1)) }
    case 'not':
      return { not: genSchema(rng, depth + 1) }
    case 'multi':
      return { type: [rng.pick(['string', 'integer', 'number']), rng.pick(['null', 'boolean', 'array'])] }
    default:
      return {}
  }
}

function objectSchema(rng, depth) {
  const names = [...new Set(Array.from({ length: rng.int(0, 4) }, () => rng.pick(KEYS)))]
  const s = { type: 'object', properties: own(names.map((k) => [k, genSchema(rng, depth + 1)])) }
  const required = names.filter(() => rng.chance(0.5))
  if (required.length > 0) s.required = required
  if (rng.chance(0.3)) s.additionalProperties = rng.chance(0.6) ? false : genSchema(rng, depth + 1)
  return s
}

// ---------------------------------------------------------------------------------
// Values: mostly shaped by the schema, sometimes off it (mismatches are the point too).

function genValue(rng, schema, depth, tame = false) {
  if (!tame && rng.chance(0.08)) return randomValue(rng, depth)
  if (schema.const !== undefined && rng.chance(0.8)) return structuredClone(schema.const)
  if (schema.enum && rng.chance(0.8)) return structuredClone(rng.pick(schema.enum))
  if (schema.anyOf || schema.oneOf) return genValue(rng, rng.pick(schema.anyOf ?? schema.oneOf), depth + 1, tame)
  const type = Array.isArray(schema.type) ? rng.pick(schema.type) : schema.type
  switch (type) {
    case 'string': {
      if (schema.pattern && rng.chance(0.5)) return rng.pick(STRINGS.filter((s) => new RegExp(schema.pattern, 'u').test(s)).concat(['']))
      return rng.chance(0.7) ? rng.pick(STRINGS) : Array.from({ length: rng.int(0, 7) }, () => rng.pick(STRINGS)).join('')
    }
    case 'number':
      return rng.pick(NUMBERS)
    case 'integer':
      return rng.chance(0.85) ? rng.pick(NUMBERS.filter(Number.isInteger)) : rng.pick(NUMBERS)
    case 'boolean':
      return rng.chance(0.5)
    case 'null':
      return null
    case 'array':
      if (depth > 6) return []
      return Array.from({ length: rng.int(0, 4) }, () => genValue(rng, schema.items ?? {}, depth + 1, tame))
    case 'object': {
      if (depth > 6) return {}
      const props = schema.properties ?? {}
      const entries = []
      for (const k of Object.keys(props)) if ((schema.required ?? []).includes(k) ? rng.chance(0.92) : rng.chance(0.6)) entries.push([k, genValue(rng, props[k], depth + 1, tame)])
      if (!tame && rng.chance(0.25)) entries.push([rng.pick(KEYS), randomValue(rng, depth + 1)])
      return own(shuffle(rng, dedupe(entries)))
    }
    default:
      return randomValue(rng, depth)
  }
}

function randomValue(rng, depth) {
  switch (rng.int(0, depth > 5 ? 3 : 5)) {
    case 0: return rng.pick(STRINGS)
    case 1: return rng.pick(NUMBERS)
    case 2: return rng.pick([true, false, null])
    case 3: return rng.pick([0, '', null])
    case 4: return Array.from({ length: rng.int(0, 3) }, () => randomValue(rng, depth + 1))
    default: return own(dedupe(Array.from({ length: rng.int(0, 3) }, () => [rng.pick(KEYS), randomValue(rng, depth + 1)])))
  }
}

function dedupe(entries) {
  const seen = new Set()
  return entries.filter(([k]) => !seen.has(k) && seen.add(k))
}

function shuffle(rng, list) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = rng.int(0, i)
    ;[list[i], list[j]] = [list[j], list[i]]
  }
  return list
}

// ---------------------------------------------------------------------------------
// The reference: what JSON Schema says of a JSON value (as JSON.parse gives it), for
// the generated subset. Lengths count code points (a lone surrogate is one), patterns
// are ECMA-262 with the `u` flag, numbers are the doubles the handler receives.

function jsonEqual(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return a === b
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
}

function typeOk(t, v) {
  switch (t) {
    case 'string': return typeof v === 'string'
    case 'number': return typeof v === 'number'
    case 'integer': return typeof v === 'number' && Number.isInteger(v)
    case 'boolean': return typeof v === 'boolean'
    case 'null': return v === null
    case 'array': return Array.isArray(v)
    case 'object': return v !== null && typeof v === 'object' && !Array.isArray(v)
  }
  return false
}

function accepts(s, v) {
  if (s === true || s === undefined) return true
  if (s === false) return false
  if (s.type !== undefined && ![].concat(s.type).some((t) => typeOk(t, v))) return false
  if (s.const !== undefined && !jsonEqual(s.const, v)) return false
  if (s.enum !== undefined && !s.enum.some((e) => jsonEqual(e, v))) return false
  if (typeof v === 'number') {
    if (s.minimum !== undefined && !(v >= s.minimum)) return false
    if (s.maximum !== undefined && !(v <= s.maximum)) return false
    if (s.exclusiveMinimum !== undefined && !(v > s.exclusiveMinimum)) return false
    if (s.exclusiveMaximum !== undefined && !(v < s.exclusiveMaximum)) return false
  }
  if (typeof v === 'string') {
    const n = [...v].length
    if (s.minLength !== undefined && n < s.minLength) return false
    if (s.maxLength !== undefined && n > s.maxLength) return false
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) return false
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) return false
    if (s.maxItems !== undefined && v.length > s.maxItems) return false
    if (s.uniqueItems && v.some((x, i) => v.some((y, j) => j > i && jsonEqual(x, y)))) return false
    if (s.items !== undefined && !v.every((x) => accepts(s.items, x))) return false
  }
  if (typeOk('object', v)) {
    const props = s.properties ?? {}
    for (const k of s.required ?? []) if (!Object.hasOwn(v, k)) return false
    for (const k of Object.keys(v)) {
      if (Object.hasOwn(props, k)) {
        if (!accepts(props[k], v[k])) return false
      } else if (s.additionalProperties !== undefined && !accepts(s.additionalProperties, v[k])) return false
    }
  }
  if (s.anyOf !== undefined && !s.anyOf.some((b) => accepts(b, v))) return false
  if (s.oneOf !== undefined && s.oneOf.filter((b) => accepts(b, v)).length !== 1) return false
  if (s.not !== undefined && accepts(s.not, v)) return false
  return true
}

// ---------------------------------------------------------------------------------
// What toolhost must do with an input: refuse it ('must'), may refuse it at a limit
// ('may', then every path given the same input must agree), or not refuse it ('no').
// `args` is what the handler must see when it runs.

function depthOf(v) {
  let max = 0
  const stack = [[v, 1]]
  while (stack.length > 0) {
    const [x, d] = stack.pop()
    if (x === null || typeof x !== 'object') continue
    if (d > max) max = d
    for (const k of Object.keys(x)) stack.push([x[k], d + 1])
  }
  return max
}

const utf8Length = (text) => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

function hasNonFinite(v) {
  if (typeof v === 'number') return !Number.isFinite(v)
  if (v === null || typeof v !== 'object') return false
  return Object.keys(v).some((k) => hasNonFinite(v[k]))
}

/** The expectation for JSON text given as the arguments. */
function expectText(schema, text) {
  if (text.trim() === '') return { refuse: 'no', valid: accepts(schema, {}), args: {} }
  let args
  try {
    args = JSON.parse(text)
  } catch {
    return { refuse: 'must', why: 'not JSON' }
  }
  const depth = depthOf(args)
  const bytes = utf8Length(text)
  if (depth > LIMIT_DEPTH + 2 || bytes > MAX_BYTES + 65536) return { refuse: 'must', why: `depth ${depth}, ${bytes} bytes` }
  // Near the limits the exact count is toolhost's to define; 1e400 (Infinity to
  // JSON.parse) may be refused as out of range.
  const may = depth > LIMIT_DEPTH - 8 || bytes > MAX_BYTES - 65536 || hasNonFinite(args)
  return { refuse: may ? 'may' : 'no', valid: accepts(schema, args), args, depth, bytes }
}

/** Whether JSON writes `v` (after its toJSON) as `{}` though it is not a plain object:
 * of a prototype of its own (a RegExp, an Error, Headers), with no own enumerable keys;
 * a boxed primitive is written as what it holds. */
function becomesEmpty(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  if (proto === null || Object.getPrototypeOf(proto) === null) return false
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return false
  return Object.keys(v).length === 0
}

/** JSON text of a value as toolhost must read it, or why it must be refused. */
function jsonTextOf(value) {
  if (value === undefined) return { text: '' }
  try {
    const text = JSON.stringify(value, function (key, v) {
      switch (typeof v) {
        case 'function': throw new Error('a function')
        case 'symbol': throw new Error('a symbol')
        case 'bigint': throw new Error('a BigInt')
        case 'number': if (!Number.isFinite(v)) throw new Error(`${v}`)
      }
      if (v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet) throw new Error('a Map or Set')
      if (ArrayBuffer.isView(v)) throw new Error('a typed array')
      if (becomesEmpty(v)) throw new Error('an object JSON would write as {}')
      if (Array.isArray(v) && v.length * 2 > MAX_BYTES) throw Object.assign(new Error('a huge array'), { huge: true })
      // A hole is not a value (JSON.stringify would write null for it): refused.
      if (Array.isArray(v) && Object.keys(v).length !== v.length) throw new Error('a sparse array')
      return v
    })
    return { text }
  } catch (e) {
    return { error: e.message, huge: e.huge === true }
  }
}

function expectObject(schema, value) {
  // A string is JSON text to every method that takes arguments.
  if (typeof value === 'string') return expectText(schema, value)
  const { text, error, huge } = jsonTextOf(value)
  if (error !== undefined) return { refuse: 'must', why: error, huge }
  return { ...expectText(schema, text), text }
}

/** What the OpenAI providers make of parsed arguments before validation (README,
 * "OpenAI strict mode"): the `null`s strict mode makes a model send for optional
 * properties are dropped, where the property's schema does not itself allow null.
 * Through `properties` and `items`; a null under an `anyOf`, `oneOf`, `allOf` or `not`
 * (the engine follows the branch the value fits) makes it `undefined`: either. */
function dropOptionalNulls(schema, v) {
  if (schema === null || typeof schema !== 'object') return v
  if (hasNull(v) && ['anyOf', 'oneOf', 'allOf', 'not'].some((k) => schema[k] !== undefined)) return undefined
  if (Array.isArray(v)) {
    if (schema.items === undefined) return v
    const items = v.map((x) => dropOptionalNulls(schema.items, x))
    return items.includes(undefined) ? undefined : items
  }
  if (v === null || typeof v !== 'object' || schema.properties === undefined) return v
  const props = schema.properties
  const required = schema.required ?? []
  const entries = Object.keys(v)
    .filter((k) => !(v[k] === null && !required.includes(k) && Object.hasOwn(props, k) && !allowsNull(props[k])))
    .map((k) => [k, Object.hasOwn(props, k) ? dropOptionalNulls(props[k], v[k]) : v[k]])
  return entries.some(([, x]) => x === undefined) ? undefined : own(entries)
}

/** Whether a property of `s` may be null, as the engine reads it
 * (crates/toolhost/src/providers/optional_nulls.rs): of no type (unless it has
 * properties: an object's) or a type that includes null, with no `const` or `enum`
 * that leaves null out, and a union with a branch that allows it. */
function allowsNull(s) {
  if (typeof s === 'boolean') return s
  if (s === null || typeof s !== 'object') return true
  const typed = s.type === undefined ? s.properties === undefined : typeof s.type === 'string' ? s.type === 'null' : Array.isArray(s.type) ? s.type.includes('null') : true
  const values = (s.const === undefined || s.const === null) && (!Array.isArray(s.enum) || s.enum.includes(null))
  if (!typed || !values) return false
  return ['anyOf', 'oneOf'].every((k) => !Array.isArray(s[k]) || s[k].some(allowsNull)) && (!Array.isArray(s.allOf) || s.allOf.every(allowsNull))
}

/** Whether `v` holds a `null` as a property or item somewhere. */
function hasNull(v) {
  if (v === null || typeof v !== 'object') return false
  return Object.values(v).some((x) => x === null || hasNull(x))
}

/** Why `got` is not `want` with some of its `null` properties left out ('' when it is). */
function withoutSomeNulls(got, want, path = '') {
  if (want === null || typeof want !== 'object' || got === null || typeof got !== 'object') return sameJson(got, want) === undefined ? '' : `${path || '/'}: ${JSON.stringify(got)?.slice(0, 80)} is not ${JSON.stringify(want)?.slice(0, 80)}`
  if (Array.isArray(want) !== Array.isArray(got) || (Array.isArray(want) && want.length !== got.length)) return `${path || '/'}: not the same kind or length`
  for (const k of Object.keys(got)) if (!Object.hasOwn(want, k)) return `${path}/${k}: not in the arguments`
  for (const k of Object.keys(want)) {
    if (!Object.hasOwn(got, k)) {
      if (want[k] !== null) return `${path}/${k}: left out, and not null`
      continue
    }
    const why = withoutSomeNulls(got[k], want[k], `${path}/${k}`)
    if (why !== '') return why
  }
  return ''
}

// ---------------------------------------------------------------------------------
// Checking what the handler received: JSON.parse's result, exactly. deepStrictEqual
// does not see own `__proto__` keys, so this compares own property lists in order.

function sameJson(actual, expected, path = '') {
  if (expected === null || typeof expected !== 'object') {
    if (!Object.is(actual, expected)) return `${path || '/'}: got ${preview(actual)}, expected ${preview(expected)}`
    return undefined
  }
  if (actual === null || typeof actual !== 'object') return `${path || '/'}: got ${preview(actual)}, expected an ${Array.isArray(expected) ? 'array' : 'object'}`
  if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected)) return `${path || '/'}: the prototype is not ${Array.isArray(expected) ? 'Array' : 'Object'}.prototype`
  const ka = Reflect.ownKeys(actual)
  const ke = Reflect.ownKeys(expected)
  if (ka.length !== ke.length || ka.some((k, i) => k !== ke[i])) return `${path || '/'}: own keys ${preview(ka)}, expected ${preview(ke)}`
  for (const k of ke) {
    if (Array.isArray(expected) && k === 'length') continue
    const d = Object.getOwnPropertyDescriptor(actual, k)
    if (!('value' in d) || !d.enumerable) return `${path}/${String(k)}: not an enumerable data property`
    const why = sameJson(d.value, expected[k], `${path}/${String(k)}`)
    if (why !== undefined) return why
  }
  return undefined
}

function preview(v, max = 160) {
  let s
  try {
    if (typeof v === 'string') s = JSON.stringify(v.length > max ? v.slice(0, max) : v) + (v.length > max ? `… (${v.length} chars)` : '')
    else if (typeof v === 'bigint') s = `${v}n`
    else if (typeof v === 'symbol' || typeof v === 'function') s = String(v)
    else if (typeof v === 'number') s = Object.is(v, -0) ? '-0' : String(v)
    else if (v === undefined) s = 'undefined'
    else {
      s = JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : Array.isArray(x) && x.length > 20 ? [...x.slice(0, 20).map((e) => e ?? null), `… ${x.length} in all`] : typeof x === 'string' && x.length > 40 ? x.slice(0, 40) + `…(${x.length})` : x))
      if (s === undefined) s = String(v)
    }
  } catch {
    s = Object.prototype.toString.call(v)
  }
  return s.length > max ? s.slice(0, max) + '…' : s
}

// ---------------------------------------------------------------------------------
// Running a case.

const DOCUMENTED_CODES = new Set(['INVALID_TOOL_NAME', 'DUPLICATE_TOOL', 'INVALID_DEFINITION', 'INVALID_SCHEMA', 'TOOL_NOT_FOUND', 'INVALID_ARGUMENTS', 'INVALID_CONFIG', 'SESSION_NOT_FOUND', 'INVALID_TOOL_CALLS', 'INVALID_CALL'])
const isDocumented = (e) => e instanceof ToolhostError && DOCUMENTED_CODES.has(e.code)
const PROVIDERS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'ag-ui', 'mcp']
const TEXT_PROVIDERS = new Set(['openai', 'openai-responses', 'ag-ui'])

/** A model response of `provider` calling `name` (call `a`) and then, but for MCP (one
 * call per request), the tool `ok` with `{}` (call `b`), which must run whatever `a` is. */
function response(provider, name, text, object) {
  switch (provider) {
    case 'openai':
      return { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name, arguments: text } },
        { id: 'b', type: 'function', function: { name: 'ok', arguments: '{}' } },
      ] }
    case 'openai-responses':
      return [{ type: 'function_call', call_id: 'a', name, arguments: text }, { type: 'function_call', call_id: 'b', name: 'ok', arguments: '{}' }]
    case 'anthropic':
      return { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name, input: object }, { type: 'tool_use', id: 'b', name: 'ok', input: {} }] }
    case 'gemini':
      return { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'a', name, args: object } }, { functionCall: { id: 'b', name: 'ok', args: {} } }] } }] }
    case 'ag-ui':
      return [
        { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: name },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: text },
        { type: 'TOOL_CALL_END', toolCallId: 'a' },
        { type: 'TOOL_CALL_START', toolCallId: 'b', toolCallName: 'ok' },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'b', delta: '{}' },
        { type: 'TOOL_CALL_END', toolCallId: 'b' },
      ]
    case 'mcp':
      return { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name, arguments: object } }
  }
}

class Failure extends Error {}

/** One world per test: a registry with the sibling tool `ok`, and a manager. */
function world() {
  const registry = new ToolRegistry()
  let okRuns = 0
  registry.register({ name: 'ok', description: 'Always runs', inputSchema: { type: 'object' }, handler: () => { okRuns++; return 'ok' } })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 }, timeoutMs: 20_000 })
  return { registry, manager, okRuns: () => okRuns }
}

/**
 * Runs one case: `schema` and the arguments as `input` (`{ object }` and/or `{ text }`).
 * Throws a Failure naming the path and what went wrong.
 */
async function runCase(w, name, schema, input, options = {}) {
  const seen = []
  const timed = async (what, fn) => {
    const started = performance.now()
    let timer
    try {
      return await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Failure(`${what}: did not settle within 15 s`)), 15_000)
        }),
      ])
    } finally {
      clearTimeout(timer)
      const ms = performance.now() - started
      if (ms > CALL_LIMIT_MS) throw new Failure(`${what}: took ${Math.round(ms)} ms (limit ${CALL_LIMIT_MS})`)
    }
  }
  const guard = async (what, fn, { rejects = false } = {}) => {
    try {
      return { value: await timed(what, fn) }
    } catch (e) {
      if (e instanceof Failure) throw e
      if (!isDocumented(e)) throw new Failure(`${what}: threw ${e?.constructor?.name} ${e?.code ?? ''}: ${String(e?.message ?? e).slice(0, 300)}`)
      if (!rejects) throw new Failure(`${what}: threw ${e.code}: ${String(e.message).slice(0, 300)} (a result or reply was expected)`)
      return { error: e }
    }
  }

  // register: generated schemas are valid, but for patterns that are not ECMA-262.
  const badPattern = options.badPattern === true
  const reg = await guard('register', () => w.registry.register({ name, description: 'A generated tool', inputSchema: schema, handler: (args) => { seen.push(args); return 'ran' } }), { rejects: true })
  if (badPattern) {
    if (reg.error?.code !== 'INVALID_SCHEMA') throw new Failure(`register: a pattern that is not ECMA-262 must be refused with INVALID_SCHEMA, got ${reg.error ? reg.error.code : 'registered'}`)
    return
  }
  // A definition holding a lone surrogate is refused, as documented: get() and the
  // exports could not give it back as written.
  if (hasLone(schema)) {
    if (reg.error?.code !== 'INVALID_DEFINITION' || !/lone surrogate/.test(reg.error.message)) {
      throw new Failure(`register: a schema holding a lone surrogate must be refused with INVALID_DEFINITION naming it, got ${reg.error ? `${reg.error.code}: ${reg.error.message.slice(0, 200)}` : 'registered'}`)
    }
    return
  }
  if (reg.error !== undefined) throw new Failure(`register: refused a valid schema: ${reg.error.code}: ${reg.error.message.slice(0, 300)}`)
  try {
    // The declaration keeps the schema as given (own __proto__ property names included).
    const declared = w.registry.get(name).inputSchema
    const why = sameJson(declared, JSON.parse(JSON.stringify(schema)))
    if (why !== undefined) throw new Failure(`registry.get(name).inputSchema differs from the schema given: ${why}`)
    for (const out of ['toOpenAITools', 'toOpenAIResponsesTools', 'toAnthropicTools', 'toGeminiTools', 'toAgUiTools', 'toMcpTools']) {
      await guard(out, () => w.registry[out](), { rejects: true })
    }
    await guard('toOpenAITools({ strict: true })', () => w.registry.toOpenAITools({ strict: true }), { rejects: true })

    const paths = []
    if ('object' in input) paths.push(['object', input.object, expectObject(schema, input.object)])
    if ('text' in input) paths.push(['text', input.text, expectText(schema, input.text)])
    for (const [kind, args, expected] of paths) {
      // validate
      const v = (await guard(`validate(${kind})`, () => w.registry.validate(name, args))).value
      if (typeof v?.valid !== 'boolean' || !Array.isArray(v.errors)) throw new Failure(`validate(${kind}): not { valid, errors }: ${preview(v)}`)
      if (v.valid !== (v.errors.length === 0)) throw new Failure(`validate(${kind}): valid ${v.valid} with ${v.errors.length} errors`)
      const refused = !v.valid && v.errors.length === 1 && v.errors[0].keyword === 'json'
      checkVerdict(`validate(${kind})`, expected, v.valid, refused, v.errors)
      // The verdict every other path given the same input must reach.
      const verdict = v.valid

      // execute
      seen.length = 0
      const r = (await guard(`execute(${kind})`, () => w.manager.execute(name, args))).value
      if (r.success !== verdict) throw new Failure(`execute(${kind}): success ${r.success} but validate said valid ${verdict}${r.error ? `: ${r.error.code}: ${r.error.message.slice(0, 300)}` : ''}`)
      if (verdict) checkSeen(`execute(${kind})`, seen, expected.args, args)
      else {
        if (seen.length !== 0) throw new Failure(`execute(${kind}): the handler ran for arguments validate refused`)
        if (r.error?.code !== 'INVALID_ARGUMENTS') throw new Failure(`execute(${kind}): refused with ${r.error?.code}, expected INVALID_ARGUMENTS`)
      }

      // executeToolCalls: text providers get the text, object providers the object.
      // executeToolCalls reads a response as JSON (JSON.stringify): for an object that
      // toolhost itself refuses as not JSON, the call is what that JSON says, and a
      // response JSON.stringify cannot write is refused for the whole batch.
      for (const provider of PROVIDERS) {
        if (TEXT_PROVIDERS.has(provider) !== (kind === 'text')) continue
        // No model response holds `undefined`, nor a sparse array of millions of holes
        // (JSON.stringify would write hundreds of MB of nulls).
        if (kind === 'object' && (args === undefined || expected.huge)) continue
        let want = verdict
        let wantArgs = expected.args
        let stringifies = true
        if ((provider === 'openai' || provider === 'openai-responses') && expected.refuse !== 'must' && !refused) {
          const dropped = dropOptionalNulls(schema, expected.args)
          if (dropped === undefined) {
            // A null under a union: the engine drops it or not by the branch the value
            // fits. Either outcome, checked below: the handler's arguments are these with
            // some null properties left out, and the schema accepts them.
            want = undefined
            wantArgs = { orNulls: expected.args }
          } else if (!jsonEqual(dropped, expected.args)) {
            want = accepts(schema, dropped)
            wantArgs = dropped
          }
        }
        // An object provider carries the value itself (a string is a JSON string there),
        // and reads a missing or null arguments field as {} (crates/toolhost/src/providers).
        // MCP alone reads string `arguments` as JSON text, as execute does.
        if (kind === 'object' && (expected.refuse === 'must' || (typeof args === 'string' && provider !== 'mcp') || args === null)) {
          let written
          try {
            written = JSON.stringify(args)
          } catch {
            stringifies = false
          }
          if (stringifies) {
            const e = expectText(schema, written === undefined || written === 'null' ? '' : written)
            want = e.refuse === 'must' ? false : e.refuse === 'may' ? undefined : e.valid
            wantArgs = e.args
          }
        }
        // AG-UI's arguments are the concatenation of delta strings, which the engine reads
        // out of the response: a lone surrogate written raw in a delta (the response's JSON
        // escapes it) is read as U+FFFD, and that text is what is validated and handed on
        // (the README says so). An escape written in the delta text stays exact.
        if (provider === 'ag-ui' && kind === 'text' && LONE_RAW.test(args) && wantArgs !== undefined) wantArgs = withoutLone(wantArgs)
        const okBefore = w.okRuns()
        seen.length = 0
        const call = response(provider, name, kind === 'text' ? args : undefined, kind === 'object' ? args : undefined)
        const out = await guard(`executeToolCalls(${provider})`, () => w.manager.executeToolCalls(call, { provider }), { rejects: !stringifies })
        if (out.error !== undefined) {
          if (out.error.code !== 'INVALID_TOOL_CALLS') throw new Failure(`executeToolCalls(${provider}): a response that is not JSON must be refused with INVALID_TOOL_CALLS, got ${out.error.code}`)
          continue
        }
        if (!stringifies) throw new Failure(`executeToolCalls(${provider}): a response JSON.stringify cannot write was not refused`)
        const { results, messages } = out.value
        const calls = provider === 'mcp' ? 1 : 2
        if (results.length !== calls || messages.length < 1) throw new Failure(`executeToolCalls(${provider}): ${results.length} results and ${messages.length} messages for ${calls} calls`)
        if (provider !== 'mcp' && (results[1].success !== true || w.okRuns() !== okBefore + 1)) throw new Failure(`executeToolCalls(${provider}): the valid call beside it did not run`)
        const r0 = results[0]
        if (want !== undefined && r0.success !== want) throw new Failure(`executeToolCalls(${provider}): success ${r0.success} but validate said valid ${want}${r0.error ? `: ${r0.error.code}: ${r0.error.message.slice(0, 300)}` : ''}`)
        if (r0.success && wantArgs?.orNulls !== undefined) {
          if (seen.length !== 1) throw new Failure(`executeToolCalls(${provider}): the handler ran ${seen.length} times`)
          const why = withoutSomeNulls(seen[0], wantArgs.orNulls)
          if (why !== '') throw new Failure(`executeToolCalls(${provider}): the handler's arguments are not the call's with some nulls left out: ${why}`)
          if (!accepts(schema, seen[0])) throw new Failure(`executeToolCalls(${provider}): the handler got arguments the schema refuses: ${JSON.stringify(seen[0]).slice(0, 200)}`)
        } else if (r0.success) checkSeen(`executeToolCalls(${provider})`, seen, wantArgs, undefined)
        else {
          if (seen.length !== 0) throw new Failure(`executeToolCalls(${provider}): the handler ran for arguments validate refused`)
          if (r0.error?.code !== 'INVALID_ARGUMENTS') throw new Failure(`executeToolCalls(${provider}): refused with ${r0.error?.code}, expected INVALID_ARGUMENTS`)
        }
      }
    }
  } finally {
    w.registry.unregister(name)
  }
}

function checkVerdict(what, expected, valid, refused, errors) {
  const errs = () => errors.slice(0, 3).map((e) => `${e.path} ${e.keyword}: ${e.message.slice(0, 200)}`).join('; ')
  if (expected.refuse === 'must') {
    if (valid) throw new Failure(`${what}: accepted arguments that must be refused (${expected.why})`)
    return
  }
  if (refused && expected.refuse === 'may') return
  if (refused) throw new Failure(`${what}: refused JSON arguments as unreadable: ${errs()}`)
  if (valid !== expected.valid) {
    throw new Failure(`${what}: valid ${valid}, but the value the handler would receive is ${expected.valid ? 'valid' : 'invalid'} against the schema${valid ? '' : `: ${errs()}`}`)
  }
}

// A lone surrogate: raw in a string, or as JSON.stringify escapes it.
const LONE_RAW = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
/** Whether a string or key of `value` holds a lone surrogate. */
function hasLone(value) {
  if (typeof value === 'string') return LONE_RAW.test(value)
  if (value === null || typeof value !== 'object') return false
  return Object.keys(value).some((k) => LONE_RAW.test(k) || hasLone(value[k]))
}
/** `value` with each lone surrogate in its strings and keys read as U+FFFD. */
function withoutLone(value) {
  const fix = (s) => s.replace(new RegExp(LONE_RAW.source, 'g'), '\uFFFD')
  if (typeof value === 'string') return fix(value)
  if (Array.isArray(value)) return value.map(withoutLone)
  if (value === null || typeof value !== 'object') return value
  const out = {}
  for (const k of Object.keys(value)) Object.defineProperty(out, fix(k), { value: withoutLone(value[k]), enumerable: true, writable: true, configurable: true })
  return out
}

function checkSeen(what, seen, expected, given) {
  if (seen.length !== 1) throw new Failure(`${what}: the schema accepts the arguments, but the handler ran ${seen.length} times`)
  const why = sameJson(seen[0], expected)
  if (why !== undefined) throw new Failure(`${what}: the handler did not get JSON.parse of the validated text: ${why}`)
  if (given !== null && typeof given === 'object' && seen[0] === given) throw new Failure(`${what}: the handler got the caller's own object`)
}

// ---------------------------------------------------------------------------------
// Case classes. Each makes { schema, input, badPattern? } from its own PRNG.

const deep = (rng, levels, leaf) => {
  let v = leaf
  const asArray = rng.chance(0.5)
  for (let i = 0; i < levels; i++) v = asArray ? [v] : own([[rng.pick(['a', '__proto__', 'b']), v]])
  return v
}

/** Text of a value in one of several spellings JSON.parse reads the same. */
function spell(rng, value) {
  const text = JSON.stringify(value)
  switch (rng.int(0, 5)) {
    case 0: return JSON.stringify(value, null, rng.pick([1, 2, '\t']))
    case 1: return `\n ${text}\t\r\n`
    // 64K characters or more take the large-text path (parsed off the thread, tape).
    case 2: return text + ' '.repeat(65536)
    case 3: return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    default: return text
  }
}

const CLASSES = {
  /** Generated schemas, arguments shaped by them (matching or not), as an object and as text. */
  generated(rng) {
    const schema = objectSchema(rng, 0)
    schema.type = 'object'
    const value = genValue(rng, schema, 0)
    return { schema, input: { object: value, text: spell(rng, value) } }
  },

  /** Many objects of one key list (the tape's shared constructors), with __proto__,
   * constructor and prototype among the keys, over 64K characters of text. */
  wide(rng) {
    const item = objectSchema(rng, 1)
    const keys = shuffle(rng, ['__proto__', 'constructor', 'prototype', 'a', 'toString'].filter(() => rng.chance(0.6)))
    const schema = { type: 'object', properties: { list: { type: 'array', items: rng.chance(0.5) ? item : {} } } }
    const list = Array.from({ length: rng.int(1500, 4000) }, (_, i) => own(keys.map((k) => [k, rng.chance(0.9) ? i : own([['isAdmin', true]])])))
    const value = { list }
    return { schema, input: { object: value, text: JSON.stringify(value) } }
  },

  /** __proto__ / constructor / prototype keys: in text, as own keys JSON.parse makes,
   * and as a literal `__proto__:` (a prototype, which is not part of the JSON). */
  proto(rng) {
    const schema = { type: 'object', properties: own([['isAdmin', { const: false }], ['__proto__', rng.chance(0.5) ? { type: 'object' } : genSchema(rng, 2)], ['nested', { type: 'object', properties: { isAdmin: { const: false } } }]]) }
    if (rng.chance(0.3)) schema.additionalProperties = false
    const payload = rng.pick(['{"isAdmin":true}', '{"isAdmin":false}', '1', 'null', '[]', '{"constructor":{"prototype":{"isAdmin":true}}}'])
    const texts = [
      `{"__proto__":${payload}}`,
      `{"a":1,"__proto__":${payload},"nested":{"__proto__":${payload}}}`,
      `{"constructor":{"prototype":${payload}},"prototype":${payload}}`,
      `{"__proto__":${payload},"__proto__":{"isAdmin":true}}`,
      `{"list":[{"__proto__":${payload}},{"__proto__":${payload}}]}`,
    ]
    const text = rng.pick(texts)
    if (rng.chance(0.25)) {
      // An object literal's __proto__ sets the prototype: JSON.stringify ignores it.
      return { schema, input: { object: { __proto__: { isAdmin: true }, a: 1, nested: { __proto__: { isAdmin: true } } } } }
    }
    return { schema, input: { object: JSON.parse(text), text: rng.chance(0.3) ? text + ' '.repeat(65536) : text } }
  },

  /** Arrays with holes, huge lengths, elements at huge indexes. */
  sparse(rng) {
    const schema = { type: 'object', properties: { a: rng.chance(0.5) ? { type: 'array', items: { type: ['integer', 'null'] } } : { type: 'array' } } }
    const a = []
    switch (rng.int(0, 4)) {
      case 0: a[rng.int(1, 50)] = 1; break
      case 1: a.length = rng.pick([1e8, 2 ** 32 - 1, 8 * 1024 * 1024 + 1]); break
      case 2: a[2 ** 32 - 2] = 1; break
      case 3: a[rng.int(65_537, 300_000)] = 2; break
      default: a.push(1, undefined, 2); a[10] = 3
    }
    return { schema, input: { object: { a } } }
  },

  /** Nesting near and over the 128-level limit, as objects and text. */
  deep(rng) {
    const levels = rng.int(110, 135)
    const schema = { type: 'object', properties: { a: rng.chance(0.5) ? {} : { type: ['object', 'array'] } }, additionalProperties: rng.chance(0.5) }
    const value = own([[rng.pick(['a', 'b']), deep(rng, levels - 1, rng.pick([1, 'x', null, {}]))]])
    return { schema, input: { object: value, text: spell(rng, value) } }
  },

  /** Large strings, in characters and in UTF-8 bytes, below and over 16 MiB (rare). */
  large(rng) {
    const schema = { type: 'object', properties: { s: { type: 'string', minLength: 1, ...(rng.chance(0.3) ? { pattern: '^x' } : {}) } } }
    const size = rng.chance(0.15)
      ? rng.pick([MAX_BYTES - 200_000, MAX_BYTES + 200_000, Math.floor(MAX_BYTES / 3) + 100_000])
      : rng.int(60_000, 2_000_000)
    if (rng.chance(0.1)) {
      // Over the limit in millions of small values rather than one string.
      const a = new Array(rng.pick([4_000_000, 8_388_609])).fill(null)
      return { schema: { type: 'object' }, input: rng.chance(0.5) ? { object: { a } } : { text: JSON.stringify({ a }) } }
    }
    const unit = size === Math.floor(MAX_BYTES / 3) + 100_000 ? '€' : rng.pick(['x', 'x', 'é', '😀'])
    const s = unit.repeat(Math.max(1, Math.floor(size / utf8Length(unit))))
    return { schema, input: rng.chance(0.5) ? { object: { s } } : { text: JSON.stringify({ s }) } }
  },

  /** Lone surrogates: in argument strings and keys (raw in text, and escaped as
   * JSON.stringify writes them), and in the schema's property names and constants. */
  surrogates(rng) {
    const lone = rng.pick(LONE)
    const inSchema = rng.chance(0.4)
    const s = rng.pick([{ type: 'string', maxLength: rng.int(0, 3) }, { type: 'string', minLength: 2 }, { type: 'string', pattern: rng.pick(ECMA_PATTERNS) }, {}]
      .concat(inSchema ? [{ const: lone }, { not: { const: lone } }, { enum: ['a', lone] }] : []))
    const schema = { type: 'object', properties: own([['s', s], [inSchema ? lone : 'k', { type: 'string' }]]) }
    if (rng.chance(0.3)) schema.additionalProperties = false
    const value = own(shuffle(rng, [['s', rng.pick([lone, `${lone}${lone}`, 'ab', `a${lone}`])], [rng.pick([lone, 'k']), rng.pick(['v', lone])]]).filter(() => rng.chance(0.8)))
    const escaped = JSON.stringify(value) // JSON.stringify escapes lone surrogates
    const raw = escaped.replace(/\\u(d[89a-f][0-9a-f]{2})/gi, (_, h) => String.fromCharCode(parseInt(h, 16)))
    const text = rng.pick([raw, escaped, '{"s":"\\uDE00\\uD83D"}', spell(rng, value)])
    return { schema, input: rng.chance(0.5) ? { object: value, text } : { text } }
  },

  /** Values JSON cannot carry, and values it carries only through toJSON or by dropping. */
  nonJson(rng) {
    const schema = { type: 'object', properties: { v: genSchema(rng, 2) } }
    const cyclic = {}
    cyclic.self = cyclic
    const throwing = {}
    Object.defineProperty(throwing, 'x', { enumerable: true, get() { throw new Error('getter') } })
    const values = [
      NaN, Infinity, -Infinity, 10n, new Map([[1, 2]]), new Set([1]), new WeakMap(), new Date(0), () => 1, Symbol('s'),
      undefined, cyclic, [cyclic], throwing, { toJSON: () => ({ n: 1 }) }, { toJSON() { throw new Error('toJSON') } },
      [undefined, () => 1, Symbol('t')], { [Symbol('k')]: 1, a: 1 }, Object.create(null), new Number(3), new String('s'),
      new (class Point { constructor() { this.x = 1 } })(), new Uint8Array(2), /re/g, new Error('e'),
    ]
    const v = rng.pick(values)
    const object = rng.chance(0.15) ? v : { v }
    return { schema, input: { object } }
  },

  /** Numbers at the edges of doubles and of exact integers, as objects and as text. */
  numbers(rng) {
    const bound = rng.pick([2 ** 53, 2 ** 53 - 1, 1e308, 0, -0, 9007199254740993, 1e21])
    const key = rng.pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'const'])
    const schema = { type: 'object', properties: { n: { type: rng.pick(['number', 'integer']), [key]: bound } } }
    const literals = ['-0', '-0.0', '0e0', '1e308', '-1e308', '1.7976931348623157e308', '1e400', '-1e400', '5e-324', '1e-400', '9007199254740993', '9007199254740992', '-9007199254740993',
      '18446744073709551616', '123456789012345678901234567890', '1E2', '1.0', '100e-2', '9007199254740992.5', '4.35', '1e21', '2e-7']
    const literal = rng.pick(literals)
    const text = `{"n":${literal}}`
    const object = { n: rng.pick(NUMBERS.concat([2 ** 53 + 1, Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON])) }
    return { schema, input: rng.chance(0.6) ? { text } : { object, text: JSON.stringify(object) } }
  },

  /** Text JSON.parse reads in its own way, or refuses. */
  text(rng) {
    const schema = objectSchema(rng, 1)
    schema.type = 'object'
    const texts = [
      '', '  \n', '{}', '[]', '1', 'null', '"x"', '{"a":1,"a":"x"}', '{"b":1,"a":2,"b":3}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":1}x',
      '\ufeff{}', '{"a":"\\u0000"}', '{"a":"\\/"}', '{"a\\u0000b":1}', '{"a":01}', '{"a":.5}', '{"a":1.}', '{"a":"\t"}', '{"a":[1,2,]}',
      '{"a":"\\ud83d\\ude00"}', '{"__proto__":1,"__proto__":2}', '{"a":1', '{"a" 1}', '{"a":tru}', '{"a:1}', ' {"a":-}',
    ]
    return { schema, input: { text: rng.pick(texts) } }
  },

  /** Schemas with patterns, including ones that are not ECMA-262 (must be refused). */
  patterns(rng) {
    if (rng.chance(0.3)) {
      return { schema: { type: 'object', properties: { p: { type: 'string', pattern: rng.pick(NON_ECMA_PATTERNS) } } }, input: { object: {} }, badPattern: true }
    }
    const schema = { type: 'object', properties: { p: { type: 'string', pattern: rng.pick(rng.chance(0.3) ? ECMA_RARE_PATTERNS : ECMA_PATTERNS) } }, required: ['p'] }
    const p = rng.pick(STRINGS.concat(['a\nb', 'ab\n', '\n', 'aé', 'é1', 'x\u2029', '٣٣', '１２', 'ǅ', 'ab cd', 'éab', 'a\r']))
    return { schema, input: { object: { p }, text: JSON.stringify({ p }) } }
  },
}

// Each class's share of the time budget, and what its test is called.
const PLAN = {
  generated: [0.34, 'generated schemas, with arguments that match them and that do not, as objects and as text'],
  wide: [0.05, 'thousands of objects of one key list (__proto__, constructor, prototype among them) over 64K characters'],
  proto: [0.08, '__proto__, constructor and prototype keys, in text, as own properties, and as a literal prototype'],
  sparse: [0.05, 'sparse arrays: holes, huge lengths, an element at index 2**32 - 2'],
  deep: [0.1, 'nesting near and over 128 levels'],
  large: [0.08, 'large strings and arrays, below and over 16 MiB'],
  surrogates: [0.07, 'lone surrogates in arguments (raw and escaped) and in schemas'],
  nonJson: [0.07, 'NaN, Infinity, BigInt, Map, Set, Date, functions, symbols, undefined, cycles, toJSON, getters'],
  numbers: [0.07, 'numbers: -0, 1e308, 1e400, 2**53 + 1 and beyond, as objects and as text'],
  text: [0.05, 'JSON text JSON.parse reads its own way (duplicate keys, blanks) or refuses'],
  patterns: [0.04, 'ECMA-262 patterns (matching as a RegExp with the u flag does) and patterns that are not ECMA-262'],
}

describe(`fuzz (seed ${SEED})`, () => {
  for (const [cls, [share, what]] of Object.entries(PLAN)) {
    const only = ONLY === undefined ? undefined : ONLY.split(':')
    if (only !== undefined && only[0] !== cls) continue
    const budgetMs = SECONDS * 1000 * share
    test(`${cls}: ${what}`, { timeout: budgetMs + 120_000 }, async (t) => {
      t.diagnostic(`seed ${SEED}`)
      const w = world()
      // Failures by kind (the message with its numbers blanked): the first case of each
      // kind is reported, and the run goes on to find other kinds.
      const kinds = new Map()
      const started = performance.now()
      let i = only !== undefined ? Number(only[1]) : 0
      let ran = 0
      for (; only !== undefined ? ran < 1 : performance.now() - started < budgetMs; i++, ran++) {
        const rng = new Rng(caseSeed(SEED, cls, i))
        const { schema, input, badPattern } = CLASSES[cls](rng)
        try {
          await runCase(w, `t${i}`, schema, input, { badPattern })
        } catch (e) {
          const message = e instanceof Failure ? e.message : `unexpected ${e?.stack ?? e}`
          const kind = message.replace(/\d+/g, 'N').replace(/'t\d+'/g, '').slice(0, 120)
          const known = kinds.get(kind)
          if (known !== undefined) known.count++
          else {
            const args = 'text' in input ? input.text : input.object
            kinds.set(kind, { count: 1, report: `seed ${SEED}, ${cls} case ${i}: ${message}\n  schema: ${preview(schema, 400)}\n  arguments (${'text' in input ? 'text' : 'object'}): ${preview(args, 300)}\n  replay: ${REPLAY(cls, i)}` })
          }
        }
      }
      t.diagnostic(`${ran} cases in ${Math.round(performance.now() - started)} ms`)
      if (kinds.size > 0) {
        const reports = [...kinds.values()].slice(0, MAX_FAILURES).map(({ count, report }) => `[${count} case(s) like this] ${report}`)
        const failed = [...kinds.values()].reduce((n, k) => n + k.count, 0)
        assert.fail(`${failed} of ${ran} cases failed, in ${kinds.size} way(s)${kinds.size > MAX_FAILURES ? ` (the first ${MAX_FAILURES} shown)` : ''}:\n${reports.join('\n')}`)
      }
    })
  }
})
