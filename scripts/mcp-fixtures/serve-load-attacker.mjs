// The attacker of __test__/serve-load.test.mjs, in its own process so that its work
// does not delay the normal client the test measures: one client (one bearer token)
// opens `sessions` sessions, `parallel` at a time, while `slowloris` sockets from
// another loopback address send a request's headers a byte at a time. Then it ends the
// sessions it got (DELETE). Sends { statuses, maxSlowHeld, slowClosed, slowClosedAfterMs }.
import net from 'node:net'

const { url, port, sessions, parallel, slowloris } = JSON.parse(process.argv[2])
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } })
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer attacker', 'mcp-protocol-version': '2025-11-25' }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// A slow socket is held when the server has not closed it 200 ms after it connected
// (one over the cap is closed at once).
const slow = { held: 0, maxHeld: 0, closed: 0, lastClosed: 0 }
const started = Date.now()
for (let i = 0; i < slowloris; i++) {
  const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' })
  let held = false
  let timer
  let check
  s.on('connect', () => {
    s.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    timer = setInterval(() => s.write('X'), 100)
    check = setTimeout(() => {
      held = true
      slow.held++
      slow.maxHeld = Math.max(slow.maxHeld, slow.held)
    }, 200)
  })
  s.on('error', () => {})
  s.on('close', () => {
    clearInterval(timer)
    clearTimeout(check)
    if (held) slow.held--
    slow.closed++
    slow.lastClosed = Date.now()
  })
}

/** `task(item)` over `items`, `parallel` at a time. */
async function each(items, task) {
  const queue = items.slice()
  await Promise.all(Array.from({ length: parallel }, async () => {
    for (let item = queue.pop(); item !== undefined; item = queue.pop()) await task(item)
  }))
}

const statuses = {}
const ids = []
await each(Array.from({ length: sessions }, (_, i) => i), async () => {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: INIT })
  await res.arrayBuffer()
  statuses[res.status] = (statuses[res.status] ?? 0) + 1
  const id = res.headers.get('mcp-session-id')
  if (id !== null) ids.push(id)
})
process.send({ flooded: true, statuses })
while (slow.closed < slowloris && Date.now() - started < 20_000) await sleep(20)
// A client that leaves ends its sessions.
await each(ids, async (id) => {
  const res = await fetch(url, { method: 'DELETE', headers: { ...HEADERS, 'mcp-session-id': id } })
  await res.arrayBuffer()
})
process.send({ statuses, maxSlowHeld: slow.maxHeld, slowClosed: slow.closed, slowClosedAfterMs: slow.lastClosed - started })
