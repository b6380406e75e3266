// <planner-app>: the conversation with the agent. It makes an HttpAgent for a new thread
// and runs it with runWithTools(agent, manager, { host: this, signal, ... }); Stop
// aborts it. In its shadow root: the conversation, <toolhost-approvals> and
// <toolhost-activity> (so both work inside another component's shadow root), and the
// four ag-ui-tool-* events runWithTools dispatches on this element, as they arrive.
import { HttpAgent } from '@ag-ui/client'
import { LitElement, css, html, nothing } from 'lit'
import { runWithTools } from 'toolhost/ag-ui'
import 'toolhost/lit'

const PROMPTS = {
  weekend: 'Book us a vegetarian dinner in Lisbon on Saturday, at a time we are both free.',
  correction: 'When am I free next Saturday evening?',
  runaway: 'What are my preferences? (This script calls tools forever: maxRounds ends it.)',
  stop: 'Compare menu prices in Lisbon. (Slow: press Stop.)',
}

export const SEED_EVENTS = ['ag-ui-tool-status-changed', 'ag-ui-tool-retrying', 'ag-ui-tool-call-end', 'ag-ui-tool-call-error']

const short = (text, n = 220) => (text.length > n ? `${text.slice(0, n)}…` : text)

export class PlannerApp extends LitElement {
  static properties = {
    manager: { attribute: false },
    script: {},
    // Reflected, so a page (or a test) can wait on it: idle, running, done, cancelled or error.
    state: { reflect: true },
    _messages: { state: true },
    _log: { state: true },
    _outcome: { state: true },
  }

  static styles = css`
    :host {
      display: grid;
      grid-template-columns: minmax(0, 1fr) minmax(0, 460px);
      gap: 24px;
      align-items: start;
      /* toolhost's elements take their colours from custom properties... */
      --toolhost-accent-color: #0f766e;
      --toolhost-focus-color: #0f766e;
      --toolhost-radius: 12px;
    }
    /* ...and their pieces are parts. */
    toolhost-approvals::part(approve) {
      letter-spacing: 0.02em;
    }
    toolhost-activity::part(title), toolhost-approvals::part(title) {
      color: #134e4a;
    }
    .panel {
      background: #fff;
      border: 1px solid #e2e8f0;
      border-radius: 12px;
      padding: 14px 16px;
    }
    .side {
      display: grid;
      grid-template-columns: minmax(0, 1fr);
      gap: 16px;
      min-width: 0;
    }
    .bar {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 8px 12px;
      margin-bottom: 12px;
    }
    .bar button {
      font: inherit;
      font-weight: 600;
      padding: 5px 14px;
      border-radius: 8px;
      border: 1px solid #cbd5e1;
      background: #fff;
      cursor: pointer;
    }
    .bar button.primary {
      background: #0f766e;
      border-color: #0f766e;
      color: #fff;
    }
    .bar button:disabled {
      opacity: 0.55;
      cursor: default;
    }
    nav a {
      color: #0f766e;
      margin-right: 8px;
    }
    nav a[aria-current='page'] {
      font-weight: 700;
      color: #0f172a;
    }
    .status {
      margin-left: auto;
      font-size: 0.9em;
      color: #475569;
    }
    .status.error, .status.cancelled {
      color: #b91c1c;
    }
    ol {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .msg {
      padding: 8px 12px;
      border-radius: 10px;
      background: #f8fafc;
      border: 1px solid #e2e8f0;
      overflow-wrap: anywhere;
    }
    .msg.user {
      background: #ecfeff;
      border-color: #a5f3fc;
    }
    .msg.tool {
      margin-left: 24px;
      font-size: 0.9em;
    }
    .msg.tool.failed {
      background: #fef2f2;
      border-color: #fecaca;
    }
    .who {
      font-size: 0.75em;
      font-weight: 700;
      text-transform: uppercase;
      letter-spacing: 0.05em;
      color: #64748b;
    }
    code, .log {
      font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
      font-size: 0.85em;
    }
    .call {
      display: block;
      margin-top: 4px;
    }
    .kind {
      font-size: 0.75em;
      padding: 0 6px;
      border-radius: 999px;
      background: #e0f2fe;
      color: #0369a1;
    }
    .kind.backend {
      background: #f3e8ff;
      color: #7e22ce;
    }
    .log {
      max-height: 260px;
      overflow: auto;
      margin: 0;
      padding: 0;
      list-style: none;
    }
    .log li {
      padding: 1px 0;
      white-space: pre;
    }
    h2 {
      font-size: 1em;
      margin: 0 0 8px;
    }
  `

  #controller = null
  #startedAt = 0

  constructor() {
    super()
    this.script = 'weekend'
    this.state = 'idle'
    this.agent = undefined
    this._messages = []
    this._log = []
    this._outcome = undefined
    // runWithTools dispatches the seed's events on this element (its `host`).
    for (const type of SEED_EVENTS) this.addEventListener(type, (event) => this.#logEvent(event))
  }

  firstUpdated() {
    this.start()
  }

  #logEvent(event) {
    const d = event.detail
    const what = event.type === 'ag-ui-tool-status-changed' ? d.status
      : event.type === 'ag-ui-tool-retrying' ? `attempt ${d.attemptNumber}/${d.maxAttempts} in ${d.delayMs} ms after ${d.error.code}`
      : event.type === 'ag-ui-tool-call-end' ? `result ${short(JSON.stringify(d.result), 60)}`
      : `${d.error.code}`
    const at = Math.round(performance.now() - this.#startedAt)
    this._log = [...this._log, { at, type: event.type.slice('ag-ui-tool-'.length), toolCallId: d.toolCallId, what }]
  }

  async start() {
    this.#controller?.abort()
    const controller = (this.#controller = new AbortController())
    const agent = new HttpAgent({
      url: new URL('/agent', location.href).href,
      initialMessages: [{ id: 'user-1', role: 'user', content: PROMPTS[this.script] ?? PROMPTS.weekend }],
    })
    this.agent = agent
    agent.subscribe({ onMessagesChanged: ({ messages }) => this.agent === agent && (this._messages = [...messages]) })
    this._messages = [...agent.messages]
    this._log = []
    this._outcome = undefined
    this.state = 'running'
    this.#startedAt = performance.now()
    try {
      const done = await runWithTools(agent, this.manager, {
        host: this,
        signal: controller.signal,
        context: { page: location.pathname },
        runParameters: { forwardedProps: { script: this.script } },
      })
      if (this.agent !== agent) return
      this._outcome = { rounds: done.rounds, ms: Math.round(performance.now() - this.#startedAt) }
      this.state = 'done'
    } catch (error) {
      if (this.agent !== agent) return
      this._outcome = { rounds: error.rounds, code: error.code, message: error.message }
      this.state = error.code === 'RUN_CANCELLED' ? 'cancelled' : 'error'
    } finally {
      if (this.agent === agent) this._messages = [...agent.messages]
    }
  }

  stop() {
    this.#controller?.abort(new Error('Stop was pressed'))
  }

  #statusText() {
    const o = this._outcome
    switch (this.state) {
      case 'running': return 'running…'
      case 'done': return `done: ${o.rounds} runs in ${o.ms} ms`
      case 'cancelled': return `stopped during run ${o.rounds}; every call has its tool message`
      case 'error': return `${o.code}: ${o.message}`
      default: return ''
    }
  }

  #message(m) {
    if (m.role === 'tool') {
      const frontend = this.manager.registry.has(this.#callName(m.toolCallId) ?? '')
      return html`<li class="msg tool ${m.error ? 'failed' : ''}" data-tool-call-id=${m.toolCallId}>
        <span class="who">tool message · ${m.toolCallId} · ${frontend ? 'from toolhost' : 'from the server'}</span>
        <div><code>${short(m.content)}</code></div>
      </li>`
    }
    return html`<li class="msg ${m.role}">
      <span class="who">${m.role}</span>
      ${m.content ? html`<div>${m.content}</div>` : nothing}
      ${(m.toolCalls ?? []).map((c) => html`<span class="call">
        <span class="kind ${this.manager.registry.has(c.function.name) ? '' : 'backend'}">${this.manager.registry.has(c.function.name) ? 'frontend' : 'backend'}</span>
        <code>${c.function.name}(${short(c.function.arguments, 120)})</code></span>`)}
    </li>`
  }

  #callName(toolCallId) {
    for (const m of this._messages) for (const c of m.toolCalls ?? []) if (c.id === toolCallId) return c.function.name
    return undefined
  }

  render() {
    const running = this.state === 'running'
    return html`
      <section class="panel" aria-labelledby="conversation">
        <div class="bar">
          <button class="primary" @click=${() => this.start()} ?disabled=${running}>Run again</button>
          <button class="stop" @click=${() => this.stop()} ?disabled=${!running}>Stop</button>
          <nav aria-label="Scripts">${Object.keys(PROMPTS).map((s) => html`<a href="?script=${s}" aria-current=${s === this.script ? 'page' : nothing}>${s}</a>`)}</nav>
          <span class="status ${this.state}" role="status">${this.#statusText()}</span>
        </div>
        <h2 id="conversation">Conversation</h2>
        <ol>${this._messages.map((m) => this.#message(m))}</ol>
      </section>
      <div class="side">
        <toolhost-approvals .manager=${this.manager} by="the page's user"></toolhost-approvals>
        <toolhost-activity .manager=${this.manager} limit="12"></toolhost-activity>
        <section class="panel" aria-labelledby="events">
          <h2 id="events">ag-ui-tool-* events on &lt;planner-app&gt;</h2>
          <ol class="log">${this._log.map((e) => html`<li>${String(e.at).padStart(5)} ms ${e.toolCallId} ${e.type}: ${e.what}</li>`)}</ol>
        </section>
      </div>
    `
  }
}

customElements.define('planner-app', PlannerApp)
