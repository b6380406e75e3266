// Local and remote tools in one registry, in one conversation:
//
//   node examples/mcp-mount.mjs
//
// Starts examples/mcp-serve.mjs as a second process (the remote tool host), mounts its
// tools next to two local ones with `registry.mountMcp({ url })`, and runs a scripted
// model conversation (OpenAI Chat Completions format) that calls both kinds. The model
// sees one list of tools; validation, retries, timeouts, events and audit are the local
// manager's for every call, remote or not. Then it unmounts, stops the server, and exits.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ToolExecutionManager, ToolRegistry } from 'toolhost'

// 1. The remote tool host: another process, on a free port.
const server = spawn(process.execPath, [fileURLToPath(new URL('./mcp-serve.mjs', import.meta.url)), '--port', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const url = await new Promise((resolve, reject) => {
  server.stdout.on('data', (d) => {
    const m = /at (http:\/\/\S+)/.exec(String(d))
    if (m) resolve(m[1])
  })
  server.on('exit', (code) => reject(new Error(`mcp-serve.mjs exited (${code})`)))
})

// 2. Local tools, and the remote ones mounted next to them.
const registry = new ToolRegistry()
registry.register({
  name: 'calculate',
  description: 'Evaluates a + b, a - b, a * b or a / b',
  metadata: { readOnly: true },
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, op: { type: 'string', enum: ['+', '-', '*', '/'] }, b: { type: 'number' } },
    required: ['a', 'op', 'b'],
  },
  handler: ({ a, op, b }) => ({ '+': a + b, '-': a - b, '*': a * b, '/': a / b })[op],
})
registry.register({
  name: 'get_local_time',
  description: 'The local time in an IANA time zone',
  inputSchema: { type: 'object', properties: { timeZone: { type: 'string' } }, required: ['timeZone'] },
  handler: ({ timeZone }) => ({ timeZone, time: '14:05' }),
})
const mount = await registry.mountMcp({ url })
console.log(`mounted ${mount.tools.join(', ')} from ${mount.serverInfo.name} at ${url}`)
console.log(`the model sees: ${registry.toOpenAITools().map((t) => t.function.name).join(', ')}\n`)

const manager = new ToolExecutionManager(registry, { timeoutMs: 3000, retry: { maxAttempts: 3, baseDelay: 200 } })
const where = (name) => (registry.get(name)?.metadata.custom?.mcp ? `remote (${registry.get(name).metadata.custom.mcp.server})` : 'local')
manager.on('tool-execution-executing', ({ toolName, attemptNumber }) => console.log(`  run  ${toolName} [${where(toolName)}] attempt ${attemptNumber}`))

// 3. A scripted model: recorded responses, picked by how many tool replies it has seen.
const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })
function scriptedModel(messages) {
  const replies = messages.filter((m) => m.role === 'tool').length
  if (replies === 0) {
    // Remote and local tools in one turn; one call has a wrong argument name.
    return { role: 'assistant', content: null, tool_calls: [
      call('call_1', 'get_weather', { city: 'Paris' }),
      call('call_2', 'get_weather', { town: 'Tokyo' }),
      call('call_3', 'get_local_time', { timeZone: 'Europe/Paris' }),
    ] }
  }
  if (replies === 3) {
    // The validation reply told it what to send: it corrects the call, and converts.
    return { role: 'assistant', content: null, tool_calls: [
      call('call_4', 'get_weather', { city: 'Tokyo' }),
      call('call_5', 'calculate', { a: 18, op: '*', b: 1.8 }),
      call('call_6', 'convert_currency', { amount: 120, from: 'EUR', to: 'JPY' }),
    ] }
  }
  const last = messages.slice(-3).map((m) => m.content)
  return { role: 'assistant', content: `Paris: 18 °C and cloudy (${Number(last[1]) + 32} °F) at 14:05; Tokyo: 24 °C and sunny. 120 EUR is ${last[2]} JPY.` }
}

const messages = [{ role: 'user', content: 'Weather in Paris and Tokyo, Paris in Fahrenheit, the time in Paris, and 120 EUR in yen?' }]
for (let turn = 1; ; turn++) {
  const reply = scriptedModel(messages)
  messages.push(reply)
  if (!reply.tool_calls) {
    console.log(`\nassistant: ${reply.content}`)
    break
  }
  console.log(`turn ${turn}: the model calls ${reply.tool_calls.map((c) => c.function.name).join(', ')}`)
  const { messages: toolMessages } = await manager.executeToolCalls(reply, { provider: 'openai' })
  for (const m of toolMessages) console.log(`  reply ${m.tool_call_id}: ${m.content.split('\n')[0]}`)
  messages.push(...toolMessages)
}

// 4. Done: the remote tools go, the connection closes, the server stops.
await mount.unmount()
console.log(`\nunmounted; left: ${registry.names.join(', ')}`)
server.kill('SIGTERM')
