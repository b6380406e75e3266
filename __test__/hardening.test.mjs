// Hardening (issue 16): each finding of the adversarial review has a regression test
// here, named after it, through the public package.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

/** A tool whose schema forbids `isAdmin: true` at the root and one level down, and
 * whose handler reports what it received. */
function payTool() {
  const seen = []
  const registry = new ToolRegistry()
  const noAdmin = { isAdmin: { const: false } }
  registry.register({
    name: 'pay',
    description: 'Pays an amount',
    inputSchema: {
      type: 'object',
      properties: { amount: { type: 'number' }, ...noAdmin, nested: { type: 'object', properties: noAdmin } },
      required: ['amount'],
    },
    handler: (args) => {
      seen.push(args)
      return { paid: args.amount }
    },
  })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
  return { manager, seen }
}

/** What every path must hand the handler: an own `__proto__` key (as `JSON.parse` makes
 * it), never an object whose prototype the model chose. */
function assertOwnProto(args) {
  assert.equal(Object.getPrototypeOf(args), Object.prototype)
  assert.equal(args.isAdmin, undefined, 'isAdmin must not be inherited from a model-chosen prototype')
  assert.ok(Object.hasOwn(args, '__proto__'))
  assert.deepEqual(Object.getOwnPropertyDescriptor(args, '__proto__').value, { isAdmin: true })
  assert.equal(Object.getPrototypeOf(args.nested), Object.prototype)
  assert.equal(args.nested.isAdmin, undefined)
  assert.ok(Object.hasOwn(args.nested, '__proto__'))
}

const TEXT = '{"amount":5,"__proto__":{"isAdmin":true},"nested":{"__proto__":{"isAdmin":true}}}'

describe('finding 1: a __proto__ key cannot bypass the schema', () => {
  const calls = {
    openai: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'pay', arguments: TEXT } }] },
    'openai-responses': [{ type: 'function_call', call_id: 'c1', name: 'pay', arguments: TEXT }],
    anthropic: { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'pay', input: JSON.parse(TEXT) }] },
    gemini: [{ functionCall: { id: 'c1', name: 'pay', args: JSON.parse(TEXT) } }],
    'ag-ui': [
      { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'pay' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: TEXT },
      { type: 'TOOL_CALL_END', toolCallId: 'c1' },
    ],
  }
  for (const [provider, response] of Object.entries(calls)) {
    test(`executeToolCalls, ${provider}: the handler gets an own __proto__ key, not a prototype`, async () => {
      const { manager, seen } = payTool()
      const { results } = await manager.executeToolCalls(response, { provider })
      assert.equal(results[0].success, true, JSON.stringify(results[0].error))
      assert.equal(seen.length, 1)
      assertOwnProto(seen[0])
    })
  }

  test('execute with the same text and with JSON.parse of it', async () => {
    for (const args of [TEXT, JSON.parse(TEXT)]) {
      const { manager, seen } = payTool()
      const r = await manager.execute('pay', args)
      assert.equal(r.success, true, JSON.stringify(r.error))
      assertOwnProto(seen[0])
    }
  })
})
