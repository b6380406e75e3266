// toolhost/ag-ui against a real AG-UI server over HTTP: the example's server
// (examples/lit-ag-ui/server, SSE written by @ag-ui/encoder) with its scripted model,
// on 127.0.0.1, and @ag-ui/client's HttpAgent talking to it. No network beyond the
// loopback. The same server and model run behind the Lit page in Chromium
// (scripts/lit-ag-ui-test.mjs).
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { HttpAgent } from '@ag-ui/client'
import { ToolMessageSchema } from '@ag-ui/core/schemas'
import { build } from 'esbuild'
import { ToolExecutionManager, ToolRegistry } from 'toolhost'
import { runWithTools } from 'toolhost/ag-ui'
import { startAgUiServer } from '../examples/lit-ag-ui/server/ag-ui-server.mjs'
import { scriptedModel } from '../examples/lit-ag-ui/server/model.mjs'
import { stream, textMessage, toolCalls, wait } from '../examples/lit-ag-ui/server/events.mjs'
import { registerTools } from './fixtures/ag-ui-tools.mjs'

const SEED_EVENTS = ['ag-ui-tool-status-changed', 'ag-ui-tool-retrying', 'ag-ui-tool-call-end', 'ag-ui-tool-call-error']
const FRONTEND = ['get_preferences', 'check_calendar', 'find_restaurants', 'book_table', 'compare_prices']

let server
before(async () => {
  server = await startAgUiServer(scriptedModel)
})
after(() => server.close())

function setup(managerOptions = {}) {
  const registry = new ToolRegistry()
  const log = registerTools(registry)
  const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 40, jitter: 'none' }, timeoutMs: 5000, ...managerOptions })
  return { registry, manager, log }
}

function agentFor(url = server.url) {
  return new HttpAgent({ url, initialMessages: [{ id: 'user_1', role: 'user', content: 'Book us a vegetarian dinner in Lisbon on Saturday' }] })
}

const script = (name) => ({ forwardedProps: { script: name } })
const runsOf = (agent, runs = server.runs) => runs.filter((r) => r.threadId === agent.threadId)
const toolMessages = (messages) => messages.filter((m) => m.role === 'tool')

/** Every seed event dispatched on `host`, in order. */
function recordSeedEvents(host) {
  const seen = []
  for (const type of SEED_EVENTS) host.addEventListener(type, (e) => seen.push({ type, detail: e.detail, bubbles: e.bubbles, composed: e.composed, custom: e instanceof CustomEvent }))
  return seen
}

/** Approves each call as it asks, with `edit(args)` as the arguments when given. */
function approveAll(manager, edit) {
  return manager.on('tool-execution-approval-requested', ({ approvalId, execution }) => {
    setTimeout(() => manager.approve(approvalId, edit ? { args: edit(execution.args), by: 'test' } : { by: 'test' }), 20)
  })
}

describe('runWithTools with HttpAgent over HTTP', () => {
  test('the weekend script: parallel calls, a backend call left alone, a retry, an approval, an answer from the tool messages', async () => {
    const { registry, manager, log } = setup()
    approveAll(manager, (args) => ({ ...args, people: 3 }))
    const agent = agentFor()
    const context = { userId: 'ana', tenant: 'lisbon' }
    const done = await runWithTools(agent, manager, { runParameters: script('weekend'), context })

    assert.deepEqual([done.rounds, done.outcome], [4, 'success'])
    const answer = done.newMessages.at(-1)
    assert.equal(answer.role, 'assistant')
    assert.equal(answer.content, 'Booked Ao 26 at 19:30 for 3 (confirmation BK-31930). Saturday in Lisbon: clear skies, 19 °C.')

    // Tools sent with every run: the registry's, as toAgUiTools() writes them.
    const runs = runsOf(agent)
    assert.equal(runs.length, 4)
    for (const run of runs) assert.deepEqual(run.tools, registry.toAgUiTools().map((t) => t.name))

    // One tool message per frontend call, each a valid AG-UI ToolMessage; the backend
    // call has the server's message alone, and never ran here.
    const replies = toolMessages(agent.messages)
    assert.deepEqual(replies.map((m) => m.toolCallId).sort(), ['call_book', 'call_calendar', 'call_find', 'call_prefs', 'call_weather'])
    for (const m of replies) ToolMessageSchema.parse(m)
    assert.deepEqual(manager.getExecutionsForToolCall('call_weather'), [])
    assert.equal(replies.find((m) => m.toolCallId === 'call_weather').content, JSON.stringify({ city: 'Lisbon', date: '2026-12-05', summary: 'clear skies', tempC: 19 }))
    assert.deepEqual(JSON.parse(replies.find((m) => m.toolCallId === 'call_prefs').content), { diet: 'vegetarian', budget: 'moderate' })
    // The tool messages reached the server in the runs after them.
    assert.deepEqual(runs[1].messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId).sort(), ['call_calendar', 'call_prefs', 'call_weather'])

    // The retry: attempt 1 failed with the 503, attempt 2 succeeded.
    const [find] = manager.getExecutionsForToolCall('call_find')
    assert.equal(find.status, 'succeeded')
    assert.equal(find.retry.attemptNumber, 2)
    assert.equal(find.retry.previousErrors[0].code, 'HTTP_503')
    assert.deepEqual(log.filter((l) => l.name === 'find_restaurants').map((l) => l.attempt), [1, 2])
    assert.equal(JSON.parse(runs[2].messages.find((m) => m.toolCallId === 'call_find').content).restaurants[0].id, 'r_ao26')

    // The approval, with edited arguments, recorded.
    const [book] = manager.getExecutionsForToolCall('call_book')
    assert.equal(book.approval.decision, 'approved')
    assert.equal(book.approval.edited, true)
    assert.equal(book.approval.by, 'test')
    assert.deepEqual(book.args, { restaurantId: 'r_ao26', time: '19:30', people: 3 })

    // Each execution is the model's call (toolCallId), with the request's context.
    for (const entry of log) {
      assert.equal(entry.context, context)
      assert.ok(entry.toolCallId.startsWith('call_'))
    }
    assert.deepEqual(done.newMessages.map((m) => m.id), agent.messages.slice(1).map((m) => m.id))
  })

  test('two frontend calls of one message run at the same time, each as soon as its TOOL_CALL_END arrives', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const running = new Set()
    let overlapped = false
    const started = {}
    const slow = (name) => async () => {
      started[name] = performance.now()
      running.add(name)
      if (running.size === 2) overlapped = true
      await wait(150)
      running.delete(name)
      return { name }
    }
    registry.register({ name: 'left', description: 'l', handler: slow('left') })
    registry.register({ name: 'right', description: 'r', handler: slow('right') })
    let streamEnd
    const model = async function* (input, { signal }) {
      if (input.messages.some((m) => m.role === 'tool')) return yield* stream(input, textMessage(`${input.runId}-t`, 'ok'), { signal })
      // After both calls end the server keeps streaming for 100 ms: the calls run meanwhile.
      yield* stream(input, [...toolCalls('m_1', [['c_left', 'left', {}], ['c_right', 'right', {}]], 3), { pause: 100 }], { signal })
      streamEnd = performance.now()
    }
    const local = await startAgUiServer(model)
    try {
      const done = await runWithTools(agentFor(local.url), manager)
      assert.equal(done.rounds, 2)
      assert.ok(overlapped, 'the two handlers never ran at the same time')
      assert.ok(started.left < streamEnd && started.right < streamEnd, 'a call waited for the end of the stream before it ran')
      assert.deepEqual(toolMessages(done.newMessages).map((m) => [m.toolCallId, JSON.parse(m.content).name]), [['c_left', 'left'], ['c_right', 'right']])
    } finally {
      await local.close()
    }
  })

  test('arguments streamed one UTF-16 unit per delta (surrogate pairs split) reach the handler intact, while the server still streams', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const received = []
    registry.register({
      name: 'note',
      description: 'Keeps a note',
      inputSchema: { type: 'object', properties: { text: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['text'] },
      handler: (args) => {
        received.push(args)
        return 'noted'
      },
    })
    const args = { text: 'Jantar às 19:30 🍷 — “Ao 26”, mesa para 2 ☕', tags: ['🇵🇹', 'a\\"b', '\u2028'] }
    const text = JSON.stringify(args)
    // The server holds the run open after the call's TOOL_CALL_END until the handler has
    // run: the call cannot have waited for RUN_FINISHED.
    const framed = async function* (input, { signal }) {
      if (input.messages.some((m) => m.role === 'tool')) return yield* stream(input, textMessage(`${input.runId}-t`, 'done'), { signal })
      yield { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }
      for (const event of toolCalls('m_1', [['c_note', 'note', text]], text.length)) yield event
      for (let i = 0; received.length === 0; i++) {
        if (i > 250) throw new Error('the frontend call did not run while the run was still streaming')
        await wait(20, signal)
      }
      yield { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId }
    }
    const local = await startAgUiServer(framed)
    try {
      const done = await runWithTools(agentFor(local.url), manager)
      assert.equal(done.rounds, 2)
      assert.ok(text.length > 60)
      assert.deepEqual(received, [args])
      assert.equal(toolMessages(done.newMessages)[0].content, 'noted')
      assert.equal(local.runs.length, 2)
    } finally {
      await local.close()
    }
  })

  test('a call that fails validation gets the error reply executeToolCalls writes; the model corrects it', async () => {
    const { manager, log } = setup()
    const agent = agentFor()
    const done = await runWithTools(agent, manager, { runParameters: script('correction') })
    assert.equal(done.rounds, 3)
    assert.equal(done.newMessages.at(-1).content, 'On 2026-12-05 you are free at 19:30 and 21:00.')
    const [refused] = manager.getExecutionsForToolCall('call_date_1')
    assert.equal(refused.status, 'failed')
    assert.equal(refused.error.code, 'INVALID_ARGUMENTS')
    assert.deepEqual(log.map((l) => [l.name, l.args]), [['check_calendar', { date: '2026-12-05' }]])

    const reply = toolMessages(done.newMessages).find((m) => m.toolCallId === 'call_date_1')
    assert.equal(reply.error, reply.content)
    assert.match(reply.content, /^Tool `check_calendar` was not run: its arguments do not match its input schema/)
    assert.match(reply.content, /`\/date`/)
    // The very text executeToolCalls writes for the same call.
    const events = toolCalls('m', [['call_date_1', 'check_calendar', { date: 'next Saturday' }]], 5)
    const { messages: [same] } = await manager.executeToolCalls(events, { provider: 'ag-ui' })
    assert.equal(reply.content, same.content)
    // The server read the error in run 2 and sent a valid date.
    assert.equal(runsOf(agent)[1].messages.find((m) => m.toolCallId === 'call_date_1').error, reply.content)
  })

  test('maxRounds: a model that never stops calling tools is stopped with MAX_ROUNDS_EXCEEDED, every call answered', async () => {
    const { manager, registry } = setup()
    const agent = agentFor()
    // A tool registered while the loop runs is sent from the next run on.
    manager.on('tool-execution-succeeded', () => {
      if (!registry.has('late_tool')) registry.register({ name: 'late_tool', description: 'registered during run 1', handler: () => 1 })
    })
    await assert.rejects(runWithTools(agent, manager, { maxRounds: 3, runParameters: script('runaway') }), (error) => {
      assert.equal(error.code, 'MAX_ROUNDS_EXCEEDED')
      assert.match(error.message, /after 3 runs \(maxRounds\)/)
      assert.equal(error.rounds, 3)
      assert.deepEqual(toolMessages(error.newMessages).map((m) => m.toolCallId), ['call_1', 'call_2', 'call_3'])
      return true
    })
    const runs = runsOf(agent)
    assert.equal(runs.length, 3)
    assert.equal(runs[0].tools.includes('late_tool'), false)
    assert.ok(runs[1].tools.includes('late_tool') && runs[2].tools.includes('late_tool'))
    // The default is 8.
    const again = agentFor()
    await assert.rejects(runWithTools(again, manager, { runParameters: script('runaway') }), { code: 'MAX_ROUNDS_EXCEEDED', rounds: 8 })
    assert.equal(runsOf(again).length, 8)
  })

  for (const how of ['options.signal', 'agent.abortRun()']) {
    test(`abort mid-run with ${how}: the stream and the running call stop, and every call has its tool message`, async () => {
      const { manager, log } = setup()
      const agent = agentFor()
      const controller = new AbortController()
      const onCancelled = []
      manager.on('tool-execution-cancelled', ({ toolName }) => onCancelled.push(toolName))
      manager.on('tool-execution-executing', ({ toolName }) => {
        if (toolName !== 'compare_prices') return
        setTimeout(() => (how === 'options.signal' ? controller.abort(new Error('the user pressed Stop')) : agent.abortRun()), 100)
      })
      const t0 = performance.now()
      await assert.rejects(runWithTools(agent, manager, { signal: controller.signal, runParameters: script('stop') }), (error) => {
        assert.equal(error.code, 'RUN_CANCELLED')
        assert.match(error.message, new RegExp(`cancelled by ${how.replace(/[().]/g, '\\$&')} during run 1`))
        assert.equal(error.rounds, 1)
        if (how === 'options.signal') assert.equal(error.cause.message, 'the user pressed Stop')
        return true
      })
      const ms = performance.now() - t0
      assert.ok(ms < 10_000, `it took ${ms} ms to stop`)

      // A tool message for each of the three calls, and no other.
      const replies = toolMessages(agent.messages)
      assert.deepEqual(replies.map((m) => m.toolCallId), ['call_prefs', 'call_prices', 'call_calendar'])
      assert.deepEqual(JSON.parse(replies[0].content), { diet: 'vegetarian', budget: 'moderate' })
      for (const m of replies.slice(1)) assert.match(m.error, /was cancelled \(category: cancelled, code: CANCELLED\)/)
      // The slow handler saw its signal abort; the call whose arguments stalled never ran.
      assert.equal(log.find((l) => l.name === 'compare_prices').signal.aborted, true)
      assert.deepEqual(log.map((l) => l.name), ['get_preferences', 'compare_prices'])
      assert.deepEqual(manager.getExecutionsForToolCall('call_calendar').map((r) => [r.status, r.error.code]), [['cancelled', 'CANCELLED']])
      assert.deepEqual(onCancelled.sort(), ['check_calendar', 'compare_prices'])
      assert.equal(manager.inFlight, 0)
      // The assistant message still holds the stalled call's partial arguments, now answered.
      const calls = agent.messages.find((m) => m.role === 'assistant').toolCalls.map((c) => c.id)
      assert.deepEqual(calls, ['call_prefs', 'call_prices', 'call_calendar'])
      // agent.abortRun is the agent's own again.
      assert.equal(Object.prototype.hasOwnProperty.call(agent, 'abortRun'), false)
    })
  }

  test('abort while a call waits for approval between runs: the approval is withdrawn and the call answered', async () => {
    const { manager } = setup()
    const agent = agentFor()
    const controller = new AbortController()
    manager.on('tool-execution-approval-requested', () => setTimeout(() => controller.abort(), 30))
    let answered = 0
    manager.on('tool-execution-succeeded', () => answered++)
    await assert.rejects(runWithTools(agent, manager, { signal: controller.signal, runParameters: script('weekend') }), { code: 'RUN_CANCELLED', rounds: 3 })
    assert.deepEqual(await manager.pendingApprovals(), [])
    const book = toolMessages(agent.messages).filter((m) => m.toolCallId === 'call_book')
    assert.equal(book.length, 1)
    assert.match(book[0].error, /cancelled/)
    assert.equal(answered, 3)
  })

  test("the seed's four events on options.host, in order, with their details", async () => {
    const { manager } = setup()
    approveAll(manager)
    const host = new EventTarget()
    const seen = recordSeedEvents(host)
    const agent = agentFor()
    await runWithTools(agent, manager, { host, runParameters: script('weekend') })
    await runWithTools(agentFor(), manager, { host, runParameters: script('correction') })

    for (const e of seen) assert.ok(e.bubbles && e.composed && e.custom, `${e.type} is not a bubbling, composed CustomEvent`)
    const of = (id) => seen.filter((e) => e.detail.toolCallId === id)
    const steps = (id) => of(id).map((e) => (e.type === 'ag-ui-tool-status-changed' ? e.detail.status : e.type.slice('ag-ui-tool-'.length)))
    assert.deepEqual(steps('call_prefs'), ['pending', 'validating', 'executing', 'succeeded', 'call-end'])
    assert.deepEqual(steps('call_calendar'), ['pending', 'validating', 'executing', 'succeeded', 'call-end'])
    assert.deepEqual(steps('call_find'), ['pending', 'validating', 'executing', 'retrying', 'succeeded', 'call-end'])
    assert.deepEqual(steps('call_book'), ['pending', 'validating', 'awaiting-approval', 'executing', 'succeeded', 'call-end'])
    assert.deepEqual(steps('call_date_1'), ['pending', 'validating', 'failed', 'call-error'])
    assert.deepEqual(steps('call_date_2'), ['pending', 'validating', 'executing', 'succeeded', 'call-end'])
    assert.deepEqual(steps('call_weather'), [], 'a backend call has no events')
    // A run's calls come before the next run's.
    const index = (id, step) => seen.findIndex((e) => e.detail.toolCallId === id && (e.detail.status === step || e.type === `ag-ui-tool-${step}`))
    assert.ok(index('call_calendar', 'call-end') < index('call_find', 'pending'))
    assert.ok(index('call_find', 'call-end') < index('call_book', 'pending'))

    // Details.
    const [record] = manager.getExecutionsForToolCall('call_find')
    for (const e of of('call_find')) {
      assert.equal(e.detail.toolCallName, 'find_restaurants')
      if (e.type !== 'ag-ui-tool-retrying') assert.equal(e.detail.execution.id, record.id)
      if (e.type === 'ag-ui-tool-status-changed') assert.equal(e.detail.execution.status, e.detail.status)
    }
    const retrying = of('call_find').find((e) => e.type === 'ag-ui-tool-retrying').detail
    assert.deepEqual({ ...retrying, error: undefined }, { toolCallId: 'call_find', toolCallName: 'find_restaurants', attemptNumber: 2, maxAttempts: 3, error: undefined, delayMs: 40 })
    assert.deepEqual([retrying.error.category, retrying.error.code], ['transient', 'HTTP_503'])
    const end = of('call_book').at(-1).detail
    assert.deepEqual(Object.keys(end).sort(), ['execution', 'result', 'toolCallArgs', 'toolCallId', 'toolCallName'])
    assert.deepEqual(end.toolCallArgs, { restaurantId: 'r_ao26', time: '19:30', people: 2 })
    assert.equal(end.result.confirmation, 'BK-21930')
    assert.equal(end.execution.status, 'succeeded')
    assert.equal(end.execution.approval.decision, 'approved')
    const error = of('call_date_1').at(-1).detail
    assert.deepEqual(Object.keys(error).sort(), ['error', 'execution', 'toolCallId', 'toolCallName'])
    assert.equal(error.error.code, 'INVALID_ARGUMENTS')
    assert.equal(error.error.validationErrors[0].path, '/date')
    assert.equal(error.execution.status, 'failed')
  })

  test('a run that fails (RUN_ERROR) rejects with AGENT_RUN_FAILED; its calls still get their tool messages', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register({ name: 'ping', description: 'p', handler: () => 'pong' })
    const model = async function* (input) {
      yield { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }
      yield* toolCalls('m_1', [['c_ping', 'ping', {}]])
      throw new Error('the model provider answered 500')
    }
    const local = await startAgUiServer(model)
    const agent = agentFor(local.url)
    try {
      await assert.rejects(runWithTools(agent, manager), (error) => {
        assert.equal(error.code, 'AGENT_RUN_FAILED')
        assert.match(error.message, /run 1 of the agent failed: the model provider answered 500/)
        assert.equal(error.cause.message, 'the model provider answered 500')
        return true
      })
      assert.deepEqual(toolMessages(agent.messages).map((m) => [m.toolCallId, m.content]), [['c_ping', 'pong']])
    } finally {
      await local.close()
    }
    // A server that cannot be reached: runAgent itself rejects.
    const silent = console.error
    console.error = () => {} // @ag-ui/client logs the failed fetch
    try {
      await assert.rejects(runWithTools(agentFor(local.url), manager), (error) => error.code === 'AGENT_RUN_FAILED' && error.cause instanceof Error && error.rounds === 1)
    } finally {
      console.error = silent
    }
  })

  test('a run that ends on an interrupt is not run again: runWithTools resolves with outcome interrupt', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register({ name: 'ping', description: 'p', handler: () => 'pong' })
    const model = async function* (input) {
      yield { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }
      yield* toolCalls('m_1', [['c_ping', 'ping', {}]])
      yield { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, outcome: { type: 'interrupt', interrupts: [{ id: 'int_1', reason: 'confirm_order' }] } }
    }
    const local = await startAgUiServer(model)
    try {
      const agent = agentFor(local.url)
      const done = await runWithTools(agent, manager)
      assert.deepEqual([done.rounds, done.outcome], [1, 'interrupt'])
      assert.deepEqual(toolMessages(done.newMessages).map((m) => m.content), ['pong'])
      assert.deepEqual(agent.pendingInterrupts.map((i) => i.id), ['int_1'])
      assert.equal(local.runs.length, 1)
    } finally {
      await local.close()
    }
  })

  test("options.session sends the session's tools and runs its calls in the session", async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register({ name: 'global_tool', description: 'g', handler: () => 'global' })
    const session = registry.createSession()
    session.register({ name: 'cart_total', description: 'The cart of this session', handler: (args, ctx) => ({ total: 42, session: ctx.sessionId }) })
    const model = async function* (input, { signal }) {
      if (input.messages.some((m) => m.role === 'tool')) return yield* stream(input, textMessage(`${input.runId}-t`, 'ok'), { signal })
      yield* stream(input, toolCalls('m_1', [['c_cart', 'cart_total', {}]]), { signal })
    }
    const local = await startAgUiServer(model)
    try {
      const inSession = agentFor(local.url)
      const done = await runWithTools(inSession, manager, { session })
      assert.deepEqual(JSON.parse(toolMessages(done.newMessages)[0].content), { total: 42, session: session.id })
      assert.deepEqual(local.runs[0].tools, ['cart_total', 'global_tool'])
      assert.equal(manager.getExecutionsForToolCall('c_cart')[0].sessionId, session.id)
      // A session id works too.
      const byId = await runWithTools(agentFor(local.url), manager, { session: session.id })
      assert.equal(byId.rounds, 2)
      // Without the session, cart_total is not one of toolhost's tools: the call is left alone.
      const outside = agentFor(local.url)
      const left = await runWithTools(outside, manager)
      assert.equal(left.rounds, 1)
      assert.deepEqual(toolMessages(outside.messages), [])
      assert.deepEqual(local.runs.at(-1).tools, ['global_tool'])
    } finally {
      await local.close()
    }
  })

  test('runParameters are sent with every run: own tools after toolhost\'s (never run by it), AG-UI context, forwardedProps', async () => {
    const { manager, registry } = setup()
    const agent = agentFor()
    const own = { name: 'show_map', description: 'Answered by the page itself', parameters: { type: 'object', properties: {} } }
    let inputs = []
    const local = await startAgUiServer(scriptedModel, { onInput: (input) => inputs.push(input) })
    try {
      await runWithTools(agentFor(local.url), manager, { runParameters: { ...script('correction'), tools: [own], context: [{ description: 'locale', value: 'pt-PT' }] } })
      assert.equal(inputs.length, 3)
      for (const input of inputs) {
        assert.deepEqual(input.tools, [...registry.toAgUiTools(), own])
        assert.deepEqual(input.context, [{ description: 'locale', value: 'pt-PT' }])
        assert.equal(input.forwardedProps.script, 'correction')
      }
      await assert.rejects(runWithTools(agent, manager, { runParameters: { tools: [{ ...own, name: 'book_table' }] } }), { code: 'INVALID_CONFIG', message: /runParameters.tools has a tool named 'book_table', which toolhost already sends/ })
    } finally {
      await local.close()
    }
  })

  test('mistakes are refused with a code and a did-you-mean, before anything runs', async () => {
    const { manager } = setup()
    const agent = agentFor()
    const before = server.runs.length
    await assert.rejects(runWithTools(agent, manager, { maxRound: 3 }), { code: 'INVALID_CONFIG', message: /unknown option `maxRound` in runWithTools options; did you mean `maxRounds`\?/ })
    await assert.rejects(runWithTools(agent, manager, { runParameters: { forwardProps: {} } }), { code: 'INVALID_CONFIG', message: /did you mean `forwardedProps`\?/ })
    await assert.rejects(runWithTools(agent, manager, { runParameters: { runId: 'r1' } }), { code: 'INVALID_CONFIG', message: /unknown option `runId`/ })
    for (const maxRounds of [0, 1.5, -1, '3', Infinity]) await assert.rejects(runWithTools(agent, manager, { maxRounds }), { code: 'INVALID_CONFIG', message: /maxRounds must be a whole number/ })
    await assert.rejects(runWithTools(agent, manager, { signal: 'stop' }), { code: 'INVALID_CONFIG', message: /signal must be an AbortSignal/ })
    await assert.rejects(runWithTools(agent, manager, { host: {} }), { code: 'INVALID_CONFIG', message: /host must be an element or another EventTarget/ })
    await assert.rejects(runWithTools(agent, manager, { session: 'nope' }), { code: 'SESSION_NOT_FOUND' })
    await assert.rejects(runWithTools(agent, manager, { session: new ToolRegistry().createSession() }), { code: 'INVALID_CONFIG', message: /another registry/ })
    await assert.rejects(runWithTools({ url: 'http://x' }, manager), { code: 'INVALID_ARGUMENTS', message: /takes an @ag-ui\/client agent/ })
    await assert.rejects(runWithTools(agent, manager.registry), { code: 'INVALID_ARGUMENTS', message: /takes a ToolExecutionManager/ })
    const aborted = AbortSignal.abort()
    await assert.rejects(runWithTools(agent, manager, { signal: aborted }), { code: 'RUN_CANCELLED', rounds: 0 })
    assert.equal(server.runs.length, before, 'a refused call ran the agent')
    // One runWithTools at a time per agent.
    const first = runWithTools(agent, manager, { runParameters: script('correction') })
    await assert.rejects(runWithTools(agent, manager), { code: 'INVALID_CALL', message: /already running/ })
    assert.equal((await first).rounds, 3)
  })
})

describe('toolhost/ag-ui stays optional', () => {
  test('neither entry of toolhost reaches @ag-ui/* or lit, and toolhost/ag-ui does not import @ag-ui/client', async () => {
    // Every module an entry reaches (packages left unbundled), and every package it imports.
    const graphOf = async (entry, conditions) => {
      const { metafile } = await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, format: 'esm', platform: 'node', packages: 'external', external: ['*.node', '*.wasm'], conditions, logLevel: 'silent' })
      const modules = Object.keys(metafile.inputs)
      const packages = new Set(Object.values(metafile.inputs).flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path)))
      return { modules, packages: [...packages] }
    }
    const optional = (p) => /^(@ag-ui\/|lit$|lit\/|@lit\/|rxjs)/.test(p)
    for (const [entry, conditions] of [['js/browser.mjs', ['browser']], ['js/node.mjs', []], ['js/ag-ui.mjs', ['browser']]]) {
      const { modules, packages } = await graphOf(entry, conditions)
      assert.ok(modules.includes('js/tool-calls.mjs'), `${entry}: ${modules.join(', ')}`)
      assert.deepEqual(packages.filter(optional), [], `${entry} imports an optional peer`)
    }
    // toolhost/lit needs lit alone, and none of the engine.
    const lit = await graphOf('js/lit.mjs', ['browser'])
    assert.deepEqual([...new Set(lit.packages.map((p) => p.split('/')[0]))], ['lit'], `toolhost/lit imports ${lit.packages.join(', ')}`)
    assert.deepEqual(lit.modules.sort(), ['js/activity-element.mjs', 'js/approvals-element.mjs', 'js/element-theme.mjs', 'js/lit.mjs', 'js/manager-events.mjs'])
  })
})
