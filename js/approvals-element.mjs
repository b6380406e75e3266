// <toolhost-approvals> (toolhost/lit): the calls a ToolExecutionManager holds for
// approval, with approve, deny and edit-arguments controls. Edited arguments are checked
// (JSON, then the tool's schema through registry.validate or session.validate) before
// manager.approve() is called; a refusal is shown and nothing is sent.
import { LitElement, css, html, nothing } from 'lit'
import { repeat } from 'lit/directives/repeat.js'
import { theme } from './element-theme.mjs'
import { ManagerEvents } from './manager-events.mjs'

/** What the model reads for a denial when `deny-reason` is missing, removed or empty. */
const DEFAULT_DENY_REASON = 'The user denied this call.'

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
    /** The reason deny() records; the model reads it in its tool message. Missing,
     * removed or empty: 'The user denied this call.' */
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

  // The list is read again once per burst of events (a microtask later), not on each:
  // 1000 calls asked for in one loop would each read all the others (quadratic, and
  // paid inside execute() and approve()).
  #events = new ManagerEvents(['approval-requested', 'approved', 'denied', 'cancelled', 'failed'], () => this.#refreshSoon())
  #refreshQueued = false
  #reads = 0
  #busy = new Set()

  constructor() {
    super()
    this.manager = undefined
    this.by = undefined
    this.denyReason = DEFAULT_DENY_REASON
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

  #refreshSoon() {
    if (this.#refreshQueued) return
    this.#refreshQueued = true
    queueMicrotask(() => {
      this.#refreshQueued = false
      if (this.isConnected) this.#refresh()
    })
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
        // A removed attribute is null (what ifDefined() and nothing do), an empty one ''.
        const given = typeof this.denyReason === 'string' ? this.denyReason.trim() : ''
        const options = { reason: given === '' ? DEFAULT_DENY_REASON : this.denyReason }
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
          : html`<ul part="list" role="list">${repeat(this._pending, (item) => item.approvalId, (item) => this.#item(item))}</ul>`}
        <div class="visually-hidden" role="status" aria-live="polite">${this._announcement}</div>
      </section>
    `
  }

  // Rows are keyed by approval id: when another approval leaves, a row (its buttons, the
  // focus on one, an open editor) stays with its own call instead of taking the next
  // one's place, so Enter on a focused Approve approves the call it was focused for.
  #item(item) {
    const id = item.approvalId
    const editing = this._editing.has(id)
    const error = this._errors.get(id)
    const busy = this.#busy.has(id)
    // Which call, in the labels: two calls of one tool read the same otherwise.
    const which = `${item.toolName} (${item.toolCallId !== undefined ? `call ${item.toolCallId}` : `approval ${id.slice(0, 8)}`})`
    return html`
      <li part="approval" data-approval-id=${id} aria-labelledby="tool-${id}">
        <div class="head" part="approval-header">
          <span class="tool mono" part="tool" id="tool-${id}">${item.toolName}</span>
          ${item.toolCallId !== undefined ? html`<span class="meta" part="call-id">call ${item.toolCallId}</span>` : nothing}
          ${item.expiresAt !== undefined ? html`<span class="meta" part="expires">until ${new Date(item.expiresAt).toLocaleTimeString()}</span>` : nothing}
        </div>
        ${editing
          ? html`<label for="editor-${id}" part="editor-label">Arguments (JSON). Ctrl+Enter approves, Escape cancels.</label>
              <textarea id="editor-${id}" part="editor" data-approval-id=${id} spellcheck="false"
                aria-invalid=${error ? 'true' : 'false'} aria-describedby=${error ? `error-${id}` : nothing}
                .value=${this._editing.get(id)} @input=${(e) => this.#onInput(e, item)} @keydown=${(e) => this.#onEditorKey(e, item)}></textarea>`
          : html`<pre part="args" aria-label="Arguments">${pretty(item.args)}</pre>`}
        ${error
          ? html`<div class="error" part="error" id="error-${id}" role="alert">
              ${error.message}
              ${error.issues?.length ? html`<ul>${error.issues.map((i) => html`<li><span class="mono">${i.path || '(top level)'}</span>: ${i.message}</li>`)}</ul>` : nothing}
            </div>`
          : nothing}
        <div class="actions" part="actions">
          <button class="approve" part="button approve" data-approval-id=${id} ?disabled=${busy}
            aria-label="Approve ${which}${editing ? ' with the edited arguments' : ''}" @click=${() => this.#decide(item, 'approved')}>Approve</button>
          <button class="deny" part="button deny" data-approval-id=${id} ?disabled=${busy}
            aria-label="Deny ${which}" @click=${() => this.#decide(item, 'denied')}>Deny</button>
          <button class="edit" part="button edit" data-approval-id=${id} ?disabled=${busy} aria-pressed=${editing ? 'true' : 'false'}
            aria-label=${editing ? `Cancel edit of ${which}` : `Edit arguments of ${which}`} @click=${() => this.#toggleEdit(item)}>${editing ? 'Cancel edit' : 'Edit arguments'}</button>
        </div>
      </li>
    `
  }
}
