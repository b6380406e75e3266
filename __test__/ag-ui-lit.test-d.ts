// Type tests for toolhost/ag-ui (js/ag-ui.d.ts) and toolhost/lit (js/lit.d.ts), checked
// by `tsc -p tsconfig.json` in `npm test`. Nothing here runs: each line without
// `@ts-expect-error` must compile, and each `@ts-expect-error` line must fail to.

import { HttpAgent } from '@ag-ui/client'
import type { Message } from '@ag-ui/client'
import { ToolExecutionManager, ToolRegistry } from 'toolhost'
import type { ExecutionRecord, ExecutionStatus, RequestContext, ToolError } from 'toolhost'
import { runWithTools } from 'toolhost/ag-ui'
import type { AgUiToolEvent, AgUiToolEventMap, RunWithToolsError, RunWithToolsResult } from 'toolhost/ag-ui'
import { ToolhostActivity, ToolhostApprovals } from 'toolhost/lit'
import type { ApprovalDecidedDetail } from 'toolhost/lit'

const registry = new ToolRegistry()
const manager = new ToolExecutionManager(registry)
const agent = new HttpAgent({ url: 'http://127.0.0.1:1/agent' })

export async function options(host: HTMLElement, signal: AbortSignal, context: RequestContext) {
  const session = registry.createSession()
  const done: RunWithToolsResult = await runWithTools(agent, manager, {
    session,
    context,
    signal,
    host,
    maxRounds: 4,
    runParameters: { forwardedProps: { script: 'weekend' }, context: [{ description: 'locale', value: 'pt-PT' }], tools: [{ name: 'own', description: 'x', parameters: {} }] },
  })
  const rounds: number = done.rounds
  const messages: Message[] = done.newMessages
  await runWithTools(agent, manager, { session: session.id })
  await runWithTools(agent, manager)
  // @ts-expect-error: a misspelt option is a type error (and refused at run time)
  await runWithTools(agent, manager, { maxRound: 3 })
  // @ts-expect-error: maxRounds is a number
  await runWithTools(agent, manager, { maxRounds: '3' })
  // @ts-expect-error: the agent is an AbstractAgent, not a URL
  await runWithTools('http://127.0.0.1:1/agent', manager)
  // @ts-expect-error: runParameters takes no runId (each run has its own)
  await runWithTools(agent, manager, { runParameters: { runId: 'r1' } })
  return [rounds, messages]
}

export function errors(error: unknown) {
  const e = error as RunWithToolsError
  if (e.code === 'MAX_ROUNDS_EXCEEDED' || e.code === 'RUN_CANCELLED') return e.newMessages?.length
  // @ts-expect-error: not one of runWithTools' codes
  if (e.code === 'MAX_ROUNDS') return 0
  return e.rounds
}

export function hostEvents(host: HTMLElement) {
  host.addEventListener('ag-ui-tool-status-changed', (event) => {
    const status: ExecutionStatus = event.detail.status
    const record: ExecutionRecord = event.detail.execution
    const id: string = event.detail.toolCallId
    return [status, record, id]
  })
  host.addEventListener('ag-ui-tool-retrying', (event) => {
    const n: number = event.detail.attemptNumber + event.detail.maxAttempts + event.detail.delayMs
    const error: ToolError = event.detail.error
    return [n, error]
  })
  host.addEventListener('ag-ui-tool-call-end', (event) => [event.detail.toolCallArgs, event.detail.result, event.detail.execution.id])
  host.addEventListener('ag-ui-tool-call-error', (event) => {
    const code: string = event.detail.error.code
    // @ts-expect-error: a failed call has no result in its detail
    return [code, event.detail.result]
  })
  const typed: AgUiToolEvent<'ag-ui-tool-call-end'>['detail'] = { toolCallId: 'c', toolCallName: 't', toolCallArgs: {}, result: 1, execution: {} as ExecutionRecord }
  const map: AgUiToolEventMap['ag-ui-tool-retrying']['toolCallName'] = 'x'
  return [typed, map]
}

export function elements() {
  const approvals = document.createElement('toolhost-approvals')
  const approvalsTyped: ToolhostApprovals = approvals
  approvals.manager = manager
  approvals.by = 'ana@example.com'
  approvals.denyReason = 'Not now'
  approvals.addEventListener('toolhost-approval-decided', (event) => {
    const detail: ApprovalDecidedDetail = event.detail
    const decision: 'approved' | 'denied' = detail.decision
    return decision
  })
  const activity = document.createElement('toolhost-activity')
  const activityTyped: ToolhostActivity = activity
  activity.manager = manager
  activity.limit = 10
  // @ts-expect-error: limit is a number
  activity.limit = 'ten'
  // @ts-expect-error: the manager is a ToolExecutionManager
  approvals.manager = registry
  return [approvalsTyped, activityTyped]
}
