// A toolhost registry served over MCP with the official SDK (@modelcontextprotocol/sdk).
//
//   node examples/mcp-server.mjs           lists and calls the tools with the SDK's own
//                                          Client over an in-memory transport
//   node examples/mcp-server.mjs --stdio   serves the tools over stdio, for an MCP host
//
// `tools/list` answers with `registry.toMcpTools()`; `tools/call` runs through
// `manager.execute`, so validation, retries, timeouts, events and audit apply. A failed
// call (bad arguments included) is a tool result with `isError: true` and text the
// model can act on, as the MCP spec asks, not a protocol error.
import { pathToFileURL } from 'node:url'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

/**
 * An MCP server exposing the tools `registry` (or its session `options.sessionId`)
 * shows, run by `manager`. Connect it to any transport with `server.connect(transport)`.
 */
export function createMcpServer(registry, manager, { name = 'toolhost', version = '0.1.0', sessionId } = {}) {
  const tools = sessionId === undefined ? registry : registry.getSession(sessionId)
  if (!tools) throw new Error(`session '${sessionId}' does not exist`)
  const server = new Server({ name, version }, { capabilities: { tools: { listChanged: true } } })

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.toMcpTools() }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name: tool, arguments: args = {} } = request.params
    const outcome = await manager.execute(tool, args, { sessionId, signal: extra.signal })
    if (!outcome.success) return { isError: true, content: [{ type: 'text', text: failureText(tools, tool, outcome.error) }] }
    return callResult(outcome.result)
  })

  // Clients that listed the tools hear when the set changes.
  registry.on('tool-registry-change', () => {
    if (server.transport !== undefined) server.sendToolListChanged().catch(() => {})
  })
  return server
}

/** A successful result: text for every client, `structuredContent` for object results. */
function callResult(result) {
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? null)
  const structured = result !== null && typeof result === 'object' && !Array.isArray(result)
  return structured ? { content: [{ type: 'text', text }], structuredContent: result } : { content: [{ type: 'text', text }] }
}

/** What went wrong, with each failing argument and the expected schema for bad arguments. */
function failureText(tools, tool, error) {
  if (error.validationErrors) {
    const lines = [`Tool \`${tool}\` was not run: its arguments do not match its input schema.`]
    for (const issue of error.validationErrors) lines.push(`- ${issue.path || '(top level)'}: ${issue.message}`)
    const declared = tools.get(tool)
    if (declared) lines.push(`Call it again with arguments matching this JSON Schema:\n${JSON.stringify(declared.inputSchema, null, 2)}`)
    return lines.join('\n')
  }
  const text = `Tool \`${tool}\` failed (${error.code}): ${error.message}`
  return error.code === 'TOOL_NOT_FOUND' ? `${text}. Available tools: ${tools.toMcpTools().map((t) => t.name).join(', ')}` : text
}

// Run directly: a small registry, served over stdio or exercised in memory.
if (typeof process !== 'undefined' && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { ToolRegistry, ToolExecutionManager } = await import('toolhost')
  const registry = new ToolRegistry()
  registry.register({
    name: 'add',
    description: 'Adds two numbers',
    metadata: { readOnly: true, idempotent: true },
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    handler: ({ a, b }) => ({ sum: a + b }),
  })
  const manager = new ToolExecutionManager(registry)
  const server = createMcpServer(registry, manager)

  if (process.argv.includes('--stdio')) {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js')
    await server.connect(new StdioServerTransport())
  } else {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    await server.connect(serverTransport)
    const client = new Client({ name: 'example-client', version: '0.1.0' })
    await client.connect(clientTransport)
    const { tools } = await client.listTools()
    console.log('tools/list:', JSON.stringify(tools, null, 2))
    console.log('tools/call add {a:2,b:3}:', JSON.stringify(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })))
    console.log('tools/call add {a:"2"}:', JSON.stringify(await client.callTool({ name: 'add', arguments: { a: '2' } }), null, 2))
    await client.close()
  }
}
