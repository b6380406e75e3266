#!/usr/bin/env node
// `npm run test:lit`: runs examples/lit (a Lit element over toolhost's browser build) in
// headless Chromium, built each way a user would build it, with no bundler config and
// no plugin beyond the one Rollup always needs to read node_modules:
//   - dev:     the Vite dev server;
//   - build:   `vite build`;
//   - esbuild: `npm run build:esbuild` (esbuild, then copy-page.mjs copies the .wasm);
//   - rollup:  `npm run build:rollup` (with @rollup/plugin-node-resolve, then the same copy);
//   - webpack: `npm run build:webpack` (webpack emits the .wasm itself);
// each built page served by a small static server of this script's own. All send a
// strict Content-Security-Policy and no COOP/COEP. Each page runs its scripted
// conversation to the end, and this script checks, from the page:
//   - the lifecycle events <toolhost-chat> re-dispatches (bubbling, composed, same
//     detail), in order: the flaky search retried twice then succeeded; the booking
//     with bad arguments failed with INVALID_ARGUMENTS, then the corrected one
//     succeeded;
//   - the results and the model's final answer, and what the element rendered;
//   - that the page's own code ran before the engine was fetched (importing toolhost
//     blocks nothing; the engine loads on `ready()`);
//   - no CSP violation, no uncaught error, no console error, no failed request, and
//     crossOriginIsolated === false;
//   - for the built pages, that no bundle holds the MCP SDK or a Node module (the
//     page imports only `toolhost`), and that the bundler printed no warning.
// One more page, bundled with esbuild from the installed package, checks how the
// engine loads: `new ToolRegistry()` before `ready()` throws ENGINE_NOT_READY, a .wasm
// that is not where the bundle looks makes ready() reject ENGINE_LOAD_FAILED naming the
// URL, `ready({ wasm })` then loads it from elsewhere, and `registry.mountMcp` without
// toolhost/mcp rejects MCP_NOT_LOADED. And the README's browser example is run as
// written: its button clicked, the time it shows read back.
// The screenshot of the Vite-built page is saved to docs/lit-example.png.
//
// It then does all this again for a copy of the example, in a temporary directory,
// that installs `npm pack` of the repository: the package exactly as published, with
// no node_modules of the repository's above it to resolve anything from (an optional
// peer dependency, say) that a user would not have.
//
// Nothing Rust is built: wasm/ must exist (`npm run build:wasm`). examples/lit gets
// `npm install --ignore-scripts` when it lacks a package it needs, or when its copy of
// toolhost differs from the repository's js/, wasm/ or package.json.
import { spawn } from 'node:child_process'
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { createServer } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, extname, join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ensureChromium } from './browser-tests/lib/chromium.mjs'
import { launchBrowser } from './browser-tests/lib/browser.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const EXAMPLE_SOURCE = join(ROOT, 'examples', 'lit')

// The built page's policy. Nothing inline at all: Lit's styles are constructable
// stylesheets (adoptedStyleSheets), which style-src does not govern, and the app's
// own CSS is a file. 'wasm-unsafe-eval' is what WebAssembly compilation needs.
const CSP_BUILD = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "connect-src 'self'", // fetch() of the .wasm
  "img-src 'self'", // the favicon
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
// The dev server's: the same, nothing added. connect-src 'self' also covers the HMR
// WebSocket to the same host and port (CSP 3 matches ws: for 'self'), and Vite's dev
// client injects no inline script. It would inject <style> elements for CSS imported
// from JS (style-src 'unsafe-inline' in dev only): the example links its CSS from
// index.html instead.
const CSP_DEV = CSP_BUILD

const LIFECYCLE = [
  'tool-execution-started',
  'tool-execution-validating',
  'tool-execution-executing',
  'tool-execution-retrying',
  'tool-execution-succeeded',
  'tool-execution-failed',
  'tool-execution-cancelled',
]

const USAGE = `usage: node scripts/lit-example-test.mjs [options]

  --skip-packed        skip the copy of the example that installs \`npm pack\` of the repository
  --app <dir>          test this installed copy of the example instead of examples/lit
  --only <modes>       run only these modes, comma-separated: dev, build, esbuild, rollup, webpack,
                       loading (how the engine loads), readme (the README's browser example)
  --screenshot <file>  where the built page's screenshot goes (default: docs/lit-example.png)
  --no-screenshot      take none
  -h, --help           this text

  CHROMIUM_PATH=<path> use this Chromium instead of /usr/bin/chromium (never installed)`

const { values: options } = parseArgs({
  options: {
    'skip-packed': { type: 'boolean' },
    app: { type: 'string' },
    only: { type: 'string' },
    screenshot: { type: 'string' },
    'no-screenshot': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
})
if (options.help) {
  console.log(USAGE)
  process.exit(0)
}
const MODES = ['dev', 'build', 'esbuild', 'rollup', 'webpack', 'loading', 'readme']
const only = options.only === undefined ? MODES : options.only.split(',')
const unknownModes = only.filter((m) => !MODES.includes(m))
if (unknownModes.length > 0) {
  console.error(`--only takes ${MODES.join(', ')}, not ${unknownModes.join(', ')}\n\n${USAGE}`)
  process.exit(2)
}
const EXAMPLE = options.app ? resolve(options.app) : EXAMPLE_SOURCE
const SCREENSHOT = options['no-screenshot'] ? null : resolve(options.screenshot ?? join(ROOT, 'docs', 'lit-example.png'))

// ---------------------------------------------------------------------------------
// Processes and servers, all bounded and all ended on the way out.

const children = new Set()
// What is left to end, newest last: servers, the browser, temporary directories.
const cleanups = new Set()

/** Registers `fn` to run at the end; returns a function that runs it now instead (once). */
function atEnd(fn) {
  cleanups.add(fn)
  return async () => {
    if (cleanups.delete(fn)) await fn()
  }
}

process.on('exit', () => {
  for (const child of children) killGroup(child, 'SIGKILL')
})

// The whole run, servers and browser included, may not take longer than this.
const WATCHDOG_MS = 10 * 60_000
const watchdog = setTimeout(async () => {
  console.log(`not ok - the run did not finish within ${WATCHDOG_MS / 60_000} minutes`)
  await cleanUp()
  process.exit(1)
}, WATCHDOG_MS)
watchdog.unref()

function killGroup(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal) // the child leads its own process group (detached)
  } catch {
    try {
      child.kill(signal)
    } catch {}
  }
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((done) => child.once('exit', done))
  killGroup(child, 'SIGTERM')
  if ((await withTimeout(exited, 5_000)) === TIMED_OUT) {
    killGroup(child, 'SIGKILL')
    await withTimeout(exited, 5_000)
  }
  children.delete(child)
}

async function cleanUp() {
  for (const fn of [...cleanups].reverse()) {
    cleanups.delete(fn)
    try {
      await withTimeout(fn(), 15_000)
    } catch (error) {
      console.log(`# cleanup: ${error.message}`)
    }
  }
}

const TIMED_OUT = Symbol('timed out')

function withTimeout(promise, ms) {
  let timer
  return Promise.race([promise, new Promise((done) => { timer = setTimeout(() => done(TIMED_OUT), ms) })]).finally(() => clearTimeout(timer))
}

/** The last lines of a command's output, without colours. */
function tail(output, lines = 40) {
  const all = output.replace(/\x1b\[[0-9;]*m/g, '').trimEnd().split('\n')
  return (all.length > lines ? [`(${all.length - lines} lines before)`, ...all.slice(-lines)] : all).join('\n')
}

/** Runs a command to its end within `timeoutMs`; rejects with its output when it fails. */
function run(command, args, { cwd, timeoutMs, env }) {
  console.log(`# $ ${[command, ...args].join(' ')}   (in ${cwd})`)
  const started = performance.now()
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    let output = ''
    let stdout = ''
    child.stdout.on('data', (chunk) => { output += chunk; stdout += chunk })
    child.stderr.on('data', (chunk) => { output += chunk })
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL')
      fail(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs / 1000} s\n${tail(output)}`))
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      children.delete(child)
      fail(new Error(`${command} could not start: ${error.message}`))
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      children.delete(child)
      if (code === 0) done({ output, stdout, ms: performance.now() - started })
      else fail(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`})\n${tail(output)}`))
    })
  })
}

// ---------------------------------------------------------------------------------
// The two ways of serving the app.

// The dev server, as `vite` (npm run dev) starts it, with nothing but the CSP header
// added (server.headers); configFile: false, since the app must need no config.
const DEV_SERVER = `
const { createServer } = await import('vite')
const server = await createServer({
  configFile: false,
  clearScreen: false,
  server: {
    host: '127.0.0.1',
    port: Number(process.env.LIT_TEST_PORT),
    strictPort: true,
    headers: { 'Content-Security-Policy': process.env.LIT_TEST_CSP },
  },
})
await server.listen()
console.log('LISTENING ' + server.httpServer.address().port)
`

/** A port free now on 127.0.0.1 (Vite 7 reads port 0 as "the default, 5173"). */
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

async function startDevServer(appDir) {
  const started = performance.now()
  const child = spawn(process.execPath, ['--input-type=module', '-e', DEV_SERVER], {
    cwd: appDir,
    env: { ...process.env, NO_COLOR: '1', LIT_TEST_CSP: CSP_DEV, LIT_TEST_PORT: String(await freePort()) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  const stop = atEnd(() => stopChild(child))
  let output = ''
  const port = await withTimeout(new Promise((done, fail) => {
    const onData = (chunk) => {
      output += chunk
      const m = output.match(/LISTENING (\d+)/)
      if (m) done(Number(m[1]))
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk) => { output += chunk })
    child.on('exit', (code) => fail(new Error(`the Vite dev server exited (${code}) before listening\n${output}`)))
  }), 60_000)
  if (port === TIMED_OUT) throw new Error(`the Vite dev server did not listen within 60 s\n${output}`)
  return { url: `http://127.0.0.1:${port}/`, ms: performance.now() - started, log: () => output, stop }
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
}

/** A static server for dist/: the CSP on every response, no COOP/COEP, no fallbacks. */
async function serveStatic(dir) {
  const root = resolve(dir)
  const server = createServer(async (request, response) => {
    const headers = { 'Content-Security-Policy': CSP_BUILD, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' }
    let path
    try {
      path = decodeURIComponent(new URL(request.url, 'http://127.0.0.1').pathname)
    } catch {
      return response.writeHead(400, headers).end()
    }
    if (path.endsWith('/')) path += 'index.html'
    const file = resolve(join(root, path))
    let body
    if (file.startsWith(root + sep) && !path.split('/').some((part) => part.startsWith('.'))) {
      try {
        if ((await stat(file)).isFile()) body = await readFile(file)
      } catch {}
    }
    if (body === undefined) return response.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end('not found\n')
    response.writeHead(200, { ...headers, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream', 'Content-Length': body.length })
    response.end(request.method === 'HEAD' ? undefined : body)
  })
  await new Promise((done, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', done)
  })
  const close = atEnd(() => new Promise((done) => {
    server.closeAllConnections()
    server.close(() => done())
  }))
  return { url: `http://127.0.0.1:${server.address().port}/`, close }
}

// ---------------------------------------------------------------------------------
// The page.

// Runs in the page before its own scripts: records what bubbles up to the document.
function probe(types) {
  const p = (window.__litTest = { events: [], violations: [], errors: [], started: null, finished: null })
  const plain = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))
  for (const type of types) {
    document.addEventListener(type, (event) => {
      const d = event.detail ?? {}
      const x = d.execution
      p.events.push({
        type,
        at: Math.round(performance.now()),
        target: event.target?.localName,
        bubbles: event.bubbles,
        composed: event.composed,
        custom: event instanceof CustomEvent,
        executionId: x?.id ?? d.executionId,
        toolName: x?.toolName ?? d.toolName,
        toolCallId: x?.toolCallId,
        status: x?.status,
        attemptNumber: d.attemptNumber,
        maxAttempts: d.maxAttempts,
        delayMs: d.delayMs,
        error: d.error && { category: d.error.category, code: d.error.code, message: d.error.message },
        result: plain(d.result),
      })
    })
  }
  document.addEventListener('securitypolicyviolation', (e) => {
    p.violations.push(`${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber} ${e.sample}`)
  }, true)
  window.addEventListener('error', (e) => p.errors.push(`uncaught: ${e.message} at ${e.filename}:${e.lineno}`))
  window.addEventListener('unhandledrejection', (e) => p.errors.push(`unhandled rejection: ${e.reason?.stack ?? e.reason}`))
  document.addEventListener('conversation-started', () => { p.started = Math.round(performance.now()) })
  document.addEventListener('conversation-finished', (e) => {
    p.finished = { at: Math.round(performance.now()), messages: plain(e.detail.messages) }
  })
}

// What the element shows once done, read from its shadow root.
function readDom() {
  const chat = document.querySelector('toolhost-chat')
  const log = document.querySelector('event-log')
  const cards = [...(chat?.shadowRoot?.querySelectorAll('.card') ?? [])].map((card) => ({
    toolCallId: card.dataset.toolCallId,
    phase: card.dataset.phase,
    text: card.textContent.replace(/\s+/g, ' ').trim(),
  }))
  const wasm = performance.getEntriesByType('resource').find((r) => r.name.endsWith('.wasm'))
  return {
    state: chat?.state,
    cards,
    answer: chat?.shadowRoot?.querySelector('.turns > li.assistant:last-of-type > p')?.textContent,
    logEntries: log?.shadowRoot?.querySelectorAll('li').length,
    crossOriginIsolated: window.crossOriginIsolated,
    wasm: wasm && { url: wasm.name, bytes: wasm.encodedBodySize, ms: Math.round(wasm.responseEnd - wasm.startTime), startedAt: Math.round(wasm.startTime) },
    scripts: performance.getEntriesByType('resource').filter((r) => r.initiatorType === 'script' || r.name.endsWith('.js')).length,
    // When the page's own code started and when the engine was ready (main.js marks
    // them), and when the page's load event came.
    appStart: Math.round(performance.getEntriesByName('app-start')[0]?.startTime ?? NaN),
    engineReady: Math.round(performance.getEntriesByName('engine-ready')[0]?.startTime ?? NaN),
    loadEvent: Math.round(performance.getEntriesByType('navigation')[0]?.loadEventStart ?? NaN),
  }
}

async function openApp(browser, url, { screenshot, expectedCsp }) {
  const context = await browser.createBrowserContext()
  const closeContext = atEnd(() => context.close().catch(() => {}))
  const page = await context.newPage()
  await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 2 })
  const problems = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()} (${m.location()?.url ?? ''})`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`))
  // Every load of the page, reloads included (the dev server reloads the page when
  // it has optimized a dependency it discovered late).
  const documents = []
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`)
    if (r.request().resourceType() === 'document' && r.frame() === page.mainFrame()) documents.push({ status: r.status(), headers: r.headers() })
  })
  await page.evaluateOnNewDocument(probe, LIFECYCLE)
  try {
    return await runApp(page, url, { screenshot, expectedCsp, problems, documents })
  } catch (error) {
    // Say what the page saw before it failed.
    const seen = await page.evaluate(() => window.__litTest).catch(() => undefined)
    const lines = [...problems, ...(seen?.violations ?? []).map((v) => `CSP violation: ${v}`), ...(seen?.errors ?? [])]
    if (seen) lines.push(`events so far: ${seen.events.map((e) => `${e.toolCallId ?? e.executionId} ${e.type.slice(15)}`).join(', ') || 'none'}`)
    error.message += lines.map((l) => `\n${l}`).join('')
    throw error
  } finally {
    await closeContext()
  }
}

async function runApp(page, url, { screenshot, expectedCsp, problems, documents }) {
  await page.goto(url, { waitUntil: 'load', timeout: 60_000 })
  await page.waitForFunction(() => window.__litTest.finished !== null || window.__litTest.errors.length > 0 || document.querySelector('toolhost-chat')?.state === 'error', { timeout: 60_000, polling: 50 })
  // Let anything late (a console error, a violation report) arrive.
  await new Promise((done) => setTimeout(done, 300))
  const recorded = await page.evaluate(() => window.__litTest)
  const dom = await page.evaluate(readDom)
  if (screenshot) {
    mkdirSync(dirname(screenshot), { recursive: true })
    await page.screenshot({ path: screenshot, fullPage: true })
  }

  problems.push(...recorded.violations.map((v) => `CSP violation: ${v}`), ...recorded.errors)
  if (documents.length > 1) console.log(`#   the page was loaded ${documents.length} times (HTTP ${documents.map((d) => d.status).join(', ')})`)
  for (const { status, headers } of documents) {
    if (status === 200 && headers['content-security-policy'] !== expectedCsp) problems.push(`the page was served with CSP ${headers['content-security-policy']}, not the expected one`)
    for (const h of ['cross-origin-opener-policy', 'cross-origin-embedder-policy']) {
      if (headers[h] !== undefined) problems.push(`the page was served with ${h}: ${headers[h]}`)
    }
  }
  if (!documents.some((d) => d.status === 200)) problems.push(`the page never loaded with HTTP 200 (${documents.map((d) => d.status).join(', ')})`)
  if (dom.crossOriginIsolated !== false) problems.push(`crossOriginIsolated is ${dom.crossOriginIsolated}, expected false`)
  return { recorded, dom, problems }
}

// ---------------------------------------------------------------------------------
// What the conversation must have done.

const SEARCH = ['started', 'validating', 'executing', 'retrying', 'executing', 'retrying', 'executing', 'succeeded']
const BAD_BOOKING = ['started', 'validating', 'failed']
const BOOKING = ['started', 'validating', 'executing', 'succeeded']

function checkConversation({ recorded, dom }) {
  const failures = []
  const expect = (ok, message) => {
    if (!ok) failures.push(message)
  }
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)
  const { events, finished } = recorded
  if (finished === null) {
    failures.push(`the conversation did not finish; events heard: ${events.map((e) => `${e.toolCallId ?? ''} ${e.type.slice(15)}`).join(', ') || 'none'}`)
    return { failures, summary: [] }
  }

  for (const e of events) {
    if (e.target !== 'toolhost-chat' || !e.bubbles || !e.composed || !e.custom) {
      failures.push(`${e.type} reached the document from <${e.target}> (bubbles ${e.bubbles}, composed ${e.composed}, CustomEvent ${e.custom}), expected a bubbling, composed CustomEvent from <toolhost-chat>`)
      break
    }
  }

  // One list of events per execution, named by the model's tool call id.
  const callOf = new Map(events.filter((e) => e.type === 'tool-execution-started').map((e) => [e.executionId, e.toolCallId]))
  const byCall = new Map()
  for (const e of events) {
    const call = callOf.get(e.executionId) ?? `(execution ${e.executionId} without a started event)`
    if (!byCall.has(call)) byCall.set(call, [])
    byCall.get(call).push(e)
  }
  const phases = (call) => (byCall.get(call) ?? []).map((e) => e.type.slice('tool-execution-'.length))
  expect(same([...byCall.keys()], ['call_1', 'call_2', 'call_3']), `executions for tool calls ${[...byCall.keys()].join(', ')}, expected call_1, call_2, call_3`)

  const search = byCall.get('call_1') ?? []
  expect(same(phases('call_1'), SEARCH), `call_1 (search_flights): ${phases('call_1').join(' > ')}, expected ${SEARCH.join(' > ')}`)
  expect(search.every((e) => e.toolName === 'search_flights'), 'call_1 is not search_flights')
  const attempts = search.filter((e) => e.type === 'tool-execution-executing').map((e) => e.attemptNumber)
  expect(same(attempts, [1, 2, 3]), `call_1 ran attempts ${attempts}, expected 1,2,3`)
  const retries = search.filter((e) => e.type === 'tool-execution-retrying')
  expect(same(retries.map((e) => [e.attemptNumber, e.maxAttempts, e.delayMs]), [[2, 3, 300], [3, 3, 600]]),
    `call_1 retries (attempt, of, delay): ${JSON.stringify(retries.map((e) => [e.attemptNumber, e.maxAttempts, e.delayMs]))}, expected [[2,3,300],[3,3,600]]`)
  expect(retries.every((e) => e.error?.category === 'transient' && /503/.test(e.error.message)), `call_1 retried after ${JSON.stringify(retries.map((e) => e.error))}, expected transient 503 errors`)
  const found = search.at(-1)?.result
  expect(found?.to === 'LIS' && found?.flights?.[0]?.flight === 'TP433', `call_1 result ${JSON.stringify(found)}`)

  expect(same(phases('call_2'), BAD_BOOKING), `call_2 (book_flight, bad arguments): ${phases('call_2').join(' > ')}, expected ${BAD_BOOKING.join(' > ')}`)
  const refused = byCall.get('call_2')?.at(-1)?.error
  expect(refused?.category === 'validation' && refused?.code === 'INVALID_ARGUMENTS', `call_2 failed with ${JSON.stringify(refused)}, expected validation / INVALID_ARGUMENTS`)

  expect(same(phases('call_3'), BOOKING), `call_3 (book_flight, corrected): ${phases('call_3').join(' > ')}, expected ${BOOKING.join(' > ')}`)
  const booked = byCall.get('call_3')?.at(-1)?.result
  expect(same(booked, { confirmation: 'K7Q2XD', flight: 'TP433', passengers: 2 }), `call_3 result ${JSON.stringify(booked)}`)

  // The turns follow each other: each call starts after the previous one ended.
  const at = (call, type) => byCall.get(call)?.find((e) => e.type === `tool-execution-${type}`)?.at ?? NaN
  const i = (call, type) => events.findIndex((e) => callOf.get(e.executionId) === call && e.type === `tool-execution-${type}`)
  expect(i('call_1', 'succeeded') < i('call_2', 'started') && i('call_2', 'failed') < i('call_3', 'started'), 'the calls did not run one turn after another')

  const messages = finished.messages
  const reply = messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_2')?.content ?? ''
  expect(reply.includes('/passengers'), `the error reply sent to the model does not name /passengers: ${reply}`)
  const answer = messages.at(-1)
  expect(answer.role === 'assistant' && /K7Q2XD/.test(answer.content), `the model's last message is ${JSON.stringify(answer)}`)

  // What the element rendered.
  expect(dom.state === 'done', `<toolhost-chat state="${dom.state}">, expected done`)
  expect(same(dom.cards.map((c) => [c.toolCallId, c.phase]), [['call_1', 'succeeded'], ['call_2', 'failed'], ['call_3', 'succeeded']]),
    `cards shown: ${JSON.stringify(dom.cards.map((c) => [c.toolCallId, c.phase]))}`)
  expect(dom.cards[0]?.text.includes('retrying 300 ms') && dom.cards[0]?.text.includes('retrying 600 ms'), 'the search card does not show its two retries')
  expect(dom.cards[1]?.text.includes('INVALID_ARGUMENTS'), 'the failed card does not show INVALID_ARGUMENTS')
  expect(/K7Q2XD/.test(dom.answer ?? ''), `the answer shown is ${JSON.stringify(dom.answer)}`)
  expect(dom.logEntries === events.length, `<event-log> lists ${dom.logEntries} events, the document heard ${events.length}`)

  // Importing toolhost blocks nothing: the page's code runs, and renders, before the
  // engine is fetched (main.js calls ready() after its imports).
  expect(dom.appStart <= (dom.wasm?.startedAt ?? -Infinity), `the page's code started at ${dom.appStart} ms, after the .wasm fetch began at ${dom.wasm?.startedAt} ms`)
  expect(dom.engineReady >= dom.appStart, `engine-ready (${dom.engineReady} ms) came before app-start (${dom.appStart} ms)`)
  return { failures, summary: [...byCall].map(([call, list]) => `${call} ${list[0]?.toolName}: ${phases(call).join(' > ')}`) }
}

// ---------------------------------------------------------------------------------

function ensureWasm() {
  const wasm = join(ROOT, 'wasm', 'toolhost_wasm_bg.wasm')
  if (!existsSync(wasm) || !existsSync(join(ROOT, 'wasm', 'toolhost_wasm.js'))) {
    throw new Error('wasm/ is not built: run `npm run build:wasm` first (this test builds nothing Rust)')
  }
}

/** What node_modules/toolhost lacks or holds in another version than the repository. */
function staleFiles(installed) {
  const stale = []
  const differs = (path) => !existsSync(join(installed, path)) || !readFileSync(join(ROOT, path)).equals(readFileSync(join(installed, path)))
  for (const dir of ['js', 'wasm']) {
    for (const name of readdirSync(join(ROOT, dir))) {
      if (statSync(join(ROOT, dir, name)).isFile() && differs(`${dir}/${name}`)) stale.push(`${dir}/${name}`)
    }
  }
  if (differs('package.json')) stale.push('package.json')
  return stale
}

// examples/lit installs toolhost from ../.. as a copy (its .npmrc sets install-links),
// the way a user gets the package, so a change to js/ or wasm/ only reaches it through
// a new install: when the copy is out of date, it is installed again.
async function ensureInstalled(appDir) {
  const modules = join(appDir, 'node_modules')
  const installed = join(modules, 'toolhost')
  const needed = ['toolhost', ...Object.keys(JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')).devDependencies), 'lit']
  if (needed.every((name) => existsSync(join(modules, name)))) {
    const stale = lstatSync(installed).isSymbolicLink() ? ['(a symlink, not a copy)'] : staleFiles(installed)
    if (stale.length === 0) return
    console.log(`# ${installed} differs from the repository (${stale.slice(0, 4).join(', ')}${stale.length > 4 ? ', ...' : ''}): installing it again`)
    rmSync(installed, { recursive: true, force: true })
  }
  // --ignore-scripts (also in the example's .npmrc): toolhost's own install script
  // builds the Node addon, which a browser app never loads.
  const { ms } = await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: appDir, timeoutMs: 300_000 })
  console.log(`# npm install in ${appDir}: ${(ms / 1000).toFixed(1)} s`)
  const still = staleFiles(installed)
  if (still.length > 0) throw new Error(`after npm install, ${installed} still differs from the repository: ${still.join(', ')}`)
}

/** A copy of the example that depends on `npm pack` of the repository, installed. */
async function preparePacked() {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-lit-packed-'))
  atEnd(async () => rmSync(dir, { recursive: true, force: true }))
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, timeoutMs: 120_000 })
  const [info] = JSON.parse(packed.stdout)
  const files = info.files.map((f) => f.path)
  const needed = ['package.json', 'js/browser.mjs', 'js/api.mjs', 'js/index.d.ts', 'wasm/toolhost_wasm.js', 'wasm/toolhost_wasm_bg.wasm']
  const missing = needed.filter((f) => !files.includes(f))
  if (missing.length > 0) throw new Error(`the packed tarball lacks ${missing.join(', ')}`)
  console.log(`# npm pack: ${info.filename}, ${(info.size / 1024 / 1024).toFixed(2)} MiB, ${info.entryCount} files (${files.filter((f) => f.startsWith('js/')).length} in js/, ${files.filter((f) => f.startsWith('wasm/')).length} in wasm/)`)

  const app = join(dir, 'app')
  mkdirSync(app)
  for (const entry of ['index.html', 'src', 'public', 'copy-page.mjs', '.npmrc']) {
    if (existsSync(join(EXAMPLE_SOURCE, entry))) cpSync(join(EXAMPLE_SOURCE, entry), join(app, entry), { recursive: true })
  }
  const pkg = JSON.parse(readFileSync(join(EXAMPLE_SOURCE, 'package.json'), 'utf8'))
  pkg.dependencies.toolhost = `file:${join(dir, info.filename)}`
  writeFileSync(join(app, 'package.json'), JSON.stringify(pkg, null, 2))
  // A user's `npm install toolhost` would run the package's install script (the napi
  // build); the browser never needs it, so it is skipped here.
  const { ms } = await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: app, timeoutMs: 300_000 })
  console.log(`# npm install of the tarball: ${(ms / 1000).toFixed(1)} s`)
  if (!statSync(join(app, 'node_modules', 'toolhost')).isDirectory()) throw new Error('toolhost was not installed into node_modules')
  return app
}

/** Files under `dir`, with their sizes, sorted by path. */
function listFiles(dir, prefix = '') {
  const files = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) files.push(...listFiles(path, `${prefix}${name}/`))
    else files.push({ path: `${prefix}${name}`, bytes: statSync(path).size })
  }
  return files
}

// What a page importing only `toolhost` must not bundle: toolhost/mcp (its code asks
// for 'tools/list'), the MCP SDK (an optional peer the page does not have), Node's
// modules, or Vite's stand-ins for Node modules it could not bundle.
const FOREIGN = [
  /["']tools\/list["']/,
  /(from|import\(|require\()\s*["']@modelcontextprotocol\//,
  /(from|import\(|require\()\s*["']node:/,
  /__vite-browser-external/,
]
// webpack's performance hints are not problems of the build: they name the .wasm, over
// the 244 KiB webpack suggests for any asset.
const WEBPACK_HINTS = /WARNING in (asset size limit|entrypoint size limit|webpack performance recommendations)|compiled with \d+ warnings?/

/** Problems of a built dist/: the MCP SDK or a Node module in a bundle, a bundler warning. */
function checkBundle(dist, output) {
  const problems = []
  const files = listFiles(dist)
  const scripts = files.filter((f) => /\.m?js$/.test(f.path))
  if (scripts.length === 0) problems.push('the build wrote no script')
  for (const f of scripts) {
    const text = readFileSync(join(dist, f.path), 'utf8')
    for (const re of FOREIGN) if (re.test(text)) problems.push(`dist/${f.path} holds ${re.source}: a page importing only toolhost bundled MCP or Node code`)
  }
  if (!files.some((f) => f.path.endsWith('.wasm'))) problems.push('dist/ holds no .wasm')
  const lines = output.replace(/\x1b\[[0-9;]*m/g, '').split('\n')
  const warnings = lines.filter((l) => /warn/i.test(l) && !/^npm warn/i.test(l.trim()) && !WEBPACK_HINTS.test(l))
  for (const w of warnings) problems.push(`the bundler warned: ${w.trim()}`)
  // A performance hint may name only the .wasm (the lines under it list the assets).
  const hinted = lines.filter((l) => /^\s+\S+\.(m?js|css)\s+\(\d/.test(l))
  for (const h of hinted) problems.push(`webpack's size hint names a script or style, not only the .wasm: ${h.trim()}`)
  return problems
}

// The page that checks how the engine loads, bundled with esbuild (the installed
// package's browser entry, as any bundler resolves it) and served with its .wasm moved
// to engine/: the bundle's own URL for it (next to the bundle) is missing on purpose.
const LOADING_PAGE = `
import { ToolExecutionManager, ToolRegistry, ready } from 'toolhost'
const out = (window.__loading = { done: false })
const attempt = async (f) => {
  try {
    await f()
    return 'no error'
  } catch (e) {
    return { code: e.code, message: e.message }
  }
}
out.beforeReady = await attempt(() => new ToolRegistry())
// Asked while the load that constructor started (from the missing URL) is under way:
// its wasm is tried when that load fails (it was dropped, and this rejected too).
const t0 = performance.now()
const early = attempt(() => ready({ wasm: new URL('./engine/toolhost_wasm_bg.wasm', location.href) }))
out.missingWasm = await attempt(() => ready())
out.misspelt = await attempt(() => ready({ wams: 'x' }))
out.early = await early
out.loadMs = Math.round(performance.now() - t0)
await ready({ wasm: new URL('./engine/toolhost_wasm_bg.wasm', location.href) })
out.sameLoad = ready() === ready()
const registry = new ToolRegistry()
registry.register({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, handler: ({ text }) => text })
out.mount = await attempt(() => registry.mountMcp({ url: 'http://127.0.0.1:9/mcp' }))
const r = await new ToolExecutionManager(registry).execute('echo', { text: 'hi' })
out.result = r.success ? r.result : r.error
out.done = true
`

async function checkLoading(app, browser, results) {
  const label = `${app.name}: engine loading (esbuild bundle, .wasm moved)`
  const started = performance.now()
  const failures = []
  try {
    const esbuild = await import('esbuild')
    const dist = mkdtempSync(join(tmpdir(), 'toolhost-loading-'))
    atEnd(async () => rmSync(dist, { recursive: true, force: true }))
    // Bundled from the app's directory, so `toolhost` is its installed copy.
    await esbuild.build({ stdin: { contents: LOADING_PAGE, resolveDir: app.dir, sourcefile: 'loading.js' }, bundle: true, format: 'esm', platform: 'browser', outfile: join(dist, 'loading.js'), logLevel: 'silent' })
    writeFileSync(join(dist, 'index.html'), '<!doctype html><meta charset="utf-8"><title>loading</title><script type="module" src="./loading.js"></script>\n')
    mkdirSync(join(dist, 'engine'))
    cpSync(join(app.dir, 'node_modules', 'toolhost', 'wasm', 'toolhost_wasm_bg.wasm'), join(dist, 'engine', 'toolhost_wasm_bg.wasm'))
    const server = await serveStatic(dist)
    const context = await browser.createBrowserContext()
    const closeContext = atEnd(() => context.close().catch(() => {}))
    let seen
    try {
      const page = await context.newPage()
      const consoleErrors = []
      page.on('console', (m) => { if (m.type() === 'error' && !/404|Failed to load resource/.test(m.text())) consoleErrors.push(m.text()) })
      page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`))
      await page.goto(server.url, { waitUntil: 'load', timeout: 60_000 })
      await page.waitForFunction(() => window.__loading?.done === true, { timeout: 60_000, polling: 50 }).catch(() => {})
      seen = await page.evaluate(() => window.__loading)
      failures.push(...consoleErrors.map((e) => `console: ${e}`))
    } finally {
      await closeContext()
      await server.close()
    }
    const expect = (ok, message) => { if (!ok) failures.push(message) }
    expect(seen?.done === true, `the page did not finish: ${JSON.stringify(seen)}`)
    expect(seen?.beforeReady?.code === 'ENGINE_NOT_READY' && /await ready\(\)/.test(seen.beforeReady.message), `new ToolRegistry() before ready(): ${JSON.stringify(seen?.beforeReady)}`)
    expect(seen?.missingWasm?.code === 'ENGINE_LOAD_FAILED' && /toolhost_wasm_bg\.wasm/.test(seen.missingWasm.message) && /ready\(\{ wasm/.test(seen.missingWasm.message), `ready() with the .wasm missing: ${JSON.stringify(seen?.missingWasm)}`)
    expect(seen?.misspelt?.code === 'INVALID_CONFIG' && /wams/.test(seen.misspelt.message), `ready({ wams }): ${JSON.stringify(seen?.misspelt)}`)
    expect(seen?.early === 'no error', `ready({ wasm }) while the constructor's load was under way: ${JSON.stringify(seen?.early)}`)
    expect(seen?.sameLoad === true, 'ready() returned a new promise once loaded')
    expect(seen?.mount?.code === 'MCP_NOT_LOADED' && /toolhost\/mcp/.test(seen.mount.message), `registry.mountMcp without toolhost/mcp: ${JSON.stringify(seen?.mount)}`)
    expect(seen?.result === 'hi', `the first call after ready({ wasm }): ${JSON.stringify(seen?.result)}`)
    if (seen?.loadMs !== undefined) console.log(`#   ready({ wasm }) loaded the engine in ${seen.loadMs} ms`)
  } catch (error) {
    failures.push(String(error?.message ?? error))
  }
  results.push({ label, ok: failures.length === 0 })
  console.log(`${failures.length === 0 ? 'ok' : 'not ok'} ${results.length} - ${label} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
  for (const f of failures) console.log(`#   FAIL ${f}`)
}

// The README's browser example (the ```js norun block that defines <local-time>), run as
// written: bundled with esbuild against the app's installed lit and toolhost, the
// button clicked once the engine is there, the time read back; then with a zone that
// does not exist, whose RangeError is the call's failure.
function readmeBlock() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const block = [...readme.matchAll(/```js norun\n([\s\S]*?)```/g)].map((m) => m[1]).find((code) => code.includes("customElements.define('local-time'"))
  if (block === undefined) throw new Error("README.md has no js norun block defining <local-time>")
  return block
}

async function checkReadme(app, browser, results) {
  const label = `${app.name}: the README's browser example`
  const started = performance.now()
  const failures = []
  try {
    const esbuild = await import('esbuild')
    const dist = mkdtempSync(join(tmpdir(), 'toolhost-readme-'))
    atEnd(async () => rmSync(dist, { recursive: true, force: true }))
    await esbuild.build({ stdin: { contents: readmeBlock(), resolveDir: app.dir, sourcefile: 'readme.js' }, bundle: true, format: 'esm', platform: 'browser', outfile: join(dist, 'readme.js'), logLevel: 'silent' })
    cpSync(join(app.dir, 'node_modules', 'toolhost', 'wasm', 'toolhost_wasm_bg.wasm'), join(dist, 'toolhost_wasm_bg.wasm'))
    writeFileSync(join(dist, 'index.html'), '<!doctype html><meta charset="utf-8"><title>README</title><script type="module" src="./readme.js"></script>\n')
    const server = await serveStatic(dist)
    const context = await browser.createBrowserContext()
    const closeContext = atEnd(() => context.close().catch(() => {}))
    try {
      const page = await context.newPage()
      page.on('console', (m) => { if (m.type() === 'error' && !/favicon/.test(m.location()?.url ?? '')) failures.push(`console.error: ${m.text()} (${m.location()?.url ?? ''})`) })
      page.on('pageerror', (e) => failures.push(`page error: ${e.stack ?? e.message}`))
      await page.evaluateOnNewDocument(() => {
        window.__events = []
        for (const type of ['tool-execution-succeeded', 'tool-execution-failed']) document.addEventListener(type, () => window.__events.push(type))
      })
      await page.goto(server.url, { waitUntil: 'load', timeout: 60_000 })
      const output = async (zone) => {
        await page.waitForFunction(() => document.querySelector('local-time')?.shadowRoot?.querySelector('button:not([disabled])'), { timeout: 30_000, polling: 50 })
        await page.evaluate((z) => { document.querySelector('local-time').timeZone = z }, zone)
        await page.evaluate(() => document.querySelector('local-time').updateComplete)
        const before = await page.evaluate(() => document.querySelector('local-time').shadowRoot.querySelector('output').textContent)
        await page.evaluate(() => document.querySelector('local-time').shadowRoot.querySelector('button').click())
        await page.waitForFunction((b) => document.querySelector('local-time').shadowRoot.querySelector('output').textContent !== b, { timeout: 30_000, polling: 50 }, before)
        return page.evaluate(() => document.querySelector('local-time').shadowRoot.querySelector('output').textContent)
      }
      const time = await output('Asia/Tokyo')
      if (!/^\d{2}:\d{2}:\d{2}$/.test(time)) failures.push(`the time in Asia/Tokyo reads ${JSON.stringify(time)}`)
      const failed = await output('Mars/Olympus_Mons')
      if (!/RangeError|time zone/i.test(failed)) failures.push(`an unknown zone reads ${JSON.stringify(failed)}, expected its RangeError`)
      const events = await page.evaluate(() => window.__events)
      if (JSON.stringify(events) !== JSON.stringify(['tool-execution-succeeded', 'tool-execution-failed'])) failures.push(`events sent up: ${JSON.stringify(events)}`)
      console.log(`#   Asia/Tokyo: ${time}; Mars/Olympus_Mons: ${failed.slice(0, 100)}`)
    } finally {
      await closeContext()
      await server.close()
    }
  } catch (error) {
    failures.push(String(error?.message ?? error))
  }
  results.push({ label, ok: failures.length === 0 })
  console.log(`${failures.length === 0 ? 'ok' : 'not ok'} ${results.length} - ${label} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
  for (const f of failures) console.log(`#   FAIL ${f}`)
}

async function main() {
  ensureWasm()
  const chromium = ensureChromium()
  const configs = ['vite.config.js', 'vite.config.mjs', 'vite.config.ts', 'webpack.config.js', 'webpack.config.mjs', 'rollup.config.js', 'rollup.config.mjs'].filter((f) => existsSync(join(EXAMPLE, f)))
  if (configs.length > 0) throw new Error(`examples/lit has ${configs.join(', ')}: the example must build with no bundler config`)
  if (!options.app) await ensureInstalled(EXAMPLE)
  const apps = [{ name: options.app ? 'app' : 'example', dir: EXAMPLE }]
  if (!options['skip-packed'] && !options.app) apps.push({ name: 'packed', dir: await preparePacked() })

  const launched = await launchBrowser(chromium)
  atEnd(() => launched.close())
  console.log(`# ${launched.version}`)

  const results = []
  const check = async (label, body) => {
    const started = performance.now()
    try {
      const outcome = await body()
      const { failures, summary } = checkConversation(outcome)
      failures.push(...outcome.problems)
      const ms = performance.now() - started
      results.push({ label, ok: failures.length === 0 })
      console.log(`${failures.length === 0 ? 'ok' : 'not ok'} ${results.length} - ${label} (${(ms / 1000).toFixed(1)} s)`)
      for (const line of summary) console.log(`#   ${line}`)
      const { started: t0, finished } = outcome.recorded
      const wasm = outcome.dom.wasm
      const { appStart, engineReady, loadEvent } = outcome.dom
      console.log(`#   page: its code started at ${appStart} ms after navigation (load event ${loadEvent} ms), engine ready at ${engineReady} ms; ` +
        `conversation started ${t0} ms, finished at ${finished?.at} ms; ` +
        (wasm ? `wasm ${(wasm.bytes / 1024).toFixed(0)} KiB as sent fetched in ${wasm.ms} ms (from ${wasm.url.replace(/^https?:\/\/[^/]+/, '')})` : 'no separate .wasm fetched'))
      for (const f of failures) console.log(`#   FAIL ${f}`)
    } catch (error) {
      results.push({ label, ok: false })
      // A failed command or page says what went wrong in its message; the stack of
      // this script would add nothing.
      console.log(`not ok ${results.length} - ${label}\n#   ${String(error?.message ?? error).split('\n').join('\n#   ')}`)
    }
  }

  for (const app of apps) {
    if (only.includes('dev')) {
      await check(`${app.name}: vite dev server`, async () => {
        const dev = await startDevServer(app.dir)
        console.log(`# ${app.name}: dev server ready in ${(dev.ms / 1000).toFixed(1)} s at ${dev.url}`)
        try {
          return await openApp(launched.browser, dev.url, { expectedCsp: CSP_DEV })
        } finally {
          await dev.stop()
          const log = dev.log().trim()
          if (log) console.log(`#   vite: ${log.split('\n').join('\n#   vite: ')}`)
        }
      })
    }
    for (const [mode, script] of [['build', 'build'], ['esbuild', 'build:esbuild'], ['rollup', 'build:rollup'], ['webpack', 'build:webpack']]) {
      if (!only.includes(mode)) continue
      await check(`${app.name}: npm run ${script}, static server`, async () => {
        const dist = join(app.dir, 'dist')
        rmSync(dist, { recursive: true, force: true })
        const built = await run('npm', ['run', script], { cwd: app.dir, timeoutMs: 180_000 })
        console.log(`# ${app.name}: npm run ${script} in ${(built.ms / 1000).toFixed(1)} s`)
        const bundleProblems = checkBundle(dist, built.output)
        for (const f of listFiles(dist)) console.log(`#   dist/${f.path} ${(f.bytes / 1024).toFixed(1)} KiB`)
        const server = await serveStatic(dist)
        try {
          const outcome = await openApp(launched.browser, server.url, {
            expectedCsp: CSP_BUILD,
            screenshot: app.name === 'example' && mode === 'build' ? SCREENSHOT : null,
          })
          outcome.problems.push(...bundleProblems)
          return outcome
        } finally {
          await server.close()
        }
      })
    }
    if (only.includes('loading')) await checkLoading(app, launched.browser, results)
    if (only.includes('readme') && app.name === 'example') await checkReadme(app, launched.browser, results)
  }

  const passed = results.filter((r) => r.ok).length
  if (SCREENSHOT && results.some((r) => r.label === 'example: npm run build, static server' && r.ok)) console.log(`# screenshot: ${SCREENSHOT}`)
  console.log(`${passed} passed, ${results.length - passed} failed`)
  return results.length - passed === 0 ? 0 : 1
}

let code = 1
try {
  code = await main()
} catch (error) {
  console.log(`not ok - ${String(error.stack ?? error).split('\n').join('\n#   ')}`)
}
await cleanUp()
clearTimeout(watchdog)
process.exit(code)
