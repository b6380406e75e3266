// MCP over stdio (issue 14): `toolhost serve <module> --stdio` in a child process,
// driven by the official TypeScript SDK's Client (StdioClientTransport), and mounted
// with registry.mountMcp({ command, args }), including a server process killed
// mid-call and started again. Node-only (child processes); see
// scripts/browser-tests/node-only.mjs.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const T = { timeout: 30_000 }
const CLI = fileURLToPath(new URL('../js/cli.mjs', import.meta.url))
const CATALOG = fileURLToPath(new URL('../scripts/mcp-fixtures/catalog.mjs', import.meta.url))
const SERVE = { command: process.execPath, args: [CLI, 'serve', CATALOG, '--stdio'], stderr: 'ignore' }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check, what, ms = 10_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('toolhost serve --stdio with the SDK Client', () => {
  test('lists, calls, cancels and receives list_changed; the server exits when its stdin closes', T, async () => {
    const transport = new StdioClientTransport(SERVE)
    const client = new Client({ name: 'stdio-test', version: '1.0.0' })
    const protocolErrors = []
    client.onerror = (err) => protocolErrors.push(err.message)
    await client.connect(transport)
    const pid = transport.pid
    const { tools } = await client.listTools()
    assert.equal(tools.length, 10)
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } })).structuredContent, { sum: 42 })
    // What a tool prints goes to stderr: stdout is the protocol's, and the call still works.
    assert.deepEqual((await client.callTool({ name: 'process_info', arguments: {} })).structuredContent, { pid, slowAborted: 0 })
    // console.dir wrote to stdout: the client read `{ process_info: 'called' }` as a broken message.
    assert.deepEqual(protocolErrors, [])

    const controller = new AbortController()
    const slow = client.callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { signal: controller.signal })
    await sleep(200)
    controller.abort()
    await assert.rejects(slow)
    await until(async () => (await client.callTool({ name: 'process_info', arguments: {} })).structuredContent.slowAborted === 1, 'the cancel to reach the handler')

    let notified = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified++)
    await client.callTool({ name: 'toggle_extra', arguments: {} })
    await until(() => notified === 1, 'list_changed')
    assert.equal((await client.callTool({ name: 'extra', arguments: {} })).content[0].text, 'extra!')

    await client.close()
    await until(() => !alive(pid), 'the server process to exit')
  })
})

describe('mountMcp({ command, args })', () => {
  test('mounts a stdio server; a process killed mid-call fails the attempt transient, and the retry runs on a new process', T, async () => {
    const local = new ToolRegistry()
    const mount = await local.mountMcp(SERVE, { include: ['slow', 'add', 'process_info'] })
    assert.deepEqual(mount.tools, ['add', 'slow', 'process_info'])
    const manager = new ToolExecutionManager(local, { retry: { maxAttempts: 3, baseDelay: 50, jitter: 'none' } })
    const first = (await manager.execute('process_info', {})).result.pid
    assert.ok(alive(first))

    const retrying = []
    manager.on('tool-execution-retrying', (d) => retrying.push(d.error))
    let started
    const executing = new Promise((resolve) => (started = resolve))
    manager.on('tool-execution-executing', started)
    const run = manager.execute('slow', { ms: 300 })
    await executing
    await sleep(100)
    process.kill(first, 'SIGKILL')
    const r = await run
    assert.equal(r.success, true, JSON.stringify(r.error))
    assert.deepEqual(r.result, { waited: 300 })
    assert.equal(r.execution.retry.attemptNumber, 2)
    assert.equal(retrying[0].category, 'transient')
    assert.equal(retrying[0].code, 'MCP_CONNECTION_CLOSED')
    const second = (await manager.execute('process_info', {})).result.pid
    assert.notEqual(second, first)

    await mount.unmount()
    await until(() => !alive(second), 'the server process to exit after unmount')
  })
})
