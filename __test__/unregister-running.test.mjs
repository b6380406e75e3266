// What unregistering a tool does to its executions in flight: they run to their end with
// the tool they started with (its handler, schemas and retry settings), retries
// included; their records, events and stats are kept; new calls of the name get
// TOOL_NOT_FOUND, or the tool registered in its place.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolExecutionManager, ToolRegistry, transientError } from 'toolhost'

test('an execution in flight finishes after its tool is unregistered, and its record stays', async () => {
  const registry = new ToolRegistry()
  let release
  registry.register({ name: 'slow', description: 'Waits to be released', handler: () => new Promise((resolve) => (release = resolve)).then(() => 'done') })
  const manager = new ToolExecutionManager(registry)
  const events = []
  for (const type of ['started', 'executing', 'succeeded', 'failed', 'cancelled']) manager.on(`tool-execution-${type}`, () => events.push(type))
  const call = manager.execute('slow', {})
  while (release === undefined) await sleep(1)
  assert.equal(registry.unregister('slow'), true)
  assert.equal(registry.has('slow'), false)
  assert.equal(manager.inFlight, 1)
  release()
  const r = await call
  assert.equal(r.success, true)
  assert.equal(r.result, 'done')
  assert.deepEqual(events, ['started', 'executing', 'succeeded'])
  assert.equal(manager.getExecution(r.execution.id)?.status, 'succeeded')
  assert.equal(manager.stats('slow').successCount, 1)
  const later = await manager.execute('slow', {})
  assert.equal(later.error.code, 'TOOL_NOT_FOUND')
})

test('its retries run the tool it started with, even after another is registered under the name', async () => {
  const registry = new ToolRegistry()
  const ran = []
  registry.register({
    name: 'flaky',
    description: 'Fails once',
    handler: (_, { attemptNumber }) => {
      ran.push(`old ${attemptNumber}`)
      if (attemptNumber === 1) throw transientError('busy')
      return 'old'
    },
  })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 2, baseDelay: 100, jitter: 'none' } })
  const retrying = new Promise((resolve) => manager.on('tool-execution-retrying', resolve))
  const call = manager.execute('flaky', {})
  await retrying // attempt 1 failed; attempt 2 starts in 100 ms
  registry.unregister('flaky')
  registry.register({ name: 'flaky', description: 'The new one', handler: () => { ran.push('new'); return 'new' } })
  const r = await call
  assert.equal(r.result, 'old')
  assert.equal(r.execution.retry.attemptNumber, 2)
  assert.equal((await manager.execute('flaky', {})).result, 'new')
  assert.deepEqual(ran, ['old 1', 'old 2', 'new'])
})
