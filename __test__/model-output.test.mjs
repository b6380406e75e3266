// What the model sees (issue 13): toModelOutput, the output budget, and exactly one
// reply per tool call whatever happens, for every provider.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, modelOutputOf } from 'toolhost'

/** A model response in each provider's shape, for calls `[{ id, name, args }]`. */
const RESPONSES = {
  openai: (calls) => ({ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) }),
  'openai-responses': (calls) => calls.map((c) => ({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.args) })),
  anthropic: (calls) => ({ role: 'assistant', content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })) }),
  gemini: (calls) => calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.args } })),
  'ag-ui': (calls) => calls.flatMap((c) => [
    { type: 'TOOL_CALL_START', toolCallId: c.id, toolCallName: c.name },
    { type: 'TOOL_CALL_ARGS', toolCallId: c.id, delta: JSON.stringify(c.args) },
    { type: 'TOOL_CALL_END', toolCallId: c.id },
  ]),
  mcp: (calls) => calls.map((c) => ({ jsonrpc: '2.0', id: c.id, method: 'tools/call', params: { name: c.name, arguments: c.args } })),
}

/** The replies of each provider as `[{ id, text, isError }]`, in order. */
const REPLIES = {
  openai: (messages) => messages.map((m) => ({ id: m.tool_call_id, text: m.content })),
  'openai-responses': (messages) => messages.map((m) => ({ id: m.call_id, text: m.output })),
  anthropic: (messages) => {
    assert.equal(messages.length, 1, 'one user message carries every tool_result')
    return messages[0].content.map((b) => ({ id: b.tool_use_id, text: typeof b.content === 'string' ? b.content : JSON.stringify(b.content), isError: b.is_error }))
  },
  gemini: (messages) => {
    assert.equal(messages.length, 1, 'one user message carries every functionResponse')
    return messages[0].parts.map((p) => ({ id: p.functionResponse.id, text: JSON.stringify(p.functionResponse.response) }))
  },
  'ag-ui': (messages) => messages.map((m) => ({ id: m.toolCallId, text: m.content })),
  mcp: (messages) => messages.map((m, k) => ({ id: k, text: m.content.map((c) => c.text).join(''), isError: m.isError })),
}

const PROVIDERS = Object.keys(RESPONSES)

function catalog() {
  const registry = new ToolRegistry()
  registry.register({ name: 'ok', description: 'Works', handler: (args) => ({ echo: args.n ?? null }) })
  registry.register({ name: 'hang', description: 'Never settles, ignores its signal', metadata: { timeoutMs: 30 }, handler: () => new Promise(() => {}) })
  registry.register({ name: 'guarded', description: 'Needs approval', needsApproval: true, handler: () => 'ran' })
  registry.register({ name: 'fragile', description: 'Fails; its circuit opens', metadata: { circuitBreaker: { failureThreshold: 1, recoveryTimeoutMs: 60_000 } }, handler: () => { throw new Error('down') } })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
  // Whoever approves says no.
  manager.on('tool-execution-approval-requested', ({ approvalId }) => queueMicrotask(() => manager.deny(approvalId, { reason: 'not now' })))
  return { registry, manager }
}

describe('one reply per call, in call order, whatever happens', () => {
  for (const provider of PROVIDERS) {
    test(`${provider}: timeout, denial, open circuit, unknown tool and duplicate ids each get their reply`, async () => {
      const { manager } = catalog()
      await manager.execute('fragile', {}) // opens the circuit
      const calls = [
        { id: 'c1', name: 'ok', args: { n: 1 } },
        { id: 'c2', name: 'hang', args: {} },
        { id: 'c3', name: 'guarded', args: {} },
        { id: 'c4', name: 'fragile', args: {} },
        { id: 'c5', name: 'no_such_tool', args: {} },
        { id: 'c1', name: 'ok', args: { n: 2 } },
      ]
      const { messages, results } = await manager.executeToolCalls(RESPONSES[provider](calls), { provider })
      const replies = REPLIES[provider](messages)
      assert.equal(replies.length, calls.length)
      assert.equal(results.length, calls.length)
      if (provider !== 'mcp') assert.deepEqual(replies.map((r) => r.id), calls.map((c) => c.id))
      assert.deepEqual(results.map((r) => r.success ? 'ok' : r.error.code), ['ok', 'TIMEOUT', 'APPROVAL_DENIED', 'CIRCUIT_OPEN', 'TOOL_NOT_FOUND', 'ok'])
      assert.match(replies[0].text, /"echo":1/)
      assert.match(replies[1].text, /timed out/)
      assert.match(replies[2].text, /denied: not now/)
      assert.match(replies[3].text, /circuit is open/)
      assert.match(replies[4].text, /no_such_tool/)
      assert.match(replies[5].text, /"echo":2/)
    })

    test(`${provider}: an aborted signal gets every call its reply at once, even from a handler that never settles`, async () => {
      const { manager } = catalog()
      const controller = new AbortController()
      const calls = [{ id: 'a1', name: 'hang', args: {} }, { id: 'a2', name: 'hang', args: {} }, { id: 'a3', name: 'ok', args: {} }]
      const pending = manager.executeToolCalls(RESPONSES[provider](calls), { provider, signal: controller.signal, concurrency: 3, timeoutMs: 60_000 })
      await sleep(5)
      const t0 = performance.now()
      controller.abort()
      const { messages, results } = await pending
      assert.ok(performance.now() - t0 < 500, 'no waiting for the handlers')
      assert.equal(REPLIES[provider](messages).length, 3)
      assert.deepEqual(results.map((r) => r.success ? 'ok' : r.error.code), ['CANCELLED', 'CANCELLED', 'ok'])
    })

    test(`${provider}: a signal aborted before the call gets every call a cancelled reply`, async () => {
      const { manager } = catalog()
      const calls = [{ id: 'b1', name: 'ok', args: {} }, { id: 'b2', name: 'guarded', args: {} }]
      const { messages, results } = await manager.executeToolCalls(RESPONSES[provider](calls), { provider, signal: AbortSignal.abort() })
      assert.equal(REPLIES[provider](messages).length, 2)
      assert.deepEqual(results.map((r) => r.error.code), ['CANCELLED', 'CANCELLED'])
    })
  }
})

describe('toModelOutput and the output budget', () => {
  function setup(options) {
    const registry = new ToolRegistry()
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}`, note: 'x'.repeat(20) }))
    registry.register({ name: 'rows', description: 'Many rows', handler: () => rows })
    registry.register({ name: 'summary', description: 'Rows, summarised for the model', handler: () => rows, toModelOutput: (r) => `${r.length} rows; first: ${r[0].name}` })
    registry.register({ name: 'picture', description: 'An image', handler: () => ({ png: 'iVBORw0KGgo=' }), toModelOutput: (r) => [{ type: 'text', text: 'a chart' }, { type: 'image', data: r.png, mediaType: 'image/png' }] })
    registry.register({ name: 'capped', description: 'Its own budget', metadata: { maxOutputChars: 50 }, handler: () => rows })
    return { rows, manager: new ToolExecutionManager(registry, options) }
  }
  const call = (name) => ({ role: 'assistant', tool_calls: [{ id: 'x', type: 'function', function: { name, arguments: '{}' } }] })

  test('toModelOutput decides the reply; the result, the record and the events keep the full value', async () => {
    const { rows, manager } = setup()
    let succeeded
    manager.on('tool-execution-succeeded', (d) => (succeeded = d.result))
    const { messages, results } = await manager.executeToolCalls(call('summary'), { provider: 'openai' })
    assert.equal(messages[0].content, '20000 rows; first: row 0')
    assert.equal(results[0].result, rows)
    assert.equal(results[0].execution.result, rows)
    assert.equal(succeeded, rows)
    assert.equal(modelOutputOf(manager, results[0]).map((c) => c.text).join(''), '20000 rows; first: row 0')
  })

  test('content parts: images go to providers that take them, and are noted for the others', async () => {
    const { manager } = setup()
    const anthropic = await manager.executeToolCalls({ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'picture', input: {} }] }, { provider: 'anthropic' })
    assert.deepEqual(anthropic.messages[0].content[0].content, [
      { type: 'text', text: 'a chart' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ])
    const openai = await manager.executeToolCalls(call('picture'), { provider: 'openai' })
    assert.equal(openai.messages[0].content, 'a chart\n[image: image/png]')
    const mcp = await manager.executeToolCalls([{ params: { name: 'picture', arguments: {} } }], { provider: 'mcp' })
    assert.deepEqual(mcp.messages[0].content[1], { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' })
  })

  test('a toModelOutput value that is not text or parts is warned about, and the batch still gets every reply', async () => {
    // It made executeToolCalls reject after every tool of the batch had run, so the
    // replies of calls with side effects were lost.
    const registry = new ToolRegistry()
    const charged = []
    registry.register({ name: 'charge', description: 'Charges', handler: () => { charged.push(1); return { ok: true } } })
    const shaped = {
      promise: async () => 'too late',
      object: () => ({ text: 'no type' }),
      part: () => [{ type: 'text', text: 'fine' }, { type: 'video' }],
      bigint: () => [{ type: 'text', text: 1n }],
    }
    for (const [name, toModelOutput] of Object.entries(shaped)) {
      registry.register({ name, description: name, handler: () => ({ n: 1 }), toModelOutput })
    }
    const manager = new ToolExecutionManager(registry)
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      const names = ['charge', ...Object.keys(shaped)]
      const response = { role: 'assistant', tool_calls: names.map((name, i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: '{}' } })) }
      const { messages } = await manager.executeToolCalls(response, { provider: 'openai' })
      assert.deepEqual(messages.map((m) => [m.tool_call_id, m.content]), [['c0', '{"ok":true}'], ...Object.keys(shaped).map((_, i) => [`c${i + 1}`, '{"n":1}'])])
      assert.deepEqual(charged, [1])
      await new Promise((resolve) => setImmediate(resolve))
      const texts = warnings.filter((w) => w.name === 'ToolhostModelOutputWarning').map((w) => w.message)
      assert.equal(texts.length, 4, texts.join('\n'))
      assert.match(texts.find((t) => t.includes("'promise'")), /returned a promise; .*the result's JSON was sent instead/)
      assert.match(texts.find((t) => t.includes("'object'")), /of 'object' returned an object, not a string or an array of content parts: the result's JSON was sent instead/)
      assert.match(texts.find((t) => t.includes("'part'")), /returned a part 1 that is not \{ type: 'text', text \}/)
      assert.match(texts.find((t) => t.includes("'bigint'")), /BigInt/)
    } finally {
      process.off('warning', onWarning)
    }
  })

  test('a 1 MB result is cut at a JSON boundary with a note; the full result stays in the record', async () => {
    const { rows, manager } = setup({ maxOutputChars: 2000 })
    const { messages, results } = await manager.executeToolCalls(call('rows'), { provider: 'openai' })
    const full = JSON.stringify(rows)
    assert.ok(full.length > 1_000_000, `the result is ${full.length} characters`)
    const text = messages[0].content
    assert.ok(text.length < 2400, `the reply is ${text.length} characters`)
    const [head, note] = text.split('…\n')
    assert.ok(head.length <= 2000 && head.endsWith('}'), 'cut after a whole element')
    assert.ok(JSON.parse(`${head}]`).length > 0, 'what is kept is whole rows')
    assert.match(note, new RegExp(`of ${full.length} characters`))
    assert.match(note, new RegExp(`execution ${results[0].execution.id}`))
    assert.match(note, /asking for less/)
    assert.equal(results[0].result.length, 20_000)
  })

  test('a tool\'s own maxOutputChars wins over the manager\'s', async () => {
    const { manager } = setup({ maxOutputChars: 100_000 })
    const { messages } = await manager.executeToolCalls(call('capped'), { provider: 'openai' })
    assert.match(messages[0].content, /maxOutputChars 50\)/)
  })

  test('MCP replies carry structuredContent for a tool with an output schema', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'w', description: 'Weather', outputSchema: { type: 'object', properties: { tempC: { type: 'number' } } }, handler: () => ({ tempC: 21 }) })
    registry.register({ name: 'plain', description: 'No schema', handler: () => ({ tempC: 21 }) })
    const manager = new ToolExecutionManager(registry)
    const { messages } = await manager.executeToolCalls([{ params: { name: 'w', arguments: {} } }, { params: { name: 'plain', arguments: {} } }], { provider: 'mcp' })
    assert.deepEqual(messages[0], { content: [{ type: 'text', text: '{"tempC":21}' }], isError: false, structuredContent: { tempC: 21 } })
    assert.equal(messages[1].structuredContent, undefined)
  })
})
