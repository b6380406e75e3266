// Type checks for toolhost/mcp (js/mcp.d.ts, read as js/mcp.d.mts: the entry is import-only,
// hence .mts). Nothing here runs. Checked with
//   npx tsc --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --lib es2022,dom --types node scripts/mcp-types-check.mts
// (or add js/mcp.d.ts and this file to tsconfig.json's `include`).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ToolExecutionManager, ToolRegistry } from 'toolhost'
import { createMcpServer, mountMcp, serveHttp, serveStdio, type McpMount } from 'toolhost/mcp'

const registry = new ToolRegistry()
const manager = new ToolExecutionManager(registry)
const session = registry.createSession()

createMcpServer(registry, manager, { name: 'n', version: '1' }).connect
createMcpServer(session, null)
// @ts-expect-error: not an option
createMcpServer(registry, manager, { nmae: 'x' })

async function check() {
  const http = await serveHttp(registry, manager, { port: 0, host: '127.0.0.1', path: '/mcp', stateless: false, allowedOrigins: '*' })
  const url: string = http.url
  const ids: string[] = http.sessions
  await http.close()
  const stdio = await serveStdio(registry)
  await stdio.closed
  const a: McpMount = await mountMcp(registry, { url, headers: { authorization: 'x' } }, { prefix: 'r_', include: ['a'], exclude: /b/, progress: false })
  const b = await mountMcp(registry, { command: 'node', args: ['server.mjs'] }, { sessionId: session.id, include: (tool) => tool.name !== 'x' })
  const c = await mountMcp(registry, new Client({ name: 'c', version: '1' }))
  const names: string[] = a.tools
  const changes: { added: string[]; removed: string[]; updated: string[] } = await b.refresh()
  await c.unmount()
  // @ts-expect-error: a source needs a url, a command, a Client or a Transport
  await mountMcp(registry, { host: 'x' })
  return [ids, names, changes]
}
void check
