// `toolhost serve` (issue 14): the CLI that hosts the tools a module registers, over
// Streamable HTTP here (stdio is in mcp-stdio.test.mjs): the module forms it takes,
// its mistakes, and a clean stop on SIGTERM. Node-only (child processes, files).
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { removeTempDir } from './fixtures/temp-dir.mjs'

const T = { timeout: 30_000 }
const CLI = fileURLToPath(new URL('../js/cli.mjs', import.meta.url))
const CATALOG = fileURLToPath(new URL('../scripts/mcp-fixtures/catalog.mjs', import.meta.url))
// Inside the package, so that `import 'toolhost'` in the modules is the package itself.
const DIR = fileURLToPath(new URL(`../target/mcp-cli-test-${process.pid}/`, import.meta.url))

before(() => {
  mkdirSync(DIR, { recursive: true })
  const tool = "{ name: 'hello', description: 'Says hello', handler: ({ who = 'world' }) => `hello ${who}` }"
  writeFileSync(`${DIR}registry.mjs`, `import { ToolRegistry } from 'toolhost'\nconst registry = new ToolRegistry()\nregistry.register(${tool})\nexport default registry\n`)
  writeFileSync(`${DIR}named.mjs`, `import { ToolRegistry } from 'toolhost'\nexport const registry = new ToolRegistry()\nregistry.register(${tool})\nexport const managerOptions = { timeoutMs: 50, retry: { maxAttempts: 1 } }\nregistry.register({ name: 'stall', description: 'Never answers', handler: () => new Promise(() => {}) })\n`)
  writeFileSync(`${DIR}function.mjs`, `export default function (registry, { ToolExecutionManager }) {\n  registry.register(${tool})\n  return new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })\n}\n`)
  writeFileSync(`${DIR}empty.mjs`, 'export const nothing = 1\n')
  writeFileSync(`${DIR}broken.mjs`, 'export default function ( {\n')
  writeFileSync(`${DIR}tools.ts`, `export default (registry: any) => registry.register(${tool})\n`)
  writeFileSync(`${DIR}stuck.mjs`, 'await new Promise(() => {})\nexport default () => {}\n')
  writeFileSync(`${DIR}approval.mjs`, `export default function (registry) {\n  registry.register({ name: 'pay', description: 'Pays', needsApproval: true, handler: () => 'paid' })\n}\n`)
})
after(() => removeTempDir(DIR))

/** Runs the CLI; resolves { code, stdout, stderr } when it exits. */
function run(args, { timeoutMs = 10_000, env = process.env, node = [] } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...node, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Starts `toolhost serve <module> --http 0`; resolves { child, url, exited }. */
function serveHttp(module, extra = [], env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', module, '--http', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'], env })
    const exited = new Promise((r) => child.on('close', (code, signal) => r({ code, signal })))
    let out = ''
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.stdout.on('data', (d) => {
      out += d
      const m = /at (http:\/\/\S+)/.exec(out)
      if (m) resolve({ child, url: m[1], exited, line: out.trim() })
    })
    exited.then(({ code }) => reject(new Error(`toolhost serve exited (${code}): ${err}`)))
  })
}

async function connect(url, token) {
  const client = new Client({ name: 'cli-test', version: '1.0.0' })
  const requestInit = token === undefined ? undefined : { headers: { authorization: `Bearer ${token}` } }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }))
  return client
}

describe('toolhost serve --http', () => {
  test('serves a module that fills the registry it is given; stops cleanly on SIGTERM', T, async () => {
    const { child, url, exited, line } = await serveHttp(CATALOG, ['--drain', '100'])
    assert.match(line, /^toolhost: serving 10 tools \(add, divide, .*\) at http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await connect(url)
    assert.equal((await client.listTools()).tools.length, 10)
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).structuredContent, { sum: 3 })
    const slow = client.callTool({ name: 'slow', arguments: { ms: 20_000 } }).then(() => 'answered', () => 'failed')
    await new Promise((resolve) => setTimeout(resolve, 200))
    child.kill('SIGTERM')
    // The server exits once the drain (--drain 100) is over, the call in flight
    // cancelled, with status 0. (Windows has no SIGTERM: kill() ends the process there,
    // with no handler run.)
    const end = await exited
    if (process.platform !== 'win32') assert.deepEqual(end, { code: 0, signal: null })
    // The SDK Client never hears back about a call whose stream was cut (it has no
    // resumption token): closing it ends the call. A mount fails it transient instead.
    await client.close()
    assert.equal(await slow, 'failed')
  })

  test('a module exporting a ToolRegistry, as default or as `registry`, with managerOptions', T, async () => {
    for (const file of ['registry.mjs', 'named.mjs', 'function.mjs']) {
      const { child, url, exited } = await serveHttp(`${DIR}${file}`, ['--name', `from-${file}`, '--server-version', '7.0.0'])
      const client = await connect(url)
      assert.deepEqual(client.getServerVersion(), { name: `from-${file}`, version: '7.0.0' })
      assert.deepEqual((await client.callTool({ name: 'hello', arguments: { who: file } })).content, [{ type: 'text', text: `hello ${file}` }])
      if (file === 'named.mjs') {
        const stalled = await client.callTool({ name: 'stall', arguments: {} })
        assert.equal(stalled.isError, true)
        assert.match(stalled.content[0].text, /timed out after 50 ?ms/)
      }
      await client.close()
      child.kill('SIGTERM')
      const end = await exited
      if (process.platform !== 'win32') assert.equal(end.code, 0)
    }
  })
})

describe('toolhost serve: mistakes', () => {
  test('usage, unknown options and modules that give no tools exit 2 saying why', T, async () => {
    const help = await run(['--help'])
    assert.equal(help.code, 0)
    assert.match(help.stdout, /^Usage: toolhost serve <module>/)
    const none = await run([])
    assert.equal(none.code, 2)
    const unknownCommand = await run(['host', CATALOG])
    assert.equal(unknownCommand.code, 2)
    assert.match(unknownCommand.stderr, /unknown command 'host'/)
    const unknownOption = await run(['serve', CATALOG, '--htp'])
    assert.equal(unknownOption.code, 2)
    assert.match(unknownOption.stderr, /unknown option '--htp'/)
    const noModule = await run(['serve', '--stdio'])
    assert.equal(noModule.code, 2)
    assert.match(noModule.stderr, /which module\?/)
    const empty = await run(['serve', `${DIR}empty.mjs`, '--http', '0'])
    assert.equal(empty.code, 2)
    assert.match(empty.stderr, /must export \(default, or as `registry`\) a ToolRegistry or a function/)
    const broken = await run(['serve', `${DIR}broken.mjs`, '--http', '0'])
    assert.equal(broken.code, 2)
    assert.match(broken.stderr, /could not load .*broken\.mjs: SyntaxError/)
    const badPort = await run(['serve', CATALOG, '--http', '--port', '70000'])
    assert.equal(badPort.code, 2)
    assert.match(badPort.stderr, /port must be an integer/)
    // An empty value read as 0: a random port, or no time to drain (adversarial pass, stop 44).
    for (const flags of [['--port', ''], ['--port', ' '], ['--drain', '']]) {
      const blank = await run(['serve', CATALOG, '--http', ...flags])
      assert.equal(blank.code, 2, `${flags.join(' ')}: ${blank.stderr}`)
      assert.match(blank.stderr, flags[0] === '--port' ? /port must be an integer/ : /--drain must be a number of milliseconds/)
    }
  })

  test('a port in use is said in one line, not a stack trace (adversarial pass, stop 44)', T, async () => {
    const { createServer } = await import('node:net')
    const taken = createServer()
    await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = taken.address()
      const busy = await run(['serve', CATALOG, '--http', String(port)])
      assert.equal(busy.code, 1)
      assert.equal(busy.stderr.trim(), `toolhost: 127.0.0.1 port ${port} is already in use: stop what listens there, or pick another with --http <port>`)
    } finally {
      taken.close()
    }
  })

  test('a bad --path, a host that only looks like loopback, and HTTP flags with --stdio are refused before the module loads (adversarial pass, cli-flags.sh)', T, async () => {
    // broken.mjs cannot load: a refusal that names the flag came before loading it.
    const BROKEN = `${DIR}broken.mjs`
    const { TOOLHOST_TOKEN: _, ...noToken } = process.env
    const path = await run(['serve', BROKEN, '--http', '0', '--path', 'mcp'])
    assert.equal(path.code, 2)
    assert.match(path.stderr, /--path must be a URL path starting with '\/', with no query or fragment \(such as \/mcp\), not 'mcp'/)
    const query = await run(['serve', BROKEN, '--http', '0', '--path', '/mcp?x=1'])
    assert.equal(query.code, 2)
    assert.match(query.stderr, /--path must be a URL path/)
    const lookalike = await run(['serve', BROKEN, '--http', '0', '--host', '127.attacker.example'], { env: noToken })
    assert.equal(lookalike.code, 1)
    assert.match(lookalike.stderr, /listening on 127\.attacker\.example lets anyone who reaches it run every tool/)
    const stdio = await run(['serve', BROKEN, '--stdio', '--host', '0.0.0.0', '--stateless', '--port', '9000', '--path', '/x'])
    assert.equal(stdio.code, 2)
    assert.match(stdio.stderr, /--host, --stateless, --port, --path are for --http, and this serves over stdio/)
    const bare = await run(['serve', BROKEN, '--no-auth'])
    assert.equal(bare.code, 2)
    assert.match(bare.stderr, /--no-auth is for --http/)
    for (const r of [path, query, lookalike, stdio, bare]) assert.doesNotMatch(r.stderr, /could not load/)
    // Real loopback addresses need no token.
    for (const host of ['127.0.0.2', '::1']) {
      const served = await serveHttp(CATALOG, ['--host', host], noToken)
      assert.match(served.line, /serving \d+ tools/, host)
      served.child.kill('SIGKILL')
      await served.exited
    }
  })
})

describe('toolhost serve at the trust boundary', () => {
  test('finding 3: TOOLHOST_TOKEN makes every request carry the token; a non-loopback host needs it or --no-auth', T, async () => {
    const env = { ...process.env, TOOLHOST_TOKEN: 'cli-secret' }
    const { child, url, exited, line } = await serveHttp(CATALOG, [], env)
    assert.match(line, /bearer token from TOOLHOST_TOKEN/)
    await assert.rejects(connect(url), /Unauthorized/)
    await assert.rejects(connect(url, 'wrong'), /Unauthorized/)
    const client = await connect(url, 'cli-secret')
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 2, b: 2 } })).structuredContent, { sum: 4 })
    await client.close()
    child.kill('SIGTERM')
    assert.equal((await exited).code, 0)

    const { TOOLHOST_TOKEN: _, ...noToken } = process.env
    const open = await run(['serve', CATALOG, '--http', '0', '--host', '0.0.0.0'], { env: noToken })
    assert.equal(open.code, 1)
    assert.match(open.stderr, /listening on 0\.0\.0\.0 lets anyone who reaches it run every tool: set TOOLHOST_TOKEN .* or pass --no-auth/)
    // A token no header can carry (read trimmed) is refused, not a server no one can use.
    const blank = await run(['serve', CATALOG, '--http', '0'], { env: { ...noToken, TOOLHOST_TOKEN: '  ' } })
    assert.equal(blank.code, 1)
    assert.match(blank.stderr, /TOOLHOST_TOKEN is only whitespace/)
    const anyone = await serveHttp(CATALOG, ['--host', '0.0.0.0', '--no-auth'], noToken)
    assert.match(anyone.line, /WITHOUT authentication: --no-auth/)
    anyone.child.kill('SIGTERM')
    await anyone.exited
  })

  test('finding 8: SIGTERM drains: a call in flight is answered before the process exits', T, async () => {
    const { child, url, exited } = await serveHttp(CATALOG)
    const client = await connect(url)
    const slow = client.callTool({ name: 'slow', arguments: { ms: 400 } })
    await new Promise((resolve) => setTimeout(resolve, 150))
    child.kill('SIGTERM')
    const answered = await slow
    assert.equal(answered.isError, undefined, JSON.stringify(answered))
    assert.deepEqual(await exited, { code: 0, signal: null })
    await client.close()
  })

  test('issue 22: a tool that needs approval is denied with a clear reply unless there is a way to decide', T, async () => {
    const { child, url, exited } = await serveHttp(`${DIR}approval.mjs`)
    const client = await connect(url)
    const denied = await client.callTool({ name: 'pay', arguments: {} })
    assert.equal(denied.isError, true)
    assert.match(denied.content[0].text, /denied: the MCP client cannot be asked \(it does not support elicitation\)/)
    await client.close()
    child.kill('SIGTERM')
    await exited
    const allow = await serveHttp(`${DIR}approval.mjs`, ['--approval', 'allow'])
    const c2 = await connect(allow.url)
    assert.equal((await c2.callTool({ name: 'pay', arguments: {} })).content[0].text, 'paid')
    await c2.close()
    allow.child.kill('SIGTERM')
    await allow.exited
    const bad = await run(['serve', CATALOG, '--approval', 'maybe'])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /--approval must be one of elicit, deny, allow, manager/)
  })

  test('issue 22: a TypeScript module is met with how to run it; finding 16: a top-level await that never settles is an error', T, async () => {
    const ts = await run(['serve', `${DIR}tools.ts`, '--http', '0'])
    if (ts.code === null || /serving/.test(ts.stdout)) return // a Node that runs TypeScript by itself
    assert.equal(ts.code, 1)
    assert.match(ts.stderr, /does not run TypeScript by itself/)
    assert.match(ts.stderr, /node --import tsx node_modules\/toolhost\/js\/cli\.mjs serve .*tools\.ts/)
    assert.match(ts.stderr, /--experimental-strip-types/)
    const stuck = await run(['serve', `${DIR}stuck.mjs`, '--http', '0'])
    assert.equal(stuck.code, 1)
    assert.match(stuck.stderr, /stuck\.mjs never finished loading: its top-level await did not settle/)
  })

  test('issue 22: without @modelcontextprotocol/sdk, toolhost serve, toolhost/mcp and mountMcp say how to install it', T, async () => {
    const noSdk = fileURLToPath(new URL('../scripts/mcp-fixtures/no-sdk.mjs', import.meta.url))
    const serve = await run(['serve', CATALOG, '--http', '0'], { node: ['--import', noSdk] })
    assert.equal(serve.code, 1)
    assert.match(serve.stderr, /toolhost\/mcp needs the MCP SDK, an optional peer dependency that is not installed: npm install @modelcontextprotocol\/sdk/)
    const script = `
      import('toolhost/mcp').catch((e) => console.log('mcp', e.code, e.message))
        .then(() => import('toolhost'))
        .then(({ ToolRegistry }) => new ToolRegistry().mountMcp({ url: 'http://127.0.0.1:9/mcp' }))
        .catch((e) => console.log('mount', e.code, e.message))`
    const out = await new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', noSdk, '--input-type=module', '-e', script], { cwd: DIR, stdio: ['ignore', 'pipe', 'pipe'] })
      let text = ''
      child.stdout.on('data', (d) => (text += d))
      child.on('close', () => resolve(text))
    })
    assert.match(out, /^mcp MCP_SDK_MISSING .*npm install @modelcontextprotocol\/sdk$/m)
    assert.match(out, /^mount MCP_SDK_MISSING .*npm install @modelcontextprotocol\/sdk$/m)
  })
})
