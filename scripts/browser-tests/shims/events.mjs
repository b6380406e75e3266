// Browser stand-in for `node:events`. Only what the tests import is real;
// everything else comes from the Node-only stub and throws when used.
//
// getEventListeners(): a browser cannot list the listeners of an EventTarget (there
// is no API for it), so for one it throws an error saying the test is Node-only
// instead of returning a wrong count. Emitter-like objects with listeners() work.
export * from 'node-only:events'
export { default } from 'node-only:events'

export function getEventListeners(target, type) {
  if (target && typeof target.listeners === 'function') return target.listeners(type)
  const error = new Error('node:events getEventListeners() cannot work in a browser: listeners added to an ' +
    'EventTarget are not observable there. List this test in scripts/browser-tests/node-only.mjs.')
  error.code = 'ERR_NODE_ONLY'
  throw error
}
