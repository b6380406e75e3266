// Counting and printing results, in a TAP-like form close to `node --test`'s:
// one `ok`/`not ok` line per test as it finishes, errors of the file (uncaught
// exceptions, unhandled rejections, console errors, timeouts) as `# ERROR` blocks,
// then a summary per file and for the run.

/** Counts of one file's results. A Node-only test counts in nodeOnly, not in skipped. */
export function countFile(file) {
  const counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0, nodeOnly: 0, errors: file.errors.length }
  for (const test of file.tests) {
    counts.tests++
    if (test.nodeOnly !== undefined) counts.nodeOnly++
    else if (test.status === 'pass') counts.pass++
    else if (test.status === 'fail') counts.fail++
    else if (test.status === 'skip') counts.skipped++
    else if (test.status === 'todo') counts.todo++
  }
  return counts
}

export function countRun(files) {
  const total = { files: files.length, filesNodeOnly: 0, filesFailed: 0, tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0, nodeOnly: 0, errors: 0 }
  for (const file of files) {
    if (file.status === 'node-only') total.filesNodeOnly++
    if (file.status === 'fail') total.filesFailed++
    const counts = countFile(file)
    for (const key of ['tests', 'pass', 'fail', 'skipped', 'todo', 'nodeOnly', 'errors']) total[key] += counts[key]
  }
  return total
}

const indent = (text, prefix = '    ') => String(text).split('\n').map((line) => prefix + line).join('\n')

/** Long texts (a library logging generated code) are cut when printed; the JSON keeps them whole. */
const MAX_PRINTED = 2000
const cut = (text) => {
  const s = String(text ?? '')
  return s.length > MAX_PRINTED ? `${s.slice(0, MAX_PRINTED)}... [${s.length - MAX_PRINTED} more characters]` : s
}

function yamlBlock(fields) {
  const lines = ['  ---']
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === '') continue
    lines.push(String(value).includes('\n') ? `  ${key}: |-\n${indent(value)}` : `  ${key}: ${JSON.stringify(value)}`)
  }
  lines.push('  ...')
  return lines.join('\n')
}

export function createPrinter({ verbose = false, write = (line) => process.stdout.write(`${line}\n`) } = {}) {
  let number = 0
  return {
    fileStart(file) {
      number = 0
      write(`# Subtest: ${file}`)
    },

    nodeOnlyFile(file, why) {
      write(`# Subtest: ${file}`)
      write(`ok - ${file} # SKIP node-only: ${why}`)
    },

    test(test) {
      number++
      const duration = test.durationMs ? ` (${Math.round(test.durationMs)} ms)` : ''
      let line = `${test.status === 'fail' ? 'not ok' : 'ok'} ${number} - ${test.fullName}`
      if (test.nodeOnly !== undefined) line += ` # SKIP node-only: ${test.nodeOnly}`
      else if (test.status === 'skip') line += ` # SKIP${test.reason ? ` ${test.reason}` : ''}`
      else if (test.status === 'todo') line += ` # TODO${test.reason ? ` ${test.reason}` : ''}${test.error ? ' (failed)' : ''}`
      write(line + (test.status === 'pass' || test.status === 'fail' ? duration : ''))
      if (test.status === 'fail' || (verbose && test.error)) {
        write(yamlBlock({ error: cut(test.error?.message), name: test.error?.name, code: test.error?.code, stack: cut(test.error?.stack) }))
      }
      for (const diagnostic of test.diagnostics ?? []) write(`# ${diagnostic}`)
    },

    error(error) {
      const where = error.during ? ` during "${error.during}"` : ''
      write(indent(`ERROR (${error.kind}${where}): ${cut(error.message)}`, '# '))
      if (error.stack) write(indent(error.stack, '#   '))
    },

    cspViolation(v) {
      write(`# CSP refused ${v.blocked || 'a resource'} (${v.directive})${v.during ? ` during "${v.during}"` : ''}${v.source ? ` at ${v.source}` : ''}`)
    },

    console(message) {
      if (message.type === 'error' || message.type === 'assert') return // reported as errors
      if (message.type === 'warn' || message.type === 'warning' || verbose) write(indent(`console.${message.type}: ${cut(message.text)}`, '# '))
    },

    fileEnd(file) {
      const c = countFile(file)
      write(`# ${file.file}: ${file.status === 'fail' ? 'FAILED' : 'passed'}; tests ${c.tests}, pass ${c.pass}, fail ${c.fail}, ` +
        `skipped ${c.skipped}, todo ${c.todo}, node-only ${c.nodeOnly}, errors ${c.errors} (${Math.round(file.durationMs)} ms)`)
    },

    summary(run) {
      const t = countRun(run.files)
      write('')
      if (run.nodeOnly.length) {
        write('# Node-only, not run in the browser:')
        for (const entry of run.nodeOnly) write(`#   ${entry.what}: ${entry.why}`)
      }
      if (run.problems.length) {
        write('# Problems:')
        for (const problem of run.problems) write(`#   ${problem}`)
      }
      const failedFiles = run.files.filter((f) => f.status === 'fail').map((f) => f.file)
      if (failedFiles.length) write(`# failed files: ${failedFiles.join(', ')}`)
      write(`# browser ${run.browser}`)
      write(`# files ${t.files} (failed ${t.filesFailed}, node-only ${t.filesNodeOnly})`)
      write(`# tests ${t.tests}`)
      write(`# pass ${t.pass}`)
      write(`# fail ${t.fail}`)
      write(`# skipped ${t.skipped}`)
      write(`# todo ${t.todo}`)
      write(`# skipped (node-only) ${t.nodeOnly} tests, ${t.filesNodeOnly} files`)
      write(`# errors ${t.errors + run.problems.length}`)
      write(`# duration_ms ${Math.round(run.durationMs)}`)
    },
  }
}
