// registry.mountMcp (issue 14): a remote MCP server's tools registered as local tools,
// over the SDK's in-memory transport (so this file also runs in the browser): a server
// made with the SDK's own McpServer, and toolhost's own createMcpServer. Mounting over
// Streamable HTTP and stdio, and a server that dies mid-call, have their own files.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { createMcpServer } from 'toolhost/mcp'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until `check()` is true (list_changed and refreshes are asynchronous). */
async function until(check, what, ms = 2000) {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

/** A connected SDK Client to `server` (any SDK server) over the in-memory transport. */
async function clientOf(server) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await server.connect(serverTransport)
  const client = new Client({ name: 'toolhost-test', version: '1.0.0' })
  await client.connect(clientTransport)
  return client
}

/** A server made with the SDK's McpServer (zod schemas), counting the calls it runs. */
function sdkServer() {
  const server = new McpServer({ name: 'sdk-weather', version: '2.0.0' })
  const stats = { calls: 0, aborted: null }
  server.registerTool('get_weather', {
    title: 'Weather',
    description: 'Current weather for a city',
    inputSchema: { city: z.string().min(1), unit: z.enum(['c', 'f']).optional() },
    outputSchema: { city: z.string(), temperature: z.number(), unit: z.string() },
    annotations: { readOnlyHint: true, openWorldHint: true },
  }, async ({ city, unit = 'c' }) => {
    stats.calls++
    const out = { city, temperature: unit === 'c' ? 21 : 70, unit }
    return { content: [{ type: 'text', text: `${city}: ${out.temperature}°${unit}` }], structuredContent: out }
  })
  server.registerTool('book.flight', {
    description: 'Books a flight (a dot in the name)',
    inputSchema: { to: z.string() },
    annotations: { destructiveHint: true, idempotentHint: false },
  }, async ({ to }) => {
    stats.calls++
    if (to === 'Atlantis') return { isError: true, content: [{ type: 'text', text: 'No flights to Atlantis.' }] }
    return { content: [{ type: 'text', text: `booked to ${to}` }] }
  })
  server.registerTool('wait', { description: 'Waits until cancelled', inputSchema: { ms: z.number() } }, (_args, extra) => {
    stats.calls++
    return new Promise((resolve) => {
      stats.waiting?.()
      extra.signal.addEventListener('abort', () => {
        stats.aborted = extra.signal.reason ?? 'aborted'
        resolve({ content: [{ type: 'text', text: 'aborted' }] })
      })
    })
  })
  server.registerTool('picture', { description: 'An image and a caption' }, async () => ({
    content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }, { type: 'text', text: 'a pixel' }],
  }))
  return { server, stats }
}

describe('mountMcp: a server made with the SDK McpServer', () => {
  test('each remote tool is registered with its declaration; annotations become metadata', async () => {
    const { server } = sdkServer()
    const client = await clientOf(server)
    // A raw tools/list: client.listTools() would compile the output schemas with Ajv
    // (new Function), which a browser page's CSP refuses.
    const remote = (await client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema)).tools
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(client)
    assert.deepEqual(mount.tools, ['get_weather', 'book_flight', 'wait', 'picture'])
    assert.deepEqual(mount.skipped, [])
    assert.deepEqual(mount.serverInfo, { name: 'sdk-weather', version: '2.0.0' })
    const weather = registry.get('get_weather')
    assert.equal(weather.description, 'Current weather for a city')
    assert.deepEqual(weather.inputSchema, remote[0].inputSchema)
    assert.deepEqual(weather.outputSchema, remote[0].outputSchema)
    assert.deepEqual(weather.metadata, { title: 'Weather', readOnly: true, openWorld: true, custom: { mcp: { server: 'sdk-weather', tool: 'get_weather' } } })
    assert.deepEqual(registry.get('book_flight').metadata, { destructive: true, idempotent: false, custom: { mcp: { server: 'sdk-weather', tool: 'book.flight' } } })
    // The MCP export gives back what the server listed (annotations from metadata).
    const exported = registry.toMcpTools()[0]
    assert.deepEqual(exported.annotations, { title: 'Weather', readOnlyHint: true, openWorldHint: true })
    assert.deepEqual(exported.inputSchema, remote[0].inputSchema)
    await mount.unmount()
  })

  test('calls go through the local manager: structuredContent, text, other content; events and audit', async () => {
    const { server } = sdkServer()
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(server))
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
    const events = []
    for (const type of ['tool-execution-started', 'tool-execution-executing', 'tool-execution-succeeded']) manager.on(type, () => events.push(type))
    const audit = []
    manager.on('tool-invocation-recorded', (r) => audit.push(r.status))
    const weather = await manager.execute('get_weather', { city: 'Paris' })
    assert.equal(weather.success, true)
    assert.deepEqual(weather.result, { city: 'Paris', temperature: 21, unit: 'c' })
    assert.deepEqual(events, ['tool-execution-started', 'tool-execution-executing', 'tool-execution-succeeded'])
    assert.deepEqual(audit, ['succeeded'])
    assert.deepEqual((await manager.execute('book_flight', { to: 'Oslo' })).result, 'booked to Oslo')
    assert.deepEqual((await manager.execute('picture', {})).result, {
      content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }, { type: 'text', text: 'a pixel' }],
    })
    await mount.unmount()
  })

  test('arguments are validated locally first: a bad call never reaches the server', async () => {
    const { server, stats } = sdkServer()
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(server))
    const manager = new ToolExecutionManager(registry)
    const bad = await manager.execute('get_weather', { city: '', unit: 'k' })
    assert.equal(bad.success, false)
    assert.equal(bad.error.category, 'validation')
    assert.deepEqual(bad.error.validationErrors.map((e) => e.path).sort(), ['/city', '/unit'])
    assert.equal(stats.calls, 0)
    await mount.unmount()
  })

  test("a remote isError result fails the execution as category execution, with the remote text, and is not retried", async () => {
    const { server, stats } = sdkServer()
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(server))
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 1, jitter: 'none' } })
    const r = await manager.execute('book_flight', { to: 'Atlantis' })
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'execution')
    assert.equal(r.error.code, 'MCP_TOOL_ERROR')
    assert.equal(r.error.message, "tool 'book_flight' failed: No flights to Atlantis.")
    assert.equal(r.execution.retry.attemptNumber, 1)
    assert.equal(stats.calls, 1)
    assert.equal(r.error.cause.result.isError, true)
    // And the model reads it as a failure of the local tool.
    const call = { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'book_flight', arguments: '{"to":"Atlantis"}' } }] }
    const { messages } = await manager.executeToolCalls(call, { provider: 'openai' })
    assert.match(messages[0].content, /^Tool `book_flight` failed: No flights to Atlantis\. \(category: execution, code: MCP_TOOL_ERROR\)/)
    await mount.unmount()
  })

  test('cancelling the local execution sends notifications/cancelled: the remote handler is aborted', async () => {
    const { server, stats } = sdkServer()
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(server))
    const manager = new ToolExecutionManager(registry)
    const waiting = new Promise((resolve) => (stats.waiting = resolve))
    let executionId
    manager.on('tool-execution-started', (d) => (executionId = d.execution.id))
    const run = manager.execute('wait', { ms: 10_000 })
    await waiting
    assert.equal(manager.cancel(executionId), true)
    const r = await run
    assert.equal(r.success, false)
    assert.equal(r.execution.status, 'cancelled')
    await until(() => stats.aborted !== null, 'the remote abort')
    await mount.unmount()
  })

  test("the local timeout aborts the remote call too, and the failure is category timeout", async () => {
    const { server, stats } = sdkServer()
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(server))
    const manager = new ToolExecutionManager(registry, { timeoutMs: 40, retry: { maxAttempts: 1 } })
    const r = await manager.execute('wait', { ms: 10_000 })
    assert.equal(r.error.category, 'timeout')
    await until(() => stats.aborted !== null, 'the remote abort')
    await mount.unmount()
  })

  test('prefix, include and exclude choose and name the mounted tools; names toolhost refuses are fixed or skipped', async () => {
    const { server } = sdkServer()
    const registry = new ToolRegistry()
    registry.register({ name: 'w_wait', description: 'A local tool of the same name', handler: () => 'local' })
    const mount = await registry.mountMcp(await clientOf(server), { prefix: 'w_', exclude: ['picture'] })
    assert.deepEqual(mount.tools, ['w_get_weather', 'w_book_flight'])
    assert.deepEqual(mount.skipped.map((s) => s.name), ['wait'])
    assert.match(mount.skipped[0].reason, /DUPLICATE_TOOL/)
    assert.deepEqual(registry.names, ['w_wait', 'w_get_weather', 'w_book_flight'])
    const manager = new ToolExecutionManager(registry)
    assert.equal((await manager.execute('w_book_flight', { to: 'Rome' })).result, 'booked to Rome')
    await mount.unmount()
    assert.deepEqual(registry.names, ['w_wait'])

    const { server: second } = sdkServer()
    const only = await registry.mountMcp(await clientOf(second), { include: (t) => t.name.startsWith('get'), prefix: 'x'.repeat(60) })
    assert.deepEqual(only.tools, [])
    assert.match(only.skipped[0].reason, /not 1 to 64 letters/)
    await only.unmount()
  })

  test('include, exclude and shadow names that match no tool are warnings, with the close name; a RegExp or function is not checked', async () => {
    const { server } = sdkServer()
    const warned = []
    const onWarning = (w) => { if (w.name === 'ToolhostMcpWarning') warned.push(w.message) }
    globalThis.process?.on?.('warning', onWarning)
    try {
      const registry = new ToolRegistry()
      const session = registry.createSession()
      // `book.flight` matched, `Picture` is `picture` but for case, `waitt` is one edit
      // from `wait`; `shadow` names the remote `get_weather`, not its local name.
      const mount = await registry.mountMcp(await clientOf(server), {
        prefix: 'w_', sessionId: session.id, exclude: ['book.flight', 'Picture', 'waitt'], shadow: ['w_wait', 'get_weather', 'nothing_like_it'],
      })
      assert.deepEqual(mount.tools, ['w_get_weather', 'w_wait', 'w_picture'], 'a misspelt exclude name hides nothing')
      assert.deepEqual(mount.warnings, [
        "mountMcp: exclude names 'Picture' (did you mean 'picture'?), 'waitt' (did you mean 'wait'?), which MCP server client does not list",
        "mountMcp: shadow names 'get_weather' (did you mean 'w_get_weather'?), 'nothing_like_it', which no tool of MCP server client has as its local name",
      ])
      // Recomputed on each listing, and warned once.
      await mount.refresh()
      assert.equal(mount.warnings.length, 2)
      await mount.unmount()

      // Correct names and RegExp or function forms: no such warning.
      for (const options of [
        { exclude: ['picture', 'wait'], include: ['get_weather', 'picture'] },
        { include: /^(get|book)/, exclude: /nothing/ },
        { include: (t) => t.name !== 'x', exclude: (t) => t.name === 'misspelt' },
      ]) {
        const { server: again } = sdkServer()
        const other = await new ToolRegistry().mountMcp(await clientOf(again), options)
        assert.deepEqual(other.warnings, [], JSON.stringify(String(options.include)))
        await other.unmount()
      }

      // An include name that matches nothing mounts nothing, and says so; at most 10 shown.
      const { server: third } = sdkServer()
      const many = ['serch', ...Array.from({ length: 11 }, (_, i) => `x${i}${'y'.repeat(300)}`)]
      const none = await new ToolRegistry().mountMcp(await clientOf(third), { include: many })
      assert.deepEqual(none.tools, [])
      const [note] = none.warnings
      assert.match(note, /^mountMcp: include names 'serch', 'x0y+', .* and 2 more, which MCP server client does not list$/)
      assert.ok(note.length < 2400, `${note.length} characters`)
      await none.unmount()
      await sleep(10)
    } finally {
      globalThis.process?.off?.('warning', onWarning)
    }
    // A process warning in Node (console.warn in a browser), once for the same text.
    if (globalThis.process?.on !== undefined) {
      assert.equal(warned.filter((m) => m.includes("exclude names 'Picture'")).length, 1, 'warned once')
      assert.ok(warned.some((m) => m.includes("toolhost: mountMcp: shadow names 'get_weather'")))
    }
  })

  test('unmount() removes the tools and closes the connection', async () => {
    const { server } = sdkServer()
    const client = await clientOf(server)
    const closed = new Promise((resolve) => (client.onclose = resolve))
    const registry = new ToolRegistry()
    const changes = []
    registry.on('tool-registry-change', (d) => changes.push([d.action, d.toolName]))
    const mount = await registry.mountMcp(client)
    await mount.unmount()
    await closed
    assert.deepEqual(registry.names, [])
    assert.equal(mount.unmounted, true)
    assert.deepEqual(changes.map((c) => c[0]), ['registered', 'registered', 'registered', 'registered', 'unregistered', 'unregistered', 'unregistered', 'unregistered'])
    await mount.unmount()
    await assert.rejects(mount.refresh(), { code: 'MCP_UNMOUNTED' })
  })
})

describe("mountMcp: toolhost's own server", () => {
  /** A source registry served by createMcpServer, and a second registry mounting it. */
  async function pair(options) {
    const source = new ToolRegistry()
    source.register({
      name: 'add',
      description: 'Adds two numbers',
      metadata: { title: 'Add', readOnly: true, idempotent: true, category: 'math', tags: ['arithmetic'] },
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      handler: ({ a, b }) => ({ sum: a + b }),
    })
    source.register({ name: 'primes', description: 'Small primes', handler: () => [2, 3, 5] })
    source.register({ name: 'greet', description: 'Greets', inputSchema: { type: 'object', properties: { who: { type: 'string' } } }, handler: ({ who = 'you' }) => `hello ${who}` })
    source.register({ name: 'nothing', description: 'Returns nothing', handler: () => undefined })
    source.register({ name: 'fail', description: 'Fails', handler: () => { throw new Error('it broke') } })
    const sourceManager = new ToolExecutionManager(source, { retry: { maxAttempts: 1 } })
    const client = await clientOf(createMcpServer(source, sourceManager))
    const local = new ToolRegistry()
    const mount = await local.mountMcp(client, options)
    return { source, sourceManager, local, mount, manager: new ToolExecutionManager(local, { retry: { maxAttempts: 1 } }) }
  }

  test('the mounted declarations are the source ones, in every provider export', async () => {
    const { source, local, mount } = await pair()
    for (const method of ['toOpenAITools', 'toOpenAIResponsesTools', 'toAnthropicTools', 'toGeminiTools', 'toAgUiTools', 'toMcpTools']) {
      assert.deepEqual(local[method](), source[method](), method)
    }
    assert.deepEqual(local.getByCategory('math').map((d) => d.name), ['add'])
    assert.deepEqual(local.getByTag('arithmetic').map((d) => d.name), ['add'])
    await mount.unmount()
  })

  test('results and failures are the same as running the tool at the source', async () => {
    const { sourceManager, manager, mount } = await pair()
    const calls = [['add', { a: 1, b: 2 }], ['primes', {}], ['greet', { who: 'Ada' }], ['greet', {}], ['nothing', {}], ['fail', {}], ['add', { a: 'x' }]]
    for (const [name, args] of calls) {
      const there = await sourceManager.execute(name, args)
      const here = await manager.execute(name, args)
      assert.equal(here.success, there.success, name)
      if (there.success) assert.deepEqual(here.result, there.result, name)
      else {
        assert.equal(here.error.category, there.error.category, name)
        assert.equal(here.error.code, there.error.code, name)
        assert.equal(here.error.message, there.error.message, name)
        assert.deepEqual(here.error.validationErrors, there.error.validationErrors, name)
      }
    }
    await mount.unmount()
  })

  test("what toModelError hides reaches neither an MCP client nor the model behind a mount (adversarial pass 3)", async () => {
    const source = new ToolRegistry()
    source.register({
      name: 'orders', description: 'Looks up an order',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      handler: () => { throw new Error('connect ECONNREFUSED 10.0.3.7:5432') },
      toModelError: () => 'The order service is unavailable; tell the user to try later.',
    })
    source.register({ name: 'fail', description: 'Fails', handler: () => { throw new Error('it broke') } })
    const sourceManager = new ToolExecutionManager(source, { retry: { maxAttempts: 1 } })
    const client = await clientOf(createMcpServer(source, sourceManager))
    const raw = await client.callTool({ name: 'orders', arguments: { id: 'A1' } })
    assert.equal(raw.content[0].text, 'The order service is unavailable; tell the user to try later.')
    assert.deepEqual(raw._meta['toolhost/error'], { category: 'execution', code: 'EXECUTION_ERROR', message: 'The order service is unavailable; tell the user to try later.', retryable: false, rewritten: true })
    // Without a toModelError the model reads the real message, and so does the client.
    assert.equal((await client.callTool({ name: 'fail', arguments: {} }))._meta['toolhost/error'].message, "tool 'fail' failed: it broke")

    const local = new ToolRegistry()
    const mount = await local.mountMcp(client)
    const manager = new ToolExecutionManager(local, { retry: { maxAttempts: 1 } })
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'orders', arguments: '{"id":"A1"}' } }] }
    const there = (await sourceManager.executeToolCalls(call, { provider: 'openai' })).messages[0].content
    const { messages, results } = await manager.executeToolCalls(call, { provider: 'openai' })
    assert.equal(messages[0].content, there)
    assert.ok(!JSON.stringify(results[0].error).includes('10.0.3.7'))
    // This side's own toModelError still has the last word, given the server's text.
    const seen = []
    const rewriting = new ToolExecutionManager(local, { retry: { maxAttempts: 1 }, toModelError: (_e, { text }) => (seen.push(text), `here: ${text}`) })
    assert.equal((await rewriting.executeToolCalls(call, { provider: 'openai' })).messages[0].content, `here: ${there}`)
    assert.deepEqual(seen, [there])
    await mount.unmount()
  })

  test('a result whose model text is shaped (toModelOutput, maxOutputChars) mounts as the value itself', async () => {
    const source = new ToolRegistry()
    source.register({ name: 'primes', description: 'Small primes', handler: () => [2, 3, 5], toModelOutput: (p) => `${p.length} primes` })
    source.register({ name: 'story', description: 'A story', handler: () => 'once upon a time', toModelOutput: (s) => s.toUpperCase() })
    source.register({ name: 'count', description: 'A count', handler: () => 7, toModelOutput: () => 'seven' })
    source.register({ name: 'log', description: 'A long log', metadata: { maxOutputChars: 40 }, handler: () => 'GET / 200\n'.repeat(200) })
    const sourceManager = new ToolExecutionManager(source)
    const client = await clientOf(createMcpServer(source, sourceManager))
    // A model talking to the server reads the shaped text...
    assert.equal((await client.callTool({ name: 'primes', arguments: {} })).content[0].text, '3 primes')
    assert.ok((await client.callTool({ name: 'log', arguments: {} })).content[0].text.includes('[toolhost: output cut to'))
    // ...and a mount gets the result itself, as executing at the source gives it.
    const local = new ToolRegistry()
    const mount = await local.mountMcp(client)
    const manager = new ToolExecutionManager(local)
    for (const name of ['primes', 'story', 'count', 'log']) {
      const there = await sourceManager.execute(name, {})
      const here = await manager.execute(name, {})
      assert.equal(here.success, true, name)
      assert.deepEqual(here.result, there.result, name)
    }
    await mount.unmount()
  })

  test("the model behind a mount reads what the server shaped (toModelOutput, maxOutputChars); programs get the value (adversarial pass 3)", async () => {
    const source = new ToolRegistry()
    source.register({
      name: 'search', description: 'Searches the docs',
      handler: () => ({ hits: Array.from({ length: 500 }, (_, i) => ({ id: i, title: `Page ${i}` })) }),
      toModelOutput: ({ hits }) => `${hits.length} hits; first: ${hits.slice(0, 3).map((h) => h.title).join(', ')}`,
    })
    source.register({ name: 'read_log', description: 'Reads the server log', metadata: { maxOutputChars: 200 }, handler: () => 'GET /index.html 200\n'.repeat(1000) })
    source.register({ name: 'chart', description: 'A chart', handler: () => [1, 2, 3], toModelOutput: (v) => [{ type: 'text', text: `${v.length} points` }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] })
    source.register({ name: 'plain', description: 'Not shaped', handler: () => ({ ok: true }) })
    const sourceManager = new ToolExecutionManager(source)
    const client = await clientOf(createMcpServer(source, sourceManager))
    const local = new ToolRegistry()
    const mount = await local.mountMcp(client)
    const manager = new ToolExecutionManager(local)
    const names = ['search', 'read_log', 'chart', 'plain']
    for (const provider of ['openai', 'anthropic']) {
      const response = provider === 'openai'
        ? { role: 'assistant', tool_calls: names.map((name, i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: '{}' } })) }
        : { role: 'assistant', content: names.map((name, i) => ({ type: 'tool_use', id: `c${i}`, name, input: {} })) }
      const there = await sourceManager.executeToolCalls(response, { provider })
      const here = await manager.executeToolCalls(response, { provider })
      const text = (r) => JSON.stringify(r).replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, 'ID')
      // The cut's note names the server's execution, which keeps the whole result.
      assert.equal(text(here.messages), text(there.messages), provider)
      assert.deepEqual(here.results.map((r) => r.result), there.results.map((r) => r.result), provider)
    }
    const [, log] = (await manager.executeToolCalls({ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'search', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'read_log', arguments: '{}' } }] }, { provider: 'openai' })).messages
    assert.ok(log.content.length < 600 && log.content.includes('[toolhost: output cut to'), log.content.slice(-200))
    await mount.unmount()
  })

  test("the server's list_changed refreshes the mounted set: added, updated and removed tools", async () => {
    const { source, local, mount } = await pair({ prefix: 'r_' })
    source.register({ name: 'late', description: 'Registered later', handler: () => 'late' })
    await until(() => local.has('r_late'), 'r_late to be mounted')
    source.unregister('greet')
    source.register({ name: 'greet', description: 'Greets warmly', handler: () => 'warm hello' })
    await until(() => local.get('r_greet')?.description === 'Greets warmly', 'r_greet to be updated')
    source.unregister('primes')
    await until(() => !local.has('r_primes'), 'r_primes to be removed')
    assert.deepEqual(mount.tools, ['r_add', 'r_nothing', 'r_fail', 'r_late', 'r_greet'])
    assert.deepEqual(await mount.refresh(), { added: [], removed: [], updated: [] })
    await mount.unmount()
  })

  test('mounted in a session: only the session sees the tools; destroying it unmounts', async () => {
    const source = new ToolRegistry()
    source.register({ name: 'ping', description: 'Ping', handler: () => 'pong' })
    const client = await clientOf(createMcpServer(source, null))
    const closed = new Promise((resolve) => (client.onclose = resolve))
    const local = new ToolRegistry()
    const session = local.createSession()
    const mount = await local.mountMcp(client, { sessionId: session.id })
    assert.deepEqual(session.names, ['ping'])
    assert.deepEqual(local.names, [])
    const manager = new ToolExecutionManager(local)
    assert.equal((await manager.execute('ping', {}, { sessionId: session.id })).result, 'pong')
    assert.equal((await manager.execute('ping', {})).error.code, 'TOOL_NOT_FOUND')
    session.destroy()
    await closed
    assert.equal(mount.unmounted, true)
  })

  test("progress the remote handler reports reaches the local handler's ctx.reportProgress (issue 13)", async (t) => {
    const source = new ToolRegistry()
    let available = false
    source.register({
      name: 'job',
      description: 'Reports progress',
      handler: async (_a, ctx) => {
        available = typeof ctx.reportProgress === 'function'
        if (available) for (let i = 1; i <= 2; i++) ctx.reportProgress({ progress: i, total: 2, message: `step ${i}` })
        await sleep(10)
        return 'done'
      },
    })
    const local = new ToolRegistry()
    const mount = await local.mountMcp(await clientOf(createMcpServer(source, null)))
    const manager = new ToolExecutionManager(local)
    const seen = []
    manager.on('tool-execution-progress', (d) => seen.push([d.toolName, d.progress, d.total, d.message]))
    assert.equal((await manager.execute('job', {})).result, 'done')
    await mount.unmount()
    if (!available) return t.skip('ctx.reportProgress is not there yet (issue 13)')
    assert.deepEqual(seen, [['job', 1, 2, 'step 1'], ['job', 2, 2, 'step 2']])
  })
})

describe('mountMcp: failures', () => {
  test("a remote JSON-RPC error (a tool gone without list_changed) is a permanent failure, and the list is read again", async () => {
    // A low-level server that declares no listChanged, whose tool set changes under it.
    let names = ['one', 'two']
    const server = new Server({ name: 'changing', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: names.map((name) => ({ name, description: name, inputSchema: { type: 'object' } })) }))
    server.setRequestHandler(CallToolRequestSchema, (req) => {
      if (!names.includes(req.params.name)) throw Object.assign(new Error(`Unknown tool: ${req.params.name}`), { code: -32602 })
      return { content: [{ type: 'text', text: req.params.name }] }
    })
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(server))
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 1 } })
    assert.equal((await manager.execute('two', {})).result, 'two')
    names = ['one']
    const r = await manager.execute('two', {})
    assert.equal(r.error.category, 'permanent')
    assert.equal(r.error.code, 'MCP_PROTOCOL_ERROR')
    assert.match(r.error.message, /Unknown tool: two/)
    assert.equal(r.execution.retry.attemptNumber, 1)
    await until(() => !registry.has('two'), "'two' to be unmounted")
    await mount.unmount()
  })

  test('a connection that closes mid-call fails the attempt transient; a given Client is not reopened', async () => {
    const { server, stats } = sdkServer()
    const client = await clientOf(server)
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(client)
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 2, baseDelay: 1, jitter: 'none' } })
    const waiting = new Promise((resolve) => (stats.waiting = resolve))
    const run = manager.execute('wait', { ms: 10_000 })
    await waiting
    await server.close()
    const r = await run
    assert.equal(r.success, false)
    assert.equal(r.execution.retry.previousErrors[0].category, 'transient')
    assert.equal(r.execution.retry.previousErrors[0].code, 'MCP_CONNECTION_CLOSED')
    assert.equal(r.error.category, 'permanent')
    assert.equal(r.error.code, 'MCP_CONNECTION_CLOSED')
    assert.match(r.error.message, /cannot be reopened/)
    await mount.unmount()
  })

  test('a result that is not a CallToolResult is a permanent protocol error: not retried, and the connection is kept (adversarial pass, badresult-retry)', async () => {
    // A raw server (an SDK Server checks its own results): it runs 'pay', then answers
    // with a text item that has no text, unless asked for 'ok'.
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    let runs = 0
    serverTransport.onmessage = (msg) => {
      if (msg.id === undefined) return
      const answer = (result) => serverTransport.send({ jsonrpc: '2.0', id: msg.id, result })
      if (msg.method === 'initialize') return answer({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bad', version: '1' } })
      if (msg.method === 'tools/list') return answer({ tools: ['pay', 'ok'].map((name) => ({ name, description: name, inputSchema: { type: 'object' } })) })
      runs++
      return answer(msg.params.name === 'ok' ? { content: [{ type: 'text', text: 'fine' }] } : { content: [{ type: 'text' }] })
    }
    await serverTransport.start()
    const client = new Client({ name: 'toolhost-test', version: '1.0.0' })
    await client.connect(clientTransport)
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(client)
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 3, baseDelay: 1 } })
    const r = await manager.execute('pay', {})
    assert.equal(r.error.category, 'permanent')
    assert.equal(r.error.code, 'MCP_PROTOCOL_ERROR')
    assert.match(r.error.message, /answered tools\/call of 'pay' with a result that is not a CallToolResult \(content\.0: /)
    assert.equal(runs, 1, 'ran once')
    assert.equal((await manager.execute('ok', {})).result, 'fine', 'the same connection still answers')
    await mount.unmount()
  })

  test('an answer that is not JSON-RPC fails its call at once as a protocol error, not retried; a result too deep to measure says so', async () => {
    // The SDK drops such an answer as an "unknown message": the call waited for its
    // timeout, and was sent again for each retry (3 times for a `once` tool).
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    const calls = []
    const deep = (n) => { let v = 1; for (let i = 0; i < n; i++) v = [v]; return v }
    const answers = {
      null_result: (id) => ({ jsonrpc: '2.0', id, result: null }),
      string_result: (id) => ({ jsonrpc: '2.0', id, result: 'done' }),
      both: (id) => ({ jsonrpc: '2.0', id, result: { content: [] }, error: { code: 1, message: 'x' } }),
      odd_error: (id) => ({ jsonrpc: '2.0', id, error: { code: 'E42', message: 'no' } }),
      deep: (id) => ({ jsonrpc: '2.0', id, result: { content: [], structuredContent: { v: deep(20_000) } } }),
      ok: (id) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'fine' }] } }),
    }
    serverTransport.onmessage = (msg) => {
      if (msg.id === undefined) return
      if (msg.method === 'initialize') return serverTransport.send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } } })
      if (msg.method === 'tools/list') return serverTransport.send({ jsonrpc: '2.0', id: msg.id, result: { tools: Object.keys(answers).map((name) => ({ name, description: name, inputSchema: { type: 'object' } })) } })
      calls.push(msg.params.name)
      return serverTransport.send(answers[msg.params.name](msg.id))
    }
    await serverTransport.start()
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(clientTransport)
    const manager = new ToolExecutionManager(registry, { timeoutMs: 20_000, retry: { maxAttempts: 3, baseDelay: 1 } })
    for (const name of ['null_result', 'string_result', 'both', 'odd_error']) {
      const started = Date.now()
      const r = await manager.execute(name, {})
      assert.equal(r.error.code, 'MCP_PROTOCOL_ERROR', name)
      assert.equal(r.error.category, 'permanent', name)
      assert.match(r.error.message, /answered with what is not a JSON-RPC response .*"jsonrpc":"2.0"/, name)
      assert.ok(Date.now() - started < 5000, `${name} failed at once, not after its timeout`)
    }
    // It was "larger than maxResultBytes (16777216 bytes)" at 36 KB. Node 20's V8 cannot
    // write it as JSON to measure it; a newer one (Chromium's) can, and the result check
    // then refuses it.
    const r = await manager.execute('deep', {})
    if (r.error.code === 'MCP_PROTOCOL_ERROR') assert.match(r.error.message, /sent a result that cannot be written as JSON, so its size cannot be checked: Maximum call stack size exceeded/)
    else assert.match(`${r.error.code} ${r.error.message}`, /^INVALID_RESULT .*nested too deeply to be JSON/)
    assert.deepEqual(calls, ['null_result', 'string_result', 'both', 'odd_error', 'deep'], 'each sent once')
    assert.equal((await manager.execute('ok', {})).result, 'fine', 'the connection still answers')
    await mount.unmount()
  })

  test('an export leaves out a mounted tool its format cannot take, warning once, and keeps every other tool', async () => {
    // One server's schema made toAnthropicTools() throw for every tool of the agent.
    const { server } = sdkServer()
    const registry = new ToolRegistry()
    registry.register({ name: 'local', description: 'mine', inputSchema: { type: 'object' }, handler: () => 1 })
    const client = await clientOf(server)
    const mount = await registry.mountMcp(client)
    const odd = new Server({ name: 'odd', version: '1' }, { capabilities: { tools: {} } })
    odd.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'either', description: 'a or b', inputSchema: { type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }] } }] }))
    odd.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }))
    const oddMount = await registry.mountMcp(await clientOf(odd))
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    globalThis.process?.on?.('warning', onWarning)
    try {
      const names = () => registry.toAnthropicTools().map((t) => t.name)
      assert.ok(names().includes('local') && !names().includes('either'), names().join())
      assert.ok(registry.toMcpTools().some((t) => t.name === 'either'), 'a format that takes it keeps it')
      await new Promise((r) => setTimeout(r, 1))
      const ours = warnings.filter((w) => w.name === 'ToolhostMcpWarning')
      assert.equal(ours.length, 1, ours.map((w) => w.message).join('\n'))
      assert.match(ours[0].message, /^the mounted tool 'either' was left out of the tool list: .*#\/anyOf/)
      // The registry's own tool still fails the export: it is the developer's to fix.
      registry.register({ name: 'mine', description: 'd', inputSchema: { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] }, handler: () => 1 })
      assert.throws(() => registry.toAnthropicTools(), { code: 'INVALID_SCHEMA', message: /tool `mine`/ })
    } finally {
      globalThis.process?.off?.('warning', onWarning)
      await oddMount.unmount()
      await mount.unmount()
    }
  })

  test('mistakes are refused at once, naming what is wrong', async () => {
    const registry = new ToolRegistry()
    await assert.rejects(registry.mountMcp({ nope: true }), { code: 'INVALID_ARGUMENTS' })
    await assert.rejects(registry.mountMcp(new Client({ name: 'x', version: '1' })), { code: 'INVALID_ARGUMENTS', message: /not connected/ })
    const { server } = sdkServer()
    const client = await clientOf(server)
    await assert.rejects(registry.mountMcp(client, { prefx: 'a_' }), { code: 'INVALID_CONFIG', message: /prefx/ })
    await assert.rejects(registry.mountMcp(client, { sessionId: 'no-such-session' }), { code: 'SESSION_NOT_FOUND' })
    await assert.rejects(registry.mountMcp(client, { include: 42 }), { code: 'INVALID_CONFIG' })
    // A { url } or { command } source's keys and kinds, and options of the wrong kind,
    // refused before anything connects (adversarial pass: source-keys.mjs, options.mjs).
    const url = 'http://127.0.0.1:1/mcp'
    for (const [source, options, message] of [
      [{ url, header: { authorization: 'Bearer x' } }, {}, /unknown option `header` in a \{ url \} source; did you mean `headers`\?/],
      [{ command: 'node', evn: { API_KEY: 'k' } }, {}, /unknown option `evn` in a \{ command \} source; did you mean `env`\?/],
      [{ url, headers: 'Bearer x' }, {}, /headers must be an object of header names and string values/],
      [{ url, fetch: 'x' }, {}, /fetch must be a function/],
      [{ url: 'not a url' }, {}, /url must be an absolute http: or https: URL, not "not a url"/],
      [{ command: 'node', args: 'x.mjs' }, {}, /args must be an array of strings/],
      [{ command: 'node', env: { N: 1 } }, {}, /env must be an object of variable names and string values/],
      [{ command: 'node', stderr: 'loud' }, {}, /stderr must be 'inherit', 'ignore', 'pipe'/],
      [{ url, command: 'node' }, {}, /\{ url \} \(Streamable HTTP\) or \{ command \} \(stdio\), not both/],
      [{ url }, { clientInfo: 'me' }, /clientInfo must be \{ name, version \}/],
      [{ url }, { onError: 'warn' }, /onError must be a function/],
    ]) {
      await assert.rejects(registry.mountMcp(source, options), { code: 'INVALID_CONFIG', message }, JSON.stringify([source, options]))
    }
    assert.deepEqual(registry.names, [])
    await client.close()
  })
})
