// The scripted model behind the example's AG-UI server. It decides each run from the
// conversation it is sent, as a model would: which of its tool calls have answers yet,
// and what the answers say. `forwardedProps.script` picks one of four scripts
// (`weekend` when absent):
//
//   weekend     plans a dinner: two frontend calls at once (get_preferences,
//               check_calendar) beside a backend call the server answers itself
//               (get_weather); find_restaurants, whose service fails once and is
//               retried; book_table, which needs the user's approval; then an answer
//               written from the tool messages. Four runs.
//   correction  check_calendar with a date that fails validation; the model reads the
//               error message and calls it again with a valid date. Three runs.
//   runaway     calls get_preferences in every run, forever: maxRounds stops it.
//   stop        get_preferences, then compare_prices (a slow tool), then a call whose
//               arguments stall mid-stream for a minute: press Stop.
import { pause, stream, textMessage, toolCalls, toolResult } from './events.mjs'

export const DATE = '2026-12-05'

const WEATHER = { city: 'Lisbon', date: DATE, summary: 'clear skies', tempC: 19 }

/** The tool messages of the conversation so far, by tool call id. */
function answers(messages) {
  const byCall = new Map()
  for (const m of messages) if (m.role === 'tool') byCall.set(m.toolCallId, m)
  return byCall
}

/** A tool message's content as JSON, or undefined when it is an error or not JSON. */
function json(message) {
  if (message === undefined || message.error !== undefined) return undefined
  try {
    return JSON.parse(message.content)
  } catch {
    return undefined
  }
}

function weekend(input) {
  const done = answers(input.messages)
  const id = (suffix) => `${input.runId}-${suffix}`
  if (!done.has('call_prefs')) {
    return [
      ...textMessage(id('a'), 'Let me look at your preferences, your calendar and the weather.'),
      // Two frontend calls at once, their arguments interleaved, and a backend call.
      ...toolCalls(id('a'), [
        ['call_prefs', 'get_preferences', {}],
        ['call_calendar', 'check_calendar', { date: DATE }],
        ['call_weather', 'get_weather', { city: 'Lisbon', date: DATE }],
      ], 6),
      toolResult(id('weather'), 'call_weather', WEATHER),
    ]
  }
  if (!done.has('call_find')) {
    const prefs = json(done.get('call_prefs')) ?? {}
    return toolCalls(id('a'), [['call_find', 'find_restaurants', { city: 'Lisbon', date: DATE, diet: prefs.diet ?? 'any' }]], 8)
  }
  if (!done.has('call_book')) {
    const [restaurant] = json(done.get('call_find'))?.restaurants ?? []
    const free = json(done.get('call_calendar'))?.free ?? []
    const time = restaurant?.slots.find((s) => free.includes(s)) ?? free[0] ?? '20:00'
    return toolCalls(id('a'), [['call_book', 'book_table', { restaurantId: restaurant?.id ?? 'unknown', time, people: 2 }]], 8)
  }
  const booking = done.get('call_book')
  const weather = json(done.get('call_weather'))
  const sky = weather ? ` Saturday in Lisbon: ${weather.summary}, ${weather.tempC} °C.` : ''
  const booked = json(booking)
  const text = booked === undefined
    ? `I could not book the table: ${booking?.content ?? 'no answer'}.${sky}`
    : `Booked ${booked.restaurant} at ${booked.time} for ${booked.people} (confirmation ${booked.confirmation}).${sky}`
  return textMessage(id('a'), text, 6)
}

function correction(input) {
  const done = answers(input.messages)
  const id = (suffix) => `${input.runId}-${suffix}`
  if (!done.has('call_date_1')) return toolCalls(id('a'), [['call_date_1', 'check_calendar', { date: 'next Saturday' }]], 5)
  if (!done.has('call_date_2')) {
    // The error message names the field and what it must look like: the model retries.
    const refused = done.get('call_date_1')
    if (refused.error === undefined) return textMessage(id('a'), 'That date was accepted; nothing to correct.')
    return toolCalls(id('a'), [['call_date_2', 'check_calendar', { date: DATE }]], 5)
  }
  const calendar = json(done.get('call_date_2'))
  return textMessage(id('a'), calendar ? `On ${calendar.date} you are free at ${calendar.free.join(' and ')}.` : 'The calendar did not answer.')
}

function runaway(input) {
  const n = answers(input.messages).size + 1
  return toolCalls(`${input.runId}-a`, [[`call_${n}`, 'get_preferences', {}]], 2)
}

function stop(input) {
  const done = answers(input.messages)
  const id = (suffix) => `${input.runId}-${suffix}`
  if (done.size === 0) {
    const stalled = toolCalls(id('a'), [['call_calendar', 'check_calendar', { date: DATE }]], 4)
    return [
      ...toolCalls(id('a'), [['call_prefs', 'get_preferences', {}], ['call_prices', 'compare_prices', { city: 'Lisbon', seconds: 60 }]], 3),
      // A call whose arguments stall: start and one delta, a minute's pause, the rest.
      ...stalled.slice(0, 2),
      pause(60_000),
      ...stalled.slice(2),
    ]
  }
  return textMessage(id('a'), `Done: ${done.size} tool messages.`)
}

export const SCRIPTS = { weekend, correction, runaway, stop }

/** The model: the events of one run, for `input`. */
export async function* scriptedModel(input, { signal } = {}) {
  const name = input.forwardedProps?.script ?? 'weekend'
  const script = SCRIPTS[name]
  if (script === undefined) throw new Error(`no script named '${name}' (scripts: ${Object.keys(SCRIPTS).join(', ')})`)
  yield* stream(input, script(input), { signal })
}
