// Hostile MCP servers, written with the SDK's own low-level `Server`, for the tests of
// what a mount takes in (__test__/mcp-limits.test.mjs): each does one thing a server
// toolhost does not trust may do. `overHttp` serves one on Streamable HTTP, counting
// the response streams its clients closed early.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const OBJECT = { type: 'object', properties: { x: { type: 'number' } } }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A low-level Server whose tools/list is `list(params)` and tools/call is `call(params, extra)`. */
export function hostileServer(list, call = async () => ({ content: [{ type: 'text', text: 'ok' }] })) {
  const server = new Server({ name: 'hostile', version: '6.6.6' }, { capabilities: { tools: {}, logging: {} } })
  const stats = { lists: 0, calls: 0 }
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    stats.lists++
    return list(request.params ?? {})
  })
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    stats.calls++
    return call(request.params, extra, stats)
  })
  return { server, stats }
}

/** `doubling(n)`: n levels of `anyOf: [$ref next, $ref next]` (2^n paths). */
export function doubling(levels) {
  const $defs = {}
  for (let i = 0; i < levels; i++) $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] }
  $defs[`l${levels}`] = { type: 'string' }
  return { type: 'object', properties: { x: { $ref: '#/$defs/l0' } }, required: ['x'], $defs }
}

export const servers = {
  /** Every page has one more tool and the same cursor: a listing that never ends. */
  cursorLoop: () => hostileServer(({ cursor }) => ({ tools: [{ name: `t${cursor ?? 0}`, inputSchema: OBJECT }], nextCursor: 'again' })),

  /** A new cursor every page, for ever (a loop no cursor repeats in). */
  endlessCursor: () => hostileServer(({ cursor }) => ({ tools: [], nextCursor: String(Number(cursor ?? 0) + 1) })),

  /** `n` tools in one page. */
  manyTools: (n) => hostileServer(() => ({ tools: Array.from({ length: n }, (_, i) => ({ name: `tool_${i}`, inputSchema: OBJECT })) })),

  /** One tool whose description is `chars` long. */
  longDescription: (chars) => hostileServer(() => ({ tools: [{ name: 'talker', description: 'x'.repeat(chars), inputSchema: OBJECT }] })),

  /** A 5 MB title (and annotations.title) on a tool with no description, and a toolhost
   * category of 3 MB with 300,001 tags, one of them 100 characters. */
  bigText: () =>
    hostileServer(() => ({
      tools: [
        { name: 'titled', title: 'T'.repeat(5_000_000), annotations: { title: 'A'.repeat(5_000_000) }, inputSchema: OBJECT },
        {
          name: 'tagged', description: 'd', inputSchema: OBJECT,
          _meta: { 'toolhost/metadata': { category: 'C'.repeat(3_000_000), tags: ['x'.repeat(100), ...Array.from({ length: 300_000 }, (_, i) => `tag${i}`)] } },
        },
      ],
    })),

  /** Tools that cannot be mounted (a non-object inputSchema, no name, a huge or costly
   * schema) beside one that can. */
  badTools: () =>
    hostileServer(() => ({
      tools: [
        { name: 'stringly', description: 'its inputSchema is a string', inputSchema: 'string' },
        { description: 'no name', inputSchema: OBJECT },
        { name: 'costly', description: 'validation takes 2^19 steps', inputSchema: doubling(19) },
        { name: 'huge', description: 'a 200 KB schema', inputSchema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string', description: 'padding' }])) } },
        { name: 'fine', description: 'a tool that mounts', inputSchema: OBJECT },
      ],
    })),

  /** `echo` answers with `bytes` of text. */
  hugeResult: (bytes) =>
    hostileServer(
      () => ({ tools: [{ name: 'dump', inputSchema: OBJECT }, { name: 'small', inputSchema: OBJECT }] }),
      async (params) => ({ content: [{ type: 'text', text: params.name === 'dump' ? 'x'.repeat(bytes) : 'small' }] }),
    ),

  /** `stream` never answers: it sends 64 KB log messages on the call's stream until that
   * stream is gone (a send fails, or `stats.stop` is set). */
  endlessStream: () =>
    hostileServer(
      () => ({ tools: [{ name: 'stream', inputSchema: OBJECT }] }),
      async (_params, extra, stats) => {
        const chunk = 'y'.repeat(65_536)
        stats.sent = 0
        while (!stats.stop) {
          try {
            await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: chunk } })
          } catch {
            break
          }
          stats.sent++
          await sleep(2)
        }
        return { content: [{ type: 'text', text: 'never read' }] }
      },
    ),

  /** `busy` reports progress every 10 ms and never answers. */
  progressForever: () =>
    hostileServer(
      () => ({ tools: [{ name: 'busy', inputSchema: OBJECT }] }),
      async (_params, extra) => {
        for (let i = 0; !extra.signal.aborted; i++) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: extra._meta?.progressToken, progress: i } }).catch(() => {})
          await sleep(10)
        }
        return { content: [{ type: 'text', text: 'stopped' }] }
      },
    ),
}

/**
 * Serves `make()` servers on Streamable HTTP on loopback, a session each. Resolves
 * `{ url, stats, close() }`; `stats.closedEarly` counts the response streams a client
 * closed before they ended, `stats.open` the connections open now.
 */
export async function overHttp(make) {
  const http = await import('node:http')
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js')
  const sessions = new Map()
  const stats = { closedEarly: 0, open: 0, servers: [] }
  const httpServer = http.createServer(async (req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) stats.closedEarly++
    })
    const id = req.headers['mcp-session-id']
    let transport = typeof id === 'string' ? sessions.get(id) : undefined
    if (transport === undefined) {
      const made = make()
      stats.servers.push(made.stats)
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => globalThis.crypto.randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, transport) })
      await made.server.connect(transport)
    }
    await transport.handleRequest(req, res)
  })
  httpServer.on('connection', (socket) => {
    stats.open++
    socket.on('close', () => stats.open--)
  })
  await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${httpServer.address().port}/mcp`,
    stats,
    close: () => new Promise((resolve) => {
      httpServer.closeAllConnections()
      httpServer.close(() => resolve())
    }),
  }
}
