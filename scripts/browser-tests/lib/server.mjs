// A small static HTTP server on 127.0.0.1 (random port) for the test pages: it
// serves the harness's in-memory pages and bundles under /__harness/, and every
// other path from the repository, so files fetched at run time (a package's .wasm
// next to its entry) load from where they are. Responses carry a strict CSP, as
// production pages would; there is deliberately no COOP/COEP (no cross-origin
// isolation, so no SharedArrayBuffer), so the package must work without them.
import { createServer } from 'node:http'
import { readFile, stat } from 'node:fs/promises'
import { extname, join, resolve, sep } from 'node:path'

export const HARNESS_PREFIX = '/__harness/'

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'"

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export const mimeType = (path) => MIME[extname(path).toLowerCase()] ?? 'application/octet-stream'

/**
 * Starts the server. `virtualFiles` maps URL paths under /__harness/ to
 * { contents, type }; the runner adds and removes pages and bundles as it goes.
 * Returns { origin, virtualFiles, close }.
 */
export async function startServer(rootDir) {
  const root = resolve(rootDir)
  const virtualFiles = new Map()

  async function lookup(pathname) {
    if (pathname.startsWith(HARNESS_PREFIX)) return virtualFiles.get(pathname)
    // No dot-files or dot-directories (.git, .env): nothing a test needs lives there.
    if (pathname.split('/').some((part) => part.startsWith('.'))) return undefined
    const file = resolve(join(root, pathname))
    if (file !== root && !file.startsWith(root + sep)) return undefined
    try {
      if (!(await stat(file)).isFile()) return undefined
      return { contents: await readFile(file), type: mimeType(file) }
    } catch {
      return undefined
    }
  }

  const server = createServer(async (request, response) => {
    const headers = {
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff', // a wrong MIME type fails here as it would in production
      'Cache-Control': 'no-store',
    }
    let pathname
    try {
      pathname = decodeURIComponent(new URL(request.url, 'http://127.0.0.1').pathname)
    } catch {
      response.writeHead(400, headers).end()
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, headers).end()
      return
    }
    // Browsers ask for it on their own; answering 404 would log a console error.
    if (pathname === '/favicon.ico') {
      response.writeHead(204, headers).end()
      return
    }
    const file = await lookup(pathname)
    if (!file) {
      response.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end(`not found: ${pathname}\n`)
      return
    }
    response.writeHead(200, { ...headers, 'Content-Type': file.type, 'Content-Length': Buffer.byteLength(file.contents) })
    response.end(request.method === 'HEAD' ? undefined : file.contents)
  })

  await new Promise((resolveListen, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolveListen)
  })
  const { port } = server.address()
  return {
    origin: `http://127.0.0.1:${port}`,
    virtualFiles,
    close: () => new Promise((done) => {
      server.closeAllConnections?.()
      server.close(() => done())
    }),
  }
}
