// Generated from js/ag-ui.d.ts by scripts/esm-declarations.mjs: do not edit.
// `node scripts/esm-declarations.mjs` writes it again.

// The types of toolhost/ag-ui (js/ag-ui.mjs): an AG-UI agent run with toolhost's tools.
// @ag-ui/client is an optional peer dependency: these types need it installed.

import type { AbstractAgent, Message, RunAgentParameters } from '@ag-ui/client'
import type { ExecutionRecord, ExecutionStatus, RequestContext, ToolError, ToolExecutionManager, ToolSession } from './index.js'

/** Options of `runWithTools`. Unknown keys are refused with a did-you-mean. */
export interface RunWithToolsOptions {
  /** Send and run this session's tools (its own and the global ones it sees) instead of
   * the registry's; a session id is read as `registry.getSession(id)`. */
  session?: ToolSession | string
  /** Each handler's `ctx.context` (and the interceptors' and `needsApproval`'s). */
  context?: RequestContext
  /** Cancels the run, and every execution it started; `agent.abortRun()` does the same. */
  signal?: AbortSignal
  /** Where the seed's events are dispatched (bubbling, composed): an element or any `EventTarget`. */
  host?: EventTarget
  /** How many times the agent may run; past it `runWithTools` rejects with `MAX_ROUNDS_EXCEEDED`. @default 8 */
  maxRounds?: number
  /** Given to every `agent.runAgent` call: AG-UI `context` entries, `forwardedProps`, and
   * `tools` of your own (sent after toolhost's, never run by it; a name toolhost
   * already sends is refused). */
  runParameters?: Pick<RunAgentParameters, 'tools' | 'context' | 'forwardedProps'>
}

/** What `runWithTools` resolves to. */
export interface RunWithToolsResult {
  /** How many times the agent ran. */
  rounds: number
  /** The messages added to `agent.messages` meanwhile: the agent's, the backend tools'
   * results, and toolhost's tool messages. */
  newMessages: Message[]
  /** The last run's `result` (from its RUN_FINISHED event). */
  result: unknown
  /** How the last run finished. A run that ends on an `interrupt` (or that the server
   * `cancelled`) is not run again, even when it called frontend tools: their tool
   * messages are in `agent.messages`, and you answer `agent.pendingInterrupts` with
   * `agent.runAgent({ resume })`. */
  outcome: 'success' | 'interrupt' | 'cancelled'
}

/** The error `runWithTools` rejects with. `rounds` and `newMessages` are set when it got as far as running the agent. */
export interface RunWithToolsError extends Error {
  readonly code: 'INVALID_ARGUMENTS' | 'INVALID_CONFIG' | 'INVALID_CALL' | 'SESSION_NOT_FOUND' | 'MAX_ROUNDS_EXCEEDED' | 'RUN_CANCELLED' | 'AGENT_RUN_FAILED'
  readonly rounds?: number
  readonly newMessages?: Message[]
  /** For `AGENT_RUN_FAILED`, the agent's error; for `RUN_CANCELLED`, the signal's reason. */
  readonly cause?: unknown
}

/** The detail of each event `runWithTools` dispatches on `options.host`, by type. */
export interface AgUiToolEventMap {
  /** A frontend call's execution moved to another status. */
  'ag-ui-tool-status-changed': {
    toolCallId: string
    toolCallName: string
    status: ExecutionStatus
    /** The execution record as it stands, with this event's status. */
    execution: ExecutionRecord
  }
  /** An attempt failed and another starts after `delayMs`. */
  'ag-ui-tool-retrying': {
    toolCallId: string
    toolCallName: string
    /** The attempt about to start (2 after the first one failed). */
    attemptNumber: number
    maxAttempts: number
    error: ToolError
    delayMs: number
  }
  /** The call succeeded. */
  'ag-ui-tool-call-end': {
    toolCallId: string
    toolCallName: string
    /** The arguments the handler received. */
    toolCallArgs: unknown
    result: unknown
    execution: ExecutionRecord
  }
  /** The call failed, was denied or was cancelled. */
  'ag-ui-tool-call-error': {
    toolCallId: string
    toolCallName: string
    error: ToolError
    execution: ExecutionRecord
  }
}

export type AgUiToolEventType = keyof AgUiToolEventMap

/** A `CustomEvent` `runWithTools` dispatches on `options.host`. */
export type AgUiToolEvent<T extends AgUiToolEventType = AgUiToolEventType> = CustomEvent<AgUiToolEventMap[T]> & { readonly type: T }

/**
 * Runs `agent` (any `@ag-ui/client` `AbstractAgent`, `HttpAgent` included) with the
 * tools of `manager.registry` (or of `options.session`) as its frontend tools, until a
 * run ends with no frontend call left unanswered.
 *
 * Each run sends toolhost's tools (`toAgUiTools()`) with `runParameters.tools`. A call
 * of one of them runs through `manager.execute` as soon as its `TOOL_CALL_END`
 * arrives (validation, retries, timeouts, approval, events, records); any other call
 * is the server's and is left alone, unless the server lists it as pending
 * (`RUN_FINISHED` `outcome.pendingToolCallIds`) and `runParameters.tools` does not
 * name it: that made-up name gets the engine's unknown-tool reply. When the run has
 * ended and its calls have settled, each gets one tool message in `agent.messages`
 * (success or failure, as `executeToolCalls` writes them; none when the server
 * answered it itself), and the agent runs again.
 */
export declare function runWithTools(agent: AbstractAgent, manager: ToolExecutionManager, options?: RunWithToolsOptions): Promise<RunWithToolsResult>

declare global {
  interface HTMLElementEventMap {
    'ag-ui-tool-status-changed': AgUiToolEvent<'ag-ui-tool-status-changed'>
    'ag-ui-tool-retrying': AgUiToolEvent<'ag-ui-tool-retrying'>
    'ag-ui-tool-call-end': AgUiToolEvent<'ag-ui-tool-call-end'>
    'ag-ui-tool-call-error': AgUiToolEvent<'ag-ui-tool-call-error'>
  }
}
