// Replay and conflict through every provider of executeToolCalls (issue 21), on SQLite and
// on Postgres: a replayed model response gets the stored replies without running
// anything; a reused call id with other arguments gets the conflict reply.
import { describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { each } from './fixtures/journals.mjs'

/** Each provider's response with two calls, and the same with the first call's arguments changed. */
const RESPONSES = {
  openai: (a, b) => ({
    role: 'assistant', content: null,
    tool_calls: [
      { id: 'call_A1', type: 'function', function: { name: 'charge', arguments: JSON.stringify(a) } },
      { id: 'call_B2', type: 'function', function: { name: 'charge', arguments: JSON.stringify(b) } },
    ],
  }),
  'openai-responses': (a, b) => [
    { type: 'function_call', call_id: 'fc_A1', name: 'charge', arguments: JSON.stringify(a) },
    { type: 'function_call', call_id: 'fc_B2', name: 'charge', arguments: JSON.stringify(b) },
  ],
  anthropic: (a, b) => ({
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'toolu_A1', name: 'charge', input: a },
      { type: 'tool_use', id: 'toolu_B2', name: 'charge', input: b },
    ],
  }),
  gemini: (a, b) => ({
    candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'g_A1', name: 'charge', args: a } }, { functionCall: { id: 'g_B2', name: 'charge', args: b } }] } }],
  }),
  'ag-ui': (a, b) => [
    { type: 'TOOL_CALL_START', toolCallId: 'ag_A1', toolCallName: 'charge' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'ag_A1', delta: JSON.stringify(a) },
    { type: 'TOOL_CALL_END', toolCallId: 'ag_A1' },
    { type: 'TOOL_CALL_START', toolCallId: 'ag_B2', toolCallName: 'charge' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'ag_B2', delta: JSON.stringify(b) },
    { type: 'TOOL_CALL_END', toolCallId: 'ag_B2' },
  ],
  mcp: (a, b) => [
    { jsonrpc: '2.0', id: 'rpc-A1', method: 'tools/call', params: { name: 'charge', arguments: a } },
    { jsonrpc: '2.0', id: 'rpc-B2', method: 'tools/call', params: { name: 'charge', arguments: b } },
  ],
}

/** The text the model reads in each reply, whatever the provider's shape (an AG-UI tool
 * message's own id is new each time: it names the message, not the call). */
function texts(messages) {
  return JSON.stringify(messages, (key, value) => (key === 'id' && typeof value === 'string' && value.startsWith('toolhost-msg-') ? undefined : value))
}

describe('journal: a replayed model response, per provider', () => {
  for (const [provider, response] of Object.entries(RESPONSES)) {
    each(`${provider}: replayed replies come from the journal; a reused id with other arguments gets the conflict reply`, async (url) => {
      const registry = new ToolRegistry()
      const charged = []
      registry.register({
        name: 'charge', description: 'Charges a card',
        inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
        handler: ({ cents }) => {
          charged.push(cents)
          return { charged: cents, receipt: `r-${charged.length}` }
        },
      })
      const manager = new ToolExecutionManager(registry, { journal: url })
      const first = await manager.executeToolCalls(response({ cents: 100 }, { cents: 200 }), { provider })
      assert.deepEqual(charged, [100, 200])
      // The agent loop crashed and sends the same model response again: nothing runs.
      const again = await new ToolExecutionManager(registry, { journal: url }).executeToolCalls(response({ cents: 100 }, { cents: 200 }), { provider })
      assert.deepEqual(charged, [100, 200], 'no second charge')
      assert.equal(texts(again.messages), texts(first.messages), 'the same replies, receipts included')
      assert.deepEqual(again.results.map((r) => r.replayed), [true, true])
      // The first id comes back with other arguments: refused, the second is replayed.
      const reused = await manager.executeToolCalls(response({ cents: 999 }, { cents: 200 }), { provider })
      assert.deepEqual(charged, [100, 200], 'the conflicting call never ran')
      assert.equal(reused.results[0].error.code, 'IDEMPOTENCY_CONFLICT')
      assert.match(texts(reused.messages), /idempotency key '[^']+' was already used for a call of 'charge' with other arguments/)
      assert.equal(reused.results[1].replayed, true)
    })
  }

  each('gemini calls without an id (and MCP requests without one) are not deduplicated: their ids only count positions', async (url) => {
    const registry = new ToolRegistry()
    const runs = []
    registry.register({ name: 'charge', description: 'Charges', handler: (args) => runs.push(args.cents) })
    const manager = new ToolExecutionManager(registry, { journal: url })
    const noIds = (cents) => ({ candidates: [{ content: { parts: [{ functionCall: { name: 'charge', args: { cents } } }] } }] })
    await manager.executeToolCalls(noIds(1), { provider: 'gemini' })
    const second = await manager.executeToolCalls(noIds(2), { provider: 'gemini' })
    assert.deepEqual(runs, [1, 2], 'a different call in the same position is not a conflict')
    assert.equal(second.results[0].success, true)
    await manager.executeToolCalls([{ method: 'tools/call', params: { name: 'charge', arguments: { cents: 3 } } }], { provider: 'mcp' })
    await manager.executeToolCalls([{ method: 'tools/call', params: { name: 'charge', arguments: { cents: 4 } } }], { provider: 'mcp' })
    assert.deepEqual(runs, [1, 2, 3, 4])
  })
})
