// Reads the engine's wire by the layouts crates/toolhost/src/host/wire.rs declares
// (generated into ops.mjs), for TOOLHOST_CHECK_WIRE=1: the manager's decoder then
// checks, after each op, that it read exactly what the declaration says the op holds.
// A writer in the engine or a case in the decoder that drifts from the declaration
// fails at once, naming the op, instead of corrupting the ops after it.
import * as OP from './ops.mjs'

const ops = new Map(OP.OP_LAYOUTS.map(([code, name, fields]) => [code, { name, fields }]))
const events = new Map(OP.EVENT_LAYOUTS.map(([code, name, fields]) => [code, { name, fields }]))

/** The ops (and `EVENT <name>` for events) checked so far, and how often: tests read it
 * to see what they covered. */
export const seen = new Map()

function length(ops, i, what) {
  const n = ops[i]
  if (!(Number.isInteger(n) && n >= 0)) throw new Error(`${what}: ${n} is no string length`)
  return n
}

/** Where the fields end: [op index, UTF-16 units of text their strings take]. */
function walk(name, fields, wire, i, values) {
  let units = 0
  for (const [kind, field, flag, when] of fields) {
    switch (kind) {
      case 'num':
        values[field] = wire[i++]
        break
      case 'str':
        units += length(wire, i++, `${name}.${field}`)
        break
      case 'opt':
        if (wire[i] === 1) {
          units += length(wire, i + 1, `${name}.${field}`)
          i += 2
        } else if (wire[i] === 0) i += 1
        else throw new Error(`${name}.${field}: flag ${wire[i]} is neither 0 nor 1`)
        break
      case 'record':
        if (OP.STATUS[wire[i]] === undefined) throw new Error(`${name}: record status ${wire[i]} is no status`)
        i += OP.RECORD_LENGTH
        break
      case 'if':
        if (values[flag] === when) units += length(wire, i++, `${name}.${field}`)
        break
      case 'masked':
        // `field` is the mask's name here, `flag` the strings' names.
        flag.forEach((n, bit) => {
          if (values[field] & (1 << bit)) units += length(wire, i++, `${name}.${n}`)
        })
        break
      case 'event': {
        const e = events.get(values.type)
        if (e === undefined) throw new Error(`${name}: ${values.type} is no event`)
        const [end, u] = walk(e.name, e.fields, wire, i, values)
        i = end
        units += u
        break
      }
      default:
        throw new Error(`${name}: unknown field kind ${kind}`)
    }
  }
  return [i, units]
}

/**
 * Checks that the decoder, reading the op at `from` (its strings from `fromAt` in
 * `text`), stopped where the declared layout ends: at `to` and `toAt`.
 */
export function checkOp(wire, from, to, text, fromAt, toAt) {
  const layout = ops.get(wire[from])
  if (layout === undefined) throw new Error(`toolhost wire: ${wire[from]} at ${from} is no declared op`)
  const [end, units] = walk(layout.name, layout.fields, wire, from + 1, {})
  const read = text.slice(fromAt, toAt).length
  if (end !== to || units !== read) {
    throw new Error(
      `toolhost wire: the decoder read op ${layout.name} as ${to - from} numbers and ${read} text units; ` +
        `crates/toolhost/src/host/wire.rs declares ${end - from} numbers and ${units} text units`,
    )
  }
  const name = wire[from] === OP.EVENT ? `EVENT ${events.get(wire[from + OP.EVENT_TYPE]).name}` : layout.name
  seen.set(name, (seen.get(name) ?? 0) + 1)
}
