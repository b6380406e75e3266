// `run.mjs --selftest`: tests the harness itself.
//  1. runs selftest/*.selftest.mjs in the browser and compares every count, failure and
//     file error with selftest/expected.mjs (deliberate failures included);
//  2. runs selftest/pass.selftest.mjs under `node --test`: the same file must pass in
//     Node, which keeps the shims to Node's semantics;
//  3. compares the assert shim with node:assert case by case (selftest/assert-parity.mjs).
// Exit status 0 when everything is as expected, whatever the browser run's own status.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { runFiles } from './runner.mjs'
import { countFile, countRun } from './report.mjs'

const COUNT_KEYS = ['tests', 'pass', 'fail', 'skipped', 'todo', 'nodeOnly']

function checkFile(expected, actual, mismatches) {
  const where = expected.file
  if (!actual) {
    mismatches.push(`${where}: no result`)
    return
  }
  if (actual.status !== expected.status) mismatches.push(`${where}: status ${actual.status}, expected ${expected.status}`)
  const counts = countFile(actual)
  for (const key of COUNT_KEYS) {
    if (counts[key] !== expected.counts[key]) mismatches.push(`${where}: ${key} ${counts[key]}, expected ${expected.counts[key]}`)
  }
  // Every failing test is expected, with its message.
  const failures = expected.failures ?? {}
  for (const test of actual.tests.filter((t) => t.status === 'fail')) {
    const pattern = failures[test.fullName]
    if (!pattern) mismatches.push(`${where}: unexpected failure of "${test.fullName}": ${test.error?.message}`)
    else if (!pattern.test(test.error?.message ?? '')) mismatches.push(`${where}: "${test.fullName}" failed with ${JSON.stringify(test.error?.message)}, expected ${pattern}`)
  }
  for (const name of Object.keys(failures)) {
    if (!actual.tests.some((t) => t.fullName === name && t.status === 'fail')) mismatches.push(`${where}: "${name}" did not fail`)
  }
  // Every file error is expected, and every expected one happened.
  const unmatched = [...actual.errors]
  for (const error of expected.errors) {
    const at = unmatched.findIndex((e) => e.kind === error.kind && error.message.test(e.message) && (error.during === undefined || e.during === error.during))
    if (at < 0) mismatches.push(`${where}: no ${error.kind} error matching ${error.message}${error.during ? ` during "${error.during}"` : ''}`)
    else unmatched.splice(at, 1)
  }
  for (const error of unmatched) mismatches.push(`${where}: unexpected ${error.kind} error: ${error.message}`)
  if (expected.cspViolations !== undefined && actual.cspViolations?.length !== expected.cspViolations) {
    mismatches.push(`${where}: ${actual.cspViolations?.length} CSP violations, expected ${expected.cspViolations}`)
  }
}

/** Runs a file under `node --test` and reads the summary counts it prints. */
function runInNode(file, repoRoot) {
  const result = spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 })
  const counts = {}
  for (const key of ['tests', 'pass', 'fail', 'skipped', 'todo']) {
    const match = new RegExp(`^# ${key} (\\d+)$`, 'm').exec(result.stdout)
    counts[key] = match ? Number(match[1]) : undefined
  }
  return { status: result.status, counts, output: result.stdout + result.stderr }
}

export async function runSelftest({ repoRoot, printer, jsonPath }) {
  const selftestDir = join(repoRoot, 'scripts', 'browser-tests', 'selftest')
  const expected = await import(pathToFileURL(join(selftestDir, 'expected.mjs')).href)
  const mismatches = []

  // 1. In the browser.
  const run = await runFiles({
    files: expected.files.map((f) => join(repoRoot, f.file)),
    repoRoot,
    nodeOnlyPath: join(selftestDir, 'node-only.mjs'),
    defaultTimeoutMs: expected.defaultTimeoutMs,
    fileTimeoutMs: 60_000,
    fileTimeouts: Object.fromEntries(expected.files.filter((f) => f.fileTimeoutMs).map((f) => [f.file, f.fileTimeoutMs])),
    printer,
  })
  printer.summary(run)
  for (const file of expected.files) checkFile(file, run.files.find((f) => f.file === file.file), mismatches)
  const unmatchedProblems = [...run.problems]
  for (const pattern of expected.problems) {
    const at = unmatchedProblems.findIndex((p) => pattern.test(p))
    if (at < 0) mismatches.push(`no problem reported matching ${pattern}`)
    else unmatchedProblems.splice(at, 1)
  }
  for (const problem of unmatchedProblems) mismatches.push(`unexpected problem: ${problem}`)

  // 2. The passing file, in Node.
  console.log(`\n# selftest: node --test ${expected.inNode.file}`)
  const node = runInNode(expected.inNode.file, repoRoot)
  for (const key of Object.keys(expected.inNode.counts)) {
    if (node.counts[key] !== expected.inNode.counts[key]) mismatches.push(`node --test: ${key} ${node.counts[key]}, expected ${expected.inNode.counts[key]}`)
  }
  if (node.status !== 0) mismatches.push(`node --test exited with ${node.status}:\n${node.output.split('\n').filter((l) => /not ok|error/.test(l)).join('\n')}`)
  console.log(`# node --test: ${Object.entries(node.counts).map(([k, v]) => `${k} ${v}`).join(', ')}`)

  // 3. The assert shim against node:assert.
  const { checkAssertParity } = await import(pathToFileURL(join(selftestDir, 'assert-parity.mjs')).href)
  const parity = await checkAssertParity()
  console.log(`# assert parity: ${parity.cases} cases, ${parity.differences.length} differences`)
  for (const difference of parity.differences) mismatches.push(`assert parity: ${difference}`)

  if (jsonPath) {
    writeFileSync(resolve(jsonPath), `${JSON.stringify({ ...run, summary: countRun(run.files), node, parity, mismatches }, null, 2)}\n`)
  }
  console.log('')
  if (mismatches.length) {
    console.log(`# SELFTEST FAILED: ${mismatches.length} mismatches`)
    for (const mismatch of mismatches) console.log(mismatch.split('\n').map((line) => `#   ${line}`).join('\n'))
    return 1
  }
  console.log('# selftest passed: the browser run, node --test and the assert parity check all gave the expected results')
  return 0
}
