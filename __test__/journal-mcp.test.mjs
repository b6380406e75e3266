// Remote tools with a journal (issue 21): a mounted call carries its idempotency key to
// the server, so when its host dies mid-call and the mount retries on a second host that
// shares the Postgres journal, a `once` tool runs at most once (its outcome: interrupted)
// and an `idempotent` one completes once. Two real `toolhost serve` processes, a TCP
// proxy in front of them (a load balancer that fails over), and kill -9.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { journalUrl } from './fixtures/journals.mjs'

const CLI = fileURLToPath(new URL('../js/cli.mjs', import.meta.url))
const TOOLS = fileURLToPath(new URL('../scripts/mcp-fixtures/journal-tools.mjs', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'toolhost-journal-mcp-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address()
    s.close(() => resolve(port))
  })
})

/** `toolhost serve` of the journal tools on `port`; resolves once it serves. */
function host(port, env, allowHost) {
  return new Promise((resolve, reject) => {
    // Behind a balancer, clients name the balancer's host: it is allowed, as the README says.
    const args = [CLI, 'serve', TOOLS, '--http', String(port), '--allow-host', allowHost]
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
      if (/at http:\/\//.test(out)) resolve(child)
    })
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code) => reject(new Error(`host on ${port} exited ${code}: ${err}`)))
  })
}

/** A TCP proxy to `target.port` (switchable): a load balancer in front of the hosts. */
function proxy(target) {
  const sockets = new Set()
  const server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1')
    sockets.add(client)
    sockets.add(upstream)
    client.pipe(upstream).pipe(client)
    const end = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream) }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    host: `127.0.0.1:${server.address().port}`,
    close: () => { for (const s of sockets) s.destroy(); server.close() },
  })))
}

function effects(file) {
  const counts = {}
  if (!existsSync(file)) return counts
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [event, key] = line.split(' ')
    counts[key] ??= { start: 0, done: 0 }
    counts[key][event]++
  }
  return counts
}

test('a host killed mid-call: the mount retries on a second host on the same Postgres journal; once runs at most once, idempotent completes once', { timeout: 120_000 }, async () => {
  const url = await journalUrl('postgres')
  const file = join(dir, 'effects.log')
  const env = { JOURNAL_URL: url, EFFECTS: file }
  const [portA, portB] = [await freePort(), await freePort()]
  const target = { port: portA }
  const lb = await proxy(target)
  const a = await host(portA, env, lb.host)
  const b = await host(portB, env, lb.host)
  try {
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp({ url: lb.url })
    assert.deepEqual(mount.tools.sort(), ['charge', 'restock'])
    const manager = new ToolExecutionManager(registry, { timeoutMs: 30_000, retry: { maxAttempts: 5, baseDelay: 100, maxDelay: 300, jitter: 'none' } })
    const retries = []
    manager.on('tool-execution-retrying', (d) => retries.push(`${d.toolName}: ${d.error.code}`))
    const charge = manager.execute('charge', { ms: 3000 }, { idempotencyKey: 'pay-77' })
    const restock = manager.execute('restock', { ms: 3000 }, { idempotencyKey: 'stock-9' })
    for (let i = 0; i < 500 && !(effects(file)['pay-77'] && effects(file)['stock-9']); i++) await new Promise((r) => setTimeout(r, 10))
    // The first host dies mid-call; the balancer sends everything to the second one.
    a.kill('SIGKILL')
    target.port = portB
    const [c, r] = await Promise.all([charge, restock])
    assert.ok(retries.some((x) => x.startsWith('charge: MCP_')), `the mount retried: ${retries}`)
    assert.equal(c.success, false)
    assert.equal(c.error.code, 'INTERRUPTED', 'the second host found the first one\'s claim expired and did not run it again')
    assert.match(c.error.message, /outcome of tool .charge. is unknown/)
    assert.equal(r.success, true, JSON.stringify(r.error))
    assert.equal(r.result.by, b.pid, 'the idempotent call was run again by the second host')
    const ran = effects(file)
    assert.deepEqual(ran['pay-77'], { start: 1, done: 0 }, 'charge ran once, on the first host')
    assert.deepEqual(ran['stock-9'], { start: 2, done: 1 }, 'restock ran again and completed once')
    // The client calls again with the same key: the second host replays the outcomes.
    const again = await manager.execute('restock', { ms: 3000 }, { idempotencyKey: 'stock-9' })
    assert.deepEqual(again.result, r.result)
    assert.deepEqual(effects(file)['stock-9'], { start: 2, done: 1 })
    await mount.unmount()
  } finally {
    lb.close()
    a.kill('SIGKILL')
    b.kill('SIGKILL')
  }
})

for (const kind of ['sqlite', 'postgres']) {
  test(`an MCP client asks for a task, the server is killed and restarts, and the client still gets the result [${kind}]`, { timeout: 120_000 }, async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const { CallToolResultSchema, CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const url = await journalUrl(kind)
    const file = join(dir, `tasks-${kind}.log`)
    const env = { JOURNAL_URL: url, EFFECTS: file }
    const port = await freePort()
    const connectClient = async () => {
      const client = new Client({ name: 'task-client', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)))
      return client
    }
    let server = await host(port, env, `127.0.0.1:${port}`)
    try {
      let client = await connectClient()
      assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'a server with a journal offers tasks')
      const { tools } = await client.listTools()
      assert.deepEqual(tools.find((t) => t.name === 'restock').execution, { taskSupport: 'optional' })
      const ask = (name) => client.request({ method: 'tools/call', params: { name, arguments: { ms: 2500 }, task: { ttl: 600_000 } } }, CreateTaskResultSchema)
      const { task: restock } = await ask('restock')
      const { task: charge } = await ask('charge')
      assert.equal(restock.status, 'working')
      for (let i = 0; i < 500 && !(effects(file)[`task:${restock.taskId}`] && effects(file)[`task:${charge.taskId}`]); i++) await new Promise((r) => setTimeout(r, 10))
      // The server dies mid-call; a new one starts on the same journal; the client reconnects.
      server.kill('SIGKILL')
      await new Promise((r) => server.once('exit', r))
      server = await host(port, env, `127.0.0.1:${port}`)
      client = await connectClient()
      const done = await client.experimental.tasks.getTaskResult(restock.taskId, CallToolResultSchema)
      assert.equal(done.isError, undefined, JSON.stringify(done))
      assert.deepEqual(done.structuredContent, { by: server.pid }, 'recovery ran the idempotent call again on the new server')
      assert.equal((await client.experimental.tasks.getTask(restock.taskId)).status, 'completed')
      const failed = await client.experimental.tasks.getTaskResult(charge.taskId, CallToolResultSchema)
      assert.equal(failed.isError, true)
      assert.match(failed.content[0].text, /outcome of tool .charge. is unknown/)
      // Written as a call finished here is: the tool's toModelError applies, and the task's
      // status message is that text, never the raw error.
      assert.match(failed.content[0].text, /\[charge's own toModelError\]$/)
      assert.equal(failed._meta['toolhost/error'].message, failed.content[0].text)
      const chargeTask = await client.experimental.tasks.getTask(charge.taskId)
      assert.equal(chargeTask.status, 'failed')
      assert.equal(chargeTask.statusMessage, failed.content[0].text)
      assert.deepEqual(effects(file)[`task:${restock.taskId}`], { start: 2, done: 1 })
      assert.deepEqual(effects(file)[`task:${charge.taskId}`], { start: 1, done: 0 }, 'the once call never ran twice')
      const { tasks } = await client.experimental.tasks.listTasks()
      assert.deepEqual(tasks.map((t) => t.taskId).sort(), [restock.taskId, charge.taskId].sort())
      await client.close()
    } finally {
      server.kill('SIGKILL')
    }
  })
}
