// The public types as each kind of TypeScript project reads them: an ES module project
// (nodenext, node16, bundler) gets js/*.d.mts, in which the peers' types resolve as the
// user's own imports do; a CommonJS one gets js/*.d.ts. Each case compiles a small
// consumer, with toolhost linked into its node_modules, and the peers it imports.
// Node-only: it writes projects to a temporary directory and runs tsc on them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { esmDeclarations } from '../scripts/esm-declarations.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

/** Runs tsc on `files` (name to text) in a fresh project of `type` ('module' or
 * 'commonjs') with these compiler options; returns tsc's status and output. */
function compile(type, options, files) {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-formats-'))
  try {
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(ROOT, join(dir, 'node_modules', 'toolhost'), 'dir')
    for (const dep of ['@ag-ui', '@modelcontextprotocol']) symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir')
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }))
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022', 'dom'], types: [], ...options },
      files: Object.keys(files),
    }))
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    const tsc = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' })
    return { status: tsc.status, output: `${tsc.stdout}${tsc.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('js/*.d.mts are what scripts/esm-declarations.mjs writes from js/*.d.ts', () => {
  for (const [name, want] of esmDeclarations()) {
    let have = ''
    try { have = readFileSync(join(ROOT, 'js', name), 'utf8') } catch {}
    assert.ok(have === want, `js/${name} is stale: run \`node scripts/esm-declarations.mjs\``)
  }
})

// The README's AG-UI and MCP usage, in an ES module project: toolhost's declarations
// must take @ag-ui/client's and the MCP SDK's ES module types, as the user's imports do
// (their CommonJS twins have "separate declarations of a private property").
const ESM_CONSUMER = `
import { HttpAgent } from '@ag-ui/client'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { createMcpServer } from 'toolhost/mcp'
import { runWithTools } from 'toolhost/ag-ui'
// @ts-expect-error: js/node.mjs has no default export
import toolhost from 'toolhost'
declare module 'toolhost' { interface ToolhostTypes { context: { tenant: string } } }

const registry = new ToolRegistry()
registry.register({ name: 'who', description: 'd', handler: (args, ctx) => ctx.context?.tenant.length })
const manager = new ToolExecutionManager(registry)
export const run = () => runWithTools(new HttpAgent({ url: 'http://127.0.0.1:9/' }), manager)
export const server: Server = createMcpServer(registry, manager)
export async function mount(client: Client) {
  const m = await registry.mountMcp(client)
  const same: Client | null = m.client
  return [same, toolhost]
}
`

for (const [module, moduleResolution] of [['nodenext', 'nodenext'], ['node16', 'node16'], ['esnext', 'bundler']]) {
  test(`an ES module project (${moduleResolution}) type-checks the README's AG-UI and MCP usage`, { timeout: 120_000 }, () => {
    const tsc = compile('module', { module, moduleResolution }, { 'consumer.ts': ESM_CONSUMER })
    assert.equal(tsc.status, 0, `tsc failed:\n${tsc.output}`)
  })
}

test('a CommonJS project (nodenext) hands a registry from toolhost to an imported toolhost/mcp, and cannot require it', { timeout: 120_000 }, () => {
  const tsc = compile('commonjs', { module: 'nodenext', moduleResolution: 'nodenext' }, {
    'consumer.ts': `
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import { runWithTools } from 'toolhost/ag-ui'
export async function serve() {
  const registry = new ToolRegistry()
  const manager = new ToolExecutionManager(registry)
  const { createMcpServer } = await import('toolhost/mcp')
  return [createMcpServer(registry, manager), runWithTools]
}
`,
    // toolhost/mcp is import-only (top-level await): require() of it is refused.
    'required.ts': `
// @ts-expect-error: toolhost/mcp has no require condition
import { META } from 'toolhost/mcp'
export const key = META
`,
  })
  assert.equal(tsc.status, 0, `tsc failed:\n${tsc.output}`)
})

test('moduleResolution node10 (tsc\'s default for --module commonjs) finds the subpaths\' types', { timeout: 120_000 }, () => {
  const tsc = compile('commonjs', { module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true }, {
    'consumer.ts': `
import { ToolRegistry } from 'toolhost'
import type { McpMount } from 'toolhost/mcp'
import type { RunWithToolsOptions } from 'toolhost/ag-ui'
import type { ApprovalDecidedDetail } from 'toolhost/lit'
export let all: [ToolRegistry, McpMount, RunWithToolsOptions, ApprovalDecidedDetail] | undefined
`,
  })
  assert.equal(tsc.status, 0, `tsc failed:\n${tsc.output}`)
})
