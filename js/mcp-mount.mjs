// Mounting: `mountMcp(registry, source, options)` registers a remote server's tools as
// local tools whose handlers send `tools/call`: the local manager validates first, then
// applies its retries, timeouts, cancellation (sent on as `notifications/cancelled`),
// circuit breaker, events and audit as for any tool.
//
// A mounted server is untrusted by default. It never takes the place of a tool already
// visible where it is mounted (`shadow` allows it by name), `unmount()` removes only what
// it mounted, and what it can push is bounded (`MOUNT_DEFAULTS`): the tools taken from one
// listing and its total time (a cursor that comes back ends it), a description's length
// (cut; a title, category and tags too), a schema's size and validation cost (the tool
// is skipped), and a response's size on every transport (js/mcp-connection.mjs). A tool that cannot be mounted is skipped
// with a warning and listed in `mount.skipped`; it never fails the mount.
import { checkOptions, closestName, permanentError, toolhostError, transientError } from './errors.mjs'
import { Connection, httpStatus, isClient, isTransport, messageOf } from './mcp-connection.mjs'
import { CallToolResultSchema, ErrorCode, ListToolsResultSchema, ResultSchema } from './mcp-sdk.mjs'
import { IDEMPOTENCY_META, META, checkCount, toolSet, fromCallToolResult } from './mcp-server.mjs'
import { ToolRegistry, mountedDefinition, registerMounted, stateOf, unregisterMounted } from './registry.mjs'
import { REMOTE_OUTPUT } from './tool-calls.mjs'

/** How many shaped outputs a mount keeps for replies not yet written (the oldest go
 * first; a reply written after that is the result's JSON). */
const SHAPED_KEPT = 256

/** Defaults of what a mount takes from its server. */
export const MOUNT_DEFAULTS = {
  maxTools: 1000,
  listTimeoutMs: 30_000,
  maxDescriptionChars: 8192,
  maxSchemaChars: 131_072,
  maxSchemaCost: 10_000,
  maxResultBytes: 16 * 1024 * 1024,
}

/** Fixed bounds on a listed tool's other text, cut as a description is (with a warning):
 * a 5 MB title was kept whole, and became the description of a tool that had none. */
const MOUNT_TEXT_LIMITS = { titleChars: 256, categoryChars: 256, tags: 32, tagChars: 64 }

const MOUNT_OPTIONS = ['prefix', 'sessionId', 'include', 'exclude', 'requestTimeoutMs', 'connectTimeoutMs', 'clientInfo', 'onError', 'progress', 'shadow', ...Object.keys(MOUNT_DEFAULTS)]
const NAME = /^[A-Za-z0-9_-]{1,64}$/
const CHANGE = 'tool-registry-change'
/** The longest delay setTimeout takes (longer ones fire at once). */
const LONGEST_TIMER = 2 ** 31 - 1

const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

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

/** A local name for a remote tool: the prefix, then the name with characters toolhost
 * does not allow in a name replaced by `_`. */
function localName(prefix, remote) {
  return prefix + remote.replace(/[^A-Za-z0-9_-]/g, '_')
}

/** The error a mounted tool throws for a remote `isError` result: category `execution`. */
function remoteToolError(result, remoteName) {
  const facts = result._meta?.[META.error]
  const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n')
  let message = text || 'the remote tool failed without a message'
  let code = 'MCP_TOOL_ERROR'
  if (facts !== null && typeof facts === 'object' && facts.rewritten === true) {
    // The server's toModelError wrote the text: it is what this side's model reads too
    // (js/tool-calls.mjs), and what it hid is not here.
    if (typeof facts.message === 'string') message = facts.message
    if (typeof facts.code === 'string') code = facts.code
  } else if (facts !== null && typeof facts === 'object' && typeof facts.message === 'string') {
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
  /** The text the server's toModelError wrote for the model. */
  if (facts?.rewritten === true && text !== '') e.modelText = text
  if (facts !== null && typeof facts === 'object') e.remoteError = facts
  return e
}

/** A short stable digest of a string (FNV-1a, 32 bits), to remember cursors by. */
function digest(text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return `${text.length}:${(h >>> 0).toString(16)}`
}

/**
 * `tools/list` read without the SDK's schema of every tool: a page of 100,000 tools took
 * 7 s to parse before a single one could be refused. Only the page's shape is checked
 * here; the tools kept are then read one by one (`readTool`).
 */
const ListPage = {
  safeParse(data) {
    if (data === null || typeof data !== 'object' || !Array.isArray(data.tools)) {
      return { success: false, error: new Error('a tools/list result must be an object with a tools array') }
    }
    if (data.nextCursor !== undefined && typeof data.nextCursor !== 'string') return { success: false, error: new Error('nextCursor must be a string') }
    return { success: true, data }
  },
}
const ToolSchema = ListToolsResultSchema.shape.tools.element

/** A listed tool as the SDK reads it, or why it cannot be. */
function readTool(raw) {
  const read = ToolSchema.safeParse(raw)
  if (read.success) return { tool: read.data }
  const issue = read.error.issues?.[0]
  const at = issue?.path?.length > 0 ? ` at ${issue.path.join('.')}` : ''
  return { why: `it is not a valid MCP tool${at}: ${issue?.message ?? read.error.message}` }
}

const cut = (text, max) => `${text.slice(0, max - 1)}…`

/** The note on the names of option `what` matching nothing (`missed`), at most 10
 * shown, each cut to 200 characters and with the close name `hint(name)` gives. */
function unmatchedNote(what, missed, hint, rest) {
  const shown = missed.slice(0, 10).map((name) => {
    const near = hint(name)
    return `'${name.slice(0, 200)}'${near === undefined ? '' : ` (did you mean '${near.slice(0, 200)}'?)`}`
  })
  const more = missed.length > 10 ? ` and ${missed.length - 10} more` : ''
  return `mountMcp: ${what} names ${shown.join(', ')}${more}, ${rest}`
}

/** Cuts a listed tool's title (its own and its annotations'), and a toolhost server's
 * category and tags, to MOUNT_TEXT_LIMITS; `note(what, how)` is told what was cut. */
function boundText(tool, note) {
  const { titleChars, categoryChars, tags: maxTags, tagChars } = MOUNT_TEXT_LIMITS
  if (typeof tool.title === 'string' && tool.title.length > titleChars) {
    note('title', `is ${tool.title.length} characters: cut to ${titleChars}`)
    tool.title = cut(tool.title, titleChars)
  }
  const annotations = tool.annotations
  if (isRecord(annotations) && typeof annotations.title === 'string' && annotations.title.length > titleChars) {
    note('annotations.title', `is ${annotations.title.length} characters: cut to ${titleChars}`)
    tool.annotations = { ...annotations, title: cut(annotations.title, titleChars) }
  }
  const kept = isRecord(tool._meta) ? tool._meta[META.metadata] : undefined
  if (!isRecord(kept)) return
  const metadata = { ...kept }
  if (typeof metadata.category === 'string' && metadata.category.length > categoryChars) {
    note('category', `is ${metadata.category.length} characters: cut to ${categoryChars}`)
    metadata.category = cut(metadata.category, categoryChars)
  }
  if (Array.isArray(metadata.tags)) {
    // Only strings are read as tags.
    let tags = metadata.tags.filter((t) => typeof t === 'string')
    if (tags.length > maxTags) {
      note('tags', `are ${tags.length}: the first ${maxTags} kept`)
      tags = tags.slice(0, maxTags)
    }
    const long = tags.filter((t) => t.length > tagChars).length
    if (long > 0) {
      note('tags', `have ${long} longer than ${tagChars} characters: cut to ${tagChars}`)
      tags = tags.map((t) => (t.length > tagChars ? cut(t, tagChars) : t))
    }
    metadata.tags = tags
  }
  tool._meta = { ...tool._meta, [META.metadata]: metadata }
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
  /** The names of `include` and `exclude` given as arrays (checked against each listing). */
  #includeNames
  #excludeNames
  #requestTimeout
  #onError
  #progress
  #limits
  /** Local names the caller allowed, one by one, to shadow a global tool in the session. */
  #shadow
  /** local name -> { remote, json, toolId } */
  #mounted = new Map()
  /** executionId -> the content a toolhost server shaped for its model (toModelOutput,
   * maxOutputChars): what this side's model reads for that result. */
  #shaped = new Map()
  #toModelOutput = Object.assign(() => undefined, { [REMOTE_OUTPUT]: (executionId) => this.#shaped.get(executionId) })
  #skipped = []
  #warnings = []
  /** Warnings already given: a refresh that finds the same says nothing new. */
  #warned = new Set()
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
    this.#includeNames = Array.isArray(options.include) ? [...new Set(options.include)] : null
    this.#excludeNames = Array.isArray(options.exclude) ? [...new Set(options.exclude)] : null
    this.#requestTimeout = Math.min(options.requestTimeoutMs ?? LONGEST_TIMER, LONGEST_TIMER)
    this.#progress = options.progress !== false
    this.#shadow = new Set(options.shadow ?? [])
    this.#limits = options.limits
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

  /** What the last listing cut or changed (a listing stopped at a limit, a description
   * cut), and names of `include`, `exclude` or `shadow` it matched nothing with, as
   * sentences; each was also a process warning. */
  get warnings() {
    return this.#warnings.slice()
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

  /** The remote tools, as listed within the limits; notes what a limit cut in `notes`. */
  async #list(notes) {
    const client = await this.#conn.ready()
    if (client.getServerCapabilities()?.tools === undefined) return []
    const { maxTools, listTimeoutMs } = this.#limits
    const label = this.#conn.label
    const tools = []
    const cursors = new Set()
    const started = Date.now()
    let cursor
    do {
      const left = listTimeoutMs - (Date.now() - started)
      if (left <= 0) {
        notes.push(`MCP server ${label} took longer than listTimeoutMs (${listTimeoutMs} ms) to list its tools: the ${tools.length} listed by then are used`)
        break
      }
      let page
      try {
        const params = cursor === undefined ? {} : { cursor }
        page = await this.#conn.request(client, { method: 'tools/list', params }, ListPage, { timeout: Math.min(this.#conn.connectTimeoutMs, left) })
      } catch (err) {
        // Out of time on a later page: what was listed is used.
        if (tools.length > 0 && Date.now() - started >= listTimeoutMs) continue
        throw err
      }
      tools.push(...page.tools.slice(0, maxTools + 1 - tools.length))
      if (tools.length > maxTools) {
        tools.length = maxTools
        notes.push(`MCP server ${label} lists more than maxTools (${maxTools}) tools: the first ${maxTools} are used`)
        break
      }
      cursor = page.nextCursor
      if (cursor !== undefined) {
        const seen = digest(cursor)
        if (cursors.has(seen)) {
          notes.push(`MCP server ${label} sent a tools/list cursor it had sent before: the listing stopped there, with ${tools.length} tools`)
          break
        }
        cursors.add(seen)
      }
    } while (cursor !== undefined)
    return tools
  }

  async #sync() {
    const notes = []
    const remote = await this.#list(notes)
    if (this.#unmounted) return { added: [], removed: [], updated: [] }
    const serverName = this.#conn.client?.getServerVersion()?.name ?? this.#conn.label
    const { maxDescriptionChars, maxSchemaChars, maxSchemaCost } = this.#limits
    const wanted = new Map()
    const skipped = []
    for (const raw of remote) {
      const rawName = raw !== null && typeof raw === 'object' && typeof raw.name === 'string' ? raw.name : '(no name)'
      const { tool, why } = readTool(raw)
      if (tool === undefined) {
        skipped.push({ name: rawName.slice(0, 200), reason: why })
        continue
      }
      if (this.#include !== null && !this.#include(tool)) continue
      if (this.#exclude !== null && this.#exclude(tool)) continue
      const name = localName(this.#prefix, tool.name)
      if (!NAME.test(name)) {
        skipped.push({ name: tool.name.slice(0, 200), reason: `its local name '${name.slice(0, 80)}' is not 1 to 64 letters, digits, _ or -` })
        continue
      }
      if (wanted.has(name)) {
        skipped.push({ name: tool.name, reason: `its local name '${name}' is taken by the remote tool '${wanted.get(name).tool.name}'` })
        continue
      }
      const schemaChars = (JSON.stringify(tool.inputSchema)?.length ?? 0) + (JSON.stringify(tool.outputSchema)?.length ?? 0)
      if (schemaChars > maxSchemaChars) {
        skipped.push({ name: tool.name, reason: `its schemas are ${schemaChars} characters of JSON, more than maxSchemaChars (${maxSchemaChars})` })
        continue
      }
      if (typeof tool.description === 'string' && tool.description.length > maxDescriptionChars) {
        notes.push(`the description of tool '${tool.name}' of MCP server ${this.#conn.label} is ${tool.description.length} characters: cut to maxDescriptionChars (${maxDescriptionChars})`)
        tool.description = `${tool.description.slice(0, maxDescriptionChars - 1)}…`
      }
      boundText(tool, (what, how) => notes.push(`the ${what} of tool '${tool.name}' of MCP server ${this.#conn.label} ${how}`))
      wanted.set(name, { tool, json: JSON.stringify(tool) })
    }
    this.#unmatched(remote, wanted, notes)
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
      // Title, hints, toolhost metadata and key order, as the Rust mount reads them.
      const def = mountedDefinition(tool, name, serverName)
      const remoteName = tool.name
      def.handler = (args, ctx) => this.#call(remoteName, args, ctx)
      def.toModelOutput = this.#toModelOutput
      let toolId
      try {
        // Never in the place of a tool already visible here (a global tool seen from the
        // session included), unless allowed for this name; schemas within the cost bound.
        ;({ toolId } = registerMounted(this.#target, def, this.#shadow.has(name), maxSchemaCost))
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
    this.#warnings = notes
    const once = (text) => {
      if (this.#warned.has(text)) return
      this.#warned.add(text)
      warn(`toolhost: ${text}`)
    }
    for (const note of notes) once(note)
    if (skipped.length > 0) {
      const shown = skipped.slice(0, 10).map((s) => `'${s.name}' (${s.reason})`).join('; ')
      once(`${skipped.length} tool${skipped.length === 1 ? '' : 's'} of MCP server ${this.#conn.label} could not be mounted: ${shown}${skipped.length > 10 ? '; …' : ''} (see mount.skipped)`)
    }
    return { added, removed, updated }
  }

  /** Notes the names of `include`, `exclude` (as arrays) and `shadow` that match no tool
   * of this listing: a misspelt `exclude` name mounts the tool it meant to hide. Not an
   * error: a later listing may have them. */
  #unmatched(remote, wanted, notes) {
    const label = this.#conn.label
    const listed = new Set()
    for (const raw of remote) if (raw !== null && typeof raw === 'object' && typeof raw.name === 'string') listed.add(raw.name)
    for (const [what, names] of [['include', this.#includeNames], ['exclude', this.#excludeNames]]) {
      const missed = (names ?? []).filter((n) => !listed.has(n))
      if (missed.length > 0) notes.push(unmatchedNote(what, missed, (n) => closestName(n, listed), `which MCP server ${label} does not list`))
    }
    const missed = [...this.#shadow].filter((n) => !wanted.has(n))
    if (missed.length > 0) {
      // A name given without the prefix is the likeliest mistake.
      const hint = (n) => (wanted.has(localName(this.#prefix, n)) ? localName(this.#prefix, n) : closestName(n, wanted.keys()))
      notes.push(unmatchedNote('shadow', missed, hint, `which no tool of MCP server ${label} has as its local name`))
    }
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
    // The local call's idempotency key travels with it: a server with a journal runs a
    // call retried on another host (its first host died mid-call) at most once.
    const request = { method: 'tools/call', params: { name: remote, arguments: args ?? {} } }
    if (typeof ctx.idempotencyKey === 'string') request.params._meta = { [IDEMPOTENCY_META]: ctx.idempotencyKey }
    let result
    for (let tries = 0; ; tries++) {
      conn.pending++
      try {
        // Read as any result, then checked here: a result the SDK's schema rejects came
        // from a server that answered, so it is not 'unreachable' (transient, retried on
        // a new connection, running a once tool again), but a permanent protocol error.
        result = await conn.request(client, request, ResultSchema, options)
        break
      } catch (err) {
        if (signal.aborted) throw signal.reason
        const thrown = conn.classify(err, client)
        if (thrown.code === 'MCP_PROTOCOL_ERROR' && err.code === ErrorCode.InvalidParams) this.#background()
        // A session the server no longer knows (it restarted, or expired it) never saw
        // the call: sent again at once on a new session.
        if (tries === 0 && httpStatus(err) === 404 && conn.reopenable) {
          client = await raced(conn.ready(), signal)
          continue
        }
        throw thrown
      } finally {
        conn.pending--
      }
    }
    const parsed = CallToolResultSchema.safeParse(result)
    if (!parsed.success) throw notCallToolResult(conn.label, remote, parsed.error)
    result = parsed.data
    if (result.isError === true) throw remoteToolError(result, remote)
    // The value is the result, for programs; the model reads what the server shaped.
    if (result._meta?.[META.shaped] === true && typeof ctx.executionId === 'string') {
      const content = result.content
      this.#shaped.delete(ctx.executionId)
      this.#shaped.set(ctx.executionId, content.length === 1 && content[0].type === 'text' ? content[0].text : content)
      if (this.#shaped.size > SHAPED_KEPT) this.#shaped.delete(this.#shaped.keys().next().value)
    }
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

/** The error of a `tools/call` answered with a result that is not a `CallToolResult`:
 * where it is wrong (the schema's first few issues), not the whole result. */
function notCallToolResult(label, remote, error) {
  const issues = (error?.issues ?? []).slice(0, 3).map((i) => `${i.path?.length ? i.path.join('.') : '(result)'}: ${i.message}`)
  const where = issues.length > 0 ? ` (${issues.join('; ')})` : ''
  return permanentError(`MCP server ${label} answered tools/call of '${remote}' with a result that is not a CallToolResult${where}`, { code: 'MCP_PROTOCOL_ERROR', cause: error })
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

const URL_SOURCE = ['url', 'headers', 'fetch']
const COMMAND_SOURCE = ['command', 'args', 'env', 'cwd', 'stderr']
const STDERR = ['inherit', 'ignore', 'pipe']

const ofStrings = (v) => isRecord(v) && Object.values(v).every((x) => typeof x === 'string')

/** Checks a `{ url }` or `{ command }` source: a misspelt key (`header`, `evn`) was
 * ignored, so a mount ran without its token or its environment; a key of the wrong
 * kind failed later as a connection failure, or not at all. */
function checkSource(source) {
  const bad = (message) => toolhostError('INVALID_CONFIG', `mountMcp: ${message}`)
  if (source.url !== undefined && source.command !== undefined) {
    throw bad('a source is { url } (Streamable HTTP) or { command } (stdio), not both')
  }
  if (source.url !== undefined) {
    checkOptions(source, URL_SOURCE, 'a { url } source', 'mountMcp: ')
    let url
    try {
      url = new URL(source.url)
    } catch {}
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw bad(`url must be an absolute http: or https: URL, not ${JSON.stringify(String(source.url))}`)
    const headers = source.headers
    if (headers !== undefined && !ofStrings(headers) && !(typeof globalThis.Headers === 'function' && headers instanceof globalThis.Headers)) {
      throw bad("headers must be an object of header names and string values, such as { authorization: 'Bearer <token>' }")
    }
    if (source.fetch !== undefined && typeof source.fetch !== 'function') throw bad('fetch must be a function (a fetch implementation)')
    return
  }
  checkOptions(source, COMMAND_SOURCE, 'a { command } source', 'mountMcp: ')
  if (source.command === '') throw bad('command must name a program')
  if (source.args !== undefined && !(Array.isArray(source.args) && source.args.every((a) => typeof a === 'string'))) {
    throw bad("args must be an array of strings, such as ['server.mjs', '--stdio']")
  }
  if (source.env !== undefined && !ofStrings(source.env)) throw bad('env must be an object of variable names and string values')
  if (source.cwd !== undefined && typeof source.cwd !== 'string') throw bad('cwd must be a directory path (a string)')
  // The SDK also takes a stream or a file descriptor; a string must be one of its modes.
  const { stderr } = source
  if (stderr !== undefined && !(STDERR.includes(stderr) || typeof stderr === 'number' || (isRecord(stderr) && typeof stderr.write === 'function'))) {
    throw bad(`stderr must be ${STDERR.map((m) => `'${m}'`).join(', ')}, a stream or a file descriptor`)
  }
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
  const limits = { ...MOUNT_DEFAULTS }
  for (const key of Object.keys(MOUNT_DEFAULTS)) {
    const v = o[key]
    if (v === undefined) continue
    checkCount('mountMcp', key, v, { min: 1, infinite: true })
    limits[key] = v
  }
  if (o.clientInfo !== undefined && !(o.clientInfo !== null && typeof o.clientInfo === 'object' && typeof o.clientInfo.name === 'string' && typeof o.clientInfo.version === 'string')) {
    throw toolhostError('INVALID_CONFIG', "mountMcp: clientInfo must be { name, version } (two strings), such as { name: 'my-agent', version: '1.0.0' }")
  }
  if (o.onError !== undefined && typeof o.onError !== 'function') throw toolhostError('INVALID_CONFIG', 'mountMcp: onError must be a function (error) => void')
  const valid = source !== null && typeof source === 'object' &&
    (isClient(source) || isTransport(source) || (source.url !== undefined && (typeof source.url === 'string' || source.url instanceof URL)) || typeof source.command === 'string')
  if (!valid) {
    throw toolhostError('INVALID_ARGUMENTS', 'mountMcp takes an MCP SDK Client (connected), a Transport, { url, headers? } (Streamable HTTP) or { command, args? } (stdio)')
  }
  if (!isClient(source) && !isTransport(source)) checkSource(source)
  const { target, sessionId } = toolSet(registry, o.sessionId, 'mountMcp')
  const conn = new Connection(source, { ...o, maxResultBytes: limits.maxResultBytes })
  const mount = new McpMount(MOUNT_KEY, registry, target, sessionId, conn, { ...o, limits })
  try {
    await conn.start()
    await mount.refresh()
  } catch (err) {
    await mount.unmount().catch(() => {})
    if (err?.code === 'INVALID_ARGUMENTS' || err?.code === 'INVALID_CONFIG' || err?.code === 'MCP_SDK_MISSING') throw err
    throw transientError(`mountMcp: could not list the tools of MCP server ${conn.label}: ${messageOf(err)}`, { code: 'MCP_CONNECTION_FAILED', cause: err })
  }
  return mount
}
