// Serves tools over MCP (Streamable HTTP), for any MCP client, or for another toolhost
// process to mount (examples/mcp-mount.mjs):
//
//   node examples/mcp-serve.mjs [--port 8080]     prints the URL, stops on Ctrl-C
//
// The same without writing this file: `npx toolhost serve examples/mcp-tools.mjs --http 8080`.
import { ToolExecutionManager, ToolRegistry } from 'toolhost'
import { serveHttp } from 'toolhost/mcp'
import registerWeatherTools from './mcp-tools.mjs'

const at = process.argv.indexOf('--port')
const port = at > 0 ? Number(process.argv[at + 1]) : 8080

const registry = new ToolRegistry()
registerWeatherTools(registry)
// Calls from MCP clients run through this manager: validation, retries, timeouts,
// events and audit apply as for local calls.
const manager = new ToolExecutionManager(registry, { timeoutMs: 5000 })
manager.on('tool-execution-succeeded', ({ execution }) => {
  console.error(`[server] ${execution.toolName}(${JSON.stringify(execution.args)}) -> ${JSON.stringify(execution.result)} in ${execution.timing.duration.toFixed(1)} ms`)
})
manager.on('tool-execution-failed', ({ execution, error }) => console.error(`[server] ${execution.toolName} failed: ${error.message}`))

const serving = await serveHttp(registry, manager, { port, name: 'weather-tools', version: '1.0.0' })
console.log(`serving ${registry.names.join(', ')} at ${serving.url}`)

const stop = () => serving.close().then(() => process.exit(0))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
