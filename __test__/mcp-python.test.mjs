// A second, independent MCP client (issue 14): the Python SDK (`mcp` from PyPI, pinned
// in scripts/mcp-fixtures/python.mjs and installed into target/ on first use) talks to
// serveHttp on loopback and calls tools. Node-only (python, an HTTP server).
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { serveHttp } from 'toolhost/mcp'
import register from '../scripts/mcp-fixtures/catalog.mjs'
import { pythonWithMcp, PYTHON_MCP_VERSION } from '../scripts/mcp-fixtures/python.mjs'

const CLIENT = fileURLToPath(new URL('../scripts/mcp-fixtures/py_client.py', import.meta.url))
let python
let missing
let serving
let registry

before(async () => {
  const found = await pythonWithMcp()
  python = found.python
  missing = found.missing
  registry = new ToolRegistry()
  register(registry)
  serving = await serveHttp(registry, new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } }), { name: 'catalog', version: '1.0.0' })
}, { timeout: 300_000 })

after(() => serving?.close())

function runPython(url) {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [CLIENT, url], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code !== 0) reject(new Error(`the Python client exited ${code}:\n${err}`))
      else resolve(JSON.parse(out.trim().split('\n').at(-1)))
    })
  })
}

describe(`the Python mcp ${PYTHON_MCP_VERSION} client against serveHttp`, () => {
  test('initializes, lists the tools, calls them, and gets isError results and JSON-RPC errors as the TS SDK does', { timeout: 60_000 }, async (t) => {
    if (missing) return t.skip(missing)
    const seen = await runPython(serving.url)
    assert.deepEqual(seen.server, { name: 'catalog', version: '1.0.0' })
    assert.equal(seen.protocolVersion, '2025-11-25')
    assert.match(seen.sessionId, /^[0-9a-f-]{36}$/)
    assert.deepEqual(seen.tools.map((tool) => tool.name), registry.names)
    const add = seen.tools.find((tool) => tool.name === 'add')
    const listed = registry.toMcpTools().find((tool) => tool.name === 'add')
    assert.deepEqual(add.inputSchema, listed.inputSchema)
    assert.deepEqual(add.outputSchema, listed.outputSchema)
    assert.deepEqual(add.annotations, listed.annotations)
    assert.deepEqual(seen.ok, { isError: false, content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } })
    assert.deepEqual(seen.text, { isError: false, content: [{ type: 'text', text: 'Lyon: sunny for 2 day(s)' }] })
    assert.equal(seen.bad.isError, true)
    assert.match(seen.bad.content[0].text, /^Tool `add` was not run: its arguments do not match its input schema\.\nProblems:\n- `\/a`: "two" is not of type "number"/)
    assert.equal(seen.failed.isError, true)
    assert.match(seen.failed.content[0].text, /^Tool `divide` failed: division by zero \(category: execution, code: EXECUTION_ERROR\)/)
    assert.equal(seen.unknown.code, -32602)
    assert.match(seen.unknown.message, /There is no tool named `no_such_tool`/)
    // The client ended its session with a DELETE when it closed.
    assert.deepEqual(serving.sessions, [])
  })
})
