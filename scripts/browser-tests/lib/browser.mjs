// Headless Chromium through puppeteer-core: one browser for the whole run, a fresh
// browser context (own storage and cache) and page per test file.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer from 'puppeteer-core'

// The whole command line is ours (ignoreDefaultArgs), so it is exactly what is here.
// The background-networking flags stop Chromium from calling Google services, which
// the closed network refuses (and which would be noise in any case).
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-breakpad',
  // Containers often have a tiny /dev/shm; Chromium crashes when it fills.
  '--disable-dev-shm-usage',
  // Keep timers running at full speed: tests measure timeouts and backoffs.
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
  '--mute-audio',
]

export async function launchBrowser(executablePath) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'toolhost-browser-tests-'))
  let browser
  try {
    browser = await puppeteer.launch({
      executablePath,
      ignoreDefaultArgs: true,
      args: [...CHROMIUM_ARGS, `--user-data-dir=${userDataDir}`, 'about:blank'],
      pipe: true, // no debugging port to open
      timeout: 60_000,
      protocolTimeout: 60_000,
    })
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true })
    throw error
  }
  return {
    browser,
    version: await browser.version(),
    async close() {
      const child = browser.process()
      const exited = child && child.exitCode === null && child.signalCode === null
        ? new Promise((resolve) => child.once('exit', resolve))
        : Promise.resolve()
      const closed = await withTimeout(browser.close().then(() => true, () => false), 10_000)
      if (closed !== true) child?.kill('SIGKILL')
      // Chromium may still be writing its profile until it has exited.
      await withTimeout(exited, 10_000)
      try {
        rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
      } catch (error) {
        console.log(`# could not remove the browser profile ${userDataDir}: ${error.message}`)
      }
    },
  }
}

const TIMED_OUT = Symbol('timed out')

function withTimeout(promise, ms) {
  let timer
  return Promise.race([
    promise,
    new Promise((resolve) => { timer = setTimeout(() => resolve(TIMED_OUT), ms) }),
  ]).finally(() => clearTimeout(timer))
}

/**
 * Opens `url` in a new context and feeds every harness event to `onEvent`, console
 * messages to `onConsole` and errors the page could not catch itself to `onPageError`.
 * Resolves with { finished: true } once the page reports `done`, or
 * { finished: false, why } on timeout or crash; `browserStuck` is set when the
 * page could not even be closed, and the browser should be replaced.
 */
export async function runPage(browser, { url, timeoutMs, onEvent, onConsole, onPageError }) {
  const deadline = Date.now() + timeoutMs
  const tooLate = { finished: false, why: `the file did not finish within ${timeoutMs / 1000} s` }
  const context = await browser.createBrowserContext()
  let settle
  const outcome = new Promise((resolve) => { settle = resolve })
  let result
  try {
    const page = await context.newPage()
    await page.exposeFunction('__harnessReport', (event) => {
      onEvent(event)
      if (event?.type === 'done') settle({ finished: true })
    })
    page.on('console', (message) => {
      const where = message.location()
      onConsole({ type: message.type(), text: message.text(), url: where?.url, line: where?.lineNumber })
    })
    page.on('pageerror', (error) => onPageError(error))
    page.on('error', (error) => settle({ finished: false, why: `the page crashed: ${error.message}` }))

    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs })
    const settled = await withTimeout(outcome, Math.max(0, deadline - Date.now()))
    result = settled === TIMED_OUT ? tooLate : settled
  } catch (error) {
    result = error?.name === 'TimeoutError' ? tooLate : { finished: false, why: `the page could not run: ${error.message}` }
  }
  // A page stuck in a synchronous loop still closes: closing the context kills its
  // renderer. If even that hangs, the caller starts a new browser.
  const closed = await withTimeout(context.close().then(() => true, () => true), 10_000)
  return closed === TIMED_OUT ? { ...result, browserStuck: true } : result
}
