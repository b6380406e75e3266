// The server of __test__/serve-load.test.mjs, in a child process run with --expose-gc so
// that its RSS is its own and measured after full collections. It serves `echo` with
// serveHttp on loopback, identities from the bearer token, and answers messages from
// the test: 'rss' (collects, then sends { rss, sessions }) and 'close'.
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { serveHttp } from 'toolhost/mcp'

const registry = new ToolRegistry()
registry.register({ name: 'echo', description: 'Echoes its arguments', handler: (args) => args })
const manager = new ToolExecutionManager(registry)
const options = JSON.parse(process.argv[2] ?? '{}')
const serving = await serveHttp(registry, manager, { auth: (token) => token, ...options })

async function settled() {
  for (let i = 0; i < 6; i++) {
    globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, 30))
  }
  const connections = await new Promise((resolve) => serving.httpServer.getConnections((_e, n) => resolve(n)))
  return { rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed, sessions: serving.sessions.length, connections }
}

process.on('message', async (m) => {
  if (m === 'rss') process.send(await settled())
  else if (m === 'close') {
    await serving.close()
    process.exit(0)
  }
})
process.send({ url: serving.url, port: serving.port })
