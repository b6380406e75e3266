// The public types check in a project without the optional peer
// @modelcontextprotocol/sdk: `registry.mountMcp` is typed, and `mount.client` falls back
// to McpClientLike (with the SDK installed it is the SDK's Client: types.test-d.ts).
// Node-only: it writes a project to a temporary directory and runs tsc on it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

test('without the MCP SDK the types check, and mount.client is McpClientLike', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-types-'))
  try {
    const pkg = join(dir, 'node_modules', 'toolhost')
    mkdirSync(join(pkg, 'js'), { recursive: true })
    cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'))
    for (const f of readdirSync(join(ROOT, 'js')).filter((f) => f.endsWith('.d.ts') || f.endsWith('.d.mts'))) cpSync(join(ROOT, 'js', f), join(pkg, 'js', f))
    for (const dep of ['json-schema-to-ts', 'ts-algebra']) symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir')
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [] },
      files: ['check.ts'],
    }))
    writeFileSync(join(dir, 'check.ts'), `
import { ToolRegistry } from 'toolhost'
import type { McpClientLike } from './node_modules/toolhost/js/mcp-mount.js'
export async function mount(registry: ToolRegistry) {
  const m = await registry.mountMcp({ url: 'http://127.0.0.1:9/mcp' }, { prefix: 'r_' })
  const client: McpClientLike | null = m.client
  await m.client?.close()
  // @ts-expect-error: McpClientLike has no listTools (the SDK's Client has)
  m.client?.listTools()
  // @ts-expect-error: and it is not any
  const n: number = m.client
  return { client, n, tools: m.tools }
}
`)
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' })
    assert.equal(tsc.status, 0, `tsc failed:\n${tsc.stdout}${tsc.stderr}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
