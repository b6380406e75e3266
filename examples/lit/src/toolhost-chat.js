// <toolhost-chat>: runs a tool-calling conversation between a model and the tools of
// a ToolExecutionManager, and shows every execution's lifecycle as it happens.
//
// Properties down: `manager` (a ToolExecutionManager), `model` (async (messages) =>
// an OpenAI-format assistant message) and `prompt`. Events up: every lifecycle event
// of the manager is dispatched again from the element, with the same type and detail,
// bubbling and composed; `conversation-started` and `conversation-finished` frame a run.
import { LitElement, css, html, nothing } from 'lit'
import { ref } from 'lit/directives/ref.js'
import { repeat } from 'lit/directives/repeat.js'

export const LIFECYCLE_EVENTS = [
  'tool-execution-started',
  'tool-execution-validating',
  'tool-execution-executing',
  'tool-execution-retrying',
  'tool-execution-succeeded',
  'tool-execution-failed',
  'tool-execution-cancelled',
]

const json = (value) => JSON.stringify(value)

// The retry countdown bar shrinks over the delay. It is animated with the Web
// Animations API, not a style attribute: a strict CSP (no 'unsafe-inline' in
// style-src) refuses style attributes, and styleMap sets one on first render.
const counting = new WeakSet()
const countdown = (bar) => {
  if (bar === undefined || counting.has(bar)) return
  counting.add(bar)
  bar.animate([{ transform: 'scaleX(1)' }, { transform: 'scaleX(0)' }], { duration: Number(bar.dataset.ms), fill: 'forwards' })
}

export class ToolhostChat extends LitElement {
  static properties = {
    manager: { attribute: false },
    model: { attribute: false },
    prompt: {},
    // Reflected, so a page can style or wait on it: idle, running, done or error.
    state: { reflect: true },
    _turns: { state: true },
    _executions: { state: true },
  }

  /** Aborts the listeners on the current manager. */
  #listening = null
  #startedAt = 0

  constructor() {
    super()
    this.prompt = ''
    this.state = 'idle'
    this._turns = []
    /** executionId -> what the element knows of it, from the events so far */
    this._executions = new Map()
  }

  connectedCallback() {
    super.connectedCallback()
    if (this.hasUpdated) this.#listen() // reconnected
  }

  disconnectedCallback() {
    super.disconnectedCallback()
    this.#listening?.abort()
    this.#listening = null
  }

  willUpdate(changed) {
    if (changed.has('manager')) this.#listen()
  }

  // Starts once it has a manager and a model: at its first render, or when the page
  // hands the manager over later (once toolhost's engine is loaded).
  updated(changed) {
    if (changed.has('manager') && this.state === 'idle' && this.manager && this.model) this.run()
  }

  #listen() {
    this.#listening?.abort()
    this.#listening = null
    if (!this.manager || !this.isConnected) return
    this.#listening = new AbortController()
    for (const type of LIFECYCLE_EVENTS) {
      this.manager.addEventListener(type, this.#forward, { signal: this.#listening.signal })
    }
  }

  #forward = (event) => {
    this.#track(event.type, event.detail)
    this.dispatchEvent(new CustomEvent(event.type, { detail: event.detail, bubbles: true, composed: true }))
  }

  /** Folds one lifecycle event into the execution it is about. */
  #track(type, detail) {
    const id = detail.execution?.id ?? detail.executionId
    const before = this._executions.get(id) ?? { id, toolName: detail.toolName, steps: [] }
    const at = Math.round(performance.now() - this.#startedAt)
    const next = { ...before, phase: type.slice('tool-execution-'.length) }
    switch (type) {
      case 'tool-execution-started':
        Object.assign(next, { toolName: detail.execution.toolName, toolCallId: detail.execution.toolCallId, maxAttempts: detail.execution.retry.maxAttempts })
        break
      case 'tool-execution-executing':
        next.attempt = detail.attemptNumber
        break
      case 'tool-execution-retrying':
        Object.assign(next, { attempt: detail.attemptNumber - 1, maxAttempts: detail.maxAttempts, delayMs: detail.delayMs, lastError: detail.error })
        break
      case 'tool-execution-succeeded':
        Object.assign(next, { result: detail.result, duration: detail.execution.timing.duration })
        break
      case 'tool-execution-failed':
        Object.assign(next, { error: detail.error, duration: detail.execution.timing.duration })
        break
    }
    next.steps = [...before.steps, { phase: next.phase, at, attempt: detail.attemptNumber, delayMs: detail.delayMs }]
    this._executions = new Map(this._executions).set(id, next)
  }

  /** Runs the conversation from the prompt; resolves with the messages once the model answers in words. */
  async run() {
    if (this.state === 'running' || !this.manager || !this.model) return undefined
    this.state = 'running'
    this.#startedAt = performance.now()
    this._executions = new Map()
    this._turns = [{ role: 'user', content: this.prompt }]
    const messages = [{ role: 'user', content: this.prompt }]
    this.dispatchEvent(new CustomEvent('conversation-started', { detail: { prompt: this.prompt }, bubbles: true, composed: true }))
    try {
      for (let turn = 0; turn < 8; turn++) {
        this._turns = [...this._turns, { role: 'assistant', thinking: true }]
        const message = await this.model(messages)
        messages.push(message)
        this._turns = [...this._turns.slice(0, -1), { role: 'assistant', content: message.content, calls: message.tool_calls, replies: [] }]
        if (!message.tool_calls?.length) break
        const { messages: replies } = await this.manager.executeToolCalls(message, { provider: 'openai' })
        messages.push(...replies)
        this._turns = this._turns.map((t, i) => (i === this._turns.length - 1 ? { ...t, replies } : t))
      }
      this.state = 'done'
      this.dispatchEvent(new CustomEvent('conversation-finished', { detail: { messages }, bubbles: true, composed: true }))
      return messages
    } catch (error) {
      this.state = 'error'
      this._turns = [...this._turns.filter((t) => !t.thinking), { role: 'error', content: String(error?.message ?? error) }]
      throw error
    }
  }

  render() {
    const byCall = new Map([...this._executions.values()].map((e) => [e.toolCallId, e]))
    return html`
      <ol class="turns">
        ${this.manager ? nothing : html`<li class="system">Loading toolhost's engine…</li>`}
        ${this._turns.map((turn) => this.#turn(turn, byCall))}
      </ol>
      <footer>
        <button @click=${() => this.run()} ?disabled=${this.state === 'running' || !this.manager}>
          ${this.state === 'running' ? 'Running…' : 'Run again'}
        </button>
      </footer>
    `
  }

  #turn(turn, byCall) {
    if (turn.thinking) return html`<li class="assistant thinking" aria-label="the model is thinking"><span></span><span></span><span></span></li>`
    if (turn.role !== 'assistant') return html`<li class=${turn.role}>${turn.content}</li>`
    return html`
      <li class="assistant">
        ${turn.content ? html`<p>${turn.content}</p>` : nothing}
        ${repeat(turn.calls ?? [], (call) => call.id, (call) =>
          this.#card(call, byCall.get(call.id), turn.replies.find((r) => r.tool_call_id === call.id)))}
      </li>
    `
  }

  #card(call, execution, reply) {
    const phase = execution?.phase ?? 'pending'
    return html`
      <section class="card" data-phase=${phase} data-tool-call-id=${call.id}>
        <header>
          <code class="call">${call.function.name}(${call.function.arguments})</code>
          <span class="pill">${phase}</span>
        </header>
        ${execution ? this.#lifecycle(execution) : nothing}
        ${reply && execution?.error ? this.#reply(reply.content) : nothing}
      </section>
    `
  }

  /** The error reply the model reads: its first lines, the rest (the schema) folded. */
  #reply(text) {
    const lines = text.split('\n')
    const head = lines.slice(0, 4).join('\n')
    const rest = lines.slice(4)
    return html`
      <div class="reply">
        <h4>sent back to the model</h4>
        <pre>${head}</pre>
        ${rest.length > 0 ? html`<details><summary>${rest.length} more lines</summary><pre>${rest.join('\n')}</pre></details>` : nothing}
      </div>
    `
  }

  #lifecycle(e) {
    return html`
      <dl>
        ${e.attempt ? html`<dt>attempt</dt><dd>${e.attempt} of ${e.maxAttempts}</dd>` : nothing}
        ${e.phase === 'retrying'
          ? html`<dt>retry</dt>
              <dd>
                in ${e.delayMs} ms, after <code>${e.lastError.code}</code>: ${e.lastError.message}
                <span class="countdown" data-ms=${e.delayMs} ${ref(countdown)}></span>
              </dd>`
          : nothing}
        ${'result' in e ? html`<dt>result</dt><dd><code>${json(e.result)}</code></dd>` : nothing}
        ${e.error
          ? html`<dt>error</dt>
              <dd><code class="tag">${e.error.category} · ${e.error.code}</code> ${e.error.message}</dd>`
          : nothing}
        ${e.duration !== undefined ? html`<dt>took</dt><dd>${Math.round(e.duration)} ms</dd>` : nothing}
      </dl>
      <ol class="steps">
        ${e.steps.map((s) => html`
          <li data-phase=${s.phase}>
            <b>${s.phase}${s.attempt && s.phase !== 'retrying' ? ` #${s.attempt}` : ''}${s.delayMs !== undefined ? ` ${s.delayMs} ms` : ''}</b>
            <small>${s.at} ms</small>
          </li>`)}
      </ol>
    `
  }

  static styles = css`
    :host {
      display: block;
      --ok: #15803d;
      --bad: #b91c1c;
      --wait: #b45309;
      --run: #1d4ed8;
      --muted: #64748b;
      --line: #e2e8f0;
    }
    .turns {
      list-style: none;
      margin: 0;
      padding: 0;
      display: flex;
      flex-direction: column;
      gap: 14px;
    }
    .turns > li {
      max-width: 88%;
      border-radius: 14px;
      padding: 10px 14px;
      line-height: 1.45;
    }
    .system {
      align-self: center;
      color: #64748b;
      font-style: italic;
    }
    .user {
      align-self: flex-end;
      background: #1e293b;
      color: white;
      border-bottom-right-radius: 4px;
    }
    .assistant {
      align-self: flex-start;
      background: white;
      border: 1px solid var(--line);
      border-bottom-left-radius: 4px;
      box-shadow: 0 1px 2px rgb(15 23 42 / 0.05);
      min-width: 60%;
    }
    .assistant > p {
      margin: 0 0 8px;
    }
    .assistant > p:last-child {
      margin: 0;
    }
    .error {
      background: #fef2f2;
      color: var(--bad);
    }
    .thinking {
      min-width: 0;
      display: flex;
      gap: 4px;
    }
    .thinking span {
      width: 7px;
      height: 7px;
      border-radius: 50%;
      background: var(--muted);
      animation: blink 1s infinite both;
    }
    .thinking span:nth-child(2) { animation-delay: 0.2s; }
    .thinking span:nth-child(3) { animation-delay: 0.4s; }
    @keyframes blink {
      0%, 80%, 100% { opacity: 0.25; }
      40% { opacity: 1; }
    }
    .card {
      border: 1px solid var(--line);
      border-left: 4px solid var(--accent, var(--muted));
      border-radius: 8px;
      padding: 8px 12px;
      margin-top: 8px;
      background: #f8fafc;
      --accent: var(--run);
    }
    .card[data-phase='retrying'] { --accent: var(--wait); }
    .card[data-phase='succeeded'] { --accent: var(--ok); }
    .card[data-phase='failed'],
    .card[data-phase='cancelled'] { --accent: var(--bad); }
    .card header {
      display: flex;
      justify-content: space-between;
      align-items: center;
      gap: 12px;
    }
    code, pre {
      font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
      font-size: 12.5px;
    }
    .call {
      font-weight: 600;
      word-break: break-all;
    }
    .pill {
      flex: none;
      font-size: 11px;
      font-weight: 700;
      text-transform: uppercase;
      letter-spacing: 0.04em;
      color: white;
      background: var(--accent);
      border-radius: 999px;
      padding: 2px 9px;
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 3px 12px;
      margin: 8px 0 0;
      font-size: 13px;
    }
    dt {
      color: var(--muted);
    }
    dd {
      margin: 0;
      word-break: break-word;
    }
    .countdown {
      display: block;
      height: 3px;
      margin-top: 4px;
      background: var(--wait);
      border-radius: 2px;
      transform-origin: left;
    }
    .steps {
      list-style: none;
      display: flex;
      flex-wrap: wrap;
      gap: 4px;
      margin: 8px 0 2px;
      padding: 0;
    }
    .steps li {
      font-size: 11px;
      border-radius: 6px;
      padding: 2px 7px;
      background: #e2e8f0;
      color: #334155;
    }
    .steps li[data-phase='retrying'] { background: #fef3c7; color: #92400e; }
    .steps li[data-phase='succeeded'] { background: #dcfce7; color: #166534; }
    .steps li[data-phase='failed'] { background: #fee2e2; color: #991b1b; }
    .steps small {
      color: inherit;
      opacity: 0.7;
      margin-left: 3px;
    }
    .tag {
      font-size: 11px;
      background: #fee2e2;
      color: #991b1b;
      border-radius: 4px;
      padding: 1px 5px;
      margin-right: 4px;
    }
    .reply {
      margin-top: 10px;
      font-size: 13px;
    }
    h4 {
      margin: 0;
      font-size: 11px;
      font-weight: 600;
      text-transform: uppercase;
      letter-spacing: 0.05em;
      color: var(--muted);
    }
    details {
      margin-top: 4px;
    }
    summary {
      cursor: pointer;
      color: var(--muted);
    }
    pre {
      white-space: pre-wrap;
      background: white;
      border: 1px solid var(--line);
      border-radius: 6px;
      padding: 8px;
      margin: 6px 0 0;
    }
    footer {
      margin-top: 18px;
    }
    button {
      font: inherit;
      font-size: 14px;
      padding: 6px 14px;
      border-radius: 8px;
      border: 1px solid #cbd5e1;
      background: white;
      cursor: pointer;
    }
    button:disabled {
      opacity: 0.6;
      cursor: default;
    }
  `
}

customElements.define('toolhost-chat', ToolhostChat)
