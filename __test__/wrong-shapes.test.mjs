// A response that is not the provider's shape is an error, not "no tool calls": before,
// `choices[0]` given as an OpenAI message, or an Anthropic message given with
// `provider: 'openai'`, returned `[]` and the model's next turn failed at the provider
// with a 400. Each provider now refuses every other provider's payload (and the usual
// mistakes) with INVALID_TOOL_CALLS, naming the shape it expected and what it was given,
// and still answers a plain text response with no calls.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const PROVIDERS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'ag-ui', 'mcp']

/** Each provider's payloads holding one call of get_weather({ city: 'Paris' }). */
const chatMessage = {
  role: 'assistant', content: null, refusal: null,
  tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
}
const completion = { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'tool_calls', logprobs: null, message: chatMessage }] }
const responsesOutput = [
  { type: 'reasoning', id: 'rs_1', summary: [] },
  { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
]
const anthropicMessage = {
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use',
  content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
}
const geminiCall = { name: 'get_weather', args: { city: 'Paris' } }
const geminiContent = { role: 'model', parts: [{ functionCall: geminiCall }] }
const geminiCandidate = { content: geminiContent, finishReason: 'STOP' }
const agUiEvents = [
  { type: 'TOOL_CALL_START', toolCallId: 'call_1', toolCallName: 'get_weather' },
  { type: 'TOOL_CALL_ARGS', toolCallId: 'call_1', delta: '{"city":"Paris"}' },
  { type: 'TOOL_CALL_END', toolCallId: 'call_1' },
]
const mcpParams = { name: 'get_weather', arguments: { city: 'Paris' } }
const mcpRequest = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: mcpParams }

const CALLS = {
  openai: { 'a ChatCompletion': completion, 'an assistant message': chatMessage, 'a tool_calls array': chatMessage.tool_calls },
  'openai-responses': { 'a Response': { id: 'resp_1', object: 'response', status: 'completed', output: responsesOutput }, 'an output array': responsesOutput },
  anthropic: { 'a Messages response': anthropicMessage, 'a content array': anthropicMessage.content },
  gemini: {
    'a GenerateContentResponse': { candidates: [geminiCandidate] },
    'a Candidate': geminiCandidate,
    'a Content': geminiContent,
    'a Part': { functionCall: geminiCall },
    'a FunctionCall': geminiCall,
  },
  'ag-ui': { 'an event array': agUiEvents, '{ events }': { events: agUiEvents } },
  mcp: { 'a tools/call request': mcpRequest, 'its params': mcpParams, 'an array of requests': [mcpRequest] },
}

/** Each provider's plain text answer: no tool calls. */
const TEXT = {
  openai: { role: 'assistant', content: 'Sunny, 21 °C.', refusal: null },
  'openai-responses': {
    object: 'response',
    output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny, 21 °C.', annotations: [] }] }],
  },
  anthropic: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Sunny, 21 °C.' }], stop_reason: 'end_turn' },
  gemini: { candidates: [{ content: { role: 'model', parts: [{ text: 'Sunny, 21 °C.' }] }, finishReason: 'STOP' }] },
  'ag-ui': [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
    { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Sunny, 21 °C.' },
    { type: 'TEXT_MESSAGE_END', messageId: 'm' },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r' },
  ],
  mcp: [],
}

function setup() {
  const registry = new ToolRegistry()
  let runs = 0
  registry.register({
    name: 'get_weather',
    description: 'Current weather for a city',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    handler: ({ city }) => {
      runs++
      return { city, temperature: 21 }
    },
  })
  return { manager: new ToolExecutionManager(registry), runs: () => runs }
}

describe('each provider reads its own shapes', () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: every documented shape gives its call`, async () => {
      const { manager } = setup()
      for (const [what, response] of Object.entries(CALLS[provider])) {
        const { calls, results } = await manager.executeToolCalls(response, { provider })
        assert.equal(calls.length, 1, `${what}: ${JSON.stringify(calls)}`)
        assert.deepEqual(calls[0].arguments, { city: 'Paris' }, what)
        assert.equal(results[0].success, true, what)
      }
    })

    test(`${provider}: a plain text answer has no tool calls`, async () => {
      const { manager, runs } = setup()
      const { messages, calls, results } = await manager.executeToolCalls(TEXT[provider], { provider })
      assert.deepEqual([messages, calls, results], [[], [], []])
      assert.equal(runs(), 0)
    })
  }
})

describe("every other provider's payload is refused with INVALID_TOOL_CALLS", () => {
  for (const provider of PROVIDERS) {
    test(`${provider} refuses the others' tool calls, naming what it expected and got`, async () => {
      const { manager, runs } = setup()
      for (const [owner, shapes] of Object.entries(CALLS)) {
        if (owner === provider) continue
        for (const [what, response] of Object.entries(shapes)) {
          const label = `${owner} ${what} given as ${provider}`
          await assert.rejects(manager.executeToolCalls(response, { provider }), (e) => {
            assert.equal(e.code, 'INVALID_TOOL_CALLS', `${label}: ${e.message}`)
            assert.match(e.message, new RegExp(`^executeToolCalls: the response is not in the ${provider} format`), label)
            assert.match(e.message, /: expected .+; got .+/, label)
            return true
          }, label)
        }
      }
      assert.equal(runs(), 0, 'no handler ran for a refused response')
    })
  }

  test("the others' plain text answers are refused too, where the shapes differ", async () => {
    const { manager } = setup()
    // A Chat message with text content is also an Anthropic MessageParam ({ role,
    // content: string }): the same shape, read the same way (no calls) by both.
    const same = new Set(['openai>anthropic'])
    for (const provider of PROVIDERS) {
      for (const [owner, response] of Object.entries(TEXT)) {
        if (owner === provider || same.has(`${owner}>${provider}`) || owner === 'mcp') continue
        await assert.rejects(manager.executeToolCalls(response, { provider }), { code: 'INVALID_TOOL_CALLS' }, `${owner} text as ${provider}`)
      }
    }
  })
})

describe('the mistakes users make, in their words', () => {
  test('choices[0] instead of its message says to pass the message', async () => {
    const { manager } = setup()
    await assert.rejects(manager.executeToolCalls(completion.choices[0], { provider: 'openai' }), {
      code: 'INVALID_TOOL_CALLS',
      message: "executeToolCalls: the response is not in the openai format: expected an OpenAI Chat assistant message ({ role: 'assistant', content, tool_calls? }), a ChatCompletion ({ choices }) or a tool_calls array; got an OpenAI Chat choice ({ index, message, finish_reason }): pass the choice's `message` (choices[0].message) or the whole completion",
    })
  })

  test("an Anthropic message with provider: 'openai' names the provider to pass", async () => {
    const { manager } = setup()
    await assert.rejects(manager.executeToolCalls(anthropicMessage, { provider: 'openai' }), {
      code: 'INVALID_TOOL_CALLS',
      message: /got an Anthropic message \(\{ type: 'message', role, content \}\): for that format pass \{ provider: 'anthropic' \}$/,
    })
  })

  test('an OpenAI message with provider: anthropic is refused, not read as text', async () => {
    const { manager } = setup()
    await assert.rejects(manager.executeToolCalls({ ...chatMessage, content: 'Let me check.' }, { provider: 'anthropic' }), {
      code: 'INVALID_TOOL_CALLS',
      message: /not in the anthropic format: expected an Anthropic message .*; got an OpenAI Chat message .*: for that format pass \{ provider: 'openai' \}$/,
    })
  })

  test('a Gemini FunctionCall given as MCP is not read as a call without arguments', async () => {
    const { manager } = setup()
    await assert.rejects(manager.executeToolCalls(geminiCall, { provider: 'mcp' }), {
      code: 'INVALID_TOOL_CALLS',
      message: /got a Gemini FunctionCall \(\{ name, args \}\): for that format pass \{ provider: 'gemini' \}$/,
    })
  })

  test('values that are no response at all name what they are', async () => {
    const { manager } = setup()
    for (const provider of PROVIDERS) {
      for (const [value, given] of [[undefined, 'null'], ['Sunny', 'a string'], [42, 'a number'], [{}, 'an empty object'], [{ text: 'hi', foo: 1 }, null]]) {
        if (provider === 'gemini' && value?.text !== undefined) continue // a Gemini text Part
        await assert.rejects(manager.executeToolCalls(value, { provider }), (e) => {
          assert.equal(e.code, 'INVALID_TOOL_CALLS', `${provider} ${JSON.stringify(value)}: ${e.message}`)
          if (given !== null) assert.ok(e.message.includes(`; got ${given}`), `${provider}: ${e.message}`)
          return true
        })
      }
    }
  })

  test('a bad field inside a response in the right format still points at the field', async () => {
    const { manager } = setup()
    await assert.rejects(manager.executeToolCalls({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function' }] }, { provider: 'openai' }), {
      code: 'INVALID_TOOL_CALLS',
      message: 'executeToolCalls: invalid openai payload at `/tool_calls/0`: tool call `c` has no `function` object',
    })
  })
})
