// The test page's runtime: configures the node:test shim, catches what escapes the
// tests (uncaught exceptions, unhandled rejections), loads the test file, runs its
// tests and tells the runner when the file is done. The bundle's entry calls
// runFile() with a function importing the test file, so an error thrown while the
// file loads is reported as such instead of stopping the page silently.
import { send, serializeError } from './channel.mjs'
import { configure, run, currentTestName } from './node-test.mjs'

const setTimer = globalThis.setTimeout.bind(globalThis)

function catchEscapes() {
  // preventDefault() keeps the browser from also logging the error: it is reported
  // once, here, with the test that was running.
  globalThis.addEventListener('error', (event) => {
    event.preventDefault()
    send({ type: 'error', kind: 'uncaught', during: currentTestName(), error: serializeError(event.error ?? event.message) })
  })
  globalThis.addEventListener('unhandledrejection', (event) => {
    event.preventDefault()
    send({ type: 'error', kind: 'unhandledrejection', during: currentTestName(), error: serializeError(event.reason) })
  })
  // Code that tries eval() or new Function() and falls back when the CSP refuses it
  // logs nothing; report it so such fallbacks are visible (not counted as failures:
  // an uncaught refusal already fails the test).
  globalThis.addEventListener('securitypolicyviolation', (event) => {
    send({
      type: 'csp',
      during: currentTestName(),
      directive: event.effectiveDirective,
      blocked: event.blockedURI,
      source: event.sourceFile ? `${event.sourceFile}:${event.lineNumber}:${event.columnNumber}` : '',
    })
  })
}

export async function runFile(load, options) {
  catchEscapes()
  configure(options)
  send({ type: 'start', file: options.file, userAgent: globalThis.navigator.userAgent })
  let loaded = false
  try {
    await load()
    loaded = true
  } catch (error) {
    send({ type: 'error', kind: 'load', error: serializeError(error) })
  }
  if (loaded) {
    try {
      await run()
    } catch (error) {
      send({ type: 'error', kind: 'harness', error: serializeError(error) })
    }
  }
  // Rejections left unhandled by the last test are only reported after a task or
  // two; wait for them before saying the file is done.
  await new Promise((resolve) => setTimer(resolve, 50))
  send({ type: 'done' })
}
