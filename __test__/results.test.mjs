// Results that tell the truth. A handler returning a Map, a BigInt, a cycle, a function
// or an unawaited promise used to succeed, and the model got `{}`, `null` or "(result not
// JSON)"; such a result now fails the attempt with INVALID_RESULT (category execution),
// saying what was returned and where. HTTP failures that mean "later" (429, 503, ...)
// are transient and retried after their Retry-After, and `toModelError` rewrites the
// text a model reads for a failure.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ToolRegistry, ToolExecutionManager, toAiSdkTools } from 'toolhost'
import { createMcpServer } from 'toolhost/mcp'

function managerOf(handler, options = {}, definition = {}) {
  const registry = new ToolRegistry()
  registry.register({ name: 't', description: 'd', handler, ...definition })
  return new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 1, jitter: 'none' }, ...options })
}

describe('a result JSON cannot carry fails with INVALID_RESULT, saying what and where', () => {
  const cyclic = { name: 'a' }
  cyclic.self = cyclic
  const throwingElement = () => {
    const items = [1, 2]
    Object.defineProperty(items, 1, { enumerable: true, get() { throw new Error('unreadable') } })
    return items
  }
  const cases = [
    ['a Map', () => ({ items: new Map([['a', 1]]) }), 'a Map is not JSON (it would become {}); return a plain object or array instead at /items'],
    ['a Set', () => [new Set([1])], 'a Set is not JSON (it would become {}); return a plain object or array instead at /0'],
    ['a BigInt', () => ({ total: 10n }), 'a BigInt is not JSON (convert it to a string or number) at /total'],
    ['a BigInt alone', () => 10n, 'a BigInt is not JSON (convert it to a string or number) at the root'],
    ['a cycle', () => ({ user: cyclic }), 'the value is cyclic (an object contains itself) at /user/self'],
    ['a function', () => ({ ok: true, next: () => 1 }), 'a function is not JSON (it would be left out) at /next'],
    ['a function alone', () => () => 1, 'a function is not JSON (it would be left out) at the root'],
    ['an unawaited promise', () => ({ data: Promise.resolve(1) }), 'an unawaited Promise is not JSON (it would become {}); await it before returning at /data'],
    ['NaN', () => ({ ratio: 0 / 0 }), 'NaN is not a JSON number (it would become null) at /ratio'],
    ['a typed array', () => ({ bytes: new Uint8Array(2) }), 'a Uint8Array is not JSON (it would become an object of indexes); return Array.from(it) or a base64 string at /bytes'],
    ['an Error', () => ({ error: new Error('x') }), 'an Error is not JSON (it would become {}); throw it, or return its message at /error'],
    ['an array element whose getter throws', () => ({ items: throwingElement() }), 'the element could not be read at /items/1'],
    ['deep inside', async () => ({ a: [{ b: { 'c/d': new Map() } }] }), 'a Map is not JSON (it would become {}); return a plain object or array instead at /a/0/b/c~1d'],
    // Any object of a class with no toJSON and no own fields would become {}.
    ['a fetch Response not read', () => new Response('{"temp":21}'), 'a Response is not JSON (it would become {}); return a plain object with its data instead at the root'],
    ['Headers', () => ({ headers: new Headers({ a: '1' }) }), 'a Headers is not JSON (it would become {}); return a plain object with its data instead at /headers'],
    ['URLSearchParams', () => [new URLSearchParams('a=1')], 'a URLSearchParams is not JSON (it would become {}); return a plain object with its data instead at /0'],
    ['a Blob', () => ({ file: new Blob(['hi']) }), 'a Blob is not JSON (it would become {}); return a plain object with its data instead at /file'],
    ['the generator a *handler returns', () => (function* () { yield 1 })(), 'a Generator is not JSON (it would become {}); return a plain object with its data instead at the root'],
    ['what a toJSON returns', () => ({ h: { toJSON: () => new Headers() } }), 'a Headers is not JSON (it would become {}); return a plain object with its data instead at /h'],
  ]
  for (const [what, handler, detail] of cases) {
    test(what, async () => {
      let runs = 0
      const manager = managerOf(async () => {
        runs++
        return handler()
      })
      const r = await manager.execute('t', {})
      assert.equal(r.success, false)
      assert.equal(r.error.code, 'INVALID_RESULT')
      assert.equal(r.error.category, 'execution')
      assert.equal(r.error.retryable, false)
      assert.equal(r.error.message, `tool 't' returned a result that is not JSON: ${detail}`)
      assert.equal(runs, 1, 'not retried')
      assert.equal(r.execution.status, 'failed')
      assert.equal(r.execution.result, undefined)
    })
  }

  test('a model is told the failure, not sent {} as the result', async () => {
    const manager = managerOf(() => ({ rows: new Map() }))
    const message = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }] }
    const { messages } = await manager.executeToolCalls(message, { provider: 'openai' })
    assert.match(messages[0].content, /INVALID_RESULT/)
    assert.match(messages[0].content, /a Map is not JSON/)
  })
})

describe('results that stay allowed', () => {
  test('no return value, fields left undefined, dates, class instances and plain data', async () => {
    class Point {
      constructor() {
        this.x = 1
        this.y = 2
      }
    }
    const results = [
      [() => {}, undefined],
      [async () => undefined, undefined],
      [() => ({ a: 1, b: undefined }), { a: 1, b: undefined }],
      [() => new Date(0), new Date(0)],
      [() => ({ at: new Date(0) }), { at: new Date(0) }],
      [() => new Point(), new Point()],
      [() => [1, 'two', null, { three: [3] }], [1, 'two', null, { three: [3] }]],
      [() => 'text', 'text'],
      [() => 'x'.repeat(100_000), 'x'.repeat(100_000)],
      [() => ({ buffer: { toJSON: () => 'custom' } }), undefined],
      // A class instance with no fields but a toJSON, boxed primitives and null-prototype
      // objects are written as what they hold.
      [() => ({ url: new URL('https://example.com/a') }), { url: new URL('https://example.com/a') }],
      [() => ({ n: new Number(0), s: new String(''), b: new Boolean(false) }), undefined],
      [() => ({ bag: Object.create(null) }), undefined],
    ]
    for (const [handler, expected] of results) {
      const r = await managerOf(handler).execute('t', {})
      assert.equal(r.success, true, `${handler}: ${JSON.stringify(r.error)}`)
      if (expected !== undefined) assert.deepEqual(r.result, expected)
    }
  })
})

describe('strings cut inside a surrogate pair', () => {
  // JSON.stringify writes a lone surrogate as "\ud83d", which the engine refused: the
  // batch's replies were lost (executeToolCalls rejected) and an error with one in its
  // message became "a non-error value". The engine reads one as U+FFFD.
  const cut = '💥💥'.slice(0, 3)
  const call = (name) => ({ role: 'assistant', tool_calls: [{ id: name, type: 'function', function: { name, arguments: '{}' } }] })

  test('a result with one reaches the model with U+FFFD; the caller gets it as it was', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'cut', description: 'Cuts', handler: () => ({ text: cut }) })
    registry.register({ name: 'checked', description: 'Cuts, with an output schema', outputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 3 } } }, handler: () => ({ text: cut }) })
    const manager = new ToolExecutionManager(registry)
    const { messages, results } = await manager.executeToolCalls({ role: 'assistant', tool_calls: [call('cut').tool_calls[0], call('checked').tool_calls[0]] }, { provider: 'openai' })
    assert.equal(results[0].result.text, cut)
    assert.equal(messages[0].content, '{"text":"💥\ufffd"}')
    assert.equal(results[1].success, true, JSON.stringify(results[1].error))
  })

  test("a thrown error's message with one keeps its text", async () => {
    const r = await managerOf(() => { throw new Error(`quota ${cut}`) }, { retry: { maxAttempts: 1 } }).execute('t', {})
    assert.equal(r.error.code, 'EXECUTION_ERROR')
    assert.equal(r.error.message, "tool 't' failed: quota 💥\ufffd")
  })
})

describe('HTTP failures that mean "later" are transient and honour Retry-After', () => {
  /** An error as fetch wrappers and provider SDKs throw it. */
  function httpError(status, headers) {
    return Object.assign(new Error(`HTTP ${status}`), { status, headers })
  }

  test('429 with Retry-After in seconds (fetch Headers): retried after exactly that long', async () => {
    let runs = 0
    const manager = managerOf(() => {
      if (++runs === 1) throw httpError(429, new Headers({ 'Retry-After': '1' }))
      return 'done'
    }, { retry: { maxAttempts: 3, baseDelay: 30_000, maxDelay: 60_000, jitter: 'none' } })
    const delays = []
    manager.on('tool-execution-retrying', (d) => delays.push([d.delayMs, d.error.category, d.error.retryAfterMs]))
    const started = performance.now()
    const r = await manager.execute('t', {})
    const waited = performance.now() - started
    assert.equal(r.result, 'done')
    assert.deepEqual(delays, [[1000, 'transient', 1000]])
    // Without the hint the wait would be baseDelay, 30 s.
    assert.ok(waited >= 900 && waited < 10_000, `waited ${waited} ms`)
  })

  test('503 from axios (err.response) with an HTTP-date Retry-After', async () => {
    let runs = 0
    const manager = managerOf(() => {
      if (++runs === 1) {
        const at = new Date(Date.now() + 2000).toUTCString()
        throw Object.assign(new Error('Request failed with status code 503'), { response: { status: 503, headers: { 'retry-after': at } } })
      }
      return 'done'
    }, { retry: { maxAttempts: 2, baseDelay: 30_000, maxDelay: 60_000, jitter: 'none' } })
    let delay
    manager.on('tool-execution-retrying', (d) => (delay = d.delayMs))
    const r = await manager.execute('t', {})
    assert.equal(r.result, 'done')
    // Whole seconds: the date is 1-2 s away when it is read.
    assert.ok(delay > 0 && delay <= 2000, `delay ${delay}`)
  })

  test('502, 503 and 504 (status or statusCode) are retried; 400 and 500 are not', async () => {
    for (const [err, attempts] of [
      [{ status: 502 }, 3], [{ statusCode: 503 }, 3], [{ response: { status: 504 } }, 3], [{ status: 408 }, 3],
      [{ status: 400 }, 1], [{ status: 500 }, 1], [{ statusCode: 404 }, 1],
    ]) {
      let runs = 0
      const manager = managerOf(() => {
        runs++
        throw Object.assign(new Error('upstream failed'), err)
      })
      const r = await manager.execute('t', {})
      assert.equal(runs, attempts, JSON.stringify(err))
      assert.equal(r.error.category, attempts > 1 ? 'transient' : 'execution', JSON.stringify(err))
    }
  })

  test("the error's own retryAfterMs and category win", async () => {
    let runs = 0
    const manager = managerOf(() => {
      runs++
      throw Object.assign(new Error('no'), { status: 503, category: 'permanent' })
    })
    const r = await manager.execute('t', {})
    assert.equal([runs, r.error.category].join(' '), '1 permanent')
  })
})

describe('toModelError rewrites the text a model reads for a failure', () => {
  const call = (name, args = '{}') => ({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name, arguments: args } }] })
  const failing = () => {
    throw new Error('database password expired at db-7.internal')
  }

  test("by default the handler's message reaches the model as it is", async () => {
    const { messages } = await managerOf(failing, { retry: { maxAttempts: 1 } }).executeToolCalls(call('t'), { provider: 'openai' })
    assert.match(messages[0].content, /database password expired at db-7\.internal/)
  })

  test("the manager's function, the tool's own over it, and undefined keeping the default", async () => {
    const seen = []
    const registry = new ToolRegistry()
    registry.register({ name: 'plain', description: 'd', handler: failing })
    registry.register({
      name: 'own', description: 'd', handler: failing,
      toModelError: (error, info) => `own: ${error.code} (${info.toolName})`,
    })
    registry.register({ name: 'ok_args', description: 'd', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, handler: () => 1 })
    const manager = new ToolExecutionManager(registry, {
      retry: { maxAttempts: 1 },
      toModelError: (error, info) => {
        seen.push(info)
        return error.category === 'validation' ? undefined : 'The tool failed. Try another approach.'
      },
    })
    const text = async (name, args) => (await manager.executeToolCalls(call(name, args), { provider: 'openai' })).messages[0].content
    assert.equal(await text('plain'), 'The tool failed. Try another approach.')
    assert.equal(await text('own'), 'own: EXECUTION_ERROR (own)')
    assert.match(await text('ok_args', '{"n":"x"}'), /is not of type "integer"/, 'undefined keeps the default text')
    assert.match(await text('missing'), /^The tool failed/, 'a tool that does not exist is the manager\'s to answer')
    assert.equal(seen[0].toolName, 'plain')
    assert.equal(seen[0].toolCallId, 'c1')
    assert.equal(seen[0].arguments, '{}')
    assert.match(seen[0].text, /database password expired/, 'info.text is the default text')
  })

  test('it applies to toAiSdkTools too', async () => {
    const manager = managerOf(failing, { retry: { maxAttempts: 1 }, toModelError: () => 'rewritten' })
    await assert.rejects(toAiSdkTools(manager).t.execute({}, { toolCallId: 'a' }), { message: 'rewritten', code: 'EXECUTION_ERROR' })
  })

  test('a toModelError that throws keeps the default text, and is reported as a warning', async () => {
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      const throwing = managerOf(failing, { retry: { maxAttempts: 1 }, toModelError: () => { throw new Error('bug in rewriter') } })
      const { messages } = await throwing.executeToolCalls(call('t'), { provider: 'openai' })
      assert.match(messages[0].content, /database password expired/)
      await new Promise((r) => setTimeout(r, 0))
      assert.ok(warnings.some((w) => w.name === 'ToolhostModelErrorWarning' && /bug in rewriter/.test(w.message)), warnings.map(String).join('\n'))
    } finally {
      process.off('warning', onWarning)
    }
  })

  test('the MCP server sends the rewritten text as its error result', async () => {
    const manager = managerOf(failing, { retry: { maxAttempts: 1 }, toModelError: (error) => `failed (${error.category})` })
    const server = createMcpServer(manager.registry, manager)
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(clientSide)
    try {
      const result = await client.callTool({ name: 't', arguments: {} })
      assert.equal(result.isError, true)
      assert.deepEqual(result.content, [{ type: 'text', text: 'failed (execution)' }])
    } finally {
      await client.close()
    }
  })

  test('a toModelError that is not a function is refused', () => {
    assert.throws(() => new ToolExecutionManager(new ToolRegistry(), { toModelError: 'text' }), { code: 'INVALID_CONFIG', message: 'toModelError must be a function (error, info) => string' })
    assert.throws(() => new ToolRegistry().register({ name: 't', description: 'd', handler() {}, toModelError: 'x' }), { code: 'INVALID_DEFINITION' })
    assert.throws(() => new ToolExecutionManager(new ToolRegistry(), { toModelErrors: () => '' }), { code: 'INVALID_CONFIG', message: /did you mean `toModelError`/ })
  })
})
