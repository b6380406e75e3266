// Node-only as a whole file (listed in node-only.mjs): it spawns a process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'

test('a child process runs', () => {
  const result = spawnSync(process.execPath, ['-e', 'process.stdout.write("hi")'], { encoding: 'utf8' })
  assert.equal(result.stdout, 'hi')
})
