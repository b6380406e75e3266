// A small AG-UI server: `POST` a RunAgentInput, get the run's events back as
// Server-Sent Events written by @ag-ui/encoder, as any AG-UI server sends them. The
// events come from a `model`: `async function* (input, { signal })`, here a scripted
// one (./model.mjs), so nothing leaves the machine. `signal` aborts when the client
// goes away (an aborted fetch), and the model stops.
//
// `GET` on the same path answers what the server was sent, one entry per run
// (`{ threadId, runId, tools, messages }`): the tests read it, and so can you.
//
// `agUiHandler` is a Node `(req, res, next?)` handler: Vite mounts it as middleware
// (vite.config.js), `startAgUiServer` serves it alone on a port.
import { createServer } from 'node:http'
import { EventEncoder } from '@ag-ui/encoder'

const MAX_BODY = 4 * 1024 * 1024

function readBody(req) {
  return new Promise((resolve, reject) => {
    let size = 0
    const chunks = []
    req.on('data', (chunk) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(Object.assign(new Error(`the request is over ${MAX_BODY} bytes`), { status: 413 }))
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/** What the log keeps of a run's input. */
function summary(input) {
  return {
    threadId: input.threadId,
    runId: input.runId,
    tools: (input.tools ?? []).map((t) => t.name),
    messages: (input.messages ?? []).map((m) => ({ id: m.id, role: m.role, toolCallId: m.toolCallId, content: m.content, error: m.error })),
    forwardedProps: input.forwardedProps,
  }
}

/**
 * The server's request handler. `options.onInput(input)` sees each RunAgentInput as
 * it arrives (the tests use it); `runs` is the log `GET` answers.
 */
export function agUiHandler(model, options = {}) {
  const runs = []
  const handler = async (req, res, next) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' })
      return res.end(JSON.stringify(runs))
    }
    if (req.method !== 'POST') {
      if (typeof next === 'function') return next()
      return res.writeHead(405, { Allow: 'GET, POST' }).end()
    }
    let input
    try {
      input = JSON.parse(await readBody(req))
      if (input === null || typeof input !== 'object' || typeof input.threadId !== 'string' || !Array.isArray(input.messages)) throw new Error('not a RunAgentInput')
    } catch (error) {
      return res.writeHead(error.status ?? 400, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`not a RunAgentInput: ${error.message}`)
    }
    runs.push(summary(input))
    options.onInput?.(input)

    const encoder = new EventEncoder()
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' })
    const gone = new AbortController()
    res.on('close', () => gone.abort())
    try {
      for await (const event of model(input, { signal: gone.signal })) {
        if (gone.signal.aborted) break
        res.write(encoder.encodeSSE(event))
      }
    } catch (error) {
      // The protocol's way to say the run failed: a RUN_ERROR event ends the stream.
      if (!gone.signal.aborted) res.write(encoder.encodeSSE({ type: 'RUN_ERROR', message: String(error?.message ?? error) }))
    }
    res.end()
  }
  handler.runs = runs
  return handler
}

/** Serves `model` on 127.0.0.1 (`port` 0: any free port). Resolves `{ url, runs, close() }`. */
export async function startAgUiServer(model, { port = 0, onInput } = {}) {
  const handler = agUiHandler(model, { onInput })
  const server = createServer((req, res) => {
    handler(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500).end(String(error))
      else res.end()
    })
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    runs: handler.runs,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
