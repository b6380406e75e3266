// The connection a mount keeps to one MCP server: opened again after it broke when
// toolhost made it (a URL or a command), used as it is when given (a Client or a
// Transport), and bounded in what it takes in.
//
// A mounted server is untrusted: no response may be larger than `maxResultBytes` (over
// HTTP the body is counted as it streams in, and an SSE line may not be longer either;
// over stdio the SDK's read buffer is that size; a given Client's results are measured),
// and a request's HTTP response stream is closed when its call ends, so a server that
// keeps writing after a timeout (an endless SSE line grew the heap by 170 MB in 4 s)
// costs nothing more, and no socket stays open.
import { permanentError, toolhostError, transientError } from './errors.mjs'
import { Client, ErrorCode, ToolListChangedNotificationSchema, isJSONRPCErrorResponse, isJSONRPCResultResponse, sdk } from './mcp-sdk.mjs'

export const isClient = (s) => s !== null && typeof s === 'object' && typeof s.request === 'function' && typeof s.connect === 'function' && typeof s.setNotificationHandler === 'function'
export const isTransport = (s) => s !== null && typeof s === 'object' && typeof s.start === 'function' && typeof s.send === 'function' && typeof s.close === 'function'

/** A message for what went wrong, never blank. */
export const messageOf = (err) => (err instanceof Error ? err.message || err.name : String(err)) || 'unknown error'

/** The abort reason of a response stream toolhost closes because its call ended. */
const CALL_ENDED = "toolhost closed the response stream of a call that ended"

/** The HTTP status of a Streamable HTTP transport error, or undefined. */
export function httpStatus(err) {
  if (err === null || typeof err !== 'object' || typeof err.code !== 'number') return undefined
  return typeof err.message === 'string' && err.message.startsWith('Streamable HTTP error') && err.code >= 100 ? err.code : undefined
}

function tooLarge(label, limit) {
  return permanentError(`MCP server ${label} sent a response larger than maxResultBytes (${limit} bytes)`, { code: 'MCP_RESULT_TOO_LARGE' })
}

/**
 * `fetch` for the Streamable HTTP client transport, bounding what the server sends:
 * a POST's response body and any SSE line at most `limit` bytes. Each response stream
 * is kept under its JSON-RPC request id (the SDK writes the id last) for `conn` to
 * close when the call ends, or to fail the call when the bound is passed.
 */
function boundedFetch(base, limit, conn) {
  return async (url, init) => {
    const controller = new AbortController()
    // Aborted by this stream's own controller or by the transport's (closed). Combined
    // with AbortSignal.any, which holds its dependents weakly: a listener added to the
    // transport's signal for every request would stay for the connection's lifetime.
    const outer = init?.signal
    const signal = outer == null ? controller.signal : AbortSignal.any([controller.signal, outer])
    const res = await base(url, { ...init, signal })
    if (res.body === null) return res
    const id = typeof init?.body === 'string' ? /"id":(\d+)\}$/.exec(init.body)?.[1] : undefined
    const slot = id === undefined ? undefined : conn.streams.get(Number(id))
    if (slot !== undefined) slot.controller = controller
    const whole = init?.method === 'POST'
    let bytes = 0
    let line = 0
    const body = res.body.pipeThrough(
      new TransformStream({
        transform(chunk, out) {
          bytes += chunk.byteLength
          const newline = chunk.lastIndexOf(10)
          line = newline === -1 ? line + chunk.byteLength : chunk.byteLength - newline - 1
          if ((whole && bytes > limit) || line > limit) {
            const err = tooLarge(conn.label, limit)
            slot?.fail(err)
            controller.abort(err)
            out.error(err)
            return
          }
          out.enqueue(chunk)
        },
      }),
    )
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
  }
}

/** A result's size in JSON text, for results of a given Client (which toolhost does not
 * read from the wire): `{ size }`, or `{ error }` when it cannot be written (nested too
 * deep for the stack). */
function sizeOf(value) {
  try {
    return { size: JSON.stringify(value)?.length ?? 0 }
  } catch (err) {
    return { error: err }
  }
}

/** Marks the error `readable` puts for an answer the SDK cannot read. */
const UNREADABLE = 'toolhost/unreadableAnswer'

/** `message`, or, for an answer to a request (an id and no method) that the SDK cannot
 * read, a JSON-RPC error for that request saying what was wrong with it. */
function readable(message) {
  if (message === null || typeof message !== 'object' || Array.isArray(message) || 'method' in message) return message
  const id = message.id
  if ((typeof id !== 'string' && typeof id !== 'number') || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) return message
  let text
  try {
    text = JSON.stringify(message)
  } catch {
    text = String(message)
  }
  if (text.length > 300) text = `${text.slice(0, 300)}...`
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: text, data: { [UNREADABLE]: true } } }
}

export class Connection {
  constructor(source, options) {
    this.source = source
    this.clientInfo = options.clientInfo ?? { name: 'toolhost', version: '0.1.0' }
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000
    this.maxResultBytes = options.maxResultBytes
    /** Called with the new client after each (re)connection. */
    this.onConnected = () => {}
    this.onListChanged = () => {}
    this.client = null
    this.broken = false
    this.closed = false
    this.opening = null
    /** Calls waiting for an answer on the current client. */
    this.pending = 0
    /** JSON-RPC request id -> { id, controller?, fail } of requests in flight. */
    this.streams = new Map()
    /** The request the next `transport.send` carries (see `request`). */
    this.nextSlot = null
    /** The last client closed because a message was over the bound (stdio). */
    this.overflowed = false
    this.owned = !isClient(source)
    this.reopenable = this.owned && !isTransport(source)
    /** Whether the transport bounds what it reads (toolhost made it). */
    this.bounded = this.reopenable
    this.label = isClient(source) ? 'client' : isTransport(source) ? 'transport' : typeof source.url === 'string' || source.url instanceof URL ? String(source.url) : String(source.command)
  }

  async #transport() {
    const s = this.source
    if (isTransport(s)) return s
    let transport
    if (s.url !== undefined) {
      const { StreamableHTTPClientTransport } = await sdk(() => import('@modelcontextprotocol/sdk/client/streamableHttp.js'))
      const requestInit = s.headers !== undefined ? { headers: s.headers } : undefined
      const fetch = boundedFetch(s.fetch ?? globalThis.fetch, this.maxResultBytes, this)
      transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit, fetch })
    } else {
      const { StdioClientTransport } = await sdk(() => import('@modelcontextprotocol/sdk/client/stdio.js'))
      const maxBufferSize = Number.isFinite(this.maxResultBytes) ? this.maxResultBytes : undefined
      transport = new StdioClientTransport({ command: s.command, args: s.args, env: s.env, cwd: s.cwd, stderr: s.stderr ?? 'inherit', maxBufferSize })
    }
    // The SDK sends a request on the transport synchronously within `client.request`:
    // here it learns the request id of the call `request` is making.
    const send = transport.send.bind(transport)
    transport.send = (message, options) => {
      const slot = this.nextSlot
      if (slot !== null && typeof message?.method === 'string' && typeof message.id === 'number') {
        this.nextSlot = null
        slot.id = message.id
        this.streams.set(message.id, slot)
      }
      return send(message, options)
    }
    return transport
  }

  /**
   * `client.request(request, schema, options)`, failing as soon as the server's answer
   * passes `maxResultBytes`, and with its response stream closed once it settles.
   */
  async request(client, request, schema, options) {
    let fail
    const failed = new Promise((_, reject) => (fail = reject))
    failed.catch(() => {})
    const slot = { id: undefined, controller: undefined, fail }
    this.nextSlot = slot
    let answer
    try {
      answer = client.request(request, schema, options)
    } finally {
      this.nextSlot = null
    }
    try {
      const result = await Promise.race([answer, failed])
      if (!this.bounded && Number.isFinite(this.maxResultBytes)) {
        const { size, error } = sizeOf(result)
        if (error !== undefined) throw permanentError(`MCP server ${this.label} sent a result that cannot be written as JSON, so its size cannot be checked: ${messageOf(error)}`, { code: 'MCP_PROTOCOL_ERROR', cause: error })
        if (size > this.maxResultBytes) throw tooLarge(this.label, this.maxResultBytes)
      }
      return result
    } finally {
      answer.catch(() => {})
      if (slot.id !== undefined) this.streams.delete(slot.id)
      slot.controller?.abort(new Error(CALL_ENDED))
    }
  }

  /** Hooks onto a client: breaks on close, and on a stream lost while calls wait; an
   * answer that is not JSON-RPC fails its request. */
  #watch(client) {
    const transport = client.transport
    const deliver = transport?.onmessage
    if (typeof deliver === 'function') {
      // The SDK drops an answer it cannot read (`result: null`, both `result` and
      // `error`, a code that is not a number) as an "unknown message": its request then
      // waited for its timeout, and a call was sent again for each retry.
      transport.onmessage = (message, extra) => deliver(readable(message), extra)
    }
    const onclose = client.onclose
    client.onclose = () => {
      if (this.client === client) this.broken = true
      onclose?.call(client)
    }
    const onerror = client.onerror
    client.onerror = (err) => {
      const text = messageOf(err)
      // A stream toolhost closed itself (its call ended, or it was too large) is no loss.
      if (text.includes(CALL_ENDED) || text.includes('maxResultBytes')) return
      if (/ReadBuffer exceeded maximum size/.test(text)) this.overflowed = true
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
    this.overflowed = false
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
    if (err?.code === 'MCP_RESULT_TOO_LARGE' || err?.code === 'MCP_PROTOCOL_ERROR') return err
    if (err !== null && typeof err === 'object' && err.name === 'McpError' && typeof err.code === 'number') {
      if (err.code === ErrorCode.ConnectionClosed) {
        if (this.client === client) this.broken = true
        // The SDK closed a stdio connection whose message was over its read buffer.
        if (this.overflowed && Number.isFinite(this.maxResultBytes)) return tooLarge(this.label, this.maxResultBytes)
        return transientError(`the connection to MCP server ${this.label} closed during the call`, { code: 'MCP_CONNECTION_CLOSED', cause: err })
      }
      if (err.code === ErrorCode.RequestTimeout) {
        const e = new Error(`MCP server ${this.label} did not answer in time`, { cause: err })
        e.name = 'TimeoutError'
        e.code = 'MCP_REQUEST_TIMEOUT'
        return e
      }
      if (err.data?.[UNREADABLE] === true) {
        return permanentError(`MCP server ${this.label} answered with what is not a JSON-RPC response (a \`result\` object, or an \`error\` with a numeric code and a message): ${err.message.replace(/^MCP error -?\d+: /, '')}`, { code: 'MCP_PROTOCOL_ERROR', cause: err })
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
    for (const slot of this.streams.values()) slot.controller?.abort(new Error(CALL_ENDED))
    this.streams.clear()
    if (client === null) return
    const transport = client.transport
    // A session the server keeps is ended (Streamable HTTP `DELETE`), best effort.
    if (this.owned && typeof transport?.terminateSession === 'function' && transport.sessionId !== undefined) {
      await Promise.race([transport.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref?.())])
    }
    await client.close().catch(() => {})
  }
}
