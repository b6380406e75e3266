// MCP overhead (issue 14): the per-call cost of a mounted tool over loopback, against
// calling the SDK Client directly, on the same server.
//
//   node bench/mcp-overhead.mjs [--quick] [--json out.json]
//
// The server is another process (`--serve`: this file, serving one `echo` tool with
// serveHttp). Side "direct" is the SDK Client's `callTool` on its own session; side
// "mounted" is `manager.execute` of the same tool mounted with `registry.mountMcp({ url })`
// (local validation in Rust, the manager's bookkeeping, then the same `tools/call`).
// The sides alternate in blocks of calls (median of the paired differences), sequential
// calls and then 16 at a time. An in-memory line (no network, server in this process) shows the absolute cost
// toolhost adds on each side of the wire. The last column is the CPU this process spends
// more per mounted call (both sides of the wire in memory), which load elsewhere on the
// machine does not move. Goal: mounted within 10% of direct over loopback.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ToolExecutionManager, ToolRegistry } from '../js/node.mjs'
import { createMcpServer, serveHttp } from '../js/mcp.mjs'
import { median } from './scenarios.mjs'

// The SDK's HTTP client passes one AbortSignal to every fetch of a connection, and
// fetch lets go of its listener on it only when the Request is garbage collected: many
// calls in a row pass Node's warning threshold on both sides alike. Not a leak (the
// listeners go with the Requests); counted, not printed.
let signalWarnings = 0
process.removeAllListeners('warning')
process.on('warning', (w) => {
  if (w.name === 'MaxListenersExceededWarning') signalWarnings++
  else console.error(w)
})

const argv = process.argv.slice(2)
const QUICK = argv.includes('--quick')
const BLOCKS = QUICK ? 6 : 30
const SEQUENTIAL = QUICK ? 600 : 6000
const CONCURRENT = QUICK ? 1200 : 12000
const WIDTH = 16

const ECHO = {
  name: 'echo',
  description: 'Returns its arguments',
  inputSchema: {
    type: 'object',
    properties: { n: { type: 'integer', minimum: 0 }, q: { type: 'string', maxLength: 200 }, flag: { type: 'boolean' } },
    required: ['n', 'q'],
    additionalProperties: false,
  },
  handler: ({ n, q }) => ({ n, q }),
}

function registryWithEcho() {
  const registry = new ToolRegistry()
  registry.register(ECHO)
  return registry
}

function check(value, n) {
  if (value?.n !== n || value?.q !== 'weather in Paris') throw new Error(`wrong result for call ${n}: ${JSON.stringify(value)}`)
}

/** CPU µs per call this process spent in the last `timeCalls` (user + system). */
let lastCpu = 0

/** µs per call of `n` calls of `one(i)`, `width` at a time. */
async function timeCalls(one, n, width) {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  if (width === 1) {
    for (let i = 0; i < n; i++) await one(i)
  } else {
    let next = 0
    await Promise.all(Array.from({ length: width }, async () => {
      while (next < n) await one(next++)
    }))
  }
  const wall = ((performance.now() - t0) * 1000) / n
  const c = process.cpuUsage(c0)
  lastCpu = (c.user + c.system) / n
  return wall
}

/** The two sides over one client connection each to `connect()`. */
async function sides(connectClient, mountSource) {
  const client = await connectClient()
  const direct = async (i) => {
    const r = await client.callTool({ name: 'echo', arguments: { n: i, q: 'weather in Paris', flag: true } })
    check(r.structuredContent, i)
  }
  const local = new ToolRegistry()
  const mount = await local.mountMcp(await mountSource())
  const manager = new ToolExecutionManager(local, { retry: { maxAttempts: 1 }, historyLimit: 100 })
  const mounted = async (i) => {
    const r = await manager.execute('echo', { n: i, q: 'weather in Paris', flag: true })
    if (!r.success) throw new Error(JSON.stringify(r.error))
    check(r.result, i)
  }
  return { direct, mounted, close: async () => { await mount.unmount(); await client.close() } }
}

/**
 * Both sides in alternating blocks (direct then mounted, then mounted then direct, ...),
 * so that load from elsewhere on the machine falls on both alike. The overhead is the
 * median over the pairs of adjacent blocks of (mounted - direct) / direct.
 */
async function compare(s, n, width) {
  const block = Math.max(50, Math.floor(n / BLOCKS))
  await timeCalls(s.direct, block, width) // warm-up
  await timeCalls(s.mounted, block, width)
  const d = []
  const m = []
  const pairs = []
  const cpu = []
  for (let b = 0; b < BLOCKS; b++) {
    // ABBA: which side goes first alternates, so neither gains from its place.
    let x, cx, y, cy
    if (b % 2 === 0) {
      x = await timeCalls(s.direct, block, width)
      cx = lastCpu
      y = await timeCalls(s.mounted, block, width)
      cy = lastCpu
    } else {
      y = await timeCalls(s.mounted, block, width)
      cy = lastCpu
      x = await timeCalls(s.direct, block, width)
      cx = lastCpu
    }
    d.push(x)
    m.push(y)
    pairs.push((y - x) / x)
    cpu.push(cy - cx)
  }
  const direct = median(d)
  const mounted = median(m)
  return {
    direct, mounted, overheadUs: median(m.map((y, i) => y - d[i])), overheadPct: median(pairs) * 100,
    // CPU this (client) process spends more per mounted call: what the local validation,
    // the manager and the mount add, whatever the load on the machine.
    clientCpuUs: median(cpu), block, blocks: { direct: d, mounted: m },
  }
}

async function main() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => resolve(String(d).trim()))
    child.on('exit', (code) => reject(new Error(`the server exited (${code})`)))
  })
  const rows = []
  try {
    const http = await sides(async () => {
      const client = new Client({ name: 'bench-direct', version: '1' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }, async () => ({ url }))
    rows.push(['loopback HTTP, sequential', SEQUENTIAL, await compare(http, SEQUENTIAL, 1)])
    rows.push([`loopback HTTP, ${WIDTH} at a time`, CONCURRENT, await compare(http, CONCURRENT, WIDTH)])
    await http.close()

    const registry = registryWithEcho()
    const manager = new ToolExecutionManager(registry)
    const inMemoryClient = async () => {
      const [a, b] = InMemoryTransport.createLinkedPair()
      await createMcpServer(registry, manager).connect(b)
      const client = new Client({ name: 'bench', version: '1' })
      await client.connect(a)
      return client
    }
    const memory = await sides(inMemoryClient, inMemoryClient)
    rows.push(['in memory (no network), sequential', SEQUENTIAL, await compare(memory, SEQUENTIAL, 1)])
    await memory.close()
  } finally {
    child.kill('SIGTERM')
  }

  const f = (x, d = 1) => x.toFixed(d)
  const out = [
    '## MCP overhead: a mounted tool vs the SDK Client directly',
    '',
    `- CPU: ${os.cpus()[0]?.model ?? 'unknown'} x ${os.cpus().length}; Node ${process.version}; ${new Date().toISOString()}`,
    `- ${BLOCKS} alternating blocks per side; overhead = median over adjacent pairs; ${QUICK ? 'quick' : 'full'} mode; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`,
    '',
    '| transport | calls per side | direct µs/call | mounted µs/call | overhead µs/call | overhead % | client CPU added µs/call |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(([name, n, r]) => `| ${name} | ${(r.block * BLOCKS).toLocaleString('en-US')} | ${f(r.direct)} | ${f(r.mounted)} | ${f(r.overheadUs)} | ${f(r.overheadPct)}% | ${f(r.clientCpuUs)} |`),
  ]
  const loopback = rows.filter(([name]) => name.startsWith('loopback'))
  const worst = Math.max(...loopback.map(([, , r]) => r.overheadPct))
  out.push('', `goal: mounted within 10% of direct over loopback — worst ${f(worst)}%: ${worst <= 10 ? 'met' : 'NOT met'}`)
  if (signalWarnings > 0) out.push(`(${signalWarnings} MaxListenersExceededWarning on the SDK client's shared AbortSignal, not printed)`)
  console.log(out.join('\n'))
  const at = argv.indexOf('--json')
  if (at >= 0) writeFileSync(argv[at + 1], JSON.stringify({ rows: rows.map(([name, n, r]) => ({ name, n, ...r })) }, null, 2))
}

if (argv[0] === '--serve') {
  const registry = registryWithEcho()
  const serving = await serveHttp(registry, new ToolExecutionManager(registry), { name: 'bench' })
  console.log(serving.url)
  process.on('SIGTERM', () => serving.close().then(() => process.exit(0)))
} else {
  await main()
}
