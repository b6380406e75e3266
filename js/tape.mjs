// Builds what JSON.parse(text) would, from the tape a worker made of it (see
// crates/toolhost/src/tape.rs): strings are slices of `text` (V8 shares the text's
// memory for 13 characters or more), numbers come parsed, and objects of a key list
// used often are made by one constructor per key list. Node only: the browser parses
// large arguments on the page thread.
//
// No code is compiled from strings (a page with a strict Content-Security-Policy, or
// Node with --disallow-code-generation-from-strings, forbids it): each key list's
// constructor is a closure of its own, so each has its own V8 map and in-object slack,
// and the keys are assigned in order from it.
//
// The objects and arrays are not made by literals: V8 tracks where literals allocate,
// and when a collection ran in the middle of a decode, it found those objects alive and
// allocated them in the old generation from then on (one B4 process in four ran 70 full
// collections). Objects come from `new`, arrays are copied out of a stack with the
// intrinsic `slice`.
const NULL = 0, TRUE = 1, FALSE = 2, NUMBER = 3, STRING = 4, ESCAPED = 5, ARRAY = 6, OBJECT = 7
const stringSlice = String.prototype.slice
const arraySlice = Array.prototype.slice
const parse = JSON.parse
const defineProperty = Object.defineProperty
const objectPrototype = Object.prototype

// JSON.parse defines own properties. Assigning a key Object.prototype has would instead
// set the prototype (`__proto__`), call a setter, or throw where Object.prototype is
// frozen (the override mistake), so those keys are defined.
const inherited = (key) => key === '__proto__' || key in objectPrototype
const own = { value: undefined, writable: true, enumerable: true, configurable: true }
function defineOwn(o, key, value) {
  own.value = value
  defineProperty(o, key, own)
  own.value = undefined
}

// A constructor per key list, kept across decodes (at most this many).
const SHAPES = 256
const constructors = new Map()

function makeShape() {
  function Shape() {}
  Shape.prototype = objectPrototype
  return Shape
}

function builder(keys) {
  const id = keys.join('\u0000')
  let Shape = constructors.get(id)
  if (Shape === undefined) {
    if (constructors.size >= SHAPES) constructors.clear()
    Shape = makeShape()
    constructors.set(id, Shape)
  }
  const special = keys.some(inherited)
  return (v) => {
    const o = new Shape()
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]
      if (special && inherited(key)) defineOwn(o, key, v())
      else o[key] = v()
    }
    return o
  }
}

// One decode at a time, in these variables rather than in a closure per call, so the
// builders always call the same `value`.
let tText = '', tOps = null, tNumbers = null, tBuilders = null, tStack = null, tAt = 0, tNumber = 0, tTop = 0

/** `tape` is `[ops, numbers, shapes]` as `EngineCore.takeTape` gives it. */
export function decodeTape(text, [ops, numbers, shapes]) {
  if (tOps !== null) throw new Error('toolhost: a tape is already being decoded')
  const list = parse(shapes)
  const builders = []
  for (let s = 0; s < list.length; s++) builders[s] = builder(arraySlice.call(list[s], 1))
  tText = text
  tOps = ops
  tNumbers = numbers
  tBuilders = builders
  tStack = [null] // general elements from the start: no elements-kind transitions
  tAt = tNumber = tTop = 0
  try {
    return value()
  } finally {
    tText = ''
    tOps = tNumbers = tBuilders = tStack = null
  }
}

function value() {
  switch (tOps[tAt++]) {
    case STRING: {
      const start = tOps[tAt]
      const end = tOps[tAt + 1]
      tAt += 2
      return stringSlice.call(tText, start, end)
    }
    case NUMBER: return tNumbers[tNumber++]
    case OBJECT: return tBuilders[tOps[tAt++]](value)
    case ARRAY: {
      const length = tOps[tAt++]
      const base = tTop
      for (let k = 0; k < length; k++) {
        const element = value()
        tStack[tTop++] = element
      }
      const array = arraySlice.call(tStack, base, tTop)
      tTop = base
      return array
    }
    case ESCAPED: {
      const start = tOps[tAt]
      const end = tOps[tAt + 1]
      tAt += 2
      return parse(stringSlice.call(tText, start, end))
    }
    case TRUE: return true
    case FALSE: return false
    case NULL: return null
  }
  throw new Error('toolhost: malformed argument tape')
}
