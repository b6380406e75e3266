// Type tests for the public types (js/index.d.ts), checked by `tsc -p tsconfig.json` in
// `npm test`. Nothing here runs: each line without `@ts-expect-error` must compile, and
// each `@ts-expect-error` line must fail to (tsc reports an unused one as an error).

import { z } from 'zod'
// toolhost/mcp is import-only, so mount.client is the SDK's ES module Client (the SDK
// ships separate CommonJS declarations; this file is CommonJS).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js' with { 'resolution-mode': 'import' }
import { ToolExecutionManager, ToolRegistry, ToolSession, ToolhostError, ready, transientError } from 'toolhost'
import type { McpMount } from 'toolhost/mcp' with { 'resolution-mode': 'import' }
import weatherSchema from './fixtures/types/weather.schema.json'
import type {
  PendingApproval,
  ManagerOptions,
  AnthropicTool,
  ErrorCategory,
  ExecutionRecord,
  ExecutionStatus,
  GeminiTool,
  McpTool,
  OpenAITool,
  ToolDeclaration,
  ToolStats,
  ValidationResult,
} from 'toolhost'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
declare function assertType<T extends true>(): void

const registry = new ToolRegistry()

// zod v4 (any Standard Schema): args is the schema's input type.
registry.register({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({
    city: z.string(),
    days: z.number().int().optional(),
    units: z.enum(['celsius', 'fahrenheit']).default('celsius'),
  }),
  handler: async (args, context) => {
    const city: string = args.city
    const days: number | undefined = args.days
    // Validation runs in Rust on the JSON Schema: zod defaults are not filled in.
    assertType<Equal<typeof args.units, 'celsius' | 'fahrenheit' | undefined>>()
    // @ts-expect-error: `nope` is not in the schema
    args.nope
    // @ts-expect-error: `city` is a string, not a number
    const wrong: number = args.city
    const callId: string | undefined = context.toolCallId
    const signal: AbortSignal = context.signal
    const attempt: number = context.attemptNumber
    return { city, days, callId, signal, attempt, wrong }
  },
})

registry.register({
  name: 'typed_handler',
  description: 'A handler whose parameter type disagrees with the schema',
  inputSchema: z.object({ city: z.string() }),
  // @ts-expect-error: the schema gives `city: string`, the handler wants a number
  handler: (args: { city: number }) => args.city,
})

// A `const` JSON Schema literal, written inline: `register` has a const type parameter.
registry.register({
  name: 'search',
  description: 'Searches the docs',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string' },
      limit: { type: 'integer', default: 10 },
      sort: { enum: ['relevance', 'date'] },
    },
    required: ['query'],
    additionalProperties: false,
  },
  handler: (args) => {
    const query: string = args.query
    const limit: number | undefined = args.limit
    assertType<Equal<typeof args.sort, 'relevance' | 'date' | undefined>>()
    // @ts-expect-error: `limit` has a default, but nothing fills it in: it may be absent
    const sure: number = args.limit
    // @ts-expect-error: `query` is a string
    args.query.toFixed()
    // @ts-expect-error: additionalProperties is false
    args.other
    return { query, limit, sure }
  },
})

// A JSON Schema declared `as const` elsewhere.
const moveSchema = {
  type: 'object',
  properties: { from: { type: 'string' }, to: { type: 'string' }, overwrite: { type: 'boolean' } },
  required: ['from', 'to'],
} as const
registry.register({
  name: 'move_file',
  description: 'Moves a file',
  inputSchema: moveSchema,
  metadata: { destructive: true, retry: { maxAttempts: 1 }, timeoutMs: 2000, custom: { owner: 'files' } },
  handler: (args) => {
    const from: string = args.from
    const overwrite: boolean | undefined = args.overwrite
    // @ts-expect-error: `to` is a string
    const to: number = args.to
    return { from, to, overwrite }
  },
})

// No inputSchema: any object.
registry.register({
  name: 'now',
  description: 'The current time',
  handler: (args) => {
    assertType<Equal<typeof args, { [x: string]: unknown }>>()
    return new Date().toISOString()
  },
})

registry.register({
  // @ts-expect-error: the name is a string
  name: 42,
  description: 'bad',
  handler: () => 1,
})

// @ts-expect-error: a definition needs a handler
registry.register({ name: 'no_handler', description: 'bad', inputSchema: moveSchema })

const session = registry.createSession()
session.register({
  name: 'session_tool',
  description: 'Only in this session',
  inputSchema: z.object({ note: z.string() }),
  handler: (args) => {
    // @ts-expect-error: `note` is a string
    const n: number = args.note
    return n
  },
})

// Declarations out.
const declaration: ToolDeclaration | undefined = registry.get('search')
const openai: OpenAITool[] = registry.toOpenAITools({ strict: true })
const parameters: Record<string, unknown> = openai[0].function.parameters
const anthropic: AnthropicTool[] = session.toAnthropicTools()
const gemini: GeminiTool = registry.toGeminiTools()
const geminiType: string | undefined = gemini.functionDeclarations[0].parameters?.type
const mcp: McpTool[] = registry.toMcpTools()
const readOnly: boolean | undefined = mcp[0].annotations?.readOnlyHint
const validation: ValidationResult = registry.validate('search', { query: 1 })
const firstPath: string | undefined = validation.errors[0]?.path
registry.on('tool-registry-change', (change) => {
  const action: 'registered' | 'unregistered' | 'cleared' | 'session-destroyed' = change.action
  return action
})
export { declaration, parameters, anthropic, geminiType, readOnly, firstPath }

// The manager: options, results and events.
const manager = new ToolExecutionManager(registry, {
  retry: { maxAttempts: 3, baseDelay: 100, jitter: 'none', retryableCategories: ['transient', 'timeout'] },
  timeoutMs: 5000,
})
// @ts-expect-error: no such jitter
new ToolExecutionManager(registry, { retry: { jitter: 'sometimes' } })
// @ts-expect-error: not an error category
new ToolExecutionManager(registry, { retry: { retryableCategories: ['flaky'] } })

export async function managerTypes(signal: AbortSignal) {
  const outcome = await manager.execute('search', { query: 'retries' }, { toolCallId: 'call_1', timeoutMs: 100, signal })
  const status: ExecutionStatus = outcome.execution.status
  const record: ExecutionRecord = outcome.execution
  if (outcome.success) {
    const result: unknown = outcome.result
    // @ts-expect-error: a success has no error
    outcome.error
    return result
  }
  const code: string = outcome.error.code
  const category: ErrorCategory = outcome.error.category
  const retryable: boolean = outcome.error.retryable
  const issuePath: string | undefined = outcome.error.validationErrors?.[0]?.path
  // @ts-expect-error: a failure has no result
  outcome.result
  // @ts-expect-error: the category is a known string, not a number
  const categoryNumber: number = outcome.error.category

  const stats: ToolStats = manager.stats('search')
  const found: ExecutionRecord | undefined = manager.getExecution(record.id)
  const attempts: number | undefined = found?.retry.attemptNumber
  return { status, code, category, retryable, issuePath, categoryNumber, stats, attempts }
}

export function eventTypes() {
  const off: () => boolean = manager.on('tool-execution-retrying', (detail) => {
    const delay: number = detail.delayMs
    const code: string = detail.error.code
    return { delay, code }
  })
  manager.on('tool-execution-failed', (detail) => {
    const category: ErrorCategory = detail.error.category
    const status: ExecutionStatus = detail.execution.status
    return { category, status }
  })
  manager.on('tool-execution-executing', (detail) => {
    const attempt: number = detail.attemptNumber
    return attempt
  })
  manager.on('tool-invocation-recorded', (record) => {
    const hash: string = record.inputHash
    return hash
  })
  // @ts-expect-error: a started event carries the record, not a delay
  manager.on('tool-execution-started', (detail) => detail.delayMs)
  // @ts-expect-error: not an event type
  manager.on('tool-execution-exploded', () => {})
  manager.addEventListener('tool-execution-succeeded', (event) => {
    const type: 'tool-execution-succeeded' = event.type
    const result: unknown = event.detail.result
    return { type, result }
  })
  manager.use(async (context, next) => {
    const name: string = context.toolName
    context.args = { query: name }
    return next()
  })
  const error: Error = transientError('rate limited', { retryAfterMs: 500 })
  return { off, error }
}

export async function toolCallTypes(response: unknown) {
  const chat = await manager.executeToolCalls(response, { provider: 'openai', concurrency: 2 })
  const toolCallId: string = chat.messages[0].tool_call_id
  const role: 'tool' = chat.messages[0].role

  const claude = await manager.executeToolCalls(response, { provider: 'anthropic' })
  const isError: boolean = claude.messages[0].content[0].is_error
  // @ts-expect-error: Anthropic replies are user messages with tool_result blocks
  claude.messages[0].tool_call_id

  const responses = await manager.executeToolCalls(response, { provider: 'openai-responses' })
  const output: string = responses.messages[0].output
  const gem = await manager.executeToolCalls(response, { provider: 'gemini' })
  const reply: Record<string, unknown> = gem.messages[0].parts[0].functionResponse.response
  const agUi = await manager.executeToolCalls(response, { provider: 'ag-ui' })
  const agUiError: string | undefined = agUi.messages[0].error
  const callName: string = agUi.calls[0].name

  // @ts-expect-error: not a provider
  await manager.executeToolCalls(response, { provider: 'cohere' })
  return { toolCallId, role, isError, output, reply, agUiError, callName }
}

// Issue 13: output schemas type results; approval, progress and model output.
export async function agentFeatures() {
  const weather = registry.register({
    name: 'typed_weather',
    description: 'Weather, typed',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    outputSchema: { type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] },
    needsApproval: (args) => args.city === 'Atlantis',
    toModelOutput: (result) => `${result.tempC} °C`,
    handler: async (args, ctx) => {
      ctx.reportProgress({ progress: 1, total: 2, message: args.city })
      return { tempC: 21 }
    },
  })
  const r = await manager.execute(weather, { city: 'Paris' })
  if (r.success) {
    const temp: number = r.result.tempC
    // @ts-expect-error: the output schema says nothing of `sky`: it is unknown, not a string
    const sky: string = r.result.sky
    void sky
    void temp
  }
  // @ts-expect-error: the arguments are typed too
  await manager.execute(weather, { town: 'Paris' })

  const zodOut = registry.register({
    name: 'zod_out', description: 'zod output',
    outputSchema: z.object({ n: z.number() }),
    handler: () => ({ n: 1 }),
  })
  const z1 = await manager.execute(zodOut)
  if (z1.success) {
    const n: number = z1.result.n
    void n
  }
  registry.register({
    name: 'bad_out', description: 'returns the wrong type',
    outputSchema: z.object({ n: z.number() }),
    // @ts-expect-error: the handler must return what the output schema says
    handler: () => ({ n: 'one' }),
  })
  registry.register({
    name: 'stream', description: 'an async generator',
    handler: async function* () {
      yield 1
      yield 2
    },
  })
  registry.register({
    name: 'strict_meta', description: 'unknown metadata keys are refused',
    // @ts-expect-error: not a metadata key (put your own data under `custom`)
    metadata: { owner: 'files' },
    handler: () => 1,
  })

  const pending: PendingApproval[] = manager.pendingApprovals()
  manager.approve(pending[0].approvalId, { args: { city: 'Paris' }, by: 'ada' })
  manager.deny(pending[0].approvalId, { reason: 'no', by: 'bob' })
  // @ts-expect-error: approve() options are { args, by }
  manager.approve('id', { who: 'ada' })
  manager.on('tool-execution-approval-requested', (d) => d.approvalId.length)
  manager.on('tool-execution-progress', (d) => d.progress + (d.total ?? 0))
  manager.on('tool-execution-denied', (d) => d.reason.length)
  const status: ExecutionStatus = 'awaiting-approval'
  const category: ErrorCategory = 'denied'
  const mcp = await manager.executeToolCalls([], { provider: 'mcp' })
  const isError: boolean = mcp.messages[0].isError
  const record = manager.getExecution('x')
  const decision: 'approved' | 'denied' | undefined = record?.approval?.decision
  const progress: number | undefined = record?.progress?.progress
  await manager.execute('pay', {}, { approved: { by: 'ui' }, maxTotalTimeoutMs: 1000, resetTimeoutOnProgress: true })
  return { status, category, isError, decision, progress }
}


// Request context (issue 22): declared once by module augmentation, typed everywhere.
declare module 'toolhost' {
  interface ToolhostTypes {
    context: { userId: string; tenant: string }
  }
}

export async function requestContext() {
  const r = new ToolRegistry()
  r.register({
    name: 'whoami',
    description: 'The caller',
    needsApproval: (args, ctx) => ctx.context?.tenant === 'untrusted',
    handler: (args, ctx) => ctx.context?.userId.toUpperCase(),
  })
  const m = new ToolExecutionManager(r)
  m.use(async (ctx, next) => {
    const tenant: string | undefined = ctx.context?.tenant
    return next()
  })
  await m.execute('whoami', {}, { context: { userId: 'ada', tenant: 'acme' } })
  // @ts-expect-error: the context has the declared shape
  await m.execute('whoami', {}, { context: { user: 'ada' } })
  await m.executeToolCalls([], { provider: 'openai', context: { userId: 'ada', tenant: 'acme' } })
}

// Results inferred from the handler when there is no output schema, as the AI SDK does.
export async function inferredResults() {
  const r = new ToolRegistry()
  const m = new ToolExecutionManager(r)
  const weather = r.register({
    name: 'weather',
    description: 'Weather',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    handler: async ({ city }) => ({ city, tempC: 21, sky: 'clear' as const }),
  })
  const w = await m.execute(weather, { city: 'Paris' })
  if (w.success) {
    assertType<Equal<typeof w.result, { city: string; tempC: number; sky: 'clear' }>>()
    // @ts-expect-error: the handler returns no `wind`
    w.result.wind
  }
  const count = r.register({ name: 'count', description: 'A number, at once', handler: () => 42 })
  const c = await m.execute(count)
  if (c.success) assertType<Equal<typeof c.result, number>>()
  const stream = r.register({
    name: 'stream', description: 'Preliminary results, then the last',
    handler: async function* () {
      yield 'half'
      yield 'done'
    },
  })
  const s = await m.execute(stream)
  if (s.success) assertType<Equal<typeof s.result, 'half' | 'done'>>()
  // A promise library's promise (any PromiseLike) is awaited, and types the result.
  const later = r.register({
    name: 'later', description: 'A thenable',
    handler: (): PromiseLike<{ paid: number }> => ({ then: (ok) => Promise.resolve(ok?.({ paid: 5 })) as never }),
    needsApproval: () => ({ then: (ok) => Promise.resolve(ok?.(false)) as never }),
  })
  const l = await m.execute(later)
  if (l.success) assertType<Equal<typeof l.result, { paid: number }>>()
  // toModelOutput gets the inferred type too.
  r.register({
    name: 'described', description: 'x',
    handler: () => ({ tempC: 3 }),
    toModelOutput: (result) => `${result.tempC.toFixed(1)} °C`,
  })
  // With an output schema, the schema's type wins and the handler is checked against it.
  const typed = r.register({
    name: 'typed', description: 'x',
    outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    handler: () => ({ n: 1 }),
  })
  const t = await m.execute(typed)
  if (t.success) {
    const n: number = t.result.n
    // @ts-expect-error: the output schema's type, not the handler's: `n` is a number
    const wrong: string = t.result.n
    void n, wrong
  }
}

// A schema typed as a plain object (a variable without `as const`, a .json import): no
// TS2322 about `type: string`; the arguments (and a result typed by such an output
// schema) are `unknown`, to narrow as with any untrusted value.
export async function wideSchemas() {
  const r = new ToolRegistry()
  const citySchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
  r.register({
    name: 'from_variable',
    description: 'x',
    inputSchema: citySchema,
    outputSchema: citySchema,
    handler: (args) => {
      assertType<Equal<typeof args, unknown>>()
      return args
    },
  })
  const fromJson = r.register({
    name: 'from_json',
    description: 'x',
    inputSchema: weatherSchema,
    handler: (args) => {
      assertType<Equal<typeof args, unknown>>()
      return { ok: true }
    },
  })
  const done = await new ToolExecutionManager(r).execute(fromJson, { city: 'Paris' })
  if (done.success) assertType<Equal<typeof done.result, { ok: boolean }>>()
  // A schema that is not an object at all is still refused.
  // @ts-expect-error: a schema is an object
  r.register({ name: 'bad', description: 'x', inputSchema: 'object', handler: () => 1 })
}

// Event types are checked: a misspelt one is an error, not a listener that never fires.
export function checkedEvents(registry: ToolRegistry) {
  const m = new ToolExecutionManager(registry)
  const onDone = (event: CustomEvent<{ result: unknown }> & { type: 'tool-execution-succeeded' }) => event.detail.result
  m.addEventListener('tool-execution-succeeded', onDone)
  m.removeEventListener('tool-execution-succeeded', onDone)
  // @ts-expect-error: misspelt event type
  m.addEventListener('tool-execution-succeded', () => {})
  // @ts-expect-error: misspelt event type
  m.removeEventListener('tool-execution-succeded', onDone)
  m.removeEventListener('tool-execution-failed', (event) => {
    const code: string = event.detail.error.code
    return code
  })
  registry.addEventListener('tool-registry-change', (event) => event.detail.toolNames.length)
  // @ts-expect-error: a registry sends only tool-registry-change
  registry.addEventListener('tool-registry-changed', () => {})
  // @ts-expect-error: a registry sends only tool-registry-change
  registry.removeEventListener('change', () => {})
  // Still an EventTarget.
  const target: EventTarget = m
  return target
}

// The engine's load: a no-op in Node, the .wasm in a browser.
export async function loading() {
  await ready()
  await ready({ wasm: new URL('https://cdn.example/toolhost_wasm_bg.wasm') })
  await ready({ wasm: '/assets/toolhost_wasm_bg.wasm' })
  // @ts-expect-error: misspelt option
  await ready({ wams: '/x.wasm' })
}

// With @modelcontextprotocol/sdk installed, a mount's client is the SDK's Client.
export async function mountClient(mount: McpMount) {
  const client: Client | null = mount.client
  const tools = await mount.client?.listTools()
  return { client, tools }
}

// The journal (issue 21): a journaled manager's approval methods are Promises.
export async function durable() {
  const r = new ToolRegistry()
  r.register({ name: 'pay', description: 'Pays', metadata: { effect: 'once' }, handler: (args, ctx) => ctx.idempotencyKey.length })
  const plain = new ToolExecutionManager(r)
  const now: PendingApproval[] = plain.pendingApprovals()
  plain.approve('id')
  const journaled = new ToolExecutionManager(r, { journal: { url: 'sqlite:./toolhost.db', retentionMs: 60_000 } })
  const later: PendingApproval[] = await journaled.pendingApprovals()
  // @ts-expect-error: with a journal, pendingApprovals() is a Promise
  const wrong: PendingApproval[] = journaled.pendingApprovals()
  await journaled.approve('id', { by: 'ada' })
  const result = await journaled.execute('pay', {}, { idempotencyKey: 'order-1' })
  const replayed: true | undefined = result.replayed
  const key: string | undefined = result.execution.idempotencyKey
  journaled.on('tool-execution-recovered', (d) => d.action === 'interrupted')
  // @ts-expect-error: effect is 'read', 'idempotent' or 'once'
  r.register({ name: 'bad', description: 'x', metadata: { effect: 'twice' }, handler: () => 1 })
  await journaled.close()
  // A journal chosen at run time: options typed ManagerOptions, or a string | undefined.
  // Either compiles, and the approval methods are awaited, as they may be Promises.
  const fromEnv = (): string | undefined => undefined
  const options: ManagerOptions = { journal: fromEnv(), maxConcurrency: 4 }
  const configured: ToolExecutionManager<boolean> = new ToolExecutionManager(r, options)
  const either = new ToolExecutionManager(r, { journal: fromEnv() })
  const pending: PendingApproval[] = await either.pendingApprovals()
  await configured.approve('id')
  // @ts-expect-error: it may be a Promise
  const notAwaited: PendingApproval[] = either.pendingApprovals()
  // @ts-expect-error: a known journal still makes a ToolExecutionManager<true>, not <false>
  const plainAgain: ToolExecutionManager<false> = new ToolExecutionManager(r, { journal: 'sqlite:./toolhost.db' })
  // @ts-expect-error: leaseMS is misspelt, in the run-time overload too
  new ToolExecutionManager(r, { journal: fromEnv(), leaseMS: 100 })
  return { now, later, wrong, replayed, key, pending, notAwaited, plainAgain }
}

// Who calls (issue 23): ctx.authInfo, and serveHttp's auth and caps.
export async function authInfo() {
  const r = new ToolRegistry()
  r.register({
    name: 'pay',
    description: 'Pays',
    needsApproval: (args, ctx) => !ctx.authInfo?.scopes.includes('pay'),
    handler: (args, ctx) => ctx.authInfo?.clientId.toUpperCase(),
  })
  const m = new ToolExecutionManager(r)
  m.use(async (ctx, next) => {
    const who: string | undefined = ctx.authInfo?.clientId
    const key: string = ctx.idempotencyKey
    return next()
  })
  await m.execute('pay', {}, { authInfo: { token: 't', clientId: 'alice', scopes: [] } })
  // @ts-expect-error: an AuthInfo has a token, a clientId and scopes
  await m.execute('pay', {}, { authInfo: { user: 'alice' } })
  const { serveHttp, MOUNT_DEFAULTS, HTTP_DEFAULTS, META } = await import('toolhost/mcp')
  const metaKeys: string[] = [META.json, META.value, META.error, META.metadata, META.keyOrder]
  await serveHttp(r, m, { auth: 'secret', maxSessionsPerClient: 10, allowedHosts: ['tools.internal'], drainMs: 0, approval: 'elicit' })
  await serveHttp(r, m, { auth: async (token) => (token === 'a' ? { clientId: 'alice', scopes: ['pay'] } : undefined) })
  await serveHttp(r, m, { host: '0.0.0.0', auth: false })
  // @ts-expect-error: approval is one of four modes
  await serveHttp(r, m, { approval: 'ask' })
  await r.mountMcp({ url: 'http://localhost/mcp' }, { maxTools: 50, maxSchemaCost: Infinity, maxResultBytes: MOUNT_DEFAULTS.maxResultBytes })
  const cap: 100 = HTTP_DEFAULTS.maxSessionsPerClient
  return cap
}

// ToolhostError's constructor is (code, message, extra), as js/errors.mjs's.
export function toolhostErrorConstructor() {
  // @ts-expect-error: a message alone is not enough: the code comes first
  new ToolhostError('boom')
  const e = new ToolhostError('TOOL_NOT_FOUND', 'No tool "x"', { schemaPath: '/properties/x' })
  const code: string = e.code
  return code
}

// A session comes from registry.createSession(): `new ToolSession()` throws at run time.
export function sessionConstructor(r: ToolRegistry) {
  // @ts-expect-error: ToolSession's constructor is private
  new ToolSession()
  return r.createSession()
}
