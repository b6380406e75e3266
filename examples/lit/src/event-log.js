// <event-log>: the lifecycle events the page heard bubble up from <toolhost-chat>,
// newest last. It only renders the `entries` it is given (properties down).
import { LitElement, css, html } from 'lit'

const summary = (type, d) => {
  switch (type) {
    case 'tool-execution-started': return `${d.execution.toolName} ${d.execution.toolCallId ?? ''}`
    case 'tool-execution-validating': return JSON.stringify(d.args)
    case 'tool-execution-executing': return `attempt ${d.attemptNumber}`
    case 'tool-execution-retrying': return `attempt ${d.attemptNumber}/${d.maxAttempts} in ${d.delayMs} ms (${d.error.code})`
    case 'tool-execution-succeeded': return JSON.stringify(d.result)
    case 'tool-execution-failed': return `${d.error.code}: ${d.error.message}`
    default: return ''
  }
}

export class EventLog extends LitElement {
  static properties = { entries: { attribute: false } }

  constructor() {
    super()
    /** [{ type, detail, at }] */
    this.entries = []
  }

  render() {
    return html`
      <h2>Events up <small>${this.entries.length}</small></h2>
      <p>re-dispatched by <code>&lt;toolhost-chat&gt;</code>, heard by the page</p>
      <ol>
        ${this.entries.map(({ type, detail, at }) => html`
          <li class=${type.slice('tool-execution-'.length)}>
            <time>${at} ms</time>
            <b>${type.slice('tool-execution-'.length)}</b>
            <span>${summary(type, detail)}</span>
          </li>`)}
      </ol>
    `
  }

  static styles = css`
    :host {
      display: block;
      font-size: 12px;
      color: #334155;
    }
    h2 {
      font-size: 12px;
      text-transform: uppercase;
      letter-spacing: 0.06em;
      color: #64748b;
      margin: 0 0 8px;
    }
    h2 small {
      font-weight: 400;
    }
    p {
      margin: -4px 0 10px;
      color: #94a3b8;
    }
    ol {
      list-style: none;
      margin: 0;
      padding: 0;
      font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    }
    li {
      display: grid;
      grid-template-columns: 52px 78px 1fr;
      gap: 6px;
      padding: 3px 0;
      border-bottom: 1px solid #eef2f7;
    }
    time {
      color: #94a3b8;
      text-align: right;
    }
    span {
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .retrying b { color: #b45309; }
    .succeeded b { color: #15803d; }
    .failed b,
    .cancelled b { color: #b91c1c; }
    .executing b { color: #1d4ed8; }
  `
}

customElements.define('event-log', EventLog)
