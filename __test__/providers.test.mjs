// Provider formats (issue 5): per provider, declarations out, a recorded call in and the
// reply out, in exact shapes; OpenAI strict mode; error replies written for the model;
// Gemini's own FunctionDeclaration / FunctionCall / FunctionResponse; zod v4 input schemas.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import Ajv2020 from 'ajv/dist/2020.js'
import { z } from 'zod'
import { ToolRegistry, ToolExecutionManager, permanentError } from 'toolhost'

const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    near: {
      type: 'object',
      properties: { lat: { type: 'number' }, lon: { type: 'number' } },
      required: ['lat'],
    },
    days: { type: 'array', items: { type: 'object', properties: { date: { type: 'string' } } } },
  },
  required: ['city'],
}
const WEATHER = { city: 'Paris', temperature: 21, unit: 'celsius' }

function setup() {
  const registry = new ToolRegistry()
  registry.register({
    name: 'get_weather',
    description: 'Current weather for a city',
    inputSchema: WEATHER_SCHEMA,
    handler: ({ city, unit = 'celsius' }) => ({ city, temperature: 21, unit }),
  })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
  return { registry, manager }
}

describe('round trip per provider: declarations out, recorded call in, reply out', () => {
  test('a handler that returns nothing replies null (it used to say the result was not JSON)', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'log_event', description: 'Logs an event', inputSchema: { type: 'object' }, handler: async () => {} })
    const manager = new ToolExecutionManager(registry)
    const message = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'log_event', arguments: '{}' } }] }
    const { messages } = await manager.executeToolCalls(message, { provider: 'openai' })
    assert.deepEqual(messages, [{ role: 'tool', tool_call_id: 'call_1', content: 'null' }])
  })

  test('a result nested too deep to send gets its own reply saying the tool ran; the calls beside it keep theirs', async () => {
    // It failed the whole batch (INVALID_CONFIG, "replies are not valid: recursion limit
    // exceeded"): the reply of a payment that had run was lost with it.
    const deep = (n) => { let v = 1; for (let i = 0; i < n; i++) v = [v]; return v }
    const registry = new ToolRegistry()
    let charged = 0
    registry.register({ name: 'charge', description: 'Charges', inputSchema: { type: 'object' }, handler: () => ({ charged: ++charged }) })
    registry.register({ name: 'tree', description: 'A tree', inputSchema: { type: 'object' }, handler: () => deep(200) })
    const manager = new ToolExecutionManager(registry)
    const call = (id, name) => ({ id, type: 'function', function: { name, arguments: '{}' } })
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    globalThis.process?.on?.('warning', onWarning)
    try {
      const { messages, results } = await manager.executeToolCalls({ role: 'assistant', content: null, tool_calls: [call('c1', 'charge'), call('c2', 'tree')] }, { provider: 'openai' })
      assert.deepEqual(messages, [
        { role: 'tool', tool_call_id: 'c1', content: '{"charged":1}' },
        { role: 'tool', tool_call_id: 'c2', content: 'The tool `tree` ran, but its result could not be sent: it nests more than 126 levels of JSON deep.' },
      ])
      assert.equal(results[1].success, true, 'execute()\'s result keeps the value')
      assert.equal(charged, 1)
      await new Promise((r) => setTimeout(r, 1))
      assert.deepEqual(warnings.filter((w) => w.name === 'ToolhostModelOutputWarning').map((w) => w.message), ["the result of 'tree' could not be sent to the model: it nests more than 126 levels of JSON deep; the model was told the tool ran, not what it returned"])
    } finally {
      globalThis.process?.off?.('warning', onWarning)
    }
  })

  test('openai (Chat Completions)', async () => {
    const { registry, manager } = setup()
    assert.deepEqual(registry.toOpenAITools(), [
      { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA } },
    ])
    // A chat.completion as the API returns it.
    const completion = {
      id: 'chatcmpl-9x', object: 'chat.completion', created: 1718000000, model: 'gpt-4o-2024-08-06',
      choices: [{
        index: 0, finish_reason: 'tool_calls', logprobs: null,
        message: {
          role: 'assistant', content: null, refusal: null,
          tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
      }],
      usage: { prompt_tokens: 80, completion_tokens: 17, total_tokens: 97 },
    }
    for (const response of [completion, completion.choices[0].message]) {
      const { messages, calls } = await manager.executeToolCalls(response, { provider: 'openai' })
      assert.deepEqual(calls, [{ id: 'call_abc123', name: 'get_weather', arguments: { city: 'Paris' } }])
      assert.deepEqual(messages, [{ role: 'tool', tool_call_id: 'call_abc123', content: JSON.stringify(WEATHER) }])
    }
  })

  test('openai-responses (Responses API)', async () => {
    const { registry, manager } = setup()
    assert.deepEqual(registry.toOpenAIResponsesTools(), [
      { type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA, strict: false },
    ])
    const response = {
      id: 'resp_67ccd2bed1ec8190', object: 'response', status: 'completed', model: 'gpt-4.1-2025-04-14',
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', id: 'fc_12345xyz', call_id: 'call_12345xyz', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}', status: 'completed' },
      ],
    }
    for (const input of [response, response.output]) {
      const { messages } = await manager.executeToolCalls(input, { provider: 'openai-responses' })
      assert.deepEqual(messages, [{ type: 'function_call_output', call_id: 'call_12345xyz', output: JSON.stringify(WEATHER) }])
    }
  })

  test('anthropic (Messages API)', async () => {
    const { registry, manager } = setup()
    assert.deepEqual(registry.toAnthropicTools(), [
      { name: 'get_weather', description: 'Current weather for a city', input_schema: WEATHER_SCHEMA },
    ])
    const message = {
      id: 'msg_01Aq9w938a90dw8q', type: 'message', role: 'assistant', model: 'claude-sonnet-4-20250514',
      content: [
        { type: 'text', text: 'I will check the weather in Paris and Oslo.' },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Oslo', unit: 'kelvin' } },
      ],
      stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 472, output_tokens: 91 },
    }
    const { messages } = await manager.executeToolCalls(message, { provider: 'anthropic' })
    assert.equal(messages.length, 1, 'one user message carries every tool_result')
    const [reply] = messages
    assert.equal(reply.role, 'user')
    assert.deepEqual(reply.content[0], { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: JSON.stringify(WEATHER), is_error: false })
    assert.deepEqual(Object.keys(reply.content[1]).sort(), ['content', 'is_error', 'tool_use_id', 'type'])
    assert.equal(reply.content[1].tool_use_id, 'toolu_01B')
    assert.equal(reply.content[1].is_error, true)
    assert.match(reply.content[1].content, /`\/unit`: "kelvin" is not one of/)
  })

  test('gemini (generateContent)', async () => {
    const { registry, manager } = setup()
    assert.deepEqual(registry.toGeminiTools(), {
      functionDeclarations: [{
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: {
          type: 'OBJECT',
          properties: {
            city: { type: 'STRING', description: 'City name' },
            unit: { type: 'STRING', enum: ['celsius', 'fahrenheit'] },
            near: { type: 'OBJECT', properties: { lat: { type: 'NUMBER' }, lon: { type: 'NUMBER' } }, required: ['lat'] },
            days: { type: 'ARRAY', items: { type: 'OBJECT', properties: { date: { type: 'STRING' } } } },
          },
          required: ['city'],
        },
      }],
    })
    const response = {
      candidates: [{
        content: { role: 'model', parts: [{ functionCall: { id: 'fc-1', name: 'get_weather', args: { city: 'Paris' } } }] },
        finishReason: 'STOP', index: 0,
      }],
      usageMetadata: { promptTokenCount: 60, candidatesTokenCount: 8, totalTokenCount: 68 },
      modelVersion: 'gemini-2.5-flash',
    }
    const { messages, calls } = await manager.executeToolCalls(response, { provider: 'gemini' })
    assert.deepEqual(calls, [{ id: 'fc-1', name: 'get_weather', arguments: { city: 'Paris' } }])
    assert.deepEqual(messages, [{ role: 'user', parts: [{ functionResponse: { id: 'fc-1', name: 'get_weather', response: WEATHER } }] }])
  })

  test('ag-ui', async () => {
    const { registry, manager } = setup()
    assert.deepEqual(registry.toAgUiTools(), [{ name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA }])
    const events = [
      { type: 'TOOL_CALL_START', toolCallId: 'tc_1', toolCallName: 'get_weather', parentMessageId: 'm_1' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'tc_1', delta: '{"ci' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'tc_1', delta: 'ty":"Paris"}' },
      { type: 'TOOL_CALL_END', toolCallId: 'tc_1' },
    ]
    const { messages } = await manager.executeToolCalls(events, { provider: 'ag-ui' })
    assert.equal(messages.length, 1)
    const { id, ...rest } = messages[0]
    assert.match(id, /\S/)
    assert.deepEqual(rest, { role: 'tool', toolCallId: 'tc_1', content: JSON.stringify(WEATHER) })
  })
})

/** Walks a strict schema and asserts OpenAI's strict-mode rules at every object level. */
function assertStrictRules(schema, path = '#') {
  const types = [].concat(schema.type ?? [])
  if (types.includes('object')) {
    assert.equal(schema.additionalProperties, false, `${path}: additionalProperties must be false`)
    assert.ok(schema.properties && typeof schema.properties === 'object', `${path}: properties must be listed`)
    assert.deepEqual([...schema.required].sort(), Object.keys(schema.properties).sort(), `${path}: every property must be required`)
    for (const [k, s] of Object.entries(schema.properties)) assertStrictRules(s, `${path}/properties/${k}`)
  }
  if (schema.items) assertStrictRules(schema.items, `${path}/items`)
  for (const [i, s] of (schema.anyOf ?? []).entries()) assertStrictRules(s, `${path}/anyOf/${i}`)
  for (const [k, s] of Object.entries(schema.$defs ?? {})) assertStrictRules(s, `${path}/$defs/${k}`)
}

const nullable = (s) => [].concat(s.type ?? []).includes('null') || (s.anyOf ?? []).some((b) => b.type === 'null')

describe('OpenAI strict mode', () => {
  test('every property required, optional ones nullable, additionalProperties false at every level', () => {
    const { registry } = setup()
    const [chat] = registry.toOpenAITools({ strict: true })
    assert.equal(chat.function.strict, true)
    const schema = chat.function.parameters
    assertStrictRules(schema)
    // Originally optional → nullable; originally required → not.
    assert.equal(nullable(schema.properties.city), false)
    for (const k of ['unit', 'near', 'days']) assert.ok(nullable(schema.properties[k]), `${k} is nullable`)
    assert.ok(schema.properties.unit.enum.includes(null), 'null joins the enum')
    assert.equal(nullable(schema.properties.near.properties.lat), false)
    assert.ok(nullable(schema.properties.near.properties.lon))
    assert.ok(nullable(schema.properties.days.items.properties.date))
    // The Responses format applies the same rewrite.
    const [responses] = registry.toOpenAIResponsesTools({ strict: true })
    assert.equal(responses.strict, true)
    assert.deepEqual(responses.parameters, schema)
    // The rewritten schema is valid JSON Schema accepting what a strict model sends.
    const validate = new Ajv2020({ strict: false }).compile(schema)
    assert.ok(validate({ city: 'Paris', unit: null, near: null, days: null }), JSON.stringify(validate.errors))
    assert.ok(validate({ city: 'Paris', unit: 'celsius', near: { lat: 1, lon: null }, days: [{ date: null }] }))
    assert.equal(validate({ city: 'Paris' }), false, 'omitting a key is refused')
    assert.equal(validate({ city: 'Paris', unit: null, near: null, days: null, extra: 1 }), false)
  })

  test('the non-strict declarations are left as registered', () => {
    const { registry } = setup()
    assert.equal(registry.toOpenAITools()[0].function.strict, undefined)
    assert.deepEqual(registry.toOpenAITools({ strict: false })[0].function.parameters, WEATHER_SCHEMA)
  })

  test('a schema strict mode cannot express is refused with a clear INVALID_SCHEMA error', () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'tag_things',
      description: 'Free-form tags',
      inputSchema: { type: 'object', properties: { tags: { type: 'object', additionalProperties: { type: 'string' } } } },
      handler: () => null,
    })
    for (const call of [() => registry.toOpenAITools({ strict: true }), () => registry.toOpenAIResponsesTools({ strict: true })]) {
      assert.throws(call, (e) => {
        assert.equal(e.code, 'INVALID_SCHEMA')
        assert.match(e.message, /tool `tag_things`/)
        assert.match(e.message, /#\/properties\/tags/)
        assert.match(e.message, /strict mode/)
        assert.equal(e.schemaPath, '/properties/tags', 'the path the message names')
        return true
      })
    }
    assert.equal(registry.toOpenAITools().length, 1, 'non-strict output still works')
  })
})

describe('error replies written for the model; none of them throws', () => {
  function failingSetup() {
    const { registry, manager } = setup()
    registry.register({
      name: 'charge_card',
      description: 'Charges a card',
      inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      handler: () => {
        throw permanentError('card declined', { code: 'CARD_DECLINED' })
      },
    })
    return { registry, manager }
  }
  const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: args } })

  test('validation failure lists each failing path with its message and shows the expected schema', async () => {
    const { manager } = failingSetup()
    const { messages, results } = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [call('c1', 'get_weather', JSON.stringify({ unit: 'kelvin', near: { lon: 'x' } }))] },
      { provider: 'openai' },
    )
    assert.equal(results[0].error.code, 'INVALID_ARGUMENTS')
    const text = messages[0].content
    assert.match(text, /^Tool `get_weather` was not run: its arguments do not match its input schema\./)
    assert.match(text, /- arguments \(top level\): "city" is a required property \(rule `required`\)/)
    assert.match(text, /- `\/unit`: "kelvin" is not one of .*"celsius".*"fahrenheit".* \(rule `enum`\)/)
    assert.match(text, /- `\/near`: "lat" is a required property/)
    assert.match(text, /- `\/near\/lon`: "x" is not of type "number" \(rule `type`\)/)
    const schemaText = text.slice(text.indexOf('{'))
    assert.deepEqual(JSON.parse(schemaText), WEATHER_SCHEMA, 'the expected schema is shown in full')
  })

  test('unknown tool is answered with the available tools (and the likely one)', async () => {
    const { manager } = failingSetup()
    const { messages } = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [call('c2', 'get_wether', '{"city":"Paris"}')] },
      { provider: 'openai' },
    )
    assert.deepEqual(messages, [{
      role: 'tool',
      tool_call_id: 'c2',
      content: 'There is no tool named `get_wether`. Available tools: `get_weather`, `charge_card`. Did you mean `get_weather`? Call one of the available tools by its exact name.',
    }])
  })

  test('malformed arguments text is answered with a parse error and the text received', async () => {
    const { manager } = failingSetup()
    let ran = false
    manager.on('tool-execution-executing', () => (ran = true))
    const { messages } = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [call('c3', 'get_weather', '{"city": "Par')] },
      { provider: 'openai' },
    )
    const text = messages[0].content
    assert.match(text, /^Tool `get_weather` was not run: its arguments are not valid JSON \(.*EOF while parsing a string.*\)\./)
    assert.match(text, /Arguments received: \{"city": "Par\n/)
    assert.match(text, /as a single JSON object/)
    assert.equal(ran, false)
  })

  test('a failing handler, in every provider\'s error shape, next to a successful call', async () => {
    const { manager } = failingSetup()
    const failure = /^Tool `charge_card` failed: .*card declined \(category: permanent, code: CARD_DECLINED\)\. Retrying the same call will not help/
    const openai = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [call('c4', 'charge_card', '{"cents":500}'), call('c5', 'get_weather', '{"city":"Paris"}')] },
      { provider: 'openai' },
    )
    assert.match(openai.messages[0].content, failure)
    assert.equal(openai.messages[1].content, JSON.stringify(WEATHER))

    const responses = await manager.executeToolCalls(
      [{ type: 'function_call', call_id: 'c4', name: 'charge_card', arguments: '{"cents":500}' }],
      { provider: 'openai-responses' },
    )
    assert.equal(responses.messages[0].type, 'function_call_output')
    assert.match(responses.messages[0].output, failure)

    const anthropic = await manager.executeToolCalls(
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_4', name: 'charge_card', input: { cents: 500 } }] },
      { provider: 'anthropic' },
    )
    assert.equal(anthropic.messages[0].content[0].is_error, true)
    assert.match(anthropic.messages[0].content[0].content, failure)

    const gemini = await manager.executeToolCalls(
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'charge_card', args: { cents: 500 } } }] } }] },
      { provider: 'gemini' },
    )
    const { functionResponse } = gemini.messages[0].parts[0]
    assert.equal(functionResponse.name, 'charge_card')
    assert.deepEqual(Object.keys(functionResponse.response), ['error'])
    assert.match(functionResponse.response.error, failure)

    const agUi = await manager.executeToolCalls(
      [{ type: 'TOOL_CALL_START', toolCallId: 't4', toolCallName: 'charge_card' }, { type: 'TOOL_CALL_ARGS', toolCallId: 't4', delta: '{"cents":500}' }, { type: 'TOOL_CALL_END', toolCallId: 't4' }],
      { provider: 'ag-ui' },
    )
    assert.match(agUi.messages[0].error, failure)
  })

  test('a response that is not a tool-call payload is refused up front with INVALID_TOOL_CALLS', async () => {
    const { manager } = setup()
    // Refused through the promise: executeToolCalls never throws.
    await assert.rejects(manager.executeToolCalls(42, { provider: 'anthropic' }), { code: 'INVALID_TOOL_CALLS' })
    await assert.rejects(manager.executeToolCalls([], { provider: 'cohere' }), { code: 'INVALID_CONFIG' })
  })
})

describe('Gemini\'s own types', () => {
  const FORECAST = {
    name: 'get_forecast',
    description: 'Weather forecast',
    parameters: {
      type: 'OBJECT',
      properties: {
        city: { type: 'STRING', description: 'City name', nullable: true },
        days: { type: 'INTEGER', format: 'int32', minimum: 1, maximum: 7 },
        unit: { type: 'STRING', format: 'enum', enum: ['C', 'F'] },
      },
      required: ['days'],
      propertyOrdering: ['city', 'days', 'unit'],
    },
  }

  test('a FunctionDeclaration registers as is and comes back unchanged from toGeminiTools()', () => {
    const registry = new ToolRegistry()
    registry.register({ ...FORECAST, handler: () => null })
    assert.deepEqual(registry.toGeminiTools(), { functionDeclarations: [FORECAST] })
    // Seen as JSON Schema by every other provider.
    assert.deepEqual(registry.get('get_forecast').inputSchema.properties.city, { type: ['string', 'null'], description: 'City name' })
    assert.equal(registry.toAnthropicTools()[0].input_schema.properties.days.type, 'integer')
  })

  test('FunctionCall in, validated against the Gemini schema, FunctionResponse out', async () => {
    const registry = new ToolRegistry()
    registry.register({ ...FORECAST, handler: ({ city, days }) => (city === null ? 'which city?' : { city, days, highs: [18, 20].slice(0, days) }) })
    const manager = new ToolExecutionManager(registry)
    const content = {
      role: 'model',
      parts: [
        { functionCall: { id: 'call-a', name: 'get_forecast', args: { city: 'Rome', days: 2 } } },
        { functionCall: { name: 'get_forecast', args: { city: null, days: 1 } } },
        { functionCall: { name: 'get_forecast', args: { days: 9, unit: 'K' } } },
      ],
    }
    const { messages, calls } = await manager.executeToolCalls(content, { provider: 'gemini' })
    assert.equal(calls[0].id, 'call-a')
    assert.equal(new Set(calls.map((c) => c.id)).size, 3, 'calls without an id get one')
    assert.equal(messages.length, 1)
    assert.equal(messages[0].role, 'user')
    const [a, b, c] = messages[0].parts.map((p) => p.functionResponse)
    assert.deepEqual(a, { id: 'call-a', name: 'get_forecast', response: { city: 'Rome', days: 2, highs: [18, 20] } })
    assert.deepEqual(b, { name: 'get_forecast', response: { result: 'which city?' } }, 'a non-object result is wrapped in { result }')
    assert.equal(c.name, 'get_forecast')
    assert.match(c.response.error, /`\/days`: 9 is greater than the maximum of 7/)
    assert.match(c.response.error, /`\/unit`: "K" is not one of/)
  })
})

describe('Standard Schema (zod v4) as inputSchema', () => {
  const Order = z.object({
    sku: z.string().min(3),
    quantity: z.number().int().min(1),
    note: z.string().optional(),
  })

  test('becomes JSON Schema at registration and is validated in Rust', async () => {
    const registry = new ToolRegistry()
    let seen
    registry.register({ name: 'place_order', description: 'Places an order', inputSchema: Order, handler: (args) => ((seen = args), { ok: true }) })
    const schema = registry.get('place_order').inputSchema
    assert.deepEqual(schema.required, ['sku', 'quantity'])
    assert.deepEqual(schema.properties.sku, { type: 'string', minLength: 3 })
    assert.equal(schema.properties.quantity.type, 'integer')
    assert.equal(schema.$schema, undefined)
    assert.deepEqual(registry.toOpenAITools()[0].function.parameters, schema)
    assertStrictRules(registry.toOpenAITools({ strict: true })[0].function.parameters)

    const manager = new ToolExecutionManager(registry)
    assert.deepEqual(registry.validate('place_order', { sku: 'ab', quantity: 0 }).errors.map((e) => [e.path, e.keyword]), [['/sku', 'minLength'], ['/quantity', 'minimum']], "in the schema's property order")
    const bad = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [{ id: 'z1', type: 'function', function: { name: 'place_order', arguments: '{"sku":"ab","quantity":1.5}' } }] },
      { provider: 'openai' },
    )
    assert.match(bad.messages[0].content, /`\/sku`: "ab" is shorter than 3 characters/)
    assert.match(bad.messages[0].content, /`\/quantity`: 1\.5 is not of type "integer"/)
    assert.equal(seen, undefined)
    const good = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [{ id: 'z2', type: 'function', function: { name: 'place_order', arguments: '{"sku":"abc","quantity":2}' } }] },
      { provider: 'openai' },
    )
    assert.equal(good.messages[0].content, '{"ok":true}')
    assert.deepEqual(seen, { sku: 'abc', quantity: 2 })
  })
})

test('strict mode round trip: nulls a model sends for optional properties validate against the original schema', async () => {
  const registry = new ToolRegistry()
  let received
  registry.register({
    name: 'book',
    description: 'books a room',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string' }, nights: { type: 'integer' }, note: { type: ['string', 'null'] } },
      required: ['city'],
    },
    handler: (args) => { received = args; return { ok: true } },
  })
  const [tool] = registry.toOpenAITools({ strict: true })
  assert.deepEqual(tool.function.parameters.required, ['city', 'nights', 'note'])
  const manager = new ToolExecutionManager(registry)
  // What a strict-mode model sends when it leaves `nights` out: every key, null for the optional ones.
  const message = { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'book', arguments: '{"city":"Oslo","nights":null,"note":null}' } }] }
  const { messages, results } = await manager.executeToolCalls(message, { provider: 'openai' })
  assert.equal(results[0].success, true, JSON.stringify(results[0].error))
  assert.deepEqual(received, { city: 'Oslo', note: null }, 'null dropped for the optional integer, kept where the schema allows null')
  assert.equal(messages[0].tool_call_id, 'c1')
  // A required property sent as null is still a validation failure the model hears about.
  const bad = { role: 'assistant', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'book', arguments: '{"city":null,"nights":2,"note":null}' } }] }
  const r = await manager.executeToolCalls(bad, { provider: 'openai' })
  assert.equal(r.results[0].error.code, 'INVALID_ARGUMENTS')
  assert.match(r.messages[0].content, /\/city/)
})

test('a failure reply names the tool once and says what happened', async () => {
  const registry = new ToolRegistry()
  registry.register({ name: 'slow', description: 'never answers', handler: () => new Promise(() => {}) })
  const manager = new ToolExecutionManager(registry, { timeoutMs: 20, retry: { maxAttempts: 1 } })
  const message = { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'slow', arguments: '{}' } }] }
  const { messages } = await manager.executeToolCalls(message, { provider: 'openai' })
  assert.match(messages[0].content, /^Tool `slow` failed: timed out after 20 ms/)
  assert.equal(messages[0].content.match(/slow/g).length, 1, messages[0].content)
})
