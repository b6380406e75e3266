// Model responses in, replies out: `manager.executeToolCalls` and `toAiSdkTools`. Which
// calls a response holds, the replies' shapes and the text a model reads for a failure
// are the engine's (crates/toolhost/src/host/registry.rs); this side runs the calls.
import { answered, checkOptions, describe, reportCallbackError, reportUnusable, toolhostError } from './errors.mjs'
import { then } from './context.mjs'
import { approvalPolicies, decidedApprovals, executeRefused, modelErrorRewriters, outputBudgets } from './manager.mjs'
import { stateOf } from './registry.mjs'

const CALL_OPTIONS = ['provider', 'sessionId', 'signal', 'concurrency', 'timeoutMs', 'retry', 'context']

function sessionOf(options, method) {
  const s = options.sessionId
  if (s !== undefined && s !== null && typeof s !== 'string') throw toolhostError('INVALID_CONFIG', `${method}: sessionId must be a string`)
  return typeof s === 'string' ? s : null
}

/** The value at JSON pointer `pointer` in `value` (a value JSON.parse made). */
function valueAt(value, pointer) {
  for (const part of pointer.split('/').slice(1)) value = value[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  return value
}

/** Nesting below which a response is cut when it is too deep for `JSON.stringify`: far
 * below the stack's limit, and far past any provider's envelope (a few levels) plus the
 * 128 levels arguments may have, so a call holding a cut is refused for its depth. */
const CUT_DEPTH = 512

/** JSON text of a model response. One that `JSON.stringify` cannot write for its depth
 * (a tool input nested 5,000 levels) is written with whatever is nested deeper than
 * `CUT_DEPTH` replaced by a string: the call holding it is then refused for its depth by
 * itself, as an OpenAI call's text would be, and the calls beside it run. */
function responseText(response) {
  try {
    return JSON.stringify(response)
  } catch (e) {
    if (!(e instanceof RangeError)) throw e
  }
  const depths = new WeakMap()
  return JSON.stringify(response, function (key, value) {
    if (value === null || typeof value !== 'object') return value
    const depth = (depths.get(this) ?? 0) + 1
    if (depth > CUT_DEPTH) return '(nested too deeply)'
    depths.set(value, depth)
    return value
  })
}

/** JSON of a handler's result for a reply: `null` for `undefined`, a note when it is not JSON. */
function resultJson(value) {
  if (value === undefined) return null
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : JSON.parse(text)
  } catch (e) {
    return `(result not JSON: ${e instanceof Error ? e.message : String(e)})`
  }
}

/** What the tool's `toModelOutput` makes of a successful result (the record, the events
 * and `execute`'s result keep the full value), or undefined when it has none. A
 * `toModelOutput` that throws, returns a promise or returns what JSON cannot carry is
 * reported, and the result's JSON is sent instead (as the engine does for any other
 * value that is not text or content parts: see `formatted`). */
function modelOutput(state, result) {
  if (state.modelOutputs.size === 0) return undefined
  const { toolName, sessionId } = result.execution
  const toModelOutput = state.modelOutputs.get(state.core.toolId(sessionId ?? null, toolName))
  if (toModelOutput === undefined) return undefined
  // A mounted tool: what its server shaped for the model, kept by execution.
  const remote = toModelOutput[REMOTE_OUTPUT]
  if (remote !== undefined) return remote(result.execution.id)
  const what = `the toModelOutput function of '${toolName}'`
  try {
    const shown = toModelOutput(result.result)
    if (typeof shown === 'string') return shown
    if (shown !== null && typeof shown === 'object' && typeof shown.then === 'function') {
      // An async toModelOutput: its rejection is not left unhandled.
      then.call(Promise.resolve(shown), undefined, () => {})
      reportUnusable(`${what} returned a promise; it must return its text or content parts at once: the result's JSON was sent instead`, 'ToolhostModelOutputWarning')
      return undefined
    }
    JSON.stringify(shown)
    return shown
  } catch (err) {
    reportCallbackError(err, what, 'ToolhostModelOutputWarning')
    return undefined
  }
}

/** On the `toModelOutput` of a tool mounted from a toolhost server (js/mcp-mount.mjs):
 * `(executionId) => content | undefined`, the text (or parts) the server sent for that
 * execution's result, which its model would have read. */
export const REMOTE_OUTPUT = Symbol('toolhost.remoteOutput')

/** The messages of the engine's `formatReplies` answer; a reply whose `toModelOutput`
 * value was not text or content parts is the result's JSON, and is reported. */
function formatted(answer) {
  for (const problem of answer.problems) reportUnusable(problem, 'ToolhostModelOutputWarning')
  return answer.messages
}

/** What the model is sent for a successful result: `toModelOutput`'s string or parts,
 * else the result's JSON text; within the manager's or tool's `maxOutputChars`. */
export function modelOutputOf(manager, result) {
  const state = stateOf(manager?.registry, 'modelOutputOf(manager)')
  const shown = modelOutput(state, result)
  const reply = JSON.stringify([{ id: '', name: result.execution.toolName, result: resultJson(result.result), modelOutput: shown, maxChars: outputBudgets.get(manager), executionId: result.execution.id }])
  const [message] = formatted(answered(state.core.formatReplies(result.execution.sessionId ?? null, 'mcp', reply)))
  return message.content
}

/** What the engine writes a failure's text for the model from; `available`, the names
 * of every tool the model was sent when they are more than the registry's (the reply to
 * a made-up name lists them). */
function errorFacts(error, available = undefined) {
  const { category, code, message, retryable, validationErrors } = error
  return { category, code, message, retryable, validationErrors, available }
}

/** The `toModelError` that writes the model's text for a failure of `name`: the tool's
 * own, else the manager's; undefined when neither is set. */
function modelErrorRewriter(manager, state, session, name) {
  const own = state.modelErrors.size === 0 ? undefined : state.modelErrors.get(state.core.toolId(session, name))
  return own ?? modelErrorRewriters.get(manager)
}

/** What a `toModelError` function makes of a failure: its string, or undefined (the
 * default text stays) when it returns nothing, returns something else, or throws (both
 * reported as a warning). */
function rewrittenError(rewrite, error, info) {
  let text
  try {
    text = rewrite(error, info)
  } catch (err) {
    reportCallbackError(err, `the toModelError function for '${info.toolName}'`, 'ToolhostModelErrorWarning')
    return undefined
  }
  if (typeof text === 'string') return text
  if (text !== undefined && text !== null) {
    reportUnusable(`the toModelError function for '${info.toolName}' returned ${typeof text}, not a string: the default text was sent`, 'ToolhostModelErrorWarning')
  }
  return undefined
}

/** The text the server of a mounted tool wrote for its model with `toModelError`, which
 * the mount keeps on the error it throws (js/mcp-mount.mjs): the default text here too,
 * so that what it hid stays hidden from this side's model. */
function remoteModelText(error) {
  const text = error?.cause?.modelText
  return typeof text === 'string' ? text : undefined
}

/**
 * The text a model reads for a failed execution `result` (of `name`, called with
 * `argumentsText`, in `session`): the engine's text (validation issues with the expected
 * schema, the tools it could have called, or the failure's category and message), or
 * what the tool's or the manager's `toModelError` makes of it (here, or on the server a
 * mounted tool came from): `{ text, rewritten }`.
 */
export function modelErrorOf(manager, name, argumentsText, result, session = null, available = undefined) {
  const state = stateOf(manager?.registry, 'modelErrorFor(manager)')
  const remote = remoteModelText(result.error)
  const text = remote ?? state.core.modelErrorText(session, name, argumentsText, JSON.stringify(errorFacts(result.error, available)))
  const rewrite = modelErrorRewriter(manager, state, session, name)
  const written = rewrite === undefined ? undefined : rewrittenError(rewrite, result.error, { toolName: name, toolCallId: result.execution?.toolCallId, sessionId: session ?? undefined, executionId: result.execution?.id, arguments: argumentsText, text })
  if (written !== undefined) return { text: written, rewritten: true }
  return { text, rewritten: remote !== undefined }
}

/** The text of `modelErrorOf`. */
export function modelErrorFor(manager, name, argumentsText, result, session = null, available = undefined) {
  return modelErrorOf(manager, name, argumentsText, result, session, available).text
}

/** The replies to `calls` (`{ id, name, arguments }`, arguments as the model's text)
 * and their `results`, in `provider`'s format: the engine writes them, a failure's text
 * for the model included. `available`: the names of every tool the model was sent, when
 * they are more than the registry's (the unknown-tool reply lists them). */
function replyMessages(manager, state, session, provider, calls, results, prefix, available) {
  const maxChars = outputBudgets.get(manager)
  const replies = calls.map((c, k) => {
    const r = results[k]
    const reply = { id: c.id, name: c.name, arguments: c.arguments, maxChars, executionId: r.execution?.id }
    if (!r.success) {
      reply.error = errorFacts(r.error, available)
      if (modelErrorRewriter(manager, state, session, c.name) !== undefined || remoteModelText(r.error) !== undefined) reply.errorText = modelErrorFor(manager, c.name, c.arguments, r, session, available)
      return reply
    }
    reply.result = resultJson(r.result)
    const shown = modelOutput(state, r)
    if (shown !== undefined) reply.modelOutput = shown
    return reply
  })
  return formatted(answered(state.core.formatReplies(session, provider, JSON.stringify(replies)), prefix))
}

/** The reply messages `executeToolCalls` would send for `calls` that ran elsewhere
 * (`toolhost/ag-ui` runs each call as its arguments end), from their `results`;
 * `available`, the names of every tool the model was sent (see `replyMessages`). */
export function repliesFor(manager, sessionId, provider, calls, results, available) {
  const state = stateOf(manager?.registry, 'repliesFor(manager)')
  return replyMessages(manager, state, sessionId ?? null, provider, calls, results, '', available)
}

/** `concurrency`, checked as the manager's `maxConcurrency` is: 0, -3, 'four' or 2.5 were
 * made into a number in silence (0 and 'four' into the default 4). */
function concurrencyOf(value) {
  if (value === undefined) return 4
  if (Number.isInteger(value) && value >= 1) return value
  const got = typeof value === 'string' ? `the string ${JSON.stringify(value)}` : typeof value === 'number' ? String(value) : describe(value)
  throw toolhostError('INVALID_CONFIG', `executeToolCalls: concurrency must be a whole number >= 1, got ${got} (leave it out for the default of 4)`)
}

/**
 * Runs the tool calls of a model response through `manager` (so retries, timeouts,
 * events and audit apply), at most `concurrency` (default 4) at once, and resolves
 * `{ messages, calls, results }` with `messages` ready to send back, in call order.
 */
export async function executeToolCalls(manager, state, response, options) {
  if (options === null || typeof options !== 'object') {
    throw toolhostError('INVALID_CONFIG', "executeToolCalls: options { provider } are required, e.g. { provider: 'openai' }")
  }
  checkOptions(options, CALL_OPTIONS, 'executeToolCalls options', 'executeToolCalls: ')
  const session = sessionOf(options, 'executeToolCalls')
  if (typeof options.provider !== 'string') {
    throw toolhostError('INVALID_CONFIG', "executeToolCalls: provider must be one of 'openai', 'openai-responses', 'anthropic', 'gemini', 'ag-ui', 'mcp'")
  }
  let text
  try {
    text = responseText(response)
  } catch (e) {
    throw toolhostError('INVALID_TOOL_CALLS', `executeToolCalls: the response is not JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
  const calls = answered(state.core.parseCalls(session, options.provider, text ?? 'null'), 'executeToolCalls: ')
  // A call with `at` has arguments (a value, or OpenAI's JSON text) of a response the
  // engine could read only with a lone surrogate replaced: they are taken from JSON.parse
  // of the same text (text stays text: execute reads it as JSON.parse would).
  let copy
  for (const call of calls) {
    if (call.at === undefined) continue
    copy ??= JSON.parse(text)
    call.value = valueAt(copy, call.at)
  }
  const concurrency = concurrencyOf(options.concurrency)
  const results = new Array(calls.length)
  const callOptions = { sessionId: options.sessionId, signal: options.signal, timeoutMs: options.timeoutMs, retry: options.retry, context: options.context }
  let next = 0
  const worker = async () => {
    while (next < calls.length) {
      const k = next++
      const call = calls[k]
      // The provider's call id is the idempotency key (with a journal, a replayed response
      // gets its stored replies); an id toolhost made up for a call without one is not.
      const options = { ...callOptions, toolCallId: call.id }
      if (call.generated) options.idempotencyKey = `${call.id}:${globalThis.crypto.randomUUID()}`
      // Arguments over the limit were refused by their size as the response was read.
      if (call.refused !== undefined) results[k] = await executeRefused(manager, call.name, call.refused, options)
      else results[k] = await manager.execute(call.name, call.at === undefined ? call.arguments : call.value, options)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, worker))
  const messages = replyMessages(manager, state, session, options.provider, calls, results, 'executeToolCalls: ')
  const shown = calls.map((c) => {
    if (c.refused !== undefined) return { id: c.id, name: c.name, arguments: null }
    const args = c.at !== undefined ? c.value : c.arguments
    if (c.malformed || typeof args !== 'string') return { id: c.id, name: c.name, arguments: args }
    try {
      return { id: c.id, name: c.name, arguments: JSON.parse(args) }
    } catch {
      return { id: c.id, name: c.name, arguments: args } // a structured string argument
    }
  })
  return { messages, calls: shown, results }
}

// Thrown by an AI SDK tool's `execute`, so the AI SDK reports a tool error to the
// model: `message` is written for the model, `toolError` is the structured error,
// `cause` the handler's own error when it threw one.
function toolCallError(text, error, execution) {
  const e = new Error(text, error.cause !== undefined ? { cause: error.cause } : undefined)
  e.name = 'ToolCallError'
  e.code = error.code
  e.toolError = error
  e.execution = execution
  return e
}

// The input schema in the shape `ai`'s `jsonSchema()` returns (marked with
// `Symbol.for('vercel.ai.schema')`), built here because the package does not depend on
// `ai`. Its `validate` lets every value through: the manager validates in the engine, so
// a bad call is answered with toolhost's error text and still shows in events and audit.
const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema')

function aiSdkSchema(schema) {
  return { [AI_SDK_SCHEMA]: true, _type: undefined, jsonSchema: schema, validate: (value) => ({ success: true, value }) }
}

/** A tool's approval rule as the AI SDK's `needsApproval` (true, or a function of the
 * input), so the SDK's own approval flow asks the person; undefined when none applies.
 * The tool's own setting wins over the manager's, as in the engine.
 *
 * The SDK takes only true or false, and a throw from it rejects the whole generateText,
 * so the function keeps execute()'s rules itself: a policy that throws asks a person (the
 * throw becomes a warning); a verdict that is not true lets the SDK run the call at once,
 * and is left in `verdicts` (input -> `{ toolCallId, verdict }`) for the tool's execute,
 * whose manager then decides with it: false runs the call, anything but a boolean fails
 * it closed with INVALID_APPROVAL_POLICY, a tool error the model reads. */
function aiSdkApproval(state, manager, session, name, declared, verdicts) {
  const rule = declared !== undefined ? declared : approvalPolicies.get(manager)
  if (rule === true) return true
  if (rule === 'ask' || typeof rule === 'function') {
    const policy = rule === 'ask' ? state.approvalPredicates.get(state.core.toolId(session, name)) : rule
    if (typeof policy !== 'function') return true
    return async (input, options) => {
      const toolCallId = options !== undefined ? options.toolCallId : undefined
      let verdict
      try {
        // As execute() gives it, but before there is an execution: the SDK's
        // `experimental_context` is `ctx.context`, as it is for the call's handler.
        const context = options !== undefined ? options.experimental_context : undefined
        verdict = await policy(input, { executionId: undefined, toolCallId, sessionId: session ?? undefined, toolName: name, context, authInfo: undefined })
      } catch (err) {
        reportCallbackError(err, `the needsApproval function of '${name}'`, 'ToolhostApprovalWarning')
        return true
      }
      if (verdict === true) return true
      // The SDK hands execute the same input object; an input that is not an object is
      // decided again by the manager.
      if (input !== null && typeof input === 'object') verdicts.set(input, { toolCallId, verdict })
      return false
    }
  }
  return undefined
}

/** The content parts of the AI SDK messages of `role`. */
function* partsOf(messages, role) {
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || m.role !== role || !Array.isArray(m.content)) continue
    for (const part of m.content) if (part !== null && typeof part === 'object') yield part
  }
}

/** Whether the AI SDK messages hold an approval request for the call `toolCallId` and
 * an approving response to it: the SDK runs a call that needs approval only then. */
function approvedInMessages(messages, toolCallId) {
  if (!Array.isArray(messages) || typeof toolCallId !== 'string') return false
  const requests = new Set()
  for (const part of partsOf(messages, 'assistant')) {
    if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) requests.add(part.approvalId)
  }
  if (requests.size === 0) return false
  for (const part of partsOf(messages, 'tool')) {
    if (part.type === 'tool-approval-response' && part.approved === true && requests.has(part.approvalId)) return true
  }
  return false
}

/**
 * The tools the manager's registry shows (or a session's, with `sessionId`) as Vercel
 * AI SDK tools: pass the object as `tools` to `generateText` / `streamText`.
 */
export function toAiSdkTools(manager, options) {
  const state = stateOf(manager?.registry, 'toAiSdkTools(manager)')
  if (options !== undefined && options !== null && typeof options !== 'object') throw toolhostError('INVALID_CONFIG', 'toAiSdkTools: options must be an object')
  const o = options ?? {}
  checkOptions(o, ['sessionId'], 'toAiSdkTools options', 'toAiSdkTools: ')
  const session = sessionOf(o, 'toAiSdkTools')
  if (session !== null && !state.sessions.has(session)) {
    throw toolhostError('SESSION_NOT_FOUND', `toAiSdkTools: session '${session}' does not exist or was destroyed`)
  }
  const declarations = JSON.parse(state.core.declarations(session, null, null))
  const tools = {}
  for (const { name, description, inputSchema, metadata } of declarations) {
    const tool = { description, inputSchema: aiSdkSchema(inputSchema) }
    if (metadata.title !== undefined) tool.title = metadata.title
    const verdicts = new WeakMap()
    const needsApproval = aiSdkApproval(state, manager, session, name, metadata.needsApproval, verdicts)
    if (needsApproval !== undefined) tool.needsApproval = needsApproval
    // What the model is sent, as executeToolCalls and a toolhost MCP server send it: the
    // tool's toModelOutput, within maxOutputChars (whose note names the execution that
    // keeps the whole result: the call's, while the manager's history has it).
    if (state.modelOutputs.has(state.core.toolId(session, name)) || metadata.maxOutputChars !== undefined || outputBudgets.get(manager) !== undefined) {
      tool.toModelOutput = ({ toolCallId, output }) => {
        const ran = typeof toolCallId === 'string' ? manager.getExecutionsForToolCall(toolCallId).findLast((r) => r.toolName === name && r.status === 'succeeded') : undefined
        const execution = ran ?? { id: undefined, toolName: name, sessionId: session ?? undefined }
        const content = modelOutputOf(manager, { success: true, result: output, execution })
        if (content.length === 1 && content[0].type === 'text') return { type: 'text', value: content[0].text }
        return { type: 'content', value: content.map((part) => (part.type === 'image' ? { type: 'image-data', data: part.data, mediaType: part.mimeType } : { type: 'text', text: part.text })) }
      }
    }
    tool.execute = async (input, opts) => {
      const toolCallId = opts !== undefined ? opts.toolCallId : undefined
      const signal = opts !== undefined ? opts.abortSignal : undefined
      // The AI SDK's `experimental_context` is the handler's `ctx.context`.
      const context = opts !== undefined ? opts.experimental_context : undefined
      // Recorded approved (and not asked again) only when the SDK's approval flow asked
      // about this very call and the person approved: a call the policy let through ran
      // unasked, and a call made outside that flow is asked by toolhost itself.
      const approved = needsApproval !== undefined && approvedInMessages(opts !== undefined ? opts.messages : undefined, toolCallId) ? { by: 'vercel-ai-sdk' } : undefined
      const callOptions = { toolCallId, signal, sessionId: session ?? undefined, approved, context }
      const decided = input !== null && typeof input === 'object' ? verdicts.get(input) : undefined
      if (approved === undefined && decided !== undefined && decided.toolCallId === toolCallId) decidedApprovals.set(callOptions, decided)
      const result = await manager.execute(name, input, callOptions)
      if (result.success) return result.result
      let argumentsText = ''
      try {
        argumentsText = typeof input === 'string' ? input : JSON.stringify(input) ?? ''
      } catch {}
      throw toolCallError(modelErrorFor(manager, name, argumentsText, result, session), result.error, result.execution)
    }
    tools[name] = tool
  }
  return tools
}
