// Process A of the promotion round trip (__test__/mcp-roundtrip.test.mjs): registers
// the catalog, serves it with serveHttp, and answers its parent (over the fork IPC
// channel) with what it sees locally: its provider exports, and the outcomes of calls
// run through its own manager. The parent mounts the served tools and compares.
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { serveHttp } from 'toolhost/mcp'
import register from './catalog.mjs'
import { exportsOf, outcomeOf } from './compare.mjs'

const registry = new ToolRegistry()
register(registry)
const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
const serving = await serveHttp(registry, manager, { name: 'process-a', version: '1.0.0' })

if (process.send) {
  process.on('message', async (msg) => {
    if (msg.type === 'exports') process.send({ id: msg.id, value: exportsOf(registry) })
    else if (msg.type === 'execute') {
      const out = []
      for (const [name, args] of msg.calls) out.push(outcomeOf(await manager.execute(name, args)))
      process.send({ id: msg.id, value: out })
    } else if (msg.type === 'executeToolCalls') {
      const { messages } = await manager.executeToolCalls(msg.response, { provider: msg.provider })
      process.send({ id: msg.id, value: messages })
    } else if (msg.type === 'stop') {
      await serving.close()
      process.disconnect()
    }
  })
  process.send({ ready: serving.url })
}
