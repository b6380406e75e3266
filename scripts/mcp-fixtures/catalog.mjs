// The tools of the MCP tests' server processes (`toolhost serve` this module), and of
// the local registries the tests compare them with: the same definitions on both sides.
// A default export that fills the registry it is given, as `toolhost serve` expects.
import { z } from 'zod'

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(signal.reason)
    }, { once: true })
  })

/** What this process saw: calls of `slow` aborted (by a cancel or a timeout). */
const seen = { slowAborted: 0 }

/** Definitions of the catalog, by name (the round trip test reads them). */
export function definitions(registry) {
  return [
    {
      name: 'add',
      description: 'Adds two numbers',
      metadata: { title: 'Add', readOnly: true, idempotent: true, category: 'math', tags: ['arithmetic'] },
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number', description: 'first' }, b: { type: 'number', description: 'second' } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      handler: ({ a, b }) => ({ sum: a + b }),
    },
    {
      name: 'divide',
      description: 'Divides a by b',
      metadata: { readOnly: true },
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      handler: ({ a, b }) => {
        if (b === 0) throw new Error('division by zero')
        return a / b
      },
    },
    {
      name: 'search_docs',
      description: 'Searches the documentation',
      metadata: { openWorld: false, category: 'docs' },
      // A Standard Schema (zod v4): registered as its JSON Schema.
      inputSchema: z.object({
        query: z.string().min(2).describe('words to look for'),
        section: z.enum(['guide', 'api', 'faq']).optional(),
        limit: z.number().int().min(1).max(20).default(5),
      }),
      handler: ({ query, section, limit }) => ({ query, section: section ?? 'all', hits: Array.from({ length: limit ?? 5 }, (_, i) => `${query}-${i + 1}`) }),
    },
    {
      name: 'list_primes',
      description: 'Prime numbers below a bound',
      inputSchema: { type: 'object', properties: { below: { type: 'integer', minimum: 2, maximum: 1000 } }, required: ['below'] },
      handler: ({ below }) => {
        const out = []
        for (let n = 2; n < below; n++) if (out.every((p) => n % p !== 0)) out.push(n)
        return out
      },
    },
    {
      name: 'forecast',
      description: 'Weather forecast for a place',
      // A Gemini FunctionDeclaration's `parameters`, in Gemini's Schema dialect.
      parameters: {
        type: 'OBJECT',
        properties: {
          place: { type: 'STRING', description: 'city name' },
          days: { type: 'INTEGER', minimum: 1, maximum: 7 },
          units: { type: 'STRING', enum: ['metric', 'imperial'], nullable: true },
        },
        required: ['place'],
      },
      handler: ({ place, days = 1, units }) => `${place}: sunny for ${days} day(s)${units ? ` (${units})` : ''}`,
    },
    {
      name: 'create_order',
      description: 'Creates an order of line items',
      metadata: { destructive: false, idempotent: false },
      inputSchema: {
        type: 'object',
        $defs: { item: { type: 'object', properties: { sku: { type: 'string', pattern: '^[A-Z]{3}-\\d+$' }, qty: { type: 'integer', minimum: 1 } }, required: ['sku', 'qty'] } },
        properties: { items: { type: 'array', items: { $ref: '#/$defs/item' }, minItems: 1 }, note: { type: ['string', 'null'] } },
        required: ['items'],
      },
      handler: ({ items, note }) => ({ id: `order-${items.length}`, items: items.length, note: note ?? null }),
    },
    {
      name: 'nothing',
      description: 'Returns nothing',
      handler: () => undefined,
    },
    {
      name: 'slow',
      description: 'Waits, then answers; aborts when cancelled',
      inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } }, required: ['ms'] },
      handler: async ({ ms }, ctx) => {
        try {
          await sleep(ms, ctx.signal)
        } catch (err) {
          seen.slowAborted++
          throw err
        }
        return { waited: ms }
      },
    },
    {
      name: 'process_info',
      description: 'What this process saw: its pid, and how many calls of `slow` were aborted',
      handler: () => {
        // On stdio, `toolhost serve` sends these to stderr.
        console.log('process_info called')
        console.dir({ process_info: 'called' })
        return { pid: globalThis.process?.pid ?? 0, slowAborted: seen.slowAborted }
      },
    },
    {
      name: 'toggle_extra',
      description: 'Registers the tool `extra`, or removes it when it is there',
      handler: () => {
        if (registry.has('extra')) return registry.unregister('extra') && 'removed'
        registry.register({ name: 'extra', description: 'An extra tool', handler: () => 'extra!' })
        return 'added'
      },
    },
  ]
}

export default function register(registry) {
  for (const def of definitions(registry)) registry.register(def)
}
