// Process B of the failure test (__test__/mcp-failover.test.mjs): starts process A
// (`toolhost serve catalog.mjs --http PORT`), mounts it, kills A in the middle of a
// call, starts A again on the same port once the local manager is retrying, and prints
// what the execution went through as one JSON line. It ends by itself: the test checks
// that nothing (a socket, a timer, a child) keeps it alive.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const CLI = fileURLToPath(new URL('../../js/cli.mjs', import.meta.url))
const CATALOG = fileURLToPath(new URL('./catalog.mjs', import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address()
    probe.close(() => resolve(port))
  })
})

/** Starts process A; resolves { child, url, exited } once it serves. */
function startA() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', CATALOG, '--http', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise((r) => child.on('close', (code, signal) => r({ code, signal })))
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /at (http:\/\/\S+)/.exec(out)
      if (m) resolve({ child, url: m[1], exited })
    })
    child.on('error', reject)
  })
}

const t0 = Date.now()
const timeline = []
const at = (what) => timeline.push([Date.now() - t0, what])

let a = await startA()
at(`A started (pid ${a.child.pid})`)
const pids = [a.child.pid]
const local = new ToolRegistry()
local.register({ name: 'local_clock', description: 'A local tool next to the remote ones', handler: () => 'tick' })
const mount = await local.mountMcp({ url: a.url }, { include: ['slow', 'process_info'] })
const manager = new ToolExecutionManager(local, { timeoutMs: 10_000, retry: { maxAttempts: 6, baseDelay: 150, maxDelay: 400, jitter: 'none' } })

let restarted = null
let killed = false
manager.on('tool-execution-executing', async (d) => {
  at(`${d.toolName}: attempt ${d.attemptNumber} executing`)
  if (d.toolName === 'slow' && !killed) {
    killed = true
    await sleep(200)
    a.child.kill('SIGKILL')
    at('A killed mid-call')
  }
})
manager.on('tool-execution-retrying', (d) => {
  at(`retrying after ${d.error.category} ${d.error.code}`)
  // Back a little later than the first retry, so that one attempt finds no server.
  if (restarted === null) {
    restarted = (async () => {
      await a.exited
      await sleep(250)
      a = await startA()
      pids.push(a.child.pid)
      at(`A started again (pid ${a.child.pid})`)
    })()
  }
})

const outcome = await manager.execute('slow', { ms: 500 })
at(outcome.success ? 'succeeded' : `failed: ${outcome.error.code}`)
const info = await manager.execute('process_info', {})
const local_ = await manager.execute('local_clock', {})

await mount.unmount()
a.child.kill('SIGTERM')
const lastExit = await a.exited

console.log(JSON.stringify({
  success: outcome.success,
  result: outcome.result,
  error: outcome.error && { category: outcome.error.category, code: outcome.error.code, message: outcome.error.message },
  attempts: outcome.execution.retry.attemptNumber,
  previousErrors: outcome.execution.retry.previousErrors.map((e) => ({ category: e.category, code: e.code })),
  servedBy: info.result?.pid,
  pids,
  local: local_.result,
  lastExit,
  timeline,
}))
