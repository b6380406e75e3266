// AG-UI (issue 5): the exported tools parse with @ag-ui/core's schemas, and an event
// stream built with @ag-ui/core's types runs through executeToolCalls.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { EventType } from '@ag-ui/core'
import { EventSchemas, ToolSchema, ToolMessageSchema, ToolCallResultEventSchema } from '@ag-ui/core/schemas'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const SEARCH_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 10 } },
  required: ['query'],
}

function setup() {
  const registry = new ToolRegistry()
  registry.register({
    name: 'search_docs',
    description: 'Searches the documentation',
    inputSchema: SEARCH_SCHEMA,
    handler: ({ query, limit = 3 }) => ({ hits: Array.from({ length: limit }, (_, i) => `${query} #${i + 1}`) }),
  })
  registry.register({
    name: 'confirm',
    description: 'Asks the user to confirm',
    inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    handler: ({ question }) => `confirmed: ${question}`,
  })
  return { registry, manager: new ToolExecutionManager(registry) }
}

/** One tool call as AG-UI events, the arguments streamed in `pieces` deltas; each event checked by @ag-ui/core. */
function toolCallEvents(toolCallId, toolCallName, args, pieces = 3) {
  const text = typeof args === 'string' ? args : JSON.stringify(args)
  const size = Math.ceil(text.length / pieces)
  const deltas = Array.from({ length: pieces }, (_, i) => text.slice(i * size, (i + 1) * size)).filter(Boolean)
  const events = [
    { type: EventType.TOOL_CALL_START, toolCallId, toolCallName, parentMessageId: 'msg_assistant_1', timestamp: 1 },
    ...deltas.map((delta) => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta })),
    { type: EventType.TOOL_CALL_END, toolCallId },
  ]
  return events.map((e) => EventSchemas.parse(e))
}

describe('AG-UI with @ag-ui/core', () => {
  test('toAgUiTools() parse as @ag-ui/core Tools, unchanged', () => {
    const { registry } = setup()
    const tools = registry.toAgUiTools()
    assert.deepEqual(tools.map((t) => ToolSchema.parse(t)), tools)
    assert.deepEqual(tools[0], { name: 'search_docs', description: 'Searches the documentation', parameters: SEARCH_SCHEMA })
    const session = registry.createSession()
    session.register({ name: 'session_only', description: 'x', inputSchema: { type: 'object' }, handler: () => 1 })
    const sessionTools = session.toAgUiTools()
    assert.deepEqual(sessionTools.map((t) => ToolSchema.parse(t).name).sort(), ['confirm', 'search_docs', 'session_only'])
  })

  test('a TOOL_CALL_START / ARGS / END stream is executed; replies parse as ToolMessages in call order', async () => {
    const { manager } = setup()
    const events = [
      { type: EventType.RUN_STARTED, threadId: 'thread_1', runId: 'run_1' },
      ...toolCallEvents('tc_search', 'search_docs', { query: 'retry policy', limit: 2 }),
      ...toolCallEvents('tc_confirm', 'confirm', { question: 'Apply the change?' }, 2),
      { type: EventType.RUN_FINISHED, threadId: 'thread_1', runId: 'run_1' },
    ].map((e) => EventSchemas.parse(e))

    const { messages, calls, results } = await manager.executeToolCalls(events, { provider: 'ag-ui' })

    assert.deepEqual(calls.map((c) => [c.id, c.name, c.arguments]), [
      ['tc_search', 'search_docs', { query: 'retry policy', limit: 2 }],
      ['tc_confirm', 'confirm', { question: 'Apply the change?' }],
    ])
    assert.deepEqual(results.map((r) => r.success), [true, true])
    assert.equal(messages.length, 2)
    for (const m of messages) assert.deepEqual(ToolMessageSchema.parse(m), m)
    assert.equal(messages[0].role, 'tool')
    assert.equal(messages[0].toolCallId, 'tc_search')
    assert.deepEqual(JSON.parse(messages[0].content), { hits: ['retry policy #1', 'retry policy #2'] })
    assert.equal(messages[0].error, undefined)
    assert.equal(messages[1].content, 'confirmed: Apply the change?')
    assert.notEqual(messages[0].id, messages[1].id)
    // A reply streams back to the frontend as a TOOL_CALL_RESULT event.
    const resultEvent = { type: EventType.TOOL_CALL_RESULT, messageId: messages[0].id, toolCallId: messages[0].toolCallId, content: messages[0].content, role: 'tool' }
    assert.deepEqual(ToolCallResultEventSchema.parse(resultEvent), resultEvent)
  })

  test('bad, malformed and unknown calls become ToolMessages with `error` written for the model', async () => {
    const { manager } = setup()
    const events = [
      ...toolCallEvents('tc_bad', 'search_docs', { limit: 50 }),
      ...toolCallEvents('tc_torn', 'search_docs', '{"query": "x"', 2),
      ...toolCallEvents('tc_unknown', 'serch_docs', { query: 'x' }, 1),
    ]
    const { messages } = await manager.executeToolCalls(events, { provider: 'ag-ui' })
    assert.deepEqual(messages.map((m) => ToolMessageSchema.parse(m).toolCallId), ['tc_bad', 'tc_torn', 'tc_unknown'])
    for (const m of messages) assert.equal(m.error, m.content)
    assert.match(messages[0].error, /^Tool `search_docs` was not run: its arguments do not match its input schema/)
    assert.match(messages[0].error, /arguments \(top level\): "query" is a required property/)
    assert.match(messages[0].error, /`\/limit`: 50 is greater than the maximum of 10/)
    assert.match(messages[1].error, /^Tool `search_docs` was not run: its arguments are not valid JSON/)
    assert.match(messages[1].error, /Arguments received: \{"query": "x"/)
    assert.match(messages[2].error, /^There is no tool named `serch_docs`\. Available tools: `search_docs`, `confirm`\. Did you mean `search_docs`\?/)
  })

  test('TOOL_CALL_CHUNK events (the protocol\'s convenience form) are executed too', async () => {
    const { manager } = setup()
    const events = [
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'tc_chunk', toolCallName: 'confirm', delta: '{"question":' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'tc_chunk', delta: '"ok?"}' },
    ].map((e) => EventSchemas.parse(e))
    const { messages } = await manager.executeToolCalls(events, { provider: 'ag-ui' })
    assert.equal(ToolMessageSchema.parse(messages[0]).content, 'confirmed: ok?')
  })
})
