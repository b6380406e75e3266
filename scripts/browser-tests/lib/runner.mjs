// Runs test files one after another in one headless Chromium: bundle the file, serve
// it with a page, collect what the page reports, and check the Node-only list.
import { performance } from 'node:perf_hooks'
import { relative, sep } from 'node:path'
import { ensureChromium } from './chromium.mjs'
import { startServer, HARNESS_PREFIX } from './server.mjs'
import { launchBrowser, runPage } from './browser.mjs'
import { bundleTestFile } from './bundle.mjs'
import { createStackMapper } from './stacks.mjs'
import { loadNodeOnlyList, missingListedTests } from './node-only.mjs'

const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)

/** The page: nothing but the bundle's entry, loaded as a module (no inline script, per CSP). */
const pageHtml = (title) => `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<script type="module" src="./entry.js"></script>
</head>
<body></body>
</html>
`

/**
 * Runs `files` (absolute paths). Options: repoRoot, nodeOnlyPath, defaultTimeoutMs
 * (per test), fileTimeoutMs, fileTimeouts ({ relative path: ms }, overrides), printer.
 * Returns { browser, files, nodeOnly, problems, durationMs }.
 */
export async function runFiles({ files, repoRoot, nodeOnlyPath, defaultTimeoutMs, fileTimeoutMs, fileTimeouts = {}, printer }) {
  const started = performance.now()
  const list = await loadNodeOnlyList(nodeOnlyPath, repoRoot)
  const problems = [...list.problems]
  const nodeOnly = []
  const results = []

  const executablePath = ensureChromium()
  const server = await startServer(repoRoot)
  const stacks = createStackMapper({ origin: server.origin, repoRoot })
  let browser = await launchBrowser(executablePath)
  try {
    for (const [index, absolute] of files.entries()) {
      const file = relative(repoRoot, absolute).split(sep).join('/')
      const fileWhy = list.files.get(file)
      if (fileWhy !== undefined) {
        printer.nodeOnlyFile(file, fileWhy)
        nodeOnly.push({ what: file, why: fileWhy })
        results.push({ file, status: 'node-only', reason: fileWhy, durationMs: 0, tests: [], errors: [], console: [] })
        continue
      }
      const listedTests = list.tests.get(file) ?? new Map()
      for (const [name, why] of listedTests) nodeOnly.push({ what: `${file}: ${name}`, why })

      const result = await runFile({
        id: index + 1, absolute, file, listedTests, repoRoot, server, stacks, browser: browser.browser, printer,
        defaultTimeoutMs, timeoutMs: fileTimeouts[file] ?? fileTimeoutMs,
      })
      results.push(result)
      // Only a file that loaded and ran to its end declared all its tests.
      if (result.completed) {
        for (const name of missingListedTests(listedTests, result.tests.map((t) => t.fullName))) {
          problems.push(`node-only list names a test that ${file} does not declare: "${name}"`)
        }
      }
      if (result.browserStuck) {
        await browser.close()
        browser = await launchBrowser(executablePath)
      }
    }
  } finally {
    await browser.close()
    await server.close()
  }
  return { browser: browser.version, files: results, nodeOnly, problems, durationMs: performance.now() - started }
}

async function runFile({ id, absolute, file, listedTests, repoRoot, server, stacks, browser, printer, defaultTimeoutMs, timeoutMs }) {
  const started = performance.now()
  const result = { file, status: 'pass', durationMs: 0, tests: [], errors: [], console: [], cspViolations: [] }
  const addError = (error) => {
    result.errors.push(error)
    printer.error(error)
  }
  printer.fileStart(file)

  const prefix = `${HARNESS_PREFIX}${id}/`
  let outcome = { finished: false }
  let loadFailed = false
  let bundle
  try {
    bundle = await bundleTestFile({
      testFile: absolute,
      repoRoot,
      pageOptions: { file, defaultTimeout: defaultTimeoutMs, nodeOnly: Object.fromEntries(listedTests) },
    })
  } catch (error) {
    addError({ kind: 'bundle', message: error.message })
  }

  if (bundle) {
    server.virtualFiles.set(`${prefix}index.html`, { contents: pageHtml(file), type: 'text/html; charset=utf-8' })
    for (const [name, output] of bundle) {
      server.virtualFiles.set(prefix + name, { contents: output.contents, type: name.endsWith('.map') ? 'application/json' : 'text/javascript; charset=utf-8' })
      if (output.sourceMap) stacks.add(prefix + name, output.sourceMap)
    }
    // Tests started and not finished yet (a subtest runs inside its parent).
    const unfinished = []
    const running = () => unfinished.at(-1)
    try {
      outcome = await runPage(browser, {
        url: `${server.origin}${prefix}index.html`,
        timeoutMs,
        onEvent(event) {
          if (event.type === 'testStart') unfinished.push(event.fullName)
          if (event.type === 'test') {
            const at = unfinished.lastIndexOf(event.fullName)
            if (at >= 0) unfinished.splice(at, 1)
            if (event.error) event.error.stack = stacks.mapStack(event.error.stack)
            result.tests.push(event)
            printer.test(event)
          }
          if (event.type === 'csp') {
            const violation = { during: event.during, directive: event.directive, blocked: event.blocked, source: stacks.mapStack(event.source) }
            result.cspViolations.push(violation)
            printer.cspViolation(violation)
          }
          if (event.type === 'error') {
            if (event.kind === 'load') loadFailed = true
            addError({ kind: event.kind, during: event.during, message: event.error.message, stack: stacks.mapStack(event.error.stack) })
          }
        },
        onConsole(message) {
          result.console.push(message)
          printer.console(message)
          if (message.type === 'error' || message.type === 'assert') {
            const where = message.url ? `at ${message.url}${Number.isInteger(message.line) ? `:${message.line + 1}:1` : ''}` : ''
            addError({ kind: 'console.error', during: running(), message: message.text, stack: stacks.mapStack(where) })
          }
        },
        onPageError(error) {
          addError({ kind: 'pageerror', during: running(), message: error.message, stack: stacks.mapStack(error.stack) })
        },
      })
      if (!outcome.finished) {
        addError({ kind: 'timeout', during: running(), message: `${outcome.why}${running() ? `; "${running()}" was running` : ''}` })
      }
    } catch (error) {
      // The browser itself failed (it crashed or was closed): start a new one.
      addError({ kind: 'browser', message: error.message, stack: error.stack })
      outcome = { finished: false, browserStuck: true }
    } finally {
      for (const key of [...server.virtualFiles.keys()]) if (key.startsWith(prefix)) server.virtualFiles.delete(key)
      stacks.remove(prefix)
    }
  }

  result.durationMs = performance.now() - started
  result.completed = outcome.finished && !loadFailed
  result.browserStuck = Boolean(outcome.browserStuck)
  if (result.errors.length || result.tests.some((t) => t.status === 'fail')) result.status = 'fail'
  printer.fileEnd(result)
  return result
}
