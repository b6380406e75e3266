// The page's own tools: the agent calls them, and they run here, in the browser, through
// toolhost (validation, retries, timeouts, approval and events come from its engine).
// get_weather is not among them: it is a backend tool, which the server runs itself.
import { transientError } from 'toolhost'

const DATE = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' }

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms)
  signal.addEventListener('abort', () => {
    clearTimeout(timer)
    reject(signal.reason)
  }, { once: true })
})

export function registerTools(registry) {
  let searches = 0

  registry.register({
    name: 'get_preferences',
    description: "The user's dining preferences, as saved in this browser",
    metadata: { readOnly: true },
    handler: async (args, { signal }) => {
      await sleep(120, signal)
      return { diet: 'vegetarian', budget: 'moderate' }
    },
  })

  registry.register({
    name: 'check_calendar',
    description: "The user's free evening slots on a date",
    inputSchema: { type: 'object', properties: { date: DATE }, required: ['date'], additionalProperties: false },
    metadata: { readOnly: true },
    handler: async ({ date }, { signal }) => {
      await sleep(200, signal)
      return { date, free: ['19:30', '21:00'] }
    },
  })

  registry.register({
    name: 'find_restaurants',
    description: 'Restaurants with a free table on a date',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string' }, date: DATE, diet: { type: 'string' } },
      required: ['city', 'date'],
    },
    // The restaurant service fails the first search of the page with a 503, which is
    // transient: the manager retries it after its backoff.
    handler: async ({ city }, { signal }) => {
      await sleep(250, signal)
      if (searches++ === 0) throw transientError('restaurant service answered 503 Service Unavailable', { code: 'HTTP_503' })
      return { city, restaurants: [{ id: 'r_ao26', name: 'Ao 26', slots: ['19:30', '20:00'] }] }
    },
  })

  registry.register({
    name: 'book_table',
    description: 'Books a table; the user approves each booking',
    inputSchema: {
      type: 'object',
      properties: {
        restaurantId: { type: 'string' },
        time: { type: 'string', pattern: '^\\d{2}:\\d{2}$' },
        people: { type: 'integer', minimum: 1, maximum: 8 },
      },
      required: ['restaurantId', 'time', 'people'],
      additionalProperties: false,
    },
    needsApproval: true,
    handler: async ({ time, people }, { signal }) => {
      await sleep(200, signal)
      return { restaurant: 'Ao 26', time, people, confirmation: `BK-${people}${time.replace(':', '')}` }
    },
  })

  registry.register({
    name: 'compare_prices',
    description: 'Compares menu prices across restaurants; slow',
    inputSchema: { type: 'object', properties: { city: { type: 'string' }, seconds: { type: 'number' } }, required: ['city'] },
    handler: async ({ seconds = 5 }, ctx) => {
      for (let done = 0; done < seconds * 2; done++) {
        ctx.reportProgress({ progress: done, total: seconds * 2, message: 'menus read' })
        await sleep(500, ctx.signal)
      }
      return { cheapest: 'Ao 26' }
    },
  })
}
