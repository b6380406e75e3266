// ToolRegistry and ToolSession: the JS face of the engine's registry. The engine keeps
// the tools (declarations, compiled schemas, sessions); this side keeps each tool's
// handler, known by the tool id the engine gave it.
import { backend } from './backend.mjs'
import { argumentsText } from './arguments.mjs'
import { ToolhostError, answered, argumentTypeError, checkOptions, closestOf, describe, reportUnusable, thrownMessage, toolhostError } from './errors.mjs'
import { ToolEventTarget } from './events.mjs'
import { toJsonSchema } from './schema.mjs'

const CHANGE = 'tool-registry-change'
// What a registry or a session dispatches.
const CHANGES = [CHANGE]

// Drops a collected manager's WeakRef from its registry's set.
const managerCollected = new FinalizationRegistry(({ managers, ref }) => managers.delete(ref))

/** What a registry, its sessions and its managers share. */
export class RegistryState {
  constructor(registry) {
    this.registry = registry
    this.core = new backend.RegistryCore()
    /** tool id -> handler */
    this.handlers = new Map()
    /** tool id -> its `needsApproval(args, ctx)` function */
    this.approvalPredicates = new Map()
    /** tool id -> its `toModelOutput(result)` function */
    this.modelOutputs = new Map()
    /** tool id -> its `toModelError(error, info)` function */
    this.modelErrors = new Map()
    /** session id -> ToolSession */
    this.sessions = new Map()
    /** Why an export left a mounted tool out, as reported (once each). */
    this.exportSkips = new Set()
    /** Managers over this registry (WeakRefs), to cancel a destroyed session's
     * executions. A collected one's WeakRef is dropped by managerCollected. */
    this.managers = new Set()
    /** scope (null: global, else a session id) -> its own tool names in registration
     * order, as keys of a Map (O(1) to add and delete): the `toolNames` of change events
     * without asking the engine to list a large registry on every change. */
    this.ownNames = new Map([[null, new Map()]])
  }

  /** Names visible in a scope, as the engine's registry lists them: a session's own
   * tools first, then the global ones it does not shadow (none when isolated). */
  visibleNames(session) {
    const global = this.ownNames.get(null)
    if (session === null) return [...global.keys()]
    const own = this.ownNames.get(session) ?? new Map()
    const isolated = this.sessions.get(session)?.isolated === true
    // A session's own tool is shown, unless it is a mounted one yielding to a global tool.
    const shows = (name) => own.has(name) && !(own.get(name) === YIELDS && !isolated && global.has(name))
    const names = [...own.keys()].filter(shows)
    if (!isolated) for (const name of global.keys()) if (!shows(name)) names.push(name)
    return names
  }

  /** Drops the handlers of tools the engine no longer holds. */
  release(ids) {
    for (const id of ids) {
      this.handlers.delete(id)
      this.approvalPredicates.delete(id)
      this.modelOutputs.delete(id)
      this.modelErrors.delete(id)
    }
  }

  releaseFromCore() {
    this.release(JSON.parse(this.core.takeReleased()))
  }

  /** Adds a manager. A backend making a manager per request over one registry would
   * otherwise keep a WeakRef for each it ever made, until a session's destroy pruned
   * them (a pruning pass here would not do: deref() keeps each manager alive to the end
   * of the current job, and a loop of awaited calls can be one job). */
  addManager(manager) {
    const ref = new WeakRef(manager)
    this.managers.add(ref)
    managerCollected.register(manager, { managers: this.managers, ref })
  }

  liveManagers() {
    const live = []
    for (const ref of this.managers) {
      const m = ref.deref()
      if (m === undefined) this.managers.delete(ref)
      else live.push(m)
    }
    return live
  }
}

export const states = new WeakMap()

export function stateOf(registry, method) {
  const state = states.get(registry)
  if (state === undefined) {
    throw toolhostError('INVALID_ARGUMENTS', `${method} takes a ToolRegistry (create one with new ToolRegistry())`)
  }
  return state
}

function nameArg(method, name) {
  if (typeof name !== 'string') throw argumentTypeError(method, 'the tool name', name)
  return name
}

/** The definition as JSON text for the engine: schemas as JSON Schema, the handler as
 * whether there is one (the engine checks name, description and handler in that order). */
function definitionText(def) {
  let name = '?'
  const plain = {}
  // The functions, read once: register() keeps these, not what a second read gives.
  const functions = { handler: undefined, needsApproval: undefined, toModelOutput: undefined, toModelError: undefined }
  // Its top-level keys are read here, before the guarded JSON conversion below: a getter
  // that throws or a revoked Proxy is refused naming the tool, with what it threw as
  // the cause, rather than thrown through raw.
  try {
    if (def === null || typeof def !== 'object' || Array.isArray(def)) {
      throw toolhostError('INVALID_DEFINITION', 'register() takes a tool definition object { name, description, inputSchema, handler }')
    }
    const given = def.name
    if (typeof given === 'string') name = given
    // A function under a key the engine does not know (`execute`, `run`) is sent as its
    // typeof, so the engine refuses the key by name rather than the value as not JSON.
    // (Schemas may be functions: an ArkType type is callable.)
    for (const key of Object.keys(def)) {
      const value = key === 'name' ? given : def[key]
      plain[key] = typeof value === 'function' && !key.endsWith('Schema') ? 'function' : value
    }
    for (const key in functions) functions[key] = def[key]
  } catch (err) {
    if (err instanceof ToolhostError) throw err
    throw toolhostError('INVALID_DEFINITION', `${name === '?' ? 'register()' : `tool '${name}'`}: the definition could not be read: ${thrownMessage(err)}`, { cause: err })
  }
  const { handler, needsApproval, toModelOutput, toModelError } = functions
  // What stands in for a missing function is sent as its typeof, for the engine's message.
  plain.handler = typeof handler === 'function' ? true : handler === undefined || handler === null ? false : typeof handler
  // Functions stay here; the engine learns that they exist ('ask' stands for one, so a
  // user's 'ask' is refused as the engine refuses any other string).
  if (typeof needsApproval === 'function') plain.needsApproval = 'ask'
  else if (needsApproval === 'ask') throw toolhostError('INVALID_DEFINITION', `tool '${name}': needsApproval must be true, false or a function (args, ctx) => boolean`)
  if (toModelOutput !== undefined) {
    if (typeof toModelOutput !== 'function') throw toolhostError('INVALID_DEFINITION', `tool '${name}': toModelOutput must be a function (result) => string | content parts`)
    plain.toModelOutput = true
  }
  if (toModelError !== undefined) {
    if (typeof toModelError !== 'function') throw toolhostError('INVALID_DEFINITION', `tool '${name}': toModelError must be a function (error, info) => string`)
    plain.toModelError = true
  }
  if (plain.inputSchema !== undefined) plain.inputSchema = toJsonSchema(name, plain.inputSchema, 'input')
  if (plain.outputSchema !== undefined) plain.outputSchema = toJsonSchema(name, plain.outputSchema, 'output')
  const converted = argumentsText(plain)
  if (converted.error !== undefined) {
    const code = /^.*at \/(inputSchema|outputSchema|parameters|parametersJsonSchema)/.test(converted.error) ? 'INVALID_SCHEMA' : 'INVALID_DEFINITION'
    throw toolhostError(code, `tool '${name}': the definition is not JSON: ${converted.error}`)
  }
  return { text: converted.text, functions }
}

/** Registers `def` in a scope. `mounted`: `{ mayShadow, maxSchemaCost }` for a tool a
 * mounted server declared (the engine never lets it take another tool's place, and
 * bounds its schemas' validation cost), else undefined. */
function register(state, session, target, def, mounted) {
  const { text, functions } = definitionText(def)
  const answer = mounted === undefined ? state.core.register(session, text) : state.core.registerMounted(session, text, mounted.mayShadow, mounted.maxSchemaCost)
  const { toolId, declaration } = answered(answer)
  state.handlers.set(toolId, functions.handler)
  let own = state.ownNames.get(session)
  if (own === undefined) state.ownNames.set(session, (own = new Map()))
  // A mounted tool that may not shadow yields to a global tool of its name.
  own.set(declaration.name, mounted !== undefined && !mounted.mayShadow ? YIELDS : true)
  if (typeof functions.needsApproval === 'function') state.approvalPredicates.set(toolId, functions.needsApproval)
  if (typeof functions.toModelOutput === 'function') state.modelOutputs.set(toolId, functions.toModelOutput)
  if (typeof functions.toModelError === 'function') state.modelErrors.set(toolId, functions.toModelError)
  changed(state, target, session, 'registered', declaration.name)
  return { toolId, declaration }
}

const YIELDS = 'yields'

/** Registers a tool a mounted MCP server declared in `target` (a registry or session), for
 * js/mcp.mjs: refused (`DUPLICATE_TOOL`) where its name already means a tool, unless
 * `mayShadow` lets it shadow a global tool inside a session, and (`INVALID_SCHEMA`) when a
 * schema could take more than `maxSchemaCost` validation steps (Infinity: no bound).
 * Resolves `{ toolId, declaration }`. */
export function registerMounted(target, def, mayShadow, maxSchemaCost = Infinity) {
  const [state, session] = scope(target, 'mountMcp')
  return register(state, session, target, def, { mayShadow, maxSchemaCost })
}

/** The tools of `target` (a registry or a session) as an MCP server lists them, with
 * `_meta` (crates/toolhost/src/mcp.rs `listed_tool`). */
export function servedMcpTools(target) {
  const [state, session] = scope(target, 'createMcpServer')
  return exported(state, state.core.toolsOut(session, 'mcp-served', false))
}

/** The tools of an export's answer. A mounted tool the format cannot take was left out
 * by the engine: said once for each tool, format and reason, as an export runs on every
 * turn of an agent loop. */
function exported(state, answer) {
  const { tools, skipped } = answered(answer)
  for (const why of skipped) {
    if (state.exportSkips.has(why)) continue
    state.exportSkips.add(why)
    reportUnusable(why, 'ToolhostMcpWarning')
  }
  return tools
}

/** The definition (handler apart) a listed MCP tool of server `server` is mounted with
 * under `name` (crates/toolhost/src/mcp.rs `declaration_of`). */
export function mountedDefinition(tool, name, server) {
  return answered(backend.RegistryCore.mcpDeclaration(JSON.stringify(tool), name, server))
}

/** Removes `name` from `target`'s own tools only if it is still tool `toolId`: what a mount
 * registered, never a tool registered later under that name. */
export function unregisterMounted(target, name, toolId) {
  const [state, session] = scope(target, 'unmount')
  const removed = answered(state.core.unregisterTool(session, name, toolId))
  if (removed) {
    state.ownNames.get(session)?.delete(name)
    state.releaseFromCore()
    changed(state, target, session, 'unregistered', name)
  }
  return removed
}

/** Emits `tool-registry-change` on the registry (and on the session the change is in). */
function changed(state, target, session, action, toolName, toolNames) {
  const registry = state.registry
  const sessionObject = session === null ? undefined : state.sessions.get(session)
  if (registry.listenerCount(CHANGE) === 0 && (sessionObject === undefined || sessionObject.listenerCount(CHANGE) === 0)) return
  const detail = { action }
  if (toolName !== undefined) detail.toolName = toolName
  detail.toolNames = toolNames ?? state.visibleNames(session)
  if (session !== null) detail.sessionId = session
  registry.emit(CHANGE, detail)
  if (sessionObject !== undefined && target !== registry) sessionObject.emit(CHANGE, detail)
}

function validate(state, session, method, name, args) {
  nameArg(method, name)
  let text = ''
  let unreadable
  if (typeof args === 'string') text = args
  else if (args !== undefined) {
    const converted = argumentsText(args)
    if (converted.error !== undefined) unreadable = `invalid arguments for tool '${name}': ${converted.error}`
    else text = converted.text
  }
  const issues = answered(state.core.validate(session, name, unreadable === undefined ? text : ''))
  if (unreadable !== undefined) return { valid: false, errors: [{ path: '', schemaPath: '', keyword: 'json', message: unreadable }] }
  return { valid: issues.length === 0, errors: issues }
}

/** The exports with a strict mode: the others take no options. */
const STRICT_EXPORTS = 'toOpenAITools, toOpenAIResponsesTools'

function toolsOut(state, session, format, options, method) {
  let strict = false
  if (options !== undefined && options !== null && format !== 'openai' && format !== 'openai-responses') {
    // Options given to an export that takes none (`strict` for Anthropic, a typo) would
    // be dropped in silence.
    if (typeof options !== 'object') throw toolhostError('INVALID_CONFIG', `${method}: takes no options, got ${describe(options)}`)
    for (const key of Object.keys(options)) {
      const strictMode = key === 'strict' || closestOf(key, ['strict']) !== undefined
      throw toolhostError('INVALID_CONFIG', `${method}: unknown option \`${key}\`: ${method}() takes no options${strictMode ? `; strict mode is only for the OpenAI exports (${STRICT_EXPORTS})` : ''}`)
    }
  } else if (options !== undefined && options !== null) {
    if (typeof options !== 'object') throw toolhostError('INVALID_CONFIG', `${method}: options must be an object { strict?: boolean }`)
    // A misspelt `strict` would leave strict mode off in silence.
    checkOptions(options, ['strict'], `${method} options`, `${method}: `)
    if (options.strict !== undefined && typeof options.strict !== 'boolean') throw toolhostError('INVALID_CONFIG', 'strict must be true or false')
    strict = options.strict === true
  }
  return exported(state, state.core.toolsOut(session, format, strict))
}

/** A set of tools, with JSON Schema validation in the engine. */
export class ToolRegistry extends ToolEventTarget {
  /** `options.strictSchemas` (default true): refuse schema keywords the schema's draft
   * does not know (`requried`), which JSON Schema would ignore. `options.maxSchemaCost`
   * (default none): refuse a schema one value could take more validation steps than that
   * against. Throws `INVALID_CONFIG`. */
  constructor(options) {
    super(CHANGES, 'ToolRegistry')
    const state = new RegistryState(this)
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') throw toolhostError('INVALID_CONFIG', 'new ToolRegistry(options): options must be an object { strictSchemas?: boolean, maxSchemaCost?: number }')
      // A value JSON would drop (a function) is sent as its typeof, for the engine to refuse;
      // a number JSON writes as null (NaN, -Infinity) as what it is: `maxSchemaCost: NaN`
      // read as null was no bound at all.
      const text = JSON.stringify(options, (key, v) => {
        if (key === '') return v
        if (typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') return typeof v
        return typeof v === 'number' && !Number.isFinite(v) ? { nonFinite: String(v) } : v
      })
      answered(state.core.configure(text), 'new ToolRegistry: ')
    }
    states.set(this, state)
  }

  /** Registers a tool. Throws `INVALID_TOOL_NAME`, `INVALID_DEFINITION`, `INVALID_SCHEMA` or `DUPLICATE_TOOL`; nothing changes then. */
  register(definition) {
    return register(stateOf(this, 'register'), null, this, definition).declaration
  }

  /** Removes a tool; `true` when it was registered. */
  unregister(name) {
    const state = stateOf(this, 'unregister')
    const removed = answered(state.core.unregister(null, nameArg('unregister', name)))
    if (removed) {
      state.ownNames.get(null).delete(name)
      state.releaseFromCore()
      changed(state, this, null, 'unregistered', name)
    }
    return removed
  }

  /** Removes every global tool (sessions keep theirs). */
  clear() {
    const state = stateOf(this, 'clear')
    state.core.clear()
    state.ownNames.get(null).clear()
    state.releaseFromCore()
    changed(state, this, null, 'cleared', undefined, [])
  }

  /** The tool's declaration and metadata (without the handler), or `undefined`. */
  get(name) {
    const d = stateOf(this, 'get').core.get(null, nameArg('get', name))
    return d === undefined || d === null ? undefined : JSON.parse(d)
  }

  /** Whether a global tool of that name is registered. */
  has(name) {
    return stateOf(this, 'has').core.has(null, nameArg('has', name))
  }

  /** Names of the registered tools, in registration order. */
  get names() {
    return JSON.parse(stateOf(this, 'names').core.names(null))
  }

  /** Every declaration, in registration order. */
  get all() {
    return JSON.parse(stateOf(this, 'all').core.declarations(null, null, null))
  }

  /** Declarations whose `metadata.category` is `category`. */
  getByCategory(category) {
    if (typeof category !== 'string') throw argumentTypeError('getByCategory', 'the category', category)
    return JSON.parse(stateOf(this, 'getByCategory').core.declarations(null, category, null))
  }

  /** Declarations whose `metadata.tags` include `tag`. */
  getByTag(tag) {
    if (typeof tag !== 'string') throw argumentTypeError('getByTag', 'the tag', tag)
    return JSON.parse(stateOf(this, 'getByTag').core.declarations(null, null, tag))
  }

  /** Validates arguments (an object or JSON text) and returns every failure. Throws `TOOL_NOT_FOUND` for an unknown tool. */
  validate(name, args) {
    return validate(stateOf(this, 'validate'), null, 'validate', name, args)
  }

  /** Creates a session: a tool set of its own that also sees the global tools unless `isolated`. */
  createSession(options) {
    const state = stateOf(this, 'createSession')
    let isolated = false
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') throw toolhostError('INVALID_CONFIG', 'createSession: options must be an object')
      checkOptions(options, ['isolated'], 'createSession options', 'createSession: ')
      if (options.isolated !== undefined && typeof options.isolated !== 'boolean') {
        throw toolhostError('INVALID_CONFIG', 'createSession: isolated must be true or false')
      }
      isolated = options.isolated === true
    }
    const id = state.core.createSession(isolated)
    const session = new ToolSession(SESSION_KEY, this, id, isolated)
    state.sessions.set(id, session)
    return session
  }

  /** The live session with this id, or `undefined`. */
  getSession(id) {
    if (typeof id !== 'string') throw argumentTypeError('getSession', 'the session id', id)
    return stateOf(this, 'getSession').sessions.get(id)
  }

  /** Ids of the live sessions, oldest first. */
  get sessions() {
    return JSON.parse(stateOf(this, 'sessions').core.sessions())
  }

  /**
   * Registers the tools of a remote MCP server (an SDK `Client`, `{ command, args }`
   * for stdio or `{ url, headers }` for Streamable HTTP). See js/mcp.mjs.
   */
  async mountMcp(clientOrTransport, options) {
    if (mcpLink.mount === null && mcpLink.load !== null) await mcpLink.load()
    if (mcpLink.mount === null) {
      throw toolhostError('MCP_NOT_LOADED', "registry.mountMcp needs toolhost/mcp, which this page has not loaded: import it once (`import 'toolhost/mcp'`, with @modelcontextprotocol/sdk installed), or call `mountMcp(registry, source, options)` from it")
    }
    return mcpLink.mount(this, clientOrTransport, options)
  }
}

/** How `registry.mountMcp` reaches toolhost/mcp (js/mcp.mjs), which the main entry never
 * imports, so that a browser bundle of `toolhost` reaches neither the MCP SDK nor a Node
 * module: js/mcp.mjs hands over its `mountMcp` when it loads (`mount`), and the Node
 * entry says how to load it on first use (`load`). */
const mcpLink = { mount: null, load: null }

/** `{ mount }` from js/mcp.mjs, `{ load }` from the Node entry. */
export function linkMcp(link) {
  if (link.mount !== undefined) mcpLink.mount = link.mount
  if (link.load !== undefined) mcpLink.load = link.load
}

const SESSION_KEY = Symbol('toolhost.session')

/** A per-user or per-conversation tool set. Its tools are visible only inside it. */
export class ToolSession extends ToolEventTarget {
  #registry
  #id
  #isolated

  constructor(key, registry, id, isolated) {
    super(CHANGES, 'ToolSession')
    if (key !== SESSION_KEY) throw toolhostError('INVALID_ARGUMENTS', 'sessions are created with registry.createSession()')
    this.#registry = registry
    this.#id = id
    this.#isolated = isolated
  }

  /** The registry this session belongs to. */
  get registry() {
    return this.#registry
  }

  /** The session id (a UUID v4); pass it as `sessionId` to `execute`. */
  get id() {
    return this.#id
  }

  /** Whether global tools are hidden from this session. */
  get isolated() {
    return this.#isolated
  }

  /** Whether the session still exists. */
  get alive() {
    return stateOf(this.#registry, 'alive').sessions.has(this.#id)
  }

  /** Registers a tool visible only inside this session (it may shadow a global one). */
  register(definition) {
    return register(stateOf(this.#registry, 'register'), this.#id, this, definition).declaration
  }

  /** Removes one of the session's own tools; `true` when it was there. */
  unregister(name) {
    const state = stateOf(this.#registry, 'unregister')
    const removed = answered(state.core.unregister(this.#id, nameArg('unregister', name)))
    if (removed) {
      state.ownNames.get(this.#id)?.delete(name)
      state.releaseFromCore()
      changed(state, this, this.#id, 'unregistered', name)
    }
    return removed
  }

  /** The declaration of a tool visible in this session, or `undefined`. */
  get(name) {
    const d = stateOf(this.#registry, 'get').core.get(this.#id, nameArg('get', name))
    return d === undefined || d === null ? undefined : JSON.parse(d)
  }

  /** Whether a tool of that name is visible in this session. */
  has(name) {
    return stateOf(this.#registry, 'has').core.has(this.#id, nameArg('has', name))
  }

  /** Names of every tool visible in this session (its own first, then global ones). */
  get names() {
    return JSON.parse(stateOf(this.#registry, 'names').core.names(this.#id))
  }

  /** Every declaration visible in this session (its own first, then global ones). */
  declarations() {
    return JSON.parse(stateOf(this.#registry, 'declarations').core.declarations(this.#id, null, null))
  }

  /** Validates arguments against a tool visible in this session. */
  validate(name, args) {
    return validate(stateOf(this.#registry, 'validate'), this.#id, 'validate', name, args)
  }

  /** Cancels the session's executions in flight, frees its tools and records, and emits
   * `tool-registry-change` with `action: 'session-destroyed'`. Calling it again does nothing. */
  destroy() {
    const state = stateOf(this.#registry, 'destroy')
    const names = JSON.parse(state.core.ownNames(this.#id))
    if (!state.core.destroySession(this.#id)) return
    for (const manager of state.liveManagers()) manager.sessionDestroyed(this.#id)
    state.releaseFromCore()
    changed(state, this, this.#id, 'session-destroyed', undefined, names)
    state.sessions.delete(this.#id)
    state.ownNames.delete(this.#id)
  }
}

/** The registry state and session id (null for the registry itself) a method works in. */
function scope(target, method) {
  if (target instanceof ToolSession) return [stateOf(target.registry, method), target.id]
  return [stateOf(target, method), null]
}

/** The provider exports, the same on a registry and on a session (each lists what it sees). */
const providerExports = {
  /** Declarations in the OpenAI Chat Completions format; `{ strict: true }` makes each
   * schema strict-compatible or throws `INVALID_SCHEMA` naming the tool and path. */
  toOpenAITools(options) {
    return toolsOut(...scope(this, 'toOpenAITools'), 'openai', options, 'toOpenAITools')
  },
  /** Declarations in the OpenAI Responses API format. */
  toOpenAIResponsesTools(options) {
    return toolsOut(...scope(this, 'toOpenAIResponsesTools'), 'openai-responses', options, 'toOpenAIResponsesTools')
  },
  /** Declarations as Anthropic tools `{ name, description, input_schema }`. */
  toAnthropicTools(options) {
    return toolsOut(...scope(this, 'toAnthropicTools'), 'anthropic', options, 'toAnthropicTools')
  },
  /** Declarations as Gemini `{ functionDeclarations }` in Gemini's Schema dialect. */
  toGeminiTools(options) {
    return toolsOut(...scope(this, 'toGeminiTools'), 'gemini', options, 'toGeminiTools')
  },
  /** Declarations as AG-UI tools `{ name, description, parameters }`. */
  toAgUiTools(options) {
    return toolsOut(...scope(this, 'toAgUiTools'), 'ag-ui', options, 'toAgUiTools')
  },
  /** Declarations as MCP tools, with annotations from metadata. */
  toMcpTools(options) {
    return toolsOut(...scope(this, 'toMcpTools'), 'mcp', options, 'toMcpTools')
  },
}
for (const C of [ToolRegistry, ToolSession]) {
  for (const [name, value] of Object.entries(providerExports)) {
    Object.defineProperty(C.prototype, name, { value, writable: true, configurable: true, enumerable: false })
  }
}
