// The page: a registry of the page's tools, a manager, and <planner-app>, which runs the
// agent with runWithTools and shows <toolhost-approvals> and <toolhost-activity>.
import { html, render } from 'lit'
import { ToolExecutionManager, ToolRegistry, ready } from 'toolhost'
import { registerTools } from './tools.js'
import './planner-app.js'

// The engine (WebAssembly) loads on ready(): the page's modules run before it arrives.
await ready()
const registry = new ToolRegistry()
registerTools(registry)
// No jitter, so the backoff is easy to follow.
const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 400, jitter: 'none' }, timeoutMs: 10_000 })

// ?script=correction (or runaway, stop) picks another of the server's scripts.
const script = new URLSearchParams(location.search).get('script') ?? 'weekend'
render(html`<planner-app .manager=${manager} script=${script}></planner-app>`, document.querySelector('#app'))
