// toAiSdkTools (issue 5): the registry's tools as Vercel AI SDK tools, driven by the
// real `generateText` from 'ai' and its mock language model from 'ai/test'.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { generateText, stepCountIs, asSchema } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { ToolRegistry, ToolExecutionManager, toAiSdkTools, permanentError } from 'toolhost'

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 1 }, unit: { type: 'string', enum: ['c', 'f'] } },
  required: ['city'],
  additionalProperties: false,
}

function setup() {
  const registry = new ToolRegistry()
  registry.register({
    name: 'get_weather',
    description: 'Current weather for a city',
    metadata: { title: 'Weather' },
    inputSchema: WEATHER_SCHEMA,
    handler: async ({ city, unit = 'c' }) => ({ city, temperature: unit === 'c' ? 21 : 70, unit }),
  })
  registry.register({
    name: 'charge_card',
    description: 'Charges a card',
    inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
    handler: async () => {
      throw permanentError('card declined', { code: 'CARD_DECLINED' })
    },
  })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
  return { registry, manager }
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

/** Step 1: the model asks for three tools; step 2: it answers in text. */
function scriptedModel() {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: 'tool-call', toolCallId: 'call_ok', toolName: 'get_weather', input: JSON.stringify({ city: 'Paris' }) },
          { type: 'tool-call', toolCallId: 'call_fail', toolName: 'charge_card', input: JSON.stringify({ cents: 500 }) },
          { type: 'tool-call', toolCallId: 'call_bad', toolName: 'get_weather', input: JSON.stringify({ city: '', unit: 'k' }) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      {
        content: [{ type: 'text', text: 'It is 21 degrees in Paris; the card was declined.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      },
    ],
  })
}

describe('toAiSdkTools', () => {
  test('tools have the AI SDK shape: description, title, a jsonSchema() schema, execute', () => {
    const { manager } = setup()
    const tools = toAiSdkTools(manager)
    assert.deepEqual(Object.keys(tools), ['get_weather', 'charge_card'])
    const weather = tools.get_weather
    assert.equal(weather.description, 'Current weather for a city')
    assert.equal(weather.title, 'Weather')
    assert.equal(typeof weather.execute, 'function')
    assert.equal(weather.inputSchema[Symbol.for('vercel.ai.schema')], true)
    // The AI SDK's own asSchema() recognises it as a schema and keeps it as is.
    const schema = asSchema(weather.inputSchema)
    assert.equal(schema, weather.inputSchema)
    assert.deepEqual(schema.jsonSchema, WEATHER_SCHEMA)
    assert.equal(tools.charge_card.title, undefined)
  })

  test('generateText runs the tools through the manager over two steps; failures reach the model as tool errors', async () => {
    const { manager } = setup()
    const succeeded = []
    const failed = []
    manager.on('tool-execution-succeeded', (d) => succeeded.push(d.execution))
    manager.on('tool-execution-failed', (d) => failed.push(d.execution))
    const model = scriptedModel()

    const result = await generateText({
      model,
      tools: toAiSdkTools(manager),
      prompt: 'Weather in Paris, then charge 5 euros',
      stopWhen: stepCountIs(2),
    })

    assert.equal(result.steps.length, 2)
    assert.equal(result.text, 'It is 21 degrees in Paris; the card was declined.')

    // Step 1's request carried the declarations in the AI SDK's function-tool shape.
    const declared = model.doGenerateCalls[0].tools
    assert.deepEqual(declared.map((t) => [t.type, t.name]), [['function', 'get_weather'], ['function', 'charge_card']])
    assert.deepEqual(declared[0].inputSchema, WEATHER_SCHEMA)

    // The calls ran through the manager, with the model's tool call ids.
    assert.deepEqual(succeeded.map((e) => [e.toolName, e.toolCallId]), [['get_weather', 'call_ok']])
    assert.deepEqual(failed.map((e) => e.toolCallId).sort(), ['call_bad', 'call_fail'])
    const [okRecord] = manager.getExecutionsForToolCall('call_ok')
    assert.equal(okRecord.status, 'succeeded')
    assert.deepEqual(okRecord.result, { city: 'Paris', temperature: 21, unit: 'c' })

    // Step 1's content: one tool result and two tool errors.
    const parts = Object.fromEntries(result.steps[0].content.filter((p) => p.toolCallId).map((p) => [`${p.type}:${p.toolCallId}`, p]))
    assert.deepEqual(parts['tool-result:call_ok'].output, { city: 'Paris', temperature: 21, unit: 'c' })
    const declined = parts['tool-error:call_fail'].error
    assert.equal(declined.name, 'ToolCallError')
    assert.match(declined.message, /^Tool `charge_card` failed: .*card declined \(category: permanent, code: CARD_DECLINED\)/)
    assert.equal(declined.code, 'CARD_DECLINED')
    assert.equal(declined.toolError.category, 'permanent')
    assert.equal(declined.execution.toolCallId, 'call_fail')
    const invalid = parts['tool-error:call_bad'].error
    assert.equal(invalid.code, 'INVALID_ARGUMENTS')
    assert.match(invalid.message, /`\/city`/)
    assert.match(invalid.message, /`\/unit`/)
    assert.match(invalid.message, /"enum"/, 'the expected schema is shown')

    // Step 2's prompt sends the errors back to the model as tool error outputs.
    const toolMessage = model.doGenerateCalls[1].prompt.find((m) => m.role === 'tool')
    const outputs = Object.fromEntries(toolMessage.content.map((p) => [p.toolCallId, p.output]))
    assert.equal(outputs.call_ok.type, 'json')
    assert.deepEqual(outputs.call_ok.value, { city: 'Paris', temperature: 21, unit: 'c' })
    assert.equal(outputs.call_fail.type, 'error-text')
    assert.equal(outputs.call_fail.value, declined.message)
    assert.equal(outputs.call_bad.type, 'error-text')
    assert.match(outputs.call_bad.value, /^Tool `get_weather` was not run: its arguments do not match its input schema/)
  })

  test('abortSignal cancels the execution; the tool throws', async () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'wait',
      description: 'Waits until aborted',
      inputSchema: { type: 'object' },
      handler: (_args, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
    })
    const manager = new ToolExecutionManager(registry)
    const controller = new AbortController()
    const running = toAiSdkTools(manager).wait.execute({}, { toolCallId: 'call_wait', abortSignal: controller.signal, messages: [] })
    controller.abort()
    await assert.rejects(running, (e) => e.name === 'ToolCallError' && e.execution.status === 'cancelled')
  })

  test('sessionId lists and runs the session\'s tools; an unknown session throws', async () => {
    const { registry, manager } = setup()
    const session = registry.createSession()
    session.register({ name: 'note', description: 'Session note', inputSchema: { type: 'object' }, handler: () => 'noted' })
    const tools = toAiSdkTools(manager, { sessionId: session.id })
    assert.deepEqual(Object.keys(tools).sort(), ['charge_card', 'get_weather', 'note'])
    assert.equal(await tools.note.execute({}, { toolCallId: 'call_note', messages: [] }), 'noted')
    assert.equal(manager.getExecutionsForToolCall('call_note')[0].sessionId, session.id)
    assert.equal('note' in toAiSdkTools(manager), false)
    assert.throws(() => toAiSdkTools(manager, { sessionId: 'nope' }), { code: 'SESSION_NOT_FOUND' })
    // As execute() and executeToolCalls() refuse it.
    assert.throws(() => toAiSdkTools(manager, { sessionId: 42 }), { code: 'INVALID_CONFIG', message: /^toAiSdkTools: sessionId must be a string/ })
  })

  test('a tool that needs approval goes through the AI SDK\'s own approval flow; toolhost records who approved', async () => {
    const registry = new ToolRegistry()
    const paid = []
    registry.register({
      name: 'transfer', description: 'Moves money', needsApproval: (args) => args.cents > 10_000,
      inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      handler: (args) => { paid.push(args.cents); return { done: true } },
    })
    const manager = new ToolExecutionManager(registry)
    const tools = toAiSdkTools(manager)
    assert.equal(typeof tools.transfer.needsApproval, 'function', 'the SDK asks through the tool\'s own rule')
    assert.equal(await tools.transfer.needsApproval({ cents: 5 }, { toolCallId: 'x', messages: [] }), false)
    assert.equal(await tools.transfer.needsApproval({ cents: 50_000 }, { toolCallId: 'x', messages: [] }), true)

    const model = new MockLanguageModelV3({
      doGenerate: [
        { content: [{ type: 'tool-call', toolCallId: 'call_big', toolName: 'transfer', input: JSON.stringify({ cents: 50_000 }) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
        { content: [{ type: 'text', text: 'Transferred.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
      ],
    })
    // Step 1: the SDK stops with an approval request instead of running the tool.
    const first = await generateText({ model, tools, prompt: 'Send 500 euros', stopWhen: stepCountIs(3) })
    const request = first.content.find((p) => p.type === 'tool-approval-request')
    assert.ok(request, `an approval request: ${JSON.stringify(first.content.map((p) => p.type))}`)
    assert.equal(request.toolCall.toolCallId, 'call_big')
    assert.deepEqual(paid, [], 'nothing ran before the approval')

    // The person approves; the SDK runs the tool and the model answers.
    const messages = [
      { role: 'user', content: 'Send 500 euros' },
      ...first.response.messages,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] },
    ]
    const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) })
    assert.equal(second.text, 'Transferred.')
    assert.deepEqual(paid, [50_000])
    const [record] = manager.getExecutionsForToolCall('call_big')
    assert.equal(record.status, 'succeeded')
    assert.equal(record.approval.decision, 'approved')
    assert.equal(record.approval.by, 'vercel-ai-sdk')
    assert.deepEqual(manager.pendingApprovals(), [], 'toolhost did not ask a second time')
  })

  /** A registry with `pay`, whose needsApproval is `policy`; a model that calls it once. */
  function policySetup(policy) {
    const registry = new ToolRegistry()
    const paid = []
    registry.register({
      name: 'pay', description: 'Pays', needsApproval: policy,
      inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      handler: ({ cents }) => { paid.push(cents); return { paid: cents } },
    })
    const manager = new ToolExecutionManager(registry)
    const model = new MockLanguageModelV3({
      doGenerate: [
        { content: [{ type: 'tool-call', toolCallId: 'call_pay', toolName: 'pay', input: JSON.stringify({ cents: 5 }) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
        { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
      ],
    })
    return { manager, model, paid }
  }

  test('a needsApproval function that throws asks a person through the SDK, as execute() does; the throw becomes a process warning', async () => {
    const { manager, model, paid } = policySetup(() => { throw new Error('policy broke') })
    const warned = new Promise((resolve) => process.once('warning', resolve))
    // The throw used to reject the whole generateText.
    const first = await generateText({ model, tools: toAiSdkTools(manager), prompt: 'Pay', stopWhen: stepCountIs(3) })
    const request = first.content.find((p) => p.type === 'tool-approval-request')
    assert.ok(request, `an approval request: ${JSON.stringify(first.content.map((p) => p.type))}`)
    const warning = await warned
    assert.equal(warning.name, 'ToolhostApprovalWarning')
    assert.match(warning.message, /needsApproval function of 'pay' threw: .*policy broke/)
    assert.deepEqual(paid, [], 'nothing ran before the approval')
  })

  test('a call its needsApproval function let through is not recorded as approved by anyone', async () => {
    const { manager, model, paid } = policySetup(({ cents }) => cents > 10_000)
    const audit = []
    manager.on('tool-invocation-recorded', (r) => audit.push(r))
    const result = await generateText({ model, tools: toAiSdkTools(manager), prompt: 'Pay', stopWhen: stepCountIs(3) })
    assert.equal(result.text, 'Done.')
    assert.deepEqual(paid, [5])
    // It used to say { decision: 'approved', by: 'vercel-ai-sdk' }: a person nobody asked.
    const [record] = manager.getExecutionsForToolCall('call_pay')
    assert.equal(record.approval, undefined)
    assert.equal(audit.length, 1)
    assert.equal(audit[0].approval, undefined)
  })

  test('needsApproval reads the SDK\'s experimental_context as ctx.context, as the handler does', async () => {
    const seen = []
    const { manager, model, paid } = policySetup(({ cents }, ctx) => {
      seen.push({ toolName: ctx.toolName, toolCallId: ctx.toolCallId, context: ctx.context })
      return cents > ctx.context.limit
    })
    const experimental_context = { limit: 1 }
    const first = await generateText({ model, tools: toAiSdkTools(manager), prompt: 'Pay', experimental_context, stopWhen: stepCountIs(3) })
    assert.deepEqual(seen, [{ toolName: 'pay', toolCallId: 'call_pay', context: experimental_context }])
    assert.equal(seen[0].context, experimental_context, 'the same object, not a copy')
    assert.ok(first.content.some((p) => p.type === 'tool-approval-request'), 'over the limit the context sets: asked')
    assert.deepEqual(paid, [])
  })

  test('execute without the SDK\'s approval of that call does not count as approved: toolhost asks', async () => {
    const registry = new ToolRegistry()
    const paid = []
    registry.register({ name: 'pay', description: 'Pays', needsApproval: true, handler: () => { paid.push(1); return 'paid' } })
    const manager = new ToolExecutionManager(registry)
    manager.on('tool-execution-approval-requested', () => {})
    const tools = toAiSdkTools(manager)
    // Messages where another call was approved, not this one.
    const messages = [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'other', toolName: 'pay', input: {} }, { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'other' }] },
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] },
    ]
    const running = tools.pay.execute({}, { toolCallId: 'call_direct', messages })
    await new Promise((resolve) => setTimeout(resolve, 10))
    assert.deepEqual(paid, [], 'it did not run unasked')
    const [pending] = manager.pendingApprovals()
    assert.equal(pending.toolCallId, 'call_direct')
    manager.deny(pending.approvalId, { reason: 'not asked' })
    await assert.rejects(running, { code: 'APPROVAL_DENIED' })
  })

  test('a needsApproval function returning a non-boolean fails closed: INVALID_APPROVAL_POLICY is a tool error the model reads', async () => {
    const { manager, model, paid } = policySetup(() => 'yes')
    // It used to reject the whole generateText.
    const result = await generateText({ model, tools: toAiSdkTools(manager), prompt: 'Pay', stopWhen: stepCountIs(3) })
    const error = result.steps[0].content.find((p) => p.type === 'tool-error')
    assert.ok(error, `a tool error: ${JSON.stringify(result.steps[0].content.map((p) => p.type))}`)
    assert.equal(error.error.code, 'INVALID_APPROVAL_POLICY')
    assert.match(error.error.message, /pay/)
    assert.equal(result.text, 'Done.', 'the model read the error and answered')
    assert.deepEqual(paid, [], 'the handler never ran')
    const [record] = manager.getExecutionsForToolCall('call_pay')
    assert.equal(record.status, 'failed')
    assert.equal(record.error.code, 'INVALID_APPROVAL_POLICY')
    assert.equal(record.approval, undefined, 'nobody approved it')
  })
})

describe('toAiSdkTools sends the model what executeToolCalls sends it (adversarial pass, stop 44)', () => {
  test('a tool\'s toModelOutput and maxOutputChars shape the tool result in the next prompt; the caller still gets the whole value', async () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'search', description: 'Searches the docs',
      handler: () => ({ hits: Array.from({ length: 500 }, (_, i) => ({ id: i, title: `Page ${i}` })) }),
      toModelOutput: ({ hits }) => `${hits.length} hits; first: ${hits.slice(0, 3).map((h) => h.title).join(', ')}`,
    })
    registry.register({ name: 'read_log', description: 'Reads the log', metadata: { maxOutputChars: 200 }, handler: () => 'GET /index.html 200\n'.repeat(1000) })
    registry.register({ name: 'plain', description: 'Plain', handler: () => ({ ok: true }) })
    const manager = new ToolExecutionManager(registry)
    const prompts = []
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        prompts.push(prompt)
        if (prompts.length > 1) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
        return {
          content: ['search', 'read_log', 'plain'].map((toolName, i) => ({ type: 'tool-call', toolCallId: `c${i}`, toolName, input: '{}' })),
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
        }
      },
    })
    const result = await generateText({ model, tools: toAiSdkTools(manager), prompt: 'go', stopWhen: stepCountIs(3) })
    const outputs = Object.fromEntries(prompts[1].find((m) => m.role === 'tool').content.map((p) => [p.toolName, p.output]))
    assert.deepEqual(outputs.search, { type: 'text', value: '500 hits; first: Page 0, Page 1, Page 2' })
    assert.equal(outputs.read_log.type, 'text')
    assert.ok(outputs.read_log.value.length < 600, `cut: ${outputs.read_log.value.length} chars`)
    const [log] = manager.getExecutionsForToolCall('c1')
    assert.match(outputs.read_log.value, new RegExp(`\\[toolhost: output cut to .*${log.id}`), 'the note names the execution that keeps it all')
    assert.deepEqual(outputs.plain, { type: 'json', value: { ok: true } }, 'a tool with neither is the SDK\'s own JSON')
    // The steps (the caller's view) keep the whole values.
    assert.equal(result.steps[0].toolResults.find((r) => r.toolName === 'search').output.hits.length, 500)
    assert.equal(result.steps[0].toolResults.find((r) => r.toolName === 'read_log').output.length, 20_000)
  })
})
