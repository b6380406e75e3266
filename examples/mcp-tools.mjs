// The tools examples/mcp-serve.mjs hosts, as a module `toolhost serve` also takes:
//
//   npx toolhost serve examples/mcp-tools.mjs --http 8080     (or --stdio)
//
// A module for `toolhost serve` exports a ToolRegistry, or (as here) a function that
// registers tools in the registry it is given.

const WEATHER = {
  paris: { temperatureC: 18, sky: 'cloudy' },
  tokyo: { temperatureC: 24, sky: 'sunny' },
  oslo: { temperatureC: 6, sky: 'rain' },
}
const RATES = { EUR: 1, USD: 1.08, JPY: 169.5, NOK: 11.6 }

export default function registerWeatherTools(registry) {
  registry.register({
    name: 'get_weather',
    description: 'Current weather for a city',
    metadata: { title: 'Weather', readOnly: true, openWorld: true, category: 'weather' },
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string', minLength: 1 } },
      required: ['city'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { city: { type: 'string' }, temperatureC: { type: 'number' }, sky: { type: 'string' } },
      required: ['city', 'temperatureC', 'sky'],
    },
    handler: async ({ city }) => {
      const found = WEATHER[city.toLowerCase()]
      if (!found) throw new Error(`no weather station in ${city} (try Paris, Tokyo or Oslo)`)
      return { city, ...found }
    },
  })
  registry.register({
    name: 'convert_currency',
    description: 'Converts an amount between EUR, USD, JPY and NOK',
    metadata: { readOnly: true, idempotent: true },
    inputSchema: {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        from: { type: 'string', enum: Object.keys(RATES) },
        to: { type: 'string', enum: Object.keys(RATES) },
      },
      required: ['amount', 'from', 'to'],
    },
    handler: ({ amount, from, to }) => Math.round((amount / RATES[from]) * RATES[to] * 100) / 100,
  })
}
