// AG-UI: tools out as `RunAgentInput.tools`, an event stream in (`TOOL_CALL_START`,
// `TOOL_CALL_ARGS` deltas, `TOOL_CALL_END`), `ToolMessage`s back. The agent is scripted
// (recorded event streams), so this runs with no network and no key:
//
//   node examples/ag-ui.mjs
//
// With a real agent, `scriptedAgent(input)` is the events of one `agent.runAgent(input)`.
import { ToolExecutionManager, ToolRegistry } from 'toolhost'

const registry = new ToolRegistry()
registry.register({
  name: 'create_reminder',
  description: 'Creates a reminder at an ISO 8601 time',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    required: ['text', 'at'],
  },
  handler: async ({ text, at }) => ({ id: 'rem_7', text, at }),
})
const manager = new ToolExecutionManager(registry, { timeoutMs: 2000 })

/** Recorded event streams of one run each, picked by the messages so far. */
function scriptedAgent({ runId, messages }) {
  const run = (events) => [{ type: 'RUN_STARTED', threadId: 'thread_1', runId }, ...events, { type: 'RUN_FINISHED', threadId: 'thread_1', runId }]
  const toolMessage = messages.find((m) => m.role === 'tool')
  if (!toolMessage) {
    // The arguments stream in pieces, as a model writes them.
    const args = ['{"text":"Call the dentist",', '"at":"2025-06-02T09:00:00Z"}']
    return run([
      { type: 'TOOL_CALL_START', toolCallId: 'tc_1', toolCallName: 'create_reminder', parentMessageId: 'msg_1' },
      ...args.map((delta) => ({ type: 'TOOL_CALL_ARGS', toolCallId: 'tc_1', delta })),
      { type: 'TOOL_CALL_END', toolCallId: 'tc_1' },
    ])
  }
  const reminder = JSON.parse(toolMessage.content)
  const delta = `Done: "${reminder.text}" is set for ${reminder.at} (${reminder.id}).`
  return run([
    { type: 'TEXT_MESSAGE_START', messageId: 'msg_2', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_2', delta },
    { type: 'TEXT_MESSAGE_END', messageId: 'msg_2' },
  ])
}

const tools = registry.toAgUiTools()
const messages = [{ id: 'msg_0', role: 'user', content: 'Remind me to call the dentist Monday at 9.' }]
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`)
console.log(`user: ${messages[0].content}`)

for (let runNumber = 1; ; runNumber++) {
  const events = scriptedAgent({ threadId: 'thread_1', runId: `run_${runNumber}`, messages, tools, state: {}, context: [] })
  if (!events.some((e) => e.type === 'TOOL_CALL_START')) {
    console.log(`assistant: ${events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')}`)
    break
  }
  console.log(`  run_${runNumber}: ${events.map((e) => e.type).join(', ')}`)
  const { messages: toolMessages, calls } = await manager.executeToolCalls(events, { provider: 'ag-ui' })
  for (const m of toolMessages) console.log(`  ToolMessage ${m.toolCallId}${m.error ? ' (error)' : ''} -> ${m.content}`)
  const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }))
  messages.push({ id: `msg_${runNumber}`, role: 'assistant', toolCalls }, ...toolMessages)
}
