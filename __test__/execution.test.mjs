// ToolExecutionManager (issue 3): settings, handler context, error categories, retries
// and backoff, timeouts, cancellation, concurrency, circuit breaker, lifecycle events,
// execution records and statistics. Delays are small and real (ms).
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, transientError, permanentError } from 'toolhost'

const FAST_RETRY = { baseDelay: 5, maxDelay: 100, jitter: 'none' }

/** A registry with the given tools (description and schema filled in) and a manager over it. */
function setup(tools, options = { retry: FAST_RETRY }) {
  const registry = new ToolRegistry()
  for (const tool of tools) registry.register({ description: `the ${tool.name} tool`, inputSchema: { type: 'object' }, ...tool })
  return { registry, manager: new ToolExecutionManager(registry, options) }
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
function gate() {
  let open
  const promise = new Promise((resolve) => (open = resolve))
  return { promise, open }
}

/** Resolves when `signal` aborts (immediately when already aborted). */
function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason)
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true })
  })
}

const EVENT_TYPES = [
  'tool-execution-started', 'tool-execution-validating', 'tool-execution-executing', 'tool-execution-retrying',
  'tool-execution-succeeded', 'tool-execution-failed', 'tool-execution-cancelled',
]

describe('settings precedence: call > tool metadata > manager > defaults', () => {
  const slow = async (args, ctx) => {
    await sleep(80, undefined, { signal: ctx.signal }).catch(() => {})
    return 'done'
  }

  test('timeoutMs: defaults (30 s) let an 80 ms handler finish', async () => {
    const { manager } = setup([{ name: 'slow', handler: slow }])
    const r = await manager.execute('slow', {})
    assert.equal(r.success, true, JSON.stringify(r.error))
  })

  test('timeoutMs: manager option applies', async () => {
    const { manager } = setup([{ name: 'slow', handler: slow }], { timeoutMs: 20, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const r = await manager.execute('slow', {})
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'TIMEOUT')
  })

  test('timeoutMs: tool metadata beats the manager', async () => {
    const { manager } = setup(
      [{ name: 'slow', handler: slow, metadata: { timeoutMs: 2000 } }],
      { timeoutMs: 20, retry: { ...FAST_RETRY, maxAttempts: 1 } },
    )
    const r = await manager.execute('slow', {})
    assert.equal(r.success, true, JSON.stringify(r.error))
  })

  test('timeoutMs: the call beats tool metadata', async () => {
    const { manager } = setup(
      [{ name: 'slow', handler: slow, metadata: { timeoutMs: 2000 } }],
      { timeoutMs: 5000, retry: { ...FAST_RETRY, maxAttempts: 1 } },
    )
    const short = await manager.execute('slow', {}, { timeoutMs: 20 })
    assert.equal(short.error?.code, 'TIMEOUT')
    const { manager: m2 } = setup(
      [{ name: 'slow', handler: slow, metadata: { timeoutMs: 20 } }],
      { timeoutMs: 20, retry: { ...FAST_RETRY, maxAttempts: 1 } },
    )
    const long = await m2.execute('slow', {}, { timeoutMs: 2000 })
    assert.equal(long.success, true, JSON.stringify(long.error))
  })

  async function attemptsWith(metadata, managerRetry, callOptions) {
    let calls = 0
    const seenMax = []
    const { manager } = setup(
      [{ name: 'flaky', metadata, handler: (args, ctx) => { calls++; seenMax.push(ctx.maxAttempts); throw transientError('again') } }],
      { retry: managerRetry },
    )
    const r = await manager.execute('flaky', {}, callOptions)
    assert.equal(r.success, false)
    assert.equal(r.execution.retry.maxAttempts, calls)
    assert.ok(seenMax.every((m) => m === calls), `ctx.maxAttempts ${seenMax} vs ${calls} calls`)
    return calls
  }

  test('retry.maxAttempts: default 3', async () => {
    assert.equal(await attemptsWith(undefined, FAST_RETRY, undefined), 3)
  })
  test('retry.maxAttempts: manager option applies', async () => {
    assert.equal(await attemptsWith(undefined, { ...FAST_RETRY, maxAttempts: 2 }, undefined), 2)
  })
  test('retry.maxAttempts: tool metadata beats the manager (other retry fields still from the manager)', async () => {
    const started = performance.now()
    assert.equal(await attemptsWith({ retry: { maxAttempts: 4 } }, { ...FAST_RETRY, maxAttempts: 2 }, undefined), 4)
    assert.ok(performance.now() - started < 900, 'baseDelay 5 from the manager still applies')
  })
  test('retry.maxAttempts: the call beats tool metadata', async () => {
    assert.equal(await attemptsWith({ retry: { maxAttempts: 4 } }, { ...FAST_RETRY, maxAttempts: 2 }, { retry: { maxAttempts: 1 } }), 1)
    assert.equal(await attemptsWith({ retry: { maxAttempts: 1 } }, FAST_RETRY, { retry: { maxAttempts: 5 } }), 5)
  })
})

describe('handler and context', () => {
  test('arguments a handler or needsApproval changes in place are theirs alone: not the record\'s, the events\', the next attempt\'s, or what runs', async () => {
    // One parsed object was handed to every attempt, needsApproval, the events and the
    // record: a retry got what the failed attempt left, and a needsApproval that changed
    // the amount ran a call other than the one the approver was shown.
    const seen = []
    const { manager } = setup([
      { name: 'pay', handler: (args, ctx) => { seen.push(args.amount); args.amount = -1; delete args.note; if (ctx.attemptNumber === 1) throw transientError('again'); return 'paid' } },
      { name: 'transfer', handler: (args) => args.amount, needsApproval: (args) => { args.amount = 1; return true } },
    ], { retry: FAST_RETRY })
    let validating, started
    manager.on('tool-execution-validating', (d) => { validating = d.args })
    manager.on('tool-execution-started', (d) => { started = d.execution.args })
    const r = await manager.execute('pay', { amount: 500, note: 'rent' })
    assert.equal(r.result, 'paid')
    assert.deepEqual(seen, [500, 500], 'the retry got the call\'s arguments')
    for (const args of [r.execution.args, manager.getExecution(r.execution.id).args, validating, started]) assert.deepEqual(args, { amount: 500, note: 'rent' })
    manager.on('tool-execution-approval-requested', (d) => {
      assert.deepEqual(d.execution.args, { amount: 1_000_000 })
      assert.deepEqual(manager.pendingApprovals()[0].args, { amount: 1_000_000 })
      manager.approve(d.approvalId)
    })
    const t = await manager.execute('transfer', { amount: 1_000_000 })
    assert.equal(t.result, 1_000_000, 'what was approved is what ran')
  })

  // A handler's native promise is awaited without looking up its `then`: a replaced
  // `then` used to leave the execution pending forever (with timeoutMs: null).
  const tampered = [
    ['whose then throws', () => { const p = Promise.resolve('v'); p.then = () => { throw new Error('then is broken') }; return p }, 'v'],
    ['whose then never calls back', () => { const p = Promise.resolve('v'); p.then = () => {}; return p }, 'v'],
    ['rejected, whose then never calls back', () => { const p = Promise.reject(new Error('no')); p.then = () => {}; return p }, "tool 'h' failed: no"],
  ]
  for (const [label, handler, expected] of tampered) {
    test(`a native promise ${label} still settles the execution`, async () => {
      const { manager } = setup([{ name: 'h', handler }], { timeoutMs: null, retry: { ...FAST_RETRY, maxAttempts: 1 } })
      const r = await manager.execute('h', {})
      assert.equal(r.success ? r.result : r.error.message, expected)
      assert.equal(manager.inFlight, 0)
    })
  }

  test('an interceptor\'s next() settles even when the handler\'s promise has a replaced then', async () => {
    const handler = () => { const p = Promise.resolve('v'); p.then = () => {}; return p }
    for (const interceptor of [(ctx, next) => next().then((x) => x), async (ctx, next) => next()]) {
      const { manager } = setup([{ name: 'h', handler }], { timeoutMs: null, retry: { ...FAST_RETRY, maxAttempts: 1 } })
      manager.use(interceptor)
      assert.equal((await manager.execute('h', {})).result, 'v')
    }
  })

  test('a native promise with a broken constructor fails with the error its species throws', async () => {
    const handler = () => {
      const p = Promise.resolve('v')
      p.constructor = { [Symbol.species]: function () { throw new Error('bad species') } }
      return p
    }
    const { manager } = setup([{ name: 'h', handler }], { timeoutMs: null, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const r = await manager.execute('h', {})
    assert.equal(r.success, false)
    assert.match(r.error.message, /bad species/)
  })

  // A promise library's promise, or any object with a `then` method, is followed as
  // `await` follows it. `later(settle)` calls settle(resolve, reject) a tick after `then`.
  const later = (settle) => ({ then(resolve, reject) { setTimeout(() => settle(resolve, reject), 1) } })
  const once = (handler) => setup([{ name: 'h', handler }], { retry: { ...FAST_RETRY, maxAttempts: 1 } }).manager

  test('a thenable a handler returns is awaited: what it resolves to is the result', async () => {
    const r = await once(() => later((resolve) => resolve({ paid: 5 }))).execute('h', {})
    assert.equal(r.success, true)
    assert.deepEqual(r.result, { paid: 5 })
  })

  test('a thenable that rejects fails its attempt, classified as a throw is: a transient rejection is retried', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'h', handler: () => later((resolve, reject) => (++calls < 3 ? reject(transientError(`busy ${calls}`)) : resolve('done'))) }])
    const r = await manager.execute('h', {})
    assert.equal(r.result, 'done')
    assert.equal(r.execution.retry.attemptNumber, 3)
    assert.deepEqual(r.execution.retry.previousErrors.map((e) => [e.category, e.message]), [['transient', "tool 'h' failed: busy 1"], ['transient', "tool 'h' failed: busy 2"]])
    const failed = await once(() => later((resolve, reject) => reject(permanentError('card declined')))).execute('h', {})
    assert.equal(failed.success, false)
    assert.equal(failed.error.category, 'permanent')
    assert.equal(failed.error.message, "tool 'h' failed: card declined")
  })

  test('a thenable is followed to its end, and the first of its callbacks to be called wins', async () => {
    const handler = () => ({
      then(resolve, reject) {
        resolve(later((inner) => inner('inner value')))
        reject(new Error('too late'))
        resolve('too late as well')
      },
    })
    const r = await once(handler).execute('h', {})
    assert.equal(r.success, true)
    assert.equal(r.result, 'inner value')
  })

  test('a then method that throws, or a then or async-iterator getter that throws, fails the attempt with that error', async () => {
    const cases = [
      [() => ({ then() { throw new Error('then broke') } }), 'then broke'],
      [() => ({ get then() { throw new Error('then getter broke') } }), 'then getter broke'],
      [() => ({ get [Symbol.asyncIterator]() { throw new Error('iterator getter broke') } }), 'iterator getter broke'],
      [async () => ({ get then() { throw new Error('then getter broke, after an await') } }), 'then getter broke, after an await'],
    ]
    for (const [handler, message] of cases) {
      const manager = once(handler)
      const r = await manager.execute('h', {})
      assert.equal(r.success, false, message)
      assert.equal(r.error.message, `tool 'h' failed: ${message}`)
      assert.equal(manager.inFlight, 0)
    }
  })

  test('a then that is not a function is data: the object is the result', async () => {
    const r = await once(() => ({ then: 'tomorrow', at: 9 })).execute('h', {})
    assert.equal(r.success, true)
    assert.deepEqual(r.result, { then: 'tomorrow', at: 9 })
  })

  test('a thenable that never calls back is bounded by timeoutMs', async () => {
    const { manager } = setup([{ name: 'h', handler: () => ({ then() {} }) }], { timeoutMs: 30, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const r = await manager.execute('h', {})
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'timeout')
  })

  test('ctx holds executionId, toolCallId, attemptNumber, maxAttempts and an AbortSignal', async () => {
    const contexts = []
    const { manager } = setup([{
      name: 'ctx',
      handler: (args, ctx) => {
        contexts.push({ ...ctx, signal: ctx.signal, aborted: ctx.signal.aborted })
        if (ctx.attemptNumber === 1) throw transientError('once more')
        return { echo: args }
      },
    }])
    const r = await manager.execute('ctx', { a: 1 }, { toolCallId: 'call_ctx' })
    assert.equal(r.success, true)
    assert.deepEqual(r.result, { echo: { a: 1 } })
    assert.equal(contexts.length, 2)
    for (const [i, ctx] of contexts.entries()) {
      assert.equal(ctx.executionId, r.execution.id)
      assert.equal(ctx.toolCallId, 'call_ctx')
      assert.equal(ctx.attemptNumber, i + 1)
      assert.equal(ctx.maxAttempts, 3)
      assert.ok(ctx.signal instanceof AbortSignal)
      assert.equal(ctx.aborted, false)
    }
  })

  test('execution ids are distinct UUID v4s, across many calls', async () => {
    // 1,000 ids: in the browser they come from a pool of random bytes refilled every 256
    // ids (crates/toolhost/src/ids.rs), so this crosses several refills.
    const { manager } = setup([{ name: 'id', handler: (_args, ctx) => ctx.executionId }])
    const rs = await Promise.all(Array.from({ length: 1000 }, () => manager.execute('id', {})))
    const ids = rs.map((r) => r.execution.id)
    for (const [i, r] of rs.entries()) {
      assert.match(ids[i], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.equal(r.result, ids[i])
    }
    assert.equal(new Set(ids).size, 1000)
  })

  test('ctx.signal fires on cancel', async () => {
    let reasonSeen
    const started = gate()
    const { manager } = setup([{
      name: 'wait',
      handler: async (args, ctx) => {
        started.open(ctx)
        reasonSeen = await aborted(ctx.signal)
        return 'ignored'
      },
    }])
    const pending = manager.execute('wait', {})
    const ctx = await started.promise
    assert.equal(ctx.signal.aborted, false)
    assert.equal(manager.cancel(ctx.executionId), true)
    const r = await pending
    assert.equal(ctx.signal.aborted, true)
    assert.ok(reasonSeen !== undefined)
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'cancelled')
    assert.equal(r.error.code, 'CANCELLED')
  })

  test('ctx.signal fires on timeout', async () => {
    let abortedAt
    const { manager } = setup([{
      name: 'wait',
      handler: async (args, ctx) => {
        await aborted(ctx.signal)
        abortedAt = performance.now()
        throw ctx.signal.reason
      },
    }], { timeoutMs: 30, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const t0 = performance.now()
    const r = await manager.execute('wait', {})
    assert.ok(abortedAt !== undefined, 'the signal aborted')
    assert.ok(abortedAt - t0 >= 25, `aborted after ${abortedAt - t0} ms`)
    assert.equal(r.error.category, 'timeout')
    assert.equal(r.error.code, 'TIMEOUT')
  })

  test('sync and async handlers both work, for values and for errors', async () => {
    const { manager } = setup([
      { name: 'sync_ok', handler: (args) => args.n * 2 },
      { name: 'async_ok', handler: async (args) => { await sleep(1); return args.n * 3 } },
      { name: 'sync_throw', handler: () => { throw new Error('sync boom') } },
      { name: 'async_reject', handler: async () => { await sleep(1); throw new Error('async boom') } },
      { name: 'returns_undefined', handler: () => {} },
    ])
    assert.deepEqual((await manager.execute('sync_ok', { n: 2 })).result, 4)
    assert.deepEqual((await manager.execute('async_ok', { n: 2 })).result, 6)
    const s = await manager.execute('sync_throw', {})
    assert.equal(s.success, false)
    assert.match(s.error.message, /sync boom/)
    const a = await manager.execute('async_reject', {})
    assert.equal(a.success, false)
    assert.match(a.error.message, /async boom/)
    const u = await manager.execute('returns_undefined', {})
    assert.equal(u.success, true)
    assert.equal(u.result, undefined)
  })

  test('arguments as JSON text reach the handler parsed', async () => {
    let got
    const { manager } = setup([{ name: 'echo', handler: (args) => { got = args; return true } }])
    const r = await manager.execute('echo', '{"city":"Paris","n":[1,2]}')
    assert.equal(r.success, true)
    assert.deepEqual(got, { city: 'Paris', n: [1, 2] })
  })
})

describe('failures come back as results', () => {
  test('a thrown object with no readable message or name still gets a message', async () => {
    const revocable = Proxy.revocable({}, {})
    revocable.revoke()
    const thrown = [{ message: 7 }, {}, revocable.proxy, { get message() { throw new Error('getter') } }]
    let i = 0
    const { manager } = setup([{ name: 'x', handler: () => { throw thrown[i++] } }], { retry: { ...FAST_RETRY, maxAttempts: 1 } })
    for (const value of thrown) {
      const r = await manager.execute('x', {})
      assert.equal(r.error.message, "tool 'x' failed: an error with no message")
      assert.equal(r.error.cause, value)
    }
  })

  test('a handler or interceptor returning a revoked Proxy fails its call alone', async () => {
    // `instanceof Promise` on it throws: that escaped the manager (an uncaught exception)
    // and dropped the attempts admitted with it, so a call started beside it never ran.
    const revoked = () => {
      const r = Proxy.revocable({}, {})
      r.revoke()
      return r.proxy
    }
    const { manager } = setup([
      { name: 'bad', handler: revoked },
      { name: 'good', handler: () => 1 },
    ], { timeoutMs: 2000, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const [bad, good] = await Promise.all([manager.execute('bad', {}), manager.execute('good', {})])
    assert.equal(bad.success, false)
    assert.equal(bad.error.code, 'EXECUTION_ERROR')
    assert.match(bad.error.message, /^tool 'bad' failed: .*revoked/)
    assert.equal(good.success, true)
    assert.equal(good.result, 1)

    manager.use(() => revoked())
    const intercepted = await manager.execute('good', {})
    assert.equal(intercepted.success, false)
    assert.match(intercepted.error.message, /^tool 'good' failed: .*revoked/)
    assert.equal(manager.inFlight, 0)
  })

  test('execute never rejects for tool-level failures', async () => {
    const { manager } = setup([
      { name: 'throws', handler: () => { throw new Error('x') } },
      { name: 'strict', inputSchema: { type: 'object', required: ['a'] }, handler: () => 1 },
    ], { timeoutMs: 10, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const calls = [
      manager.execute('throws', {}),
      manager.execute('strict', {}),
      manager.execute('nope', {}),
      manager.execute('strict', '{not json'),
      manager.execute('strict', { f: () => 1 }),
    ]
    const results = await Promise.all(calls.map((p) => p.then((r) => r, (e) => ({ rejected: e }))))
    for (const r of results) {
      assert.equal(r.rejected, undefined, `rejected: ${r.rejected}`)
      assert.equal(r.success, false)
      assert.equal(typeof r.error.category, 'string')
      assert.equal(typeof r.error.code, 'string')
      assert.equal(typeof r.error.message, 'string')
      assert.equal(typeof r.error.retryable, 'boolean')
      assert.equal(r.execution.status, 'failed')
    }
  })

  test('error shape keeps the original error as cause', async () => {
    const original = new Error('database exploded')
    original.detail = 42
    const { manager } = setup([{ name: 'boom', handler: () => { throw original } }])
    const r = await manager.execute('boom', {})
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'execution')
    assert.equal(typeof r.error.code, 'string')
    assert.match(r.error.message, /database exploded/)
    assert.match(r.error.message, /boom/, 'the message names the tool')
    assert.equal(r.error.retryable, false)
    assert.equal(r.error.cause, original)
    assert.equal(r.error.cause.detail, 42)
    assert.equal('retryAfterMs' in r.error, false)
    assert.equal('validationErrors' in r.error, false)
    assert.deepEqual(r.execution.error.category, 'execution')
  })

  test('validation failure: category validation, INVALID_ARGUMENTS, every failure, handler never called', async () => {
    let calls = 0
    const { manager } = setup([{
      name: 'weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } }, required: ['city'] },
      handler: () => { calls++ },
    }])
    const r = await manager.execute('weather', { days: 0 })
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'validation')
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.equal(r.error.retryable, false)
    assert.deepEqual(
      r.error.validationErrors.map((e) => [e.path, e.schemaPath, e.keyword]).sort(),
      [['', '/required', 'required'], ['/days', '/properties/days/minimum', 'minimum']],
    )
    assert.ok(r.error.validationErrors.every((e) => typeof e.message === 'string' && e.message.length > 0))
    const text = await manager.execute('weather', '{"city": 5}')
    assert.equal(text.error.code, 'INVALID_ARGUMENTS')
    assert.equal(text.error.validationErrors[0].path, '/city')
    const malformed = await manager.execute('weather', '{"city": ')
    assert.equal(malformed.error.category, 'validation')
    assert.equal(malformed.error.code, 'INVALID_ARGUMENTS')
    assert.equal(calls, 0)
    assert.equal(r.execution.retry.attemptNumber, 0)
  })

  test('unknown tool: not_found / TOOL_NOT_FOUND', async () => {
    const { manager } = setup([])
    const r = await manager.execute('missing_tool', {})
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'not_found')
    assert.equal(r.error.code, 'TOOL_NOT_FOUND')
    assert.match(r.error.message, /missing_tool/)
  })
})

describe('error categories', () => {
  const netError = (code) => Object.assign(new Error(`connect ${code}`), { code })
  const cases = [
    ['AbortError', () => new DOMException('stop', 'AbortError'), 'cancelled', 'CANCELLED'],
    ['TimeoutError', () => new DOMException('slow', 'TimeoutError'), 'timeout', 'TIMEOUT'],
    ['transientError()', () => transientError('busy'), 'transient'],
    ['retryable: true', () => Object.assign(new Error('try later'), { retryable: true }), 'transient'],
    ['ECONNRESET', () => netError('ECONNRESET'), 'transient'],
    ['ETIMEDOUT', () => netError('ETIMEDOUT'), 'transient'],
    ['ECONNREFUSED', () => netError('ECONNREFUSED'), 'transient'],
    ['fetch failed', () => new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }), 'transient'],
    ['permanentError()', () => permanentError('never'), 'permanent'],
    ['plain Error', () => new Error('plain'), 'execution'],
    ['TypeError', () => new TypeError('bad'), 'execution'],
  ]
  for (const [label, make, category, code] of cases) {
    test(`${label} -> ${category}`, async () => {
      let thrown
      const { manager } = setup([{ name: 'thrower', handler: () => { throw (thrown = make()) } }], { retry: { ...FAST_RETRY, maxAttempts: 1 } })
      const r = await manager.execute('thrower', {})
      assert.equal(r.success, false)
      assert.equal(r.error.category, category)
      if (code) assert.equal(r.error.code, code)
      assert.equal(r.error.retryable, ['transient', 'timeout'].includes(category))
      assert.equal(r.error.cause, thrown)
    })
  }

  test('transientError and permanentError build Errors with their category', () => {
    const t = transientError('busy', { retryAfterMs: 25, code: 'RATE_LIMITED' })
    assert.ok(t instanceof Error)
    assert.equal(t.message, 'busy')
    assert.equal(t.retryAfterMs, 25)
    assert.equal(t.code, 'RATE_LIMITED')
    const p = permanentError('never', { code: 'FORBIDDEN' })
    assert.ok(p instanceof Error)
    assert.equal(p.code, 'FORBIDDEN')
  })

  test("transientError and permanentError's stacks start at the code that made them", () => {
    const limit = Error.stackTraceLimit
    function madeHere(make) {
      return make('busy')
    }
    for (const make of [transientError, permanentError]) {
      const frames = madeHere(make).stack.split('\n').slice(1)
      assert.match(frames[0], /madeHere/, `the first frame is the caller's: ${frames.join(' | ')}`)
      assert.ok(!frames.some((f) => /errors\.mjs/.test(f)), `no frame of toolhost's errors.mjs: ${frames.join(' | ')}`)
      assert.equal(Error.stackTraceLimit, limit, 'Error.stackTraceLimit is as it was')
    }
    // A message whose conversion to a string throws, throws, and leaves the limit as it was.
    assert.throws(() => transientError({ toString() { throw new RangeError('no string') } }), RangeError)
    assert.equal(Error.stackTraceLimit, limit)
  })

  test('transientError retryAfterMs is reported and honoured', async () => {
    const times = []
    const { manager } = setup([{
      name: 'limited',
      handler: () => {
        times.push(performance.now())
        if (times.length === 1) throw transientError('rate limited', { retryAfterMs: 60 })
        return 'ok'
      },
    }])
    const r = await manager.execute('limited', {})
    assert.equal(r.success, true)
    assert.equal(r.execution.retry.previousErrors[0].retryAfterMs, 60)
    assert.ok(times[1] - times[0] >= 58, `retried after ${times[1] - times[0]} ms, hint was 60`)
  })

  test('a retryAfterMs hint is capped by maxDelay', async () => {
    const times = []
    const { manager } = setup([{
      name: 'limited',
      handler: () => {
        times.push(performance.now())
        if (times.length === 1) throw transientError('rate limited', { retryAfterMs: 60_000 })
        return 'ok'
      },
    }], { retry: { ...FAST_RETRY, maxDelay: 30 } })
    const r = await manager.execute('limited', {})
    assert.equal(r.success, true)
    assert.ok(times[1] - times[0] < 1000, `waited ${times[1] - times[0]} ms despite maxDelay 30`)
  })

  test('permanent and plain errors are not retried by default; transient ones are', async () => {
    for (const [make, expectedCalls] of [[() => permanentError('no'), 1], [() => new Error('no'), 1], [() => transientError('again'), 3]]) {
      let calls = 0
      const { manager } = setup([{ name: 't', handler: () => { calls++; throw make() } }])
      const r = await manager.execute('t', {})
      assert.equal(r.success, false)
      assert.equal(calls, expectedCalls, `${r.error.category}: ${calls} calls`)
      assert.equal(r.execution.retry.previousErrors.length, expectedCalls - 1)
    }
  })

  test('throwing a string or undefined is handled', async () => {
    for (const value of ['a plain string', undefined, 42, null]) {
      const { manager } = setup([{ name: 'odd', handler: () => { throw value } }])
      const r = await manager.execute('odd', {})
      assert.equal(r.success, false)
      assert.ok(['execution', 'unknown'].includes(r.error.category), r.error.category)
      assert.equal(typeof r.error.message, 'string')
      assert.match(r.error.message, /odd/)
      assert.equal(r.error.retryable, false)
      assert.equal(r.execution.status, 'failed')
    }
  })
})

describe('retries and backoff', () => {
  test('jitter none: delays follow baseDelay * multiplier^(n-1), reported in retrying events', async () => {
    const times = []
    const delays = []
    const { manager } = setup([{ name: 'flaky', handler: () => { times.push(performance.now()); throw transientError('again') } }],
      { retry: { maxAttempts: 4, baseDelay: 20, backoffMultiplier: 2, maxDelay: 1000, jitter: 'none' } })
    manager.on('tool-execution-retrying', (d) => delays.push(d.delayMs))
    const r = await manager.execute('flaky', {})
    assert.equal(r.success, false)
    assert.equal(times.length, 4)
    assert.deepEqual(delays, [20, 40, 80])
    const gaps = times.slice(1).map((t, i) => t - times[i])
    gaps.forEach((gap, i) => assert.ok(gap >= delays[i] - 2, `gap ${i} was ${gap} ms, scheduled ${delays[i]}`))
    assert.equal(r.execution.retry.attemptNumber, 4)
    assert.equal(r.execution.retry.previousErrors.length, 3)
  })

  test('delays never exceed maxDelay', async () => {
    const delays = []
    const { manager } = setup([{ name: 'flaky', handler: () => { throw transientError('again') } }],
      { retry: { maxAttempts: 5, baseDelay: 10, backoffMultiplier: 3, maxDelay: 25, jitter: 'none' } })
    manager.on('tool-execution-retrying', (d) => delays.push(d.delayMs))
    await manager.execute('flaky', {})
    assert.deepEqual(delays, [10, 25, 25, 25])
  })

  for (const jitter of ['full', 'equal', 'decorrelated']) {
    test(`jitter ${jitter}: delays stay within [0, maxDelay] and are finite`, async () => {
      const delays = []
      const { manager } = setup([{ name: 'flaky', handler: () => { throw transientError('again') } }],
        { retry: { maxAttempts: 6, baseDelay: 4, backoffMultiplier: 2, maxDelay: 12, jitter } })
      manager.on('tool-execution-retrying', (d) => delays.push(d.delayMs))
      await manager.execute('flaky', {})
      assert.equal(delays.length, 5)
      for (const d of delays) assert.ok(Number.isFinite(d) && d >= 0 && d <= 12, `delay ${d}`)
      if (jitter === 'equal') delays.forEach((d, i) => assert.ok(d >= Math.min(12, 4 * 2 ** i) / 2 - 1e-9, `equal jitter delay ${d}`))
    })
  }

  test('only categories in retryableCategories are retried', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'plain', handler: () => { calls++; throw new Error('plain') } }],
      { retry: { ...FAST_RETRY, retryableCategories: ['execution'] } })
    await manager.execute('plain', {})
    assert.equal(calls, 3, 'execution errors retried when listed')

    calls = 0
    const { manager: m2 } = setup([{ name: 'flaky', handler: () => { calls++; throw transientError('x') } }],
      { retry: { ...FAST_RETRY, retryableCategories: ['timeout'] } })
    const r = await m2.execute('flaky', {})
    assert.equal(calls, 1, 'transient errors not retried when not listed')
    assert.equal(r.error.category, 'transient')
  })

  test('listing execution, validation or permanent never runs again a handler whose outcome was refused or that said no', async () => {
    const runs = {}
    const counted = (name, body) => ({ name, handler: (args, ctx) => { runs[name] = (runs[name] ?? 0) + 1; return body(args, ctx) } })
    const { registry, manager } = setup([
      counted('plain', () => { throw new Error('plain') }),
      // A card charged, then a result of the wrong shape: running it again charges again.
      { ...counted('charge', () => ({ receiptId: 'r1' })), outputSchema: { type: 'object', required: ['receipt'] } },
      counted('not_json', () => new Map()),
      counted('said_no', () => { throw Object.assign(new Error('quota used up'), { retryable: false }) }),
      counted('permanent', () => { throw permanentError('no such account') }),
      counted('intercepted', () => 'ran'),
    ], { retry: { ...FAST_RETRY, retryableCategories: ['transient', 'timeout', 'execution', 'validation', 'permanent'] } })
    manager.use((ctx, next) => { if (ctx.toolName === 'intercepted') ctx.args = { n: 1n }; return next() })
    const codes = {}
    for (const name of ['plain', 'charge', 'not_json', 'said_no', 'permanent', 'intercepted']) {
      const r = await manager.execute(name, {})
      codes[name] = r.error.code
      assert.equal(r.execution.retry.previousErrors.length, name === 'plain' ? 2 : 0, name)
    }
    assert.deepEqual(runs, { plain: 3, charge: 1, not_json: 1, said_no: 1, permanent: 1 })
    assert.deepEqual(codes, { plain: 'EXECUTION_ERROR', charge: 'INVALID_OUTPUT', not_json: 'INVALID_RESULT', said_no: 'EXECUTION_ERROR', permanent: 'PERMANENT_ERROR', intercepted: 'INVALID_ARGUMENTS' })
  })

  test('a retry that succeeds ends succeeded with the earlier errors kept', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'flaky', handler: () => { if (++calls < 3) throw transientError(`fail ${calls}`); return 'third time' } }])
    const r = await manager.execute('flaky', {})
    assert.equal(r.success, true)
    assert.equal(r.result, 'third time')
    assert.equal(r.execution.retry.attemptNumber, 3)
    assert.deepEqual(r.execution.retry.previousErrors.map((e) => e.category), ['transient', 'transient'])
    assert.match(r.execution.retry.previousErrors[0].message, /fail 1/)
    assert.match(r.execution.retry.previousErrors[1].message, /fail 2/)
  })

  test("a record keeps what each failed attempt's error says; the thrown value goes to the retrying event and a failed result", async () => {
    let calls = 0
    const thrown = []
    const { manager } = setup([{
      name: 'flaky',
      handler: () => {
        const e = transientError(`fail ${++calls}`, { code: 'HTTP_503', retryAfterMs: 1 })
        e.response = { status: 503, body: 'a body the record must not keep' }
        thrown.push(e)
        throw e
      },
    }], { retry: { ...FAST_RETRY, maxAttempts: 3 } })
    const causes = []
    manager.on('tool-execution-retrying', (d) => causes.push(d.error.cause))
    const r = await manager.execute('flaky', {})
    assert.equal(r.success, false)
    assert.equal(thrown.length, 3)
    // The listener got each retried attempt's thrown value, as it was thrown.
    assert.equal(causes.length, 2)
    assert.ok(causes[0] === thrown[0] && causes[1] === thrown[1], 'the retrying event carries the thrown value')
    // The result's error is the last attempt's, with what the handler threw.
    assert.equal(r.error.cause, thrown[2])
    // The record's earlier errors: every field but the thrown value.
    const expected = [1, 2].map((n) => ({ category: 'transient', code: 'HTTP_503', message: `tool 'flaky' failed: fail ${n}`, retryable: true, retryAfterMs: 1 }))
    assert.deepEqual(r.execution.retry.previousErrors, expected)
    for (const e of r.execution.retry.previousErrors) assert.equal(Object.hasOwn(e, 'cause'), false)
    assert.deepEqual(manager.getExecution(r.execution.id).retry.previousErrors, expected)
  })
})

describe('INVALID_CONFIG', () => {
  const registry = new ToolRegistry()
  const bad = [
    ['negative baseDelay', { retry: { baseDelay: -1 } }],
    ['negative maxDelay', { retry: { maxDelay: -5, baseDelay: 0 } }],
    ['maxAttempts 0', { retry: { maxAttempts: 0 } }],
    ['negative maxAttempts', { retry: { maxAttempts: -2 } }],
    ['baseDelay > maxDelay', { retry: { baseDelay: 100, maxDelay: 10 } }],
    ['unknown jitter', { retry: { jitter: 'sometimes' } }],
    ['NaN baseDelay', { retry: { baseDelay: NaN } }],
    ['unknown retryable category', { retry: { retryableCategories: ['flaky'] } }],
    ['negative timeoutMs', { timeoutMs: -1 }],
    ['maxConcurrency 0', { maxConcurrency: 0 }],
    // Boolean switches take booleans: a look-alike value is refused, not read as false.
    ['metadata as an object', { metadata: { service: 'api' } }, /metadata must be true or false/],
    ['logging as a string', { logging: 'yes' }, /logging must be true or false/],
    ['logArguments as a number', { logging: true, logArguments: 0 }, /logArguments must be true or false/],
    ['validation as a string', { validation: 'off' }, /validation must be true or false/],
    ['a logger that is not a function', { logging: true, logger: console }, /logger must be a function/],
    ['an auditLog that is not a path', { auditLog: 42 }, /auditLog must be a file path/],
  ]
  for (const [label, options, message] of bad) {
    test(`constructor refuses ${label}`, () => {
      assert.throws(() => new ToolExecutionManager(registry, options), (e) => {
        assert.ok(e instanceof Error)
        assert.equal(e.code, 'INVALID_CONFIG')
        assert.ok(e.message.length > 0)
        if (message) assert.match(e.message, message)
        return true
      })
    })
  }

  // A sessionId that is not a string used to be dropped, and the call ran against the
  // global tools (a session's tool of the same name was skipped).
  test('execute() refuses a sessionId or toolCallId that is not a string', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'whoami', description: 'which tool', inputSchema: { type: 'object' }, handler: () => 'global' })
    const session = registry.createSession()
    session.register({ name: 'whoami', description: 'which tool', inputSchema: { type: 'object' }, handler: () => 'session' })
    const manager = new ToolExecutionManager(registry)
    assert.equal((await manager.execute('whoami', {}, { sessionId: session.id })).result, 'session')
    // A caller's mistake rejects the promise; execute() itself never throws.
    for (const options of [{ sessionId: new String(session.id) }, { sessionId: 42 }, { toolCallId: Symbol('id') }]) {
      const pending = manager.execute('whoami', {}, options)
      assert.ok(pending instanceof Promise)
      await assert.rejects(pending, (e) => {
        assert.equal(e.code, 'INVALID_CONFIG')
        assert.match(e.message, /(sessionId|toolCallId) must be a string/)
        return true
      })
    }
    await assert.rejects(manager.executeToolCalls({ tool_calls: [] }, { provider: 'openai', sessionId: 42 }), /executeToolCalls: sessionId must be a string/)
  })

  // NaN and Infinity reached the engine as the strings "NaN" and "Infinity", which string
  // options took: toolCallId NaN was found as 'NaN', two idempotencyKey: NaN calls shared a
  // key, auditLog: NaN wrote a file named NaN.
  test('NaN and Infinity are refused by string options, as any number is, and by numeric ones with their own message', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 't', inputSchema: { type: 'object' }, handler: () => 'ran' })
    const manager = new ToolExecutionManager(registry)
    for (const key of ['toolCallId', 'sessionId', 'idempotencyKey']) {
      for (const value of [NaN, Infinity, -Infinity]) {
        await assert.rejects(manager.execute('t', {}, { [key]: value }), (e) => {
          assert.equal(e.code, 'INVALID_CONFIG', `${key}: ${value}: ${e.code} ${e.message}`)
          assert.equal(e.message, `${key} must be a string`)
          return true
        })
      }
    }
    assert.deepEqual(manager.getExecutionsForToolCall('NaN'), [])
    for (const value of [NaN, Infinity]) {
      assert.throws(() => new ToolExecutionManager(registry, { auditLog: value }), { code: 'INVALID_CONFIG', message: 'auditLog must be a file path (a string)' })
    }
    // Numeric options still read them as numbers: NaN refused naming the option, Infinity
    // where it means no bound.
    assert.throws(() => new ToolExecutionManager(registry, { maxConcurrency: NaN }), { code: 'INVALID_CONFIG', message: /^maxConcurrency must be a whole number/ })
    assert.throws(() => new ToolExecutionManager(registry, { retry: { baseDelay: NaN } }), { code: 'INVALID_CONFIG', message: /baseDelay/ })
    await assert.rejects(manager.execute('t', {}, { timeoutMs: NaN }), { code: 'INVALID_CONFIG', message: /^timeoutMs must be a number of milliseconds/ })
    assert.ok(new ToolExecutionManager(registry, { maxConcurrency: Infinity, approvalTimeoutMs: Infinity }) instanceof ToolExecutionManager)
    assert.equal((await manager.execute('t', {}, { timeoutMs: Infinity })).result, 'ran')
    // A string is not a number, "Infinity" included.
    assert.throws(() => new ToolExecutionManager(registry, { maxConcurrency: 'Infinity' }), { code: 'INVALID_CONFIG', message: /^maxConcurrency must be a whole number/ })
  })

  test('sensible options are accepted', () => {
    const m = new ToolExecutionManager(registry, {
      retry: { maxAttempts: 1, baseDelay: 0, maxDelay: 0, backoffMultiplier: 1, jitter: 'equal', retryableCategories: [] },
      timeoutMs: 1, maxConcurrency: 1, historyLimit: 0,
    })
    assert.ok(m instanceof ToolExecutionManager)
    assert.ok(new ToolExecutionManager(registry) instanceof ToolExecutionManager)
  })
})

describe('timeouts', () => {
  const hang = (args, ctx) => aborted(ctx.signal).then(() => new Promise(() => {}))

  test('timeout fails with TIMEOUT and is retried when timeout is retryable (default)', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'hang', handler: (a, c) => { calls++; return hang(a, c) } }], { timeoutMs: 15, retry: FAST_RETRY })
    const r = await manager.execute('hang', {})
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'timeout')
    assert.equal(r.error.code, 'TIMEOUT')
    assert.equal(calls, 3)
    assert.deepEqual(r.execution.retry.previousErrors.map((e) => e.code), ['TIMEOUT', 'TIMEOUT'])
  })

  test('timeout is not retried when timeout is not retryable', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'hang', handler: (a, c) => { calls++; return hang(a, c) } }],
      { timeoutMs: 15, retry: { ...FAST_RETRY, retryableCategories: ['transient'] } })
    const t0 = performance.now()
    const r = await manager.execute('hang', {})
    assert.equal(r.error.code, 'TIMEOUT')
    assert.equal(calls, 1)
    assert.ok(performance.now() - t0 >= 13)
  })

  test('a handler that ignores its signal still times out', async () => {
    const { manager } = setup([{ name: 'deaf', handler: () => sleep(300).then(() => 'late') }], { timeoutMs: 20, retry: { ...FAST_RETRY, maxAttempts: 1 } })
    const t0 = performance.now()
    const r = await manager.execute('deaf', {})
    assert.equal(r.error.code, 'TIMEOUT')
    assert.ok(performance.now() - t0 < 250, 'did not wait for the handler')
  })
})

describe('cancellation', () => {
  // The attempt's context used to be kept only once the handler had returned its
  // promise: a cancel before that point ended the execution but never aborted the
  // signal, and a cancel from the logger or an interceptor still let the handler run.
  test('an already aborted signal ends the call cancelled, even for an unknown tool', async () => {
    const { manager } = setup([{ name: 'known', handler: () => 'ran' }])
    for (const name of ['known', 'unknown']) {
      const r = await manager.execute(name, {}, { signal: AbortSignal.abort() })
      assert.equal(r.error.code, 'CANCELLED', `${name}: ${r.error.message}`)
      assert.equal(r.execution.status, 'cancelled')
    }
  })

  test('a cancel from the handler\'s synchronous part aborts its signal', async () => {
    let signal
    let manager
    ;({ manager } = setup([{ name: 'work', handler: async (args, ctx) => {
      signal = ctx.signal
      manager.cancel(ctx.executionId)
      await sleep(5)
      return 'finished'
    } }]))
    const r = await manager.execute('work', {})
    assert.equal(r.error.code, 'CANCELLED')
    assert.equal(signal.aborted, true)
    assert.equal(signal.reason.name, 'AbortError')
  })

  test('a cancel from the logger\'s Starting line or from an interceptor: the handler never runs', async () => {
    let ran = 0
    const tools = [{ name: 'charge', handler: () => { ran++; return 'charged' } }]
    const { manager: logged } = setup(tools, {
      logging: true, retry: FAST_RETRY,
      logger: (level, message, fields) => { if (message.includes('Starting')) logged.cancel(fields.executionId) },
    })
    assert.equal((await logged.execute('charge', {})).error.code, 'CANCELLED')
    const { manager: intercepted } = setup(tools)
    let nextResult
    intercepted.use((ctx, next) => {
      intercepted.cancel(ctx.executionId)
      nextResult = next()
      return nextResult
    })
    assert.equal((await intercepted.execute('charge', {})).error.code, 'CANCELLED')
    await assert.rejects(nextResult, (e) => e.name === 'AbortError')
    assert.equal(ran, 0)
  })

  test('an already-aborted signal gives cancelled without calling the handler', async () => {
    let calls = 0
    const { manager } = setup([{ name: 't', handler: () => { calls++ } }])
    const r = await manager.execute('t', {}, { signal: AbortSignal.abort() })
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'cancelled')
    assert.equal(r.error.code, 'CANCELLED')
    assert.equal(r.execution.status, 'cancelled')
    assert.equal(calls, 0)
  })

  test('aborting during an attempt ends cancelled and starts no further attempt', async () => {
    let calls = 0
    const controller = new AbortController()
    const { manager } = setup([{
      name: 't',
      handler: async (args, ctx) => {
        calls++
        setTimeout(() => controller.abort(), 5)
        await aborted(ctx.signal)
        throw transientError('would be retried')
      },
    }])
    const r = await manager.execute('t', {}, { signal: controller.signal })
    assert.equal(r.error.category, 'cancelled')
    assert.equal(r.error.code, 'CANCELLED')
    assert.equal(r.execution.status, 'cancelled')
    await sleep(30)
    assert.equal(calls, 1)
  })

  test('an abort ends the execution even if the handler never settles', async () => {
    const controller = new AbortController()
    const { manager } = setup([{ name: 'stuck', handler: () => new Promise(() => {}) }])
    setTimeout(() => controller.abort(), 10)
    const r = await manager.execute('stuck', {}, { signal: controller.signal })
    assert.equal(r.error.code, 'CANCELLED')
  })

  test('cancel during backoff ends cancelled promptly with no further attempt', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'flaky', handler: () => { calls++; throw transientError('again') } }],
      { retry: { baseDelay: 200, maxDelay: 1000, jitter: 'none' } })
    let cancelledAt
    manager.on('tool-execution-retrying', (d) => {
      setTimeout(() => { cancelledAt = performance.now(); assert.equal(manager.cancel(d.executionId), true) }, 5)
    })
    const r = await manager.execute('flaky', {})
    const endedAt = performance.now()
    assert.equal(r.error.category, 'cancelled')
    assert.equal(r.error.code, 'CANCELLED')
    assert.ok(endedAt - cancelledAt < 100, `took ${endedAt - cancelledAt} ms to end after cancel`)
    await sleep(250)
    assert.equal(calls, 1)
  })

  test('aborting the call signal during backoff also cancels', async () => {
    let calls = 0
    const controller = new AbortController()
    const { manager } = setup([{ name: 'flaky', handler: () => { calls++; throw transientError('again') } }],
      { retry: { baseDelay: 200, maxDelay: 1000, jitter: 'none' } })
    manager.on('tool-execution-retrying', () => setTimeout(() => controller.abort(), 5))
    const r = await manager.execute('flaky', {}, { signal: controller.signal })
    assert.equal(r.error.code, 'CANCELLED')
    await sleep(250)
    assert.equal(calls, 1)
  })

  test('a look-alike signal whose addEventListener calls the manager: both calls settle, and it still cancels', async () => {
    const held = gate()
    const { manager } = setup([
      { name: 'a', handler: () => 'A' },
      { name: 'b', handler: () => 'B' },
      { name: 'wait', handler: (args, ctx) => Promise.race([held.promise, aborted(ctx.signal).then((reason) => { throw reason })]) },
    ])
    const inner = []
    const listeners = []
    const signal = {
      aborted: false,
      // A wrapper that logs, or starts a watchdog call, from addEventListener.
      addEventListener(type, listener) { listeners.push(listener); inner.push(manager.execute('b', {})) },
      removeEventListener() {},
    }
    const HANG = Symbol('hang')
    const within = (p) => Promise.race([p, sleep(2000).then(() => HANG)])
    const outer = await within(manager.execute('a', {}, { signal }))
    assert.notEqual(outer, HANG, `the outer call never settled (inFlight ${manager.inFlight})`)
    assert.equal(outer.result, 'A')
    assert.equal(inner.length, 1)
    assert.equal((await within(inner[0])).result, 'B')
    // The listener it was given still cancels the call it was given for.
    const waiting = manager.execute('wait', {}, { signal })
    await sleep(5)
    assert.equal(listeners.length, 2)
    signal.aborted = true
    listeners[1]()
    const r = await within(waiting)
    assert.notEqual(r, HANG)
    assert.equal(r.error.code, 'CANCELLED')
    await Promise.all(inner)
    assert.equal(manager.inFlight, 0)
  })

  test('cancel(id) on a finished execution returns false and changes nothing', async () => {
    const { manager } = setup([{ name: 't', handler: () => 'ok' }])
    const r = await manager.execute('t', {})
    const before = manager.getExecution(r.execution.id)
    const statsBefore = manager.stats('t')
    assert.equal(manager.cancel(r.execution.id), false)
    assert.deepEqual(manager.getExecution(r.execution.id), before)
    assert.equal(manager.getExecution(r.execution.id).status, 'succeeded')
    assert.deepEqual(manager.stats('t'), statsBefore)
    assert.equal(manager.cancel('no-such-id'), false)
  })

  test('cancelAll cancels every execution in flight', async () => {
    const { manager } = setup([{ name: 'wait', handler: (a, ctx) => aborted(ctx.signal).then(() => { throw ctx.signal.reason }) }])
    const pending = [1, 2, 3].map(() => manager.execute('wait', {}))
    await sleep(10)
    assert.equal(manager.inFlight, 3)
    assert.equal(manager.cancelAll(), 3)
    const results = await Promise.all(pending)
    assert.deepEqual(results.map((r) => r.error.code), ['CANCELLED', 'CANCELLED', 'CANCELLED'])
    assert.equal(manager.inFlight, 0)
    assert.equal(manager.cancelAll(), 0)
  })

  test('cancelAll of 300 calls, running and queued: an engine answer longer than its scratch buffer reaches JS whole', async () => {
    // 16 running and 284 queued: the engine's answer to cancelAll is thousands of ops, more
    // than the backend's scratch buffer holds (511), so it is handed over another way.
    const { manager } = setup([{ name: 'wait', handler: (a, ctx) => aborted(ctx.signal).then(() => { throw ctx.signal.reason }) }])
    const cancelled = []
    manager.on('tool-execution-cancelled', ({ executionId }) => cancelled.push(executionId))
    const pending = Array.from({ length: 300 }, () => manager.execute('wait', {}))
    await sleep(10)
    assert.equal(manager.cancelAll(), 300)
    const results = await Promise.all(pending)
    assert.ok(results.every((r) => r.error.code === 'CANCELLED'), JSON.stringify(results.find((r) => r.error?.code !== 'CANCELLED')))
    assert.deepEqual(new Set(cancelled), new Set(results.map((r) => r.execution.id)))
    assert.equal(manager.inFlight, 0)
  })

  test('a reused AbortSignal over 1,000 calls keeps no abort listener', async () => {
    const controller = new AbortController()
    const { manager } = setup([
      { name: 'quick', handler: (args) => args.i },
      { name: 'fail', handler: () => { throw permanentError('no') } },
    ], { maxConcurrency: 64, retry: FAST_RETRY })
    const calls = []
    for (let i = 0; i < 1000; i++) {
      calls.push(manager.execute(i % 10 === 0 ? 'fail' : 'quick', { i }, { signal: controller.signal }))
    }
    const results = await Promise.all(calls)
    assert.equal(results.filter((r) => r.success).length, 900)
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
    // Validation failures and unknown tools release the signal too.
    await manager.execute('nope', {}, { signal: controller.signal })
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  })

  test('one signal shared by many calls in flight has one listener, and its abort cancels them all', async () => {
    // A listener per call: Node warned of a leak ("11 abort listeners added to
    // [AbortSignal]") for the README's own pattern of one request's signal for its calls.
    const controller = new AbortController()
    const { manager } = setup([{ name: 'wait', handler: (_args, ctx) => aborted(ctx.signal) }], { maxConcurrency: 2 })
    const warnings = []
    const onWarning = (w) => warnings.push(w.name)
    globalThis.process?.on?.('warning', onWarning)
    try {
      const calls = Array.from({ length: 12 }, () => manager.execute('wait', {}, { signal: controller.signal }))
      await sleep(20)
      assert.equal(getEventListeners(controller.signal, 'abort').length, 1)
      controller.abort()
      const results = await Promise.all(calls)
      assert.deepEqual(results.map((r) => r.error?.code), Array(12).fill('CANCELLED'))
      assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
      await sleep(10)
      assert.deepEqual(warnings, [])
    } finally {
      globalThis.process?.off?.('warning', onWarning)
    }
  })
})

describe('concurrency', () => {
  test('maxConcurrency 3 holds over 20 calls, started in submission order', async () => {
    let running = 0
    let maxRunning = 0
    const startOrder = []
    const { manager } = setup([{
      name: 'work',
      handler: async (args) => {
        startOrder.push(args.i)
        running++
        maxRunning = Math.max(maxRunning, running)
        await sleep(5)
        running--
        return args.i
      },
    }], { maxConcurrency: 3, retry: FAST_RETRY })
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => manager.execute('work', { i })))
    assert.deepEqual(results.map((r) => r.result), Array.from({ length: 20 }, (_, i) => i))
    assert.equal(maxRunning, 3)
    assert.deepEqual(startOrder, Array.from({ length: 20 }, (_, i) => i))
  })

  test('one abort frees 10 slots at once: the 10 queued calls it admits still time out', { timeout: 10_000 }, async () => {
    // One engine call clears 10 timeouts and arms 10: more timer requests than the wasm
    // backend's status block holds, so they come through its overflow path.
    const { manager } = setup([{ name: 'hang', handler: (_args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('stopped'))) }],
      { maxConcurrency: 10, timeoutMs: 100, retry: { maxAttempts: 1 } })
    const stop = new AbortController()
    const first = Array.from({ length: 10 }, () => manager.execute('hang', {}, { signal: stop.signal, timeoutMs: 60_000 }))
    const queued = Array.from({ length: 10 }, () => manager.execute('hang', {}))
    await sleep(10)
    stop.abort()
    const cancelled = await Promise.all(first)
    assert.deepEqual(cancelled.map((r) => r.error?.category), Array(10).fill('cancelled'))
    const timedOut = await Promise.all(queued)
    assert.deepEqual(timedOut.map((r) => r.error?.category), Array(10).fill('timeout'))
  })

  test('queued executions are pending until a slot frees', async () => {
    const hold = gate()
    const { manager } = setup([{ name: 'held', handler: () => hold.promise }], { maxConcurrency: 1, retry: FAST_RETRY })
    const first = manager.execute('held', {}, { toolCallId: 'first' })
    const second = manager.execute('held', {}, { toolCallId: 'second' })
    await sleep(10)
    const [firstRecord] = manager.getExecutionsForToolCall('first')
    const [secondRecord] = manager.getExecutionsForToolCall('second')
    assert.equal(firstRecord.status, 'executing')
    assert.equal(secondRecord.status, 'pending')
    assert.equal(manager.getExecution(secondRecord.id).status, 'pending')
    assert.equal(manager.inFlight, 2)
    hold.open('go')
    const results = await Promise.all([first, second])
    assert.deepEqual(results.map((r) => r.execution.status), ['succeeded', 'succeeded'])
  })

  test('cancel(id) of a queued execution ends it cancelled without running it', async () => {
    const hold = gate()
    let calls = 0
    const { manager } = setup([{ name: 'held', handler: () => { calls++; return hold.promise } }], { maxConcurrency: 1, retry: FAST_RETRY })
    const first = manager.execute('held', {}, { toolCallId: 'first' })
    const second = manager.execute('held', {}, { toolCallId: 'second' })
    await sleep(10)
    const [queued] = manager.getExecutionsForToolCall('second')
    assert.equal(queued.status, 'pending')
    assert.equal(manager.cancel(queued.id), true)
    const r2 = await second
    assert.equal(r2.success, false)
    assert.equal(r2.error.code, 'CANCELLED')
    hold.open('go')
    assert.equal((await first).success, true)
    await sleep(10)
    assert.equal(calls, 1)
  })

  // A slot freed by a synchronous handler admits the next queued execution, whose
  // handler may finish synchronously too: that chain must not grow the stack. With
  // each admission one frame deeper, results from about the 250th on came back undefined.
  for (const [label, handler] of [
    ['returns', (args) => args.i],
    ['throws', (args) => { throw permanentError(`no ${args.i}`) }],
  ]) {
    test(`5,000 queued executions whose handler ${label} synchronously all settle in order`, async () => {
      const hold = gate()
      const order = []
      const { manager } = setup([
        { name: 'held', handler: () => hold.promise },
        { name: 'sync', handler: (args) => { order.push(args.i); return handler(args) } },
      ], { maxConcurrency: 1, historyLimit: 10, retry: { ...FAST_RETRY, maxAttempts: 1 } })
      const first = manager.execute('held', {})
      const calls = Array.from({ length: 5000 }, (_, i) => manager.execute('sync', { i }))
      hold.open('go')
      assert.equal((await first).result, 'go')
      const results = await Promise.all(calls)
      results.forEach((r, i) => {
        assert.equal(typeof r, 'object', `result ${i} is ${r}`)
        if (label === 'returns') assert.equal(r.result, i, `result ${i}`)
        else assert.equal(r.error.message, `tool 'sync' failed: no ${i}`, `result ${i}`)
      })
      assert.deepEqual(order, Array.from({ length: 5000 }, (_, i) => i))
      assert.equal(manager.inFlight, 0)
    })
  }
})

describe('the first attempt starts once the caller\'s synchronous code is done', () => {
  // A caller starting many calls in a loop would otherwise see their first failures only
  // after the loop, and every retry would fall due late by the loop's length.
  test('execute() returns before the handler runs; the handlers run, in order, at the next microtask', async () => {
    const calls = []
    const { manager } = setup([{ name: 'note', handler: (args) => { calls.push(args.i); return args.i } }])
    const pending = [manager.execute('note', { i: 1 }), manager.execute('note', { i: 2 })]
    calls.push('returned')
    await null
    assert.deepEqual(calls, ['returned', 1, 2])
    assert.deepEqual((await Promise.all(pending)).map((r) => r.result), [1, 2])
  })

  test('a call cancelled right after execute() never runs its handler, nor logs its Starting line', async () => {
    let calls = 0
    const lines = []
    const { manager } = setup([{ name: 'note', handler: () => { calls++; return 'ran' } }], {
      logging: true, logger: (level, message) => lines.push(message), retry: FAST_RETRY,
    })
    let id
    manager.addEventListener('tool-execution-started', (e) => { id = e.detail.execution.id })
    const controller = new AbortController()
    const byId = manager.execute('note', {})
    assert.equal(manager.cancel(id), true)
    const bySignal = manager.execute('note', {}, { signal: controller.signal })
    controller.abort()
    const byCancelAll = manager.execute('note', {})
    assert.equal(manager.cancelAll(), 1)
    for (const r of await Promise.all([byId, bySignal, byCancelAll])) assert.equal(r.error?.code, 'CANCELLED')
    assert.equal(calls, 0)
    assert.equal(lines.filter((l) => l.includes('Starting')).length, 0, lines.join('\n'))
  })

  test('events of the start are delivered by execute() itself', async () => {
    const { manager } = setup([{ name: 'note', handler: () => 'ran' }])
    const seen = []
    for (const type of EVENT_TYPES) manager.addEventListener(type, (e) => seen.push(e.type.replace('tool-execution-', '')))
    const pending = manager.execute('note', {})
    assert.deepEqual(seen, ['started', 'validating', 'executing'])
    await pending
    assert.deepEqual(seen, ['started', 'validating', 'executing', 'succeeded'])
  })
})

describe('bulk cancellation never starts the calls it cancels', () => {
  // Cancelling the running call frees its slot; the next queued call must not start in
  // the gap before it is cancelled too (its handler would run, with its side effects).
  function charging() {
    const calls = []
    const hold = gate()
    const { registry, manager } = setup([
      { name: 'slow', handler: (args) => { calls.push(`slow ${args.n}`); return hold.promise } },
      { name: 'charge', handler: (args) => { calls.push(`charge ${args.n}`); return `charged ${args.n}` } },
    ], { maxConcurrency: 1, retry: FAST_RETRY })
    return { calls, hold, registry, manager }
  }
  async function allCancelled(pending) {
    const results = await Promise.all(pending)
    assert.deepEqual(results.map((r) => r.error?.code), results.map(() => 'CANCELLED'))
  }

  // [label, call options for the three calls, what cancels them]
  const ways = [
    ['cancelAll()', () => ({}), ({ manager }) => assert.equal(manager.cancelAll(), 3)],
    ['one aborted signal shared by running and queued calls', () => {
      const controller = new AbortController()
      return { options: { signal: controller.signal }, cancel: () => controller.abort() }
    }],
    ['a destroyed session', ({ registry }) => {
      const session = registry.createSession()
      return { options: { sessionId: session.id }, cancel: () => session.destroy() }
    }],
  ]
  for (const [label, prepare, cancelAll] of ways) {
    test(label, async () => {
      const setup = charging()
      const { options = {}, cancel = () => cancelAll(setup) } = prepare(setup)
      const { calls, manager } = setup
      const pending = [manager.execute('slow', { n: 1 }, options), manager.execute('charge', { n: 2 }, options), manager.execute('charge', { n: 3 }, options)]
      await null // the first call's handler starts
      assert.deepEqual(calls, ['slow 1'])
      cancel()
      await allCancelled(pending)
      await sleep(5)
      assert.deepEqual(calls, ['slow 1'])
    })
  }

  test('cancelling only the running call still starts the next one', async () => {
    const { calls, manager } = charging()
    const first = manager.execute('slow', { n: 1 }, { toolCallId: 'first' })
    const second = manager.execute('charge', { n: 2 })
    await null
    const [record] = manager.getExecutionsForToolCall('first')
    assert.equal(manager.cancel(record.id), true)
    assert.equal((await first).error.code, 'CANCELLED')
    assert.equal((await second).result, 'charged 2')
    assert.deepEqual(calls, ['slow 1', 'charge 2'])
  })
})

describe('circuit breaker', () => {
  test('opens after failureThreshold, fails fast without the handler, half-open lets one trial through', async () => {
    let calls = 0
    let fail = true
    let trialGate
    const { manager } = setup([{
      name: 'fragile',
      metadata: { circuitBreaker: { failureThreshold: 2, recoveryTimeoutMs: 60, successThreshold: 1 } },
      handler: async () => {
        calls++
        if (trialGate) await trialGate.promise
        if (fail) throw permanentError('down')
        return 'up'
      },
    }], { retry: { ...FAST_RETRY, maxAttempts: 1 } })

    await manager.execute('fragile', {})
    await manager.execute('fragile', {})
    assert.equal(calls, 2)

    const open = await manager.execute('fragile', {})
    assert.equal(open.success, false)
    assert.equal(open.error.code, 'CIRCUIT_OPEN')
    assert.equal(open.error.category, 'permanent')
    assert.equal(open.error.retryable, false)
    assert.match(open.error.message, /fragile/)
    assert.equal(calls, 2, 'the handler is not called while open')

    await sleep(80)
    fail = false
    trialGate = gate()
    const trial = manager.execute('fragile', {})
    await sleep(10)
    const rejected = await manager.execute('fragile', {})
    assert.equal(rejected.error?.code, 'CIRCUIT_OPEN', 'only one trial call while half-open')
    assert.equal(calls, 3)
    trialGate.open()
    trialGate = undefined
    assert.equal((await trial).success, true)

    const closed = await manager.execute('fragile', {})
    assert.equal(closed.success, true)
    assert.equal(calls, 4)
  })

  test('a failed half-open trial opens the circuit again', async () => {
    let calls = 0
    const { manager } = setup([{
      name: 'fragile',
      metadata: { circuitBreaker: { failureThreshold: 1, recoveryTimeoutMs: 40, successThreshold: 1 } },
      handler: () => { calls++; throw permanentError('down') },
    }], { retry: { ...FAST_RETRY, maxAttempts: 1 } })
    await manager.execute('fragile', {})
    assert.equal((await manager.execute('fragile', {})).error.code, 'CIRCUIT_OPEN')
    await sleep(60)
    const trial = await manager.execute('fragile', {})
    assert.equal(trial.error.code, 'PERMANENT_ERROR')
    assert.equal(calls, 2)
    assert.equal((await manager.execute('fragile', {})).error.code, 'CIRCUIT_OPEN')
    assert.equal(calls, 2)
  })
})

describe('lifecycle events', () => {
  // A listener that cancels (or frees a slot) causes events of its own; they come after
  // the ones being delivered, so each execution's events stay in order.
  test('a started listener cancelling its own execution: started, validating, executing, cancelled', async () => {
    const { manager } = setup([{ name: 'quick', handler: () => 'quick' }])
    const seen = []
    for (const type of ['started', 'validating', 'executing', 'succeeded', 'cancelled']) {
      manager.on(`tool-execution-${type}`, (d) => {
        seen.push(type)
        if (type === 'started') manager.cancel(d.execution.id)
      })
    }
    const r = await manager.execute('quick')
    assert.equal(r.error.code, 'CANCELLED')
    assert.deepEqual(seen, ['started', 'validating', 'executing', 'cancelled'])
  })

  test('a queued call whose started listener frees the slot it waits for', async () => {
    const { manager } = setup([
      { name: 'slow', handler: () => new Promise(() => {}) },
      { name: 'quick', handler: () => 'quick' },
    ], { maxConcurrency: 1, retry: FAST_RETRY })
    const seen = { slow: [], quick: [] }
    let slowId
    for (const type of ['started', 'validating', 'executing', 'succeeded', 'cancelled']) {
      manager.on(`tool-execution-${type}`, (d) => {
        const name = d.toolName ?? d.execution.toolName
        seen[name].push(type)
        if (type === 'started' && name === 'slow') slowId = d.execution.id
        if (type === 'started' && name === 'quick') manager.cancel(slowId)
      })
    }
    const [slow, quick] = await Promise.all([manager.execute('slow'), manager.execute('quick')])
    assert.equal(slow.error.code, 'CANCELLED')
    assert.equal(quick.result, 'quick')
    assert.deepEqual(seen.slow, ['started', 'validating', 'executing', 'cancelled'])
    assert.deepEqual(seen.quick, ['started', 'validating', 'executing', 'succeeded'])
  })

  function flakyThenOk() {
    const attempts = new Map()
    return (args, ctx) => {
      const n = (attempts.get(ctx.executionId) ?? 0) + 1
      attempts.set(ctx.executionId, n)
      if (args.failTimes >= n) throw transientError(`attempt ${n}`)
      if (args.permanent) throw permanentError('no way')
      return { ok: args.i }
    }
  }

  test('all seven types via addEventListener, with the documented shapes', async () => {
    const { manager } = setup([
      { name: 'tool', handler: flakyThenOk() },
      { name: 'hang', handler: (a, ctx) => aborted(ctx.signal).then(() => { throw ctx.signal.reason }) },
    ])
    const events = []
    for (const type of EVENT_TYPES) {
      manager.addEventListener(type, (e) => {
        assert.equal(e.type, type)
        events.push([type, e.detail])
      })
    }
    const ok = await manager.execute('tool', { i: 7, failTimes: 1 }, { toolCallId: 'c1' })
    const id = ok.execution.id
    const mine = events.filter(([, d]) => (d.executionId ?? d.execution?.id) === id)
    assert.deepEqual(mine.map(([t]) => t), [
      'tool-execution-started', 'tool-execution-validating', 'tool-execution-executing',
      'tool-execution-retrying', 'tool-execution-executing', 'tool-execution-succeeded',
    ])
    const [[, started], [, validating], [, exec1], [, retrying], [, exec2], [, succeeded]] = mine
    assert.equal(started.execution.id, id)
    assert.equal(started.execution.toolName, 'tool')
    assert.equal(started.execution.toolCallId, 'c1')
    assert.deepEqual(validating, { executionId: id, toolName: 'tool', args: { i: 7, failTimes: 1 } })
    assert.deepEqual(exec1, { executionId: id, toolName: 'tool', attemptNumber: 1 })
    assert.equal(retrying.executionId, id)
    assert.equal(retrying.toolName, 'tool')
    assert.equal(retrying.attemptNumber, 2)
    assert.equal(retrying.maxAttempts, 3)
    assert.equal(retrying.error.category, 'transient')
    assert.equal(retrying.delayMs, 5)
    assert.deepEqual(exec2, { executionId: id, toolName: 'tool', attemptNumber: 2 })
    assert.equal(succeeded.execution.id, id)
    assert.equal(succeeded.execution.status, 'succeeded')
    assert.deepEqual(succeeded.result, { ok: 7 })

    const bad = await manager.execute('tool', { permanent: true })
    const failed = events.find(([t, d]) => t === 'tool-execution-failed' && d.execution.id === bad.execution.id)
    assert.ok(failed)
    assert.equal(failed[1].error.category, 'permanent')
    assert.equal(failed[1].execution.status, 'failed')

    const pending = manager.execute('hang', {})
    await sleep(5)
    manager.cancelAll()
    const cancelledResult = await pending
    const cancelled = events.find(([t, d]) => t === 'tool-execution-cancelled' && d.executionId === cancelledResult.execution.id)
    assert.deepEqual(cancelled[1], { executionId: cancelledResult.execution.id, toolName: 'hang' })
  })

  test('on() passes the detail alone and its unsubscribe works; removeEventListener works', async () => {
    const { manager } = setup([{ name: 'tool', handler: () => 1 }])
    const seen = []
    const offs = EVENT_TYPES.map((type) => manager.on(type, (detail) => seen.push([type, detail])))
    const viaAdd = []
    const listener = (e) => viaAdd.push(e.detail)
    manager.addEventListener('tool-execution-succeeded', listener)
    const r = await manager.execute('tool', {})
    assert.deepEqual(seen.map(([t]) => t), [
      'tool-execution-started', 'tool-execution-validating', 'tool-execution-executing', 'tool-execution-succeeded',
    ])
    const succeeded = seen.at(-1)[1]
    assert.equal(succeeded.execution.id, r.execution.id)
    assert.equal(succeeded.result, 1)
    assert.equal(viaAdd.length, 1)
    for (const off of offs) {
      assert.equal(typeof off, 'function')
      off()
    }
    // As the DOM specifies, removeEventListener returns nothing.
    assert.equal(manager.removeEventListener('tool-execution-succeeded', listener), undefined)
    await manager.execute('tool', {})
    assert.equal(seen.length, 4, 'unsubscribed listeners get nothing')
    assert.equal(viaAdd.length, 1, 'removed listener gets nothing')
  })

  test('order per execution holds under 100 concurrent executions with retries', async () => {
    const { manager } = setup([
      { name: 'tool', handler: flakyThenOk() },
      { name: 'hang', handler: (a, ctx) => aborted(ctx.signal).then(() => { throw ctx.signal.reason }) },
    ], { maxConcurrency: 16, retry: { ...FAST_RETRY, baseDelay: 2 } })
    const seqs = new Map()
    const short = (t) => t.replace('tool-execution-', '')
    for (const type of EVENT_TYPES) {
      manager.on(type, (d) => {
        const id = d.executionId ?? d.execution.id
        if (!seqs.has(id)) seqs.set(id, [])
        seqs.get(id).push(short(type))
      })
    }
    const calls = []
    for (let i = 0; i < 100; i++) {
      if (i % 10 === 9) {
        const controller = new AbortController()
        setTimeout(() => controller.abort(), 20 + (i % 7))
        calls.push(manager.execute('hang', {}, { signal: controller.signal }))
      } else {
        calls.push(manager.execute('tool', { i, failTimes: i % 3, permanent: i % 4 === 0 }))
      }
    }
    const results = await Promise.all(calls)
    assert.equal(seqs.size, 100)
    // An execution cancelled while queued ends right after validating: no attempt ran.
    const pattern = /^started validating( executing( retrying executing)*)? (succeeded|failed|cancelled)$/
    const terminal = { succeeded: 'succeeded', failed: 'failed', cancelled: 'cancelled' }
    let withRetries = 0
    for (const r of results) {
      const seq = seqs.get(r.execution.id).join(' ')
      assert.match(seq, pattern)
      assert.equal(seq.split(' ').at(-1), terminal[r.execution.status])
      assert.equal(r.success, r.execution.status === 'succeeded')
      assert.equal(seq.split(' ').filter((t) => t === 'executing').length, r.execution.retry.attemptNumber)
      if (seq.includes('retrying')) withRetries++
    }
    assert.ok(withRetries >= 30, `${withRetries} executions retried`)
    assert.equal(results.filter((r) => r.execution.status === 'cancelled').length, 10)
  })

  test('a listener that throws disturbs neither the execution nor other listeners', async () => {
    const { manager } = setup([{ name: 'tool', handler: () => 'fine' }])
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    process.on('warning', onWarning)
    const seen = []
    for (const type of EVENT_TYPES) {
      manager.on(type, () => { throw new Error(`listener for ${type} broke`) })
      manager.addEventListener(type, () => { throw new Error('second listener broke too') })
      manager.on(type, () => seen.push(type))
    }
    try {
      const r = await manager.execute('tool', {})
      assert.equal(r.success, true)
      assert.equal(r.result, 'fine')
      assert.deepEqual(seen, ['tool-execution-started', 'tool-execution-validating', 'tool-execution-executing', 'tool-execution-succeeded'])
      await sleep(5)
      assert.ok(warnings.length > 0, 'the throw is reported as a process warning')
    } finally {
      process.off('warning', onWarning)
    }
  })
})

describe('bad input to the error helpers and argument getters', () => {
  test('undefined arguments are {} for the handler too; null is refused as validate() refuses it', async () => {
    const seen = []
    const { registry, manager } = setup([{ name: 'any', handler: (args) => { seen.push(args); return 'ran' } }])
    for (const r of [await manager.execute('any'), await manager.execute('any', undefined)]) {
      assert.equal(r.result, 'ran')
      assert.deepEqual(r.execution.args, {})
    }
    assert.deepEqual(seen, [{}, {}])
    assert.equal(registry.validate('any', null).valid, false)
    const refused = await manager.execute('any', null)
    assert.equal(refused.error.code, 'INVALID_ARGUMENTS')
    assert.match(refused.error.message, /null is not of type "object"/)
    assert.equal(seen.length, 2)
  })

  test('transientError/permanentError throw what building the error throws, not return it', () => {
    for (const make of [transientError, permanentError]) {
      assert.throws(() => make(Object.create(null)), TypeError)
      assert.throws(() => make({ toString() { throw new RangeError('boom') } }), RangeError)
      assert.throws(() => make('x', { get code() { throw 'not an error' } }), (e) => e === 'not an error')
      assert.equal(make('fine').message, 'fine')
    }
  })

  test('an array element whose getter throws fails the call as INVALID_ARGUMENTS; the handler is not called', async () => {
    let called = false
    const { manager } = setup([{ name: 'list', handler: () => { called = true } }])
    const items = [1, 2, 3]
    Object.defineProperty(items, 1, { get() { throw new Error('element getter threw') } })
    const r = await manager.execute('list', { items })
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.match(r.error.message, /the element could not be read at \/items\/1/)
    assert.equal(called, false)
    // No exception was left pending: the next call works normally.
    const { manager: next } = setup([{ name: 'ctx', handler: (args, ctx) => typeof ctx }])
    assert.equal((await next.execute('ctx', {})).result, 'object')
  })
})

/** The process warnings `fn` leads to (a listener or logger that throws or rejects). */
async function quietly(fn) {
  const warnings = []
  const onWarning = (w) => warnings.push(w.message)
  process.on('warning', onWarning)
  try {
    await fn()
    await sleep(5)
  } finally {
    process.off('warning', onWarning)
  }
  return warnings
}

describe('callbacks that throw values that cannot be printed', () => {
  // The warning's text used to be a template literal, which throws for these; that
  // throw ended the listener loop, or reached the caller.
  const unprintable = [
    ['a Symbol', () => Symbol('s')],
    ['a null-prototype object', () => Object.create(null)],
    ['an object whose stack getter throws', () => ({ get stack() { throw new Error('no stack') } })],
  ]
  for (const [label, make] of unprintable) {
    test(`a listener throwing ${label}: later listeners run, and a warning says so`, async () => {
      const { registry, manager } = setup([{ name: 'tool', handler: () => 'fine' }])
      const seen = []
      manager.on('tool-execution-succeeded', () => { throw make() })
      manager.on('tool-execution-succeeded', () => seen.push('manager'))
      registry.on('tool-registry-change', () => { throw make() })
      registry.on('tool-registry-change', () => seen.push('registry'))
      const warnings = await quietly(async () => {
        assert.equal((await manager.execute('tool', {})).result, 'fine')
        registry.register({ name: 'other', description: 'another tool', inputSchema: { type: 'object' }, handler: () => 1 })
      })
      assert.deepEqual(seen, ['manager', 'registry'])
      assert.equal(warnings.filter((w) => /listener threw/.test(w)).length, 2)
    })

    test(`a logger throwing ${label}: the handler gets its context and the result comes back`, async () => {
      const { manager } = setup([{ name: 'tool', handler: (args, ctx) => typeof ctx.signal }], {
        logging: true, logger: () => { throw make() },
      })
      const warnings = await quietly(async () => {
        const r = await manager.execute('tool', {})
        assert.equal(r.result, 'object')
      })
      assert.ok(warnings.some((w) => /logger threw/.test(w)), warnings.join('; '))
    })
  }
})

describe('async callbacks whose promise rejects', () => {
  // A rejection was left unhandled, which ends a Node process (>= 15) after the call
  // had succeeded: an `async` listener or logger must be contained as a throwing one is.

  test('an async listener (on, addEventListener, handleEvent) that rejects becomes a warning; later listeners run', async () => {
    const { registry, manager } = setup([{ name: 'tool', handler: () => 'fine' }])
    const seen = []
    manager.on('tool-execution-succeeded', async () => { throw new Error('on() listener rejected') })
    manager.addEventListener('tool-execution-succeeded', async () => { throw new Error('addEventListener listener rejected') })
    manager.addEventListener('tool-execution-succeeded', { handleEvent: () => Promise.reject(new Error('handleEvent rejected')) })
    // A thenable that is not a Promise is reported too.
    manager.on('tool-execution-succeeded', () => ({ then: (_, reject) => reject(new Error('thenable rejected')) }))
    manager.on('tool-execution-succeeded', () => seen.push('manager'))
    registry.on('tool-registry-change', async () => { throw new Error('registry listener rejected') })
    const warnings = await quietly(async () => {
      assert.equal((await manager.execute('tool', {})).result, 'fine')
      registry.register({ name: 'other', description: 'another tool', handler: () => 1 })
    })
    assert.deepEqual(seen, ['manager'])
    for (const what of ['on() listener', 'addEventListener listener', 'handleEvent', 'thenable', 'registry listener']) {
      assert.ok(warnings.some((w) => w.includes('listener rejected') && w.includes(`${what} rejected`)), `${what}: ${warnings.join('; ')}`)
    }
  })

  test('an async logger that rejects becomes a warning, and the result comes back', async () => {
    const { manager } = setup([{ name: 'tool', handler: () => 'fine' }], {
      logging: true, logger: async () => { throw new Error('log shipper down') },
    })
    const warnings = await quietly(async () => {
      assert.equal((await manager.execute('tool', {})).result, 'fine')
    })
    assert.ok(warnings.some((w) => /the toolhost logger rejected: Error: log shipper down/.test(w)), warnings.join('; '))
  })
})

describe('execution records and statistics', () => {
  test('record shape, timing, and retry.previousErrors', async () => {
    let calls = 0
    const { manager } = setup([{ name: 'rec', handler: async () => { await sleep(5); if (++calls === 1) throw transientError('first'); return { v: 1 } } }])
    const r = await manager.execute('rec', { q: 'x' }, { toolCallId: 'call_rec' })
    const rec = manager.getExecution(r.execution.id)
    assert.deepEqual(rec, r.execution)
    assert.equal(typeof rec.id, 'string')
    assert.equal(rec.toolCallId, 'call_rec')
    assert.equal(rec.toolName, 'rec')
    assert.deepEqual(rec.args, { q: 'x' })
    assert.equal(rec.status, 'succeeded')
    assert.deepEqual(rec.result, { v: 1 })
    assert.equal(rec.error, undefined)
    const { queuedAt, startedAt, completedAt, duration } = rec.timing
    for (const v of [queuedAt, startedAt, completedAt, duration]) assert.equal(typeof v, 'number')
    assert.ok(Math.abs(queuedAt - Date.now()) < 5000, 'timestamps are epoch milliseconds')
    assert.ok(queuedAt <= startedAt && startedAt <= completedAt)
    assert.ok(duration >= 10, `duration ${duration} covers two 5 ms attempts and a backoff`)
    assert.ok(Math.abs(duration - (completedAt - startedAt)) < 2)
    assert.equal(rec.retry.attemptNumber, 2)
    assert.equal(rec.retry.maxAttempts, 3)
    assert.equal(rec.retry.previousErrors.length, 1)
    assert.equal(rec.retry.previousErrors[0].category, 'transient')
    assert.match(rec.retry.previousErrors[0].message, /first/)

    const failed = await manager.execute('nope', {})
    assert.equal(manager.getExecution(failed.execution.id).status, 'failed')
    assert.equal(manager.getExecution(failed.execution.id).error.code, 'TOOL_NOT_FOUND')
    assert.equal(manager.getExecution('no-such-id'), undefined)
  })

  test('getExecutionsForToolCall returns every record of the call, oldest first', async () => {
    const { manager } = setup([{ name: 't', handler: (a) => a.n }])
    const a = await manager.execute('t', { n: 1 }, { toolCallId: 'shared' })
    const b = await manager.execute('t', { n: 2 }, { toolCallId: 'shared' })
    await manager.execute('t', { n: 3 }, { toolCallId: 'other' })
    assert.deepEqual(manager.getExecutionsForToolCall('shared').map((r) => r.id), [a.execution.id, b.execution.id])
    assert.deepEqual(manager.getExecutionsForToolCall('unknown'), [])
  })

  test('historyLimit keeps only the newest finished records', async () => {
    const { manager } = setup([{ name: 't', handler: (a) => a.i }], { historyLimit: 5, retry: FAST_RETRY })
    const ids = []
    for (let i = 0; i < 8; i++) ids.push((await manager.execute('t', { i }, { toolCallId: 'hist' })).execution.id)
    assert.deepEqual(ids.slice(0, 3).map((id) => manager.getExecution(id)), [undefined, undefined, undefined])
    assert.ok(ids.slice(3).every((id) => manager.getExecution(id)?.status === 'succeeded'))
    assert.deepEqual(manager.getExecutionsForToolCall('hist').map((r) => r.id), ids.slice(3))
    // Stats are not limited by history.
    assert.equal(manager.stats('t').executionCount, 8)
  })

  test('getExecutions lists those in flight, last started first, then history, last finished first', async () => {
    const held = [gate(), gate()]
    const { manager } = setup([
      { name: 't', handler: (a) => a.i },
      { name: 'held', handler: (a) => held[a.k].promise },
    ], { historyLimit: 3, retry: FAST_RETRY })
    assert.deepEqual(manager.getExecutions(), [])
    const done = []
    for (let i = 0; i < 4; i++) done.push((await manager.execute('t', { i })).execution.id)
    const first = manager.execute('held', { k: 0 })
    const second = manager.execute('held', { k: 1 })
    const listed = manager.getExecutions()
    assert.deepEqual(listed.map((r) => r.status), ['executing', 'executing', 'succeeded', 'succeeded', 'succeeded'])
    assert.deepEqual(listed.map((r) => r.args.k ?? r.args.i), [1, 0, 3, 2, 1], 'in flight, then history (historyLimit 3), newest first')
    assert.deepEqual(listed.slice(2).map((r) => r.id), done.slice(1).reverse())
    assert.equal(listed[2], manager.getExecution(done[3]), 'the kept records themselves')
    held[0].open('a')
    await first
    assert.deepEqual(manager.getExecutions({ limit: 2 }).map((r) => [r.toolName, r.status]), [['held', 'executing'], ['held', 'succeeded']])
    assert.deepEqual(manager.getExecutions({ limit: 0 }), [])
    assert.equal(manager.getExecutions({ limit: Infinity }).length, 4)
    held[1].open('b')
    await second
    for (const [options, code, message] of [
      [{ limt: 2 }, 'INVALID_CONFIG', /unknown option `limt`.*did you mean `limit`/],
      [{ limit: -1 }, 'INVALID_ARGUMENTS', /limit must be a whole number/],
      [{ limit: 1.5 }, 'INVALID_ARGUMENTS', /limit must be a whole number/],
      [{ limit: '2' }, 'INVALID_ARGUMENTS', /limit must be a whole number/],
      [7, 'INVALID_ARGUMENTS', /takes \{ limit\? \}/],
    ]) assert.throws(() => manager.getExecutions(options), (e) => e.code === code && message.test(e.message), JSON.stringify(options))
  })

  test('stats(name) counts, durations, rate and last error', async () => {
    let n = 0
    const { manager } = setup([{ name: 's', handler: async () => { await sleep(3); if (++n === 2) throw permanentError('second fails'); return n } }])
    const results = []
    for (let i = 0; i < 3; i++) results.push(await manager.execute('s', {}))
    const stats = manager.stats('s')
    assert.equal(stats.executionCount, 3)
    assert.equal(stats.successCount, 2)
    assert.equal(stats.failureCount, 1)
    assert.ok(Math.abs(stats.successRate - 2 / 3) < 1e-9)
    const total = results.reduce((sum, r) => sum + r.execution.timing.duration, 0)
    assert.ok(Math.abs(stats.totalDurationMs - total) < 1, `${stats.totalDurationMs} vs ${total}`)
    assert.ok(Math.abs(stats.averageDurationMs - total / 3) < 1)
    assert.equal(stats.lastError.code, 'PERMANENT_ERROR')
    assert.match(stats.lastError.message, /second fails/)

    const empty = manager.stats('never_run')
    assert.equal(empty.executionCount, 0)
    assert.equal(empty.successCount, 0)
    assert.equal(empty.failureCount, 0)
    assert.ok(!Number.isNaN(empty.averageDurationMs))
  })
})

describe('numbers at the edges never crash the process', () => {
  test('timeoutMs: null (or Infinity) per call means no timeout', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 'waits a little', handler: () => new Promise((res) => setTimeout(() => res('ok'), 30)) })
    const manager = new ToolExecutionManager(registry, { timeoutMs: 5 })
    for (const timeoutMs of [null, Infinity]) {
      const r = await manager.execute('t', {}, { timeoutMs })
      assert.equal(r.success, true, `timeoutMs ${timeoutMs}: ${JSON.stringify(r.error)}`)
    }
    assert.equal((await manager.execute('t', {})).error.code, 'TIMEOUT', 'the manager default still applies without the option')
  })

  test('delays and timeouts too large to represent saturate instead of crashing', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 'fails once', handler: async () => { throw transientError('again') } })
    const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 1e299, maxDelay: 1e300, jitter: 'none' } })
    manager.on('tool-execution-retrying', () => setTimeout(() => manager.cancelAll(), 5))
    const r = await manager.execute('t', {}, { timeoutMs: 1e300 })
    assert.equal(r.error.code, 'CANCELLED')
    assert.equal(r.execution.retry.attemptNumber, 1)
  })
})

test('argument strings of every length around the 256-byte read buffer arrive whole', async () => {
  const registry = new ToolRegistry()
  registry.register({ name: 'keep', description: 'keeps s', inputSchema: { type: 'object' }, handler: () => 'ok' })
  const manager = new ToolExecutionManager(registry)
  // ASCII padding shifts where the multi-byte characters fall against the buffer's end.
  const byteLength = (s) => new TextEncoder().encode(s).length
  for (const unit of ['a', 'é', '中', '😀']) {
    for (let pad = 0; pad < 4; pad++) for (let count = Math.floor(240 / byteLength(unit)); byteLength(unit) * count <= 270; count++) {
      const s = 'x'.repeat(pad) + unit.repeat(count)
      const r = await manager.execute('keep', { [s]: s })
      assert.equal(r.success, true)
      const recorded = manager.getExecution(r.execution.id).args
      assert.deepEqual(Object.keys(recorded), [s], `key of ${byteLength(s)} bytes`)
      assert.equal(recorded[s], s, `value of ${byteLength(s)} bytes`)
    }
  }
})

describe('timers on the event loop (Linux, native addon)', () => {
  // Timeouts and backoff delays wait on the JS thread's own event loop (a timerfd in
  // libuv's epoll set, src/loop_timers.rs): no thread of toolhost wakes for them.
  const native = globalThis.process?.platform === 'linux' && process.env.TOOLHOST_BACKEND !== 'wasm'
  // The napi binding's test-only functions, from the package's generated index.js: here,
  // or in a project that installed the package (npm run test:platforms).
  const binding = () => {
    const require = createRequire(import.meta.url)
    return require(join(dirname(require.resolve('toolhost/package.json')), 'index.js'))
  }
  test('retries and timeouts wait on the loop, fire on time, and leave nothing behind', { skip: !native && 'the native addon on Linux only' }, async () => {
    const { pendingTimers } = binding()
    const [before] = pendingTimers()
    let attempts = 0
    let waiting
    const { manager } = setup([
      { name: 'flaky', handler: () => { if (++attempts < 3) throw transientError('again'); return 'ok' } },
      { name: 'stuck', handler: () => new Promise(() => {}) },
    ], { retry: { maxAttempts: 3, baseDelay: 20, backoffMultiplier: 1, jitter: 'none' } })
    manager.on('tool-execution-retrying', () => queueMicrotask(() => { waiting ??= pendingTimers()[0] }))
    const started = performance.now()
    const r = await manager.execute('flaky', {})
    const took = performance.now() - started
    assert.equal(r.result, 'ok')
    assert.ok(took >= 39, `two 20 ms backoff delays took ${took.toFixed(1)} ms`)
    assert.ok(took < 1000, `two 20 ms backoff delays took ${took.toFixed(1)} ms`)
    assert.equal(waiting, before + 1, 'the backoff delay waits on the loop')
    const timedOut = await manager.execute('stuck', {}, { timeoutMs: 30 })
    assert.equal(timedOut.error.code, 'TIMEOUT')
    assert.deepEqual(pendingTimers(), [before, -1], 'every timer fired or was removed, and the deadline thread never started')
    const threads = readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim())
    assert.ok(!threads.includes('toolhost-deadli'), `no timer thread: ${threads.join(', ')}`)
  })

  // Other systems (and a runtime whose N-API has no libuv) keep them on a thread.
  test('the deadline thread still serves where the loop cannot: retries, timeouts, cancel', { skip: !native && 'the native addon on Linux only' }, async () => {
    const { pendingTimers, timersOnThread } = binding()
    const [onLoop] = pendingTimers()
    timersOnThread(true)
    try {
      let attempts = 0
      const { manager } = setup([
        { name: 'flaky', handler: () => { if (++attempts < 3) throw transientError('again'); return 'ok' } },
        { name: 'stuck', handler: () => new Promise(() => {}) },
      ], { retry: { maxAttempts: 3, baseDelay: 10, jitter: 'none' } })
      const started = performance.now()
      assert.equal((await manager.execute('flaky', {})).result, 'ok')
      assert.ok(performance.now() - started >= 29, 'the backoff delays were waited out')
      assert.equal((await manager.execute('stuck', {}, { timeoutMs: 30 })).error.code, 'TIMEOUT')
      const running = manager.execute('stuck', {})
      await sleep(5)
      assert.equal(pendingTimers()[1], 1, 'the running attempt has its timeout on the thread')
      manager.cancelAll()
      assert.equal((await running).execution.status, 'cancelled')
      assert.deepEqual(pendingTimers(), [onLoop, 0], 'on the thread, every timer fired or was removed; none went to the loop')
    } finally {
      timersOnThread(false)
    }
  })
})
