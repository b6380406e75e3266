// toolhost/lit: two Lit elements over a ToolExecutionManager, for any page (Lit is an
// optional peer dependency; the main entry never loads this module).
//
//   <toolhost-approvals .manager=${manager}>  the calls waiting for approval: the tool,
//     its arguments, approve / deny / edit. Edited arguments are checked (JSON, then
//     the tool's schema through registry.validate or session.validate) before
//     manager.approve() is called; a refusal is shown and nothing is sent.
//   <toolhost-activity .manager=${manager} limit="20">  executions as they happen: tool,
//     status, attempts, duration, last error; the newest `limit` of them.
//
// Both follow the manager's events, live in their own shadow root (so they work inside
// another component's), are reached and used by keyboard alone (native buttons and
// fields, visible focus, a live region), and are themed with CSS custom properties
// (`--toolhost-*`) and `::part()`.
import { LitElement, css, html, nothing } from 'lit'

/** The look both elements share; every colour and size is a custom property. */
const theme = css`
  :host {
    display: block;
    /* Shrinks to its grid or flex track; wide content scrolls inside. */
    min-width: 0;
    box-sizing: border-box;
    font-family: var(--toolhost-font-family, system-ui, sans-serif);
    font-size: var(--toolhost-font-size, 14px);
    line-height: 1.45;
    color: var(--toolhost-color, #0f172a);
    background: var(--toolhost-background, #ffffff);
    border: 1px solid var(--toolhost-border-color, #e2e8f0);
    border-radius: var(--toolhost-radius, 10px);
    padding: var(--toolhost-padding, 14px 16px);
  }
  :host([hidden]) {
    display: none;
  }
  *, *::before, *::after {
    box-sizing: inherit;
  }
  h2 {
    margin: 0 0 10px;
    font-size: 1em;
    font-weight: 650;
    display: flex;
    align-items: center;
    gap: 8px;
  }
  .count {
    font-weight: 600;
    font-size: 0.8em;
    min-width: 1.7em;
    padding: 1px 7px;
    border-radius: 999px;
    text-align: center;
    background: var(--toolhost-muted-background, #f1f5f9);
    color: var(--toolhost-muted-color, #64748b);
  }
  .empty {
    margin: 0;
    color: var(--toolhost-muted-color, #64748b);
  }
  .mono, pre, textarea {
    font-family: var(--toolhost-mono-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace);
    font-size: 0.9em;
  }
  :focus-visible {
    outline: 2px solid var(--toolhost-focus-color, #2563eb);
    outline-offset: 2px;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    margin: -1px;
    padding: 0;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
`

/** Subscribes `element` to the manager's events while it is connected. */
class ManagerEvents {
  #off = []
  #manager
  constructor(element, types, listener) {
    this.element = element
    this.types = types
    this.listener = listener
  }

  /** Listens to `manager` (nothing when it is not one). */
  connect(manager) {
    this.disconnect()
    if (manager === null || manager === undefined || typeof manager.on !== 'function') return
    this.#manager = manager
    for (const type of this.types) this.#off.push(manager.on(`tool-execution-${type}`, (detail) => this.listener(type, detail)))
  }

  disconnect() {
    for (const off of this.#off) off()
    this.#off = []
    this.#manager = undefined
  }

  get manager() {
    return this.#manager
  }
}

const pretty = (value) => {
  try {
    return JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * `<toolhost-approvals>`: the manager's calls waiting for approval, each with approve,
 * deny and edit-arguments controls. Fires `toolhost-approval-decided` (bubbling,
 * composed) with `{ approvalId, executionId, toolName, decision, args?, edited }`
 * after each decision it sent.
 */
export class ToolhostApprovals extends LitElement {
  static properties = {
    manager: { attribute: false },
    /** Who decides, recorded as `by` of approve() / deny(). */
    by: { type: String },
    /** The reason deny() records; the model reads it in its tool message. */
    denyReason: { type: String, attribute: 'deny-reason' },
    _pending: { state: true },
    _editing: { state: true },
    _errors: { state: true },
    _announcement: { state: true },
  }

  static styles = [theme, css`
    ul {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 10px;
    }
    li {
      border: 1px solid var(--toolhost-border-color, #e2e8f0);
      border-left: 4px solid var(--toolhost-warning-color, #d97706);
      border-radius: calc(var(--toolhost-radius, 10px) - 2px);
      padding: 10px 12px;
      background: var(--toolhost-item-background, #fffbeb);
    }
    .head {
      display: flex;
      flex-wrap: wrap;
      align-items: baseline;
      gap: 4px 10px;
      margin-bottom: 6px;
    }
    .tool {
      font-weight: 650;
    }
    .meta {
      color: var(--toolhost-muted-color, #64748b);
      font-size: 0.85em;
    }
    pre {
      margin: 0 0 8px;
      padding: 8px 10px;
      border-radius: 6px;
      background: var(--toolhost-code-background, #f8fafc);
      border: 1px solid var(--toolhost-border-color, #e2e8f0);
      white-space: pre-wrap;
      word-break: break-word;
      max-height: 14em;
      overflow: auto;
    }
    label {
      display: block;
      font-size: 0.85em;
      color: var(--toolhost-muted-color, #64748b);
      margin-bottom: 3px;
    }
    textarea {
      display: block;
      width: 100%;
      min-height: 7em;
      margin: 0 0 8px;
      padding: 8px 10px;
      border-radius: 6px;
      border: 1px solid var(--toolhost-border-color, #cbd5e1);
      background: var(--toolhost-background, #ffffff);
      color: inherit;
      resize: vertical;
    }
    textarea[aria-invalid='true'] {
      border-color: var(--toolhost-danger-color, #dc2626);
    }
    .error {
      margin: 0 0 8px;
      padding: 6px 10px;
      border-radius: 6px;
      color: var(--toolhost-danger-color, #b91c1c);
      background: var(--toolhost-danger-background, #fef2f2);
    }
    .error ul {
      margin: 4px 0 0;
      padding-left: 18px;
      display: block;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
    button {
      font: inherit;
      font-size: 0.92em;
      font-weight: 600;
      padding: 5px 12px;
      border-radius: 6px;
      border: 1px solid var(--toolhost-border-color, #cbd5e1);
      background: var(--toolhost-button-background, #ffffff);
      color: inherit;
      cursor: pointer;
    }
    button.approve {
      background: var(--toolhost-accent-color, #2563eb);
      border-color: var(--toolhost-accent-color, #2563eb);
      color: var(--toolhost-accent-contrast, #ffffff);
    }
    button.deny {
      color: var(--toolhost-danger-color, #b91c1c);
    }
    button:disabled {
      opacity: 0.6;
      cursor: default;
    }
  `]

  #events = new ManagerEvents(this, ['approval-requested', 'approved', 'denied', 'cancelled', 'failed'], () => this.#refresh())
  #reads = 0
  #busy = new Set()

  constructor() {
    super()
    this.manager = undefined
    this.by = undefined
    this.denyReason = 'The user denied this call.'
    this._pending = []
    this._editing = new Map()
    this._errors = new Map()
    this._announcement = ''
  }

  connectedCallback() {
    super.connectedCallback()
    this.#listen()
  }

  disconnectedCallback() {
    super.disconnectedCallback()
    this.#events.disconnect()
  }

  willUpdate(changed) {
    if (changed.has('manager') && this.isConnected && this.#events.manager !== this.manager) this.#listen()
  }

  #listen() {
    this.#events.connect(this.manager)
    this.#refresh()
  }

  /** The approvals read again from the manager (`pendingApprovals()` may be a Promise). */
  async #refresh() {
    const read = ++this.#reads
    const manager = this.manager
    let list = []
    try {
      if (manager && typeof manager.pendingApprovals === 'function') list = await manager.pendingApprovals()
    } catch {
      list = []
    }
    if (read !== this.#reads) return
    const before = new Set(this._pending.map((p) => p.approvalId))
    const ids = new Set(list.map((p) => p.approvalId))
    const added = list.filter((p) => !before.has(p.approvalId))
    this._pending = list
    // Edits and errors of approvals that are gone are forgotten.
    this._editing = new Map([...this._editing].filter(([id]) => ids.has(id)))
    this._errors = new Map([...this._errors].filter(([id]) => ids.has(id)))
    if (added.length > 0) this._announcement = `${added.map((p) => p.toolName).join(', ')} ${added.length === 1 ? 'waits' : 'wait'} for your approval`
  }

  #scopeOf(item) {
    const registry = this.manager.registry
    return item.sessionId === undefined ? registry : registry.getSession(item.sessionId)
  }

  #setError(id, error) {
    const errors = new Map(this._errors)
    if (error === undefined) errors.delete(id)
    else errors.set(id, error)
    this._errors = errors
  }

  /** The edited arguments when they are JSON and valid for the tool; else undefined, with the reason shown. */
  #editedArgs(item) {
    const text = this._editing.get(item.approvalId)
    let args
    try {
      args = JSON.parse(text)
    } catch (e) {
      this.#setError(item.approvalId, { message: `The arguments are not JSON: ${e.message}` })
      return undefined
    }
    let result
    try {
      const scope = this.#scopeOf(item)
      if (scope === undefined) throw new Error(`session '${item.sessionId}' no longer exists`)
      result = scope.validate(item.toolName, args)
    } catch (e) {
      this.#setError(item.approvalId, { message: `The arguments cannot be checked: ${e.message}` })
      return undefined
    }
    if (!result.valid) {
      this.#setError(item.approvalId, { message: `The arguments do not match ${item.toolName}'s input schema:`, issues: result.errors })
      return undefined
    }
    return args
  }

  async #decide(item, decision) {
    const id = item.approvalId
    if (this.#busy.has(id)) return
    const editing = this._editing.has(id)
    let args
    if (decision === 'approved' && editing) {
      args = this.#editedArgs(item)
      if (args === undefined) {
        await this.updateComplete
        this.renderRoot.querySelector(`textarea[data-approval-id="${CSS.escape(id)}"]`)?.focus()
        return
      }
    }
    this.#busy.add(id)
    this.requestUpdate()
    const focused = this.renderRoot.activeElement !== null
    try {
      if (decision === 'approved') {
        const options = {}
        if (args !== undefined) options.args = args
        if (this.by) options.by = this.by
        await this.manager.approve(id, options)
      } else {
        const options = { reason: this.denyReason }
        if (this.by) options.by = this.by
        await this.manager.deny(id, options)
      }
    } catch (e) {
      this.#setError(id, { message: e?.message ?? String(e), issues: e?.validationErrors })
      return
    } finally {
      this.#busy.delete(id)
      this.requestUpdate()
    }
    this._announcement = `${item.toolName} ${decision}`
    this.dispatchEvent(new CustomEvent('toolhost-approval-decided', {
      bubbles: true,
      composed: true,
      detail: { approvalId: id, executionId: item.executionId, toolName: item.toolName, decision, args, edited: args !== undefined },
    }))
    await this.#refresh()
    // The item is gone: focus moves to the next one, or to the list, never to <body>.
    if (focused) {
      await this.updateComplete
      const next = this.renderRoot.querySelector('button.approve') ?? this.renderRoot.querySelector('h2')
      next?.focus()
    }
  }

  async #toggleEdit(item) {
    const editing = new Map(this._editing)
    if (editing.has(item.approvalId)) editing.delete(item.approvalId)
    else editing.set(item.approvalId, pretty(item.args))
    this._editing = editing
    this.#setError(item.approvalId, undefined)
    await this.updateComplete
    const selector = editing.has(item.approvalId) ? 'textarea' : 'button.edit'
    this.renderRoot.querySelector(`${selector}[data-approval-id="${CSS.escape(item.approvalId)}"]`)?.focus()
  }

  #onEditorKey(event, item) {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault()
      this.#decide(item, 'approved')
    } else if (event.key === 'Escape') {
      event.preventDefault()
      this.#toggleEdit(item)
    }
  }

  #onInput(event, item) {
    this._editing = new Map(this._editing).set(item.approvalId, event.target.value)
    if (this._errors.has(item.approvalId)) this.#setError(item.approvalId, undefined)
  }

  render() {
    const count = this._pending.length
    return html`
      <section part="container" aria-labelledby="title">
        <h2 part="title" id="title" tabindex="-1">Approvals <span class="count" part="count" aria-label="${count} waiting">${count}</span></h2>
        ${count === 0
          ? html`<p class="empty" part="empty">No tool call is waiting for approval.</p>`
          : html`<ul part="list" role="list">${this._pending.map((item, index) => this.#item(item, index))}</ul>`}
        <div class="visually-hidden" role="status" aria-live="polite">${this._announcement}</div>
      </section>
    `
  }

  #item(item, index) {
    const id = item.approvalId
    const editing = this._editing.has(id)
    const error = this._errors.get(id)
    const busy = this.#busy.has(id)
    return html`
      <li part="approval" data-approval-id=${id} aria-labelledby="tool-${index}">
        <div class="head" part="approval-header">
          <span class="tool mono" part="tool" id="tool-${index}">${item.toolName}</span>
          ${item.toolCallId !== undefined ? html`<span class="meta" part="call-id">call ${item.toolCallId}</span>` : nothing}
          ${item.expiresAt !== undefined ? html`<span class="meta" part="expires">until ${new Date(item.expiresAt).toLocaleTimeString()}</span>` : nothing}
        </div>
        ${editing
          ? html`<label for="editor-${index}" part="editor-label">Arguments (JSON). Ctrl+Enter approves, Escape cancels.</label>
              <textarea id="editor-${index}" part="editor" data-approval-id=${id} spellcheck="false"
                aria-invalid=${error ? 'true' : 'false'} aria-describedby=${error ? `error-${index}` : nothing}
                .value=${this._editing.get(id)} @input=${(e) => this.#onInput(e, item)} @keydown=${(e) => this.#onEditorKey(e, item)}></textarea>`
          : html`<pre part="args" aria-label="Arguments">${pretty(item.args)}</pre>`}
        ${error
          ? html`<div class="error" part="error" id="error-${index}" role="alert">
              ${error.message}
              ${error.issues?.length ? html`<ul>${error.issues.map((i) => html`<li><span class="mono">${i.path || '(top level)'}</span>: ${i.message}</li>`)}</ul>` : nothing}
            </div>`
          : nothing}
        <div class="actions" part="actions">
          <button class="approve" part="button approve" data-approval-id=${id} ?disabled=${busy}
            aria-label="Approve ${item.toolName}${editing ? ' with the edited arguments' : ''}" @click=${() => this.#decide(item, 'approved')}>Approve</button>
          <button class="deny" part="button deny" data-approval-id=${id} ?disabled=${busy}
            aria-label="Deny ${item.toolName}" @click=${() => this.#decide(item, 'denied')}>Deny</button>
          <button class="edit" part="button edit" data-approval-id=${id} ?disabled=${busy} aria-pressed=${editing ? 'true' : 'false'}
            @click=${() => this.#toggleEdit(item)}>${editing ? 'Cancel edit' : 'Edit arguments'}</button>
        </div>
      </li>
    `
  }
}

const FINAL = new Set(['succeeded', 'failed', 'cancelled'])
const LABELS = { pending: 'queued', validating: 'validating', 'awaiting-approval': 'awaiting approval', executing: 'running', retrying: 'retrying', succeeded: 'succeeded', failed: 'failed', cancelled: 'cancelled' }

const duration = (ms) => (ms === undefined ? '' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`)

/**
 * `<toolhost-activity>`: the manager's executions as they happen, newest first: tool,
 * status, attempts, duration and the last error; at most `limit` of them (default 20).
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

  #events = new ManagerEvents(this, ['started', 'validating', 'approval-requested', 'executing', 'retrying', 'progress', 'succeeded', 'failed', 'cancelled'], (type, detail) => this.#on(type, detail))
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
    this.#events.connect(this.manager)
  }

  disconnectedCallback() {
    super.disconnectedCallback()
    this.#events.disconnect()
    this.#tick(false)
  }

  willUpdate(changed) {
    if (changed.has('manager') && this.isConnected && this.#events.manager !== this.manager) this.#events.connect(this.manager)
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

if (!customElements.get('toolhost-approvals')) customElements.define('toolhost-approvals', ToolhostApprovals)
if (!customElements.get('toolhost-activity')) customElements.define('toolhost-activity', ToolhostActivity)
