// toolhost/ag-ui with agents that need no server, so it runs in Node and in Chromium
// (the wasm engine) alike: an AbstractAgent of our own whose run() streams scripted
// events (abortRun() does nothing there, as in AbstractAgent), and HttpAgent with a
// fetch that answers from memory with @ag-ui/encoder's SSE. The tests against a real
// server over HTTP are in ag-ui-run.test.mjs.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { AbstractAgent, HttpAgent } from '@ag-ui/client'
import { EventEncoder } from '@ag-ui/encoder'
import { Observable } from 'rxjs'
import { ToolExecutionManager, ToolRegistry } from 'toolhost'
import { runWithTools } from 'toolhost/ag-ui'
import { pause, textMessage, toolCalls, toolResult } from '../examples/lit-ag-ui/server/events.mjs'

/** An agent whose every run plays `turn(input)` (events, `{ pause }` entries waited out). */
class ScriptedAgent extends AbstractAgent {
  /** `finish(input)`: more fields of the run's RUN_FINISHED (its `outcome`). */
  constructor(turn, finish) {
    super({ initialMessages: [{ id: 'user_1', role: 'user', content: 'hello' }] })
    this.turn = turn
    this.finish = finish
    this.inputs = []
    this.unsubscribed = 0
  }

  run(input) {
    this.inputs.push(input)
    const finished = { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, ...this.finish?.(input) }
    const events = [{ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }, ...this.turn(input), finished]
    return new Observable((subscriber) => {
      let stopped = false
      ;(async () => {
        for (const event of events) {
          await new Promise((resolve) => setTimeout(resolve, 'pause' in event ? event.pause : 2))
          if (stopped) return
          if (!('pause' in event)) subscriber.next(event)
        }
        subscriber.complete()
      })()
      return () => {
        stopped = true
        this.unsubscribed++
      }
    })
  }
}

const answered = (input) => input.messages.some((m) => m.role === 'tool')

function setup() {
  const registry = new ToolRegistry()
  const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 20, jitter: 'none' } })
  const seen = []
  let flaky = 0
  registry.register({
    name: 'lookup',
    description: 'Looks a word up',
    inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
    handler: async ({ word }, ctx) => {
      seen.push({ word, context: ctx.context })
      if (word === 'flaky' && flaky++ === 0) throw Object.assign(new Error('503'), { category: 'transient', retryable: true, code: 'HTTP_503' })
      if (word === 'slow') await new Promise((resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }))
      return { word, meaning: `${word}!` }
    },
  })
  return { registry, manager, seen }
}

describe('runWithTools with an AbstractAgent of our own', () => {
  test('frontend calls run, the backend call is left alone, one tool message each, and the seed events reach the host', async () => {
    const { manager, seen } = setup()
    const agent = new ScriptedAgent((input) => answered(input)
      ? textMessage(`${input.runId}-t`, 'done')
      : [
          ...toolCalls('m_1', [['c_a', 'lookup', { word: 'alpha' }], ['c_b', 'lookup', { word: 'flaky' }], ['c_server', 'search_web', { q: 'x' }]], 5),
          toolResult('r_server', 'c_server', 'from the server'),
        ])
    const host = new EventTarget()
    const events = []
    for (const type of ['ag-ui-tool-status-changed', 'ag-ui-tool-retrying', 'ag-ui-tool-call-end', 'ag-ui-tool-call-error']) {
      host.addEventListener(type, (e) => events.push(`${e.detail.toolCallId} ${e.detail.status ?? type.slice(11)}`))
    }
    const context = { requestId: 'r-1' }
    const done = await runWithTools(agent, manager, { host, context })
    assert.deepEqual([done.rounds, done.outcome, done.newMessages.at(-1).content], [2, 'success', 'done'])
    assert.deepEqual(agent.inputs.map((i) => i.tools.map((t) => t.name)), [['lookup'], ['lookup']])
    const tools = agent.messages.filter((m) => m.role === 'tool')
    assert.deepEqual(tools.map((m) => [m.toolCallId, m.content]), [
      ['c_server', 'from the server'],
      ['c_a', '{"word":"alpha","meaning":"alpha!"}'],
      ['c_b', '{"word":"flaky","meaning":"flaky!"}'],
    ])
    assert.deepEqual(seen.map((s) => [s.word, s.context]), [['alpha', context], ['flaky', context], ['flaky', context]])
    assert.deepEqual(events.filter((e) => e.startsWith('c_b')), ['c_b pending', 'c_b validating', 'c_b executing', 'c_b retrying', 'c_b succeeded', 'c_b call-end'])
    assert.deepEqual(events.filter((e) => e.startsWith('c_a')), ['c_a pending', 'c_a validating', 'c_a executing', 'c_a succeeded', 'c_a call-end'])
    assert.equal(events.filter((e) => e.startsWith('c_server')).length, 0)
  })

  for (const how of ['options.signal', 'agent.abortRun()']) {
    test(`${how} stops a run of an agent whose abortRun() does nothing: the stream is detached, every call answered`, async () => {
      const { manager } = setup()
      const controller = new AbortController()
      const agent = new ScriptedAgent(() => [
        ...toolCalls('m_1', [['c_slow', 'lookup', { word: 'slow' }]], 2),
        ...toolCalls('m_1', [['c_stalled', 'lookup', { word: 'never' }]], 2).slice(0, 2),
        pause(60_000),
      ])
      manager.on('tool-execution-executing', () => setTimeout(() => (how === 'options.signal' ? controller.abort() : agent.abortRun()), 30))
      const t0 = Date.now()
      await assert.rejects(runWithTools(agent, manager, { signal: controller.signal }), { code: 'RUN_CANCELLED', rounds: 1 })
      assert.ok(Date.now() - t0 < 5000, 'it waited for the stream to end')
      assert.equal(agent.unsubscribed, 1)
      const tools = agent.messages.filter((m) => m.role === 'tool')
      assert.deepEqual(tools.map((m) => m.toolCallId), ['c_slow', 'c_stalled'])
      for (const m of tools) assert.match(m.error, /code: CANCELLED/)
      assert.equal(manager.inFlight, 0)
      assert.equal(agent.isRunning, false)
    })
  }

  test('a frontend call the server answers itself (TOOL_CALL_RESULT) keeps that answer only; it still runs', async () => {
    const { manager, seen } = setup()
    const agent = new ScriptedAgent((input) => answered(input) && input.messages.some((m) => m.toolCallId === 'c_b')
      ? textMessage(`${input.runId}-t`, 'done')
      : [...toolCalls('m_1', [['c_a', 'lookup', { word: 'alpha' }], ['c_b', 'lookup', { word: 'beta' }]], 2), toolResult('r_a', 'c_a', 'the server knew')])
    const done = await runWithTools(agent, manager)
    assert.deepEqual(agent.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]), [['c_a', 'the server knew'], ['c_b', '{"word":"beta","meaning":"beta!"}']])
    assert.deepEqual(seen.map((s) => s.word), ['alpha', 'beta'], 'both ran')
    assert.equal(done.rounds, 2, 'run again for the call toolhost answered')
    assert.equal(manager.getExecutionsForToolCall('c_a')[0].status, 'succeeded')

    // Every frontend call answered by the server: nothing for the model from toolhost, no second run.
    const { manager: other } = setup()
    const solo = new ScriptedAgent(() => [...toolCalls('m_2', [['c_x', 'lookup', { word: 'x' }]], 2), toolResult('r_x', 'c_x', 'done already')])
    const alone = await runWithTools(solo, other)
    assert.equal(alone.rounds, 1)
    assert.deepEqual(solo.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]), [['c_x', 'done already']])
  })

  test('a pending call to a tool nobody sent gets the unknown-tool reply, listing every tool sent; backend and caller\'s own calls are left alone', async () => {
    const { manager, seen } = setup()
    const own = { name: 'ask_user', description: 'the caller answers it', parameters: { type: 'object', properties: {} } }
    const agent = new ScriptedAgent(
      (input) => answered(input)
        ? textMessage(`${input.runId}-t`, 'corrected')
        : toolCalls('m_1', [['c_made_up', 'lookup_word', { word: 'alpha' }], ['c_ok', 'lookup', { word: 'beta' }], ['c_backend', 'search_web', { q: 'x' }], ['c_own', 'ask_user', {}]], 2),
      (input) => (answered(input) ? {} : { outcome: { type: 'success', pendingToolCallIds: ['c_made_up', 'c_ok', 'c_own'] } }),
    )
    const done = await runWithTools(agent, manager, { runParameters: { tools: [own] } })
    assert.equal(done.rounds, 2)
    const replies = agent.messages.filter((m) => m.role === 'tool')
    assert.deepEqual(replies.map((m) => m.toolCallId), ['c_made_up', 'c_ok'], 'in the order the calls started; none for the backend call or the caller\'s own')
    assert.equal(replies[0].error, 'There is no tool named `lookup_word`. Available tools: `lookup`, `ask_user`. Call one of the available tools by its exact name.', 'every tool the run sent, the caller\'s too')
    assert.equal(replies[1].content, '{"word":"beta","meaning":"beta!"}')
    assert.deepEqual(seen.map((s) => s.word), ['beta'])
    assert.deepEqual(manager.getExecutionsForToolCall('c_made_up').map((r) => [r.status, r.error.code]), [['failed', 'TOOL_NOT_FOUND']], 'recorded as any call')
  })

  test('a failed validation is answered with the engine\'s text, and a call with arguments that are not JSON too', async () => {
    const { manager, seen } = setup()
    const agent = new ScriptedAgent((input) => answered(input)
      ? textMessage(`${input.runId}-t`, 'ok')
      : toolCalls('m_1', [['c_bad', 'lookup', { word: 7 }], ['c_torn', 'lookup', '{"word": "x"']], 3))
    await runWithTools(agent, manager)
    const [bad, torn] = agent.messages.filter((m) => m.role === 'tool')
    assert.match(bad.error, /^Tool `lookup` was not run: its arguments do not match its input schema/)
    assert.match(torn.error, /^Tool `lookup` was not run: its arguments are not valid JSON/)
    assert.equal(seen.length, 0)
  })
})

describe('runWithTools with HttpAgent and a fetch answered from memory', () => {
  test('the SSE stream @ag-ui/encoder writes is read, and the tools go out in the request body', async () => {
    const { manager } = setup()
    const encoder = new EventEncoder()
    const bodies = []
    const fetch = async (url, init) => {
      const input = JSON.parse(init.body)
      bodies.push(input)
      const events = [
        { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
        ...(answered(input) ? textMessage('t_1', 'it means alpha!') : toolCalls('m_1', [['c_a', 'lookup', { word: 'alpha' }]], 4)),
        { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId },
      ]
      const bytes = new TextEncoder().encode(events.map((e) => encoder.encodeSSE(e)).join(''))
      return new Response(new ReadableStream({ start(c) { c.enqueue(bytes); c.close() } }), { headers: { 'Content-Type': 'text/event-stream' } })
    }
    const agent = new HttpAgent({ url: 'https://agent.invalid/run', fetch, initialMessages: [{ id: 'u', role: 'user', content: 'alpha?' }] })
    const done = await runWithTools(agent, manager)
    assert.equal(done.newMessages.at(-1).content, 'it means alpha!')
    assert.deepEqual(bodies.map((b) => b.tools.map((t) => t.name)), [['lookup'], ['lookup']])
    assert.deepEqual(bodies[1].messages.filter((m) => m.role === 'tool').map((m) => m.content), ['{"word":"alpha","meaning":"alpha!"}'])
  })
})

describe('runWithTools: sessions, reused ids, malformed options, concurrent runs', () => {
  test('a session destroyed during a run ends runWithTools with SESSION_NOT_FOUND before the next run, every call answered', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const session = registry.createSession({ isolated: true })
    session.register({
      name: 'lookup',
      description: 'Looks a word up',
      inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
      handler: async ({ word }) => ({ word }),
    })
    // The run calls lookup; the session is destroyed while it streams (another tab
    // logged out), so the next run would go with no tools and leave its calls unanswered.
    const agent = new ScriptedAgent((input) => [...toolCalls(`m_${input.runId}`, [[`c_${agent.inputs.length}`, 'lookup', { word: 'x' }]], 2), pause(20)])
    manager.on('tool-execution-succeeded', () => session.destroy())
    await assert.rejects(runWithTools(agent, manager, { session }), (e) => {
      assert.equal(e.code, 'SESSION_NOT_FOUND')
      assert.match(e.message, /session '.*' was destroyed after run 1/)
      assert.equal(e.rounds, 1)
      assert.deepEqual(e.newMessages.map((m) => m.role), ['assistant', 'tool'])
      return true
    })
    assert.deepEqual(agent.inputs.map((i) => i.tools.map((t) => t.name)), [['lookup']], 'no run without the tools')
    assert.deepEqual(agent.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]), [['c_1', '{"word":"x"}']])
    assert.equal(agent.isRunning, false)
  })

  test('malformed runParameters and options are refused up front with INVALID_CONFIG naming the option, nothing sent', async () => {
    const { manager } = setup()
    let requests = 0
    const fetch = async () => {
      requests++
      throw new Error('nothing should be sent')
    }
    const agent = new HttpAgent({ url: 'https://agent.invalid/run', fetch, initialMessages: [{ id: 'u', role: 'user', content: 'hi' }] })
    const cases = [
      [[], /options must be an object, got an array/],
      [{ runParameters: [] }, /runParameters must be an object \{ tools, context, forwardedProps \}, got an array/],
      [{ runParameters: { tools: [null] } }, /runParameters\.tools\[0\] must be an AG-UI tool/],
      [{ runParameters: { tools: [{}] } }, /runParameters\.tools\[0\]\.name must be a non-empty string, got undefined/],
      [{ runParameters: { tools: [{ name: 5, description: 'x' }] } }, /runParameters\.tools\[0\]\.name must be a non-empty string, got a number/],
      [{ runParameters: { tools: [{ name: 'a' }] } }, /runParameters\.tools\[0\]\.description \(of 'a'\) must be a string/],
      [{ runParameters: { tools: [{ name: 'a', description: '', parameters: null }] } }, /runParameters\.tools\[0\]\.parameters \(of 'a'\) must be a JSON Schema object, got null/],
      [{ runParameters: { tools: [{ name: 'a', description: '' }, { name: 'a', description: '' }] } }, /has two tools named 'a'/],
      [{ runParameters: { context: 'x' } }, /runParameters\.context must be an array of AG-UI context entries/],
      [{ runParameters: { context: [5] } }, /runParameters\.context\[0\] must be \{ description, value \}, both strings, got a number/],
      [{ runParameters: { context: [{ description: 'd' }] } }, /runParameters\.context\[0\] must be \{ description, value \}, both strings, got \{ description \}/],
      [{ runParameters: { forwardedProps: 5 } }, /runParameters\.forwardedProps must be an object \(props for the server\), got a number/],
      [{ runParameters: { forwardedProps: null } }, /runParameters\.forwardedProps must be an object/],
    ]
    for (const [options, message] of cases) {
      await assert.rejects(runWithTools(agent, manager, options), (e) => {
        assert.equal(e.code, 'INVALID_CONFIG', `${JSON.stringify(options)}: ${e.message}`)
        assert.match(e.message, message)
        return true
      })
    }
    assert.equal(requests, 0, 'no run started')
    assert.equal(agent.isRunning, false)
  })

  test('a tool call id started twice in one run runs once and gets one tool message; the second start is ignored with a warning', async () => {
    const { manager, seen } = setup()
    const agent = new ScriptedAgent((input) => answered(input)
      ? textMessage(`${input.runId}-t`, 'done')
      : [...toolCalls('m_1', [['c1', 'lookup', { word: 'a' }]], 2), ...toolCalls('m_1', [['c1', 'lookup', { word: 'b' }]], 2)])
    const host = new EventTarget()
    const ends = []
    host.addEventListener('ag-ui-tool-call-end', (e) => ends.push(e.detail.toolCallId))
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    globalThis.process?.on?.('warning', onWarning)
    try {
      const done = await runWithTools(agent, manager, { host })
      assert.equal(done.rounds, 2)
    } finally {
      globalThis.process?.off?.('warning', onWarning)
    }
    assert.deepEqual(seen.map((s) => s.word), ['a'], 'the handler ran once, with the first call\'s arguments')
    assert.deepEqual(agent.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]), [['c1', '{"word":"a","meaning":"a!"}']])
    assert.deepEqual(agent.inputs[1].messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId), ['c1'], 'the next run sends one tool message for c1')
    assert.deepEqual(ends, ['c1'])
    assert.equal(manager.getExecutionsForToolCall('c1').length, 1)
    if (globalThis.process?.emitWarning !== undefined) {
      assert.deepEqual(warnings.map((w) => [w.name, w.message]), [['ToolhostAgUiWarning', "runWithTools: run 1 started tool call 'c1' (lookup) a second time; a tool call id is answered once, so the second was not run and its arguments were ignored"]])
    }
  })

  test('two runs on one manager, each calling call_1: each host hears its own execution only', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register({
      name: 'lookup',
      description: 'Looks a word up',
      inputSchema: { type: 'object', properties: { w: { type: 'string' }, pad: { type: 'string' } }, required: ['w'] },
      handler: async ({ w }) => {
        await new Promise((resolve) => setTimeout(resolve, w === 'A' ? 30 : 60))
        return { w }
      },
    })
    // Tool call ids are per conversation: both servers call their tool call_1. A's
    // arguments are large (parsed apart), so its execution starts after B's.
    const agentOf = (args) => new ScriptedAgent((input) => answered(input) ? textMessage(`${input.runId}-t`, 'done') : toolCalls('m_1', [['call_1', 'lookup', args]], 2))
    const a = agentOf({ w: 'A', pad: 'x'.repeat(200_000) })
    const b = agentOf({ w: 'B' })
    const heard = { A: [], B: [] }
    const hostOf = (name) => {
      const host = new EventTarget()
      for (const type of ['ag-ui-tool-status-changed', 'ag-ui-tool-call-end', 'ag-ui-tool-call-error']) {
        host.addEventListener(type, (e) => heard[name].push(`${e.detail.status ?? type.slice(11)} ${e.detail.execution?.args.w} ${e.detail.execution?.id}`))
      }
      return host
    }
    await Promise.all([runWithTools(a, manager, { host: hostOf('A') }), runWithTools(b, manager, { host: hostOf('B') })])
    for (const [name, agent] of [['A', a], ['B', b]]) {
      const [execution] = manager.getExecutionsForToolCall('call_1').filter((r) => r.args.w === name)
      assert.deepEqual(heard[name], ['pending', 'validating', 'executing', 'succeeded', 'call-end'].map((step) => `${step} ${name} ${execution.id}`), `host ${name}`)
      assert.deepEqual(agent.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content).w), [name])
    }
  })
})
