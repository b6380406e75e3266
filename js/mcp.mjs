// toolhost/mcp: tools over MCP (Model Context Protocol), both ways, on the official
// TypeScript SDK (@modelcontextprotocol/sdk, an optional peer dependency: the main
// entry never loads this module; `registry.mountMcp` imports it on first use).
//
// Serving: `createMcpServer` is an SDK `Server` over a registry (or a session):
// `tools/list` is `toMcpTools()` and follows registry changes (`list_changed`);
// `tools/call` runs `manager.execute`, so validation, retries, timeouts, events, audit
// and interceptors apply; `notifications/cancelled` aborts the execution; failures are
// `isError` results written for the model (the engine's text, as `executeToolCalls`
// replies). `serveStdio` and `serveHttp` (Streamable HTTP, a session per client) put
// it on a transport.
//
// Mounting: `mountMcp(registry, source, options)` registers a remote server's tools
// as local tools whose handlers send `tools/call`: the local manager validates first,
// then applies its retries, timeouts, cancellation (sent on as
// `notifications/cancelled`), circuit breaker, events and audit as for any tool.
//
// Only Node-only parts (node:http, stdio, child processes) are imported on use, so the
// rest (createMcpServer, and mounting an SDK Client, a Transport or a URL) also runs in
// browsers.
//
// The SDK is an optional peer dependency, loaded here as namespaces (not named imports):
// a bundler building an app without it (Vite, for `registry.mountMcp`'s lazy import)
// then leaves the loads to fail at run time instead of failing the build.
import { checkOptions, permanentError, toolhostError, transientError } from './errors.mjs'
import { modelErrorFor, modelOutputOf } from './tool-calls.mjs'

const [clientModule, serverModule, types] = await Promise.all([
  import('@modelcontextprotocol/sdk/client/index.js'),
  import('@modelcontextprotocol/sdk/server/index.js'),
  import('@modelcontextprotocol/sdk/types.js'),
])
const { Client } = clientModule
const { Server } = serverModule
const {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  RequestSchema,
  ToolListChangedNotificationSchema,
} = types
import { ToolExecutionManager } from './manager.mjs'
import { modelErrorText } from './model-errors.mjs'
import { ToolRegistry, ToolSession, registerMounted, stateOf, unregisterMounted } from './registry.mjs'

/** `_meta` keys toolhost's server sets on results, and its mounts read back. */
export const META = {
  /** On a result whose text is JSON of a non-object value (a number, an array, null). */
  json: 'toolhost/json',
  /** On a result with no `structuredContent` whose text is not the value itself (the
   * tool's `toModelOutput`, or a cut to `maxOutputChars`): the value, for a mount. */
  value: 'toolhost/value',
  /** On an `isError` result: the execution's error `{ category, code, message, retryable, validationErrors? }`. */
  error: 'toolhost/error',
  /** On a listed tool: metadata MCP has no field for (`category`, `tags`). */
  metadata: 'toolhost/metadata',
  /** On a listed tool: the key order of a schema's root, when the SDK's parsing would
   * change it (it puts `type`, `properties`, `required` first). Validation text shows
   * the schema, so a mount restores the order. */
  keyOrder: 'toolhost/keyOrder',
}

const ZOD_FIRST = ['type', 'properties', 'required']

/** The root keys of `schema` if the SDK would reorder them, else undefined. */
function keyOrderOf(schema) {
  if (schema === null || typeof schema !== 'object') return undefined
  const keys = Object.keys(schema)
  const first = ZOD_FIRST.filter((k) => keys.includes(k))
  const reordered = [...first, ...keys.filter((k) => !ZOD_FIRST.includes(k))]
  return reordered.every((k, i) => k === keys[i]) ? undefined : keys
}

/** `schema` with its root keys in `order` (keys it has that `order` lacks go last). */
function inOrder(schema, order) {
  if (!Array.isArray(order) || schema === null || typeof schema !== 'object') return schema
  const out = {}
  for (const k of order) if (typeof k === 'string' && Object.hasOwn(schema, k)) out[k] = schema[k]
  for (const k of Object.keys(schema)) if (!Object.hasOwn(out, k)) out[k] = schema[k]
  return out
}

// tools/call read loosely first, so that the SDK's Server checks the params itself and
// answers a malformed call (arguments that are not an object, no name) with -32602
// Invalid params; read with CallToolRequestSchema, the SDK would answer -32603.
const LooseCallToolRequestSchema = RequestSchema.extend({ method: CallToolRequestSchema.shape.method })

const CHANGE = 'tool-registry-change'
const PROGRESS = 'tool-execution-progress'
const LIST_CHANGED = 'notifications/tools/list_changed'
/** The longest delay setTimeout takes (longer ones fire at once). */
const LONGEST_TIMER = 2 ** 31 - 1

let nextServerId = 1

function rpcError(code, message) {
  const e = new Error(message)
  e.code = code
  return e
}

/** The tool set (registry or session) and session id `createMcpServer` serves. */
function toolSet(toolsOrRegistry, sessionId, method) {
  if (toolsOrRegistry instanceof ToolSession) {
    if (sessionId !== undefined && sessionId !== toolsOrRegistry.id) {
      throw toolhostError('INVALID_CONFIG', `${method}: sessionId '${sessionId}' is not the id of the session given`)
    }
    if (!toolsOrRegistry.alive) throw toolhostError('SESSION_NOT_FOUND', `${method}: session '${toolsOrRegistry.id}' was destroyed`)
    return { registry: toolsOrRegistry.registry, target: toolsOrRegistry, sessionId: toolsOrRegistry.id }
  }
  stateOf(toolsOrRegistry, method)
  if (sessionId === undefined || sessionId === null) return { registry: toolsOrRegistry, target: toolsOrRegistry, sessionId: undefined }
  if (typeof sessionId !== 'string') throw toolhostError('INVALID_CONFIG', `${method}: sessionId must be a string`)
  const session = toolsOrRegistry.getSession(sessionId)
  if (session === undefined) throw toolhostError('SESSION_NOT_FOUND', `${method}: session '${sessionId}' does not exist or was destroyed`)
  return { registry: toolsOrRegistry, target: session, sessionId }
}

function managerFor(registry, manager, method) {
  if (manager === undefined || manager === null) return new ToolExecutionManager(registry)
  if (!(manager instanceof ToolExecutionManager)) {
    throw toolhostError('INVALID_ARGUMENTS', `${method} takes a ToolExecutionManager as its second argument (or null for a default one)`)
  }
  if (manager.registry !== registry) throw toolhostError('INVALID_ARGUMENTS', `${method}: the manager runs another registry's tools`)
  return manager
}

const SERVER_OPTIONS = ['sessionId', 'name', 'version', 'instructions']

/**
 * A tool as MCP clients accept it: the SDK's client refuses a whole `tools/list` when a
 * tool's `outputSchema` lacks `type: 'object'` at its root, or when a property's schema
 * is `true`/`false` (the engine already makes every `inputSchema` an object's).
 */
function mcpSafe(tool, metadata) {
  const { inputSchema, outputSchema } = tool
  const out = { ...tool }
  if (hasBooleanProperty(inputSchema)) out.inputSchema = objectRooted(inputSchema)
  if (outputSchema !== undefined) {
    // An output that is not an object cannot be `structuredContent`: not declared.
    if (outputSchema.type !== 'object') delete out.outputSchema
    else if (hasBooleanProperty(outputSchema)) out.outputSchema = objectRooted(outputSchema)
  }
  const meta = {}
  if (metadata !== undefined && (metadata.category !== undefined || metadata.tags !== undefined)) {
    const kept = {}
    if (metadata.category !== undefined) kept.category = metadata.category
    if (metadata.tags !== undefined) kept.tags = metadata.tags
    meta[META.metadata] = kept
  }
  const order = {}
  const inputOrder = keyOrderOf(out.inputSchema)
  if (inputOrder !== undefined) order.inputSchema = inputOrder
  const outputOrder = keyOrderOf(out.outputSchema)
  if (outputOrder !== undefined) order.outputSchema = outputOrder
  if (Object.keys(order).length > 0) meta[META.keyOrder] = order
  if (Object.keys(meta).length > 0) out._meta = meta
  return out
}

function hasBooleanProperty(schema) {
  const p = schema.properties
  return p !== null && typeof p === 'object' && Object.values(p).some((s) => typeof s === 'boolean')
}

function objectRooted(schema) {
  const out = { ...schema, type: 'object' }
  if (hasBooleanProperty(schema)) {
    out.properties = {}
    for (const [k, s] of Object.entries(schema.properties)) out.properties[k] = s === true ? {} : s === false ? { not: {} } : s
  }
  return out
}

/** A successful execution's result as an MCP `CallToolResult`: an object is
 * `structuredContent` (and its JSON as text, for clients that read only text), a string
 * is text, other JSON is its text marked as JSON, `undefined` is no content. */
export function toCallToolResult(value) {
  if (value === undefined) return { content: [] }
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] }
  let text
  try {
    text = JSON.stringify(value)
  } catch (e) {
    return { content: [{ type: 'text', text: `(result not JSON: ${e instanceof Error ? e.message : String(e)})` }] }
  }
  if (text === undefined) return { content: [] }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const proto = Object.getPrototypeOf(value)
    // A plain object goes as it is (the transport writes the same JSON); another kind
    // (a class with toJSON, a Map) as what its JSON reads back as.
    const json = proto === Object.prototype || proto === null ? value : JSON.parse(text)
    if (json !== null && typeof json === 'object' && !Array.isArray(json)) return { content: [{ type: 'text', text }], structuredContent: json }
  }
  return { content: [{ type: 'text', text }], _meta: { [META.json]: true } }
}

/**
 * What a mounted tool returns for a remote `CallToolResult`: `structuredContent` when
 * there is some; the value a toolhost server put in `_meta` (its text was shaped for a
 * model); the value of a toolhost server's JSON text; the text of a single text
 * item; `undefined` for no content; otherwise `{ content }` as sent (images, several items).
 */
export function fromCallToolResult(result) {
  if (result.structuredContent !== undefined) return result.structuredContent
  if (result._meta !== undefined && Object.hasOwn(result._meta, META.value)) return result._meta[META.value]
  const content = result.content ?? []
  if (content.length === 0) return undefined
  if (content.length === 1 && content[0].type === 'text') {
    if (result._meta?.[META.json] === true) {
      try {
        return JSON.parse(content[0].text)
      } catch {}
    }
    return content[0].text
  }
  return { content }
}

/** The SDK `Server` createMcpServer returns: it follows the registry while connected. */
class ToolhostMcpServer extends Server {
  #attach
  #detach = () => {}

  constructor(info, options, attach) {
    super(info, options)
    this.#attach = attach
  }

  async connect(transport) {
    await super.connect(transport)
    this.#detach()
    this.#detach = this.#attach(this)
    // Protocol.connect chained its own handler onto the transport's onclose: this one
    // runs after it, so a closed connection stops following the registry.
    const closed = transport.onclose
    transport.onclose = () => {
      try {
        closed?.()
      } finally {
        this.#detach()
        this.#detach = () => {}
      }
    }
  }
}

/**
 * An MCP server (an SDK `Server`, not yet connected) over the tools `tools` shows (a
 * ToolRegistry, or a ToolSession or `{ sessionId }` for a session's), run by `manager`
 * (a default one when null). Connect it with `await server.connect(transport)`.
 */
export function createMcpServer(tools, manager, options) {
  const o = options ?? {}
  if (typeof o !== 'object') throw toolhostError('INVALID_CONFIG', 'createMcpServer: options must be an object')
  checkOptions(o, SERVER_OPTIONS, 'createMcpServer options', 'createMcpServer: ')
  const { registry, target, sessionId } = toolSet(tools, o.sessionId, 'createMcpServer')
  manager = managerFor(registry, manager, 'createMcpServer')
  const serverId = nextServerId++
  const info = { name: typeof o.name === 'string' ? o.name : 'toolhost', version: typeof o.version === 'string' ? o.version : '0.1.0' }
  const serverOptions = {
    capabilities: { tools: { listChanged: true } },
    // A burst of registrations is one notification.
    debouncedNotificationMethods: [LIST_CHANGED],
  }
  if (typeof o.instructions === 'string') serverOptions.instructions = o.instructions

  /** The listed tools, until the registry changes. */
  let listed = null
  /** toolCallId -> { token, send } of calls whose client asked for progress. */
  const progressSinks = new Map()
  let offProgress = null
  const onProgress = (d) => {
    const record = manager.getExecution(d.executionId)
    const sink = record === undefined ? undefined : progressSinks.get(record.toolCallId)
    if (sink === undefined) return
    const params = { progressToken: sink.token, progress: d.progress }
    if (typeof d.total === 'number') params.total = d.total
    if (typeof d.message === 'string') params.message = d.message
    sink.send({ method: 'notifications/progress', params }).catch(() => {})
  }

  const attach = (server) => {
    const off = registry.on(CHANGE, (d) => {
      if (d.sessionId !== undefined && d.sessionId !== sessionId) return
      listed = null
      if (d.action === 'session-destroyed') {
        server.close().catch(() => {})
        return
      }
      if (server.transport !== undefined) server.sendToolListChanged().catch(() => {})
    })
    return () => {
      off()
      listed = null
      if (offProgress !== null) {
        offProgress()
        offProgress = null
      }
    }
  }

  const server = new ToolhostMcpServer(info, serverOptions, attach)

  server.setRequestHandler(ListToolsRequestSchema, () => {
    if (listed === null) {
      const all = target.toMcpTools()
      const decls = new Map((sessionId === undefined ? registry.all : target.declarations()).map((d) => [d.name, d.metadata]))
      listed = all.map((t) => mcpSafe(t, decls.get(t.name)))
    }
    return { tools: listed }
  })

  server.setRequestHandler(LooseCallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params
    if (sessionId !== undefined && !target.alive) throw rpcError(ErrorCode.InvalidRequest, `session '${sessionId}' was destroyed`)
    if (!target.has(name)) {
      const text = modelErrorText(target, name, '', { category: 'not_found', code: 'TOOL_NOT_FOUND', message: '', retryable: false })
      throw rpcError(ErrorCode.InvalidParams, text)
    }
    const toolCallId = `mcp-${extra.sessionId ?? serverId}-${extra.requestId}`
    const token = request.params._meta?.progressToken
    if (token !== undefined) {
      progressSinks.set(toolCallId, { token, send: extra.sendNotification })
      // Listened to from the first call that asks for progress (a manager builds
      // progress events only while someone listens).
      if (offProgress === null) offProgress = manager.on(PROGRESS, onProgress)
    }
    try {
      const outcome = await manager.execute(name, args ?? {}, { sessionId, signal: extra.signal, toolCallId })
      if (outcome.success) {
        const result = toCallToolResult(outcome.result)
        if (outcome.result === undefined) return result
        // The text a model reads: the tool's toModelOutput, within maxOutputChars. When
        // that is not the value's own text, a mount reads the value from _meta.
        const content = modelOutputOf(manager, outcome)
        const same = content.length === 1 && content[0].type === 'text' && content[0].text === result.content[0]?.text
        if (!same && result.structuredContent === undefined) {
          const { [META.json]: _, ...meta } = result._meta ?? {}
          result._meta = { ...meta, [META.value]: outcome.result }
        }
        result.content = content
        return result
      }
      const { category, code, message, retryable, validationErrors } = outcome.error
      const error = { category, code, message, retryable }
      if (validationErrors !== undefined) error.validationErrors = validationErrors
      const text = modelErrorFor(manager, name, JSON.stringify(args ?? {}), outcome, sessionId ?? null)
      return { isError: true, content: [{ type: 'text', text }], _meta: { [META.error]: error } }
    } finally {
      // The listener stays while the connection does: attaching it for each call would
      // cost more than it saves.
      if (token !== undefined) progressSinks.delete(toolCallId)
    }
  })
  return server
}

const STDIO_OPTIONS = [...SERVER_OPTIONS, 'stdin', 'stdout', 'maxMessageBytes']

/**
 * Serves the tools over stdio (this process's stdin and stdout, or `{ stdin, stdout }`).
 * Resolves `{ server, closed, close() }`; the server closes, cancelling the executions
 * in flight, when stdin ends.
 */
export async function serveStdio(tools, manager, options) {
  const o = options ?? {}
  checkOptions(o, STDIO_OPTIONS, 'serveStdio options', 'serveStdio: ')
  const { stdin, stdout, maxMessageBytes, ...serverOptions } = o
  const server = createMcpServer(tools, manager, serverOptions)
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js')
  const input = stdin ?? globalThis.process.stdin
  const transport = new StdioServerTransport(input, stdout ?? globalThis.process.stdout, maxMessageBytes === undefined ? undefined : { maxBufferSize: maxMessageBytes })
  let resolveClosed
  const closed = new Promise((resolve) => (resolveClosed = resolve))
  server.onclose = () => resolveClosed()
  const ended = () => server.close().catch(() => {})
  input.once('end', ended)
  await server.connect(transport)
  return {
    server,
    closed,
    close: async () => {
      input.off('end', ended)
      await server.close()
    },
  }
}

const HTTP_OPTIONS = [
  ...SERVER_OPTIONS, 'port', 'host', 'path', 'stateless', 'maxBodyBytes', 'sessionIdleMs', 'allowedOrigins', 'enableJsonResponse',
]
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

function jsonRpcErrorResponse(res, status, code, message) {
  if (res.headersSent) return res.end()
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}

/** Whether a request's Origin (a browser's) may reach the server. */
function originAllowed(origin, allowed) {
  if (origin === undefined) return true
  if (allowed === '*') return true
  if (Array.isArray(allowed)) return allowed.includes(origin)
  try {
    return LOOPBACK.has(new URL(origin).hostname)
  } catch {
    return false
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
  const { port = 0, host = '127.0.0.1', path = '/mcp', stateless = false, maxBodyBytes, sessionIdleMs = 15 * 60_000, allowedOrigins, enableJsonResponse = false } = o
  const serverOptions = {}
  for (const key of SERVER_OPTIONS) if (o[key] !== undefined) serverOptions[key] = o[key]
  // Checked now, so a mistake is thrown here rather than answered to each client.
  const { registry } = toolSet(tools, serverOptions.sessionId, 'serveHttp')
  manager = managerFor(registry, manager, 'serveHttp')
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw toolhostError('INVALID_CONFIG', 'serveHttp: port must be an integer from 0 to 65535')
  if (typeof path !== 'string' || !path.startsWith('/')) throw toolhostError('INVALID_CONFIG', "serveHttp: path must start with '/'")

  const http = await import('node:http')
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js')
  const transportOptions = { enableJsonResponse }
  if (maxBodyBytes !== undefined) transportOptions.maxRequestBodySize = maxBodyBytes

  /** session id -> { server, transport, active, lastSeen } */
  const sessions = new Map()
  let closing = false

  const newSession = async () => {
    const server = createMcpServer(tools, manager, serverOptions)
    const entry = { server, transport: null, active: 0, lastSeen: Date.now() }
    const transport = new StreamableHTTPServerTransport({
      ...transportOptions,
      sessionIdGenerator: stateless ? undefined : () => globalThis.crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, entry)
      },
    })
    entry.transport = transport
    server.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    await server.connect(transport)
    return entry
  }

  const handle = async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== path) return jsonRpcErrorResponse(res, 404, -32000, `Not found: MCP is served at ${path}`)
    if (!originAllowed(req.headers.origin, allowedOrigins)) return jsonRpcErrorResponse(res, 403, -32000, `Forbidden: origin ${req.headers.origin} is not allowed`)
    if (closing) return jsonRpcErrorResponse(res, 503, -32000, 'Service unavailable: the server is shutting down')
    if (stateless) {
      if (req.method !== 'POST') return jsonRpcErrorResponse(res, 405, -32000, 'Method not allowed: this server is stateless (POST only)')
      const entry = await newSession()
      res.on('close', () => entry.server.close().catch(() => {}))
      return entry.transport.handleRequest(req, res)
    }
    const id = req.headers['mcp-session-id']
    if (typeof id === 'string') {
      const entry = sessions.get(id)
      if (entry === undefined) return jsonRpcErrorResponse(res, 404, -32001, 'Session not found')
      entry.active++
      entry.lastSeen = Date.now()
      res.on('close', () => {
        entry.active--
        entry.lastSeen = Date.now()
      })
      return entry.transport.handleRequest(req, res)
    }
    if (req.method !== 'POST') return jsonRpcErrorResponse(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    // No session yet: only an initialize request makes one; the transport answers any
    // other message with an error, and this session, never initialized, is dropped.
    const entry = await newSession()
    entry.active++
    res.on('close', () => {
      entry.active--
      entry.lastSeen = Date.now()
    })
    await entry.transport.handleRequest(req, res)
    if (entry.transport.sessionId === undefined) await entry.server.close().catch(() => {})
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      jsonRpcErrorResponse(res, 500, ErrorCode.InternalError, `Internal error: ${err instanceof Error ? err.message : String(err)}`)
    })
  })
  httpServer.on('clientError', (_err, socket) => socket.destroy())
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject)
    httpServer.listen(port, host, () => {
      httpServer.off('error', reject)
      resolve()
    })
  })

  // Sessions whose client went away without a DELETE end after `sessionIdleMs`.
  let sweeper
  if (!stateless && Number.isFinite(sessionIdleMs) && sessionIdleMs > 0) {
    sweeper = setInterval(() => {
      const now = Date.now()
      for (const entry of sessions.values()) {
        if (entry.active === 0 && now - entry.lastSeen > sessionIdleMs) entry.server.close().catch(() => {})
      }
    }, Math.min(Math.max(sessionIdleMs / 2, 10), 60_000))
    sweeper.unref?.()
  }

  const address = httpServer.address()
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
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
    /** Stops accepting requests, closes every session (cancelling their executions) and the server. */
    close() {
      if (closed !== null) return closed
      closing = true
      if (sweeper !== undefined) clearInterval(sweeper)
      closed = (async () => {
        const stopped = new Promise((resolve) => httpServer.close(() => resolve()))
        await Promise.allSettled([...sessions.values()].map((e) => e.server.close()))
        httpServer.closeAllConnections?.()
        await stopped
      })()
      return closed
    },
  }
}

// ---- Mounting ----

const MOUNT_OPTIONS = ['prefix', 'sessionId', 'include', 'exclude', 'requestTimeoutMs', 'connectTimeoutMs', 'clientInfo', 'onError', 'progress', 'shadow']
const NAME = /^[A-Za-z0-9_-]{1,64}$/

const isClient = (s) => s !== null && typeof s === 'object' && typeof s.request === 'function' && typeof s.connect === 'function' && typeof s.setNotificationHandler === 'function'
const isTransport = (s) => s !== null && typeof s === 'object' && typeof s.start === 'function' && typeof s.send === 'function' && typeof s.close === 'function'

function warn(message) {
  try {
    if (typeof globalThis.process?.emitWarning === 'function') globalThis.process.emitWarning(message, 'ToolhostMcpWarning')
    else console.warn(message)
  } catch {}
}

function filterOf(value, what) {
  if (value === undefined || value === null) return null
  if (typeof value === 'function') return value
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    const names = new Set(value)
    return (tool) => names.has(tool.name)
  }
  if (value instanceof RegExp) return (tool) => value.test(tool.name)
  throw toolhostError('INVALID_CONFIG', `mountMcp: ${what} must be an array of tool names, a RegExp or a function (tool) => boolean`)
}

/** A message for what went wrong, never blank. */
const messageOf = (err) => (err instanceof Error ? err.message || err.name : String(err)) || 'unknown error'

/**
 * The connection to one MCP server: opened again after it broke when toolhost made it
 * (a URL or a command), used as it is when given (a Client or a Transport).
 */
class Connection {
  constructor(source, options) {
    this.source = source
    this.clientInfo = options.clientInfo ?? { name: 'toolhost', version: '0.1.0' }
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000
    /** Called with the new client after each (re)connection. */
    this.onConnected = () => {}
    this.onListChanged = () => {}
    this.client = null
    this.broken = false
    this.closed = false
    this.opening = null
    /** Calls waiting for an answer on the current client. */
    this.pending = 0
    this.owned = !isClient(source)
    this.reopenable = this.owned && !isTransport(source)
    this.label = isClient(source) ? 'client' : isTransport(source) ? 'transport' : typeof source.url === 'string' || source.url instanceof URL ? String(source.url) : String(source.command)
  }

  async #transport() {
    const s = this.source
    if (isTransport(s)) return s
    if (s.url !== undefined) {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
      const requestInit = s.headers !== undefined ? { headers: s.headers } : undefined
      return new StreamableHTTPClientTransport(new URL(s.url), { requestInit, fetch: s.fetch })
    }
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
    return new StdioClientTransport({ command: s.command, args: s.args, env: s.env, cwd: s.cwd, stderr: s.stderr ?? 'inherit' })
  }

  /** Hooks onto a client: breaks on close, and on a stream lost while calls wait. */
  #watch(client) {
    const onclose = client.onclose
    client.onclose = () => {
      if (this.client === client) this.broken = true
      onclose?.call(client)
    }
    const onerror = client.onerror
    client.onerror = (err) => {
      const text = messageOf(err)
      // A POST stream that breaks loses its call's answer for good (the SDK only resumes
      // streams that carry event ids); a GET stream the SDK could not reopen loses
      // list_changed. Either way the connection is replaced.
      const lost = /SSE stream disconnected/.test(text) ? this.pending > 0 : /Maximum reconnection attempts|Failed to reconnect/.test(text)
      if (lost && this.client === client) this.#break(client)
      onerror?.call(client, err)
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onListChanged())
  }

  #break(client) {
    this.broken = true
    if (this.reopenable) client.close().catch(() => {})
  }

  async #open() {
    if (this.client !== null) {
      const old = this.client
      this.client = null
      await old.close().catch(() => {})
    }
    const client = new Client(this.clientInfo, { capabilities: {} })
    const transport = await this.#transport()
    try {
      await client.connect(transport, { timeout: this.connectTimeoutMs })
    } catch (err) {
      await client.close().catch(() => {})
      throw err
    }
    if (this.closed) {
      await client.close().catch(() => {})
      throw permanentError('the MCP mount was unmounted', { code: 'MCP_UNMOUNTED' })
    }
    this.#watch(client)
    this.client = client
    this.broken = false
    return client
  }

  /** Connects the first time (a given Client is used as it is). */
  async start() {
    if (!this.owned) {
      const client = this.source
      if (client.transport === undefined) {
        throw toolhostError('INVALID_ARGUMENTS', 'mountMcp: the Client is not connected; call `await client.connect(transport)` first, or pass { url } or { command, args }')
      }
      this.#watch(client)
      this.client = client
      return client
    }
    return this.#open()
  }

  /** The client to send on, reconnecting first when the last one broke. */
  ready() {
    if (this.closed) return Promise.reject(permanentError('the MCP mount was unmounted', { code: 'MCP_UNMOUNTED' }))
    if (this.client !== null && !this.broken) return Promise.resolve(this.client)
    if (!this.reopenable) {
      return Promise.reject(permanentError(`the connection to MCP server ${this.label} is closed, and a given ${this.label} cannot be reopened`, { code: 'MCP_CONNECTION_CLOSED' }))
    }
    if (this.opening === null) {
      this.opening = this.#open().then(
        (client) => {
          this.opening = null
          this.onConnected(client)
          return client
        },
        (err) => {
          this.opening = null
          throw transientError(`MCP server ${this.label} is unreachable: ${messageOf(err)}`, { code: 'MCP_TRANSPORT_ERROR', cause: err })
        },
      )
    }
    return this.opening
  }

  /** A thrown value for an error of `client.request`, classified for the manager. */
  classify(err, client) {
    if (err !== null && typeof err === 'object' && err.name === 'McpError' && typeof err.code === 'number') {
      if (err.code === ErrorCode.ConnectionClosed) {
        if (this.client === client) this.broken = true
        return transientError(`the connection to MCP server ${this.label} closed during the call`, { code: 'MCP_CONNECTION_CLOSED', cause: err })
      }
      if (err.code === ErrorCode.RequestTimeout) {
        const e = new Error(`MCP server ${this.label} did not answer in time`, { cause: err })
        e.name = 'TimeoutError'
        e.code = 'MCP_REQUEST_TIMEOUT'
        return e
      }
      return permanentError(`MCP server ${this.label} answered with an error: ${err.message}`, { code: 'MCP_PROTOCOL_ERROR', cause: err })
    }
    const status = httpStatus(err)
    if (status !== undefined) {
      if (status === 404 && this.client === client) this.broken = true
      if (status >= 400 && status < 500 && status !== 404 && status !== 408 && status !== 429) {
        return permanentError(`MCP server ${this.label} refused the request (HTTP ${status}): ${messageOf(err)}`, { code: 'MCP_HTTP_ERROR', cause: err })
      }
    } else if (this.client === client && this.reopenable) this.#break(client)
    return transientError(`MCP server ${this.label} is unreachable: ${messageOf(err)}`, { code: 'MCP_TRANSPORT_ERROR', cause: err })
  }

  async close() {
    this.closed = true
    const client = this.client
    this.client = null
    if (client === null) return
    const transport = client.transport
    // A session the server keeps is ended (Streamable HTTP `DELETE`), best effort.
    if (this.owned && typeof transport?.terminateSession === 'function' && transport.sessionId !== undefined) {
      await Promise.race([transport.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref?.())])
    }
    await client.close().catch(() => {})
  }
}

/** The HTTP status of a Streamable HTTP transport error, or undefined. */
function httpStatus(err) {
  if (err === null || typeof err !== 'object' || typeof err.code !== 'number') return undefined
  return typeof err.message === 'string' && err.message.startsWith('Streamable HTTP error') && err.code >= 100 ? err.code : undefined
}

/** A local name for a remote tool: the prefix, then the name with characters toolhost
 * does not allow in a name replaced by `_`. */
function localName(prefix, remote) {
  return prefix + remote.replace(/[^A-Za-z0-9_-]/g, '_')
}

/** The registration toolhost makes of a remote tool (the handler apart). */
function definitionOf(tool, name, serverName) {
  const metadata = {}
  const a = tool.annotations ?? {}
  const title = tool.title ?? a.title
  if (typeof title === 'string') metadata.title = title
  const hints = [['readOnlyHint', 'readOnly'], ['destructiveHint', 'destructive'], ['idempotentHint', 'idempotent'], ['openWorldHint', 'openWorld']]
  for (const [hint, key] of hints) if (typeof a[hint] === 'boolean') metadata[key] = a[hint]
  const kept = tool._meta?.[META.metadata]
  if (kept !== null && typeof kept === 'object') {
    if (typeof kept.category === 'string') metadata.category = kept.category
    if (Array.isArray(kept.tags)) metadata.tags = kept.tags.filter((t) => typeof t === 'string')
  }
  // Where the tool lives, under `custom` (the engine keeps unknown metadata there).
  metadata.custom = { mcp: { server: serverName, tool: tool.name } }
  const description = typeof tool.description === 'string' && tool.description.trim() !== '' ? tool.description : typeof title === 'string' ? title : `The tool ${tool.name} of MCP server ${serverName}`
  const order = tool._meta?.[META.keyOrder]
  const def = { name, description, inputSchema: inOrder(tool.inputSchema, order?.inputSchema), metadata }
  if (tool.outputSchema !== undefined) def.outputSchema = inOrder(tool.outputSchema, order?.outputSchema)
  return def
}

/** The error a mounted tool throws for a remote `isError` result: category `execution`. */
function remoteToolError(result, remoteName) {
  const facts = result._meta?.[META.error]
  const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n')
  let message = text || 'the remote tool failed without a message'
  let code = 'MCP_TOOL_ERROR'
  if (facts !== null && typeof facts === 'object' && typeof facts.message === 'string') {
    // A toolhost server's message names its tool ("tool 'x' failed: ..."): the local
    // engine names the local one.
    const failed = `tool '${remoteName}' failed: `
    const named = `tool '${remoteName}' `
    message = facts.message.startsWith(failed) ? facts.message.slice(failed.length) : facts.message.startsWith(named) ? facts.message.slice(named.length) : facts.message
    if (typeof facts.code === 'string') code = facts.code
  }
  const e = new Error(message)
  e.name = 'McpToolError'
  e.code = code
  e.category = 'execution'
  e.retryable = false
  /** The remote result as it came. */
  e.result = result
  if (facts !== null && typeof facts === 'object') e.remoteError = facts
  return e
}

/** What `mountMcp` resolves to. */
export class McpMount {
  #registry
  #target
  #sessionId
  #conn
  #prefix
  #include
  #exclude
  #requestTimeout
  #onError
  #progress
  /** Local names the caller allowed, one by one, to shadow a global tool in the session. */
  #shadow
  /** local name -> { remote, json, toolId } */
  #mounted = new Map()
  #skipped = []
  #refreshing = null
  #again = false
  #offSession = () => {}
  #unmounted = false

  constructor(key, registry, target, sessionId, conn, options) {
    if (key !== MOUNT_KEY) throw toolhostError('INVALID_ARGUMENTS', 'mounts are made with registry.mountMcp()')
    this.#registry = registry
    this.#target = target
    this.#sessionId = sessionId
    this.#conn = conn
    this.#prefix = options.prefix ?? ''
    this.#include = filterOf(options.include, 'include')
    this.#exclude = filterOf(options.exclude, 'exclude')
    this.#requestTimeout = Math.min(options.requestTimeoutMs ?? LONGEST_TIMER, LONGEST_TIMER)
    this.#progress = options.progress !== false
    this.#shadow = new Set(options.shadow ?? [])
    this.#onError = typeof options.onError === 'function' ? options.onError : (err) => warn(`toolhost: refreshing the tools of MCP server ${conn.label} failed: ${messageOf(err)}`)
    conn.onListChanged = () => this.#background()
    // A reconnection may reach a server that changed (a restart with other tools).
    conn.onConnected = () => this.#background()
    if (sessionId !== undefined) {
      this.#offSession = registry.on(CHANGE, (d) => {
        if (d.action === 'session-destroyed' && d.sessionId === sessionId) {
          // The session's tools went with it.
          this.#mounted.clear()
          this.unmount().catch(() => {})
        }
      })
    }
  }

  /** Local names of the mounted tools, in the server's order. */
  get tools() {
    return [...this.#mounted.keys()]
  }

  /** Remote tools that could not be mounted, each `{ name, reason }`. */
  get skipped() {
    return this.#skipped.slice()
  }

  /** The SDK Client in use (another after a reconnection), or null once unmounted. */
  get client() {
    return this.#conn.client
  }

  /** The server's `{ name, version }` from its initialize answer. */
  get serverInfo() {
    return this.#conn.client?.getServerVersion()
  }

  get unmounted() {
    return this.#unmounted
  }

  #background() {
    if (this.#unmounted) return
    this.refresh().catch((err) => {
      if (!this.#unmounted) this.#onError(err)
    })
  }

  /** Lists the remote tools again and updates the mounted set; resolves
   * `{ added, removed, updated }` (local names). Refreshes in flight are coalesced. */
  refresh() {
    if (this.#unmounted) return Promise.reject(toolhostError('MCP_UNMOUNTED', 'refresh: the MCP server was unmounted'))
    if (this.#refreshing !== null) {
      this.#again = true
      return this.#refreshing
    }
    this.#refreshing = (async () => {
      let changes
      try {
        do {
          this.#again = false
          changes = await this.#sync()
        } while (this.#again && !this.#unmounted)
      } finally {
        this.#refreshing = null
      }
      return changes
    })()
    return this.#refreshing
  }

  async #list() {
    const client = await this.#conn.ready()
    if (client.getServerCapabilities()?.tools === undefined) return []
    const tools = []
    let cursor
    do {
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, { timeout: this.#conn.connectTimeoutMs })
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return tools
  }

  async #sync() {
    const remote = await this.#list()
    if (this.#unmounted) return { added: [], removed: [], updated: [] }
    const serverName = this.#conn.client?.getServerVersion()?.name ?? this.#conn.label
    const wanted = new Map()
    const skipped = []
    for (const tool of remote) {
      if (this.#include !== null && !this.#include(tool)) continue
      if (this.#exclude !== null && this.#exclude(tool)) continue
      const name = localName(this.#prefix, tool.name)
      if (!NAME.test(name)) {
        skipped.push({ name: tool.name, reason: `its local name '${name}' is not 1 to 64 letters, digits, _ or -` })
        continue
      }
      if (wanted.has(name)) {
        skipped.push({ name: tool.name, reason: `its local name '${name}' is taken by the remote tool '${wanted.get(name).tool.name}'` })
        continue
      }
      wanted.set(name, { tool, json: JSON.stringify(tool) })
    }
    const added = [], removed = [], updated = []
    const changed = new Set()
    for (const [name, m] of this.#mounted) {
      const w = wanted.get(name)
      if (w !== undefined && w.json === m.json) continue
      unregisterMounted(this.#target, name, m.toolId)
      if (w === undefined) removed.push(name)
      else changed.add(name)
    }
    const mounted = new Map()
    for (const [name, { tool, json }] of wanted) {
      const kept = this.#mounted.get(name)
      if (kept !== undefined && kept.json === json) {
        mounted.set(name, kept)
        continue
      }
      const def = definitionOf(tool, name, serverName)
      const remoteName = tool.name
      def.handler = (args, ctx) => this.#call(remoteName, args, ctx)
      let toolId
      try {
        // Never in the place of a tool already visible here (a global tool seen from the
        // session included), unless allowed for this name.
        ;({ toolId } = registerMounted(this.#target, def, this.#shadow.has(name)))
      } catch (err) {
        skipped.push({ name: tool.name, reason: `${err.code ?? 'ERROR'}: ${messageOf(err)}` })
        if (changed.has(name)) removed.push(name)
        continue
      }
      mounted.set(name, { remote: remoteName, json, toolId })
      ;(changed.has(name) ? updated : added).push(name)
    }
    this.#mounted = mounted
    this.#skipped = skipped
    return { added, removed, updated }
  }

  async #call(remote, args, ctx) {
    const signal = ctx.signal
    const conn = this.#conn
    let client = conn.client !== null && !conn.broken && !conn.closed ? conn.client : await raced(conn.ready(), signal)
    const options = { signal, timeout: this.#requestTimeout }
    if (this.#progress && typeof ctx.reportProgress === 'function') {
      // What the remote reports is reported locally (events, resetTimeoutOnProgress).
      options.onprogress = (p) => ctx.reportProgress({ progress: p.progress, total: p.total, message: p.message })
    }
    const request = { method: 'tools/call', params: { name: remote, arguments: args ?? {} } }
    let result
    for (let tries = 0; ; tries++) {
      this.#conn.pending++
      try {
        result = await client.request(request, CallToolResultSchema, options)
        break
      } catch (err) {
        if (signal.aborted) throw signal.reason
        const thrown = this.#conn.classify(err, client)
        if (thrown.code === 'MCP_PROTOCOL_ERROR' && err.code === ErrorCode.InvalidParams) this.#background()
        // A session the server no longer knows (it restarted, or expired it) never saw
        // the call: sent again at once on a new session.
        if (tries === 0 && httpStatus(err) === 404 && this.#conn.reopenable) {
          client = await raced(this.#conn.ready(), signal)
          continue
        }
        throw thrown
      } finally {
        this.#conn.pending--
      }
    }
    if (result.isError === true) throw remoteToolError(result, remote)
    return fromCallToolResult(result)
  }

  /** Removes the mounted tools and closes the connection. Calling it again does nothing. */
  async unmount() {
    if (this.#unmounted) return
    this.#unmounted = true
    this.#offSession()
    for (const [name, m] of this.#mounted) {
      try {
        // Only what this mount registered: a tool registered later under the name stays.
        unregisterMounted(this.#target, name, m.toolId)
      } catch {}
    }
    this.#mounted.clear()
    await this.#conn.close()
  }
}

const MOUNT_KEY = Symbol('toolhost.mcp-mount')

/** Rejects with the signal's reason when it aborts first. */
function raced(promise, signal) {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}

/**
 * Registers the tools of an MCP server in `registry` (or its session `sessionId`): an
 * SDK `Client` (connected), an SDK `Transport`, `{ url, headers? }` for Streamable HTTP
 * or `{ command, args?, env?, cwd? }` for stdio. Resolves an `McpMount`.
 */
export async function mountMcp(registry, source, options) {
  if (!(registry instanceof ToolRegistry)) stateOf(registry, 'mountMcp')
  const o = options ?? {}
  if (typeof o !== 'object') throw toolhostError('INVALID_CONFIG', 'mountMcp: options must be an object')
  checkOptions(o, MOUNT_OPTIONS, 'mountMcp options', 'mountMcp: ')
  if (o.prefix !== undefined && typeof o.prefix !== 'string') throw toolhostError('INVALID_CONFIG', 'mountMcp: prefix must be a string')
  if (o.progress !== undefined && typeof o.progress !== 'boolean') throw toolhostError('INVALID_CONFIG', 'mountMcp: progress must be true or false')
  if (o.shadow !== undefined && !(Array.isArray(o.shadow) && o.shadow.every((n) => typeof n === 'string'))) {
    throw toolhostError('INVALID_CONFIG', 'mountMcp: shadow must be an array of local tool names allowed to shadow a global tool in the session')
  }
  for (const key of ['requestTimeoutMs', 'connectTimeoutMs']) {
    if (o[key] !== undefined && !(typeof o[key] === 'number' && o[key] > 0)) throw toolhostError('INVALID_CONFIG', `mountMcp: ${key} must be a positive number of milliseconds`)
  }
  const valid = source !== null && typeof source === 'object' &&
    (isClient(source) || isTransport(source) || (source.url !== undefined && (typeof source.url === 'string' || source.url instanceof URL)) || typeof source.command === 'string')
  if (!valid) {
    throw toolhostError('INVALID_ARGUMENTS', 'mountMcp takes an MCP SDK Client (connected), a Transport, { url, headers? } (Streamable HTTP) or { command, args? } (stdio)')
  }
  const { target, sessionId } = toolSet(registry, o.sessionId, 'mountMcp')
  const conn = new Connection(source, o)
  const mount = new McpMount(MOUNT_KEY, registry, target, sessionId, conn, o)
  try {
    await conn.start()
    await mount.refresh()
  } catch (err) {
    await mount.unmount().catch(() => {})
    if (err?.code === 'INVALID_ARGUMENTS' || err?.code === 'INVALID_CONFIG') throw err
    throw transientError(`mountMcp: could not list the tools of MCP server ${conn.label}: ${messageOf(err)}`, { code: 'MCP_CONNECTION_FAILED', cause: err })
  }
  return mount
}
