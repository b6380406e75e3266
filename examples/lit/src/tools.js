// The two tools the page registers. Their handlers run in the page; validation,
// retries with backoff and the lifecycle events come from toolhost's engine (wasm).
import { transientError } from 'toolhost'

export function registerTools(registry) {
  registry.register({
    name: 'search_flights',
    description: 'Flights from Paris to an airport, cheapest first',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string', pattern: '^[A-Z]{3}$', description: 'IATA airport code' } },
      required: ['to'],
      additionalProperties: false,
    },
    metadata: { readOnly: true, idempotent: true },
    // A flaky fares service: the first two attempts of every search fail with a 503,
    // which is transient, so the manager retries with backoff.
    handler: async ({ to }, { attemptNumber, signal }) => {
      await sleep(350, signal)
      if (attemptNumber < 3) throw transientError('fares service answered 503 Service Unavailable')
      return {
        to,
        flights: [
          { flight: 'TP433', departs: '09:40', priceEur: 118 },
          { flight: 'AF1124', departs: '13:05', priceEur: 146 },
        ],
      }
    },
  })

  registry.register({
    name: 'book_flight',
    description: 'Books seats on a flight',
    inputSchema: {
      type: 'object',
      properties: {
        flight: { type: 'string' },
        passengers: { type: 'integer', minimum: 1, maximum: 9 },
      },
      required: ['flight', 'passengers'],
      additionalProperties: false,
    },
    handler: async ({ flight, passengers }, { signal }) => {
      await sleep(300, signal)
      return { confirmation: 'K7Q2XD', flight, passengers }
    },
  })
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(signal.reason)
    }, { once: true })
  })
}
