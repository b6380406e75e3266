// A claim the Postgres server wrote but whose answer never came back: the journal's
// connection goes through a proxy that passes everything to the server and, once armed,
// drops the server's replies from the moment a claim's INSERT is executed. The call times
// out (operationTimeoutMs) and fails JOURNAL_UNAVAILABLE without running, while its row
// is in the journal, held by this process. Before, the process renewed that row's lease
// for as long as it lived, so the same key called again waited for ever on a call that
// would never end; now the journal thread deletes the row it left (its own, of that
// execution, never taken over or finished) once the server answers again.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { journalUrl, pgCluster } from './fixtures/journals.mjs'

/** The lossy proxy (fixtures/lossy-proxy.mjs) to `port`, in a worker thread. */
async function lossyProxy(port) {
  const worker = new Worker(new URL('./fixtures/lossy-proxy.mjs', import.meta.url), { workerData: { port } })
  const state = { dropped: '' }
  const listening = await new Promise((resolve, reject) => {
    worker.once('error', reject)
    worker.on('message', (m) => {
      if (m.port !== undefined) resolve(m.port)
      if (m.dropped !== undefined) state.dropped += m.dropped
    })
  })
  return {
    port: listening,
    state,
    arm: () => worker.postMessage('arm'),
    close: () => worker.postMessage('close'),
  }
}

let proxy
after(() => proxy?.close())

test('a claim written but not answered is let go: the same key runs when called again, once', { timeout: 120_000 }, async () => {
  const url = await journalUrl('postgres')
  const pg = await pgCluster()
  const database = url.slice(url.lastIndexOf('/') + 1)
  const port = Number(new URL(url).port)
  proxy = await lossyProxy(port)
  const proxied = url.replace(`:${port}/`, `:${proxy.port}/`)

  const registry = new ToolRegistry()
  const runs = []
  registry.register({ name: 'pay', description: 'Pays', inputSchema: { type: 'object' }, handler: async (_args, ctx) => (runs.push(ctx.idempotencyKey), { paid: true }) })
  const manager = new ToolExecutionManager(registry, { journal: { url: proxied, operationTimeoutMs: 2_000, pollMs: 50 } })
  assert.equal((await manager.execute('pay', {}, { idempotencyKey: 'before' })).success, true)

  proxy.arm()
  const started = Date.now()
  const lost = await manager.execute('pay', {}, { idempotencyKey: 'lost' })
  console.log(`the call whose claim was not answered failed after ${Date.now() - started} ms`)
  assert.equal(lost.success, false)
  assert.equal(lost.error.code, 'JOURNAL_UNAVAILABLE', lost.error.message)
  assert.match(lost.error.message, /tool 'pay' was not run: .*timed out after 2000 ms/)
  assert.deepEqual(runs, ['before'])
  // The server did write the claim: its reply, which never reached the client, says so.
  assert.match(proxy.state.dropped, /INSERT 0 1/, 'the claim did not reach the server: this test shows nothing')

  // The same key again, from the same process: it runs, once.
  let timer
  const again = await Promise.race([
    manager.execute('pay', {}, { idempotencyKey: 'lost' }),
    new Promise((resolve) => (timer = setTimeout(() => resolve('hung'), 30_000))),
  ])
  clearTimeout(timer)
  assert.notEqual(again, 'hung', "the key's own lost claim still held it after 30 s")
  assert.equal(again.success, true, JSON.stringify(again.error))
  assert.notEqual(again.replayed, true)
  assert.deepEqual(runs, ['before', 'lost'])
  // One row for the key, finished.
  assert.equal(pg.sql(database, "SELECT state || ' ' || fence FROM toolhost_calls WHERE key = 'lost'"), 'done 1')

  // Replayed now, not run again.
  const replay = await manager.execute('pay', {}, { idempotencyKey: 'lost' })
  assert.equal(replay.replayed, true)
  assert.deepEqual(runs, ['before', 'lost'])
  await manager.close()
})
