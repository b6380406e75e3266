// `npm start`: an agent loop against a scripted model (no network, no key), printed as a
// live timeline of every tool execution's lifecycle. The model asks for:
//   - search_flights, which fails transiently twice and is retried with backoff;
//   - get_hotel_rates, which is too slow and is timed out;
//   - book_flight with a wrong argument, then, after reading the validation error in the
//     tool reply, with the corrected one, which waits for the traveller's approval;
//   - build_itinerary, which reports its progress (shown as a bar).
import { ToolExecutionManager, ToolRegistry, transientError } from 'toolhost'

const registry = new ToolRegistry()
let searches = 0
registry.register({
  name: 'search_flights',
  description: 'Flights from Paris to a destination airport',
  inputSchema: { type: 'object', properties: { to: { type: 'string', pattern: '^[A-Z]{3}$' } }, required: ['to'] },
  handler: async ({ to }) => {
    await sleep(40)
    if (++searches < 3) throw transientError('fares service answered 503')
    return { to, flights: [{ flight: 'TP433', departs: '09:40', priceEur: 118 }] }
  },
})
registry.register({
  name: 'get_hotel_rates',
  description: 'Hotel rates in a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  // Per-tool settings: give up after 300 ms, and do not retry.
  metadata: { timeoutMs: 300, retry: { maxAttempts: 1 } },
  handler: async ({ city }, { signal }) => {
    await sleep(10_000, signal) // the timeout aborts `signal`, which ends the wait early
    return { city, rates: [] }
  },
})
registry.register({
  name: 'book_flight',
  description: 'Books seats on a flight',
  inputSchema: {
    type: 'object',
    properties: { flight: { type: 'string' }, passengers: { type: 'integer', minimum: 1, maximum: 9 } },
    required: ['flight', 'passengers'],
    additionalProperties: false,
  },
  // Spending money: a person approves each booking before it runs.
  needsApproval: true,
  handler: ({ flight, passengers }) => ({ confirmation: 'K7Q2XD', flight, passengers }),
})
registry.register({
  name: 'build_itinerary',
  description: 'Builds the trip itinerary as a PDF',
  inputSchema: { type: 'object', properties: { confirmation: { type: 'string' } }, required: ['confirmation'] },
  handler: async ({ confirmation }, ctx) => {
    const pages = ['flights', 'hotel', 'transfers', 'sights']
    for (const [i, page] of pages.entries()) {
      await sleep(60)
      ctx.reportProgress({ progress: i + 1, total: pages.length, message: `rendered the ${page} page` })
    }
    return { file: `itinerary-${confirmation}.pdf`, pages: pages.length }
  },
})

const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 100, jitter: 'none' }, timeoutMs: 2000 })

// The live timeline: one line per lifecycle event, time since start on the left.
const start = performance.now()
const labels = new Map()
const log = (who, what) => console.log(`${(performance.now() - start).toFixed(0).padStart(6)} ms  ${who.padEnd(32)} ${what}`)
const tool = (executionId) => labels.get(executionId) ?? executionId
manager.on('tool-execution-started', ({ execution: e }) => {
  labels.set(e.id, `${e.toolName} [${e.toolCallId}]`)
  log(tool(e.id), 'started')
})
manager.on('tool-execution-validating', (d) => log(tool(d.executionId), `validating ${JSON.stringify(d.args)}`))
manager.on('tool-execution-executing', (d) => log(tool(d.executionId), `executing, attempt ${d.attemptNumber}`))
manager.on('tool-execution-retrying', (d) =>
  log(tool(d.executionId), `retrying in ${d.delayMs} ms (attempt ${d.attemptNumber}/${d.maxAttempts}) after ${d.error.code}: ${d.error.message}`),
)
manager.on('tool-execution-succeeded', ({ execution: e, result }) =>
  log(tool(e.id), `succeeded in ${e.timing.duration.toFixed(0)} ms -> ${JSON.stringify(result)}`),
)
manager.on('tool-execution-failed', ({ execution: e, error }) => log(tool(e.id), `failed ${error.code}: ${error.message}`))
manager.on('tool-execution-cancelled', (d) => log(tool(d.executionId), 'cancelled'))
manager.on('tool-execution-approval-requested', ({ execution: e, approvalId }) => {
  log(tool(e.id), `awaiting approval of ${JSON.stringify(e.args)}`)
  // The traveller reads the request in the app and approves it a moment later.
  setTimeout(() => manager.approve(approvalId, { by: 'traveller' }), 400)
})
manager.on('tool-execution-approved', (d) => log(tool(d.executionId), `approved by ${d.by}`))
manager.on('tool-execution-progress', (d) => {
  const width = 20
  const done = Math.round((d.progress / d.total) * width)
  log(tool(d.executionId), `[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${d.progress}/${d.total} ${d.message}`)
})

/** The scripted model: reads the conversation (tool replies included) and answers like one would. */
function scriptedModel(messages) {
  const replies = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
  const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })
  const ask = (...calls) => ({ role: 'assistant', content: null, tool_calls: calls })
  if (replies.size === 0) return ask(call('call_1', 'search_flights', { to: 'LIS' }), call('call_2', 'get_hotel_rates', { city: 'Lisbon' }))
  if (!replies.has('call_3')) {
    const { flights } = JSON.parse(replies.get('call_1'))
    return ask(call('call_3', 'book_flight', { flight: flights[0].flight, passengers: 'two' }))
  }
  if (!replies.has('call_4')) {
    // The error reply names the failing path and shows the schema: fix that argument.
    const error = replies.get('call_3')
    if (!error.includes('`/passengers`')) throw new Error(`unexpected reply: ${error}`)
    const sent = JSON.parse(messages.findLast((m) => m.tool_calls?.[0].id === 'call_3').tool_calls[0].function.arguments)
    return ask(call('call_4', 'book_flight', { ...sent, passengers: { one: 1, two: 2, three: 3 }[sent.passengers] }))
  }
  const booking = JSON.parse(replies.get('call_4'))
  if (!replies.has('call_5')) return ask(call('call_5', 'build_itinerary', { confirmation: booking.confirmation }))
  const itinerary = JSON.parse(replies.get('call_5'))
  const hotels = replies.get('call_2').includes('TIMEOUT') ? 'the hotel service timed out, so I could not check rates' : 'see the rates above'
  return { role: 'assistant', content: `Booked ${booking.flight} for ${booking.passengers} (confirmation ${booking.confirmation}), itinerary in ${itinerary.file}; ${hotels}.` }
}

const messages = [{ role: 'user', content: 'Book a flight to Lisbon for two of us, and check hotel rates there.' }]
log('user', messages[0].content)
for (;;) {
  const message = scriptedModel(messages)
  messages.push(message)
  if (!message.tool_calls) {
    log('assistant', message.content)
    break
  }
  log('model', `asks for ${message.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join(', ')}`)
  const { messages: replies, results } = await manager.executeToolCalls(message, { provider: 'openai' })
  // What the model reads back for a failed call: words it can act on.
  replies.forEach((r, i) => results[i].success || log('reply to model', r.content.split('\n').slice(0, 3).join(' | ')))
  messages.push(...replies)
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(signal.reason)
    }, { once: true })
  })
}
