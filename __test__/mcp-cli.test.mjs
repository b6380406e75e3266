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
})
after(() => removeTempDir(DIR))

/** Runs the CLI; resolves { code, stdout, stderr } when it exits. */
function run(args, { timeoutMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
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
function serveHttp(module, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', module, '--http', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
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

async function connect(url) {
  const client = new Client({ name: 'cli-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

describe('toolhost serve --http', () => {
  test('serves a module that fills the registry it is given; stops cleanly on SIGTERM', T, async () => {
    const { child, url, exited, line } = await serveHttp(CATALOG)
    assert.match(line, /^toolhost: serving 10 tools \(add, divide, .*\) at http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await connect(url)
    assert.equal((await client.listTools()).tools.length, 10)
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).structuredContent, { sum: 3 })
    const slow = client.callTool({ name: 'slow', arguments: { ms: 20_000 } }).then(() => 'answered', () => 'failed')
    await new Promise((resolve) => setTimeout(resolve, 200))
    child.kill('SIGTERM')
    // The server exits at once (the call in flight is cancelled), with status 0. (Windows
    // has no SIGTERM: kill() ends the process there, with no handler run.)
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
  })
})
