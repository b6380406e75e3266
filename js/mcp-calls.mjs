// The MCP calls a manager runs for toolhost's servers, while they are in flight: what
// only the MCP side knows of an execution (the client's progress token, the connection
// it came on, how its approval is decided), found by the execution's `toolCallId`.
//
// One progress listener and one approval listener per manager, held only while MCP
// calls are in flight, serve every connection: a listener per session made each
// progress report cost one lookup per session that ever asked for progress (500
// sessions: 17.9 s of JS thread for 1,000 reports), kept them after the sessions were
// gone, and warned MaxListenersExceeded from the 11th session.
//
// Approval over MCP fails closed: a call that waits for approval waits at most
// `approvalTimeoutMs` (unless the tool or manager sets its own), a connection holds at
// most `maxPendingApprovals` waiting calls, and a call whose client went away is
// cancelled by its server. `approval` says who decides: the manager's own approve() and
// deny() ('manager'), the MCP client through elicitation ('elicit'), nobody ('deny') or
// everybody ('allow').

import { reportCallbackError } from './errors.mjs'

const PROGRESS = 'tool-execution-progress'
const APPROVAL = 'tool-execution-approval-requested'

/** Who decides approvals of calls that arrive over MCP. */
export const APPROVAL_MODES = ['manager', 'elicit', 'deny', 'allow']

/** Defaults of the approval limits of an MCP connection. */
export const APPROVAL_DEFAULTS = { approvalTimeoutMs: 300_000, maxPendingApprovals: 16 }

/** The longest delay setTimeout takes (longer ones fire at once). */
const LONGEST_TIMER = 2 ** 31 - 1

const watchers = new WeakMap()

/** The calls of one manager, and its two listeners. */
class Watcher {
  /** toolCallId -> call */
  calls = new Map()
  /** executionId -> call, learnt from the first progress report of each. */
  byExecution = new Map()
  #manager
  #offProgress = null
  #offApproval = null
  #withToken = 0

  constructor(manager) {
    this.#manager = manager
  }

  add(call) {
    this.calls.set(call.toolCallId, call)
    if (call.token !== undefined && this.#withToken++ === 0) this.#offProgress = this.#manager.on(PROGRESS, (d) => this.#progress(d))
    if (this.#offApproval === null) this.#offApproval = this.#manager.on(APPROVAL, (d) => this.#approval(d))
  }

  remove(call) {
    if (this.calls.get(call.toolCallId) !== call) return
    this.calls.delete(call.toolCallId)
    if (call.executionId !== undefined) this.byExecution.delete(call.executionId)
    if (call.timer !== undefined) clearTimeout(call.timer)
    // An elicitation still open is cancelled with its call.
    call.asking?.abort(new Error('the call it asked about ended'))
    if (call.token !== undefined && --this.#withToken === 0) {
      this.#offProgress()
      this.#offProgress = null
    }
    if (this.calls.size === 0) {
      this.#offApproval()
      this.#offApproval = null
    }
  }

  /** The call an execution belongs to, checked against its record (an execution not
   * started by this call, whatever its toolCallId, is not it). */
  #callOf(executionId, record) {
    let call = this.byExecution.get(executionId)
    if (call !== undefined) return call
    record ??= this.#manager.getExecution(executionId)
    if (record === undefined || record.toolCallId === undefined) return undefined
    call = this.calls.get(record.toolCallId)
    if (call === undefined || call.executionId !== undefined || record.sessionId !== call.sessionId) return undefined
    call.executionId = executionId
    this.byExecution.set(executionId, call)
    return call
  }

  #progress(d) {
    const call = this.#callOf(d.executionId)
    if (call === undefined || call.token === undefined) return
    const params = { progressToken: call.token, progress: d.progress }
    if (typeof d.total === 'number') params.total = d.total
    if (typeof d.message === 'string') params.message = d.message
    call.notify({ method: 'notifications/progress', params }).catch(() => {})
  }

  #approval({ execution, approvalId }) {
    const call = this.#callOf(execution.id, execution)
    if (call === undefined) return
    call.approvalId = approvalId
    // Decided after the event is delivered: the manager is still dispatching it.
    queueMicrotask(() => {
      const failed = (err) => reportCallbackError(err, 'deciding an approval over MCP', 'ToolhostMcpWarning')
      try {
        // A journaled manager's pendingApprovals() is a journal answer: decided later.
        call.connection.decide(this.#manager, call, execution, approvalId)?.then(undefined, failed)
      } catch (err) {
        failed(err)
      }
    })
  }
}

/** Follows `call` (`{ toolCallId, sessionId, token?, notify, connection, ... }`) until the
 * returned function is called. */
export function track(manager, call) {
  let w = watchers.get(manager)
  if (w === undefined) watchers.set(manager, (w = new Watcher(manager)))
  w.add(call)
  return () => w.remove(call)
}

/** Whether a call of `manager` with this `toolCallId` is in flight. */
export function inFlight(manager, toolCallId) {
  return watchers.get(manager)?.calls.has(toolCallId) === true
}

/** One MCP connection's approval rules: `{ approval, approvalTimeoutMs, maxPendingApprovals }`
 * and, for 'elicit', `ask(call, message)` resolving the client's answer. */
export class ApprovalRules {
  constructor(options, ask) {
    this.approval = options.approval ?? 'manager'
    this.timeoutMs = options.approvalTimeoutMs ?? APPROVAL_DEFAULTS.approvalTimeoutMs
    this.maxPending = options.maxPendingApprovals ?? APPROVAL_DEFAULTS.maxPendingApprovals
    this.ask = ask
    /** Calls of this connection, for the pending count. */
    this.calls = new Set()
  }

  /** Decides (or starts deciding) `call`'s approval; a Promise when the manager's
   * pendingApprovals() is one (a journaled manager asks its journal). */
  decide(manager, call, execution, approvalId) {
    if (this.approval === 'deny') return answer(manager, approvalId, false, 'this MCP server does not take approvals (approval: \'deny\')')
    if (this.approval === 'allow') return answer(manager, approvalId, true, "toolhost/mcp (approval: 'allow')")
    const pending = manager.pendingApprovals()
    if (typeof pending?.then === 'function') return pending.then((list) => this.#wait(manager, call, execution, approvalId, list))
    this.#wait(manager, call, execution, approvalId, pending)
  }

  /** Bounds the wait of a call that needs a decision, and asks for one ('elicit'). */
  #wait(manager, call, execution, approvalId, approvals) {
    const deny = (reason) => answer(manager, approvalId, false, reason)
    // Its call ended while the journal answered: nothing to do.
    if (!this.calls.has(call)) return
    const waiting = new Map(approvals.map((p) => [p.approvalId, p]))
    const mine = waiting.get(approvalId)
    // Decided (or ended) meanwhile: nothing to do.
    if (mine === undefined) return
    let pending = 0
    for (const c of this.calls) if (c.approvalId !== undefined && waiting.has(c.approvalId)) pending++
    if (pending > this.maxPending) return deny(`more than ${this.maxPending} calls of this MCP session wait for approval (maxPendingApprovals)`)
    // How long the wait may last: the tool's or manager's bound, else approvalTimeoutMs.
    let bound = this.timeoutMs
    if (mine.expiresAt !== undefined) bound = Math.max(0, mine.expiresAt - Date.now())
    else if (Number.isFinite(this.timeoutMs)) {
      // Neither the tool nor the manager bounds the wait: calls over MCP wait this long.
      call.timer = setTimeout(() => {
        call.asking?.abort(new Error(`nobody answered within ${this.timeoutMs} ms (approvalTimeoutMs)`))
        deny(`nobody answered within ${this.timeoutMs} ms (approvalTimeoutMs of calls over MCP)`)
      }, Math.min(this.timeoutMs, LONGEST_TIMER))
      call.timer.unref?.()
    }
    if (this.approval === 'elicit') this.#elicit(manager, call, execution, approvalId, bound)
  }

  /** Asks the client. The elicitation lasts as long as the wait (the SDK's own default
   * cut it at 60 s): a second past `bound`, so the wait's end says why, and it is
   * cancelled when the wait ends first (timed out, or the call ended). */
  #elicit(manager, call, execution, approvalId, bound) {
    let args = ''
    try {
      args = JSON.stringify(execution.args) ?? ''
    } catch {}
    if (args.length > 2000) args = `${args.slice(0, 2000)}…`
    const message = `Allow the tool '${execution.toolName}' to run with these arguments?\n${args}`
    call.asking = new AbortController()
    const timeout = Math.min(bound + 1000, LONGEST_TIMER)
    this.ask(call, message, { signal: call.asking.signal, timeout }).then(
      (r) => {
        if (r === undefined) answer(manager, approvalId, false, 'the MCP client cannot be asked (it does not support elicitation)')
        else if (r.action === 'accept') answer(manager, approvalId, true, 'the MCP client')
        else answer(manager, approvalId, false, `the MCP client answered ${r.action}`)
      },
      (err) => answer(manager, approvalId, false, `asking the MCP client failed: ${err instanceof Error ? err.message : String(err)}`),
    )
  }
}

/** Approves or denies, unless someone else already did (or the call ended). A
 * journaled manager answers with a Promise: its rejection is handled the same way. */
function answer(manager, approvalId, approve, text) {
  const failed = (err) => {
    if (err?.code !== 'APPROVAL_NOT_FOUND') reportCallbackError(err, `${approve ? 'approving' : 'denying'} a call over MCP`, 'ToolhostMcpWarning')
  }
  try {
    const done = approve ? manager.approve(approvalId, { by: text }) : manager.deny(approvalId, { reason: text, by: 'toolhost/mcp' })
    if (typeof done?.then === 'function') done.then(undefined, failed)
  } catch (err) {
    failed(err)
  }
}
