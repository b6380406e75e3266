// ready(): the engine's load. In Node the engine comes with the module and ready()
// resolves at once; in a browser the first ready() fetches the .wasm (the browser suite
// awaits it before loading this file; what happens before it, and a .wasm that is not
// where the bundle looks, are checked in Chromium by scripts/lit-example-test.mjs).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ToolExecutionManager, ToolRegistry, ready } from 'toolhost'

test('ready() resolves, and the engine works after it', async () => {
  assert.equal(await ready(), undefined)
  assert.equal(await ready(), undefined)
  const registry = new ToolRegistry()
  registry.register({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, handler: ({ text }) => text })
  const r = await new ToolExecutionManager(registry).execute('echo', { text: 'hi' })
  assert.equal(r.result, 'hi')
})

test('ready() refuses a misspelt option or a value that is not options, by rejecting', async () => {
  await assert.rejects(ready({ wams: '/toolhost_wasm_bg.wasm' }), { code: 'INVALID_CONFIG', message: /`wams`.*did you mean `wasm`/ })
  await assert.rejects(ready(42), { code: 'INVALID_CONFIG', message: /ready\(\) takes \{ wasm \}/ })
  await assert.rejects(ready(null), { code: 'INVALID_CONFIG' })
})
