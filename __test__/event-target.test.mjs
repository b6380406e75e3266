// DOM events (issue 17): the three public classes are EventTargets, listeners get
// CustomEvents, and addEventListener's options behave as the DOM specifies, in Node and
// in browsers alike.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

function setup() {
  const registry = new ToolRegistry()
  registry.register({ name: 'echo', description: 'Echoes', handler: (args) => args })
  const session = registry.createSession()
  return { registry, session, manager: new ToolExecutionManager(registry) }
}

const register = (target, name) => target.register({ name, description: name, handler: () => name })

describe('EventTarget semantics', () => {
  test('ToolRegistry, ToolSession and ToolExecutionManager are EventTargets', () => {
    const { registry, session, manager } = setup()
    for (const target of [registry, session, manager]) {
      assert.ok(target instanceof EventTarget, target.constructor.name)
      assert.equal(typeof target.dispatchEvent, 'function')
    }
  })

  test('listeners get a CustomEvent whose detail is the event detail, with this = the target', async () => {
    const { manager } = setup()
    let seen
    manager.addEventListener('tool-execution-succeeded', function (event) {
      seen = { event, self: this, currentTarget: event.currentTarget }
    })
    const r = await manager.execute('echo', { a: 1 })
    assert.ok(seen.event instanceof CustomEvent)
    assert.ok(seen.event instanceof Event)
    assert.equal(seen.event.type, 'tool-execution-succeeded')
    assert.equal(seen.event.target, manager)
    assert.equal(seen.currentTarget, manager, 'during dispatch (the DOM resets it to null after)')
    assert.equal(seen.self, manager)
    assert.deepEqual(seen.event.detail, { execution: r.execution, result: { a: 1 } })
  })

  test('{ once: true } delivers one event; adding the same listener twice registers it once', () => {
    const { registry } = setup()
    const once = []
    const twice = []
    const onceListener = (e) => once.push(e.detail.toolName)
    const dup = (e) => twice.push(e.detail.toolName)
    registry.addEventListener('tool-registry-change', onceListener, { once: true })
    registry.addEventListener('tool-registry-change', dup)
    registry.addEventListener('tool-registry-change', dup)
    register(registry, 'a')
    register(registry, 'b')
    assert.deepEqual(once, ['a'])
    assert.deepEqual(twice, ['a', 'b'])
  })

  test('{ signal } removes the listener when it aborts; an aborted signal adds nothing', () => {
    const { registry } = setup()
    const seen = []
    const controller = new AbortController()
    registry.addEventListener('tool-registry-change', (e) => seen.push(e.detail.toolName), { signal: controller.signal })
    registry.addEventListener('tool-registry-change', () => seen.push('never'), { signal: AbortSignal.abort() })
    register(registry, 'a')
    controller.abort()
    register(registry, 'b')
    assert.deepEqual(seen, ['a'])
  })

  test("{ signal }: the signal's abort listener goes with the listener (once, removeEventListener)", async () => {
    // A server's one shutdown signal, a listener per request: each left an abort listener
    // on the signal, and through it its manager (repro: 18,001 on the signal, managers
    // never collected).
    const { manager } = setup()
    const shutdown = new AbortController()
    const onSignal = new Set()
    const { addEventListener: add, removeEventListener: remove } = shutdown.signal
    shutdown.signal.addEventListener = function (type, fn, options) { if (type === 'abort') onSignal.add(fn); return add.call(this, type, fn, options) }
    shutdown.signal.removeEventListener = function (type, fn, options) { if (type === 'abort') onSignal.delete(fn); return remove.call(this, type, fn, options) }
    let fired = 0
    for (let i = 0; i < 20; i++) {
      manager.addEventListener('tool-execution-succeeded', () => fired++, { once: true, signal: shutdown.signal })
      await manager.execute('echo', {})
    }
    for (let i = 0; i < 20; i++) {
      const listener = () => fired++
      manager.addEventListener('tool-execution-succeeded', listener, { signal: shutdown.signal })
      manager.removeEventListener('tool-execution-succeeded', listener)
    }
    assert.equal(fired, 20)
    assert.equal(onSignal.size, 0, 'no abort listener is left on the signal')
    assert.equal(manager.listenerCount('tool-execution-succeeded'), 0)
    // One still registered keeps its abort listener, and the abort removes it.
    manager.addEventListener('tool-execution-succeeded', () => fired++, { signal: shutdown.signal })
    assert.equal(onSignal.size, 1)
    shutdown.abort()
    await manager.execute('echo', {})
    assert.equal(fired, 20)
    assert.equal(manager.listenerCount('tool-execution-succeeded'), 0)
  })

  test('{ signal } that is not an AbortSignal is refused, and adds no listener', () => {
    const { registry } = setup()
    for (const signal of [null, 'abort', {}]) {
      assert.throws(() => registry.addEventListener('tool-registry-change', () => {}, { signal }), { code: 'INVALID_ARGUMENTS' })
    }
    assert.equal(registry.listenerCount('tool-registry-change'), 0)
  })

  test('removeEventListener matches type, listener and capture, and returns nothing', () => {
    const { registry } = setup()
    const seen = []
    const listener = (e) => seen.push(e.detail.toolName)
    registry.addEventListener('tool-registry-change', listener, { capture: true })
    assert.equal(registry.removeEventListener('tool-registry-change', listener), undefined)
    register(registry, 'a')
    assert.deepEqual(seen, ['a'], 'capture must match: the capturing listener stays')
    registry.removeEventListener('tool-registry-change', listener, true)
    register(registry, 'b')
    assert.deepEqual(seen, ['a'])
  })

  test('handleEvent objects work, and dispatchEvent delivers the caller\'s own events', () => {
    const { session } = setup()
    const seen = []
    const handler = { handleEvent(e) { seen.push([this === handler, e.type, e.detail]) } }
    session.addEventListener('custom', handler)
    assert.equal(session.dispatchEvent(new CustomEvent('custom', { detail: 42, cancelable: true })), true)
    assert.deepEqual(seen, [[true, 'custom', 42]])
  })

  test('a session emits the changes of its own tools; the registry emits every change', () => {
    const { registry, session } = setup()
    const onSession = []
    const onRegistry = []
    session.on('tool-registry-change', (d) => onSession.push(d.toolName))
    registry.on('tool-registry-change', (d) => onRegistry.push(d.toolName))
    register(session, 's1')
    register(registry, 'g1')
    assert.deepEqual(onSession, ['s1'])
    assert.deepEqual(onRegistry, ['s1', 'g1'])
  })

  test('on() is the detail-only shorthand and returns an unsubscribe function', async () => {
    const { manager } = setup()
    const seen = []
    const off = manager.on('tool-execution-succeeded', (detail) => seen.push(detail.result))
    await manager.execute('echo', { n: 1 })
    assert.equal(off(), true)
    assert.equal(off(), false, 'a second call removes nothing')
    await manager.execute('echo', { n: 2 })
    assert.deepEqual(seen, [{ n: 1 }])
  })

  test('a listener that throws disturbs neither the execution nor the listeners after it', async () => {
    const { manager } = setup()
    const after = []
    manager.addEventListener('tool-execution-succeeded', () => { throw new Error('listener broke') })
    manager.addEventListener('tool-execution-succeeded', (e) => after.push(e.detail.result))
    const warned = globalThis.process ? new Promise((resolve) => process.once('warning', resolve)) : null
    const r = await manager.execute('echo', { ok: true })
    assert.equal(r.success, true)
    assert.deepEqual(after, [{ ok: true }])
    if (warned) assert.match(String((await warned).message), /listener broke/)
  })

  test('a listener that is not a function or an object is refused; null is ignored, as the DOM does', () => {
    const { manager } = setup()
    assert.throws(() => manager.addEventListener('tool-execution-started', 42), { code: 'INVALID_ARGUMENTS' })
    manager.addEventListener('tool-execution-started', null)
    assert.throws(() => manager.on('tool-execution-started', 'nope'), { code: 'INVALID_ARGUMENTS' })
  })
})
