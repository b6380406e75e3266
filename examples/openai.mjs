// OpenAI Chat Completions: `tools` out, `tool_calls` in, `role: 'tool'` messages back.
// The model is scripted (recorded responses), so this runs with no network and no key:
//
//   node examples/openai.mjs
//
// With the real SDK, `scriptedModel(request)` is `await client.chat.completions.create(request)`.
import { ToolExecutionManager, ToolRegistry } from 'toolhost'

const registry = new ToolRegistry()
registry.register({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  handler: async ({ city }) => ({ city, temperatureC: 18, sky: 'cloudy' }),
})
registry.register({
  name: 'get_local_time',
  description: 'The local time in an IANA time zone',
  inputSchema: { type: 'object', properties: { timeZone: { type: 'string' } }, required: ['timeZone'] },
  handler: ({ timeZone }) => ({ timeZone, time: '14:05' }),
})
const manager = new ToolExecutionManager(registry, { timeoutMs: 2000 })

/** Recorded ChatCompletion responses, picked by what the conversation holds so far. */
function scriptedModel({ messages }) {
  const replies = messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content))
  if (replies.length === 0) {
    const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })
    const toolCalls = [call('call_w1', 'get_weather', { city: 'Paris' }), call('call_t1', 'get_local_time', { timeZone: 'Europe/Paris' })]
    return { choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: toolCalls } }] }
  }
  const [weather, clock] = replies
  const content = `In ${weather.city} it is ${weather.temperatureC} °C and ${weather.sky}; the local time is ${clock.time}.`
  return { choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }] }
}

const tools = registry.toOpenAITools({ strict: true })
const messages = [{ role: 'user', content: 'What is the weather in Paris, and what time is it there?' }]
console.log(`tools: ${tools.map((t) => t.function.name).join(', ')}`)
console.log(`user: ${messages[0].content}`)

for (;;) {
  const message = scriptedModel({ model: 'gpt-4.1', messages, tools }).choices[0].message
  messages.push(message)
  if (!message.tool_calls) {
    console.log(`assistant: ${message.content}`)
    break
  }
  const { messages: replies } = await manager.executeToolCalls(message, { provider: 'openai' })
  for (const call of message.tool_calls) console.log(`  model calls ${call.function.name}(${call.function.arguments})`)
  for (const reply of replies) console.log(`  tool ${reply.tool_call_id} -> ${reply.content}`)
  messages.push(...replies)
}
