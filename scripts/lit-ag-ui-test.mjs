#!/usr/bin/env node
// Part of `npm run test:lit`: examples/lit-ag-ui in headless Chromium (Debian's), on
// Vite's dev server with its AG-UI server (SSE by @ag-ui/encoder, a scripted model) at
// /agent, under a strict Content-Security-Policy. The page's HttpAgent talks to that
// server over HTTP; runWithTools runs the page's tools in the page (wasm engine).
//
// Five page loads (the server's four scripts, one twice), checked from outside the page:
//   weekend     tools sent with every run (the server's log); two frontend calls in one
//               message with interleaved argument deltas; the backend call left alone
//               (its only tool message is the server's, it has no events); the retry;
//               the approval through <toolhost-approvals>: edited by keyboard, refused
//               by validation (nothing sent), then approved by clicking its button; the
//               seed's four events, in order, with their details, bubbling and composed
//               out of the shadow root to the document; the final answer.
//   deny        the same, with Escape in the editor and Deny clicked: the model is told.
//   correction  a validation failure the model then corrects.
//   runaway     maxRounds: MAX_ROUNDS_EXCEEDED after 8 runs; <toolhost-activity limit=3>.
//   stop        Stop pressed (by keyboard) mid-run: RUN_CANCELLED, a tool message for
//               every call, the request aborted.
// Screenshots of both elements go under target/lit-ag-ui/ (--out to change), checked
// for their size and theme (custom properties and ::part reach inside).
//
// Nothing Rust is built unless wasm/ is missing; the example gets `npm install` when
// its copy of toolhost is out of date (scripts/lit-ag-ui-app.mjs).
import { spawn } from 'node:child_process'
import { mkdirSync, statSync } from 'node:fs'
import { createServer as createTcpServer } from 'node:net'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ensureChromium } from './browser-tests/lib/chromium.mjs'
import { launchBrowser } from './browser-tests/lib/browser.mjs'
import { EXAMPLE, ROOT, prepareExample } from './lit-ag-ui-app.mjs'

const { values: options } = parseArgs({ options: { out: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
if (options.help) {
  console.log([
    'usage: node scripts/lit-ag-ui-test.mjs [--out <dir>] [--only <script>]',
    '  --out <dir>      where the screenshots go (default: target/lit-ag-ui)',
    '  --only <name>    run one page: weekend, deny, correction, runaway or stop',
    '  CHROMIUM_PATH=<path> use this Chromium instead of /usr/bin/chromium',
  ].join('\n'))
  process.exit(0)
}
const OUT = resolve(options.out ?? join(ROOT, 'target', 'lit-ag-ui'))

// Nothing inline, no eval: Lit's styles are constructable stylesheets,
// 'wasm-unsafe-eval' is what WebAssembly compilation needs, and the agent is same-origin.
const CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const SEED_EVENTS = ['ag-ui-tool-status-changed', 'ag-ui-tool-retrying', 'ag-ui-tool-call-end', 'ag-ui-tool-call-error']
const TOOLS = ['get_preferences', 'check_calendar', 'find_restaurants', 'book_table', 'compare_prices']

// ---------------------------------------------------------------------------------
// The dev server, as `npm run dev` starts it (vite.config.js mounts the agent), with
// the CSP header added; in a process group of its own, ended on the way out.

const DEV_SERVER = `
const { createServer } = await import('vite')
const server = await createServer({
  clearScreen: false,
  server: { host: '127.0.0.1', port: Number(process.env.PORT), strictPort: true, headers: { 'Content-Security-Policy': process.env.CSP } },
})
await server.listen()
console.log('LISTENING ' + server.httpServer.address().port)
`

function freePort() {
  return new Promise((done, fail) => {
    const probe = createTcpServer()
    probe.once('error', fail)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => done(port))
    })
  })
}

async function startDevServer() {
  const child = spawn(process.execPath, ['--input-type=module', '-e', DEV_SERVER], {
    cwd: EXAMPLE,
    env: { ...process.env, NO_COLOR: '1', CSP, PORT: String(await freePort()) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal)
    } catch {}
  }
  process.on('exit', () => kill('SIGKILL'))
  let output = ''
  const port = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the Vite dev server did not listen within 60 s\n${output}`)), 60_000)
    child.stdout.on('data', (chunk) => {
      output += chunk
      const m = output.match(/LISTENING (\d+)/)
      if (m) {
        clearTimeout(timer)
        done(Number(m[1]))
      }
    })
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('exit', (code) => fail(new Error(`the Vite dev server exited (${code})\n${output}`)))
  })
  return {
    url: `http://127.0.0.1:${port}/`,
    log: () => output,
    async stop() {
      const exited = new Promise((done) => child.once('exit', done))
      kill('SIGTERM')
      const timer = setTimeout(() => kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}

// ---------------------------------------------------------------------------------
// In the page: what reaches the document, recorded from before the app's first line.

function probe(seedEvents) {
  const record = (window.__agUiTest = { events: [], decided: [], violations: [], errors: [] })
  for (const type of seedEvents) {
    document.addEventListener(type, (e) => {
      const d = e.detail
      record.events.push({
        type,
        target: e.target?.localName,
        bubbles: e.bubbles,
        composed: e.composed,
        custom: e instanceof CustomEvent,
        toolCallId: d.toolCallId,
        toolCallName: d.toolCallName,
        status: d.status,
        executionId: d.execution?.id,
        executionStatus: d.execution?.status,
        attemptNumber: d.attemptNumber,
        maxAttempts: d.maxAttempts,
        delayMs: d.delayMs,
        errorCode: d.error?.code,
        errorCategory: d.error?.category,
        toolCallArgs: d.toolCallArgs,
        result: d.result,
        approval: d.execution?.approval,
      })
    })
  }
  document.addEventListener('toolhost-approval-decided', (e) => record.decided.push({ ...e.detail, target: e.target?.localName, composed: e.composed }))
  document.addEventListener('securitypolicyviolation', (e) => record.violations.push({ directive: e.violatedDirective, uri: e.blockedURI, source: e.sourceFile, line: e.lineNumber }))
  window.addEventListener('error', (e) => record.errors.push(`uncaught: ${e.message} (${e.filename}:${e.lineno})`))
  window.addEventListener('unhandledrejection', (e) => record.errors.push(`unhandled rejection: ${e.reason?.stack ?? e.reason}`))
}

/** The app's state, read through the shadow roots. */
function readApp() {
  const app = document.querySelector('planner-app')
  const root = app.shadowRoot
  const approvals = root.querySelector('toolhost-approvals')
  const activity = root.querySelector('toolhost-activity')
  return {
    state: app.state,
    threadId: app.agent?.threadId,
    status: root.querySelector('.status')?.textContent.trim(),
    messages: (app.agent?.messages ?? []).map((m) => ({ id: m.id, role: m.role, content: m.content, error: m.error, toolCallId: m.toolCallId, toolCalls: m.toolCalls?.map((c) => [c.id, c.function.name]) })),
    approvals: [...approvals.shadowRoot.querySelectorAll('li[part="approval"]')].map((li) => ({ id: li.dataset.approvalId, tool: li.querySelector('[part="tool"]').textContent, error: li.querySelector('[part="error"]')?.textContent.replace(/\s+/g, ' ').trim() })),
    activity: [...activity.shadowRoot.querySelectorAll('tbody[data-execution-id]')].map((tbody) => ({
      tool: tbody.querySelector('[part="tool"] .mono').textContent,
      status: tbody.dataset.status,
      attempts: tbody.querySelector('[part="attempts"]').textContent.trim(),
      error: tbody.querySelector('[part="error"]')?.textContent.replace(/\s+/g, ' ').trim() ?? '',
    })),
    log: root.querySelectorAll('.log li').length,
    crossOriginIsolated: window.crossOriginIsolated,
  }
}

// ---------------------------------------------------------------------------------

class Check {
  constructor(label) {
    this.label = label
    this.failures = []
    this.notes = []
  }

  expect(ok, message) {
    if (!ok) this.failures.push(message)
  }

  same(actual, expected, message) {
    const a = JSON.stringify(actual)
    const b = JSON.stringify(expected)
    if (a !== b) this.failures.push(`${message}: ${a}, expected ${b}`)
  }
}

const deep = (page, fn, ...args) => page.evaluateHandle(fn, ...args)

async function openPage(browser, url, problems) {
  const context = await browser.createBrowserContext()
  const page = await context.newPage()
  await page.setViewport({ width: 1360, height: 1000 })
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  let loads = 0
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`)
    // The dev server reloads a page when it pre-bundles a dependency it found late.
    if (r.request().resourceType() === 'document' && r.frame() === page.mainFrame() && ++loads === 2) problems.push('the page was loaded again during the test (a late dependency optimisation?)')
  })
  await page.evaluateOnNewDocument(probe, SEED_EVENTS)
  await page.goto(url, { waitUntil: 'load', timeout: 60_000 })
  return { page, close: () => context.close() }
}

async function waitForState(page, states, timeout = 60_000) {
  await page.waitForFunction((s) => s.includes(document.querySelector('planner-app')?.state), { timeout, polling: 50 }, states)
  return page.evaluate(readApp)
}

/** What the server was sent for this thread (its GET log). */
async function runsOf(base, threadId) {
  const response = await fetch(new URL('agent', base))
  return (await response.json()).filter((r) => r.threadId === threadId)
}

/** The page's own problems: errors, and CSP violations other than zod's eval probe. */
async function pageProblems(recorded, problems) {
  const out = [...problems, ...recorded.errors]
  for (const v of recorded.violations) {
    // zod 4 (bundled into @ag-ui/client's dependencies) tries `new Function('')` once,
    // in its allowsEval(), to learn whether it may compile validators; it catches the
    // refusal and validates without. Only that violation is let through, found in the
    // very source the page ran.
    if (v.uri === 'eval' && v.source && (await evalProbeAt(v.source, v.line))) continue
    out.push(`CSP violation: ${JSON.stringify(v)}`)
  }
  return out
}

const sources = new Map()
/**
 * A scenario on a page of its own: `body(page, check)` drives it and returns what the page
 * recorded; then the page's own problems (console errors, failed requests, CSP) are
 * failures too, but those `ignore` matches. A step that throws fails the check with what
 * the page saw before it.
 */
async function onPage(browser, url, title, body, ignore) {
  const check = new Check(title)
  const problems = []
  const { page, close } = await openPage(browser, url, problems)
  try {
    const recorded = await body(page, check)
    const seen = await pageProblems(recorded, problems)
    check.failures.push(...(ignore === undefined ? seen : seen.filter((p) => !ignore.test(p))))
  } catch (error) {
    check.failures.push(String(error?.stack ?? error), ...problems)
  } finally {
    await close()
  }
  return check
}

async function evalProbeAt(url, line) {
  if (!sources.has(url)) sources.set(url, await fetch(url).then((r) => r.text()).catch(() => ''))
  const lines = sources.get(url).split('\n')
  return /new Function\(""\)/.test(lines[line - 1] ?? '') && lines.slice(Math.max(0, line - 5), line).some((l) => /allowsEval/.test(l))
}

const steps = (events, id) => events.filter((e) => e.toolCallId === id).map((e) => (e.type === 'ag-ui-tool-status-changed' ? e.status : e.type.slice('ag-ui-tool-'.length)))

function weekend(browser, base) {
  return onPage(browser, base, 'weekend: parallel calls, backend call, retry, approval clicked in <toolhost-approvals>, the seed events', async (page, check) => {
    // The approval appears in <toolhost-approvals>, inside <planner-app>'s shadow root.
    await page.waitForFunction(() => document.querySelector('planner-app')?.shadowRoot.querySelector('toolhost-approvals')?.shadowRoot.querySelector('button.approve') != null, { timeout: 60_000, polling: 50 })
    const pending = await page.evaluate(readApp)
    check.same(pending.approvals.map((a) => a.tool), ['book_table'], 'approvals shown')
    mkdirSync(OUT, { recursive: true })
    const approvalsElement = await deep(page, () => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals'))
    await approvalsElement.asElement().screenshot({ path: join(OUT, 'toolhost-approvals.png') })

    // Theme: the app sets --toolhost-accent-color and styles ::part(approve); the
    // buttons are native, in the tab order.
    const button = await page.evaluate(() => {
      const approve = document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.querySelector('button.approve')
      const style = getComputedStyle(approve)
      const em = parseFloat(style.letterSpacing) / parseFloat(style.fontSize)
      return { background: style.backgroundColor, letterSpacing: `${Math.round(em * 100) / 100}em`, tabIndex: approve.tabIndex, label: approve.getAttribute('aria-label') }
    })
    check.same(button, { background: 'rgb(15, 118, 110)', letterSpacing: '0.02em', tabIndex: 0, label: 'Approve book_table (call call_book)' }, 'the Approve button (theme from --toolhost-accent-color and ::part(approve))')

    // Keyboard: focus "Edit arguments", Enter opens the editor and focuses it.
    const edit = await deep(page, () => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.querySelector('button.edit'))
    await edit.asElement().focus()
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.activeElement?.localName === 'textarea', { timeout: 10_000, polling: 20 })
    // Arguments the schema refuses, sent with Ctrl+Enter: shown, and not sent.
    await page.keyboard.down('Control')
    await page.keyboard.press('KeyA')
    await page.keyboard.up('Control')
    await page.keyboard.type('{"restaurantId":"r_ao26","time":"19:30","people":"three"}')
    await page.keyboard.down('Control')
    await page.keyboard.press('Enter')
    await page.keyboard.up('Control')
    await page.waitForFunction(() => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.querySelector('[part="error"]') != null, { timeout: 10_000, polling: 20 })
    const refused = await page.evaluate(readApp)
    check.expect(/\/people/.test(refused.approvals[0]?.error ?? '') && /input schema/.test(refused.approvals[0]?.error ?? ''), `the refused edit shows ${JSON.stringify(refused.approvals[0]?.error)}, expected the schema's complaint about /people`)
    check.same(await page.evaluate(() => window.__agUiTest.decided.length), 0, 'decisions sent for arguments that fail validation')
    check.same(refused.approvals.length, 1, 'approvals still waiting after the refused edit')
    // Valid arguments, then a click on the Approve button.
    await page.keyboard.down('Control')
    await page.keyboard.press('KeyA')
    await page.keyboard.up('Control')
    await page.keyboard.type('{"restaurantId":"r_ao26","time":"19:30","people":3}')
    const approve = await deep(page, () => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.querySelector('button.approve'))
    await approve.asElement().click()

    const app = await waitForState(page, ['done', 'error', 'cancelled'])
    const recorded = await page.evaluate(() => window.__agUiTest)
    check.same(app.state, 'done', `the run ended (${app.status})`)
    const answer = app.messages.at(-1)
    check.same(answer?.content, 'Booked Ao 26 at 19:30 for 3 (confirmation BK-31930). Saturday in Lisbon: clear skies, 19 °C.', 'the answer written from the tool messages')
    check.same(recorded.decided.map((d) => [d.decision, d.edited, d.args?.people, d.target, d.composed]), [['approved', true, 3, 'planner-app', true]], 'toolhost-approval-decided')

    // Tools sent with every run, as the server received them.
    const runs = await runsOf(base, app.threadId)
    check.same(runs.map((r) => r.tools), [TOOLS, TOOLS, TOOLS, TOOLS], 'tools the server received, run by run')
    check.same(runs.map((r) => r.forwardedProps?.script), ['weekend', 'weekend', 'weekend', 'weekend'], 'forwardedProps')

    // One tool message per call; the backend call's is the server's.
    const tools = app.messages.filter((m) => m.role === 'tool')
    check.same(tools.map((m) => m.toolCallId).sort(), ['call_book', 'call_calendar', 'call_find', 'call_prefs', 'call_weather'], 'tool messages')
    check.expect(tools.find((m) => m.toolCallId === 'call_weather')?.id.endsWith('-weather'), 'call_weather was answered by someone other than the server')
    check.same(app.messages.find((m) => m.toolCalls?.length === 3)?.toolCalls, [['call_prefs', 'get_preferences'], ['call_calendar', 'check_calendar'], ['call_weather', 'get_weather']], 'the first assistant message')

    // The seed's events: bubbling, composed CustomEvents from <planner-app>, in order.
    const events = recorded.events
    const bad = events.find((e) => e.target !== 'planner-app' || !e.bubbles || !e.composed || !e.custom)
    check.expect(bad === undefined, `an event reached the document as ${JSON.stringify(bad)}`)
    check.same(steps(events, 'call_prefs'), ['pending', 'validating', 'executing', 'succeeded', 'call-end'], 'call_prefs events')
    check.same(steps(events, 'call_calendar'), ['pending', 'validating', 'executing', 'succeeded', 'call-end'], 'call_calendar events')
    check.same(steps(events, 'call_find'), ['pending', 'validating', 'executing', 'retrying', 'succeeded', 'call-end'], 'call_find events')
    check.same(steps(events, 'call_book'), ['pending', 'validating', 'awaiting-approval', 'executing', 'succeeded', 'call-end'], 'call_book events')
    check.same(steps(events, 'call_weather'), [], 'events of the backend call')
    // The two calls of one message ran side by side: the second started before the first ended.
    const at = (id, step) => events.findIndex((e) => e.toolCallId === id && (e.status === step || e.type === `ag-ui-tool-${step}`))
    check.expect(at('call_calendar', 'executing') < at('call_prefs', 'succeeded'), 'check_calendar only ran after get_preferences had finished')
    check.expect(at('call_calendar', 'call-end') < at('call_find', 'pending') && at('call_find', 'call-end') < at('call_book', 'pending'), 'calls of a later run came before those of an earlier one')
    const retry = events.find((e) => e.type === 'ag-ui-tool-retrying')
    check.same(retry && [retry.toolCallId, retry.toolCallName, retry.attemptNumber, retry.maxAttempts, retry.delayMs, retry.errorCode, retry.errorCategory], ['call_find', 'find_restaurants', 2, 3, 400, 'HTTP_503', 'transient'], 'ag-ui-tool-retrying detail')
    const findIds = new Set(events.filter((e) => e.toolCallId === 'call_find' && e.executionId).map((e) => e.executionId))
    check.same(findIds.size, 1, 'execution ids in call_find events')
    check.expect(events.filter((e) => e.type === 'ag-ui-tool-status-changed').every((e) => e.executionStatus === e.status), 'a status event whose execution has another status')
    const end = events.find((e) => e.type === 'ag-ui-tool-call-end' && e.toolCallId === 'call_book')
    check.same(end && [end.toolCallName, end.toolCallArgs, end.result?.confirmation, end.approval?.decision, end.approval?.edited, end.approval?.by], ['book_table', { restaurantId: 'r_ao26', time: '19:30', people: 3 }, 'BK-31930', 'approved', true, "the page's user"], 'ag-ui-tool-call-end detail of call_book')

    // <toolhost-activity> and <toolhost-approvals> afterwards.
    check.same(app.approvals.length, 0, 'approvals left')
    check.same(app.activity.map((r) => [r.tool, r.status, r.attempts]).reverse(), [
      ['get_preferences', 'succeeded', '1/3'], ['check_calendar', 'succeeded', '1/3'], ['find_restaurants', 'succeeded', '2/3'], ['book_table', 'succeeded', '1/3'],
    ], '<toolhost-activity> rows, oldest first')
    // An activity element added now, to the same manager, starts with what it ran.
    const late = await page.evaluate(async () => {
      const app = document.querySelector('planner-app')
      const element = document.createElement('toolhost-activity')
      element.manager = app.manager
      document.body.append(element)
      await element.updateComplete
      const rows = [...element.shadowRoot.querySelectorAll('tbody[data-execution-id]')].map((tbody) => [tbody.querySelector('[part="tool"] .mono').textContent, tbody.dataset.status, tbody.querySelector('[part="attempts"]').textContent.trim()])
      element.remove()
      return rows
    })
    check.same(late, app.activity.map((r) => [r.tool, r.status, r.attempts]), 'a <toolhost-activity> added afterwards: the same rows, from getExecutions()')
    const durations = await page.evaluate(() => [...document.querySelector('planner-app').shadowRoot.querySelector('toolhost-activity').shadowRoot.querySelectorAll('[part="duration"]')].map((e) => e.textContent.trim()))
    check.expect(durations.length === 4 && durations.every((d) => /^\d+ ms$|^\d+\.\d+ s$/.test(d)), `durations shown: ${JSON.stringify(durations)}`)
    check.expect(app.log === events.length, `the page logged ${app.log} events, the document heard ${events.length}`)

    const activityElement = await deep(page, () => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-activity'))
    await activityElement.asElement().screenshot({ path: join(OUT, 'toolhost-activity.png') })
    // Both elements keep to their 460 px column: nothing overflows the page sideways.
    const widths = await page.evaluate(() => {
      const root = document.querySelector('planner-app').shadowRoot
      const width = (el) => Math.round(el.getBoundingClientRect().width)
      return { page: document.documentElement.scrollWidth, approvals: width(root.querySelector('toolhost-approvals')), activity: width(root.querySelector('toolhost-activity')) }
    })
    check.same(widths, { page: 1360, approvals: 460, activity: 460 }, 'widths (the page, each element)')
    await page.screenshot({ path: join(OUT, 'page.png'), fullPage: true })
    const theme = await page.evaluate(() => {
      const root = document.querySelector('planner-app').shadowRoot
      const title = getComputedStyle(root.querySelector('toolhost-activity').shadowRoot.querySelector('[part="title"]'))
      const host = getComputedStyle(root.querySelector('toolhost-activity'))
      return { title: title.color, radius: host.borderTopLeftRadius }
    })
    check.same(theme, { title: 'rgb(19, 78, 74)', radius: '12px' }, 'the theme set from outside (::part(title) colour, --toolhost-radius)')
    for (const name of ['toolhost-approvals.png', 'toolhost-activity.png', 'page.png']) {
      const bytes = statSync(join(OUT, name)).size
      check.expect(bytes > 5_000, `${name} is ${bytes} bytes`)
    }
    check.expect(app.crossOriginIsolated === false, 'the page is cross-origin isolated: it must need no COOP/COEP')
    check.notes.push(`runs: ${runs.length}, seed events: ${events.length}, screenshots in ${OUT}`)
    return recorded
  })
}

function deny(browser, base) {
  return onPage(browser, base, 'weekend, denied: Escape closes the editor, Deny is clicked, the model is told', async (page, check) => {
    const inApprovals = (selector) => deep(page, (sel) => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.querySelector(sel), selector)
    await page.waitForFunction(() => document.querySelector('planner-app')?.shadowRoot.querySelector('toolhost-approvals')?.shadowRoot.querySelector('button.deny') != null, { timeout: 60_000, polling: 50 })
    // Edit, then Escape: the editor closes and focus returns to the Edit button.
    await (await inApprovals('button.edit')).asElement().click()
    await page.waitForFunction(() => document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot.activeElement?.localName === 'textarea', { timeout: 10_000, polling: 20 })
    await page.keyboard.press('Escape')
    const afterEscape = await page.evaluate(() => {
      const root = document.querySelector('planner-app').shadowRoot.querySelector('toolhost-approvals').shadowRoot
      return { editor: root.querySelector('textarea') !== null, focused: root.activeElement?.className, pressed: root.querySelector('button.edit').getAttribute('aria-pressed') }
    })
    check.same(afterEscape, { editor: false, focused: 'edit', pressed: 'false' }, 'after Escape in the editor')
    await (await inApprovals('button.deny')).asElement().click()
    const app = await waitForState(page, ['done', 'error', 'cancelled'])
    const recorded = await page.evaluate(() => window.__agUiTest)
    check.same(app.state, 'done', `the run ended (${app.status})`)
    check.same(recorded.decided.map((d) => [d.decision, d.edited]), [['denied', false]], 'toolhost-approval-decided')
    check.same(steps(recorded.events, 'call_book'), ['pending', 'validating', 'awaiting-approval', 'failed', 'call-error'], 'call_book events')
    const error = recorded.events.find((e) => e.type === 'ag-ui-tool-call-error')
    check.same(error && [error.errorCode, error.errorCategory], ['APPROVAL_DENIED', 'denied'], 'ag-ui-tool-call-error detail')
    const answer = app.messages.at(-1)?.content ?? ''
    check.expect(answer.startsWith('I could not book the table: ') && answer.includes("was denied: The user denied this call."), `the answer is ${JSON.stringify(answer)}`)
    check.same(app.approvals.length, 0, 'approvals left')
    return recorded
  })
}

function correction(browser, base) {
  return onPage(browser, `${base}?script=correction`, 'correction: a call that fails validation, corrected by the model', async (page, check) => {
    const app = await waitForState(page, ['done', 'error', 'cancelled'])
    const recorded = await page.evaluate(() => window.__agUiTest)
    check.same(app.state, 'done', `the run ended (${app.status})`)
    check.same(app.messages.at(-1)?.content, 'On 2026-12-05 you are free at 19:30 and 21:00.', 'the answer')
    check.same(steps(recorded.events, 'call_date_1'), ['pending', 'validating', 'failed', 'call-error'], 'call_date_1 events')
    check.same(steps(recorded.events, 'call_date_2'), ['pending', 'validating', 'executing', 'succeeded', 'call-end'], 'call_date_2 events')
    const error = recorded.events.find((e) => e.type === 'ag-ui-tool-call-error')
    check.same(error && [error.errorCode, error.errorCategory], ['INVALID_ARGUMENTS', 'validation'], 'ag-ui-tool-call-error detail')
    const reply = app.messages.find((m) => m.toolCallId === 'call_date_1')
    check.expect(/its arguments do not match its input schema/.test(reply?.error ?? '') && /\/date/.test(reply?.error ?? ''), `the error reply is ${JSON.stringify(reply)}`)
    const runs = await runsOf(base, app.threadId)
    check.same(runs.length, 3, 'runs')
    check.same(runs[1]?.messages.find((m) => m.toolCallId === 'call_date_1')?.error, reply?.error, 'the error reply the server read in run 2')
    check.same(app.activity.map((r) => [r.tool, r.status]).reverse(), [['check_calendar', 'failed'], ['check_calendar', 'succeeded']], '<toolhost-activity> rows')
    check.expect(/^last error INVALID_ARGUMENTS: /.test(app.activity.at(-1)?.error ?? ''), `the failed row shows ${JSON.stringify(app.activity.at(-1)?.error)}`)
    return recorded
  })
}

function runaway(browser, base) {
  return onPage(browser, `${base}?script=runaway`, 'runaway: maxRounds stops a model that never stops calling tools', async (page, check) => {
    // <toolhost-activity> keeps the newest `limit` executions.
    await page.waitForFunction(() => document.querySelector('planner-app')?.shadowRoot.querySelector('toolhost-activity') != null, { timeout: 60_000, polling: 20 })
    await page.evaluate(() => (document.querySelector('planner-app').shadowRoot.querySelector('toolhost-activity').limit = 3))
    const app = await waitForState(page, ['done', 'error', 'cancelled'])
    const recorded = await page.evaluate(() => window.__agUiTest)
    check.same(app.state, 'error', 'the state')
    check.expect(/^MAX_ROUNDS_EXCEEDED: runWithTools: after 8 runs \(maxRounds\)/.test(app.status), `the status shows ${JSON.stringify(app.status)}`)
    check.same((await runsOf(base, app.threadId)).length, 8, 'runs')
    check.same(app.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId), ['call_1', 'call_2', 'call_3', 'call_4', 'call_5', 'call_6', 'call_7', 'call_8'], 'tool messages')
    const rows = await page.evaluate(() => [...document.querySelector('planner-app').shadowRoot.querySelector('toolhost-activity').shadowRoot.querySelectorAll('tbody .call')].map((e) => e.textContent))
    check.same(rows, ['call_8', 'call_7', 'call_6'], '<toolhost-activity limit=3> rows')
    return recorded
  })
}

function stop(browser, base) {
  // The aborted fetch of the run is not an error of the page.
  return onPage(browser, `${base}?script=stop`, 'stop: Stop pressed mid-run, every call answered', async (page, check) => {
    // compare_prices is running and check_calendar's arguments stalled mid-stream.
    await page.waitForFunction(() => {
      const app = document.querySelector('planner-app')
      const rows = app?.shadowRoot.querySelector('toolhost-activity')?.shadowRoot.querySelectorAll('tbody[data-status="executing"]') ?? []
      return [...rows].some((r) => r.textContent.includes('compare_prices'))
    }, { timeout: 60_000, polling: 50 }).catch(async (error) => {
      error.message += `\npage: ${JSON.stringify(await page.evaluate(readApp))}`
      throw error
    })
    await new Promise((done) => setTimeout(done, 300))
    const stopButton = await deep(page, () => document.querySelector('planner-app').shadowRoot.querySelector('button.stop'))
    await stopButton.asElement().focus()
    const t0 = Date.now()
    await page.keyboard.press('Enter')
    const app = await waitForState(page, ['done', 'error', 'cancelled'], 10_000)
    const ms = Date.now() - t0
    const recorded = await page.evaluate(() => window.__agUiTest)
    check.same(app.state, 'cancelled', `the state (${app.status})`)
    check.expect(ms < 5_000, `it took ${ms} ms to stop`)
    const tools = app.messages.filter((m) => m.role === 'tool')
    check.same(tools.map((m) => m.toolCallId), ['call_prefs', 'call_prices', 'call_calendar'], 'tool messages')
    check.expect(tools[0]?.error === undefined && tools.slice(1).every((m) => /code: CANCELLED/.test(m.error ?? '')), `tool messages ${JSON.stringify(tools)}`)
    check.same(steps(recorded.events, 'call_prices').slice(-2), ['cancelled', 'call-error'], 'the last call_prices events')
    check.same(steps(recorded.events, 'call_calendar'), ['pending', 'cancelled', 'call-error'], 'call_calendar events (its arguments never ended)')
    check.same((await runsOf(base, app.threadId)).length, 1, 'runs')
    check.same(app.activity.map((r) => [r.tool, r.status]).reverse(), [['get_preferences', 'succeeded'], ['compare_prices', 'cancelled'], ['check_calendar', 'cancelled']], '<toolhost-activity> rows')
    check.notes.push(`stopped ${ms} ms after Enter on Stop`)
    return recorded
  }, /net::ERR_ABORTED|The user aborted|signal is aborted/)
}

async function main() {
  await prepareExample()
  const chromium = ensureChromium()
  const dev = await startDevServer()
  const launched = await launchBrowser(chromium)
  console.log(`# ${launched.version}; ${dev.url}`)
  let failed = 0
  let n = 0
  try {
    for (const scenario of [weekend, deny, correction, runaway, stop].filter((s) => options.only === undefined || s.name === options.only)) {
      const started = performance.now()
      let check
      try {
        check = await scenario(launched.browser, dev.url)
      } catch (error) {
        check = new Check(scenario.name)
        check.failures.push(String(error?.stack ?? error))
      }
      n++
      const ok = check.failures.length === 0
      if (!ok) failed++
      console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${check.label} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
      for (const note of new Set(check.notes)) console.log(`#   ${note}`)
      for (const f of check.failures) console.log(`#   FAIL ${f.split('\n').join('\n#   ')}`)
    }
  } finally {
    await launched.close()
    await dev.stop()
  }
  if (failed > 0) console.log(`#   vite: ${dev.log().trim().split('\n').join('\n#   vite: ')}`)
  console.log(`${n - failed} passed, ${failed} failed`)
  return failed === 0 ? 0 : 1
}

let code = 1
const watchdog = setTimeout(() => {
  console.log('not ok - the run did not finish within 10 minutes')
  process.exit(1)
}, 10 * 60_000)
watchdog.unref()
try {
  code = await main()
} catch (error) {
  console.log(`not ok - ${String(error?.stack ?? error).split('\n').join('\n#   ')}`)
}
clearTimeout(watchdog)
process.exit(code)
