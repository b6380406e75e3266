// What `run.mjs --selftest` must see. Counts are the runner's: a skipped suite
// counts as one skipped entry, Node-only tests count in nodeOnly, not in skipped.
const DIR = 'scripts/browser-tests/selftest'

/** Per-test timeout for the selftest run, short so the hung tests end quickly. */
export const defaultTimeoutMs = 1500

/** Browser runs, in this order: the hung file first, to show the browser recovers. */
export const files = [
  {
    file: `${DIR}/hang.selftest.mjs`,
    fileTimeoutMs: 5000,
    status: 'fail',
    counts: { tests: 1, pass: 1, fail: 0, skipped: 0, todo: 0, nodeOnly: 0 },
    errors: [{ kind: 'timeout', message: /did not finish within 5 s; "spins forever" was running/ }],
  },
  {
    file: `${DIR}/pass.selftest.mjs`,
    status: 'pass',
    counts: { tests: 33, pass: 25, fail: 0, skipped: 4, todo: 2, nodeOnly: 2 },
    errors: [],
    cspViolations: 1, // the test that checks eval is refused
  },
  {
    file: `${DIR}/fail.selftest.mjs`,
    status: 'fail',
    counts: { tests: 17, pass: 5, fail: 11, skipped: 0, todo: 1, nodeOnly: 0 },
    failures: {
      'a failing equal': /Expected values to be strictly equal:\n\n1 !== 2/,
      'deepEqual with a prototype difference': /strictly deep-equal:[\s\S]*\+ Point \{\n- \{/,
      'throws with the wrong error class': /expected to be an instance of "RangeError". Received "TypeError"/,
      'throws with a validation object that does not match': /\+ {3}code: 'E_ONE'\n- {3}code: 'E_TWO'/,
      'a hung test hits its timeout option': /^test timed out after 300ms$/,
      'a hung test hits the default timeout': /^test timed out after 1500ms$/,
      'throwing something that is not an Error': /^\[Object: null prototype\] \{\}$/,
      'a suite whose before hook fails > not run because of the before hook': /before hook failed: before hook broke/,
      'a suite whose beforeEach hook fails > fails because of the beforeEach hook': /^beforeEach hook broke$/,
      'a test fails when its subtest fails > a failing subtest': /1 !== 2/,
      'a test fails when its subtest fails': /^1 subtest failed$/,
    },
    errors: [
      { kind: 'unhandledrejection', during: 'an unhandled rejection fails the file, not the test', message: /^nobody handles this rejection$/ },
      { kind: 'uncaught', during: 'an uncaught exception fails the file', message: /^thrown from a timer$/ },
      { kind: 'console.error', during: 'console.error fails the file', message: /^an error logged to the console$/ },
      { kind: 'hook', message: /^after hook of "a suite whose after hook fails": after hook broke$/ },
    ],
  },
  {
    file: `${DIR}/frozen-prototype.selftest.mjs`,
    status: 'fail',
    counts: { tests: 2, pass: 1, fail: 1, skipped: 0, todo: 0, nodeOnly: 0 },
    failures: {
      'a failure is still reported with its diff': /strictly deep-equal:[\s\S]*\+ {7}2\n- {7}3/,
    },
    errors: [],
  },
  {
    file: `${DIR}/node-only-file.selftest.mjs`,
    status: 'node-only',
    counts: { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0, nodeOnly: 0 },
    errors: [],
  },
]

/** Problems the run must report: the stale entry of selftest/node-only.mjs. */
export const problems = [/does not declare: "a test that was renamed"/]

/** `node --test pass.selftest.mjs`: Node's own counts (its subtests count as tests,
 * a skipped suite does not, and the browser-only tests skip themselves). */
export const inNode = {
  file: `${DIR}/pass.selftest.mjs`,
  counts: { tests: 32, pass: 25, fail: 0, skipped: 5, todo: 2 },
}
