// serveHttp at the trust boundary: a network client is untrusted. Authentication and
// the identity each handler sees, the Host check, CORS, per-client caps, approvals that
// fail closed over MCP, progress listeners that go with their calls, and close() that
// drains. Each test is named after the finding it covers. Node-only (HTTP servers on
// loopback, raw sockets); see scripts/browser-tests/node-only.mjs.
import { test, describe, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { serveHttp, APPROVAL_DEFAULTS, HTTP_DEFAULTS } from 'toolhost/mcp'

const T = { timeout: 30_000 }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const open = []
after(async () => {
  for (const s of open) await s.close()
})

async function until(check, what, ms = 5000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

/** A registry of small tools; `seen` collects what handlers, interceptors and the
 * approval predicate were given. */
function tools() {
  const registry = new ToolRegistry()
  const seen = { ctx: [], interceptor: [], predicate: [] }
  registry.register({ name: 'whoami', description: 'Says who called', handler: (_args, ctx) => {
    seen.ctx.push(ctx.authInfo)
    return { clientId: ctx.authInfo?.clientId ?? null }
  } })
  registry.register({
    name: 'pay', description: 'Pays', inputSchema: { type: 'object', properties: { cents: { type: 'integer' } } },
    needsApproval: (_args, ctx) => {
      seen.predicate.push(ctx.authInfo)
      return true
    },
    handler: ({ cents }) => `paid ${cents}`,
  })
  registry.register({ name: 'sleep', description: 'Sleeps', inputSchema: { type: 'object', properties: { ms: { type: 'number' } } }, handler: ({ ms }, ctx) => new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve(`slept ${ms}`), ms)
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(t)
      reject(ctx.signal.reason)
    })
  }) })
  registry.register({ name: 'ticks', description: 'Reports progress', handler: async (_args, ctx) => {
    for (let i = 1; i <= 3; i++) {
      ctx.reportProgress({ progress: i, total: 3 })
      await sleep(5)
    }
    return 'done'
  } })
  registry.register({ name: 'echo', description: 'Echoes', handler: (args) => args })
  return { registry, seen }
}

async function serve(options = {}, managerOptions = { retry: { maxAttempts: 1 } }) {
  const { registry, seen } = tools()
  const manager = new ToolExecutionManager(registry, managerOptions)
  manager.use(async (ictx, next) => {
    seen.interceptor.push(ictx.authInfo)
    return next()
  })
  const serving = await serveHttp(registry, manager, options)
  open.push(serving)
  return { registry, manager, serving, seen }
}

async function sdkClient(url, { token, capabilities } = {}) {
  const client = new Client({ name: 'auth-test', version: '1.0.0' }, capabilities === undefined ? undefined : { capabilities })
  const requestInit = token === undefined ? undefined : { headers: { authorization: `Bearer ${token}` } }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }))
  return client
}

const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

/** A raw POST with node:http (so Host can be set); `{ status, headers, body }`. */
function rawPost(url, message, headers = {}) {
  return new Promise((resolve, reject) => {
    const body = typeof message === 'string' ? message : JSON.stringify(message)
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let parsed = null
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
          parsed = data.find((m) => m.id !== undefined) ?? null
        } else if (text !== '') parsed = JSON.parse(text)
        resolve({ status: res.statusCode, headers: res.headers, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function session(url, headers = {}) {
  const init = await rawPost(url, INIT, headers)
  assert.equal(init.status, 200, JSON.stringify(init.body))
  const sessionId = init.headers['mcp-session-id']
  await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...headers, 'mcp-session-id': sessionId })
  return sessionId
}

describe('finding 3: serveHttp authenticates its callers, and the identity reaches ctx.authInfo', () => {
  test('a static bearer token: no token and a wrong one (of any length) are 401, the right one is served', T, async () => {
    const { serving, seen } = await serve({ auth: 's3cret-token' })
    const none = await rawPost(serving.url, INIT)
    assert.equal(none.status, 401)
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="toolhost"')
    assert.match(none.body.error.message, /Unauthorized: a valid bearer token is required/)
    for (const wrong of ['s3cret-tokeN', 'x', 's3cret-token-and-more', '']) {
      const r = await rawPost(serving.url, INIT, { authorization: `Bearer ${wrong}` })
      assert.equal(r.status, 401, wrong)
    }
    assert.equal((await rawPost(serving.url, INIT, { authorization: 'Basic czNjcmV0LXRva2Vu' })).status, 401)
    await assert.rejects(sdkClient(serving.url, { token: 'wrong' }), /Unauthorized/)
    const client = await sdkClient(serving.url, { token: 's3cret-token' })
    const r = await client.callTool({ name: 'whoami', arguments: {} })
    assert.deepEqual(r.structuredContent, { clientId: 'token' })
    assert.deepEqual(seen.ctx[0], { token: 's3cret-token', clientId: 'token', scopes: [] })
    await client.close()
  })

  test('a verifier function says who calls: handler, interceptor and approval predicate see it', T, async () => {
    const users = { 'alice-token': { clientId: 'alice', scopes: ['pay'], extra: { tenant: 't1' } }, 'bob-token': 'bob', 'old-token': { clientId: 'old', expiresAt: 1 } }
    const { serving, seen, manager } = await serve({ auth: async (token) => {
      if (token === 'throws') throw new Error('verifier failed')
      return users[token]
    } })
    for (const bad of ['nobody', 'throws', 'old-token']) assert.equal((await rawPost(serving.url, INIT, { authorization: `Bearer ${bad}` })).status, 401, bad)
    const alice = await sdkClient(serving.url, { token: 'alice-token' })
    assert.deepEqual((await alice.callTool({ name: 'whoami', arguments: {} })).structuredContent, { clientId: 'alice' })
    assert.deepEqual(seen.ctx[0], { token: 'alice-token', clientId: 'alice', scopes: ['pay'], extra: { tenant: 't1' } })
    assert.equal(seen.interceptor[0].clientId, 'alice')
    manager.on('tool-execution-approval-requested', ({ approvalId }) => manager.approve(approvalId))
    assert.equal((await alice.callTool({ name: 'pay', arguments: { cents: 5 } })).content[0].text, 'paid 5')
    assert.equal(seen.predicate[0].clientId, 'alice')
    const bob = await sdkClient(serving.url, { token: 'bob-token' })
    assert.deepEqual((await bob.callTool({ name: 'whoami', arguments: {} })).structuredContent, { clientId: 'bob' })
    // A session answers only the identity that opened it.
    const stolen = await rawPost(serving.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, {
      authorization: 'Bearer bob-token', 'mcp-session-id': alice.transport.sessionId,
    })
    assert.equal(stolen.status, 404)
    await alice.close()
    await bob.close()
  })

  test('listening beyond loopback needs auth, or auth: false said on purpose', T, async () => {
    const { registry } = tools()
    await assert.rejects(serveHttp(registry, null, { host: '0.0.0.0' }), { code: 'INVALID_CONFIG', message: /give auth .* or auth: false/ })
    await assert.rejects(serveHttp(registry, null, { auth: 42 }), { code: 'INVALID_CONFIG', message: /auth must be a bearer token/ })
    await assert.rejects(serveHttp(registry, null, { auth: '' }), { code: 'INVALID_CONFIG' })
    // The header's token is read trimmed: such a token let no one in.
    await assert.rejects(serveHttp(registry, null, { auth: '  ' }), { code: 'INVALID_CONFIG', message: /auth token is only whitespace/ })
    await assert.rejects(serveHttp(registry, null, { auth: 's3cret\n' }), { code: 'INVALID_CONFIG', message: /starts or ends with whitespace.*trim it/ })
    await assert.rejects(serveHttp(registry, null, { maxSesions: 3 }), { code: 'INVALID_CONFIG', message: /did you mean `maxSessions`/ })
    const anyone = await serveHttp(registry, null, { host: '0.0.0.0', auth: false })
    open.push(anyone)
    const withToken = await serveHttp(registry, null, { host: '0.0.0.0', auth: 't' })
    open.push(withToken)
    assert.equal((await rawPost(anyone.url, INIT)).status, 200)
    assert.equal((await rawPost(withToken.url, INIT)).status, 401)
  })
})

describe('a bracketed IPv6 host (adversarial pass, stop 44)', () => {
  test("host '[::1]', which isLoopback takes, is listened on (it failed with getaddrinfo ENOTFOUND)", T, async () => {
    const { registry } = tools()
    const serving = await serveHttp(registry, null, { host: '[::1]' })
    open.push(serving)
    assert.match(serving.url, /^http:\/\/\[::1\]:\d+\/mcp$/)
    assert.equal((await rawPost(serving.url, INIT)).status, 200)
  })
})

describe('finding 5: the Host header is checked by the SDK\'s DNS-rebinding protection', () => {
  test('on loopback, a foreign Host is refused; allowedHosts names others', T, async () => {
    const { serving } = await serve()
    const evil = await rawPost(serving.url, INIT, { host: `evil.example:${serving.port}` })
    assert.equal(evil.status, 403)
    assert.match(evil.body.error.message, /Invalid Host header: evil.example/)
    assert.equal((await rawPost(serving.url, INIT, { host: `localhost:${serving.port}` })).status, 200)
    const named = await serve({ allowedHosts: ['tools.internal'] })
    assert.equal((await rawPost(named.serving.url, INIT, { host: `tools.internal:${named.serving.port}` })).status, 200)
    assert.equal((await rawPost(named.serving.url, INIT, { host: `127.0.0.1:${named.serving.port}` })).status, 403)
  })

  test('a loopback host other than 127.0.0.1 serves its own URL (adversarial pass 3: 127.0.0.2 refused it)', T, async () => {
    const { serving } = await serve({ host: '127.0.0.2' })
    assert.match(serving.url, /^http:\/\/127\.0\.0\.2:\d+\/mcp$/)
    const client = await sdkClient(serving.url)
    assert.deepEqual((await client.callTool({ name: 'echo', arguments: { a: 1 } })).structuredContent, { a: 1 })
    await client.close()
    const evil = await rawPost(serving.url, INIT, { host: `evil.example:${serving.port}` })
    assert.equal(evil.status, 403)
    assert.equal((await rawPost(serving.url, INIT, { host: `127.0.0.3:${serving.port}` })).status, 403, 'only the host listened on is added')
  })
})

describe('finding 16: allowedOrigins works for a browser (CORS)', () => {
  test('a preflight is answered and responses carry Access-Control-Allow-Origin; a foreign origin is refused', T, async () => {
    const { serving } = await serve({ allowedOrigins: ['https://app.example'], auth: 'tok' })
    const preflight = await fetch(serving.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-session-id' },
    })
    assert.equal(preflight.status, 204)
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example')
    assert.match(preflight.headers.get('access-control-allow-methods'), /POST/)
    for (const h of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version']) assert.match(preflight.headers.get('access-control-allow-headers'), new RegExp(h))
    const init = await rawPost(serving.url, INIT, { origin: 'https://app.example', authorization: 'Bearer tok' })
    assert.equal(init.status, 200)
    assert.equal(init.headers['access-control-allow-origin'], 'https://app.example')
    assert.match(init.headers['access-control-expose-headers'], /mcp-session-id/)
    // The 401 a page gets is readable by it too.
    const denied = await rawPost(serving.url, INIT, { origin: 'https://app.example' })
    assert.equal(denied.status, 401)
    assert.equal(denied.headers['access-control-allow-origin'], 'https://app.example')
    const foreign = await fetch(serving.url, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } })
    assert.equal(foreign.status, 403)
    assert.equal(foreign.headers.get('access-control-allow-origin'), null)
  })
})

describe('finding 12: a request id is kept as toolCallId only so long', () => {
  test('a 3 MB id becomes a toolCallId of at most maxRequestIdChars and a digest; an id in flight cannot be reused', T, async () => {
    const { serving, manager } = await serve()
    const sessionId = await session(serving.url)
    const ids = []
    manager.on('tool-execution-succeeded', ({ execution }) => ids.push(execution.toolCallId))
    const long = 'i'.repeat(3_000_000)
    const r = await rawPost(serving.url, { jsonrpc: '2.0', id: long, method: 'tools/call', params: { name: 'echo', arguments: { a: 1 } } }, { 'mcp-session-id': sessionId })
    assert.equal(r.status, 200)
    assert.equal(r.body.result.isError, undefined)
    assert.ok(ids[0].length < 128 + 60, `toolCallId of ${ids[0].length} characters`)
    assert.ok(ids[0].startsWith(`mcp-${sessionId}-iiii`))
    assert.match(ids[0], /…[0-9a-f]{8}$/)
    // The same id twice while the first call runs: the second is refused, and the first
    // runs to its end as its own execution (the SDK's transport then answers it on the
    // second's stream, which is the client's own doing).
    rawPost(serving.url, { jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 300 } } }, { 'mcp-session-id': sessionId }).catch(() => {})
    await until(() => manager.inFlight === 1, 'the first call')
    const second = await rawPost(serving.url, { jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 'echo', arguments: {} } }, { 'mcp-session-id': sessionId })
    assert.equal(second.body.error.code, -32600)
    assert.match(second.body.error.message, /request id same is already in use by a call in flight/)
    await until(() => manager.inFlight === 0, 'the first call to end')
    assert.deepEqual(ids.slice(1), [`mcp-${sessionId}-same`])
  })
})

describe('finding 13: what one client holds on the server is capped', () => {
  test('sessions per client and per server', T, async () => {
    const { serving } = await serve({ maxSessionsPerClient: 3, maxSessions: 5, auth: (token) => token })
    for (let i = 0; i < 3; i++) await session(serving.url, { authorization: 'Bearer one' })
    const fourth = await rawPost(serving.url, INIT, { authorization: 'Bearer one' })
    assert.equal(fourth.status, 429)
    assert.match(fourth.body.error.message, /this client holds 3 \(maxSessionsPerClient\)/)
    await session(serving.url, { authorization: 'Bearer two' })
    await session(serving.url, { authorization: 'Bearer three' })
    const full = await rawPost(serving.url, INIT, { authorization: 'Bearer four' })
    assert.equal(full.status, 503)
    assert.match(full.body.error.message, /most sessions \(5, maxSessions\)/)
    assert.equal(serving.sessions.length, 5)
    assert.deepEqual(Object.keys(HTTP_DEFAULTS).sort(), ['headersTimeoutMs', 'maxConnections', 'maxConnectionsPerClient', 'maxSessions', 'maxSessionsPerClient', 'requestTimeoutMs', 'sessionIdleMs'])
  })

  test('initializations whose bodies arrive late count against the caps, and a failed one gives its slot back (adversarial pass, session-race2)', T, async () => {
    const { serving } = await serve({ maxSessionsPerClient: 3, maxSessions: 5, auth: (token) => token })
    const body = JSON.stringify(INIT)
    // Headers at once, the body 300 ms later: every request passes the caps' check before
    // any session is registered.
    const slowInit = (token) => new Promise((resolve, reject) => {
      const req = http.request(serving.url, {
        method: 'POST', agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
      }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode))
      })
      req.on('error', reject)
      req.flushHeaders()
      setTimeout(() => req.end(body), 300)
    })
    const statuses = await Promise.all([...Array(10).fill('a'), ...Array(10).fill('b')].map(slowInit))
    const ok = (from, to) => statuses.slice(from, to).filter((s) => s === 200).length
    assert.equal(ok(0, 20), 5, `maxSessions: ${statuses}`)
    assert.ok(ok(0, 10) <= 3 && ok(10, 20) <= 3, `maxSessionsPerClient: ${statuses}`)
    assert.equal(serving.sessions.length, 5)

    const { serving: one } = await serve({ maxSessions: 1 })
    const bad = await rawPost(one.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    assert.equal(bad.status, 400, 'not an initialize request: no session')
    assert.equal((await rawPost(one.url, INIT)).status, 200, 'the failed one gave its slot back')
  })

  test('pending approvals per session, and a default approvalTimeoutMs for calls over MCP', T, async () => {
    assert.equal(APPROVAL_DEFAULTS.approvalTimeoutMs, 300_000)
    const { serving, manager } = await serve({ maxPendingApprovals: 2, approvalTimeoutMs: 150 })
    const client = await sdkClient(serving.url)
    const started = Date.now()
    const calls = [1, 2, 3].map((cents) => client.callTool({ name: 'pay', arguments: { cents } }))
    const [a, b, c] = await Promise.all(calls)
    assert.match(c.content[0].text, /more than 2 calls of this MCP session wait for approval \(maxPendingApprovals\)/)
    for (const r of [a, b]) {
      assert.equal(r.isError, true)
      assert.match(r.content[0].text, /nobody answered within 150 ms \(approvalTimeoutMs of calls over MCP\)/)
    }
    assert.ok(Date.now() - started < 5000)
    assert.deepEqual(manager.pendingApprovals(), [])
    await client.close()
  })

  test('an approval ends with its client: the HTTP response closed before the answer cancels the call', T, async () => {
    const { serving, manager } = await serve()
    const sessionId = await session(serving.url)
    const asked = new Promise((resolve) => manager.on('tool-execution-approval-requested', resolve))
    const ended = new Promise((resolve) => manager.on('tool-execution-cancelled', resolve))
    const req = http.request(serving.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': sessionId } })
    req.on('error', () => {})
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pay', arguments: { cents: 1 } } }))
    await asked
    assert.equal(manager.pendingApprovals().length, 1)
    req.destroy()
    await ended
    assert.deepEqual(manager.pendingApprovals(), [])
  })

  test('connections per client address, and a socket that sends nothing is closed after headersTimeoutMs', T, async () => {
    const { serving } = await serve({ maxConnectionsPerClient: 5, headersTimeoutMs: 300 })
    const sockets = []
    const closed = []
    for (let i = 0; i < 10; i++) {
      const s = net.connect(serving.port, '127.0.0.1')
      s.on('error', () => {})
      const c = new Promise((resolve) => s.on('close', resolve))
      sockets.push(s)
      closed.push(c)
    }
    await Promise.all(sockets.map((s) => new Promise((resolve) => (s.readyState === 'open' ? resolve() : s.once('connect', resolve)).call?.(s))))
    await sleep(100)
    const count = () => new Promise((resolve) => serving.httpServer.getConnections((_e, n) => resolve(n)))
    assert.ok((await count()) <= 5, `${await count()} connections held`)
    const t0 = Date.now()
    await Promise.all(closed)
    assert.ok(Date.now() - t0 < 3000, 'the idle sockets were closed')
    assert.equal(await count(), 0)
  })
})

describe('finding 11: progress listeners go with their calls, whatever the number of sessions', () => {
  test('20 sessions that asked for progress leave no listener, and no MaxListenersExceededWarning', T, async () => {
    const warnings = []
    const onWarning = (w) => warnings.push(w.name)
    process.on('warning', onWarning)
    const { serving, manager, registry } = await serve()
    const clients = []
    for (let i = 0; i < 20; i++) clients.push(await sdkClient(serving.url))
    assert.equal(registry.listenerCount('tool-registry-change'), 1, 'one registry listener for every session')
    const progress = clients.map(() => [])
    await Promise.all(clients.map((c, i) => c.callTool({ name: 'ticks', arguments: {} }, undefined, { onprogress: (p) => progress[i].push(p.progress) })))
    for (const p of progress) assert.deepEqual(p, [1, 2, 3], 'each client gets its own call\'s progress')
    assert.equal(manager.listenerCount('tool-execution-progress'), 0)
    assert.equal(manager.listenerCount('tool-execution-approval-requested'), 0)
    for (const c of clients) {
      await c.transport.terminateSession()
      await c.close()
    }
    await until(() => serving.sessions.length === 0, 'the sessions to end')
    assert.equal(registry.listenerCount('tool-registry-change'), 0)
    process.off('warning', onWarning)
    assert.ok(!warnings.includes('MaxListenersExceededWarning'), warnings.join())
  })
})

describe('finding 16: a deep argument over MCP gets the validation reply, not -32603', () => {
  test('arguments nested 100,000 levels', T, async () => {
    const { serving } = await serve()
    const sessionId = await session(serving.url)
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)
    const raw = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":${deep}}}`
    const r = await rawPost(serving.url, raw, { 'mcp-session-id': sessionId })
    assert.equal(r.body.error, undefined, JSON.stringify(r.body.error))
    assert.equal(r.body.result.isError, true)
    assert.match(r.body.result.content[0].text, /nested too deeply/)
    assert.equal(r.body.result._meta['toolhost/error'].code, 'INVALID_ARGUMENTS')
  })
})

describe('finding 8: close() drains', () => {
  test('calls in flight finish; new ones are refused meanwhile; what is left after drainMs is cancelled', T, async () => {
    const { serving, manager } = await serve({ drainMs: 2000 })
    const client = await sdkClient(serving.url)
    const late = await sdkClient(serving.url)
    const inFlight = client.callTool({ name: 'sleep', arguments: { ms: 300 } })
    await until(() => manager.inFlight === 1, 'the call to start')
    const closing = serving.close()
    await sleep(20)
    // Refused: a new connection cannot be made, and one kept alive gets a 503 or is closed.
    await assert.rejects(late.callTool({ name: 'echo', arguments: {} }), /shutting down|503|fetch failed/)
    assert.equal((await inFlight).content[0].text, 'slept 300')
    await closing
    assert.deepEqual(serving.sessions, [])

    const short = await serve({ drainMs: 100 })
    const c2 = await sdkClient(short.serving.url)
    const long = c2.callTool({ name: 'sleep', arguments: { ms: 20_000 } }).then(() => 'answered', () => 'failed')
    await until(() => short.manager.inFlight === 1, 'the long call to start')
    const t0 = Date.now()
    await short.serving.close()
    assert.ok(Date.now() - t0 < 3000, `close() took ${Date.now() - t0} ms`)
    assert.equal(short.manager.inFlight, 0)
    // The SDK client notices the lost stream only when closed (or at its own timeout).
    for (const c of [client, late, c2]) await c.close()
    assert.equal(await long, 'failed')
  })
})

describe('approval over MCP: who decides (issue 22, item 2)', () => {
  test("approval: 'deny' answers at once; 'allow' runs; 'elicit' asks the client, and denies when it cannot be asked", T, async () => {
    const deny = await serve({ approval: 'deny' })
    const c1 = await sdkClient(deny.serving.url)
    const denied = await c1.callTool({ name: 'pay', arguments: { cents: 1 } })
    assert.equal(denied.isError, true)
    assert.match(denied.content[0].text, /denied: this MCP server does not take approvals/)
    const allow = await serve({ approval: 'allow' })
    const c2 = await sdkClient(allow.serving.url)
    assert.equal((await c2.callTool({ name: 'pay', arguments: { cents: 2 } })).content[0].text, 'paid 2')

    const elicit = await serve({ approval: 'elicit' })
    const asked = []
    const yes = await sdkClient(elicit.serving.url, { capabilities: { elicitation: {} } })
    yes.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params.message)
      return { action: req.params.message.includes('"cents":3') ? 'accept' : 'decline' }
    })
    assert.equal((await yes.callTool({ name: 'pay', arguments: { cents: 3 } })).content[0].text, 'paid 3')
    assert.match(asked[0], /Allow the tool 'pay' to run with these arguments\?\n\{"cents":3\}/)
    assert.match((await yes.callTool({ name: 'pay', arguments: { cents: 4 } })).content[0].text, /denied: the MCP client answered decline/)
    const cannot = await sdkClient(elicit.serving.url)
    assert.match((await cannot.callTool({ name: 'pay', arguments: { cents: 5 } })).content[0].text, /denied: the MCP client cannot be asked \(it does not support elicitation\)/)
    await assert.rejects(serveHttp(new ToolRegistry(), null, { approval: 'ask' }), { code: 'INVALID_CONFIG', message: /approval must be one of/ })
    for (const c of [c1, c2, yes, cannot]) await c.close()
  })
})

describe('finding 13: the default approvalTimeoutMs over MCP yields to the tool\'s or manager\'s own', () => {
  test('a manager that waits longer for approval is not cut short by the MCP default', T, async () => {
    const { serving, manager } = await serve({ approvalTimeoutMs: 100 }, { approvalTimeoutMs: 60_000, retry: { maxAttempts: 1 } })
    const client = await sdkClient(serving.url)
    const asked = new Promise((resolve) => manager.on('tool-execution-approval-requested', resolve))
    const call = client.callTool({ name: 'pay', arguments: { cents: 7 } })
    const { approvalId } = await asked
    await sleep(400)
    assert.equal(manager.pendingApprovals().length, 1, 'still waiting past the MCP default')
    manager.approve(approvalId)
    assert.equal((await call).content[0].text, 'paid 7')
    await assert.rejects(serveHttp(new ToolRegistry(), null, { headersTimeoutMs: 60_000 }), { code: 'INVALID_CONFIG', message: /headersTimeoutMs \(60000\) must not be more than requestTimeoutMs \(30000\)/ })
    await client.close()
  })
})

describe('MCP tasks belong to the identity that created them (adversarial pass, tasks-leak)', () => {
  test('another identity cannot list, read, get the result of, or cancel a task; its owner can, on a new server too', { timeout: 60_000 }, async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { CreateTaskResultSchema, CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-tasks-'))
    const tokens = { 'tok-ada': { clientId: 'ada' }, 'tok-bob': { clientId: 'bob' } }
    const { registry } = tools()
    const manager = new ToolExecutionManager(registry, { journal: `sqlite:${join(dir, 'tasks.db')}`, retry: { maxAttempts: 1 } })
    const clients = []
    const servers = []
    try {
      const serving = await serveHttp(registry, manager, { auth: (t) => tokens[t], drainMs: 0 })
      servers.push(serving)
      const ada = await sdkClient(serving.url, { token: 'tok-ada' })
      const bob = await sdkClient(serving.url, { token: 'tok-bob' })
      clients.push(ada, bob)
      const ask = (client, name, args) => client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 600_000 } } }, CreateTaskResultSchema)
      const { task: done } = await ask(ada, 'whoami', {})
      const { task: slow } = await ask(ada, 'sleep', { ms: 4000 })
      // 100 more, so that ada's listing takes two pages; bob's two tasks sit among them.
      for (let i = 0; i < 99; i++) await ask(ada, 'echo', { i })
      const bobs = [(await ask(bob, 'echo', { bob: 1 })).task.taskId, (await ask(bob, 'echo', { bob: 2 })).task.taskId]
      await until(async () => (await ada.experimental.tasks.getTask(done.taskId)).status === 'completed', 'ada\'s task to complete')

      const listed = async (client) => {
        const ids = []
        let cursor
        do {
          const page = await client.experimental.tasks.listTasks(cursor)
          ids.push(...page.tasks.map((t) => t.taskId))
          cursor = page.nextCursor
        } while (cursor !== undefined)
        return ids
      }
      assert.deepEqual((await listed(bob)).sort(), bobs.sort(), 'bob lists only his own tasks')
      const adas = await listed(ada)
      assert.equal(adas.length, 101)
      assert.ok(adas.includes(done.taskId) && adas.includes(slow.taskId) && !adas.some((id) => bobs.includes(id)))
      // A cursor that is another identity's task id shows nothing of theirs.
      assert.ok((await bob.experimental.tasks.listTasks(done.taskId)).tasks.every((t) => bobs.includes(t.taskId)))

      await assert.rejects(bob.experimental.tasks.getTask(done.taskId), /Task not found/)
      await assert.rejects(bob.experimental.tasks.getTaskResult(done.taskId, CallToolResultSchema), /Task not found/)
      await assert.rejects(bob.experimental.tasks.cancelTask(slow.taskId), /Task not found/)
      assert.equal((await ada.experimental.tasks.getTask(slow.taskId)).status, 'working', 'bob\'s cancel did not touch it')
      const result = await ada.experimental.tasks.getTaskResult(done.taskId, CallToolResultSchema)
      assert.deepEqual(result.structuredContent, { clientId: 'ada' })
      assert.equal((await ada.experimental.tasks.cancelTask(slow.taskId)).status, 'cancelled')
      await serving.close()

      // The binding is kept in the journal: a new server over it knows whose task is whose.
      const again = await serveHttp(registry, manager, { auth: (t) => tokens[t], drainMs: 0 })
      servers.push(again)
      const ada2 = await sdkClient(again.url, { token: 'tok-ada' })
      const bob2 = await sdkClient(again.url, { token: 'tok-bob' })
      clients.push(ada2, bob2)
      assert.deepEqual((await ada2.experimental.tasks.getTaskResult(done.taskId, CallToolResultSchema)).structuredContent, { clientId: 'ada' })
      await assert.rejects(bob2.experimental.tasks.getTaskResult(done.taskId, CallToolResultSchema), /Task not found/)
    } finally {
      for (const c of clients) await c.close().catch(() => {})
      for (const s of servers) await s.close()
      await manager.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('tasks/cancel stops the task\'s call (left alone in stop 43)', () => {
  test('the handler sees its signal abort, the call ends cancelled, and the task stays cancelled', T, async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { CreateTaskResultSchema, CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-task-cancel-'))
    const { registry } = tools()
    const manager = new ToolExecutionManager(registry, { journal: `sqlite:${join(dir, 'tasks.db')}`, retry: { maxAttempts: 1 } })
    let serving, client
    try {
      serving = await serveHttp(registry, manager, { drainMs: 0 })
      client = await sdkClient(serving.url)
      const cancelled = new Promise((resolve) => manager.on('tool-execution-cancelled', resolve))
      const { task } = await client.request({ method: 'tools/call', params: { name: 'sleep', arguments: { ms: 20_000 }, task: { ttl: 600_000 } } }, CreateTaskResultSchema)
      await until(() => manager.inFlight === 1, 'the task\'s call to start')
      assert.equal((await client.experimental.tasks.cancelTask(task.taskId)).status, 'cancelled')
      const event = await cancelled
      assert.equal(event.toolName, 'sleep')
      await until(() => manager.inFlight === 0, 'the call to end')
      // Its outcome (a cancelled call) did not replace the task's status.
      await sleep(50)
      assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'cancelled')
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
      assert.equal(result.isError, true)
      assert.equal(result._meta?.['toolhost/error']?.code, 'CANCELLED', JSON.stringify(result))
    } finally {
      await client?.close().catch(() => {})
      await serving?.close()
      await manager.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('idempotency keys are scoped by identity with one reading (adversarial pass, idem-scope)', () => {
  test("identity 'org' with key 'ada:k' does not replay identity 'org:ada' with key 'k'", T, async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const dir = mkdtempSync(join(tmpdir(), 'toolhost-idem-'))
    const tokens = { 'tok-ada': { clientId: 'org:ada' }, 'tok-org': { clientId: 'org' } }
    const { registry } = tools()
    const manager = new ToolExecutionManager(registry, { journal: `sqlite:${join(dir, 'idem.db')}`, retry: { maxAttempts: 1 } })
    const clients = []
    let serving
    try {
      serving = await serveHttp(registry, manager, { auth: (t) => tokens[t] })
      const ada = await sdkClient(serving.url, { token: 'tok-ada' })
      const org = await sdkClient(serving.url, { token: 'tok-org' })
      clients.push(ada, org)
      const call = (client, key) => client.request({ method: 'tools/call', params: { name: 'whoami', arguments: {}, _meta: { 'toolhost/idempotencyKey': key } } }, CallToolResultSchema)
      assert.deepEqual((await call(ada, 'k')).structuredContent, { clientId: 'org:ada' })
      assert.deepEqual((await call(org, 'ada:k')).structuredContent, { clientId: 'org' }, "org's call ran as its own")
      // The same identity and key still replay.
      assert.deepEqual((await call(ada, 'k')).structuredContent, { clientId: 'org:ada' })
    } finally {
      for (const c of clients) await c.close().catch(() => {})
      await serving?.close()
      await manager.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** serveHttp over a manager with a SQLite journal; `done()` closes them and removes it. */
async function journaled(options, managerOptions = {}) {
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-approval-'))
  const { registry } = tools()
  const manager = new ToolExecutionManager(registry, { journal: `sqlite:${join(dir, 'j.db')}`, retry: { maxAttempts: 1 }, ...managerOptions })
  const serving = await serveHttp(registry, manager, { drainMs: 0, ...options })
  const clients = []
  return {
    manager,
    serving,
    async client(capabilities) {
      const c = await sdkClient(serving.url, { capabilities })
      clients.push(c)
      return c
    },
    async done() {
      for (const c of clients) await c.close().catch(() => {})
      await serving.close()
      await manager.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Process warnings and unhandled rejections while `fn` runs. */
async function quietly(fn) {
  const heard = []
  const onWarning = (w) => heard.push(`${w.name}: ${w.message}`)
  const onRejection = (err) => heard.push(`unhandled rejection: ${err?.message ?? err}`)
  process.on('warning', onWarning)
  process.on('unhandledRejection', onRejection)
  try {
    await fn()
    await sleep(100)
  } finally {
    process.off('warning', onWarning)
    process.off('unhandledRejection', onRejection)
  }
  return heard
}

describe('approval over MCP with a journaled manager (adversarial pass 3)', () => {
  test("'elicit' asks the client and 'manager' is bounded by approvalTimeoutMs, though pendingApprovals() is a journal answer", T, async () => {
    const elicit = await journaled({ approval: 'elicit' })
    const bounded = await journaled({ approvalTimeoutMs: 200 })
    try {
      const heard = await quietly(async () => {
        const asked = []
        const yes = await elicit.client({ elicitation: {} })
        yes.setRequestHandler(ElicitRequestSchema, async (req) => {
          asked.push(req.params.message)
          if (req.params.message.includes('"cents":5')) {
            // Someone else decides first: the client's late answer finds nothing to approve.
            const [{ approvalId }] = await elicit.manager.pendingApprovals()
            await elicit.manager.approve(approvalId)
            await sleep(50)
          }
          return { action: req.params.message.includes('"cents":4') ? 'decline' : 'accept' }
        })
        const call = (cents) => Promise.race([yes.callTool({ name: 'pay', arguments: { cents } }), sleep(5000).then(() => ({ content: [{ text: 'no answer within 5 s' }] }))])
        assert.equal((await call(3)).content[0].text, 'paid 3')
        assert.match(asked[0], /Allow the tool 'pay' to run with these arguments\?\n\{"cents":3\}/)
        assert.match((await call(4)).content[0].text, /denied: the MCP client answered decline/)
        assert.equal((await call(5)).content[0].text, 'paid 5')
        assert.equal(asked.length, 3)

        const other = await bounded.client()
        const started = Date.now()
        const r = await Promise.race([other.callTool({ name: 'pay', arguments: { cents: 6 } }), sleep(5000).then(() => ({ content: [{ text: 'no answer within 5 s' }] }))])
        assert.match(r.content[0].text, /nobody answered within 200 ms \(approvalTimeoutMs of calls over MCP\)/)
        assert.ok(Date.now() - started < 3000)
        assert.deepEqual(await bounded.manager.pendingApprovals(), [])
      })
      assert.deepEqual(heard, [])
    } finally {
      await elicit.done()
      await bounded.done()
    }
  })
})

describe('a tools/call run as a task follows the approval rules of a plain call (adversarial pass 3)', () => {
  test("'deny' fails the task, 'allow' runs it, 'elicit' asks the client, approvalTimeoutMs and maxPendingApprovals apply", T, async () => {
    const { CreateTaskResultSchema, CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const servers = []
    const start = async (options) => {
      const s = await journaled(options)
      servers.push(s)
      return s
    }
    /** Asks for pay({ cents }) as a task; resolves its final status and result. */
    const task = async (client, cents, extra = {}) => {
      const { task: t } = await client.request({ method: 'tools/call', params: { name: 'pay', arguments: { cents }, task: { ttl: 60_000 } } }, CreateTaskResultSchema)
      let status
      await until(async () => ['completed', 'failed', 'cancelled'].includes((status = (await client.experimental.tasks.getTask(t.taskId)).status)), `task ${cents} to end`, extra.ms ?? 5000)
      return { status, result: await client.experimental.tasks.getTaskResult(t.taskId, CallToolResultSchema), taskId: t.taskId }
    }
    try {
      const deny = await start({ approval: 'deny' })
      const denied = await task(await deny.client(), 1)
      assert.equal(denied.status, 'failed')
      assert.match(denied.result.content[0].text, /denied: this MCP server does not take approvals/)

      const allow = await start({ approval: 'allow' })
      const allowed = await task(await allow.client(), 2)
      assert.equal(allowed.status, 'completed')
      assert.equal(allowed.result.content[0].text, 'paid 2')

      const elicit = await start({ approval: 'elicit' })
      const yes = await elicit.client({ elicitation: {} })
      const asked = []
      yes.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(req.params)
        return { action: 'accept' }
      })
      const elicited = await task(yes, 3)
      assert.equal(elicited.result.content[0].text, 'paid 3')
      assert.match(asked[0].message, /Allow the tool 'pay' to run with these arguments\?\n\{"cents":3\}/)
      assert.deepEqual(asked[0]._meta['io.modelcontextprotocol/related-task'], { taskId: elicited.taskId })
      const cannot = await task(await elicit.client(), 4)
      assert.match(cannot.result.content[0].text, /denied: the MCP client cannot be asked/)

      const bounded = await start({ approvalTimeoutMs: 300, maxPendingApprovals: 1 })
      const client = await bounded.client()
      const first = task(client, 5)
      await until(async () => (await bounded.manager.pendingApprovals()).length === 1, 'the first task to wait for approval')
      const second = await task(client, 6)
      assert.match(second.result.content[0].text, /more than 1 calls of this MCP session wait for approval \(maxPendingApprovals\)/)
      const timedOut = await first
      assert.equal(timedOut.status, 'failed')
      assert.match(timedOut.result.content[0].text, /nobody answered within 300 ms \(approvalTimeoutMs of calls over MCP\)/)
      for (const s of servers) assert.deepEqual(await s.manager.pendingApprovals(), [])
    } finally {
      // close() waits for the calls in flight: a task left waiting for approval hung it.
      for (const s of servers) await s.done()
    }
  })
})

describe("an elicited approval lasts approvalTimeoutMs, not the SDK's 60 s request timeout (adversarial pass 3)", () => {
  async function elicitServer(options, onElicit) {
    const { createMcpServer } = await import('toolhost/mcp')
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const { registry } = tools()
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
    const server = createMcpServer(registry, manager, { approval: 'elicit', ...options })
    const [ct, st] = InMemoryTransport.createLinkedPair()
    await server.connect(st)
    const client = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, onElicit)
    await client.connect(ct)
    return { client, manager }
  }

  test('a person who answers after 65 s (of mocked time) is heard under the default 5 minutes', T, async (t) => {
    let asked
    const elicited = new Promise((resolve) => (asked = resolve))
    const { client } = await elicitServer({}, async () => {
      asked()
      await new Promise((resolve) => setTimeout(resolve, 65_000))
      return { action: 'accept' }
    })
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const call = client.callTool({ name: 'pay', arguments: { cents: 8 } }, undefined, { timeout: 600_000 })
    await elicited
    t.mock.timers.tick(65_000)
    const r = await call
    t.mock.timers.reset()
    assert.equal(r.content[0].text, 'paid 8')
    await client.close()
  })

  test('when approvalTimeoutMs denies first, the open elicitation is cancelled', T, async () => {
    const cancelled = []
    const { client, manager } = await elicitServer({ approvalTimeoutMs: 300 }, (req, extra) => {
      if (req.params.message.includes('"cents":1}')) return { action: 'accept' }
      return new Promise((resolve) => {
        extra.signal.addEventListener('abort', () => {
          cancelled.push(String(extra.signal.reason?.message ?? extra.signal.reason))
          resolve({ action: 'accept' })
        })
      })
    })
    // The SDK's Client ignores a cancellation of request id 0 (`if (!requestId) return`):
    // the server's first request is answered at once.
    assert.equal((await client.callTool({ name: 'pay', arguments: { cents: 1 } })).content[0].text, 'paid 1')
    const started = Date.now()
    const r = await client.callTool({ name: 'pay', arguments: { cents: 9 } })
    assert.match(r.content[0].text, /nobody answered within 300 ms \(approvalTimeoutMs of calls over MCP\)/)
    await until(() => cancelled.length === 1, 'the elicitation to be cancelled', 3000)
    assert.ok(Date.now() - started < 3000)
    assert.match(cancelled[0], /approvalTimeoutMs/)
    assert.deepEqual(manager.pendingApprovals(), [])
    await client.close()
  })
})
