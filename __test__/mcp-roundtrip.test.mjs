// The promotion round trip of issue 14 (the LATER/ALTAR promise): tools registered in
// process A and served by serveHttp, mounted in process B (this one), give in B the
// same declarations in every provider export, the same results for the same calls, and
// the same validation error text for bad arguments, for every provider. Process A is
// scripts/mcp-fixtures/roundtrip-server.mjs, which also reports what it sees locally.
// Node-only (a child process, an HTTP server).
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { exportsOf, outcomeOf } from '../scripts/mcp-fixtures/compare.mjs'

const A = fileURLToPath(new URL('../scripts/mcp-fixtures/roundtrip-server.mjs', import.meta.url))
const T = { timeout: 30_000 }

let child
let url
let nextId = 1
const waiting = new Map()
let local
let mount
let manager

/** Asks process A; resolves its answer. */
function ask(message) {
  const id = nextId++
  return new Promise((resolve) => {
    waiting.set(id, resolve)
    child.send({ ...message, id })
  })
}

before(async () => {
  child = fork(A, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  url = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.ready))
    child.once('exit', (code) => reject(new Error(`process A exited (${code})`)))
  })
  child.on('message', (m) => {
    if (m.id !== undefined) {
      waiting.get(m.id)(m.value)
      waiting.delete(m.id)
    }
  })
  local = new ToolRegistry()
  mount = await local.mountMcp({ url })
  manager = new ToolExecutionManager(local, { retry: { maxAttempts: 1 } })
}, T)

after(async () => {
  await mount?.unmount()
  if (child?.connected) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.send({ type: 'stop' })
    await exited
  }
})

describe('promotion round trip: registered in process A, served over HTTP, mounted in process B', () => {
  test('every provider export gives the same declarations (Gemini FunctionDeclarations keep their shape)', T, async () => {
    const there = await ask({ type: 'exports' })
    const here = exportsOf(local)
    assert.deepEqual(Object.keys(here), Object.keys(there))
    for (const key of Object.keys(there)) assert.deepEqual(here[key], there[key], key)
    // The parts of the comparison that matter most, spelled out.
    const gemini = here['toGeminiTools()'].value.functionDeclarations.find((d) => d.name === 'forecast')
    assert.deepEqual(gemini.parameters.properties.units, { type: 'STRING', enum: ['metric', 'imperial'], nullable: true })
    assert.equal(here['toMcpTools()'].value.length, 10)
    assert.deepEqual(local.getByCategory('math').map((d) => d.name), ['add'])
  })

  test('the same calls give the same results and the same failures', T, async () => {
    const calls = [
      ['add', { a: 2, b: 40 }],
      ['add', { a: 0.1, b: 0.2 }],
      ['divide', { a: 1, b: 4 }],
      ['divide', { a: 1, b: 0 }],
      ['search_docs', { query: 'retries', section: 'guide', limit: 2 }],
      ['search_docs', { query: 'x' }],
      ['list_primes', { below: 30 }],
      ['forecast', { place: 'Oslo', days: 3, units: 'metric' }],
      ['forecast', { place: 'Oslo', units: null }],
      ['create_order', { items: [{ sku: 'ABC-1', qty: 2 }], note: null }],
      ['create_order', { items: [{ sku: 'abc', qty: 0 }] }],
      ['nothing', {}],
      ['add', { a: 'two', b: 2, c: true }],
      ['no_such_tool', {}],
    ]
    const there = await ask({ type: 'execute', calls })
    for (let i = 0; i < calls.length; i++) {
      const here = outcomeOf(await manager.execute(...calls[i]))
      assert.deepEqual(here, there[i], JSON.stringify(calls[i]))
    }
  })

  test('bad arguments get the same model-facing text, for every provider', T, async () => {
    const bad = [
      ['add', { a: 'two', b: 2, c: true }],
      ['create_order', { items: [{ sku: 'abc', qty: 0 }], note: 3 }],
      ['forecast', { days: 9 }],
    ]
    const ok = ['divide', { a: 1, b: 0 }]
    const all = [...bad, ok]
    const responses = {
      openai: { role: 'assistant', content: null, tool_calls: all.map(([name, args], i) => ({ id: `call_${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } })) },
      'openai-responses': all.map(([name, args], i) => ({ type: 'function_call', call_id: `call_${i}`, name, arguments: JSON.stringify(args) })),
      anthropic: { role: 'assistant', content: all.map(([name, args], i) => ({ type: 'tool_use', id: `toolu_${i}`, name, input: args })) },
      gemini: { role: 'model', parts: all.map(([name, args], i) => ({ functionCall: { id: `fc_${i}`, name, args } })) },
      'ag-ui': all.flatMap(([name, args], i) => [
        { type: 'TOOL_CALL_START', toolCallId: `tc_${i}`, toolCallName: name },
        { type: 'TOOL_CALL_ARGS', toolCallId: `tc_${i}`, delta: JSON.stringify(args) },
        { type: 'TOOL_CALL_END', toolCallId: `tc_${i}` },
      ]),
    }
    for (const [provider, response] of Object.entries(responses)) {
      const there = await ask({ type: 'executeToolCalls', provider, response })
      const { messages: here } = await manager.executeToolCalls(response, { provider })
      // AG-UI ToolMessages get fresh ids of their own on each side.
      const ids = (messages) => (provider === 'ag-ui' ? messages.map((m) => ({ ...m, id: 'id' })) : messages)
      assert.deepEqual(ids(here), ids(there), provider)
    }
    const { messages } = await manager.executeToolCalls(responses.openai, { provider: 'openai' })
    assert.match(messages[0].content, /^Tool `add` was not run: its arguments do not match its input schema\./)
    assert.match(messages[3].content, /^Tool `divide` failed: division by zero \(category: execution, code: EXECUTION_ERROR\)/)
  })
})
