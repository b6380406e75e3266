// Sessions (issue 4): per-session tool sets, visibility and shadowing, isolated sessions,
// executing with { sessionId }, and destroy() semantics (cancel in-flight, free tools and
// records, 'session-destroyed' event, idempotent).
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A tool definition with an object schema. */
function tool(name, handler, extra = {}) {
  return { name, description: `the ${name} tool`, inputSchema: { type: 'object' }, handler, ...extra }
}

/** A handler that never finishes on its own; it resolves once its signal aborts. */
function holdUntilAborted(signals) {
  return (args, ctx) => {
    signals?.push(ctx.signal)
    return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('too late'), { once: true }))
  }
}

describe('what a session offers', () => {
  test('createSession gives a live session with a UUID v4 id; isolated defaults to false', () => {
    const registry = new ToolRegistry()
    const s = registry.createSession()
    const iso = registry.createSession({ isolated: true })
    assert.match(s.id, UUID_V4)
    assert.match(iso.id, UUID_V4)
    assert.notEqual(s.id, iso.id)
    assert.equal(s.isolated, false)
    assert.equal(iso.isolated, true)
    assert.equal(registry.createSession({ isolated: false }).isolated, false)
    assert.equal(registry.createSession(null).isolated, false)
    assert.equal(s.alive, true)
  })

  test('createSession refuses an isolated flag that is not a boolean, and options that are not an object', () => {
    // Read as false, { isolated: 'yes' } would show the session every global tool.
    const registry = new ToolRegistry()
    for (const isolated of ['yes', 1, {}]) {
      assert.throws(() => registry.createSession({ isolated }), { code: 'INVALID_CONFIG', message: 'createSession: isolated must be true or false' })
    }
    assert.throws(() => registry.createSession(true), { code: 'INVALID_CONFIG', message: 'createSession: options must be an object' })
    assert.deepEqual(registry.sessions, [])
  })

  test('registry.sessions lists live ids oldest first; getSession looks one up', () => {
    const registry = new ToolRegistry()
    assert.deepEqual(registry.sessions, [])
    const ids = Array.from({ length: 4 }, (_, i) => registry.createSession({ isolated: i % 2 === 0 }).id)
    assert.deepEqual(registry.sessions, ids)
    const found = registry.getSession(ids[2])
    assert.equal(found.id, ids[2])
    assert.equal(found.isolated, true)
    assert.equal(registry.getSession(ids[1]).isolated, false)
    assert.equal(registry.getSession(ids[0]).alive, true)
    registry.getSession(ids[1]).destroy()
    assert.deepEqual(registry.sessions, [ids[0], ids[2], ids[3]])
    assert.equal(registry.getSession(ids[1]), undefined)
    assert.equal(registry.getSession('00000000-0000-4000-8000-000000000000'), undefined)
  })

  test('getSession of an unknown id returns undefined, as its documentation says', () => {
    const registry = new ToolRegistry()
    assert.equal(registry.getSession('no-such-session'), undefined)
  })

  test('register/get/has/names/unregister/validate are scoped to the session', () => {
    const registry = new ToolRegistry()
    registry.register(tool('global_tool', () => 'g'))
    const s = registry.createSession()
    const decl = s.register(tool('read_cart', (a) => a, {
      inputSchema: { type: 'object', properties: { cartId: { type: 'string' } }, required: ['cartId'] },
    }))
    assert.equal(decl.name, 'read_cart')
    assert.equal(s.has('read_cart'), true)
    assert.equal(s.get('read_cart').description, 'the read_cart tool')
    assert.equal(s.get('missing'), undefined)
    assert.deepEqual([...s.names].sort(), ['global_tool', 'read_cart'])
    assert.deepEqual(s.validate('read_cart', { cartId: 'c1' }).valid, true)
    const invalid = s.validate('read_cart', {})
    assert.equal(invalid.valid, false)
    assert.equal(invalid.errors[0].keyword, 'required')
    assert.equal(s.validate('read_cart', '{"cartId":"c9"}').valid, true)
    assert.throws(() => s.validate('missing', {}), { code: 'TOOL_NOT_FOUND' })
    assert.throws(() => s.register(tool('read_cart', () => 1)), { code: 'DUPLICATE_TOOL' })
    // nothing leaked into the global registry
    assert.equal(registry.has('read_cart'), false)
    assert.equal(registry.get('read_cart'), undefined)
    assert.deepEqual(registry.names, ['global_tool'])
    assert.throws(() => registry.validate('read_cart', { cartId: 'c1' }), { code: 'TOOL_NOT_FOUND' })
    // unregister
    assert.equal(s.unregister('read_cart'), true)
    assert.equal(s.unregister('read_cart'), false)
    assert.equal(s.has('read_cart'), false)
    assert.deepEqual(s.names, ['global_tool'])
  })

  test('session.unregister cannot remove a global tool', () => {
    const registry = new ToolRegistry()
    registry.register(tool('shared', () => 1))
    const s = registry.createSession()
    assert.equal(s.unregister('shared'), false)
    assert.equal(registry.has('shared'), true)
    assert.equal(s.has('shared'), true)
  })

  test('declarations() and provider exports hold every tool visible in the session', () => {
    const registry = new ToolRegistry()
    registry.register(tool('g1', () => 1))
    registry.register(tool('g2', () => 1))
    const s = registry.createSession()
    s.register(tool('own', () => 1))
    const names = s.declarations().map((d) => d.name)
    assert.deepEqual(names, ['own', 'g1', 'g2'])
    assert.deepEqual(s.toOpenAITools().map((t) => t.function.name).sort(), ['g1', 'g2', 'own'])
    assert.deepEqual(s.toAnthropicTools().map((t) => t.name).sort(), ['g1', 'g2', 'own'])
    assert.deepEqual(s.toMcpTools().map((t) => t.name).sort(), ['g1', 'g2', 'own'])
    // the global exports do not carry the session's tool
    assert.deepEqual(registry.toOpenAITools().map((t) => t.function.name), ['g1', 'g2'])
  })

  test('registry.clear() removes global tools but sessions keep theirs', () => {
    const registry = new ToolRegistry()
    registry.register(tool('g', () => 1))
    const s = registry.createSession()
    s.register(tool('own', () => 1))
    registry.clear()
    assert.deepEqual(registry.names, [])
    assert.deepEqual(s.names, ['own'])
  })

  test('session register/unregister emit tool-registry-change with the sessionId', () => {
    const registry = new ToolRegistry()
    const s = registry.createSession()
    const events = []
    registry.on('tool-registry-change', (d) => events.push(d))
    s.register(tool('own', () => 1))
    s.unregister('own')
    assert.deepEqual(events.map((e) => [e.action, e.toolName, e.sessionId]), [
      ['registered', 'own', s.id],
      ['unregistered', 'own', s.id],
    ])
  })
})

describe('which tools a session sees', () => {
  test('two sessions cannot see or execute each other\'s tools', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const alice = registry.createSession()
    const bob = registry.createSession()
    let aliceCalls = 0
    let bobCalls = 0
    alice.register(tool('alice_cart', () => { aliceCalls++; return 'alice' }))
    bob.register(tool('bob_cart', () => { bobCalls++; return 'bob' }))

    assert.equal(alice.has('bob_cart'), false)
    assert.equal(alice.get('bob_cart'), undefined)
    assert.equal(alice.names.includes('bob_cart'), false)
    assert.equal(alice.declarations().some((d) => d.name === 'bob_cart'), false)
    assert.throws(() => alice.validate('bob_cart', {}), { code: 'TOOL_NOT_FOUND' })
    assert.equal(bob.has('alice_cart'), false)
    assert.equal(bob.names.includes('alice_cart'), false)
    assert.equal(registry.has('alice_cart'), false)
    assert.equal(registry.has('bob_cart'), false)

    const crossA = await manager.execute('bob_cart', {}, { sessionId: alice.id })
    assert.equal(crossA.success, false)
    assert.equal(crossA.error.category, 'not_found')
    assert.equal(crossA.error.code, 'TOOL_NOT_FOUND')
    const crossB = await manager.execute('alice_cart', {}, { sessionId: bob.id })
    assert.equal(crossB.error.code, 'TOOL_NOT_FOUND')
    const global = await manager.execute('alice_cart', {})
    assert.equal(global.error.code, 'TOOL_NOT_FOUND')
    assert.equal(aliceCalls + bobCalls, 0)

    assert.equal((await manager.execute('alice_cart', {}, { sessionId: alice.id })).result, 'alice')
    assert.equal((await manager.execute('bob_cart', {}, { sessionId: bob.id })).result, 'bob')
    assert.deepEqual([aliceCalls, bobCalls], [1, 1])
  })

  test('two sessions may each register the same name independently', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const a = registry.createSession()
    const b = registry.createSession()
    a.register(tool('cart', () => 'a'))
    b.register(tool('cart', () => 'b'))
    assert.equal((await manager.execute('cart', {}, { sessionId: a.id })).result, 'a')
    assert.equal((await manager.execute('cart', {}, { sessionId: b.id })).result, 'b')
    a.unregister('cart')
    assert.equal(b.has('cart'), true)
  })

  test('global tools are visible in a non-isolated session, including ones registered later', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register(tool('early', () => 'early'))
    const s = registry.createSession({ isolated: false })
    registry.register(tool('late', () => 'late'))
    assert.equal(s.has('early'), true)
    assert.equal(s.has('late'), true)
    assert.equal(s.get('late').name, 'late')
    assert.deepEqual([...s.names].sort(), ['early', 'late'])
    const r = await manager.execute('late', {}, { sessionId: s.id })
    assert.equal(r.success, true)
    assert.equal(r.result, 'late')
    assert.equal(r.execution.sessionId, s.id)
    registry.unregister('late')
    assert.equal(s.has('late'), false)
  })

  test('an isolated session sees no global tool', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    let globalCalls = 0
    registry.register(tool('g', () => { globalCalls++; return 'g' }))
    const s = registry.createSession({ isolated: true })
    s.register(tool('own', () => 'own'))
    assert.equal(s.has('g'), false)
    assert.equal(s.get('g'), undefined)
    assert.deepEqual(s.names, ['own'])
    assert.deepEqual(s.declarations().map((d) => d.name), ['own'])
    assert.deepEqual(s.toOpenAITools().map((t) => t.function.name), ['own'])
    assert.throws(() => s.validate('g', {}), { code: 'TOOL_NOT_FOUND' })
    const r = await manager.execute('g', {}, { sessionId: s.id })
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'TOOL_NOT_FOUND')
    assert.equal(globalCalls, 0)
    assert.equal((await manager.execute('own', {}, { sessionId: s.id })).result, 'own')
    // outside the session the global tool still works
    assert.equal((await manager.execute('g', {})).result, 'g')
  })

  test('a session tool shadows a global one inside the session only', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register(tool('lookup', () => 'global', {
      description: 'global lookup',
      inputSchema: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] },
    }))
    const s = registry.createSession()
    const other = registry.createSession()
    s.register(tool('lookup', () => 'session', {
      description: 'session lookup',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    }))

    assert.equal(s.get('lookup').description, 'session lookup')
    assert.equal(registry.get('lookup').description, 'global lookup')
    assert.equal(other.get('lookup').description, 'global lookup')
    assert.deepEqual(s.names.filter((n) => n === 'lookup'), ['lookup'])
    const decls = s.declarations().filter((d) => d.name === 'lookup')
    assert.deepEqual(decls.map((d) => d.description), ['session lookup'])
    assert.deepEqual(s.toOpenAITools().filter((t) => t.function.name === 'lookup').map((t) => t.function.description), ['session lookup'])
    // validation uses the shadowing schema
    assert.equal(s.validate('lookup', { id: 'x' }).valid, true)
    assert.equal(s.validate('lookup', { id: 1 }).valid, false)
    assert.equal(registry.validate('lookup', { id: 1 }).valid, true)

    assert.equal((await manager.execute('lookup', { id: 'x' }, { sessionId: s.id })).result, 'session')
    assert.equal((await manager.execute('lookup', { id: 1 })).result, 'global')
    assert.equal((await manager.execute('lookup', { id: 1 }, { sessionId: other.id })).result, 'global')
    const wrongType = await manager.execute('lookup', { id: 1 }, { sessionId: s.id })
    assert.equal(wrongType.error.code, 'INVALID_ARGUMENTS')

    // removing the session's tool uncovers the global one again
    assert.equal(s.unregister('lookup'), true)
    assert.equal(registry.has('lookup'), true)
    assert.equal(s.get('lookup').description, 'global lookup')
    assert.equal((await manager.execute('lookup', { id: 1 }, { sessionId: s.id })).result, 'global')
  })
})

describe('executing in a session', () => {
  test('an unknown session id gives not_found / SESSION_NOT_FOUND without running anything', async () => {
    const registry = new ToolRegistry()
    let calls = 0
    registry.register(tool('g', () => { calls++; return 1 }))
    const manager = new ToolExecutionManager(registry)
    for (const sessionId of ['nope', '00000000-0000-4000-8000-000000000000']) {
      const r = await manager.execute('g', {}, { sessionId })
      assert.equal(r.success, false)
      assert.equal(r.error.category, 'not_found')
      assert.equal(r.error.code, 'SESSION_NOT_FOUND')
      assert.equal(r.execution.status, 'failed')
    }
    assert.equal(calls, 0)
  })

  test('a destroyed session gives SESSION_NOT_FOUND, even for a global tool', async () => {
    const registry = new ToolRegistry()
    let calls = 0
    registry.register(tool('g', () => { calls++; return 1 }))
    const manager = new ToolExecutionManager(registry)
    const s = registry.createSession()
    s.register(tool('own', () => { calls++; return 2 }))
    assert.equal((await manager.execute('own', {}, { sessionId: s.id })).result, 2)
    s.destroy()
    for (const name of ['own', 'g']) {
      const r = await manager.execute(name, {}, { sessionId: s.id })
      assert.equal(r.success, false)
      assert.equal(r.error.category, 'not_found')
      assert.equal(r.error.code, 'SESSION_NOT_FOUND')
    }
    assert.equal(calls, 1)
  })

  test('the handler and execution record carry the sessionId', async () => {
    const registry = new ToolRegistry()
    const s = registry.createSession()
    let seen
    s.register(tool('own', (args, ctx) => { seen = ctx.sessionId; return args.n * 2 }))
    const manager = new ToolExecutionManager(registry)
    const r = await manager.execute('own', { n: 21 }, { sessionId: s.id })
    assert.equal(r.result, 42)
    assert.equal(r.execution.sessionId, s.id)
    assert.equal(manager.getExecution(r.execution.id).sessionId, s.id)
    assert.equal(seen, s.id)
  })
})

describe('destroying a session', () => {
  test('destroy during an in-flight execution cancels it: status cancelled, CANCELLED, signal aborted', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const s = registry.createSession()
    const signals = []
    s.register(tool('wait', holdUntilAborted(signals)))
    const pending = manager.execute('wait', {}, { sessionId: s.id, toolCallId: 'call_wait' })
    await sleep(10)
    assert.equal(manager.inFlight, 1)
    assert.equal(signals.length, 1)
    assert.equal(signals[0].aborted, false)
    const id = manager.getExecutionsForToolCall('call_wait')[0].id

    s.destroy()
    const r = await pending
    assert.equal(r.success, false)
    assert.equal(r.execution.status, 'cancelled')
    assert.equal(r.error.category, 'cancelled')
    assert.equal(r.error.code, 'CANCELLED')
    assert.equal(r.execution.id, id)
    assert.equal(signals[0].aborted, true)
    assert.equal(manager.inFlight, 0)
  })

  test('destroy cancels the session\'s executions in every state and every manager, and nothing else', async () => {
    const registry = new ToolRegistry()
    const slowRetry = new ToolExecutionManager(registry, { retry: { baseDelay: 5000, maxDelay: 5000, jitter: 'none' } })
    const queued = new ToolExecutionManager(registry, { maxConcurrency: 1 })
    registry.register(tool('gwait', holdUntilAborted()))
    const doomed = registry.createSession()
    const survivor = registry.createSession()
    let flakyCalls = 0
    doomed.register(tool('wait', holdUntilAborted()))
    doomed.register(tool('flaky', () => { flakyCalls++; throw transientError('again') }))
    survivor.register(tool('wait', holdUntilAborted()))

    const inDoomed = [
      slowRetry.execute('wait', {}, { sessionId: doomed.id }), // executing
      slowRetry.execute('flaky', {}, { sessionId: doomed.id }), // waiting 5 s before attempt 2
      slowRetry.execute('gwait', {}, { sessionId: doomed.id }), // a global tool run in the session
      queued.execute('wait', {}, { sessionId: doomed.id }), // executing in another manager
      queued.execute('wait', {}, { sessionId: doomed.id }), // pending behind it
    ]
    const survivorCall = slowRetry.execute('wait', {}, { sessionId: survivor.id })
    const globalCall = slowRetry.execute('gwait', {})
    await sleep(20)
    assert.equal(flakyCalls, 1)

    const started = performance.now()
    doomed.destroy()
    const results = await Promise.all(inDoomed)
    assert.ok(performance.now() - started < 1000, 'the retry backoff was not waited out')
    for (const r of results) {
      assert.equal(r.execution.status, 'cancelled')
      assert.equal(r.error.code, 'CANCELLED')
    }
    assert.equal(flakyCalls, 1)

    await sleep(10)
    assert.equal(slowRetry.inFlight, 2, 'the other session and the global call keep running')
    assert.equal(queued.inFlight, 0)
    slowRetry.cancelAll()
    assert.equal((await survivorCall).execution.status, 'cancelled')
    assert.equal((await globalCall).execution.status, 'cancelled')
  })

  test('destroy frees the session\'s tools and records, but not other sessions\' records', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const other = new ToolExecutionManager(registry)
    registry.register(tool('g', () => 'g'))
    const doomed = registry.createSession()
    const survivor = registry.createSession()
    doomed.register(tool('own', () => 'own'))
    survivor.register(tool('own', () => 'own'))

    const doomedRuns = [
      await manager.execute('own', {}, { sessionId: doomed.id, toolCallId: 'doomed_call' }),
      await manager.execute('g', {}, { sessionId: doomed.id }),
      await other.execute('own', {}, { sessionId: doomed.id }),
    ]
    const keptRuns = [
      await manager.execute('own', {}, { sessionId: survivor.id, toolCallId: 'kept_call' }),
      await manager.execute('g', {}),
    ]
    assert.equal(manager.getExecution(doomedRuns[0].execution.id).status, 'succeeded')
    assert.equal(other.getExecution(doomedRuns[2].execution.id).status, 'succeeded')

    doomed.destroy()
    assert.equal(doomed.alive, false)
    assert.equal(manager.getExecution(doomedRuns[0].execution.id), undefined)
    assert.equal(manager.getExecution(doomedRuns[1].execution.id), undefined)
    assert.equal(other.getExecution(doomedRuns[2].execution.id), undefined)
    assert.deepEqual(manager.getExecutionsForToolCall('doomed_call'), [])
    for (const r of keptRuns) assert.equal(manager.getExecution(r.execution.id).status, 'succeeded')
    assert.equal(manager.getExecutionsForToolCall('kept_call').length, 1)

    // tools are gone: the session handle is inert, the id is no longer listed
    assert.equal(doomed.has('own'), false)
    assert.equal(doomed.get('own'), undefined)
    assert.deepEqual(doomed.names, [])
    assert.deepEqual(registry.sessions, [survivor.id])
    assert.equal(registry.getSession(doomed.id) == null, true)
    assert.throws(() => doomed.register(tool('again', () => 1)), { code: 'SESSION_NOT_FOUND' })
    assert.equal(survivor.has('own'), true)
    assert.equal(registry.has('g'), true)
  })

  test("each session's tool has its own circuit breaker, which goes with the session", async () => {
    // Soak repro: user B's fresh session tool was refused CIRCUIT_OPEN, without running,
    // because user A's destroyed session had opened the breaker of the same name.
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const metadata = { circuitBreaker: { failureThreshold: 2, recoveryTimeoutMs: 60_000, successThreshold: 1 } }
    const a = registry.createSession()
    a.register(tool('read_cart', () => { throw new Error('cart service of user A is down') }, { metadata }))
    for (let i = 0; i < 2; i++) assert.equal((await manager.execute('read_cart', {}, { sessionId: a.id })).success, false)
    assert.equal((await manager.execute('read_cart', {}, { sessionId: a.id })).error.code, 'CIRCUIT_OPEN')
    let ran = 0
    const working = tool('read_cart', () => { ran++; return ['book'] }, { metadata })
    const live = registry.createSession()
    live.register(working)
    assert.deepEqual((await manager.execute('read_cart', {}, { sessionId: live.id })).result, ['book'], "another live session's tool runs")
    a.destroy()
    const b = registry.createSession()
    b.register(working)
    const r = await manager.execute('read_cart', {}, { sessionId: b.id })
    assert.deepEqual([r.success, r.result, ran], [true, ['book'], 2])
  })

  test("destroy frees the statistics and last errors of the session's own tools; a global tool's stay", async () => {
    // Soak repro: a session tool named for its user failed once, then its session was
    // destroyed: its statistics and last error (with the thrown cause, a 10 KB response
    // body) were kept for every session ever (+10.9 KB each).
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    registry.register(tool('now', () => 'noon'))
    const session = registry.createSession()
    session.register(tool('cart_of_user_7', () => { throw Object.assign(new Error('503'), { response: { body: 'r'.repeat(10_000) } }) }))
    assert.equal((await manager.execute('cart_of_user_7', {}, { sessionId: session.id })).success, false)
    assert.equal((await manager.execute('now', {}, { sessionId: session.id })).result, 'noon')
    assert.equal(manager.stats('cart_of_user_7').failureCount, 1)
    assert.equal(manager.stats('cart_of_user_7').lastError.message, "tool 'cart_of_user_7' failed: 503")
    session.destroy()
    const gone = manager.stats('cart_of_user_7')
    assert.deepEqual([gone.executionCount, gone.failureCount, gone.lastError], [0, 0, undefined])
    assert.equal(manager.stats('now').successCount, 1, "a global tool's statistics stay")
    // A call in a destroyed (or unknown) session counts for no tool.
    assert.equal((await manager.execute('cart_of_user_7', {}, { sessionId: session.id })).error.code, 'SESSION_NOT_FOUND')
    assert.deepEqual([manager.stats('cart_of_user_7').executionCount, manager.stats('cart_of_user_7').lastError], [0, undefined])
  })

  test("a name's statistics counted for a global tool or another session's tool stay when a session goes", async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const a = registry.createSession()
    const b = registry.createSession()
    a.register(tool('read_cart', () => { throw new Error('down in a') }))
    b.register(tool('read_cart', () => ['book']))
    await manager.execute('read_cart', {}, { sessionId: a.id })
    await manager.execute('read_cart', {}, { sessionId: b.id })
    a.destroy()
    assert.deepEqual([manager.stats('read_cart').executionCount, manager.stats('read_cart').lastError?.message], [2, "tool 'read_cart' failed: down in a"])
    // A global tool's statistics survive its unregister and register again (a hot reload).
    registry.register(tool('search', () => { throw new Error('v1 broke') }))
    await manager.execute('search', {})
    registry.unregister('search')
    registry.register(tool('search', () => 'v2'))
    await manager.execute('search', {})
    assert.deepEqual([manager.stats('search').executionCount, manager.stats('search').successCount], [2, 1])
  })

  test('destroy emits tool-registry-change session-destroyed once; a second destroy is a no-op', () => {
    const registry = new ToolRegistry()
    registry.register(tool('g', () => 1))
    const s = registry.createSession()
    s.register(tool('a', () => 1))
    s.register(tool('b', () => 1))
    const details = []
    const events = []
    registry.on('tool-registry-change', (d) => details.push(d))
    registry.addEventListener('tool-registry-change', (e) => events.push(e))
    s.destroy()
    assert.equal(details.length, 1)
    assert.equal(details[0].action, 'session-destroyed')
    assert.equal(details[0].sessionId, s.id)
    assert.deepEqual([...details[0].toolNames].sort(), ['a', 'b'])
    assert.equal(events.length, 1)
    assert.equal(events[0].type, 'tool-registry-change')
    assert.equal(events[0].detail.action, 'session-destroyed')

    assert.doesNotThrow(() => s.destroy())
    assert.equal(details.length, 1)
    assert.equal(s.alive, false)
    assert.deepEqual(registry.names, ['g'])
  })

  test('a handle from getSession destroys the same session', async () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    const s = registry.createSession()
    s.register(tool('wait', holdUntilAborted()))
    const pending = manager.execute('wait', {}, { sessionId: s.id })
    await sleep(5)
    registry.getSession(s.id).destroy()
    assert.equal(s.alive, false)
    assert.equal((await pending).execution.status, 'cancelled')
  })
})
