// The platform packages under npm/ (one per prebuilt addon) promise what the main
// package promises: the same Node versions and the same version.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const main = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

test('every platform package needs the Node versions the main package needs', () => {
  const dirs = readdirSync(join(ROOT, 'npm'))
  assert.ok(dirs.length > 0)
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'npm', dir, 'package.json'), 'utf8'))
    assert.deepEqual(pkg.engines, main.engines, `npm/${dir}/package.json engines`)
    assert.equal(pkg.version, main.version, `npm/${dir}/package.json version`)
  }
})
