// Benchmark scenarios B1-B6. Each takes an API module ({ ToolRegistry,
// ToolExecutionManager, transientError }: toolhost or the peer), a call count n
// and a run count, and returns { usPerCall, callsPerSec, ...extra } (medians over
// the runs). Every call result is checked; a wrong one throws.
import { performance } from 'node:perf_hooks'
import { randomUUID } from 'node:crypto'

export const SIZES = { B1: 100_000, B2: 100_000, B3: 20_000, B4: 200, B5: 1_000, B6: 100_000 }
export const TITLES = {
  B1: 'sequential, trivial handler',
  B2: 'sequential, listeners on all 7 events',
  B3: 'concurrent (all at once + Promise.all)',
  B4: '~1 MB JSON-text args, nested schema',
  B5: 'transient x2 then success, 2 ms backoff',
  B6: 'B1 + logging (no-op logger) + metadata',
}
export const EVENT_TYPES = ['started', 'validating', 'executing', 'retrying', 'succeeded', 'failed', 'cancelled']
  .map((s) => `tool-execution-${s}`)

/** The median (the mean of the middle two for an even count; NaN for none). */
export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
/** The q-quantile, nearest rank. */
export const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.max(0, Math.ceil(q * s.length) - 1)] }
const flush = () => new Promise((r) => setTimeout(r, 20)) // let asynchronously delivered events land
function expect(cond, what) { if (!cond) throw new Error(`wrong result: ${what}`) }
function summary(wallMs, n) {
  const ms = median(wallMs)
  return { usPerCall: (ms * 1000) / n, callsPerSec: n / (ms / 1000), runsUs: wallMs.map((w) => +((w * 1000) / n).toFixed(3)) }
}

// ---- B1/B2/B3/B6: small object args ----
const smallSchema = {
  type: 'object',
  properties: { n: { type: 'integer', minimum: 0 }, q: { type: 'string', maxLength: 200 }, flag: { type: 'boolean' } },
  required: ['n', 'q'],
  additionalProperties: false,
}
const BASE = { timeoutMs: 30_000, historyLimit: 1000, retry: { maxAttempts: 3, baseDelay: 100, maxDelay: 10_000, backoffMultiplier: 2, jitter: 'none' } }

/** B1's tool `echo` on a manager with `opts` (also bench/b6-pairs.mjs). */
export function setup(api, opts = {}, toolMeta = {}) {
  const registry = new api.ToolRegistry()
  registry.register({ name: 'echo', description: 'returns n', inputSchema: smallSchema, handler: async (args) => ({ n: args.n }), metadata: toolMeta })
  return new api.ToolExecutionManager(registry, { ...BASE, ...opts })
}
/** `n` sequential calls of `echo`, each result checked (and its metadata stamp, when
 * `stamped`); returns the wall time in ms. */
export async function sequential(manager, n, stamped = false) {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const r = await manager.execute('echo', { n: i, q: 'weather in Paris', flag: true })
    if (!r.success || r.result.n !== i || (stamped && r.result._execution_metadata?.tool_name !== 'echo')) {
      expect(false, `call ${i}: ${JSON.stringify(r.error ?? r.result)}`)
    }
  }
  return performance.now() - t0
}
async function timed(runs, n, once) {
  await once(Math.ceil(n / 5)) // warm-up
  const wall = []
  for (let r = 0; r < runs; r++) wall.push(await once(n))
  return wall
}

async function B1(api, n, runs) {
  const m = setup(api)
  return summary(await timed(runs, n, (k) => sequential(m, k)), n)
}

async function B2(api, n, runs) {
  const m = setup(api)
  let events = 0
  for (const t of EVENT_TYPES) m.addEventListener(t, () => { events++ })
  const wall = await timed(runs, n, async (k) => {
    events = 0
    const ms = await sequential(m, k)
    await flush()
    expect(events >= 4 * k, `expected >= ${4 * k} events (started/validating/executing/succeeded per call), got ${events}`)
    return ms
  })
  return { ...summary(wall, n), eventsPerCall: 4 }
}

async function B3(api, n, runs) {
  const m = setup(api)
  const wall = await timed(runs, n, async (k) => {
    const t0 = performance.now()
    const ps = new Array(k)
    for (let i = 0; i < k; i++) ps[i] = m.execute('echo', { n: i, q: 'concurrent', flag: false })
    const rs = await Promise.all(ps)
    const ms = performance.now() - t0
    rs.forEach((r, i) => { if (!r.success || r.result.n !== i) expect(false, `call ${i}: ${JSON.stringify(r.error)}`) })
    return ms
  })
  return summary(wall, n)
}

async function B6(api, n, runs) {
  // The B1 baseline is re-measured here, interleaved with the logging runs in
  // the same process, so the overhead is not swamped by process-to-process noise.
  const base = setup(api)
  let lines = 0
  // metadata: true stamps results with _execution_metadata; every call checks the stamp.
  const logged = setup(api, { logging: true, logger: () => { lines++ }, metadata: true })
  for (let w = 0; w < 2; w++) { await sequential(base, n); await sequential(logged, n, true) } // warm both paths fully
  const wBase = [], wLog = []
  lines = 0
  for (let r = 0; r < runs; r++) {
    wBase.push(await sequential(base, n))
    wLog.push(await sequential(logged, n, true))
  }
  const s = summary(wLog, n), b = summary(wBase, n)
  return { ...s, baselineUs: b.usPerCall, overheadUs: s.usPerCall - b.usPerCall, logLinesPerCall: lines / (n * runs) }
}

// ---- B4: ~1 MB JSON text, realistic nested schema ----
const address = {
  type: 'object', required: ['line1', 'city', 'postalCode', 'country'], additionalProperties: false,
  properties: {
    line1: { type: 'string', minLength: 1, maxLength: 200 }, line2: { type: 'string', maxLength: 200 },
    city: { type: 'string', minLength: 1, maxLength: 100 }, region: { type: 'string', maxLength: 100 },
    postalCode: { type: 'string', pattern: '^[A-Z0-9][A-Z0-9 -]{2,9}$' },
    country: { enum: ['US', 'CA', 'GB', 'DE', 'FR', 'JP', 'AU', 'NL'] },
  },
}
export const orderSchema = {
  type: 'object', required: ['orderId', 'createdAt', 'status', 'customer', 'shippingAddress', 'items'], additionalProperties: false,
  properties: {
    orderId: { type: 'string', format: 'uuid' },
    createdAt: { type: 'string', format: 'date-time' },
    status: { enum: ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] },
    customer: {
      type: 'object', required: ['id', 'email', 'name'], additionalProperties: false,
      properties: {
        id: { type: 'string', pattern: '^cus_[A-Za-z0-9]{8,32}$' }, email: { type: 'string', format: 'email' },
        name: { type: 'string', minLength: 1, maxLength: 200 }, phone: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$' },
      },
    },
    shippingAddress: address,
    billingAddress: address,
    items: {
      type: 'array', minItems: 1, maxItems: 50_000,
      items: {
        type: 'object', required: ['sku', 'name', 'quantity', 'unitPrice', 'currency'], additionalProperties: false,
        properties: {
          sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{6}$' },
          name: { type: 'string', minLength: 1, maxLength: 120 },
          quantity: { type: 'integer', minimum: 1, maximum: 1000 },
          unitPrice: { type: 'number', minimum: 0 },
          currency: { enum: ['USD', 'EUR', 'GBP', 'JPY'] },
          discount: {
            type: 'object', required: ['kind', 'value'], additionalProperties: false,
            properties: { kind: { enum: ['percent', 'fixed'] }, value: { type: 'number', minimum: 0 } },
          },
          tags: { type: 'array', items: { type: 'string', maxLength: 32 }, maxItems: 10 },
          productUrl: { type: 'string', format: 'uri' },
        },
      },
    },
    notes: { type: 'string', maxLength: 2000 },
  },
}
export function makeOrderJson(targetBytes = 1 << 20) {
  const addr = { line1: '221B Baker Street', city: 'London', postalCode: 'NW1 6XE', country: 'GB' }
  const order = {
    orderId: randomUUID(), createdAt: new Date().toISOString(), status: 'paid',
    customer: { id: 'cus_8f3kQ2xLm9', email: 'ada@example.com', name: 'Ada Lovelace', phone: '+442071234567' },
    shippingAddress: addr, billingAddress: { ...addr, line2: 'Flat 2' }, items: [], notes: 'leave at the door',
  }
  const cur = ['USD', 'EUR', 'GBP', 'JPY']
  let bytes = 600
  for (let i = 0; bytes < targetBytes; i++) {
    const item = {
      sku: `ABC-${String(i).padStart(6, '0')}`, name: `Widget model ${i} (blue, large)`, quantity: 1 + (i % 50),
      unitPrice: 9.99 + (i % 100), currency: cur[i % 4], tags: ['hardware', `batch-${i % 7}`],
      productUrl: `https://shop.example.com/p/ABC-${i}`,
    }
    if (i % 3 === 0) item.discount = { kind: i % 2 ? 'fixed' : 'percent', value: 5 }
    order.items.push(item)
    bytes += JSON.stringify(item).length + 1
  }
  return { text: JSON.stringify(order), items: order.items.length }
}

async function B4(api, n, runs) {
  const registry = new api.ToolRegistry()
  registry.register({ name: 'place_order', description: 'places an order', inputSchema: orderSchema, handler: async (o) => ({ lines: o.items.length }) })
  const m = new api.ToolExecutionManager(registry, BASE)
  const { text, items } = makeOrderJson()
  const bad = await m.execute('place_order', text.replace('"status":"paid"', '"status":"lost"'))
  expect(!bad.success, 'an order with an invalid enum value must fail validation')
  const mainUs = []
  const wall = await timed(runs, n, async (k) => {
    const e0 = performance.eventLoopUtilization()
    const t0 = performance.now()
    for (let i = 0; i < k; i++) {
      const r = await m.execute('place_order', text)
      if (!r.success || r.result.lines !== items) expect(false, `call ${i}: ${JSON.stringify(r.error ?? r.result).slice(0, 300)}`)
    }
    const ms = performance.now() - t0
    mainUs.push((performance.eventLoopUtilization(e0).active * 1000) / k)
    return ms
  })
  return { ...summary(wall, n), mainThreadUs: median(mainUs.slice(1)), argBytes: text.length, lineItems: items }
}

// ---- B5: retry timing accuracy ----
// `hooks` (bench/b5-procs.mjs): `start(k)` before each run of k calls, the warm-up
// included, and `end(k, p99)` after it.
async function B5(api, n, runs, hooks) {
  const retry = { maxAttempts: 3, baseDelay: 2, maxDelay: 1000, backoffMultiplier: 2, jitter: 'none', retryableCategories: ['transient', 'timeout'] }
  const scheduled = [0, 2, 4] // delay before attempt 2 and 3
  let calls // key -> { attempts, lastEnd, devs }
  const registry = new api.ToolRegistry()
  registry.register({
    name: 'flaky', description: 'fails twice', inputSchema: { type: 'object', properties: { key: { type: 'integer' } }, required: ['key'] },
    handler: async ({ key }) => {
      const start = performance.now()
      const c = calls[key]
      if (c.attempts > 0) c.devs.push(Math.abs(start - c.lastEnd - scheduled[c.attempts]))
      c.attempts++
      if (c.attempts < 3) { c.lastEnd = performance.now(); throw api.transientError(`try again (${c.attempts})`, {}) }
      return { key }
    },
  })
  const m = new api.ToolExecutionManager(registry, { ...BASE, retry })
  const p50s = [], p99s = []
  const wall = await timed(runs, n, async (k) => {
    calls = Array.from({ length: k }, () => ({ attempts: 0, lastEnd: 0, devs: [] }))
    hooks?.start(k)
    const t0 = performance.now()
    const ps = []
    for (let i = 0; i < k; i++) ps.push(m.execute('flaky', { key: i }))
    const rs = await Promise.all(ps)
    const ms = performance.now() - t0
    rs.forEach((r, i) => expect(r.success && r.result.key === i && calls[i].attempts === 3, `call ${i}: success=${r.success} attempts=${calls[i].attempts} ${JSON.stringify(r.error)}`))
    const devs = calls.flatMap((c) => c.devs)
    p50s.push(pct(devs, 0.5)); p99s.push(pct(devs, 0.99))
    hooks?.end(k, p99s.at(-1))
    return ms
  })
  return { ...summary(wall, n), devP50Ms: median(p50s.slice(1)), devP99Ms: median(p99s.slice(1)) }
}

export const SCENARIOS = { B1, B2, B3, B4, B5, B6 }
