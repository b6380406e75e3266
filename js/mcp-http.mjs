// `serveHttp`: tools on MCP's Streamable HTTP transport, for clients on a network.
//
// A network client is untrusted. In front of the SDK's transport, in this order:
// - the path, then the browser `Origin` (loopback origins, or `allowedOrigins`, with
//   CORS preflight and `Access-Control-Allow-Origin` so that a page can really call);
// - `auth`: a bearer token checked in constant time, or a function that verifies it and
//   says who calls; that identity reaches each handler as `ctx.authInfo` (the SDK's
//   `authInfo`), and a session answers only the identity that opened it;
// - caps, each with a default (`HTTP_DEFAULTS`): connections in all and per client
//   address, slow headers and bodies, sessions in all and per client;
// - the `Host` header, by the SDK's DNS-rebinding protection (`allowedHosts`).
// A call's execution is cancelled when its client stops waiting for the answer, and
// `close()` drains: it stops accepting, gives calls in flight `drainMs`, then cancels.
// Listening beyond loopback without `auth` must be asked for (`auth: false`).
import { checkOptions, toolhostError } from './errors.mjs'
import { ErrorCode, sdk } from './mcp-sdk.mjs'
import { CallCounter, DEFAULT_DRAIN_MS, SERVER_OPTIONS, buildServer, checkCount, checkServerOptions, managerFor, shown, toolSet } from './mcp-server.mjs'

/** Defaults of what one HTTP server takes from its clients. */
export const HTTP_DEFAULTS = {
  maxSessions: 1000,
  maxSessionsPerClient: 100,
  maxConnections: 1000,
  maxConnectionsPerClient: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  sessionIdleMs: 15 * 60_000,
}

const HTTP_OPTIONS = [
  ...SERVER_OPTIONS, 'port', 'host', 'path', 'stateless', 'maxBodyBytes', 'allowedOrigins', 'allowedHosts', 'enableJsonResponse', 'auth',
  'drainMs', ...Object.keys(HTTP_DEFAULTS),
]
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])
const isLoopback = (host) => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)

/** Headers a browser may send, and read back, across origins. */
const CORS_REQUEST_HEADERS = 'authorization, content-type, accept, last-event-id, mcp-session-id, mcp-protocol-version'
const CORS_EXPOSED_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate'

function jsonRpcErrorResponse(res, status, code, message, headers) {
  if (res.headersSent) return res.end()
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}

/** Whether a request's Origin (a browser's) may reach the server. */
function originAllowed(origin, allowed) {
  if (origin === undefined) return true
  if (allowed === '*') return true
  if (Array.isArray(allowed)) return allowed.includes(origin)
  try {
    return isLoopback(new URL(origin).hostname)
  } catch {
    return false
  }
}

/** The `Host` values the SDK's DNS-rebinding protection lets through: each name as it is
 * and with the port, or none (undefined) when no check applies. On loopback the listen
 * host itself is one (127.0.0.2 refused its own URL), as a `Host` header writes it. */
function hostsAllowed(allowedHosts, host, port) {
  const self = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  const names = allowedHosts ?? (isLoopback(host) ? [...new Set(['localhost', '127.0.0.1', '[::1]', self])] : undefined)
  if (names === undefined) return undefined
  return names.flatMap((h) => (/:\d+$/.test(h) ? [h] : [h, `${h}:${port}`]))
}

/** A short digest of a token, for an identity that names no client. */
async function tokenDigest(token) {
  const { createHash } = await import('node:crypto')
  return createHash('sha256').update(token).digest('hex').slice(0, 16)
}

/**
 * The `auth` option as `(token, req) => Promise<AuthInfo | undefined>`: a static token
 * compared in constant time (digests of equal length, so neither the content nor the
 * length leaks), or the caller's verifier with its answer read as the SDK's `AuthInfo`.
 */
async function verifierOf(auth) {
  const { createHash, timingSafeEqual } = await import('node:crypto')
  const sha = (text) => createHash('sha256').update(text).digest()
  if (typeof auth === 'string') {
    const expected = sha(auth)
    return async (token) => (timingSafeEqual(sha(token), expected) ? { token, clientId: 'token', scopes: [] } : undefined)
  }
  return async (token, req) => {
    let who
    try {
      who = await auth(token, req)
    } catch {
      return undefined
    }
    if (who === undefined || who === null || who === false) return undefined
    const info = typeof who === 'string' ? { clientId: who } : who === true ? {} : who
    if (typeof info !== 'object') return undefined
    if (typeof info.expiresAt === 'number' && info.expiresAt < Date.now() / 1000) return undefined
    return { token, scopes: [], ...info, clientId: typeof info.clientId === 'string' ? info.clientId : `token:${await tokenDigest(token)}` }
  }
}

function checkHttpOptions(o) {
  const { port = 0, host = '127.0.0.1', path = '/mcp', auth } = o
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw toolhostError('INVALID_CONFIG', 'serveHttp: port must be an integer from 0 to 65535')
  if (typeof host !== 'string' || host === '') throw toolhostError('INVALID_CONFIG', `serveHttp: host must be a host name or IP address (a string), not ${shown(host)}`)
  if (typeof path !== 'string' || !path.startsWith('/')) throw toolhostError('INVALID_CONFIG', "serveHttp: path must start with '/'")
  // A request is matched by its URL's pathname: a path that is not one (a query, a
  // fragment, a space) would answer every request 404.
  if (new URL(path, 'http://localhost').pathname !== path) {
    throw toolhostError('INVALID_CONFIG', `serveHttp: path must be a URL path alone (no query, fragment, or characters a URL escapes), not ${shown(path)}`)
  }
  // Read as truthy, 'false' and 'no' meant true.
  for (const key of ['stateless', 'enableJsonResponse']) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') throw toolhostError('INVALID_CONFIG', `serveHttp: ${key} must be true or false, not ${shown(o[key])}`)
  }
  checkCount('serveHttp', 'maxBodyBytes', o.maxBodyBytes, { min: 1, infinite: false })
  // A string was read by includes() as a substring test; [5] matched no origin.
  const origins = o.allowedOrigins
  if (origins !== undefined && origins !== '*' && !(Array.isArray(origins) && origins.every((h) => typeof h === 'string'))) {
    throw toolhostError('INVALID_CONFIG', `serveHttp: allowedOrigins must be an array of origins (such as ['https://app.example']) or '*', not ${shown(origins)}`)
  }
  if (auth !== undefined && auth !== false && typeof auth !== 'function' && !(typeof auth === 'string' && auth.length > 0)) {
    throw toolhostError('INVALID_CONFIG', 'serveHttp: auth must be a bearer token (a non-empty string), a function (token, req) => identity | undefined, or false for none')
  }
  // The header's token is read trimmed, so such a token matched no request: everyone was
  // locked out (TOOLHOST_TOKEN=' ' or a token pasted with its newline).
  if (typeof auth === 'string' && auth.trim() !== auth) {
    throw toolhostError('INVALID_CONFIG', `serveHttp: the auth token ${auth.trim() === '' ? 'is only whitespace' : 'starts or ends with whitespace'}, which no Authorization header carries: trim it`)
  }
  if (auth === undefined && !isLoopback(host)) {
    throw toolhostError(
      'INVALID_CONFIG',
      `serveHttp: listening on ${host} lets anyone who reaches it run every tool: give auth (a bearer token, or a function that verifies one), or auth: false to serve without authentication on purpose`,
    )
  }
  for (const key of [...Object.keys(HTTP_DEFAULTS), 'drainMs']) checkCount('serveHttp', key, o[key], { min: 0, infinite: true })
  const headersMs = o.headersTimeoutMs ?? HTTP_DEFAULTS.headersTimeoutMs
  const requestMs = o.requestTimeoutMs ?? HTTP_DEFAULTS.requestTimeoutMs
  if (headersMs > 0 && requestMs > 0 && headersMs > requestMs) {
    throw toolhostError('INVALID_CONFIG', `serveHttp: headersTimeoutMs (${headersMs}) must not be more than requestTimeoutMs (${requestMs}): the headers are part of the request`)
  }
  if (o.allowedHosts !== undefined && !(Array.isArray(o.allowedHosts) && o.allowedHosts.every((h) => typeof h === 'string'))) {
    throw toolhostError('INVALID_CONFIG', 'serveHttp: allowedHosts must be an array of host names (with or without a port)')
  }
}

/** A count per key that forgets keys at 0. */
class Tally {
  #counts = new Map()
  get(key) {
    return this.#counts.get(key) ?? 0
  }
  add(key, delta) {
    const n = this.get(key) + delta
    if (n <= 0) this.#counts.delete(key)
    else this.#counts.set(key, n)
  }
}

/**
 * Serves the tools on MCP's Streamable HTTP transport at `http://host:port/path`
 * (default `127.0.0.1`, a free port, `/mcp`), with a session per client (or none with
 * `stateless: true`). Resolves `{ url, port, httpServer, sessions, close() }`.
 */
export async function serveHttp(tools, manager, options) {
  const o = options ?? {}
  if (typeof o !== 'object') throw toolhostError('INVALID_CONFIG', 'serveHttp: options must be an object')
  checkOptions(o, HTTP_OPTIONS, 'serveHttp options', 'serveHttp: ')
  checkServerOptions(o, 'serveHttp')
  checkHttpOptions(o)
  const limits = { ...HTTP_DEFAULTS }
  for (const key of Object.keys(HTTP_DEFAULTS)) if (o[key] !== undefined) limits[key] = o[key]
  const { port = 0, host = '127.0.0.1', path = '/mcp', stateless = false, maxBodyBytes, allowedOrigins, enableJsonResponse = false, auth, drainMs = DEFAULT_DRAIN_MS } = o
  const serverOptions = {}
  for (const key of SERVER_OPTIONS) if (o[key] !== undefined) serverOptions[key] = o[key]
  // Checked now, so a mistake is thrown here rather than answered to each client.
  const { registry } = toolSet(tools, serverOptions.sessionId, 'serveHttp')
  manager = managerFor(registry, manager, 'serveHttp')
  const verify = auth === undefined || auth === false ? undefined : await verifierOf(auth)

  const http = await import('node:http')
  const { AsyncLocalStorage } = await import('node:async_hooks')
  const { StreamableHTTPServerTransport } = await sdk(() => import('@modelcontextprotocol/sdk/server/streamableHttp.js'))

  /** The HTTP response a request's handlers answer on. */
  const responseOf = new AsyncLocalStorage()
  const waiting = new WeakMap()
  // POST responses still open: a call's answer is written on one, so close() waits for
  // them (a call counted by its handler ends before the SDK writes its answer).
  const posts = new CallCounter()
  let closing = false
  const hooks = {
    closing: () => closing,
    // Aborts when the client stopped waiting: its response closed before it was written.
    callEnded: () => {
      const res = responseOf.getStore()
      return res === undefined ? undefined : waiting.get(res)?.signal
    },
  }

  /** session id -> { server, transport, active, lastSeen, client } */
  const sessions = new Map()
  const sessionsOf = new Tally()
  // Initializations in progress, which count against the caps: a session is registered
  // only once its initialize body was read, and 40 slow bodies all passed a check of
  // registered sessions alone.
  let starting = 0
  const startingOf = new Tally()
  let allowedHostValues

  // `owner`: the authenticated identity (undefined without auth), whose tasks alone
  // the session's server answers.
  const newSession = async (client, owner) => {
    const server = buildServer(tools, manager, serverOptions, owner === undefined ? hooks : { ...hooks, owner })
    const entry = { server, transport: null, active: 0, lastSeen: Date.now(), client, release: () => {} }
    const transport = new StreamableHTTPServerTransport({
      enableJsonResponse,
      ...(maxBodyBytes === undefined ? {} : { maxRequestBodySize: maxBodyBytes }),
      ...(allowedHostValues === undefined ? {} : { enableDnsRebindingProtection: true, allowedHosts: allowedHostValues }),
      sessionIdGenerator: stateless ? undefined : () => globalThis.crypto.randomUUID(),
      onsessioninitialized: (id) => {
        // Its reserved slot becomes the session's.
        entry.release()
        sessions.set(id, entry)
        sessionsOf.add(client, 1)
      },
    })
    entry.transport = transport
    server.onclose = () => {
      const id = transport.sessionId
      if (id !== undefined && sessions.get(id) === entry) {
        sessions.delete(id)
        sessionsOf.add(client, -1)
      }
    }
    await server.connect(transport)
    return entry
  }

  const serve = (entry, req, res) => {
    entry.active++
    entry.lastSeen = Date.now()
    const post = req.method === 'POST'
    // Made before the request is handled, so that a client gone early is not missed.
    const gone = post ? new AbortController() : undefined
    if (post) {
      posts.change(1)
      waiting.set(res, gone)
    }
    res.once('close', () => {
      entry.active--
      entry.lastSeen = Date.now()
      if (post) {
        posts.change(-1)
        if (!res.writableFinished) gone.abort()
      }
    })
    return responseOf.run(res, () => entry.transport.handleRequest(req, res))
  }

  const corsHeaders = (origin) => (origin === undefined ? {} : { 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-expose-headers': CORS_EXPOSED_HEADERS })

  const handle = async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== path) return jsonRpcErrorResponse(res, 404, -32000, `Not found: MCP is served at ${path}`)
    const origin = req.headers.origin
    if (!originAllowed(origin, allowedOrigins)) return jsonRpcErrorResponse(res, 403, -32000, `Forbidden: origin ${origin} is not allowed`)
    const cors = corsHeaders(origin)
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...cors,
        'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
        'access-control-allow-headers': CORS_REQUEST_HEADERS,
        'access-control-max-age': '600',
      })
      return res.end()
    }
    for (const [k, v] of Object.entries(cors)) res.setHeader(k, v)
    if (closing) return jsonRpcErrorResponse(res, 503, -32000, 'Service unavailable: the server is shutting down')
    let client = `address ${req.socket.remoteAddress}`
    let owner
    if (verify !== undefined) {
      const header = req.headers.authorization
      const token = typeof header === 'string' && /^bearer /i.test(header) ? header.slice(7).trim() : ''
      const info = token === '' ? undefined : await verify(token, req)
      if (info === undefined) {
        const challenge = token === '' ? 'Bearer realm="toolhost"' : 'Bearer realm="toolhost", error="invalid_token"'
        return jsonRpcErrorResponse(res, 401, -32000, 'Unauthorized: a valid bearer token is required (Authorization: Bearer <token>)', { 'www-authenticate': challenge })
      }
      req.auth = info
      client = `client ${info.clientId}`
      owner = info.clientId
    }
    if (stateless) {
      if (req.method !== 'POST') return jsonRpcErrorResponse(res, 405, -32000, 'Method not allowed: this server is stateless (POST only)')
      const entry = await newSession(client, owner)
      res.on('close', () => entry.server.close().catch(() => {}))
      return serve(entry, req, res)
    }
    const id = req.headers['mcp-session-id']
    if (typeof id === 'string') {
      const entry = sessions.get(id)
      // With auth, a session answers only the identity that opened it (without, an
      // address is no identity: behind a proxy it may change between requests).
      if (entry === undefined || (verify !== undefined && entry.client !== client)) return jsonRpcErrorResponse(res, 404, -32001, 'Session not found')
      return serve(entry, req, res)
    }
    if (req.method !== 'POST') return jsonRpcErrorResponse(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    if (sessions.size + starting >= limits.maxSessions) {
      return jsonRpcErrorResponse(res, 503, -32000, `Service unavailable: the server holds its most sessions (${limits.maxSessions}, maxSessions)`, { 'retry-after': '60' })
    }
    if (sessionsOf.get(client) + startingOf.get(client) >= limits.maxSessionsPerClient) {
      return jsonRpcErrorResponse(res, 429, -32000, `Too many sessions: this client holds ${limits.maxSessionsPerClient} (maxSessionsPerClient); end one (DELETE) or reuse it`, { 'retry-after': '60' })
    }
    // The slot is taken now, before anything awaits, and given back unless the
    // initialization registers the session.
    starting++
    startingOf.add(client, 1)
    let reserved = true
    const release = () => {
      if (!reserved) return
      reserved = false
      starting--
      startingOf.add(client, -1)
    }
    // No session yet: only an initialize request makes one; the transport answers any
    // other message with an error, and this session, never initialized, is dropped.
    let entry
    try {
      entry = await newSession(client, owner)
      entry.release = release
      await serve(entry, req, res)
    } finally {
      release()
      if (entry !== undefined && entry.transport.sessionId === undefined) await entry.server.close().catch(() => {})
    }
  }

  // Node takes 0 for none.
  const nodeMs = (ms) => (Number.isFinite(ms) ? ms : 0)
  const httpServer = http.createServer(
    {
      headersTimeout: nodeMs(limits.headersTimeoutMs),
      requestTimeout: nodeMs(limits.requestTimeoutMs),
      // How often those two are checked (Node's default, 30 s, would let a slow client
      // hold its socket that long past them).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 2 || 1000)),
    },
    (req, res) => {
      // A connection that sent a request is past its first-byte deadline.
      req.socket.setTimeout(0)
      handle(req, res).catch((err) => {
        jsonRpcErrorResponse(res, 500, ErrorCode.InternalError, `Internal error: ${err instanceof Error ? err.message : String(err)}`)
      })
    },
  )
  httpServer.on('clientError', (_err, socket) => socket.destroy())
  // Connections: at most maxConnections, maxConnectionsPerClient from one address, and a
  // connection that sends nothing is closed after headersTimeoutMs.
  const sockets = new Tally()
  let open = 0
  httpServer.on('connection', (socket) => {
    const address = socket.remoteAddress ?? ''
    if (open >= limits.maxConnections || sockets.get(address) >= limits.maxConnectionsPerClient) {
      socket.destroy()
      return
    }
    open++
    sockets.add(address, 1)
    socket.once('close', () => {
      open--
      sockets.add(address, -1)
    })
    if (limits.headersTimeoutMs > 0 && Number.isFinite(limits.headersTimeoutMs)) {
      socket.setTimeout(limits.headersTimeoutMs, () => socket.destroy())
    }
  })
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject)
    // A bracketed IPv6 address ('[::1]', as in a URL) is listened on without its brackets:
    // getaddrinfo took '[::1]' for a name and failed with ENOTFOUND.
    httpServer.listen(port, /^\[.*\]$/.test(host) ? host.slice(1, -1) : host, () => {
      httpServer.off('error', reject)
      resolve()
    })
  })
  const address = httpServer.address()
  allowedHostValues = hostsAllowed(o.allowedHosts, host, address.port)

  // Sessions whose client went away without a DELETE end after `sessionIdleMs`.
  let sweeper
  const idleMs = limits.sessionIdleMs
  if (!stateless && Number.isFinite(idleMs) && idleMs > 0) {
    sweeper = setInterval(() => {
      const now = Date.now()
      for (const entry of sessions.values()) {
        if (entry.active === 0 && now - entry.lastSeen > idleMs) entry.server.close().catch(() => {})
      }
    }, Math.min(Math.max(idleMs / 2, 10), 60_000))
    sweeper.unref?.()
  }

  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
  const url = `http://${shownHost}:${address.port}${path}`
  let closed = null
  return {
    url,
    port: address.port,
    httpServer,
    /** Ids of the open sessions. */
    get sessions() {
      return [...sessions.keys()]
    },
    /** Drains: stops accepting (new connections, sessions and calls), lets calls in
     * flight finish for up to `drainMs`, then closes every session (cancelling what is
     * left) and the server. */
    close() {
      if (closed !== null) return closed
      closing = true
      if (sweeper !== undefined) clearInterval(sweeper)
      closed = (async () => {
        const stopped = new Promise((resolve) => httpServer.close(() => resolve()))
        httpServer.closeIdleConnections?.()
        await posts.drained(drainMs)
        await Promise.allSettled([...sessions.values()].map((e) => e.server.close()))
        httpServer.closeAllConnections?.()
        await stopped
      })()
      return closed
    },
  }
}
