// Brand checks standing in for Node's internal util.types, written with what a
// browser has: a built-in method that only works on its own kind of object
// throws for any other, which tells the kind apart without trusting
// Symbol.toStringTag or instanceof (both can be faked or cross realms).

const brand = (method) => (value) => {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false
  try {
    method.call(value)
    return true
  } catch {
    return false
  }
}

const getter = (object, key) => Object.getOwnPropertyDescriptor(object, key).get
const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype)
const typedArrayTag = getter(TypedArrayPrototype, Symbol.toStringTag)

export const isDate = brand(Date.prototype.getTime)
// The `source` getter throws for anything but a RegExp, except RegExp.prototype itself.
const hasRegExpSource = brand(getter(RegExp.prototype, 'source'))
export const isRegExp = (value) => value !== RegExp.prototype && hasRegExpSource(value)
export const isMap = brand(function () { return Map.prototype.has.call(this, undefined) })
export const isSet = brand(function () { return Set.prototype.has.call(this, undefined) })
export const isArrayBufferView = (value) => ArrayBuffer.isView(value)
const isArrayBuffer = brand(getter(ArrayBuffer.prototype, 'byteLength'))
// SharedArrayBuffer only exists in cross-origin isolated pages.
const isSharedArrayBuffer = typeof SharedArrayBuffer === 'function'
  ? brand(getter(SharedArrayBuffer.prototype, 'byteLength'))
  : () => false
export const isAnyArrayBuffer = (value) => isArrayBuffer(value) || isSharedArrayBuffer(value)
/** 'Uint8Array', 'Float64Array', ... for typed arrays; undefined for a DataView or anything else. */
export const typedArrayTagOf = (value) => typedArrayTag.call(value)
export const isFloat32Array = (value) => typedArrayTag.call(value) === 'Float32Array'
export const isFloat64Array = (value) => typedArrayTag.call(value) === 'Float64Array'

export const isNumberObject = brand(Number.prototype.valueOf)
export const isStringObject = brand(String.prototype.valueOf)
export const isBooleanObject = brand(Boolean.prototype.valueOf)
export const isBigIntObject = brand(BigInt.prototype.valueOf)
export const isSymbolObject = brand(Symbol.prototype.valueOf)
export const isBoxedPrimitive = (value) => typeof value === 'object' && (isNumberObject(value) ||
  isStringObject(value) || isBooleanObject(value) || isBigIntObject(value) || isSymbolObject(value))

// Error.isError is the brand check (Chromium 134+); instanceof is the fallback.
export const isNativeError = typeof Error.isError === 'function'
  ? (value) => Error.isError(value)
  : (value) => value instanceof Error

export const isCryptoKey = (value) => typeof CryptoKey === 'function' && value instanceof CryptoKey
export const isURL = (value) => typeof URL === 'function' && value instanceof URL

const ONLY_ENUMERABLE = 2
const SKIP_SYMBOLS = 16
export const constants = { ONLY_ENUMERABLE, SKIP_SYMBOLS }

const isIndex = (key) => typeof key === 'string' && /^(0|[1-9]\d*)$/.test(key) && Number(key) < 2 ** 32 - 1

/** Own keys that are not array indices, as Node's internal getOwnNonIndexProperties(). */
export function getOwnNonIndexProperties(object, filter) {
  return Reflect.ownKeys(object).filter((key) => {
    if (isIndex(key)) return false
    if (filter & SKIP_SYMBOLS && typeof key === 'symbol') return false
    if (filter & ONLY_ENUMERABLE && !Object.prototype.propertyIsEnumerable.call(object, key)) return false
    return true
  })
}

/** Buffer.compare for two Uint8Arrays: 0 when equal. */
export function compareBytes(a, b) {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1
  return 0
}
