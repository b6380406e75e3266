// node:assert for the browser: a port of Node.js v20's lib/assert.js (MIT license,
// copyright Node.js contributors), with ./comparisons.mjs and ./assertion-error.mjs
// ported alongside. The `assert` npm package was the first choice, but its copy of
// Node's assert dates from Node 12: throws() rethrows a non-matching error instead
// of failing with an AssertionError, and deepStrictEqual ignores an error's cause,
// a RegExp's lastIndex and a URL's href. See README.md.
//
// Changes from Node: assert.ok() without a message cannot quote the call's source
// code, so its message shows the value instead; CallTracker is not provided.
import { inspect } from 'node-inspect-extracted'
import AssertionError from './assertion-error.mjs'
import { isDeepEqual, isDeepStrictEqual } from './comparisons.mjs'
import { isRegExp, isNativeError } from './types.mjs'

/** Node's internal errors (lib/internal/errors.js), with their codes and messages. */
function nodeError(Base, code, message) {
  const error = new Base(message)
  error.code = code
  return error
}

function determineSpecificType(value) {
  if (value == null) return `${value}`
  if (typeof value === 'function' && value.name) return `function ${value.name}`
  if (typeof value === 'object') {
    if (value.constructor?.name) return `an instance of ${value.constructor.name}`
    return inspect(value, { depth: -1 })
  }
  let inspected = inspect(value, { colors: false })
  if (inspected.length > 28) inspected = `${inspected.slice(0, 25)}...`
  return `type ${typeof value} (${inspected})`
}

const kTypes = ['string', 'function', 'number', 'object', 'Function', 'Object', 'boolean', 'bigint', 'symbol']

function ERR_INVALID_ARG_TYPE(name, expected, actual) {
  let msg = `The "${name}" ${name.includes('.') ? 'property' : 'argument'} must be `
  const types = []
  const instances = []
  for (const value of [].concat(expected)) {
    if (kTypes.includes(value)) types.push(value.toLowerCase())
    else instances.push(value)
  }
  // Special handle `object` in case other instances are allowed to outline
  // the differences between each other.
  if (instances.length > 0 && types.includes('object')) {
    types.splice(types.indexOf('object'), 1)
    instances.push('Object')
  }
  const list = (items) => (items.length > 2 ? `${items.slice(0, -1).join(', ')}, or ${items.at(-1)}` : items.join(' or '))
  if (types.length > 0) {
    msg += `${types.length > 1 ? 'one of type' : 'of type'} ${list(types)}`
    if (instances.length > 0) msg += ' or '
  }
  if (instances.length > 0) msg += `an instance of ${list(instances)}`
  return nodeError(TypeError, 'ERR_INVALID_ARG_TYPE', `${msg}. Received ${determineSpecificType(actual)}`)
}

const ERR_MISSING_ARGS = (...names) => nodeError(TypeError, 'ERR_MISSING_ARGS', `The ${names.map((n) => `"${n}"`).join(' and ')} arguments must be specified`)
const ERR_INVALID_ARG_VALUE = (name, value, reason) => nodeError(TypeError, 'ERR_INVALID_ARG_VALUE',
  `The argument '${name}' ${reason}. Received ${inspect(value)}`)
const ERR_AMBIGUOUS_ARGUMENT = (name, reason) => nodeError(TypeError, 'ERR_AMBIGUOUS_ARGUMENT', `The "${name}" argument is ambiguous. ${reason}`)
const ERR_INVALID_RETURN_VALUE = (input, name, value) => nodeError(TypeError, 'ERR_INVALID_RETURN_VALUE',
  `Expected ${input} to be returned from the "${name}" function but got ${determineSpecificType(value)}.`)

const NO_EXCEPTION_SENTINEL = {}

function innerFail(obj) {
  if (obj.message instanceof Error) throw obj.message
  throw new AssertionError(obj)
}

function innerOk(fn, argLen, value, message) {
  if (!value) {
    let generatedMessage = false
    if (argLen === 0) {
      generatedMessage = true
      message = 'No value argument passed to `assert.ok()`'
    } else if (message == null) {
      generatedMessage = true
      message = `The expression evaluated to a falsy value:\n\n  assert.ok(${inspect(value)})\n`
    } else if (isNativeError(message)) {
      throw message
    }
    const err = new AssertionError({ actual: value, expected: true, message, operator: '==', stackStartFn: fn })
    err.generatedMessage = generatedMessage
    throw err
  }
}

export default function assert(...args) {
  innerOk(ok, args.length, ...args)
}

function ok(...args) {
  innerOk(ok, args.length, ...args)
}

function fail(actual, expected, message, operator, stackStartFn) {
  const argsLen = arguments.length
  let internalMessage = false
  if (actual == null && argsLen <= 1) {
    internalMessage = true
    message = 'Failed'
  } else if (argsLen === 1) {
    message = actual
    actual = undefined
  } else if (argsLen === 2) {
    operator = '!='
  }
  if (message instanceof Error) throw message
  const err = new AssertionError({ actual, expected, operator: operator === undefined ? 'fail' : operator, stackStartFn: stackStartFn || fail, message })
  if (internalMessage) err.generatedMessage = true
  throw err
}

function checkArgs(argsLength) {
  if (argsLength < 2) throw ERR_MISSING_ARGS('actual', 'expected')
}

function equal(actual, expected, message) {
  checkArgs(arguments.length)
  // eslint-disable-next-line eqeqeq
  if (actual != expected && (!Number.isNaN(actual) || !Number.isNaN(expected))) {
    innerFail({ actual, expected, message, operator: '==', stackStartFn: equal })
  }
}

function notEqual(actual, expected, message) {
  checkArgs(arguments.length)
  // eslint-disable-next-line eqeqeq
  if (actual == expected || (Number.isNaN(actual) && Number.isNaN(expected))) {
    innerFail({ actual, expected, message, operator: '!=', stackStartFn: notEqual })
  }
}

function deepEqual(actual, expected, message) {
  checkArgs(arguments.length)
  if (!isDeepEqual(actual, expected)) innerFail({ actual, expected, message, operator: 'deepEqual', stackStartFn: deepEqual })
}

function notDeepEqual(actual, expected, message) {
  checkArgs(arguments.length)
  if (isDeepEqual(actual, expected)) innerFail({ actual, expected, message, operator: 'notDeepEqual', stackStartFn: notDeepEqual })
}

function deepStrictEqual(actual, expected, message) {
  checkArgs(arguments.length)
  if (!isDeepStrictEqual(actual, expected)) innerFail({ actual, expected, message, operator: 'deepStrictEqual', stackStartFn: deepStrictEqual })
}

function notDeepStrictEqual(actual, expected, message) {
  checkArgs(arguments.length)
  if (isDeepStrictEqual(actual, expected)) innerFail({ actual, expected, message, operator: 'notDeepStrictEqual', stackStartFn: notDeepStrictEqual })
}

function strictEqual(actual, expected, message) {
  checkArgs(arguments.length)
  if (!Object.is(actual, expected)) innerFail({ actual, expected, message, operator: 'strictEqual', stackStartFn: strictEqual })
}

function notStrictEqual(actual, expected, message) {
  checkArgs(arguments.length)
  if (Object.is(actual, expected)) innerFail({ actual, expected, message, operator: 'notStrictEqual', stackStartFn: notStrictEqual })
}

// Placeholder objects for a readable diff of the keys a validation object checks.
class Comparison {
  constructor(obj, keys, actual) {
    for (const key of keys) {
      if (key in obj) {
        if (actual !== undefined && typeof actual[key] === 'string' && isRegExp(obj[key]) && obj[key].exec(actual[key]) !== null) {
          this[key] = actual[key]
        } else {
          this[key] = obj[key]
        }
      }
    }
  }
}

function compareExceptionKey(actual, expected, key, message, keys, fn) {
  if (!(key in actual) || !isDeepStrictEqual(actual[key], expected[key])) {
    if (!message) {
      // Create placeholder objects to create a nice output.
      const a = new Comparison(actual, keys)
      const b = new Comparison(expected, keys, actual)
      const err = new AssertionError({ actual: a, expected: b, operator: 'deepStrictEqual', stackStartFn: fn })
      err.actual = actual
      err.expected = expected
      err.operator = fn.name
      throw err
    }
    innerFail({ actual, expected, message, operator: fn.name, stackStartFn: fn })
  }
}

function expectedException(actual, expected, message, fn) {
  let generatedMessage = false
  let throwError = false

  if (typeof expected !== 'function') {
    // Handle regular expressions.
    if (isRegExp(expected)) {
      const str = String(actual)
      if (expected.exec(str) !== null) return
      if (!message) {
        generatedMessage = true
        message = 'The input did not match the regular expression ' + `${inspect(expected)}. Input:\n\n${inspect(str)}\n`
      }
      throwError = true
      // Handle primitives properly.
    } else if (typeof actual !== 'object' || actual === null) {
      const err = new AssertionError({ actual, expected, message, operator: 'deepStrictEqual', stackStartFn: fn })
      err.operator = fn.name
      throw err
    } else {
      // Handle validation objects.
      const keys = Object.keys(expected)
      // Special handle errors to make sure the name and the message are
      // compared as well.
      if (expected instanceof Error) {
        keys.push('name', 'message')
      } else if (keys.length === 0) {
        throw ERR_INVALID_ARG_VALUE('error', expected, 'may not be an empty object')
      }
      for (const key of keys) {
        if (typeof actual[key] === 'string' && isRegExp(expected[key]) && expected[key].exec(actual[key]) !== null) {
          continue
        }
        compareExceptionKey(actual, expected, key, message, keys, fn)
      }
      return
    }
  // Guard instanceof against arrow functions as they don't have a prototype.
  // Check for matching Error classes.
  } else if (expected.prototype !== undefined && actual instanceof expected) {
    return
  } else if (Object.prototype.isPrototypeOf.call(Error, expected)) {
    if (!message) {
      generatedMessage = true
      message = 'The error is expected to be an instance of ' + `"${expected.name}". Received `
      if (isNativeError(actual)) {
        const name = (actual.constructor && actual.constructor.name) || actual.name
        if (expected.name === name) {
          message += 'an error with identical name but a different prototype.'
        } else {
          message += `"${name}"`
        }
        if (actual.message) {
          message += `\n\nError message:\n\n${actual.message}`
        }
      } else {
        message += `"${inspect(actual, { depth: -1 })}"`
      }
    }
    throwError = true
  } else {
    // Check validation functions return value.
    const res = Reflect.apply(expected, {}, [actual])
    if (res !== true) {
      if (!message) {
        generatedMessage = true
        const name = expected.name ? `"${expected.name}" ` : ''
        message = `The ${name}validation function is expected to return` + ` "true". Received ${inspect(res)}`
        if (isNativeError(actual)) {
          message += `\n\nCaught error:\n\n${actual}`
        }
      }
      throwError = true
    }
  }

  if (throwError) {
    const err = new AssertionError({ actual, expected, message, operator: fn.name, stackStartFn: fn })
    err.generatedMessage = generatedMessage
    throw err
  }
}

function getActual(fn) {
  if (typeof fn !== 'function') throw ERR_INVALID_ARG_TYPE('fn', 'Function', fn)
  try {
    fn()
  } catch (e) {
    return e
  }
  return NO_EXCEPTION_SENTINEL
}

function checkIsPromise(obj) {
  // Accept native ES6 promises and promises that are implemented in a similar
  // way. Do not accept thenables that use a function as `obj` and that have no
  // `catch` handler.
  return obj instanceof Promise ||
    (obj !== null && typeof obj === 'object' && typeof obj.then === 'function' && typeof obj.catch === 'function')
}

async function waitForActual(promiseFn) {
  let resultPromise
  if (typeof promiseFn === 'function') {
    // Return a rejected promise if `promiseFn` throws synchronously.
    resultPromise = promiseFn()
    // Fail in case no promise is returned.
    if (!checkIsPromise(resultPromise)) {
      throw ERR_INVALID_RETURN_VALUE('instance of Promise', 'promiseFn', resultPromise)
    }
  } else if (checkIsPromise(promiseFn)) {
    resultPromise = promiseFn
  } else {
    throw ERR_INVALID_ARG_TYPE('promiseFn', ['Function', 'Promise'], promiseFn)
  }

  try {
    await resultPromise
  } catch (e) {
    return e
  }
  return NO_EXCEPTION_SENTINEL
}

function expectsError(stackStartFn, actual, error, message) {
  if (typeof error === 'string') {
    if (arguments.length === 4) {
      throw ERR_INVALID_ARG_TYPE('error', ['Object', 'Error', 'Function', 'RegExp'], error)
    }
    if (typeof actual === 'object' && actual !== null) {
      if (actual.message === error) {
        throw ERR_AMBIGUOUS_ARGUMENT('error/message', `The error message "${actual.message}" is identical to the message.`)
      }
    } else if (actual === error) {
      throw ERR_AMBIGUOUS_ARGUMENT('error/message', `The error "${actual}" is identical to the message.`)
    }
    message = error
    error = undefined
  } else if (error != null && typeof error !== 'object' && typeof error !== 'function') {
    throw ERR_INVALID_ARG_TYPE('error', ['Object', 'Error', 'Function', 'RegExp'], error)
  }

  if (actual === NO_EXCEPTION_SENTINEL) {
    let details = ''
    if (error && error.name) {
      details += ` (${error.name})`
    }
    details += message ? `: ${message}` : '.'
    const fnType = stackStartFn === rejects ? 'rejection' : 'exception'
    innerFail({ actual: undefined, expected: error, operator: stackStartFn.name, message: `Missing expected ${fnType}${details}`, stackStartFn })
  }

  if (!error) return

  expectedException(actual, error, message, stackStartFn)
}

function hasMatchingError(actual, expected) {
  if (typeof expected !== 'function') {
    if (isRegExp(expected)) {
      const str = String(actual)
      return expected.exec(str) !== null
    }
    throw ERR_INVALID_ARG_TYPE('expected', ['Function', 'RegExp'], expected)
  }
  // Guard instanceof against arrow functions as they don't have a prototype.
  if (expected.prototype !== undefined && actual instanceof expected) {
    return true
  }
  if (Object.prototype.isPrototypeOf.call(Error, expected)) {
    return false
  }
  return Reflect.apply(expected, {}, [actual]) === true
}

function expectsNoError(stackStartFn, actual, error, message) {
  if (actual === NO_EXCEPTION_SENTINEL) return

  if (typeof error === 'string') {
    message = error
    error = undefined
  }

  if (!error || hasMatchingError(actual, error)) {
    const details = message ? `: ${message}` : '.'
    const fnType = stackStartFn === doesNotReject ? 'rejection' : 'exception'
    innerFail({
      actual,
      expected: error,
      operator: stackStartFn.name,
      message: `Got unwanted ${fnType}${details}\n` + `Actual message: "${actual && actual.message}"`,
      stackStartFn,
    })
  }
  throw actual
}

function throws(promiseFn, ...args) {
  expectsError(throws, getActual(promiseFn), ...args)
}

async function rejects(promiseFn, ...args) {
  expectsError(rejects, await waitForActual(promiseFn), ...args)
}

function doesNotThrow(fn, ...args) {
  expectsNoError(doesNotThrow, getActual(fn), ...args)
}

async function doesNotReject(fn, ...args) {
  expectsNoError(doesNotReject, await waitForActual(fn), ...args)
}

function ifError(err) {
  if (err !== null && err !== undefined) {
    let message = 'ifError got unwanted exception: '
    if (typeof err === 'object' && typeof err.message === 'string') {
      if (err.message.length === 0 && err.constructor) {
        message += err.constructor.name
      } else {
        message += err.message
      }
    } else {
      message += inspect(err)
    }
    throw new AssertionError({ actual: err, expected: null, operator: 'ifError', message, stackStartFn: ifError })
  }
}

function internalMatch(string, regexp, message, fn) {
  if (!isRegExp(regexp)) {
    throw ERR_INVALID_ARG_TYPE('regexp', 'RegExp', regexp)
  }
  const isMatch = fn === match
  if (typeof string !== 'string' || (regexp.exec(string) !== null) !== isMatch) {
    if (message instanceof Error) {
      throw message
    }

    const generatedMessage = !message

    // 'The input was expected to not match the regular expression ' +
    message = message || (typeof string !== 'string'
      ? 'The "string" argument must be of type string. Received type ' + `${typeof string} (${inspect(string)})`
      : (isMatch
        ? 'The input did not match the regular expression '
        : 'The input was expected to not match the regular expression ') +
          `${inspect(regexp)}. Input:\n\n${inspect(string)}\n`)
    const err = new AssertionError({ actual: string, expected: regexp, message, operator: fn.name, stackStartFn: fn })
    err.generatedMessage = generatedMessage
    throw err
  }
}

function match(string, regexp, message) {
  internalMatch(string, regexp, message, match)
}

function doesNotMatch(string, regexp, message) {
  internalMatch(string, regexp, message, doesNotMatch)
}

Object.assign(assert, {
  fail, AssertionError, ok, equal, notEqual, deepEqual, notDeepEqual, deepStrictEqual, notDeepStrictEqual,
  strictEqual, notStrictEqual, throws, rejects, doesNotThrow, doesNotReject, ifError, match, doesNotMatch,
})

/** The strict variant: equal is strictEqual, deepEqual is deepStrictEqual. */
export function strict(...args) {
  innerOk(strict, args.length, ...args)
}

Object.assign(strict, assert, {
  equal: strictEqual,
  deepEqual: deepStrictEqual,
  notEqual: notStrictEqual,
  notDeepEqual: notDeepStrictEqual,
})
assert.strict = strict
strict.strict = strict
