#!/usr/bin/env node
// Runs the project's node:test files in headless Chromium. See README.md.
//
//   node scripts/browser-tests/run.mjs [options] [files...]
//
// Files default to __test__/*.test.mjs and the elements' tests (elements/*.element.mjs).
// Exit status 1 on any failure.
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runFiles } from './lib/runner.mjs'
import { createPrinter, countRun } from './lib/report.mjs'
import { runSelftest } from './lib/selftest.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const REPO_ROOT = resolve(HERE, '..', '..')

const USAGE = `usage: node scripts/browser-tests/run.mjs [options] [files...]

  files                  test files (default: __test__/*.test.mjs, then
                         scripts/browser-tests/elements/*.element.mjs)
  --json <file>          write the full results as JSON to <file>
  --node-only <file>     the Node-only list (default: scripts/browser-tests/node-only.mjs)
  --timeout <ms>         default timeout of each test and hook (default: 30000)
  --file-timeout <ms>    a file not done after this fails (default: 120000)
  --selftest             run the harness's own tests (selftest/) and check their results
  --verbose              also print console.log/info output of the pages
  -h, --help             this text

  CHROMIUM_PATH=<path>   use this Chromium instead of /usr/bin/chromium (never installed)`

/** A mistake on the command line: reported without a stack trace. */
const usageError = (message) => Object.assign(new Error(message), { code: 'USAGE' })

function positiveNumber(value, name) {
  const n = Number(value)
  if (!(n > 0)) throw usageError(`${name} must be a positive number of milliseconds, not ${value}`)
  return n
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      json: { type: 'string' },
      'node-only': { type: 'string' },
      timeout: { type: 'string' },
      'file-timeout': { type: 'string' },
      selftest: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  const printer = createPrinter({ verbose: values.verbose })
  if (values.selftest) return runSelftest({ repoRoot: REPO_ROOT, printer, jsonPath: values.json })

  const testDir = join(REPO_ROOT, '__test__')
  // The custom elements' tests need a DOM, so they are the browser's only.
  const elementDir = join(HERE, 'elements')
  const files = positionals.length
    ? positionals.map((file) => resolve(file))
    : [
        ...readdirSync(testDir).filter((name) => name.endsWith('.test.mjs')).sort().map((name) => join(testDir, name)),
        ...readdirSync(elementDir).filter((name) => name.endsWith('.element.mjs')).sort().map((name) => join(elementDir, name)),
      ]
  for (const file of files) {
    if (!existsSync(file)) throw usageError(`no such file: ${file}`)
    // The test server serves the repository: a file outside it could not load its neighbours.
    if (!file.startsWith(REPO_ROOT + sep)) throw usageError(`not inside the repository: ${file}`)
  }

  const run = await runFiles({
    files,
    repoRoot: REPO_ROOT,
    nodeOnlyPath: values['node-only'] ? resolve(values['node-only']) : join(HERE, 'node-only.mjs'),
    defaultTimeoutMs: values.timeout ? positiveNumber(values.timeout, '--timeout') : 30_000,
    fileTimeoutMs: values['file-timeout'] ? positiveNumber(values['file-timeout'], '--file-timeout') : 120_000,
    printer,
  })
  printer.summary(run)
  const summary = countRun(run.files)
  if (values.json) writeFileSync(resolve(values.json), `${JSON.stringify({ ...run, summary }, null, 2)}\n`)
  const failed = summary.filesFailed > 0 || run.problems.length > 0
  return failed ? 1 : 0
}

main().then(
  (code) => { process.exitCode = code },
  (error) => {
    const usage = error?.code === 'USAGE' || error?.code?.startsWith?.('ERR_PARSE_ARGS')
    console.error(`browser tests: ${usage ? `${error.message}\n\n${USAGE}` : error?.stack ?? error}`)
    process.exitCode = 1
  },
)
