// OpenAI Responses API: function tools out, `function_call` output items in,
// `function_call_output` input items back. The model is scripted (recorded responses),
// so this runs with no network and no key:
//
//   node examples/openai-responses.mjs
//
// With the real SDK, `scriptedModel(request)` is `await client.responses.create(request)`.
import { ToolExecutionManager, ToolRegistry } from 'toolhost'

const registry = new ToolRegistry()
registry.register({
  name: 'lookup_order',
  description: 'Status of an order by its id',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  handler: async ({ orderId }) => ({ orderId, status: 'shipped', carrier: 'DHL', eta: '2025-06-03' }),
})
const manager = new ToolExecutionManager(registry, { timeoutMs: 2000 })

/** Recorded Response objects, picked by what the input holds so far. */
function scriptedModel({ input }) {
  const outputs = input.filter((item) => item.type === 'function_call_output')
  if (outputs.length === 0) {
    return {
      id: 'resp_1',
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_o1', name: 'lookup_order', arguments: '{"orderId":"A-1042"}' },
      ],
    }
  }
  const order = JSON.parse(outputs[0].output)
  const text = `Order ${order.orderId} has ${order.status} with ${order.carrier}; it should arrive on ${order.eta}.`
  return { id: 'resp_2', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }] }
}

const tools = registry.toOpenAIResponsesTools()
const input = [{ role: 'user', content: 'Where is my order A-1042?' }]
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`)
console.log(`user: ${input[0].content}`)

for (;;) {
  const response = scriptedModel({ model: 'gpt-4.1', input, tools })
  const calls = response.output.filter((item) => item.type === 'function_call')
  if (calls.length === 0) {
    const text = response.output.find((item) => item.type === 'message').content[0].text
    console.log(`assistant: ${text}`)
    break
  }
  // The whole Response goes in: only `function_call` items are read.
  const { messages: outputs } = await manager.executeToolCalls(response, { provider: 'openai-responses' })
  for (const call of calls) console.log(`  model calls ${call.name}(${call.arguments})`)
  for (const item of outputs) console.log(`  ${item.type} ${item.call_id} -> ${item.output}`)
  input.push(...response.output, ...outputs)
}
