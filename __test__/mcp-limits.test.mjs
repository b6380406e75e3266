// A mounted MCP server is untrusted: what a mount takes in is bounded, each bound with a
// default and an option, and a tool that cannot be mounted is skipped, never failing the
// mount. The servers are hostile ones written with the SDK's own low-level Server
// (scripts/mcp-fixtures/hostile.mjs), mounted in memory, over Streamable HTTP and over
// stdio. Each test is named after the finding it covers. Node-only (HTTP servers,
// child processes); see scripts/browser-tests/node-only.mjs.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { MOUNT_DEFAULTS } from 'toolhost/mcp'
import { overHttp, servers } from '../scripts/mcp-fixtures/hostile.mjs'

const T = { timeout: 30_000 }
const HOSTILE_STDIO = fileURLToPath(new URL('../scripts/mcp-fixtures/hostile-stdio.mjs', import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function clientOf(server) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await server.connect(serverTransport)
  const client = new Client({ name: 'limits-test', version: '1.0.0' })
  await client.connect(clientTransport)
  return client
}

/** Mounts a hostile server in memory; resolves { registry, mount, stats, warnings }. */
async function mounted(made, options) {
  const warnings = []
  const onWarning = (w) => warnings.push(w.message)
  process.on('warning', onWarning)
  try {
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp(await clientOf(made.server), options)
    await sleep(0)
    return { registry, mount, stats: made.stats, warnings }
  } finally {
    process.off('warning', onWarning)
  }
}

describe('finding 10: a tools/list that never ends cannot hang mountMcp', () => {
  test('a cursor that comes back ends the listing with what was listed, and a warning', T, async () => {
    const { mount, stats, warnings } = await mounted(servers.cursorLoop())
    assert.deepEqual(mount.tools, ['t0', 'tagain'])
    assert.equal(stats.lists, 2)
    assert.match(mount.warnings[0], /sent a tools\/list cursor it had sent before: the listing stopped there, with 2 tools/)
    assert.ok(warnings.some((w) => /cursor it had sent before/.test(w)))
    await mount.unmount()
  })

  test('new cursors for ever are bounded by listTimeoutMs', T, async () => {
    const started = Date.now()
    const { mount, stats } = await mounted(servers.endlessCursor(), { listTimeoutMs: 300 })
    assert.ok(Date.now() - started < 3000)
    assert.ok(stats.lists > 1)
    assert.match(mount.warnings[0], /took longer than listTimeoutMs \(300 ms\)/)
    assert.equal(MOUNT_DEFAULTS.listTimeoutMs, 30_000)
    await mount.unmount()
  })
})

describe('finding 15: what a remote server pushes is bounded', () => {
  test('100,000 tools: the first maxTools are mounted, quickly', T, async () => {
    const started = Date.now()
    const { mount, registry } = await mounted(servers.manyTools(100_000))
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`)
    assert.equal(mount.tools.length, MOUNT_DEFAULTS.maxTools)
    assert.equal(registry.names.length, 1000)
    assert.match(mount.warnings[0], /lists more than maxTools \(1000\) tools: the first 1000 are used/)
    await mount.unmount()
    const few = await mounted(servers.manyTools(50), { maxTools: 10 })
    assert.equal(few.mount.tools.length, 10)
    await few.mount.unmount()
  })

  test('a 1 MB description is cut to maxDescriptionChars in every export', T, async () => {
    const { mount, registry } = await mounted(servers.longDescription(1_000_000))
    assert.equal(registry.get('talker').description.length, MOUNT_DEFAULTS.maxDescriptionChars)
    assert.ok(registry.toOpenAITools()[0].function.description.length <= 8192)
    assert.match(mount.warnings[0], /is 1000000 characters: cut to maxDescriptionChars \(8192\)/)
    await mount.unmount()
    const short = await mounted(servers.longDescription(500), { maxDescriptionChars: 100 })
    assert.equal(short.registry.get('talker').description.length, 100)
    await short.mount.unmount()
  })

  test("a title, category and tags are cut as a description is (adversarial pass, bigmeta-check)", T, async () => {
    const { mount, registry, warnings } = await mounted(servers.bigText())
    const titled = registry.get('titled')
    assert.equal(titled.metadata.title.length, 256)
    assert.ok(titled.metadata.title.endsWith('…'))
    assert.ok(titled.description.length <= 256, 'the title stands in for the missing description, cut')
    const tagged = registry.get('tagged').metadata
    assert.equal(tagged.category.length, 256)
    assert.equal(tagged.tags.length, 32)
    assert.equal(tagged.tags[0].length, 64)
    assert.deepEqual(tagged.tags.slice(1, 3), ['tag0', 'tag1'])
    for (const text of [
      /the title of tool 'titled' of MCP server .* is 5000000 characters: cut to 256/,
      /the annotations\.title of tool 'titled' .* is 5000000 characters: cut to 256/,
      /the category of tool 'tagged' .* is 3000000 characters: cut to 256/,
      /the tags of tool 'tagged' .* are 300001: the first 32 kept/,
      /the tags of tool 'tagged' .* have 1 longer than 64 characters: cut to 64/,
    ]) {
      assert.ok(mount.warnings.some((w) => text.test(w)), `mount.warnings: ${text}`)
      assert.ok(warnings.some((w) => text.test(w)), `process warning: ${text}`)
    }
    await mount.unmount()
  })

  test('a result over maxResultBytes is refused over HTTP, stdio and a given Client; the server stays usable', T, async () => {
    const big = 20 * 1024 * 1024
    const http = await overHttp(() => servers.hugeResult(big))
    const sources = [
      ['http', { url: http.url }, {}],
      ['stdio', { command: process.execPath, args: [HOSTILE_STDIO, 'hugeResult', String(3_000_000)] }, { maxResultBytes: 1_000_000 }],
      ['client', await clientOf(servers.hugeResult(5000).server), { maxResultBytes: 1000 }],
    ]
    for (const [kind, source, options] of sources) {
      const registry = new ToolRegistry()
      const mount = await registry.mountMcp(source, options)
      const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
      const r = await manager.execute('dump', {})
      assert.equal(r.error?.code, 'MCP_RESULT_TOO_LARGE', `${kind}: ${JSON.stringify(r.error)}`)
      assert.match(r.error.message, /sent a response larger than maxResultBytes \(\d+ bytes\)/)
      if (kind !== 'client') assert.equal((await manager.execute('small', {})).result, 'small', kind)
      await mount.unmount()
    }
    assert.equal(MOUNT_DEFAULTS.maxResultBytes, 16 * 1024 * 1024)
    await http.close()
  })
})

describe('a tool that cannot be mounted is skipped, never failing the mount', () => {
  test('finding 16: a non-object inputSchema, no name, a huge or costly schema: each skipped with its reason and a warning; the rest mounts', T, async () => {
    const { mount, registry, warnings } = await mounted(servers.badTools())
    assert.deepEqual(mount.tools, ['fine'])
    const reasons = Object.fromEntries(mount.skipped.map((s) => [s.name, s.reason]))
    assert.match(reasons.stringly, /it is not a valid MCP tool at inputSchema/)
    assert.match(reasons['(no name)'], /it is not a valid MCP tool at name/)
    assert.match(reasons.huge, /its schemas are \d+ characters of JSON, more than maxSchemaChars \(131072\)/)
    assert.ok(warnings.some((w) => /4 tools of MCP server client could not be mounted: 'stringly'/.test(w)), warnings.join('\n'))
    const manager = new ToolExecutionManager(registry)
    assert.equal((await manager.execute('fine', { x: 1 })).result, 'ok')
    await mount.unmount()
  })

  test('finding 4: a schema whose validation cost is over maxSchemaCost is refused at mount with its name', T, async () => {
    const { mount } = await mounted(servers.badTools())
    const costly = mount.skipped.find((s) => s.name === 'costly')
    assert.match(costly.reason, /INVALID_SCHEMA: tool 'costly': inputSchema could take more than 10000 validation steps for one value \(maxSchemaCost\)/)
    await mount.unmount()
    // The bound is an option; the same schema registered by the developer is theirs.
    const { mount: trusting } = await mounted(servers.badTools(), { maxSchemaCost: Infinity })
    assert.ok(trusting.tools.includes('costly'))
    await trusting.unmount()
    const { doubling } = await import('../scripts/mcp-fixtures/hostile.mjs')
    new ToolRegistry().register({ name: 'mine', description: 'd', inputSchema: doubling(19), handler: () => 1 })
  })
})

describe('finding 9: a mounted call that ends closes its HTTP stream', () => {
  test('after the local timeout the server sees the stream closed, and reading stops', T, async () => {
    const http = await overHttp(servers.endlessStream)
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp({ url: http.url })
    const manager = new ToolExecutionManager(registry, { timeoutMs: 200, retry: { maxAttempts: 1 } })
    const r = await manager.execute('stream', {})
    assert.equal(r.error.code, 'TIMEOUT')
    const end = Date.now() + 3000
    while (http.stats.closedEarly === 0 && Date.now() < end) await sleep(10)
    assert.equal(http.stats.closedEarly, 1, 'the call\'s response stream was closed by the client')
    for (const s of http.stats.servers) s.stop = true
    await mount.unmount()
    await http.close()
  })

  test('an SSE line longer than maxResultBytes fails the call at once', T, async () => {
    const http = await overHttp(servers.endlessStream)
    const registry = new ToolRegistry()
    const mount = await registry.mountMcp({ url: http.url }, { maxResultBytes: 32_768 })
    const manager = new ToolExecutionManager(registry, { timeoutMs: 10_000, retry: { maxAttempts: 1 } })
    const started = Date.now()
    const r = await manager.execute('stream', {})
    assert.equal(r.error.code, 'MCP_RESULT_TOO_LARGE')
    assert.ok(Date.now() - started < 5000)
    for (const s of http.stats.servers) s.stop = true
    await mount.unmount()
    await http.close()
  })
})

describe('a mount over HTTP holds nothing per call once calls end', () => {
  test('no listener per request stays on the transport\'s signal; a refresh that finds the same problems warns once', T, async () => {
    const { getEventListeners } = await import('node:events')
    const http = await overHttp(servers.badTools)
    const registry = new ToolRegistry()
    const warnings = []
    const onWarning = (w) => warnings.push(w.message)
    process.on('warning', onWarning)
    const mount = await registry.mountMcp({ url: http.url })
    const manager = new ToolExecutionManager(registry)
    for (let i = 0; i < 50; i++) assert.equal((await manager.execute('fine', { x: i })).result, 'ok')
    // The SDK transport's own controller, aborted when it closes (a private field).
    assert.equal(getEventListeners(mount.client.transport._abortController.signal, 'abort').length, 0)
    await mount.refresh()
    await sleep(0)
    process.off('warning', onWarning)
    assert.equal(warnings.filter((w) => /could not be mounted/.test(w)).length, 1)
    await mount.unmount()
    await http.close()
  })
})

describe('finding 14: a mounted tool that reports progress for ever is bounded too', () => {
  test('resetTimeoutOnProgress with no maxTotalTimeoutMs ends after 10 × timeoutMs', T, async () => {
    const { registry, mount } = await mounted(servers.progressForever())
    const manager = new ToolExecutionManager(registry, { timeoutMs: 50, resetTimeoutOnProgress: true, retry: { maxAttempts: 1 } })
    const started = Date.now()
    const r = await manager.execute('busy', {})
    assert.equal(r.error.code, 'TIMEOUT')
    assert.match(r.error.message, /total time limit of 500 ms/)
    assert.ok(Date.now() - started < 5000)
    await mount.unmount()
  })
})
