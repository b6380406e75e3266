// The wire between the engine and the JS runtime is declared once, in
// crates/toolhost/src/host/wire.rs; js/ops.mjs is generated from it (cargo test fails when
// it is stale). Here: with TOOLHOST_CHECK_WIRE=1 the decoder checks every op it reads
// against the declaration, over a workload that makes the engine write every op and
// every event, and a decoder or a declaration changed on one side alone fails.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EVENT_LAYOUTS, OP_LAYOUTS } from '../js/ops.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const workload = join(root, '__test__', 'fixtures', 'wire-workload.mjs')

function run(js) {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-wire-'))
  try {
    return spawnSync(process.execPath, [workload, dir, js], {
      env: { ...process.env, TOOLHOST_CHECK_WIRE: '1', TOOLHOST_BACKEND: '' },
      encoding: 'utf8',
      timeout: 60_000,
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A copy of the package whose js/ can be changed: everything else links to this one. */
function packageCopy(change) {
  const copy = mkdtempSync(join(tmpdir(), 'toolhost-wire-pkg-'))
  for (const entry of readdirSync(root)) {
    if (entry === 'js') cpSync(join(root, 'js'), join(copy, 'js'), { recursive: true })
    else if (entry === 'package.json' || entry === 'index.js' || entry === 'wasm' || entry.endsWith('.node')) symlinkSync(join(root, entry), join(copy, entry))
  }
  for (const [file, from, to] of change) {
    const path = join(copy, 'js', file)
    const text = readFileSync(path, 'utf8')
    assert.ok(text.includes(from), `${file} has ${from}`)
    writeFileSync(path, text.replace(from, to))
  }
  return copy
}

test('every op and every event the engine writes is read as wire.rs declares it', () => {
  const r = run(join(root, 'js'))
  assert.equal(r.status, 0, r.stderr)
  const seen = JSON.parse(r.stdout.trim().split('\n').at(-1))
  const declared = [...OP_LAYOUTS.map(([, name]) => name).filter((name) => name !== 'EVENT'), ...EVENT_LAYOUTS.map(([, name]) => `EVENT ${name}`)]
  assert.deepEqual(declared.filter((name) => !(seen[name] > 0)), [], 'the workload made the engine write each of them')
})

test('a decoder changed alone fails, naming the op', () => {
  // The FINAL case forgets the record's extras.
  const copy = packageCopy([['manager.mjs', ';[extras, i, at] = extrasAt(ops, i, text, at)\n          exec.final', 'exec.final']])
  try {
    const r = run(join(copy, 'js'))
    assert.notEqual(r.status, 0)
    assert.match(r.stderr, /toolhost wire: the decoder read op FINAL as \d+ numbers .*wire\.rs declares \d+ numbers/)
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
})

test('a layout changed alone fails, naming the op', () => {
  // The declaration says RUN has one field less than the engine writes.
  const copy = packageCopy([['ops.mjs', ", ['num', 'checks_output']]],", ']],']])
  try {
    const r = run(join(copy, 'js'))
    assert.notEqual(r.status, 0)
    assert.match(r.stderr, /toolhost wire: the decoder read op RUN as 7 numbers .* declares 6 numbers/)
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
})
