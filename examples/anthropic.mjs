// Anthropic Messages API: `tools` out, `tool_use` blocks in, one user message of
// `tool_result` blocks back. The input schema is a zod schema, turned into JSON Schema
// at registration. The model is scripted (recorded responses), so this runs with no
// network and no key:
//
//   node examples/anthropic.mjs
//
// With the real SDK, `scriptedModel(request)` is `await client.messages.create(request)`.
import { z } from 'zod'
import { ToolExecutionManager, ToolRegistry } from 'toolhost'

const registry = new ToolRegistry()
registry.register({
  name: 'convert_currency',
  description: 'Converts an amount between two ISO 4217 currencies',
  inputSchema: z.object({ amount: z.number().positive(), from: z.string().length(3), to: z.string().length(3) }),
  handler: ({ amount, from, to }) => {
    const rate = { 'EUR>JPY': 162.4, 'EUR>USD': 1.08 }[`${from}>${to}`]
    if (rate === undefined) throw new Error(`no rate for ${from} to ${to}`)
    return { amount, from, to, converted: Math.round(amount * rate * 100) / 100 }
  },
})
const manager = new ToolExecutionManager(registry, { timeoutMs: 2000 })

/** Recorded Messages API responses, picked by what the conversation holds so far. */
function scriptedModel({ messages }) {
  const results = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result')
  if (results.length === 0) {
    const use = (id, input) => ({ type: 'tool_use', id, name: 'convert_currency', input })
    const content = [
      { type: 'text', text: 'Let me convert both amounts.' },
      use('toolu_01', { amount: 250, from: 'EUR', to: 'JPY' }),
      use('toolu_02', { amount: 250, from: 'EUR', to: 'USD' }),
    ]
    return { id: 'msg_1', role: 'assistant', stop_reason: 'tool_use', content }
  }
  const [jpy, usd] = results.map((r) => JSON.parse(r.content))
  const text = `${jpy.amount} ${jpy.from} is ${jpy.converted} ${jpy.to}, or ${usd.converted} ${usd.to}.`
  return { id: 'msg_2', role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text }] }
}

const tools = registry.toAnthropicTools()
const messages = [{ role: 'user', content: 'How much is 250 euros in yen and in dollars?' }]
console.log(`tools: ${tools.map((t) => `${t.name} ${JSON.stringify(t.input_schema.properties)}`).join(', ')}`)
console.log(`user: ${messages[0].content}`)

for (;;) {
  const response = scriptedModel({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools })
  messages.push({ role: response.role, content: response.content })
  if (response.stop_reason !== 'tool_use') {
    console.log(`assistant: ${response.content[0].text}`)
    break
  }
  const { messages: replies } = await manager.executeToolCalls(response, { provider: 'anthropic' })
  for (const block of response.content.filter((b) => b.type === 'tool_use')) console.log(`  model calls ${block.name}(${JSON.stringify(block.input)})`)
  for (const result of replies[0].content) console.log(`  tool_result ${result.tool_use_id} (is_error: ${result.is_error}) -> ${result.content}`)
  messages.push(...replies)
}
