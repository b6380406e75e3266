// <toolhost-activity> (toolhost/lit): a ToolExecutionManager's executions as they
// happen, from its lifecycle events.
import { LitElement, css, html, nothing } from 'lit'
import { theme } from './element-theme.mjs'
import { ManagerEvents } from './manager-events.mjs'

const FINAL = new Set(['succeeded', 'failed', 'cancelled'])
const LABELS = { pending: 'queued', validating: 'validating', 'awaiting-approval': 'awaiting approval', executing: 'running', retrying: 'retrying', succeeded: 'succeeded', failed: 'failed', cancelled: 'cancelled' }

/** A row for an execution's record (`getExecutions`), as the events would have made it. */
const rowOf = (e) => ({
  executionId: e.id, toolCallId: e.toolCallId, toolName: e.toolName, status: e.status,
  attempt: e.retry.attemptNumber, maxAttempts: e.retry.maxAttempts,
  queuedAt: e.timing.queuedAt, startedAt: e.timing.startedAt, durationMs: e.timing.duration,
  error: e.error ?? e.retry.previousErrors.at(-1), progress: e.progress,
})

const duration = (ms) => (ms === undefined ? '' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`)

/**
 * `<toolhost-activity>`: the manager's executions as they happen, newest first: tool,
 * status, attempts, duration and the last error; at most `limit` of them (default 20).
 * It starts from what the manager has (`getExecutions`): those in flight, then those
 * its history keeps.
 */
export class ToolhostActivity extends LitElement {
  static properties = {
    manager: { attribute: false },
    limit: { type: Number },
    _rows: { state: true },
    _announcement: { state: true },
  }

  static styles = [theme, css`
    .scroll {
      overflow: auto;
      max-height: var(--toolhost-activity-max-height, none);
    }
    table {
      width: 100%;
      border-collapse: collapse;
    }
    th {
      text-align: left;
      font-weight: 600;
      font-size: 0.8em;
      text-transform: uppercase;
      letter-spacing: 0.04em;
      color: var(--toolhost-muted-color, #64748b);
      padding: 0 8px 6px 0;
      border-bottom: 1px solid var(--toolhost-border-color, #e2e8f0);
    }
    td {
      padding: 7px 8px 7px 0;
      vertical-align: top;
    }
    tbody {
      border-bottom: 1px solid var(--toolhost-border-color, #e2e8f0);
    }
    td.error {
      padding-top: 0;
    }
    .label {
      font-size: 0.85em;
      font-weight: 600;
      text-transform: uppercase;
      letter-spacing: 0.04em;
    }
    .call {
      display: block;
      color: var(--toolhost-muted-color, #64748b);
      font-size: 0.8em;
    }
    .badge {
      display: inline-block;
      padding: 1px 8px;
      border-radius: 999px;
      font-size: 0.85em;
      font-weight: 600;
      white-space: nowrap;
      background: var(--toolhost-muted-background, #f1f5f9);
      color: var(--toolhost-muted-color, #475569);
    }
    .badge.executing, .badge.validating, .badge.pending {
      background: var(--toolhost-info-background, #dbeafe);
      color: var(--toolhost-info-color, #1d4ed8);
    }
    .badge.retrying, .badge.awaiting-approval {
      background: var(--toolhost-warning-background, #fef3c7);
      color: var(--toolhost-warning-color, #b45309);
    }
    .badge.succeeded {
      background: var(--toolhost-success-background, #dcfce7);
      color: var(--toolhost-success-color, #15803d);
    }
    .badge.failed, .badge.cancelled {
      background: var(--toolhost-danger-background, #fee2e2);
      color: var(--toolhost-danger-color, #b91c1c);
    }
    .progress {
      display: block;
      font-size: 0.8em;
      color: var(--toolhost-muted-color, #64748b);
    }
    td.error {
      color: var(--toolhost-danger-color, #b91c1c);
      font-size: 0.88em;
      word-break: break-word;
    }
    tbody[data-status='succeeded'] td.error {
      color: var(--toolhost-muted-color, #64748b);
    }
    .num {
      white-space: nowrap;
      font-variant-numeric: tabular-nums;
    }
  `]

  #events = new ManagerEvents(['started', 'validating', 'approval-requested', 'executing', 'retrying', 'progress', 'succeeded', 'failed', 'cancelled'], (type, detail) => this.#on(type, detail))
  #timer = undefined

  constructor() {
    super()
    this.manager = undefined
    this.limit = 20
    this._rows = []
    this._announcement = ''
  }

  connectedCallback() {
    super.connectedCallback()
    this.#connect()
  }

  /** Follows `manager`'s events, starting from its executions so far. */
  #connect() {
    this.#events.connect(this.manager)
    const manager = this.#events.manager
    this._rows = typeof manager?.getExecutions === 'function' ? manager.getExecutions({ limit: this.#limit() }).map(rowOf) : []
    this.#tick(this._rows.some((r) => !FINAL.has(r.status)))
  }

  disconnectedCallback() {
    super.disconnectedCallback()
    this.#events.disconnect()
    this.#tick(false)
  }

  willUpdate(changed) {
    if (changed.has('manager') && this.isConnected && this.#events.manager !== this.manager) this.#connect()
    if (changed.has('limit')) this._rows = this._rows.slice(0, this.#limit())
  }

  #limit() {
    const n = Math.floor(Number(this.limit))
    return Number.isFinite(n) && n > 0 ? n : 20
  }

  /** The row of one execution changed by `change` (a function of the row). */
  #update(executionId, change) {
    const at = this._rows.findIndex((r) => r.executionId === executionId)
    if (at < 0) return
    const rows = this._rows.slice()
    rows[at] = { ...rows[at], ...change(rows[at]) }
    this._rows = rows
  }

  #on(type, detail) {
    const now = Date.now()
    switch (type) {
      case 'started': {
        const e = detail.execution
        const row = { executionId: e.id, toolCallId: e.toolCallId, toolName: e.toolName, status: 'pending', attempt: 0, maxAttempts: e.retry.maxAttempts, queuedAt: e.timing.queuedAt ?? now, startedAt: undefined, durationMs: undefined, error: undefined, progress: undefined }
        this._rows = [row, ...this._rows].slice(0, this.#limit())
        break
      }
      case 'validating':
        this.#update(detail.executionId, () => ({ status: 'validating' }))
        break
      case 'approval-requested':
        this.#update(detail.execution.id, () => ({ status: 'awaiting-approval' }))
        break
      case 'executing':
        this.#update(detail.executionId, (r) => ({ status: 'executing', attempt: detail.attemptNumber, startedAt: r.startedAt ?? now }))
        break
      case 'retrying':
        this.#update(detail.executionId, () => ({ status: 'retrying', error: detail.error, maxAttempts: detail.maxAttempts, retryInMs: detail.delayMs }))
        break
      case 'progress':
        this.#update(detail.executionId, () => ({ progress: detail }))
        break
      case 'succeeded':
      case 'failed': {
        const e = detail.execution
        this.#update(e.id, (r) => ({ status: type, attempt: e.retry.attemptNumber, durationMs: e.timing.duration ?? now - (r.startedAt ?? r.queuedAt), error: e.error ?? r.error }))
        this._announcement = `${e.toolName} ${type}${type === 'failed' ? `: ${e.error.code}` : ''}`
        break
      }
      case 'cancelled':
        this.#update(detail.executionId, (r) => ({ status: 'cancelled', durationMs: now - (r.startedAt ?? r.queuedAt) }))
        this._announcement = `${detail.toolName} cancelled`
        break
    }
    this.#tick(this._rows.some((r) => !FINAL.has(r.status)))
  }

  /** Redraws the running rows' durations while any runs. */
  #tick(on) {
    if (on && this.#timer === undefined) this.#timer = setInterval(() => this.requestUpdate(), 250)
    else if (!on && this.#timer !== undefined) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }

  render() {
    const rows = this._rows
    return html`
      <section part="container" aria-labelledby="title">
        <h2 part="title" id="title">Activity <span class="count" part="count" aria-label="${rows.length} shown">${rows.length}</span></h2>
        ${rows.length === 0
          ? html`<p class="empty" part="empty">No tool has run yet.</p>`
          : html`<div class="scroll" part="scroll" role="region" aria-labelledby="title" tabindex="0">
              <table part="table">
                <thead><tr part="header-row">
                  <th scope="col">Tool</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Duration</th>
                </tr></thead>
                ${rows.map((row) => this.#row(row))}
              </table>
            </div>`}
        <div class="visually-hidden" role="status" aria-live="polite">${this._announcement}</div>
      </section>
    `
  }

  #row(row) {
    const running = !FINAL.has(row.status)
    const shown = running ? (row.startedAt !== undefined ? Date.now() - row.startedAt : undefined) : row.durationMs
    const progress = row.progress
    // One <tbody> per execution: its row, and its last error on a row of its own below.
    return html`
      <tbody part="execution" data-execution-id=${row.executionId} data-status=${row.status}>
        <tr part="row ${row.status}">
          <td part="tool"><span class="mono">${row.toolName}</span>${row.toolCallId !== undefined ? html`<span class="call">${row.toolCallId}</span>` : nothing}</td>
          <td part="status">
            <span class="badge ${row.status}" part="badge ${row.status}">${LABELS[row.status] ?? row.status}${row.status === 'retrying' && row.retryInMs !== undefined ? ` in ${duration(row.retryInMs)}` : ''}</span>
            ${progress && running ? html`<span class="progress" part="progress">${progress.total ? `${Math.round((progress.progress / progress.total) * 100)} %` : progress.progress}${progress.message ? ` ${progress.message}` : ''}</span>` : nothing}
          </td>
          <td part="attempts" class="num">${row.attempt}/${row.maxAttempts}</td>
          <td part="duration" class="num">${duration(shown)}</td>
        </tr>
        ${row.error
          ? html`<tr part="error-row"><td colspan="4" part="error" class="error"><span class="label">last error</span> ${row.error.code}: ${row.error.message}</td></tr>`
          : nothing}
      </tbody>
    `
  }
}
