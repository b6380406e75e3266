// The public classes' instances keep V8's fast properties. A ToolExecutionManager has
// some 40 private fields; once they outgrow the slots V8 gave its instances, it becomes
// a dictionary and each `this.#x` is a hash lookup (B1 went 6.3 -> 5.4 µs/call when a
// Proxy stopped being new.target). Only V8's own check can tell, so the check runs in a
// child process with --allow-natives-syntax.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

const probe = `
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
const shapes = {}
const registry = new ToolRegistry()
registry.register({ name: 'echo', description: 'returns n', inputSchema: { type: 'object' }, handler: async (args) => args })
shapes.registry = %HasFastProperties(registry)
shapes.session = %HasFastProperties(registry.createSession())
const plain = new ToolExecutionManager(registry)
const logged = new ToolExecutionManager(registry, { logging: true, logger: () => {}, metadata: true, retry: { maxAttempts: 2 } })
class Mine extends ToolExecutionManager { extra = 1 }
const mine = new Mine(registry)
for (const m of [plain, logged, mine]) for (let i = 0; i < 50; i++) {
  const r = await m.execute('echo', { n: i })
  if (!r.success) throw new Error(JSON.stringify(r.error))
}
Object.assign(shapes, { manager: %HasFastProperties(plain), logged: %HasFastProperties(logged), subclass: %HasFastProperties(mine), subclassIsOne: mine instanceof ToolExecutionManager && mine.extra === 1 })
console.log(JSON.stringify(shapes))
`

test('registries, sessions, managers and subclassed managers have fast properties after calls', () => {
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.deepEqual(JSON.parse(run.stdout), { registry: true, session: true, manager: true, logged: true, subclass: true, subclassIsOne: true })
})
