// Serving tools over MCP: `createMcpServer` is an SDK `Server` over a registry (or a
// session): `tools/list` is `toMcpTools()` and follows registry changes
// (`list_changed`); `tools/call` runs `manager.execute`, so validation, retries,
// timeouts, events, audit and interceptors apply; `notifications/cancelled` aborts the
// execution; failures are `isError` results written for the model (the engine's text, as
// `executeToolCalls` replies). `serveStdio` puts it on stdio (js/mcp-http.mjs on HTTP).
//
// What a client sends is untrusted: a request id is kept as the `toolCallId` only up to
// `maxRequestIdChars`, an id already in flight is refused, and calls that wait for
// approval are bounded (js/mcp-calls.mjs).
import { checkOptions, toolhostError } from './errors.mjs'
import { ToolExecutionManager, isJournaled } from './manager.mjs'
import { ApprovalRules, APPROVAL_MODES, inFlight, track } from './mcp-calls.mjs'
import { CallToolRequestSchema, ElicitResultSchema, ErrorCode, ListToolsRequestSchema, RELATED_TASK_META_KEY, RequestSchema, Server, sdk } from './mcp-sdk.mjs'
import { modelErrorText } from './model-errors.mjs'
import { ToolSession, servedMcpTools, stateOf } from './registry.mjs'
import { modelErrorOf, modelOutputOf } from './tool-calls.mjs'
import { JournalTaskStore, runTask, taskKey } from './mcp-tasks.mjs'

/** `_meta` keys toolhost's server sets on results, and its mounts read back. */
// These keys, and what a listed tool carries under them, are also the engine's
// (crates/toolhost/src/mcp.rs): it writes a served listing and reads a mounted one.
export const META = {
  /** On a result whose text is JSON of a non-object value (a number, an array, null). */
  json: 'toolhost/json',
  /** On a result with no `structuredContent` whose text is not the value itself (the
   * tool's `toModelOutput`, or a cut to `maxOutputChars`): the value, for a mount. */
  value: 'toolhost/value',
  /** On a result whose content is what the server's model reads, not the value's own
   * text (`toModelOutput`, a cut to `maxOutputChars`): a mount's model reads it too. */
  shaped: 'toolhost/shaped',
  /** On an `isError` result: the execution's error `{ category, code, message, retryable, validationErrors? }`;
   * when a `toModelError` wrote the text, `{ category, code, message: that text, retryable, rewritten: true }`. */
  error: 'toolhost/error',
  /** On a listed tool: metadata MCP has no field for (`category`, `tags`). */
  metadata: 'toolhost/metadata',
  /** On a listed tool: the key order of a schema's root, when the SDK's parsing would
   * change it (it puts `type`, `properties`, `required` first). Validation text shows
   * the schema, so a mount restores the order. */
  keyOrder: 'toolhost/keyOrder',
}

// tools/call read loosely first, so that the SDK's Server checks the params itself and
// answers a malformed call (arguments that are not an object, no name) with -32602
// Invalid params; read with CallToolRequestSchema, the SDK would answer -32603.
const LooseCallToolRequestSchema = RequestSchema.extend({ method: CallToolRequestSchema.shape.method })

const CHANGE = 'tool-registry-change'
const LIST_CHANGED = 'notifications/tools/list_changed'

/** Defaults of what a server takes from a client. */
export const SERVER_DEFAULTS = { maxRequestIdChars: 128 }

let nextServerId = 1

function rpcError(code, message) {
  const e = new Error(message)
  e.code = code
  return e
}

/** The tool set (registry or session) and session id a server serves. */
export function toolSet(toolsOrRegistry, sessionId, method) {
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

export function managerFor(registry, manager, method) {
  if (manager === undefined || manager === null) return new ToolExecutionManager(registry)
  if (!(manager instanceof ToolExecutionManager)) {
    throw toolhostError('INVALID_ARGUMENTS', `${method} takes a ToolExecutionManager as its second argument (or null for a default one)`)
  }
  if (manager.registry !== registry) throw toolhostError('INVALID_ARGUMENTS', `${method}: the manager runs another registry's tools`)
  return manager
}

export const SERVER_OPTIONS = ['sessionId', 'name', 'version', 'instructions', 'approval', 'approvalTimeoutMs', 'maxPendingApprovals', 'maxRequestIdChars']

/** Throws INVALID_CONFIG unless `value` is a whole number of at least `min` (0 or 1),
 * or Infinity when `infinite`; `what` prefixes the message. */
export function checkCount(what, key, value, { min, infinite }) {
  if (value === undefined) return
  if (typeof value === 'number' && value >= min && (Number.isInteger(value) || (infinite && value === Infinity))) return
  const kind = min > 0 ? 'a positive integer' : 'a non-negative integer'
  throw toolhostError('INVALID_CONFIG', `${what}: ${key} must be ${kind}${infinite ? ' (or Infinity)' : ''}, not ${shown(value)}`)
}

/** A value as a message shows it: short, and never throwing. */
export function shown(value) {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  if (typeof value === 'object') return 'an object'
  return String(value)
}

/** Checks the options every server takes (`what`: the method, for messages). */
export function checkServerOptions(o, what) {
  // Read by the server's info and initialize answer; another kind was dropped silently.
  for (const key of ['name', 'version', 'instructions']) {
    if (o[key] !== undefined && typeof o[key] !== 'string') throw toolhostError('INVALID_CONFIG', `${what}: ${key} must be a string, not ${shown(o[key])}`)
  }
  if (o.approval !== undefined && !APPROVAL_MODES.includes(o.approval)) {
    throw toolhostError('INVALID_CONFIG', `${what}: approval must be one of ${APPROVAL_MODES.map((m) => `'${m}'`).join(', ')}`)
  }
  for (const key of ['approvalTimeoutMs', 'maxPendingApprovals', 'maxRequestIdChars']) checkCount(what, key, o[key], { min: 1, infinite: true })
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

/** JSON text of arguments for a reply, never throwing (a value too deep for
 * `JSON.stringify` is refused by the engine, and its reply must still be written). */
function argumentsShown(args) {
  try {
    return JSON.stringify(args ?? {}) ?? ''
  } catch {
    return '(not shown: the arguments are nested too deeply to write as JSON)'
  }
}

/** A short stable digest of a string (FNV-1a, 32 bits, hex). */
function digest(text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, '0')
}

/** A request id as a `toolCallId` keeps it: at most `max` characters of it, then a
 * digest of the whole (a 3 MB id kept whole cost 8 MB per record). */
function requestIdText(id, max) {
  const text = String(id)
  return text.length <= max ? text : `${text.slice(0, max)}…${digest(text)}`
}

// One registry listener for every server of a registry (one per session warned
// MaxListenersExceeded from the 11th session).
const followers = new WeakMap()

function follow(registry, onChange) {
  let f = followers.get(registry)
  if (f === undefined) {
    const listeners = new Set()
    f = { listeners, off: registry.on(CHANGE, (d) => listeners.forEach((l) => l(d))) }
    followers.set(registry, f)
  }
  f.listeners.add(onChange)
  return () => {
    f.listeners.delete(onChange)
    if (f.listeners.size === 0 && followers.get(registry) === f) {
      f.off()
      followers.delete(registry)
    }
  }
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
  checkServerOptions(o, 'createMcpServer')
  return buildServer(tools, manager, o, {})
}

/**
 * createMcpServer with what a transport adds (`hooks`): `callEnded(extra)`, an
 * AbortSignal that aborts when the client stopped waiting for the request `extra`
 * belongs to (its HTTP response closed); `onCall(delta)`, told of calls starting (+1)
 * and ending (-1); `closing()`, true once new calls are refused (draining).
 */
/** `_meta` key under which a mount sends the call's idempotency key. */
export const IDEMPOTENCY_META = 'toolhost/idempotencyKey'

/**
 * The idempotency key of a `tools/call`: the one its client sent (a toolhost mount sends
 * its own call's key in `_meta`), scoped by the client's authenticated identity when it
 * has one, so two clients' keys never meet. A call that came without one gets a key of
 * its own: request ids repeat across sessions and processes, so they must not be keys.
 */
function idempotencyKeyOf(request, extra) {
  const sent = request.params._meta?.[IDEMPOTENCY_META]
  if (typeof sent !== 'string' || sent === '' || sent.length > 512) return `mcp-call:${globalThis.crypto.randomUUID()}`
  const who = extra.authInfo?.clientId
  // The identity's length first: `${who}:${sent}` made 'org' with 'ada:k' the key of
  // 'org:ada' with 'k'. A length ends at the first ':', so each key has one reading.
  return typeof who === 'string' && who !== '' ? `${who.length}:${who}:${sent}` : sent
}

export function buildServer(tools, manager, o, hooks) {
  const { registry, target, sessionId } = toolSet(tools, o.sessionId, 'createMcpServer')
  manager = managerFor(registry, manager, 'createMcpServer')
  const serverId = nextServerId++
  const maxIdChars = o.maxRequestIdChars ?? SERVER_DEFAULTS.maxRequestIdChars
  const info = { name: typeof o.name === 'string' ? o.name : 'toolhost', version: typeof o.version === 'string' ? o.version : '0.1.0' }
  const serverOptions = {
    capabilities: { tools: { listChanged: true } },
    // A burst of registrations is one notification.
    debouncedNotificationMethods: [LIST_CHANGED],
  }
  if (typeof o.instructions === 'string') serverOptions.instructions = o.instructions

  // With a journal, a client may ask for a call as a task (MCP tasks, 2025-11-25): the
  // journal keeps it, so it outlives this process and the client's connection. The SDK
  // gives a task store no caller, so a transport that authenticates (serveHttp with
  // `auth`) makes a server per identity and names it (`hooks.owner`): the store then
  // answers only that identity's tasks.
  const tasks = isJournaled(manager) && sessionId === undefined ? new JournalTaskStore(manager, storedReply, hooks.owner) : undefined
  if (tasks !== undefined) {
    serverOptions.capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } }
    serverOptions.taskStore = tasks
  }

  /** A call's `CallToolResult`: its JSON (and structuredContent), or the error text. */
  function replyOf(outcome) {
    const { name, args } = { name: outcome.execution.toolName, args: outcome.execution.args }
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
      if (!same) result._meta = { ...result._meta, [META.shaped]: true }
      result.content = content
      return result
    }
    const { category, code, message, retryable, validationErrors } = outcome.error
    // The tool's (or the manager's) toModelError may write this text. The client is
    // across a trust boundary: what it hides from the model is not in _meta either.
    const { text, rewritten } = modelErrorOf(manager, name, argumentsShown(args), outcome, sessionId ?? null)
    const error = rewritten ? { category, code, message: text, retryable, rewritten } : { category, code, message, retryable }
    if (validationErrors !== undefined && !rewritten) error.validationErrors = validationErrors
    return { isError: true, content: [{ type: 'text', text }], _meta: { [META.error]: error } }
  }

  /** The `CallToolResult` of a task's call finished elsewhere (another process, after a
   * crash): its outcome as the journal keeps it, written as a call finished here is (the
   * tool's toModelOutput and toModelError apply: what they hide stays hidden). */
  function storedReply(outcome, call) {
    let args = {}
    try {
      args = JSON.parse(call.args)
    } catch {}
    const execution = { id: outcome.executionId, toolName: call.tool, args, sessionId }
    if (outcome.status === 'succeeded') return replyOf({ success: true, result: outcome.result, execution })
    const error = outcome.error ?? { category: 'unknown', code: 'UNKNOWN', message: 'the call failed', retryable: false }
    return replyOf({ success: false, error, execution })
  }

  /** Answers a `tools/call` asked for as a task at once, and runs the call on its own:
   * its key is the task's, so recovery finishes it if this process dies. Its approval
   * follows this connection's rules, as a plain call's does. */
  async function startTask(request, extra, toolCallId) {
    const { name, arguments: args } = request.params
    const task = await extra.taskStore.createTask({ ttl: request.params.task.ttl, pollInterval: 500 })
    const call = {
      toolCallId,
      sessionId,
      notify: extra.sendNotification,
      // The tools/call request was answered (with the task): the client is asked on the
      // connection itself, the request naming the task it is for.
      request: (req, schema, options) => server.request({ ...req, params: { ...req.params, _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } } } }, schema, options),
      connection: rules,
    }
    rules.calls.add(call)
    const untrack = track(manager, call)
    const running = runTask(manager, task.taskId, (signal) => manager.execute(name, args ?? {}, { toolCallId, idempotencyKey: taskKey(task.taskId), authInfo: extra.authInfo, signal }))
    const ended = () => {
      untrack()
      rules.calls.delete(call)
    }
    running.then(ended, ended)
    running
      .then((outcome) => extra.taskStore.storeTaskResult(task.taskId, outcome.success ? 'completed' : 'failed', replyOf(outcome)))
      // The client may be gone: the outcome is in the journal anyway, which tasks/result reads.
      .catch(() => {})
    return { task }
  }

  /** The listed tools, until the registry changes. */
  let listed = null
  let server
  const rules = new ApprovalRules(o, (call, message, options) => {
    if (server.getClientCapabilities()?.elicitation === undefined) return Promise.resolve(undefined)
    const params = { message, requestedSchema: { type: 'object', properties: {} } }
    return call.request({ method: 'elicitation/create', params }, ElicitResultSchema, options)
  })

  const attach = (connected) => {
    const off = follow(registry, (d) => {
      if (d.sessionId !== undefined && d.sessionId !== sessionId) return
      listed = null
      if (d.action === 'session-destroyed') {
        connected.close().catch(() => {})
        return
      }
      if (connected.transport !== undefined) connected.sendToolListChanged().catch(() => {})
    })
    return () => {
      off()
      listed = null
    }
  }

  server = new ToolhostMcpServer(info, serverOptions, attach)

  server.setRequestHandler(ListToolsRequestSchema, () => {
    if (listed === null) {
      listed = servedMcpTools(target)
      if (tasks !== undefined) for (const t of listed) t.execution = { taskSupport: 'optional' }
    }
    return { tools: listed }
  })

  server.setRequestHandler(LooseCallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params
    if (hooks.closing?.() === true) throw rpcError(ErrorCode.InvalidRequest, 'the server is shutting down: no new calls')
    if (sessionId !== undefined && !target.alive) throw rpcError(ErrorCode.InvalidRequest, `session '${sessionId}' was destroyed`)
    if (!target.has(name)) {
      const text = modelErrorText(target, name, '', { category: 'not_found', code: 'TOOL_NOT_FOUND', message: '', retryable: false })
      throw rpcError(ErrorCode.InvalidParams, text)
    }
    const toolCallId = `mcp-${extra.sessionId ?? serverId}-${requestIdText(extra.requestId, maxIdChars)}`
    if (request.params.task !== undefined && tasks === undefined) throw rpcError(ErrorCode.InvalidParams, 'this server keeps no tasks: its manager has no journal (or it serves a session)')
    // An id is one call: a second call under an id still in flight would take the first
    // one's progress and approval.
    if (inFlight(manager, toolCallId)) throw rpcError(ErrorCode.InvalidRequest, `request id ${requestIdText(extra.requestId, 40)} is already in use by a call in flight`)
    if (request.params.task !== undefined) return startTask(request, extra, toolCallId)
    const token = request.params._meta?.progressToken
    const call = {
      toolCallId,
      sessionId,
      token,
      notify: extra.sendNotification,
      request: (req, schema, options) => extra.sendRequest(req, schema, options),
      connection: rules,
    }
    // Ends with the request: the client cancelled, its session closed, or (HTTP) it
    // stopped waiting for the answer.
    const controller = new AbortController()
    const stop = () => controller.abort(extra.signal.reason)
    if (extra.signal.aborted) stop()
    else extra.signal.addEventListener('abort', stop, { once: true })
    const gone = hooks.callEnded?.(extra)
    const leave = () => controller.abort(new DOMException('the MCP client stopped waiting for the answer', 'AbortError'))
    if (gone?.aborted) leave()
    else gone?.addEventListener('abort', leave, { once: true })
    rules.calls.add(call)
    const untrack = track(manager, call)
    hooks.onCall?.(1)
    try {
      const outcome = await manager.execute(name, args ?? {}, {
        sessionId, signal: controller.signal, toolCallId, authInfo: extra.authInfo, idempotencyKey: idempotencyKeyOf(request, extra),
      })
      return replyOf(outcome)
    } finally {
      untrack()
      rules.calls.delete(call)
      extra.signal.removeEventListener('abort', stop)
      gone?.removeEventListener('abort', leave)
      hooks.onCall?.(-1)
    }
  })
  return server
}

const STDIO_OPTIONS = [...SERVER_OPTIONS, 'stdin', 'stdout', 'maxMessageBytes', 'drainMs']

/** How long `close()` lets calls in flight finish before cancelling them, by default. */
export const DEFAULT_DRAIN_MS = 10_000

/** The calls in flight of one serving, for `close()` to wait for. */
export class CallCounter {
  count = 0
  #idle = []

  change(delta) {
    this.count += delta
    if (this.count === 0) for (const resolve of this.#idle.splice(0)) resolve()
  }

  /** Resolves once no call is in flight, or after `ms` (whichever is first). */
  drained(ms) {
    if (this.count === 0 || !(ms > 0)) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.min(ms, 2 ** 31 - 1))
      this.#idle.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

/**
 * Serves the tools over stdio (this process's stdin and stdout, or `{ stdin, stdout }`).
 * Resolves `{ server, closed, close() }`; the server closes, cancelling the executions
 * in flight, when stdin ends. `close()` drains first: it refuses new calls and gives
 * those in flight `drainMs` to finish.
 */
export async function serveStdio(tools, manager, options) {
  const o = options ?? {}
  if (typeof o !== 'object') throw toolhostError('INVALID_CONFIG', `serveStdio: options must be an object, not ${shown(o)}`)
  checkOptions(o, STDIO_OPTIONS, 'serveStdio options', 'serveStdio: ')
  checkServerOptions(o, 'serveStdio')
  checkCount('serveStdio', 'drainMs', o.drainMs, { min: 0, infinite: true })
  // The SDK's transport takes it as its read buffer's size.
  checkCount('serveStdio', 'maxMessageBytes', o.maxMessageBytes, { min: 1, infinite: false })
  // Checked here, not at the first message, with what the transport calls on them.
  const isStream = (v, methods) => v !== null && typeof v === 'object' && methods.every((m) => typeof v[m] === 'function')
  if (o.stdin !== undefined && !isStream(o.stdin, ['on', 'once', 'off', 'pause'])) {
    throw toolhostError('INVALID_CONFIG', `serveStdio: stdin must be a readable stream (process.stdin, a socket, a PassThrough), not ${shown(o.stdin)}`)
  }
  if (o.stdout !== undefined && !isStream(o.stdout, ['on', 'once', 'write'])) {
    throw toolhostError('INVALID_CONFIG', `serveStdio: stdout must be a writable stream (process.stdout, a socket, a PassThrough), not ${shown(o.stdout)}`)
  }
  const { stdin, stdout, maxMessageBytes, drainMs = DEFAULT_DRAIN_MS, ...serverOptions } = o
  const calls = new CallCounter()
  let closing = null
  // A call ends for the counter once its answer is written (the SDK writes it after the
  // handler returns, within the same turn of the event loop).
  const onCall = (d) => (d > 0 ? calls.change(d) : setTimeout(() => calls.change(d), 0))
  const server = buildServer(tools, manager, serverOptions, { onCall, closing: () => closing !== null })
  const { StdioServerTransport } = await sdk(() => import('@modelcontextprotocol/sdk/server/stdio.js'))
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
    close() {
      closing ??= (async () => {
        input.off('end', ended)
        await calls.drained(drainMs)
        await server.close()
      })()
      return closing
    },
  }
}
