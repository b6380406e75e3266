// A claim the Postgres server wrote but whose answer never came back: the journal's
// connection goes through a proxy that passes everything to the server and, once armed,
// drops the server's replies from the moment a claim's INSERT is executed. The call times
// out (operationTimeoutMs) and fails JOURNAL_UNAVAILABLE without running, while its row
// is in the journal, held by this process. Before, the process renewed that row's lease
// for as long as it lived, so the same key called again waited for ever on a call that
// would never end; now the journal thread deletes the row it left (its own, of that
// execution, never taken over or finished) once the server answers again. A lost claim
// that took over a dead process's row is let go instead: the row is left as the dead
// process left it (no owner, lease run out), for the next call of the key to take over.
// A decision whose answer was lost cannot be undone (someone decided): approve() fails
// saying it may have been stored, and the call goes on as decided.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
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
  const proxy = {
    port: listening,
    state,
    arm: (statement) => worker.postMessage(statement === undefined ? 'arm' : { arm: statement }),
    close: () => worker.postMessage('close'),
  }
  proxies.push(proxy)
  return proxy
}

const proxies = []
after(() => proxies.forEach((p) => p.close()))

/** A fresh Postgres journal (`url`, its `database` on cluster `pg`), and the URL
 * `proxied` that reaches it through a new lossy `proxy`. */
async function proxiedJournal() {
  const url = await journalUrl('postgres')
  const port = Number(new URL(url).port)
  const proxy = await lossyProxy(port)
  return { url, pg: await pgCluster(), database: url.slice(url.lastIndexOf('/') + 1), proxy, proxied: url.replace(`:${port}/`, `:${proxy.port}/`) }
}

/** The result of `promise`, or 'hung' after `ms`. */
async function within(promise, ms) {
  let timer
  const result = await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(() => resolve('hung'), ms)))])
  clearTimeout(timer)
  return result
}

test('a claim written but not answered is let go: the same key runs when called again, once', { timeout: 120_000 }, async () => {
  const { url, pg, database, proxy, proxied } = await proxiedJournal()

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
  const again = await within(manager.execute('pay', {}, { idempotencyKey: 'lost' }), 30_000)
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

test('a takeover written but not answered is let go: the row is left as the dead process left it, and the key is taken over again', { timeout: 120_000 }, async () => {
  const { url, pg, database, proxy, proxied } = await proxiedJournal()
  // A process asked for approval and was killed (kill -9): its row waits, and its lease
  // (400 ms) runs out with nobody renewing it.
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-lost-takeover-'))
  const config = join(dir, 'dead.json')
  writeFileSync(config, JSON.stringify({ url, effects: join(dir, 'effects.log'), leaseMs: 400, mode: 'calls', calls: [{ key: 'taken', tool: 'transfer', args: { n: 7 } }] }))
  const dead = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/journal-worker.mjs', import.meta.url)), config], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  await new Promise((resolve, reject) => {
    dead.stdout.on('data', (d) => (out += d).includes('waiting taken') && resolve())
    dead.on('exit', (code) => reject(new Error(`the asking process exited ${code} before asking: ${out}`)))
  })
  dead.kill('SIGKILL')
  await new Promise((resolve) => dead.once('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
  const approvalId = pg.sql(database, "SELECT approval_id FROM toolhost_calls WHERE key = 'taken' AND state = 'awaiting'")
  assert.notEqual(approvalId, '')
  await new Promise((r) => setTimeout(r, 500))

  // This process calls the same key: its claim takes the row over, and the answer is lost.
  const runs = []
  const registry = new ToolRegistry()
  registry.register({
    name: 'transfer', description: 'Needs approval', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, metadata: { effect: 'once' },
    needsApproval: true, handler: async ({ n }) => (runs.push(n), { sent: n }),
  })
  const manager = new ToolExecutionManager(registry, { journal: { url: proxied, operationTimeoutMs: 2_000, pollMs: 50 } })
  try {
    const approvals = []
    manager.on('tool-execution-approval-requested', (e) => {
      approvals.push(e.approvalId)
      manager.approve(e.approvalId, { by: 'grace' })
    })
    proxy.arm('UPDATE toolhost_calls SET owner')
    const lost = await manager.execute('transfer', { n: 7 }, { idempotencyKey: 'taken' })
    assert.equal(lost.success, false)
    assert.equal(lost.error.code, 'JOURNAL_UNAVAILABLE', lost.error.message)
    assert.match(proxy.state.dropped, /UPDATE 1/, 'the takeover did not reach the server: this test shows nothing')
    assert.deepEqual(runs, [])

    // Once the server answers again, the row is let go: no owner, lease expired, the
    // dead process's approval still waiting (the lost call's execution named in it).
    const row = () => pg.sql(database, "SELECT owner || '|' || lease_until || '|' || state || '|' || fence || '|' || execution_id FROM toolhost_calls WHERE key = 'taken'")
    const deadline = Date.now() + 20_000
    while (!row().startsWith('|0|') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    assert.deepEqual(row().split('|').slice(0, 5), ['', '0', 'awaiting', '2', lost.execution.id], 'the takeover was not let go: this process holds the row')

    // The same key again: it takes the wait over, is approved, and runs here, once.
    const again = await within(manager.execute('transfer', { n: 7 }, { idempotencyKey: 'taken' }), 30_000)
    assert.notEqual(again, 'hung', "the key's lost takeover still held it after 30 s")
    assert.equal(again.success, true, JSON.stringify(again.error))
    assert.deepEqual(approvals, [approvalId], "the dead process's approval, asked here")
    assert.deepEqual(runs, [7])
    assert.deepEqual(row().split('|').slice(2, 5), ['done', '3', again.execution.id])
  } finally {
    await manager.close()
  }
})

test('a decision written but not answered: approve() fails saying it may have been stored, and it was: the call runs, once', { timeout: 120_000 }, async () => {
  const { proxy, proxied } = await proxiedJournal()
  const runs = []
  const registry = new ToolRegistry()
  registry.register({
    name: 'transfer', description: 'Needs approval', inputSchema: { type: 'object' }, needsApproval: true,
    handler: async () => (runs.push('ran'), { sent: true }),
  })
  const manager = new ToolExecutionManager(registry, { journal: { url: proxied, operationTimeoutMs: 2_000, pollMs: 50 } })
  try {
    const asked = new Promise((resolve) => manager.on('tool-execution-approval-requested', resolve))
    const call = manager.execute('transfer', {}, { idempotencyKey: 'decided' })
    const { approvalId } = await asked
    proxy.arm("UPDATE toolhost_calls SET state = 'approved'")
    await assert.rejects(manager.approve(approvalId, { by: 'grace' }), (e) => {
      assert.equal(e.code, 'JOURNAL_UNAVAILABLE', e.message)
      assert.match(e.message, /may have been stored before its answer was lost: if it was, the approval is no longer pending, and deciding it again answers APPROVAL_NOT_FOUND/)
      return true
    })
    assert.match(proxy.state.dropped, /UPDATE 1/, 'the decision did not reach the server: this test shows nothing')
    // It was stored: the call runs, and deciding again says the approval is gone.
    const result = await within(call, 30_000)
    assert.notEqual(result, 'hung')
    assert.equal(result.success, true, JSON.stringify(result.error))
    assert.equal(result.execution.approval.by, 'grace')
    assert.deepEqual(runs, ['ran'])
    await assert.rejects(manager.approve(approvalId), { code: 'APPROVAL_NOT_FOUND' })
    assert.deepEqual(await manager.pendingApprovals(), [])
  } finally {
    await manager.close()
  }
})
