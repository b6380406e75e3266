// A Postgres journal whose server accepts connections but never answers: its processes
// stopped with SIGSTOP (the postmaster and every process under it). The kernel still
// completes TCP handshakes, so only the journal's own deadlines end the wait:
// `new ToolExecutionManager` throws JOURNAL_UNAVAILABLE after the URL's connect_timeout,
// a journaled call fails JOURNAL_UNAVAILABLE without running after the operation deadline
// (30 s, or the journal's operationTimeoutMs), and once the server runs again the same manager reconnects by itself.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { journalUrl, pgCluster } from './fixtures/journals.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The processes under `pid`. */
function descendants(pid) {
  const parents = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    // `pid (comm) state ppid ...`: the name may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1])
    parents.push([Number(name), ppid])
  }
  const found = []
  const frontier = [pid]
  while (frontier.length > 0) {
    const p = frontier.pop()
    for (const [child, parent] of parents) {
      if (parent === p && !found.includes(child)) {
        found.push(child)
        frontier.push(child)
      }
    }
  }
  return found
}

/** Stops the server's processes; the returned function lets them run again. */
function freeze(cluster) {
  const postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  // The postmaster first: stopped, it forks nothing new meanwhile.
  process.kill(postmaster, 'SIGSTOP')
  const stopped = [postmaster, ...descendants(postmaster)]
  for (const pid of stopped.slice(1)) process.kill(pid, 'SIGSTOP')
  return () => {
    for (const pid of new Set([...stopped, ...descendants(postmaster)])) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {}
    }
  }
}

/**
 * `new ToolExecutionManager` on `url` in a child process (the constructor blocks its JS
 * thread, so a hang here could not fail the test): what it threw and how long it took,
 * or a failure when it has not returned within `boundMs`.
 */
async function construct(url, boundMs) {
  const script = `
    import { ToolRegistry, ToolExecutionManager } from 'toolhost'
    const started = Date.now()
    try {
      await new ToolExecutionManager(new ToolRegistry(), { journal: ${JSON.stringify(url)} }).close()
      console.log(JSON.stringify({ ms: Date.now() - started }))
    } catch (e) {
      console.log(JSON.stringify({ ms: Date.now() - started, code: e.code, message: e.message }))
    }`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), boundMs)
  const { code, signal } = await new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  clearTimeout(timer)
  assert.equal(signal, null, `the constructor did not return within ${boundMs} ms: it waits on the frozen server; stderr: ${err}`)
  assert.equal(code, 0, err)
  return JSON.parse(out)
}

test('a frozen Postgres: the constructor throws after connect_timeout, a call fails without running after the 30 s deadline (3 s with operationTimeoutMs), and the manager works again after SIGCONT', { timeout: 180_000 }, async () => {
  const cluster = await pgCluster()
  const url = await journalUrl('postgres')
  const registry = new ToolRegistry()
  const runs = []
  registry.register({ name: 'pay', description: 'Pays', inputSchema: { type: 'object' }, handler: async (_args, ctx) => (runs.push(ctx.idempotencyKey), { paid: true }) })
  const manager = new ToolExecutionManager(registry, { journal: url })
  assert.equal((await manager.execute('pay', {}, { idempotencyKey: 'before' })).success, true)
  // A manager that gives each journal operation 3 s, not 30.
  const quick = new ToolExecutionManager(registry, { journal: { url, operationTimeoutMs: 3_000 } })
  assert.equal((await quick.execute('pay', {}, { idempotencyKey: 'quick-before' })).success, true)

  const thaw = freeze(cluster)
  try {
    const started = Date.now()
    // The manager's open connection: the operation deadline.
    const call = manager.execute('pay', {}, { idempotencyKey: 'while-frozen' }).then((r) => ({ r, ms: Date.now() - started }))
    const quickCall = quick.execute('pay', {}, { idempotencyKey: 'quick-while-frozen' }).then((r) => ({ r, ms: Date.now() - started }))
    // A new manager: the URL's connect timeout, TCP connected and the handshake unanswered.
    const constructed = await construct(`${url}?connect_timeout=2`, 30_000)
    console.log(`new ToolExecutionManager on the frozen server threw after ${constructed.ms} ms`)
    assert.equal(constructed.code, 'JOURNAL_UNAVAILABLE', JSON.stringify(constructed))
    assert.match(constructed.message, /the Postgres journal at postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: connecting timed out after 2000 ms/)
    assert.ok(constructed.ms >= 1_900 && constructed.ms < 10_000, `${constructed.ms} ms`)

    const quickly = await quickCall
    console.log(`a journaled call with operationTimeoutMs 3000 on the frozen server failed after ${quickly.ms} ms`)
    assert.equal(quickly.r.error?.code, 'JOURNAL_UNAVAILABLE', JSON.stringify(quickly.r))
    assert.match(quickly.r.error.message, /tool 'pay' was not run: its journal could not be reached \(the Postgres journal at postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: timed out after 3000 ms/)
    assert.ok(quickly.ms >= 2_900 && quickly.ms < 10_000, `${quickly.ms} ms`)

    const { r, ms } = await call
    console.log(`a journaled call on the frozen server failed after ${ms} ms`)
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'JOURNAL_UNAVAILABLE')
    assert.equal(r.error.category, 'transient')
    assert.match(r.error.message, /tool 'pay' was not run: its journal could not be reached \(the Postgres journal at postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: timed out after 30000 ms/)
    assert.ok(ms >= 29_000 && ms < 60_000, `${ms} ms`)
    assert.deepEqual(runs, ['before', 'quick-before'])
  } finally {
    thaw()
  }
  // The same manager connects again; the key that failed was never claimed, and runs now.
  const again = await manager.execute('pay', {}, { idempotencyKey: 'while-frozen' })
  assert.equal(again.success, true, JSON.stringify(again.error))
  assert.deepEqual(runs, ['before', 'quick-before', 'while-frozen'])
  await manager.close()
  await quick.close()
})
