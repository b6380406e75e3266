// AssertionError: a port of Node.js v20's lib/internal/assert/assertion_error.js
// (MIT license, copyright Node.js contributors), so failures read as in Node:
// "Expected values to be strictly deep-equal:" and a "+ actual - expected" diff.
// Values are printed with node-inspect-extracted, Node's util.inspect for the web.
//
// Changes from Node: no colours; lines are assumed 80 columns wide (no terminal).
import { inspect } from 'node-inspect-extracted'

const kReadableOperator = {
  deepStrictEqual: 'Expected values to be strictly deep-equal:',
  strictEqual: 'Expected values to be strictly equal:',
  strictEqualObject: 'Expected "actual" to be reference-equal to "expected":',
  deepEqual: 'Expected values to be loosely deep-equal:',
  notDeepStrictEqual: 'Expected "actual" not to be strictly deep-equal to:',
  notStrictEqual: 'Expected "actual" to be strictly unequal to:',
  notStrictEqualObject: 'Expected "actual" not to be reference-equal to "expected":',
  notDeepEqual: 'Expected "actual" not to be loosely deep-equal to:',
  notIdentical: 'Values have same structure but are not reference-equal:',
  notDeepEqualUnequal: 'Expected values not to be loosely deep-equal:',
}

// Comparing short primitives should just show === / !== instead of using the
// diff.
const kMaxShortLength = 12
const kColumns = 80

function copyError(source) {
  const target = Object.assign({ __proto__: Object.getPrototypeOf(source) }, source)
  Object.defineProperty(target, 'message', { __proto__: null, value: source.message })
  return target
}

function inspectValue(val) {
  // The util.inspect default values could be changed. This makes sure the
  // error messages contain the necessary information nevertheless.
  return inspect(val, {
    compact: false,
    customInspect: false,
    depth: 1000,
    maxArrayLength: Infinity,
    // Assert compares only enumerable properties (with a few exceptions).
    showHidden: false,
    // Assert does not detect proxies currently.
    showProxy: false,
    sorted: true,
    // Inspect getters as we also check them when comparing entries.
    getters: true,
  })
}

function getErrorMessage(operator, message) {
  return message || kReadableOperator[operator]
}

function createErrDiff(actual, expected, operator, message = '') {
  let other = ''
  let res = ''
  let end = ''
  let skipped = false
  const actualInspected = inspectValue(actual)
  const actualLines = actualInspected.split('\n')
  const expectedLines = inspectValue(expected).split('\n')

  let i = 0
  let indicator = ''

  // In case both values are objects or functions explicitly mark them as not
  // reference equal for the `strictEqual` operator.
  if (operator === 'strictEqual' &&
      ((typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null) ||
       (typeof actual === 'function' && typeof expected === 'function'))) {
    operator = 'strictEqualObject'
  }

  // If "actual" and "expected" fit on a single line and they are not strictly
  // equal, check further special handling.
  if (actualLines.length === 1 && expectedLines.length === 1 && actualLines[0] !== expectedLines[0]) {
    const actualRaw = actualLines[0]
    const expectedRaw = expectedLines[0]
    const inputLength = actualRaw.length + expectedRaw.length
    // If the character length of "actual" and "expected" together is less than
    // kMaxShortLength and if neither is an object and at least one of them is
    // not `zero`, use the strict equal comparison to visualize the output.
    if (inputLength <= kMaxShortLength) {
      if ((typeof actual !== 'object' || actual === null) &&
          (typeof expected !== 'object' || expected === null) &&
          (actual !== 0 || expected !== 0)) { // -0 === +0
        return `${getErrorMessage(operator, message)}\n\n` + `${actualLines[0]} !== ${expectedLines[0]}\n`
      }
    } else if (operator !== 'strictEqualObject') {
      // Add a mismatch indicator below the output when it fits on a line.
      if (inputLength < kColumns) {
        while (actualRaw[i] === expectedRaw[i]) {
          i++
        }
        // Ignore the first characters.
        if (i > 2) {
          // Add position indicator for the first mismatch in case it is a
          // single line and the input length is less than the column length.
          indicator = `\n  ${' '.repeat(i)}^`
          i = 0
        }
      }
    }
  }

  // Remove all ending lines that match (this optimizes the output for
  // readability by reducing the number of total changed lines).
  let a = actualLines[actualLines.length - 1]
  let b = expectedLines[expectedLines.length - 1]
  while (a === b) {
    if (i++ < 3) {
      end = `\n  ${a}${end}`
    } else {
      other = a
    }
    actualLines.pop()
    expectedLines.pop()
    if (actualLines.length === 0 || expectedLines.length === 0) break
    a = actualLines[actualLines.length - 1]
    b = expectedLines[expectedLines.length - 1]
  }

  const maxLines = Math.max(actualLines.length, expectedLines.length)
  // Strict equal with identical objects that are not identical by reference.
  // E.g., assert.deepStrictEqual({ a: Symbol() }, { a: Symbol() })
  if (maxLines === 0) {
    // We have to get the result again. The lines were all removed before.
    const lines = actualInspected.split('\n')

    // Only remove lines in case it makes sense to collapse those.
    if (lines.length > 50) {
      lines[46] = '...'
      while (lines.length > 47) {
        lines.pop()
      }
    }

    return `${kReadableOperator.notIdentical}\n\n` + `${lines.join('\n')}\n`
  }

  // There were at least five identical lines at the end. Mark a couple of
  // skipped.
  if (i >= 5) {
    end = `\n...${end}`
    skipped = true
  }
  if (other !== '') {
    end = `\n  ${other}${end}`
    other = ''
  }

  let printedLines = 0
  let identical = 0
  const msg = `${getErrorMessage(operator, message)}\n+ actual - expected`
  const skippedMsg = ' ... Lines skipped'

  let lines = actualLines
  let plusMinus = '+'
  let maxLength = expectedLines.length
  if (actualLines.length < maxLines) {
    lines = expectedLines
    plusMinus = '-'
    maxLength = actualLines.length
  }

  for (i = 0; i < maxLines; i++) {
    if (maxLength < i + 1) {
      // If more than two former lines are identical, print them. Collapse them
      // in case more than five lines were identical.
      if (identical > 2) {
        if (identical > 3) {
          if (identical > 4) {
            if (identical === 5) {
              res += `\n  ${lines[i - 3]}`
              printedLines++
            } else {
              res += '\n...'
              skipped = true
            }
          }
          res += `\n  ${lines[i - 2]}`
          printedLines++
        }
        res += `\n  ${lines[i - 1]}`
        printedLines++
      }
      // No identical lines before.
      identical = 0
      // Add the expected line to the cache.
      if (lines === actualLines) {
        res += `\n${plusMinus} ${lines[i]}`
      } else {
        other += `\n${plusMinus} ${lines[i]}`
      }
      printedLines++
    // Only extra actual lines exist
    // Lines diverge
    } else {
      const expectedLine = expectedLines[i]
      let actualLine = actualLines[i]
      // If the lines diverge, specifically check for lines that only diverge by
      // a trailing comma. In that case it is actually identical and we should
      // mark it as such.
      let divergingLines = actualLine !== expectedLine && (!actualLine.endsWith(',') || actualLine.slice(0, -1) !== expectedLine)
      // If the expected line has a trailing comma but is otherwise identical,
      // add a comma at the end of the actual line.
      if (divergingLines && expectedLine.endsWith(',') && expectedLine.slice(0, -1) === actualLine) {
        divergingLines = false
        actualLine += ','
      }
      if (divergingLines) {
        // If more than two former lines are identical, print them. Collapse
        // them in case more than five lines were identical.
        if (identical > 2) {
          if (identical > 3) {
            if (identical > 4) {
              if (identical === 5) {
                res += `\n  ${actualLines[i - 3]}`
                printedLines++
              } else {
                res += '\n...'
                skipped = true
              }
            }
            res += `\n  ${actualLines[i - 2]}`
            printedLines++
          }
          res += `\n  ${actualLines[i - 1]}`
          printedLines++
        }
        // No identical lines before.
        identical = 0
        // Add the actual line to the result and cache the expected diverging
        // line so consecutive diverging lines show up as +++--- and not +-+-+-.
        res += `\n+ ${actualLine}`
        other += `\n- ${expectedLine}`
        printedLines += 2
      // Lines are identical
      } else {
        // Add all cached information to the result before adding other things
        // and reset the cache.
        res += other
        other = ''
        identical++
        // The very first identical line since the last diverging line is be
        // added to the result.
        if (identical <= 2) {
          res += `\n  ${actualLine}`
          printedLines++
        }
      }
    }
    // Inspected object to big (Show ~50 rows max)
    if (printedLines > 50 && i < maxLines - 2) {
      return `${msg}${skippedMsg}\n${res}\n...${other}\n` + '...'
    }
  }

  return `${msg}${skipped ? skippedMsg : ''}\n${res}${other}${end}${indicator}`
}

function addEllipsis(string) {
  const lines = string.split('\n', 11)
  if (lines.length > 10) {
    lines.length = 10
    return `${lines.join('\n')}\n...`
  } else if (string.length > 512) {
    return `${string.slice(512)}...`
  }
  return string
}

export default class AssertionError extends Error {
  constructor(options) {
    if (options === null || typeof options !== 'object') {
      const error = new TypeError(`The "options" argument must be of type object. Received ${options === null ? 'null' : `type ${typeof options}`}`)
      error.code = 'ERR_INVALID_ARG_TYPE'
      throw error
    }
    const {
      message,
      operator,
      stackStartFn,
      details,
      // Compatibility with older versions.
      stackStartFunction,
    } = options
    let { actual, expected } = options

    // No stack while the message is built: captureStackTrace below makes it.
    const limit = Error.stackTraceLimit
    const limitWritable = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')?.writable === true && Object.isExtensible(Error)
    if (limitWritable) Error.stackTraceLimit = 0

    if (message != null) {
      if (operator === 'deepStrictEqual' || operator === 'strictEqual') {
        super(createErrDiff(actual, expected, operator, message))
      } else {
        super(String(message))
      }
    } else {
      // Prevent the error stack from being visible by duplicating the error
      // in a very close way to the original in case both sides are actually
      // instances of Error.
      if (typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null &&
          'stack' in actual && actual instanceof Error && 'stack' in expected && expected instanceof Error) {
        actual = copyError(actual)
        expected = copyError(expected)
      }

      if (operator === 'deepStrictEqual' || operator === 'strictEqual') {
        super(createErrDiff(actual, expected, operator))
      } else if (operator === 'notDeepStrictEqual' || operator === 'notStrictEqual') {
        // In case the objects are equal but the operator requires unequal, show
        // the first object and say A equals B
        let base = kReadableOperator[operator]
        const res = inspectValue(actual).split('\n')

        // In case "actual" is an object or a function, it should not be
        // reference equal.
        if (operator === 'notStrictEqual' && ((typeof actual === 'object' && actual !== null) || typeof actual === 'function')) {
          base = kReadableOperator.notStrictEqualObject
        }

        // Only remove lines in case it makes sense to collapse those.
        if (res.length > 50) {
          res[46] = '...'
          while (res.length > 47) {
            res.pop()
          }
        }

        // Only print a single input.
        if (res.length === 1) {
          super(`${base}${res[0].length > 5 ? '\n\n' : ' '}${res[0]}`)
        } else {
          super(`${base}\n\n${res.join('\n')}\n`)
        }
      } else {
        let res = inspectValue(actual)
        let other = inspectValue(expected)
        const knownOperator = kReadableOperator[operator]
        if (operator === 'notDeepEqual' && res === other) {
          res = `${knownOperator}\n\n${res}`
          if (res.length > 1024) {
            res = `${res.slice(0, 1021)}...`
          }
          super(res)
        } else {
          if (res.length > 512) {
            res = `${res.slice(0, 509)}...`
          }
          if (other.length > 512) {
            other = `${other.slice(0, 509)}...`
          }
          if (operator === 'deepEqual') {
            res = `${knownOperator}\n\n${res}\n\nshould loosely deep-equal\n\n`
          } else {
            const newOp = kReadableOperator[`${operator}Unequal`]
            if (newOp) {
              res = `${newOp}\n\n${res}\n\nshould not loosely deep-equal\n\n`
            } else {
              other = ` ${operator} ${other}`
            }
          }
          super(`${res}${other}`)
        }
      }
    }

    if (limitWritable) Error.stackTraceLimit = limit

    this.generatedMessage = !message
    Object.defineProperty(this, 'name', {
      __proto__: null,
      value: 'AssertionError [ERR_ASSERTION]',
      enumerable: false,
      writable: true,
      configurable: true,
    })
    this.code = 'ERR_ASSERTION'
    if (details) {
      this.actual = undefined
      this.expected = undefined
      this.operator = undefined
      for (let i = 0; i < details.length; i++) {
        this['message ' + i] = details[i].message
        this['actual ' + i] = details[i].actual
        this['expected ' + i] = details[i].expected
        this['operator ' + i] = details[i].operator
        this['stack trace ' + i] = details[i].stack
      }
    } else {
      this.actual = actual
      this.expected = expected
      this.operator = operator
    }
    // V8 (Node and Chromium): the stack starts at the assert call, not in here.
    Error.captureStackTrace?.(this, stackStartFn || stackStartFunction)
    // Create error message including the error code in the name.
    this.stack // eslint-disable-line no-unused-expressions
    // Reset the name.
    this.name = 'AssertionError'
  }

  toString() {
    return `${this.name} [${this.code}]: ${this.message}`
  }

  [inspect.custom](recurseTimes, ctx) {
    // Long strings should not be fully inspected.
    const tmpActual = this.actual
    const tmpExpected = this.expected

    if (typeof this.actual === 'string') {
      this.actual = addEllipsis(this.actual)
    }
    if (typeof this.expected === 'string') {
      this.expected = addEllipsis(this.expected)
    }

    // This limits the `actual` and `expected` property default inspection to
    // the minimum depth.
    const result = inspect(this, { ...ctx, customInspect: false, depth: 0 })

    // Reset the properties after inspection.
    this.actual = tmpActual
    this.expected = tmpExpected

    return result
  }
}
