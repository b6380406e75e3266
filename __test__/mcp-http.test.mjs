// serveHttp (issue 14): toolhost's tools on MCP's Streamable HTTP transport, on
// loopback, driven by the official TypeScript SDK's Client, by raw HTTP requests (bad
// ones included), and mounted back with registry.mountMcp({ url }). Node-only (an HTTP
// server); see scripts/browser-tests/node-only.mjs.
import { test, describe, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { serveHttp } from 'toolhost/mcp'
import register from '../scripts/mcp-fixtures/catalog.mjs'

const T = { timeout: 20_000 }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const open = []
after(async () => {
  for (const s of open) await s.close()
})

async function until(check, what, ms = 5000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** The catalog served over HTTP, with a hook on the `slow` tool. */
async function serve(options = {}, managerOptions = { retry: { maxAttempts: 1 } }) {
  const registry = new ToolRegistry()
  register(registry)
  const manager = new ToolExecutionManager(registry, managerOptions)
  const serving = await serveHttp(registry, manager, { name: 'catalog', version: '1.2.3', ...options })
  open.push(serving)
  return { registry, manager, serving }
}

async function sdkClient(url) {
  const client = new Client({ name: 'http-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

/** A raw JSON-RPC POST: `{ status, sessionId, body }` with the body read from JSON or SSE. */
async function post(url, message, { sessionId, headers = {}, raw } = {}) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers }
  if (sessionId !== undefined) h['mcp-session-id'] = sessionId
  const res = await fetch(url, { method: 'POST', headers: h, body: raw ?? JSON.stringify(message) })
  const text = await res.text()
  let body = null
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
    body = data.find((m) => m.id !== undefined) ?? data[0] ?? null
  } else if (text !== '') body = JSON.parse(text)
  return { status: res.status, sessionId: res.headers.get('mcp-session-id') ?? undefined, body }
}

async function initialize(url) {
  const init = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  assert.equal(init.status, 200)
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId: init.sessionId })
  return init.sessionId
}

describe('serveHttp with the SDK Client over Streamable HTTP', () => {
  test('lists and calls the tools; a session per client; DELETE ends a session', T, async () => {
    const { registry, serving } = await serve()
    assert.match(serving.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const a = await sdkClient(serving.url)
    const b = await sdkClient(serving.url)
    assert.equal(serving.sessions.length, 2)
    assert.notEqual(a.transport.sessionId, b.transport.sessionId)
    const { tools } = await a.listTools()
    assert.deepEqual(tools.map((t) => t.name), registry.names)
    assert.deepEqual(a.getServerVersion(), { name: 'catalog', version: '1.2.3' })
    assert.deepEqual((await a.callTool({ name: 'add', arguments: { a: 2, b: 40 } })).structuredContent, { sum: 42 })
    assert.deepEqual((await b.callTool({ name: 'forecast', arguments: { place: 'Lyon', days: 2 } })).content, [{ type: 'text', text: 'Lyon: sunny for 2 day(s)' }])
    const bad = await a.callTool({ name: 'add', arguments: { a: 'two', b: 1 } })
    assert.equal(bad.isError, true)
    assert.match(bad.content[0].text, /^Tool `add` was not run/)
    await a.transport.terminateSession()
    await until(() => serving.sessions.length === 1, 'the session to end')
    await a.close()
    await b.close()
  })

  test('registry changes reach the client as notifications/tools/list_changed', T, async () => {
    const { serving } = await serve()
    const client = await sdkClient(serving.url)
    let notified = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified++)
    await sleep(100) // the client opens its GET stream after initializing
    assert.equal((await client.callTool({ name: 'toggle_extra', arguments: {} })).content[0].text, 'added')
    await until(() => notified === 1, 'list_changed')
    assert.ok((await client.listTools()).tools.some((t) => t.name === 'extra'))
    assert.equal((await client.callTool({ name: 'extra', arguments: {} })).content[0].text, 'extra!')
    await client.callTool({ name: 'toggle_extra', arguments: {} })
    await until(() => notified === 2, 'the second list_changed')
    await client.close()
  })

  test("a client's cancel aborts the execution on the server", T, async () => {
    const { manager, serving } = await serve()
    const client = await sdkClient(serving.url)
    const cancelled = new Promise((resolve) => manager.on('tool-execution-cancelled', resolve))
    let started
    const running = new Promise((resolve) => (started = resolve))
    manager.on('tool-execution-executing', started)
    const controller = new AbortController()
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { signal: controller.signal })
    await running
    controller.abort()
    await assert.rejects(call)
    const { executionId } = await cancelled
    assert.equal(manager.getExecution(executionId).status, 'cancelled')
    assert.equal(manager.inFlight, 0)
    await client.close()
  })

  test('close() with drainMs: 0 ends every session and the executions in flight at once, and frees the port', T, async () => {
    const { manager, serving } = await serve({ drainMs: 0 })
    const client = await sdkClient(serving.url)
    let started
    const running = new Promise((resolve) => (started = resolve))
    manager.on('tool-execution-executing', started)
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000 } }).then(() => 'answered', () => 'failed')
    await running
    const t0 = Date.now()
    await serving.close()
    assert.ok(Date.now() - t0 < 2000, 'close() does not wait for the call')
    assert.equal(manager.inFlight, 0)
    assert.deepEqual(serving.sessions, [])
    await client.close()
    assert.equal(await Promise.race([call, sleep(3000).then(() => 'still pending')]), 'failed')
    await assert.rejects(fetch(serving.url, { method: 'POST' }))
  })
})

describe('serveHttp: bad requests get JSON-RPC errors and never break the server', () => {
  test('unknown tool, arguments that are not an object, bad JSON, unknown session, no session, wrong path, foreign origin, oversized body', T, async () => {
    const { serving } = await serve({ maxBodyBytes: 10_000 })
    const url = serving.url
    const sessionId = await initialize(url)

    const unknown = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'nope', arguments: {} } }, { sessionId })
    assert.equal(unknown.body.error.code, -32602)
    assert.match(unknown.body.error.message, /There is no tool named `nope`/)

    const notObject = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: [1, 2] } }, { sessionId })
    assert.equal(notObject.body.error.code, -32602)
    const stringArgs = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: '{"a":1,"b":2}' } }, { sessionId })
    assert.equal(stringArgs.body.error.code, -32602)

    const badJson = await post(url, null, { sessionId, raw: '{"jsonrpc": "2.0", "id": 4, "method": ' })
    assert.equal(badJson.status, 400)
    assert.equal(badJson.body.error.code, -32700)

    const big = await post(url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2, pad: 'x'.repeat(20_000) } } }, { sessionId })
    assert.equal(big.status, 413)
    assert.equal(big.body.error.code, -32000)
    assert.match(big.body.error.message, /10000/)

    const lost = await post(url, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, { sessionId: 'no-such-session' })
    assert.equal(lost.status, 404)
    assert.equal(lost.body.error.code, -32001)

    const before = serving.sessions.length
    const noSession = await post(url, { jsonrpc: '2.0', id: 7, method: 'tools/list' })
    assert.equal(noSession.status, 400)
    assert.ok(noSession.body.error)
    assert.equal(serving.sessions.length, before, 'a request that is not initialize makes no session')

    const wrongPath = await post(url.replace(/\/mcp$/, '/other'), { jsonrpc: '2.0', id: 8, method: 'tools/list' }, { sessionId })
    assert.equal(wrongPath.status, 404)

    const foreign = await post(url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { sessionId, headers: { origin: 'http://evil.example' } })
    assert.equal(foreign.status, 403)
    const local = await post(url, { jsonrpc: '2.0', id: 10, method: 'tools/list' }, { sessionId, headers: { origin: 'http://localhost:3000' } })
    assert.equal(local.status, 200)

    // Still serving.
    const ok = await post(url, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } }, { sessionId })
    assert.deepEqual(ok.body.result.structuredContent, { sum: 3 })
  })

  test('stateless: any request is served on its own (what a load balancer without stickiness needs)', T, async () => {
    const { serving } = await serve({ stateless: true })
    const init = await post(serving.url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
    assert.equal(init.sessionId, undefined)
    const call = await post(serving.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 5, b: 5 } } })
    assert.deepEqual(call.body.result.structuredContent, { sum: 10 })
    assert.equal((await fetch(serving.url, { headers: { accept: 'text/event-stream' } })).status, 405)
    const client = await sdkClient(serving.url)
    assert.equal((await client.listTools()).tools.length, 10)
    assert.deepEqual(serving.sessions, [])
    await client.close()
  })

  test('options are checked at once', T, async () => {
    const registry = new ToolRegistry()
    await assert.rejects(serveHttp(registry, null, { prot: 1 }), { code: 'INVALID_CONFIG', message: /prot/ })
    await assert.rejects(serveHttp(registry, null, { port: -1 }), { code: 'INVALID_CONFIG' })
    await assert.rejects(serveHttp(registry, null, { path: 'mcp' }), { code: 'INVALID_CONFIG' })
    // Options of the wrong kind, refused at the call rather than read loosely (adversarial
    // pass: options.mjs, maxbody.mjs, origins-string.mjs).
    const refused = [
      [{ stateless: 'false' }, /stateless must be true or false, not "false"/],
      [{ enableJsonResponse: 'no' }, /enableJsonResponse must be true or false/],
      [{ maxBodyBytes: '4MB' }, /maxBodyBytes must be a positive integer, not "4MB"/],
      [{ maxBodyBytes: -1 }, /maxBodyBytes must be a positive integer, not -1/],
      [{ maxBodyBytes: 0 }, /maxBodyBytes must be a positive integer/],
      [{ allowedOrigins: 'https://app.example' }, /allowedOrigins must be an array of origins .* or '\*', not "https:\/\/app.example"/],
      [{ allowedOrigins: [5] }, /allowedOrigins must be an array of origins/],
      [{ allowedHosts: 'localhost' }, /allowedHosts must be an array/],
      [{ name: 5 }, /name must be a string, not 5/],
      [{ version: {} }, /version must be a string, not an object/],
      [{ instructions: 42 }, /instructions must be a string/],
      [{ path: '/mcp?x=1' }, /path must be a URL path alone \(no query/],
      [{ path: '/my mcp' }, /path must be a URL path alone/],
      [{ host: 5 }, /host must be a host name or IP address/],
    ]
    for (const [options, message] of refused) {
      await assert.rejects(serveHttp(registry, null, options), { code: 'INVALID_CONFIG', message }, JSON.stringify(options))
    }
    const { serveStdio } = await import('toolhost/mcp')
    const { PassThrough } = await import('node:stream')
    const io = () => ({ stdin: new PassThrough(), stdout: new PassThrough() })
    await assert.rejects(serveStdio(registry, null, 5), { code: 'INVALID_CONFIG', message: /serveStdio: options must be an object, not 5/ })
    for (const [options, message] of [
      [{ ...io(), drainMs: 'abc' }, /drainMs must be a non-negative integer \(or Infinity\), not "abc"/],
      [{ ...io(), maxMessageBytes: -1 }, /maxMessageBytes must be a positive integer, not -1/],
      [{ ...io(), maxMessageBytes: '10MB' }, /maxMessageBytes must be a positive integer/],
      [{ stdin: 'x', stdout: new PassThrough() }, /stdin must be a readable stream .*, not "x"/],
      [{ stdin: new PassThrough(), stdout: {} }, /stdout must be a writable stream .*, not an object/],
      [{ ...io(), name: 7 }, /name must be a string/],
    ]) {
      await assert.rejects(serveStdio(registry, null, options), { code: 'INVALID_CONFIG', message }, Object.keys(options).join())
    }
    const taken = await serve()
    await assert.rejects(serveHttp(registry, null, { port: taken.serving.port }), { code: 'EADDRINUSE' })
  })
})

describe('mountMcp({ url }): serveHttp mounted back', () => {
  test('mounts with headers, calls through the local manager, follows list_changed, unmounts with a DELETE', T, async () => {
    const { serving } = await serve()
    const seenHeaders = []
    serving.httpServer.on('request', (req) => seenHeaders.push(req.headers.authorization))
    const local = new ToolRegistry()
    local.register({ name: 'local_echo', description: 'Local', handler: ({ text }) => text })
    const mount = await local.mountMcp({ url: serving.url, headers: { authorization: 'Bearer t0ken' } }, { prefix: 'cat_', exclude: /^(slow|nothing|process_info)$/ })
    assert.deepEqual(mount.tools, ['cat_add', 'cat_divide', 'cat_search_docs', 'cat_list_primes', 'cat_forecast', 'cat_create_order', 'cat_toggle_extra'])
    assert.ok(seenHeaders.length > 0 && seenHeaders.every((h) => h === 'Bearer t0ken'))
    const manager = new ToolExecutionManager(local, { retry: { maxAttempts: 1 } })
    assert.deepEqual((await manager.execute('cat_add', { a: 1, b: 2 })).result, { sum: 3 })
    assert.deepEqual((await manager.execute('cat_list_primes', { below: 12 })).result, [2, 3, 5, 7, 11])
    const failed = await manager.execute('cat_divide', { a: 1, b: 0 })
    assert.equal(failed.error.category, 'execution')
    assert.equal(failed.error.message, "tool 'cat_divide' failed: division by zero")
    await manager.execute('cat_toggle_extra', {})
    await until(() => local.has('cat_extra'), 'cat_extra to be mounted')
    assert.equal((await manager.execute('cat_extra', {})).result, 'extra!')
    assert.equal(serving.sessions.length, 1)
    await mount.unmount()
    assert.deepEqual(local.names, ['local_echo'])
    await until(() => serving.sessions.length === 0, 'the DELETE to end the session')
  })

  test('a session the server ended is replaced at once: the call goes through on a new session', T, async () => {
    const { serving } = await serve()
    const local = new ToolRegistry()
    const mount = await local.mountMcp({ url: serving.url })
    const manager = new ToolExecutionManager(local, { retry: { maxAttempts: 1 } })
    const first = serving.sessions[0]
    // The server ends the session (as an idle timeout or a restart would): the client
    // learns it from a 404, or from its GET stream closing.
    const res = await fetch(serving.url, { method: 'DELETE', headers: { 'mcp-session-id': first, 'mcp-protocol-version': '2025-11-25' } })
    assert.equal(res.status, 200)
    await until(() => !serving.sessions.includes(first), 'the session to end')
    const r = await manager.execute('add', { a: 2, b: 2 })
    assert.equal(r.success, true, JSON.stringify(r.error))
    assert.equal(r.execution.retry.attemptNumber, 1)
    assert.equal(serving.sessions.length, 1)
    assert.notEqual(serving.sessions[0], first)
    await mount.unmount()
  })

  test('sessions whose client went away without a DELETE expire after sessionIdleMs', T, async () => {
    const { serving } = await serve({ sessionIdleMs: 40 })
    const sessionId = await initialize(serving.url)
    assert.deepEqual(serving.sessions, [sessionId])
    await until(() => serving.sessions.length === 0, 'the idle session to expire')
  })

  test('a server that is not there: mountMcp rejects transient, naming the URL', T, async () => {
    const { serving } = await serve()
    const url = serving.url
    await serving.close()
    const local = new ToolRegistry()
    await assert.rejects(local.mountMcp({ url }), (err) => {
      assert.equal(err.code, 'MCP_CONNECTION_FAILED')
      assert.equal(err.category, 'transient')
      assert.ok(err.message.includes(url))
      return true
    })
  })
})
