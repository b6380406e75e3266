// The selftest's Node-only list (run.mjs --selftest uses it instead of ../node-only.mjs).
const DIR = 'scripts/browser-tests/selftest'

export default {
  files: {
    [`${DIR}/node-only-file.selftest.mjs`]: 'spawns a child process (a whole file listed)',
  },
  tests: {
    [`${DIR}/pass.selftest.mjs: events > getEventListeners counts the listeners of an AbortSignal`]:
      "a browser cannot list an EventTarget's listeners",
    [`${DIR}/pass.selftest.mjs: needs Node`]: 'reads process.versions (a whole suite listed)',
    [`${DIR}/pass.selftest.mjs: a test that was renamed`]:
      'stale on purpose: the selftest checks that an entry naming no test is reported',
  },
}
