// The page: renders at once, then loads toolhost's engine (WebAssembly), registers the
// tools, creates the manager and hands it to <toolhost-chat> (manager and model passed
// down as properties), beside an <event-log> of the events the chat element sends up.
import { html, render } from 'lit'
import { ToolExecutionManager, ToolRegistry, ready } from 'toolhost'
import { registerTools } from './tools.js'
import { PROMPT, scriptedModel } from './model.js'
import { LIFECYCLE_EVENTS } from './toolhost-chat.js'
import './event-log.js'

performance.mark('app-start')
// Importing toolhost loads nothing: the engine starts loading here, while the page renders.
const engine = ready()

let manager
let entries = []
let startedAt = performance.now()

function onConversationStarted() {
  entries = []
  startedAt = performance.now()
  show()
}

function onLifecycle(event) {
  entries = [...entries, { type: event.type, detail: event.detail, at: Math.round(performance.now() - startedAt) }]
  show()
}

const app = document.querySelector('#app')
for (const type of LIFECYCLE_EVENTS) app.addEventListener(type, onLifecycle)

function show() {
  render(html`
    <main>
      <toolhost-chat .manager=${manager} .model=${scriptedModel} prompt=${PROMPT} @conversation-started=${onConversationStarted}></toolhost-chat>
    </main>
    <aside><event-log .entries=${entries}></event-log></aside>
  `, app)
}

show()

await engine
performance.mark('engine-ready')
const registry = new ToolRegistry()
registerTools(registry)
// No jitter, so the backoff is easy to follow: 300 ms, then 600 ms.
manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 300, jitter: 'none' }, timeoutMs: 5000 })
show() // <toolhost-chat> starts its conversation once it has a manager
