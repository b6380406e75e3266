// Arguments given as a value become JSON text before they reach the engine: the engine
// validates the text, and the handler receives `JSON.parse` of the same text, so what
// a handler gets is exactly what was validated (a `Date` arrives as its ISO string, a
// `__proto__` key as an own property, the caller's object is never shared).
//
// Values JSON cannot carry are refused with a reason and the JSON Pointer of where,
// rather than dropped or turned into `null` as `JSON.stringify` would: functions,
// symbols, BigInt, NaN and infinities, `undefined` as the whole value, cycles, a Map or
// Set (which would become `{}` and lose their entries), a typed array or DataView (an
// object of indexes, or `{}`), and any other object of a class
// that JSON would make `{}` (Headers, URLSearchParams, a fetch Response). A value that could only
// become text larger than the engine's limit is refused before it is written out.

/** Largest argument text the engine accepts, in bytes (`MAX_ARGUMENT_BYTES`). */
export const MAX_ARGUMENT_BYTES = 16 * 1024 * 1024

class NotJson extends Error {}

// The path of the value being visited: JSON.stringify calls the replacer with each
// holder as `this`, depth first, so a stack of holders gives the path.
let holders = []
let keys = []

function pointer(key) {
  const parts = []
  for (let i = 1; i < keys.length; i++) parts.push(keys[i])
  if (key !== '' || keys.length > 0) parts.push(key)
  return parts.length === 0 ? 'the root' : parts.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')
}

function refuse(key, reason) {
  throw new NotJson(`${reason} at ${pointer(key)}`)
}

function replacer(key, value) {
  // Unwind the holder stack to this value's holder.
  while (holders.length > 0 && holders[holders.length - 1] !== this) {
    holders.pop()
    keys.pop()
  }
  switch (typeof value) {
    case 'string':
      if (value.length > MAX_ARGUMENT_BYTES) refuse(key, `a string of ${value.length} characters is larger than the ${MAX_ARGUMENT_BYTES}-byte argument limit`)
      return value
    case 'number':
      if (!Number.isFinite(value)) refuse(key, `${value} is not a JSON number`)
      return value
    case 'boolean':
      return value
    case 'undefined':
      if (holders.length === 0) refuse(key, 'undefined is not JSON')
      return value
    case 'function':
      refuse(key, 'a function is not JSON')
      break
    case 'symbol':
      refuse(key, 'a Symbol is not JSON')
      break
    case 'bigint':
      refuse(key, 'a BigInt is not JSON (convert it to a string or number)')
      break
    default:
      if (value === null) return value
      if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet) {
        refuse(key, `a ${value.constructor.name} is not JSON (pass a plain object or array instead)`)
      }
      if (ArrayBuffer.isView(value)) refuse(key, `${instanceName(value)} is not JSON (it would become an object of indexes); pass Array.from(it) or a base64 string`)
      if (becomesEmpty(value)) refuse(key, `${instanceName(value)} is not JSON (it would become {}); pass a plain object instead`)
      if (Array.isArray(value)) checkLength(key, value)
      holders.push(value)
      keys.push(key)
      return value
  }
}

// Every element costs at least two characters of text ("1,"): an array too long for the
// limit is refused at once, before a single element is written. A sparse array (`[1,,3]`)
// is refused too: JSON.stringify would write its holes as `null`, a value nobody gave.
// Holes are looked for only when there may be some: `includes(undefined)` answers in
// native code (9 ms for 8M elements), and the first hole ends the search.
function checkLength(key, array) {
  const n = array.length
  if (n * 2 > MAX_ARGUMENT_BYTES) refuse(key, `an array of ${n} elements is larger than the ${MAX_ARGUMENT_BYTES}-byte argument limit`)
  if (array.includes(undefined)) {
    for (let i = 0; i < n; i++) {
      if (!(i in array)) refuse(key, `a sparse array (no element at index ${i}) is not JSON`)
    }
  }
}

/**
 * JSON text of `value`, or `{ error }` saying why it is not JSON.
 * @returns {{ text: string } | { error: string }}
 */
export function argumentsText(value) {
  // Most arguments are small plain objects of plain values: for those the native
  // JSON.stringify gives the same text as the checking replacer, at a third of the cost.
  // (A getter or Proxy that throws while checking takes the careful path below.)
  try {
    if (plainData(value, 0)) return { text: JSON.stringify(value) }
  } catch {}
  holders = []
  keys = []
  let text
  try {
    text = JSON.stringify(value, replacer)
  } catch (e) {
    if (e instanceof NotJson) return { error: e.message }
    if (e instanceof RangeError) return { error: 'the value is nested too deeply to be JSON' }
    // A getter, a toJSON method or a Proxy threw, or the value is cyclic: walk it again
    // to say what and where.
    return { error: whatFailed(value) }
  } finally {
    holders = []
    keys = []
  }
  if (text.length > MAX_ARGUMENT_BYTES) return { error: `the value is larger than the ${MAX_ARGUMENT_BYTES}-byte argument limit at the root` }
  return { text }
}

const objectPrototype = Object.prototype

/** Whether JSON would write `value` (an object, after its `toJSON`) as `{}` though it is
 * not an empty plain object: an object of a class with no `toJSON` and no own enumerable
 * keys, whose data lives in internal slots or on its prototype (a fetch Response, Headers,
 * URLSearchParams, a Blob, a generator). A class instance with fields of its own is
 * written with them, and stays allowed. Only the slow paths ask: the fast ones take plain
 * objects alone. May throw (a Proxy); its callers catch. */
function becomesEmpty(value) {
  if (Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  // null, or some realm's Object.prototype (an object a vm context made).
  if (proto === null || Object.getPrototypeOf(proto) === null) return false
  if (typeof value.toJSON === 'function' || isBoxed(value)) return false
  return Object.keys(value).length === 0
}

// new Number(1), new String(''), new Boolean(false): JSON writes the primitive, not {}.
const unboxers = [Number.prototype.valueOf, String.prototype.valueOf, Boolean.prototype.valueOf]
function isBoxed(value) {
  for (const valueOf of unboxers) {
    try {
      valueOf.call(value)
      return true
    } catch {}
  }
  return false
}

/** "a Headers", "an ArrayBuffer", "a Generator": its constructor's name, else its
 * toStringTag. Never throws. */
function instanceName(value) {
  let name
  try {
    const c = value.constructor
    if (typeof c === 'function' && typeof c.name === 'string' && c.name !== '' && c.name !== 'Object') name = c.name
  } catch {}
  if (name === undefined) {
    try {
      const tag = Object.prototype.toString.call(value).slice(8, -1)
      if (tag !== 'Object') name = tag
    } catch {}
  }
  if (name === undefined) return 'an object of a prototype of its own, with no own properties,'
  return `${/^[AEIO]/.test(name) ? 'an' : 'a'} ${name}`
}

/** Whether `value` is JSON as it stands: plain objects and arrays (at most 4 levels, 64
 * entries each) of strings, finite numbers, booleans and null, with no `toJSON`. */
function plainData(value, depth) {
  if (value === null || typeof value !== 'object' || depth > 4) return false
  if (Array.isArray(value)) {
    if (value.length > 64) return false
    for (let i = 0; i < value.length; i++) if (!plainValue(value[i], depth)) return false
    return true
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== objectPrototype && proto !== null) return false
  if ('toJSON' in value) return false
  // Own enumerable keys, as JSON.stringify reads them (V8 answers from its enum cache).
  const keys = Object.keys(value)
  if (keys.length > 64) return false
  for (let i = 0; i < keys.length; i++) if (!plainValue(value[keys[i]], depth)) return false
  return true
}

function plainValue(v, depth) {
  switch (typeof v) {
    case 'string':
      return v.length <= 4096
    case 'number':
      return Number.isFinite(v)
    case 'boolean':
      return true
    case 'object':
      return v === null || plainData(v, depth + 1)
    default:
      return false
  }
}

const at = (path) => (path === '' ? 'the root' : path)
const step = (path, key) => `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`

/**
 * Reads `root` as JSON.stringify does (calling `toJSON`, own enumerable keys), one
 * access at a time, and names the first problem: an access that throws, a cycle, or
 * what `leaf(value, path)` says of a value (after its `toJSON`). Undefined when there is
 * none. Arguments use it once JSON.stringify threw, results when they are not plain.
 */
function jsonWalk(root, leaf) {
  const ancestors = []
  const visit = (value, key, path) => {
    if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
      let toJSON
      try {
        toJSON = value.toJSON
      } catch {
        return `its properties could not be read at ${at(path)}`
      }
      if (typeof toJSON === 'function') {
        try {
          value = toJSON.call(value, key)
        } catch {
          return `toJSON() threw at ${at(path)}`
        }
      }
    }
    const problem = leaf(value, path)
    if (problem !== undefined) return problem
    if (value === null || typeof value !== 'object') return undefined
    if (ancestors.includes(value)) return `the value is cyclic (an object contains itself) at ${at(path)}`
    ancestors.push(value)
    try {
      let isArray
      try {
        isArray = Array.isArray(value)
      } catch {
        return `its properties could not be read at ${at(path)}`
      }
      if (isArray) {
        for (let i = 0; i < value.length; i++) {
          let element
          try {
            element = value[i]
          } catch {
            return `the element could not be read at ${step(path, i)}`
          }
          const failed = visit(element, String(i), step(path, i))
          if (failed !== undefined) return failed
        }
        return undefined
      }
      let names
      try {
        names = Object.keys(value)
      } catch {
        return `its properties could not be read at ${at(path)}`
      }
      for (const name of names) {
        let v
        try {
          v = value[name]
        } catch {
          return `property ${JSON.stringify(name)} could not be read at ${step(path, name)}`
        }
        const failed = visit(v, name, step(path, name))
        if (failed !== undefined) return failed
      }
      return undefined
    } finally {
      ancestors.pop()
    }
  }
  return visit(root, '', '')
}

const noProblem = () => undefined

/** Names the first access of `root` that throws as JSON.stringify reads it (only called
 * once JSON.stringify threw, so its cost does not matter). */
function whatFailed(root) {
  return jsonWalk(root, noProblem) ?? 'the value could not be read as JSON'
}

// ---- Results ----
//
// A handler's result reaches a model as JSON, so a value JSON cannot carry would reach
// it changed: a Map as `{}`, a pending Promise as `{}`, NaN as `null`, a function left
// out. Such a result fails the attempt (`INVALID_RESULT`, crates/toolhost/src/error.rs)
// with what and where, as arguments are refused. `undefined` as the whole result is a
// handler with no return value (the model reads `null`), and `undefined` inside an
// object is a field left out, as JSON writes it: both stay allowed.

/** Objects whose JSON is not what they hold: `[constructor test, what, what to do]`. */
const NOT_JSON_OBJECTS = [
  [(v) => v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet, (v) => `a ${v.constructor.name} is not JSON (it would become {}); return a plain object or array instead`],
  [(v) => typeof v.then === 'function', () => 'an unawaited Promise is not JSON (it would become {}); await it before returning'],
  // (An ArrayBuffer, with no indexes of its own, is one that would become {}: below.)
  [(v) => ArrayBuffer.isView(v), (v) => `${instanceName(v)} is not JSON (it would become an object of indexes); return Array.from(it) or a base64 string`],
  [(v) => v instanceof Error, () => 'an Error is not JSON (it would become {}); throw it, or return its message'],
  [(v) => v instanceof RegExp, () => 'a RegExp is not JSON (it would become {}); return its source'],
  // Last: any other object JSON would write as {} (a fetch Response not read, Headers,
  // URLSearchParams, a Blob, the generator a `*handler` returns).
  [becomesEmpty, (v) => `${instanceName(v)} is not JSON (it would become {}); return a plain object with its data instead`],
]

/** Why `value`, a handler's result, is not JSON, with the JSON Pointer of where (`a Map
 * is not JSON ... at /items`); undefined when it is. Plain data is answered at once. */
export function resultProblem(value) {
  switch (typeof value) {
    case 'undefined':
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) ? undefined : `${value} is not a JSON number (it would become null) at the root`
    case 'object':
      if (value === null) return undefined
      try {
        if (plainTree(value, 0)) return undefined
      } catch {}
  }
  try {
    return jsonWalk(value, resultLeaf)
  } catch (e) {
    return e instanceof RangeError ? 'the value is nested too deeply to be JSON' : 'the value could not be read as JSON'
  }
}

/** Whether `value` is JSON as it stands, of any size: plain objects and arrays of
 * strings, finite numbers, booleans and null, with no `toJSON`, at most 256 levels deep
 * (a cycle ends there, and is named by the walk). A 1,000-row result: 0.2 ms here, the
 * walk 1.3 ms. */
function plainTree(value, depth) {
  if (depth > 256) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i]
      if (typeof v === 'object' ? v !== null && !plainTree(v, depth + 1) : !plainLeaf(v)) return false
    }
    return true
  }
  const proto = Object.getPrototypeOf(value)
  if ((proto !== objectPrototype && proto !== null) || 'toJSON' in value) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false
    const v = value[key]
    if (typeof v === 'object' ? v !== null && !plainTree(v, depth + 1) : !plainLeaf(v)) return false
  }
  return true
}

function plainLeaf(v) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return true
    case 'number':
      return Number.isFinite(v)
    default:
      return false
  }
}

/** What JSON would change or leave out of `value` (after its `toJSON`), at `path`;
 * undefined for a value JSON carries as it is. */
function resultLeaf(value, path) {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? undefined : `${value} is not a JSON number (it would become null) at ${at(path)}`
    case 'function':
      return `a function is not JSON (it would be left out) at ${at(path)}`
    case 'symbol':
      return `a Symbol is not JSON (it would be left out) at ${at(path)}`
    case 'bigint':
      return `a BigInt is not JSON (convert it to a string or number) at ${at(path)}`
    case 'object':
      if (value === null) return undefined
      for (const [is, what] of NOT_JSON_OBJECTS) {
        let matched = false
        try {
          matched = is(value)
        } catch {}
        if (matched) return `${what(value)} at ${at(path)}`
      }
  }
  return undefined
}
