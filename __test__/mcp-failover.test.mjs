// The failure test of issue 14: a mounted server killed in the middle of a call. The
// local execution fails `transient`, is retried, and succeeds once the server is back
// on the same port; nothing hangs, and the mounting process exits by itself. Both sides
// are real processes on loopback (scripts/mcp-fixtures/failover-client.mjs is process
// B; it starts process A with `toolhost serve`). Node-only (child processes).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const B = fileURLToPath(new URL('../scripts/mcp-fixtures/failover-client.mjs', import.meta.url))

test('killed mid-call: transient, retried, and served again once the server is back; B exits cleanly', { timeout: 60_000 }, async () => {
  const t0 = Date.now()
  const child = spawn(process.execPath, [B], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  // B is given 30 s; it is killed (and the test fails) if anything keeps it alive.
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const { code, signal } = await new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })))
  clearTimeout(timer)
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, `process B did not exit by itself:\n${err}`)
  assert.ok(Date.now() - t0 < 20_000, `B took ${Date.now() - t0} ms`)
  const seen = JSON.parse(out.trim().split('\n').at(-1))
  const story = JSON.stringify(seen.timeline)
  assert.equal(seen.success, true, story)
  assert.deepEqual(seen.result, { waited: 500 })
  assert.ok(seen.attempts >= 2, story)
  assert.equal(seen.previousErrors.length, seen.attempts - 1)
  for (const e of seen.previousErrors) assert.equal(e.category, 'transient', story)
  // The call in flight lost its connection; later attempts may have found no server.
  assert.match(seen.previousErrors[0].code, /^MCP_(CONNECTION_CLOSED|TRANSPORT_ERROR)$/)
  assert.equal(seen.pids.length, 2)
  assert.equal(seen.servedBy, seen.pids[1], 'the retry was served by the restarted process')
  assert.equal(seen.local, 'tick')
  assert.deepEqual(seen.lastExit, { code: 0, signal: null })
})
