// The list of test files and tests that cannot run in a browser (see
// ../node-only.mjs), and the checks that keep it from rotting: every file it names
// must exist, and every test it names must be declared by its file.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * Loads a list module exporting { files: { path: why }, tests: { 'path: full name': why } },
 * paths relative to the repository root. Returns { files, tests, problems } where
 * files maps path -> why, tests maps path -> Map(full name -> why).
 */
export async function loadNodeOnlyList(listPath, repoRoot) {
  const { default: list } = await import(pathToFileURL(resolve(listPath)).href)
  const problems = []
  const files = new Map(Object.entries(list?.files ?? {}))
  const tests = new Map()
  for (const [key, why] of Object.entries(list?.tests ?? {})) {
    // Paths contain no ': ', test names may: split at the first one.
    const at = key.indexOf(': ')
    if (at < 0) {
      problems.push(`node-only list: "${key}" is not "path: full test name"`)
      continue
    }
    const file = key.slice(0, at)
    const name = key.slice(at + 2)
    if (!tests.has(file)) tests.set(file, new Map())
    tests.get(file).set(name, why)
  }
  for (const [file, why] of [...files, ...[...tests].map(([file]) => [file])]) {
    if (!existsSync(resolve(repoRoot, file))) problems.push(`node-only list names a file that does not exist: ${file}`)
    if (why !== undefined && (typeof why !== 'string' || !why.trim())) problems.push(`node-only list: ${file} needs a reason`)
  }
  for (const [file, names] of tests) {
    if (files.has(file)) problems.push(`node-only list names tests of ${file}, which is Node-only as a whole`)
    for (const [name, why] of names) {
      if (typeof why !== 'string' || !why.trim()) problems.push(`node-only list: "${file}: ${name}" needs a reason`)
    }
  }
  return { files, tests, problems }
}

/**
 * Listed names of `file` that its run did not report (so do not exist, or were
 * renamed). A listed name is a test's full name, or a suite's, which is the start
 * of its tests' full names ("suite > test").
 */
export function missingListedTests(listedNames, reportedNames) {
  const seen = new Set(reportedNames)
  const declares = (name) => seen.has(name) || reportedNames.some((full) => full.startsWith(`${name} > `))
  return [...listedNames.keys()].filter((name) => !declares(name))
}
