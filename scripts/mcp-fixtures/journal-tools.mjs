// Tools for the journal's remote test (__test__/journal-mcp.test.mjs), served by
// `toolhost serve` on two hosts that share one Postgres journal (JOURNAL_URL). Each
// writes its side effects to EFFECTS (`start|done <key> <pid>` lines), so the test counts
// how often each call really ran across hosts.
import { appendFileSync } from 'node:fs'

const log = (event, key) => appendFileSync(process.env.EFFECTS, `${event} ${key} ${process.pid}\n`)
const schema = { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] }

async function effect({ ms }, ctx) {
  log('start', ctx.idempotencyKey)
  await new Promise((resolve) => setTimeout(resolve, ms))
  log('done', ctx.idempotencyKey)
  return { by: process.pid }
}

export default function (registry) {
  // Its failures' text is its own: a task finished by another process is replied to with it too.
  const toModelError = (error, { text }) => `${text} [charge's own toModelError]`
  registry.register({ name: 'charge', description: 'Charges a card: must not run twice', inputSchema: schema, metadata: { effect: 'once' }, handler: effect, toModelError })
  registry.register({ name: 'restock', description: 'Sets a stock level: safe to run again', inputSchema: schema, metadata: { effect: 'idempotent' }, handler: effect })
}

export const managerOptions = { journal: { url: process.env.JOURNAL_URL, leaseMs: 600, pollMs: 20 }, timeoutMs: 30_000 }
