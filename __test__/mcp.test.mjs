// MCP (issue 5): examples/mcp-server.mjs serves a registry with @modelcontextprotocol/sdk;
// the SDK's own Client, over its in-memory transport, lists and calls the tools.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { createMcpServer } from '../examples/mcp-server.mjs'

const ADD_SCHEMA = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
}

/** A registry, a manager, the MCP server over them, and a connected SDK client. */
async function connect(options) {
  const registry = new ToolRegistry()
  registry.register({
    name: 'add',
    description: 'Adds two numbers',
    metadata: { title: 'Add', readOnly: true, idempotent: true },
    inputSchema: ADD_SCHEMA,
    handler: ({ a, b }) => ({ sum: a + b }),
  })
  registry.register({
    name: 'delete_file',
    description: 'Deletes a file',
    metadata: { destructive: true, openWorld: false },
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    handler: ({ path }) => `deleted ${path}`,
  })
  const manager = new ToolExecutionManager(registry, options)
  const server = createMcpServer(registry, manager)
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await server.connect(serverTransport)
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  await client.connect(clientTransport)
  return { registry, manager, client }
}

describe('createMcpServer with the MCP SDK client', () => {
  test('tools/list returns registry.toMcpTools(): schema, title and annotations from metadata', async () => {
    const { registry, client } = await connect()
    const { tools } = await client.listTools()
    assert.deepEqual(tools, registry.toMcpTools())
    const [add, del] = tools
    assert.equal(add.name, 'add')
    assert.equal(add.title, 'Add')
    assert.deepEqual(add.inputSchema, ADD_SCHEMA)
    assert.deepEqual(add.annotations, { title: 'Add', readOnlyHint: true, idempotentHint: true })
    assert.deepEqual(del.annotations, { destructiveHint: true, openWorldHint: false })
    await client.close()
  })

  test('tools/call runs through the manager and returns text and structuredContent', async () => {
    const { manager, client } = await connect()
    const started = []
    manager.on('tool-execution-succeeded', (d) => started.push([d.execution.toolName, d.result]))
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })
    assert.deepEqual(result, { content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } })
    assert.deepEqual(started, [['add', { sum: 5 }]])
    const text = await client.callTool({ name: 'delete_file', arguments: { path: '/tmp/x' } })
    assert.deepEqual(text.content, [{ type: 'text', text: 'deleted /tmp/x' }])
    assert.equal(text.isError, undefined)
    await client.close()
  })

  test('bad arguments come back as an isError result listing each failing path and the schema', async () => {
    const { manager, client } = await connect()
    let called = 0
    manager.on('tool-execution-executing', () => called++)
    const result = await client.callTool({ name: 'add', arguments: { a: '2', c: 1 } })
    assert.equal(result.isError, true)
    assert.equal(result.content.length, 1)
    assert.equal(result.content[0].type, 'text')
    const text = result.content[0].text
    assert.match(text, /^Tool `add` was not run: its arguments do not match its input schema\./)
    assert.match(text, /- \/a: "2" is not of type "number"/)
    assert.match(text, /"b" is a required property/)
    assert.match(text, /"c" was unexpected|Additional properties/i)
    assert.ok(text.includes(JSON.stringify(ADD_SCHEMA.properties.a, null, 2).split('\n')[1].trim()), 'the schema is shown')
    assert.equal(called, 0, 'the handler never ran')
    await client.close()
  })

  test('an unknown tool is an isError result naming the available tools; failures do not break the session', async () => {
    const { client } = await connect()
    const result = await client.callTool({ name: 'subtract', arguments: {} })
    assert.equal(result.isError, true)
    assert.match(result.content[0].text, /TOOL_NOT_FOUND/)
    assert.match(result.content[0].text, /Available tools: add, delete_file/)
    const again = await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })
    assert.deepEqual(again.structuredContent, { sum: 2 })
    await client.close()
  })

  test('a handler failure is an isError result; registering a tool notifies list_changed', async () => {
    const { registry, client } = await connect({ retry: { maxAttempts: 1 } })
    const changed = new Promise((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, resolve))
    registry.register({
      name: 'explode',
      description: 'Always fails',
      inputSchema: { type: 'object' },
      handler: () => {
        throw new Error('boom')
      },
    })
    await changed
    const { tools } = await client.listTools()
    assert.deepEqual(tools.map((t) => t.name), ['add', 'delete_file', 'explode'])
    const result = await client.callTool({ name: 'explode', arguments: {} })
    assert.equal(result.isError, true)
    assert.match(result.content[0].text, /^Tool `explode` failed \(\w+\): .*boom/)
    await client.close()
  })
})
