// Hardened environments (SES `lockdown()`, `--frozen-intrinsics`) freeze
// Object.prototype; then assigning a key such as `toString` to a plain object throws
// (the "override mistake"). Runs in its own process: the freeze is global.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

Object.freeze(Object.prototype)

test('with Object.prototype frozen, results with keys it defines are stamped and logged', async () => {
  const registry = new ToolRegistry()
  registry.register({ name: 'shadow', description: 'returns keys Object.prototype has', inputSchema: { type: 'object' }, handler: async () => ({ toString: 'mine', constructor: 'also mine', a: 1 }) })
  const lines = []
  const manager = new ToolExecutionManager(registry, { metadata: true, logging: true, logger: (level, message) => lines.push(message) })
  const r = await manager.execute('shadow', {})
  assert.equal(r.success, true, JSON.stringify(r.error))
  assert.equal(Object.getOwnPropertyDescriptor(r.result, 'toString').value, 'mine')
  assert.equal(Object.getOwnPropertyDescriptor(r.result, 'constructor').value, 'also mine')
  assert.equal(r.result.a, 1)
  assert.equal(r.result._execution_metadata.tool_name, 'shadow')
  assert.equal(lines.length, 2)
})

test('with Object.prototype frozen, large argument text with keys it defines reaches the handler as JSON.parse builds it', async () => {
  const registry = new ToolRegistry()
  let seen
  registry.register({ name: 'rows', description: 'takes rows', inputSchema: { type: 'object' }, handler: (args) => { seen = args; return 'ok' } })
  const manager = new ToolExecutionManager(registry)
  // Enough rows of one key list for a compiled constructor, and one row of its own.
  const rows = Array.from({ length: 2000 }, (_, i) => ({ toString: `row ${i}`, constructor: i, valueOf: null, name: 'a row' }))
  rows.push({ hasOwnProperty: 'odd', toString: 'one' })
  const text = JSON.stringify({ rows })
  assert.ok(text.length > 64 * 1024)
  const r = await manager.execute('rows', text)
  assert.equal(r.success, true, JSON.stringify(r.error))
  assert.deepEqual(seen, JSON.parse(text))
  assert.deepEqual(Object.keys(seen.rows[5]), ['toString', 'constructor', 'valueOf', 'name'])
  assert.equal(Object.getOwnPropertyDescriptor(seen.rows[2000], 'hasOwnProperty').value, 'odd')
})
