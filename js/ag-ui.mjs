// toolhost/ag-ui: runs an AG-UI agent (any @ag-ui/client AbstractAgent, HttpAgent
// included) with a registry's tools as its frontend tools.
//
// Each run sends the registry's tools (`toAgUiTools()`, or a session's) with the
// caller's own. A frontend call runs through `manager.execute` as soon as its
// TOOL_CALL_END arrives, while the server may still be streaming, so validation,
// retries, timeouts, approval, events and records apply. A call whose name toolhost did
// not send is the server's (a backend tool) and is left alone, unless the server says
// it waits for the application (RUN_FINISHED's pendingToolCallIds) and the caller did
// not send it either: then the model made the name up, and it gets the engine's
// unknown-tool reply. A frontend call the server answered itself (TOOL_CALL_RESULT)
// keeps that answer alone. When the run has ended
// and every frontend call has settled, each gets one tool message, written by the
// engine as `executeToolCalls` writes them, and the agent runs again, until a run ends
// with no frontend call in it.
//
// Nothing here imports @ag-ui/client (an optional peer dependency): the agent is used
// through its own methods (runAgent, messages, addMessages, abortRun).
import { checkOptions, describe, toolhostError } from './errors.mjs'
import { executionIdListeners } from './manager.mjs'
import { repliesFor } from './tool-calls.mjs'

const OPTIONS = ['session', 'context', 'signal', 'host', 'maxRounds', 'runParameters']
const RUN_PARAMETERS = ['tools', 'context', 'forwardedProps']

/** What the agent sent that runWithTools ignored: a process warning in Node
 * (`ToolhostAgUiWarning`), the console's elsewhere. */
function warn(message) {
  try {
    if (typeof globalThis.process?.emitWarning === 'function') globalThis.process.emitWarning(message, 'ToolhostAgUiWarning')
    else console.warn(message)
  } catch {}
}

/** Agents a runWithTools is running. */
const running = new WeakSet()

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const shapeOf = (v) => (Array.isArray(v) ? 'an array' : describe(v))

/** `runParameters`, checked as far as AG-UI's RunAgentInput will check it, so a mistake
 * is refused before anything runs instead of failing the run (HttpAgent's schema). */
function checkRunParameters(parameters) {
  if (!isObject(parameters)) throw toolhostError('INVALID_CONFIG', `runWithTools: runParameters must be an object { tools, context, forwardedProps }, got ${shapeOf(parameters)}`)
  checkOptions(parameters, RUN_PARAMETERS, 'runWithTools runParameters', 'runWithTools: ')
  const { tools, context, forwardedProps } = parameters
  if (tools !== undefined) {
    if (!Array.isArray(tools)) throw toolhostError('INVALID_CONFIG', `runWithTools: runParameters.tools must be an array of AG-UI tools ({ name, description, parameters }), got ${shapeOf(tools)}`)
    const names = new Set()
    tools.forEach((tool, i) => {
      const at = `runWithTools: runParameters.tools[${i}]`
      if (!isObject(tool)) throw toolhostError('INVALID_CONFIG', `${at} must be an AG-UI tool ({ name, description, parameters }), got ${shapeOf(tool)}`)
      if (typeof tool.name !== 'string' || tool.name === '') throw toolhostError('INVALID_CONFIG', `${at}.name must be a non-empty string, got ${shapeOf(tool.name)}`)
      if (typeof tool.description !== 'string') throw toolhostError('INVALID_CONFIG', `${at}.description (of '${tool.name}') must be a string, got ${shapeOf(tool.description)}`)
      if (tool.parameters !== undefined && !isObject(tool.parameters)) throw toolhostError('INVALID_CONFIG', `${at}.parameters (of '${tool.name}') must be a JSON Schema object, got ${shapeOf(tool.parameters)}`)
      if (names.has(tool.name)) throw toolhostError('INVALID_CONFIG', `${at}: runParameters.tools has two tools named '${tool.name}'`)
      names.add(tool.name)
    })
  }
  if (context !== undefined) {
    if (!Array.isArray(context)) throw toolhostError('INVALID_CONFIG', `runWithTools: runParameters.context must be an array of AG-UI context entries ({ description, value }, both strings), got ${shapeOf(context)}`)
    context.forEach((entry, i) => {
      if (!isObject(entry) || typeof entry.description !== 'string' || typeof entry.value !== 'string') {
        throw toolhostError('INVALID_CONFIG', `runWithTools: runParameters.context[${i}] must be { description, value }, both strings, got ${isObject(entry) ? `{ ${Object.keys(entry).join(', ')} }` : shapeOf(entry)}`)
      }
    })
  }
  if (forwardedProps !== undefined && !isObject(forwardedProps)) throw toolhostError('INVALID_CONFIG', `runWithTools: runParameters.forwardedProps must be an object (props for the server), got ${shapeOf(forwardedProps)}`)
  return parameters
}

const isAbortSignal = (s) => s !== null && typeof s === 'object' && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function'

/** The options, checked; throws `INVALID_CONFIG` (or `SESSION_NOT_FOUND`) naming the problem. */
function checked(agent, manager, options) {
  if (agent === null || typeof agent !== 'object' || typeof agent.runAgent !== 'function' || !Array.isArray(agent.messages)) {
    throw toolhostError('INVALID_ARGUMENTS', `runWithTools(agent, manager) takes an @ag-ui/client agent (an AbstractAgent such as HttpAgent) as agent, got ${describe(agent)}${agent !== null && typeof agent === 'object' ? ' without runAgent() and messages' : ''}`)
  }
  if (manager === null || typeof manager !== 'object' || typeof manager.execute !== 'function' || manager.registry === undefined) {
    throw toolhostError('INVALID_ARGUMENTS', `runWithTools(agent, manager) takes a ToolExecutionManager as manager, got ${describe(manager)}`)
  }
  if (options !== undefined && options !== null && !isObject(options)) throw toolhostError('INVALID_CONFIG', `runWithTools: options must be an object, got ${shapeOf(options)}`)
  const o = options ?? {}
  checkOptions(o, OPTIONS, 'runWithTools options', 'runWithTools: ')
  const maxRounds = o.maxRounds ?? 8
  if (!Number.isInteger(maxRounds) || maxRounds < 1) throw toolhostError('INVALID_CONFIG', `runWithTools: maxRounds must be a whole number of runs, 1 or more, got ${typeof maxRounds === 'number' ? maxRounds : describe(maxRounds)}`)
  if (o.signal !== undefined && o.signal !== null && !isAbortSignal(o.signal)) throw toolhostError('INVALID_CONFIG', 'runWithTools: signal must be an AbortSignal')
  if (o.host !== undefined && o.host !== null && typeof o.host?.dispatchEvent !== 'function') {
    throw toolhostError('INVALID_CONFIG', `runWithTools: host must be an element or another EventTarget, got ${describe(o.host)}`)
  }
  let session = o.session ?? undefined
  if (typeof session === 'string') {
    const found = manager.registry.getSession(session)
    if (found === undefined) throw toolhostError('SESSION_NOT_FOUND', `runWithTools: session '${session}' does not exist or was destroyed`)
    session = found
  } else if (session !== undefined) {
    if (typeof session !== 'object' || typeof session.toAgUiTools !== 'function') throw toolhostError('INVALID_CONFIG', `runWithTools: session must be a ToolSession or a session id, got ${describe(session)}`)
    if (session.registry !== manager.registry) throw toolhostError('INVALID_CONFIG', "runWithTools: the session belongs to another registry than the manager's")
    if (!session.alive) throw toolhostError('SESSION_NOT_FOUND', `runWithTools: session '${session.id}' was destroyed`)
  }
  const parameters = checkRunParameters(o.runParameters ?? {})
  return { maxRounds, signal: o.signal ?? undefined, host: o.host ?? undefined, session, context: o.context, parameters }
}

/** The tools a run sends: toolhost's, then the caller's, which may not reuse a name. */
function toolsOfRun(scope, parameters) {
  const ours = scope.toAgUiTools()
  const names = new Set(ours.map((t) => t.name))
  for (const tool of parameters.tools ?? []) {
    if (names.has(tool?.name)) throw toolhostError('INVALID_CONFIG', `runWithTools: runParameters.tools has a tool named '${tool.name}', which toolhost already sends and runs: remove it from runParameters.tools`)
  }
  return { tools: [...ours, ...(parameters.tools ?? [])], names }
}

/** A rejection of execute (a caller's mistake, which runWithTools does not make) as a result. */
function refusedResult(err) {
  const error = { category: 'unknown', code: typeof err?.code === 'string' ? err.code : 'UNKNOWN', message: String(err?.message ?? err), retryable: false }
  return { success: false, error, execution: undefined }
}

/**
 * The frontend calls of one run: their argument text as it streams, each executed
 * when it ends. `settled()` waits for them all and gives `[calls, results]` in the
 * order the calls started, with the made-up ones (see `settled`) but for those the
 * server answered itself (their execution still ran, and was recorded and reported); a
 * call that never ended is run with an aborted signal, so it ends `cancelled`
 * (recorded, reported and answered as any cancelled call).
 */
class Round {
  /** The calls answered here, in the order they started. */
  #calls = []
  #open = new Map()
  /** Calls to tools toolhost did not send, while the run streams: id -> call. */
  #others = new Map()
  /** Ids of the calls the server answered itself (TOOL_CALL_RESULT). */
  #answered = new Set()
  /** The calls the server says wait for the application (RUN_FINISHED). */
  #pending = []
  #starts = 0
  /** Every tool call id started in this run, and those started again (not run). */
  #ids = new Set()
  #ignored = new Set()
  #names
  #own
  #run
  #number

  /** `names`: toolhost's tools in this run; `own`: the caller's (runParameters.tools);
   * `number`: which run of the loop it is. */
  constructor(names, own, run, number) {
    this.#names = names
    this.#own = own
    this.#run = run
    this.#number = number
    this.subscriber = {
      onToolCallStartEvent: ({ event }) => {
        // An id already used in this run: the agent merges the second call into the first
        // (one tool call, the argument texts run together), which has, or will have, its
        // one execution and tool message. The second is not run.
        if (this.#ids.has(event.toolCallId)) {
          this.#ignored.add(event.toolCallId)
          warn(`runWithTools: run ${this.#number} started tool call '${event.toolCallId}' (${event.toolCallName}) a second time; a tool call id is answered once, so the second was not run and its arguments were ignored`)
          return
        }
        this.#ids.add(event.toolCallId)
        const call = { id: event.toolCallId, name: event.toolCallName, arguments: '', result: undefined, start: this.#starts++ }
        if (!this.#names.has(event.toolCallName)) {
          this.#others.set(call.id, call)
          return
        }
        this.#calls.push(call)
        this.#open.set(call.id, call)
      },
      onToolCallArgsEvent: ({ event }) => {
        if (this.#ignored.has(event.toolCallId)) return
        const call = this.#open.get(event.toolCallId) ?? this.#others.get(event.toolCallId)
        if (call !== undefined) call.arguments += event.delta
      },
      onToolCallEndEvent: ({ event }) => {
        const call = this.#open.get(event.toolCallId)
        if (call === undefined) return
        this.#open.delete(call.id)
        call.result = this.#run(call, false)
      },
      // The agent adds the server's answer as a tool message: a frontend call it answers
      // gets no second one.
      onToolCallResultEvent: ({ event }) => {
        this.#answered.add(event.toolCallId)
      },
      // A RUN_ERROR event ends the run without failing runAgent: it is the run's failure.
      onRunErrorEvent: ({ event }) => {
        this.failure = Object.assign(new Error(event.message), { name: 'RunError', code: event.code, event })
      },
      onRunFinishedEvent: ({ event, outcome }) => {
        this.outcome = outcome
        const pending = event?.outcome?.type === 'success' ? event.outcome.pendingToolCallIds : undefined
        if (Array.isArray(pending)) this.#pending = pending
      },
    }
    /** The run's error (thrown by runAgent, or a RUN_ERROR event). */
    this.failure = undefined
    /** `success`, `interrupt` or `cancelled`, from RUN_FINISHED. */
    this.outcome = undefined
  }

  async settled() {
    for (const call of this.#open.values()) call.result = this.#run(call, true)
    this.#open.clear()
    // A call the server says waits for the application (pendingToolCallIds) to a tool
    // nobody sent, toolhost nor the caller: the model made the name up. It is answered
    // as executeToolCalls answers an unknown tool, so the model can correct itself.
    for (const id of this.#pending) {
      const call = this.#others.get(id)
      if (call === undefined || this.#answered.has(id) || this.#own.has(call.name)) continue
      this.#others.delete(id)
      call.result = this.#run(call, false)
      this.#calls.push(call)
    }
    this.#calls.sort((a, b) => a.start - b.start)
    const results = await Promise.all(this.#calls.map((c) => c.result))
    const ours = []
    const outcomes = []
    this.#calls.forEach((call, k) => {
      if (this.#answered.has(call.id)) return
      ours.push(call)
      outcomes.push(results[k])
    })
    return [ours, outcomes]
  }
}

/** The seed's events on `host`, from the manager's events of the executions this run
 * started: `ag-ui-tool-status-changed` and `ag-ui-tool-retrying` as they happen,
 * `ag-ui-tool-call-end` or `ag-ui-tool-call-error` when a call has settled. */
class HostEvents {
  #host
  #manager
  /** executionId -> { call, status }, for this run's executions only (the manager may
   * run another runWithTools' calls, with the same tool call ids, at the same time). */
  #bound = new Map()
  #off = []

  constructor(host, manager) {
    this.#host = host
    this.#manager = manager
    const on = (type, fn) => this.#off.push(manager.on(`tool-execution-${type}`, fn))
    on('started', ({ execution }) => this.#status(execution.id, 'pending', execution))
    on('validating', ({ executionId }) => this.#status(executionId, 'validating'))
    on('approval-requested', ({ execution }) => this.#status(execution.id, 'awaiting-approval', execution))
    on('executing', ({ executionId }) => this.#status(executionId, 'executing'))
    on('retrying', ({ executionId, attemptNumber, maxAttempts, error, delayMs }) => {
      const bound = this.#bound.get(executionId)
      if (bound === undefined) return
      this.#dispatch('ag-ui-tool-retrying', { toolCallId: bound.call.id, toolCallName: bound.call.name, attemptNumber, maxAttempts, error, delayMs })
    })
    on('succeeded', ({ execution }) => this.#status(execution.id, 'succeeded', execution))
    on('failed', ({ execution }) => this.#status(execution.id, 'failed', execution))
    on('cancelled', ({ executionId }) => this.#status(executionId, 'cancelled'))
  }

  /** The function told the id of `call`'s execution (given to `execute` through
   * `executionIdListeners`), before its `started` event. */
  expect(call) {
    return (executionId) => this.#bound.set(executionId, { call, status: undefined })
  }

  settled(call, result) {
    if (result.execution !== undefined) this.#bound.delete(result.execution.id)
    if (result.success) {
      this.#dispatch('ag-ui-tool-call-end', { toolCallId: call.id, toolCallName: call.name, toolCallArgs: result.execution.args, result: result.result, execution: result.execution })
    } else {
      this.#dispatch('ag-ui-tool-call-error', { toolCallId: call.id, toolCallName: call.name, error: result.error, execution: result.execution })
    }
  }

  #status(executionId, status, record) {
    const bound = this.#bound.get(executionId)
    if (bound === undefined || bound.status === status) return
    bound.status = status
    // The record as it stands, with the status this event reports (the engine may
    // already be a step further when several steps came from one engine call).
    let execution = record ?? this.#manager.getExecution(executionId)
    if (execution !== undefined && execution.status !== status) execution = { ...execution, status }
    this.#dispatch('ag-ui-tool-status-changed', { toolCallId: bound.call.id, toolCallName: bound.call.name, status, execution })
  }

  #dispatch(type, detail) {
    this.#host.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }))
  }

  close() {
    for (const off of this.#off) off()
  }
}

/**
 * Runs `agent` with the tools of `manager.registry` (or of `options.session`) until a
 * run ends with no frontend call left unanswered. Resolves `{ rounds, newMessages,
 * result, outcome }`; rejects with a coded error for a caller's mistake (`INVALID_ARGUMENTS`,
 * `INVALID_CONFIG`, `SESSION_NOT_FOUND`, `INVALID_CALL`; `SESSION_NOT_FOUND` too when the
 * session is destroyed between runs), past `maxRounds`
 * (`MAX_ROUNDS_EXCEEDED`), when cancelled (`RUN_CANCELLED`) and when a run fails
 * (`AGENT_RUN_FAILED`, the agent's error as `cause`). Every frontend call it started
 * has its tool message in `agent.messages` however it ends.
 */
export async function runWithTools(agent, manager, options) {
  const { maxRounds, signal, host, session, context, parameters } = checked(agent, manager, options)
  if (running.has(agent) || agent.isRunning === true) throw toolhostError('INVALID_CALL', 'runWithTools: this agent is already running; wait for its run to end before starting another')
  const scope = session ?? manager.registry
  const sessionId = session?.id
  const before = new Set(agent.messages.map((m) => m?.id))
  const newMessages = () => agent.messages.filter((m) => !before.has(m?.id))
  let rounds = 0

  // One signal for every execution this starts: aborted by `signal` or `agent.abortRun()`.
  const stop = new AbortController()
  let stoppedBy
  const ownAbortRun = Object.prototype.hasOwnProperty.call(agent, 'abortRun')
  const abortRun = agent.abortRun
  const cancel = (by, reason) => {
    if (stoppedBy !== undefined) return
    stoppedBy = by
    stop.abort(reason)
  }
  // An agent whose abortRun() does nothing (AbstractAgent's own) still stops delivering
  // the run's events: its runAgent resolves.
  const detach = () => {
    try {
      if (typeof agent.detachActiveRun === 'function') Promise.resolve(agent.detachActiveRun()).catch(() => {})
    } catch {}
  }
  const onSignal = () => {
    cancel('options.signal', signal.reason)
    try {
      if (typeof abortRun === 'function') abortRun.call(agent)
    } catch {}
    detach()
  }
  const wrappedAbortRun = function (...args) {
    cancel('agent.abortRun()', undefined)
    try {
      return typeof abortRun === 'function' ? abortRun.apply(this, args) : undefined
    } finally {
      detach()
    }
  }
  const cancelled = () => toolhostError('RUN_CANCELLED', `runWithTools: cancelled by ${stoppedBy} ${rounds === 0 ? 'before the first run' : `during run ${rounds}`}; each frontend call it started has its tool message in agent.messages`, { rounds, newMessages: newMessages(), cause: stop.signal.reason })
  if (signal?.aborted) {
    stoppedBy = 'options.signal'
    stop.abort(signal.reason)
    throw cancelled()
  }

  const events = host === undefined ? undefined : new HostEvents(host, manager)
  const execute = (call, unfinished) => {
    // A call whose arguments never ended is not run: an aborted signal ends it cancelled.
    const callSignal = unfinished ? AbortSignal.abort() : stop.signal
    const callOptions = { toolCallId: call.id, sessionId, signal: callSignal, context }
    if (events !== undefined) executionIdListeners.set(callOptions, events.expect(call))
    return manager.execute(call.name, call.arguments, callOptions)
      .then((r) => r, refusedResult)
      .then((r) => {
        events?.settled(call, r)
        return r
      })
  }

  running.add(agent)
  try {
    agent.abortRun = wrappedAbortRun
    signal?.addEventListener('abort', onSignal, { once: true })
    let result
    for (;;) {
      if (rounds === maxRounds) {
        throw toolhostError('MAX_ROUNDS_EXCEEDED', `runWithTools: after ${maxRounds} runs (maxRounds) the agent still called frontend tools; their tool messages are in agent.messages. Raise maxRounds, or call runWithTools again to go on`, { rounds, newMessages: newMessages() })
      }
      // A session destroyed since the last run has no tools left to send or run: the
      // next run would go without them and leave their calls unanswered.
      if (session !== undefined && !session.alive) {
        throw toolhostError('SESSION_NOT_FOUND', `runWithTools: session '${session.id}' was destroyed ${rounds === 0 ? 'before the first run' : `after run ${rounds}`}; each frontend call it started has its tool message in agent.messages`, { rounds, newMessages: newMessages() })
      }
      rounds++
      const { tools, names } = toolsOfRun(scope, parameters)
      const round = new Round(names, new Set((parameters.tools ?? []).map((t) => t.name)), execute, rounds)
      try {
        const run = await agent.runAgent({ ...parameters, tools }, round.subscriber)
        result = run?.result
      } catch (err) {
        round.failure = err
      }
      const failure = round.failure
      // Nobody will read what a failed run's calls return: they end cancelled.
      if (failure !== undefined) stop.abort(failure)
      const [calls, results] = await round.settled()
      // A made-up name's reply lists every tool the run sent, the caller's too.
      const sent = parameters.tools?.length > 0 ? tools.map((t) => t.name) : undefined
      if (calls.length > 0) agent.addMessages(repliesFor(manager, sessionId, 'ag-ui', calls, results, sent))
      if (stoppedBy !== undefined) throw cancelled()
      if (failure !== undefined) {
        throw toolhostError('AGENT_RUN_FAILED', `runWithTools: run ${rounds} of the agent failed: ${failure?.message ?? String(failure)}`, { rounds, newMessages: newMessages(), cause: failure })
      }
      // A run that ended on an interrupt (or that the server cancelled) is not run again:
      // the caller answers the interrupts (agent.pendingInterrupts) with runAgent({ resume }).
      const outcome = round.outcome ?? 'success'
      if (calls.length === 0 || outcome !== 'success') return { rounds, newMessages: newMessages(), result, outcome }
    }
  } finally {
    signal?.removeEventListener('abort', onSignal)
    if (agent.abortRun === wrappedAbortRun) {
      if (ownAbortRun) agent.abortRun = abortRun
      else delete agent.abortRun
    }
    running.delete(agent)
    events?.close()
  }
}
