// Interceptors (issue 4): the built-in ones switched by manager options (validation,
// logging, logArguments, truncateLogs, redact, metadata, selfInstrumented) and JS
// interceptors added with manager.use(): ctx, changing arguments, short-circuiting,
// failing, and order across retries.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'

const FAST_RETRY = { baseDelay: 1, jitter: 'none' }
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** A tool definition with an object schema. */
function tool(name, handler, extra = {}) {
  return { name, description: `the ${name} tool`, inputSchema: { type: 'object' }, handler, ...extra }
}

/** A registry holding `tools`, a manager over it with `options`, and the logger's lines. */
function setup(tools, options = {}) {
  const registry = new ToolRegistry()
  for (const t of tools) registry.register(t)
  const logs = []
  const manager = new ToolExecutionManager(registry, {
    retry: FAST_RETRY,
    logger: (level, message, fields) => logs.push({ level, message, fields }),
    ...options,
  })
  return { registry, manager, logs }
}

/** True when `n` has at most 2 decimals. */
function hasAtMostTwoDecimals(n) {
  return Math.abs(n * 100 - Math.round(n * 100)) < 1e-6
}

describe('built-in validation', () => {
  const strict = (calls) => tool('strict', (args) => { calls.push(args); return 'ran' }, {
    inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  })

  test('on by default: invalid arguments fail with INVALID_ARGUMENTS and the handler is not called', async () => {
    const calls = []
    const { manager } = setup([strict(calls)])
    const r = await manager.execute('strict', { n: 'not a number' })
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'validation')
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.equal(calls.length, 0)
    assert.equal((await manager.execute('strict', { n: 1 })).result, 'ran')
  })

  test('validation: false calls the handler even with invalid arguments', async () => {
    const calls = []
    const { manager } = setup([strict(calls)], { validation: false })
    const r = await manager.execute('strict', { n: 'not a number' })
    assert.equal(r.success, true, JSON.stringify(r.error))
    assert.equal(r.result, 'ran')
    assert.deepEqual(calls, [{ n: 'not a number' }])
    const missing = await manager.execute('strict', {})
    assert.equal(missing.success, true)
    assert.deepEqual(calls[1], {})
  })
})

describe('built-in logging', () => {
  test('lines keep their order around handlers, retries, queued executions, events and results', async () => {
    const seen = []
    let fail = 1
    const registry = new ToolRegistry()
    registry.register(tool('work', async (args) => {
      seen.push(`handler ${args.n}`)
      if (args.n === 'b' && fail-- > 0) throw transientError('again')
      return { n: args.n }
    }))
    registry.register(tool('sync', (args) => { seen.push(`handler ${args.n}`); return { n: args.n } }))
    const manager = new ToolExecutionManager(registry, {
      logging: true, maxConcurrency: 1, retry: FAST_RETRY,
      logger: (level, message) => seen.push(message.replace(/ \(.*ms\)$/, '').replace('[TOOL EXECUTION] ', '')),
    })
    manager.on('tool-execution-succeeded', (e) => seen.push(`succeeded ${e.result.n}`))
    const run = (name, n) => manager.execute(name, { n }).then((r) => seen.push(`resolved ${r.result.n}`))
    await Promise.all([run('work', 'a'), run('work', 'b'), run('sync', 'c')])
    assert.deepEqual(seen, [
      'Starting work', 'handler a', 'succeeded a', 'Completed work',
      'Starting work', 'handler b', 'resolved a', "Error in work: tool 'work' failed: again",
      'Starting work', 'handler b', 'succeeded b', 'Completed work',
      'Starting sync', 'handler c', 'succeeded c', 'Completed sync',
      'resolved b', 'resolved c',
    ])
  })

  test('off by default: the logger is never called', async () => {
    const { manager, logs } = setup([tool('echo', (a) => a), tool('boom', () => { throw new Error('x') })])
    await manager.execute('echo', { a: 1 })
    await manager.execute('boom', {})
    assert.deepEqual(logs, [])
  })

  test('Starting and Completed lines with level info, executionId, attemptNumber and a 2-decimal duration', async () => {
    const { manager, logs } = setup([tool('echo', (a) => a)], { logging: true })
    const r = await manager.execute('echo', { city: 'Paris' })
    assert.equal(logs.length, 2)
    const [start, done] = logs
    assert.equal(start.level, 'info')
    assert.equal(start.message, '[TOOL EXECUTION] Starting echo')
    assert.equal(start.fields.executionId, r.execution.id)
    assert.equal(start.fields.toolName, 'echo')
    assert.equal(start.fields.attemptNumber, 1)
    assert.equal(start.fields.args, '{"city":"Paris"}')
    assert.equal(done.level, 'info')
    const m = /^\[TOOL EXECUTION\] Completed echo \((\d+\.\d{2})ms\)$/.exec(done.message)
    assert.ok(m, done.message)
    assert.equal(done.fields.executionId, r.execution.id)
    assert.ok(Math.abs(Number(m[1]) - r.execution.timing.duration) < 0.01, `${m[1]} vs ${r.execution.timing.duration}`)
  })

  test('one Starting line per attempt; an Error line with level error and the first 5 stack lines', async () => {
    const thrown = []
    function deep(depth) {
      if (depth === 0) {
        const e = transientError('flaky backend')
        thrown.push(e)
        throw e
      }
      return deep(depth - 1)
    }
    const { manager, logs } = setup([tool('flaky', (args, ctx) => (ctx.attemptNumber < 3 ? deep(8) : 'ok'))], { logging: true })
    const r = await manager.execute('flaky', {})
    assert.equal(r.success, true)
    const starts = logs.filter((l) => l.message === '[TOOL EXECUTION] Starting flaky')
    assert.deepEqual(starts.map((l) => l.fields.attemptNumber), [1, 2, 3])
    assert.ok(starts.every((l) => l.fields.executionId === r.execution.id))
    const errors = logs.filter((l) => l.message.startsWith('[TOOL EXECUTION] Error in flaky: '))
    assert.equal(errors.length, 2)
    for (const [i, line] of errors.entries()) {
      assert.equal(line.level, 'error')
      assert.ok(line.message.includes('flaky backend'), line.message)
      assert.ok(thrown[i].stack.split('\n').length > 5, 'the thrown stack is longer than 5 lines')
      assert.equal(line.fields.stack, thrown[i].stack.split('\n').slice(0, 5).join('\n'))
    }
    assert.equal(logs.filter((l) => l.message.startsWith('[TOOL EXECUTION] Completed flaky')).length, 1)
  })

  test('each line carries only its own fields, call after call (the engine reuses written lines\' buffers)', async () => {
    const { manager, logs } = setup([tool('echo', (a) => a), tool('boom', () => { throw new Error('disk on fire') })], { logging: true, retry: { maxAttempts: 1 } })
    for (let i = 0; i < 6; i++) await manager.execute(i % 2 === 0 ? 'echo' : 'boom', { i })
    const keys = (l) => Object.keys(l.fields).sort().join(',')
    assert.equal(logs.length, 12)
    for (const [k, line] of logs.entries()) {
      const i = k >> 1
      if (k % 2 === 0) {
        assert.equal(line.message, `[TOOL EXECUTION] Starting ${i % 2 === 0 ? 'echo' : 'boom'}`)
        assert.equal(keys(line), 'args,attemptNumber,executionId,toolName')
        assert.equal(line.fields.args, `{"i":${i}}`)
      } else if (i % 2 === 0) {
        assert.match(line.message, /^\[TOOL EXECUTION\] Completed echo \(\d+\.\d{2}ms\)$/)
        assert.equal(keys(line), 'durationMs,executionId,toolName')
      } else {
        assert.match(line.message, /^\[TOOL EXECUTION\] Error in boom: .*disk on fire$/)
        assert.equal(keys(line), 'error,executionId,stack,toolName')
      }
    }
  })

  test('a final failure logs Error in {tool}: {message} and no Completed line', async () => {
    const { manager, logs } = setup([tool('boom', () => { throw new Error('disk on fire') })], { logging: true })
    const r = await manager.execute('boom', {})
    assert.equal(r.success, false)
    const last = logs.at(-1)
    assert.equal(last.level, 'error')
    assert.match(last.message, /^\[TOOL EXECUTION\] Error in boom: .*disk on fire/)
    assert.equal(last.fields.executionId, r.execution.id)
    assert.equal(logs.some((l) => l.message.includes('Completed')), false)
  })

  test('logArguments: false leaves the arguments out of every log line', async () => {
    const { manager, logs } = setup([tool('echo', (a) => a)], { logging: true, logArguments: false })
    await manager.execute('echo', { marker: 'VISIBLE_IN_ARGS_ONLY' })
    assert.equal(logs.length, 2)
    assert.equal(logs[0].message, '[TOOL EXECUTION] Starting echo')
    assert.equal('args' in logs[0].fields, false)
    assert.equal(JSON.stringify(logs).includes('VISIBLE_IN_ARGS_ONLY'), false)
  })

  test('logged arguments are cut to truncateLogs characters (default 100) plus an ellipsis', async () => {
    const long = { text: 'y'.repeat(300) }
    const compact = JSON.stringify(long)
    const def = setup([tool('echo', (a) => a)], { logging: true })
    const r = await def.manager.execute('echo', long)
    assert.equal(r.result.text.length, 300, 'the handler got the whole argument')
    assert.equal(def.logs[0].fields.args, compact.slice(0, 100) + '…')

    const short = setup([tool('echo', (a) => a)], { logging: true, truncateLogs: 30 })
    await short.manager.execute('echo', long)
    assert.equal(short.logs[0].fields.args, compact.slice(0, 30) + '…')
    await short.manager.execute('echo', { a: 1 })
    assert.equal(short.logs[2].fields.args, '{"a":1}', 'short arguments are kept whole')
  })

  test('a Starting line shows the argument text as the call gave it, whitespace outside strings dropped, on every attempt and after an edit', async () => {
    let fails = 1
    const { manager, logs } = setup([
      tool('echo', (a) => a),
      tool('flaky', () => { if (fails-- > 0) throw transientError('again'); return 'ok' }),
      tool('pay', (a) => a, { needsApproval: true }),
    ], { logging: true })
    const args = (tool) => logs.filter((l) => l.message === `[TOOL EXECUTION] Starting ${tool}`).map((l) => l.fields.args)
    // Compact text the engine does not copy back (escapes kept as written), and spaced
    // text it previews; both as before: what the call gave.
    await manager.execute('echo', '{"s":"caf\\u00e9 \\"x\\"","n":1.50}')
    await manager.execute('echo', '{ "s" : "a b",\n "n": [1, 2] }')
    await manager.execute('echo', { q: 'weather in Paris', n: 7 })
    assert.deepEqual(args('echo'), ['{"s":"caf\\u00e9 \\"x\\"","n":1.50}', '{"s":"a b","n":[1,2]}', '{"q":"weather in Paris","n":7}'])
    await manager.execute('flaky', { attempt: 'each' })
    assert.deepEqual(args('flaky'), ['{"attempt":"each"}', '{"attempt":"each"}'])
    // An approver's edit replaces the text: the line shows the edited arguments.
    const pending = manager.execute('pay', { amount: 500 })
    await sleep(5)
    const [{ approvalId }] = manager.pendingApprovals()
    manager.approve(approvalId, { args: { amount: 50 } })
    assert.equal((await pending).result.amount, 50)
    assert.deepEqual(args('pay'), ['{"amount":50}'])
  })

  test('redact: fields are shown as [REDACTED] in logs, at any depth and in any case; the handler gets the real values', async () => {
    let received
    const { manager, logs } = setup([tool('login', (a) => { received = a; return 'ok' })], {
      logging: true, truncateLogs: 1000, redact: ['password', 'apiKey'],
    })
    const args = { user: 'bob', password: 'hunter2', nested: { APIKEY: 'sk-secret', list: [{ Password: 'p2' }] } }
    await manager.execute('login', args)
    assert.deepEqual(received, args)
    const logged = JSON.parse(logs[0].fields.args)
    assert.deepEqual(logged, {
      user: 'bob', password: '[REDACTED]', nested: { APIKEY: '[REDACTED]', list: [{ Password: '[REDACTED]' }] },
    })
    const everything = JSON.stringify(logs)
    for (const secret of ['hunter2', 'sk-secret', 'p2']) assert.equal(everything.includes(secret), false, secret)
  })

  test('redaction happens before truncation', async () => {
    const { manager, logs } = setup([tool('login', () => 'ok')], { logging: true, truncateLogs: 20, redact: ['password'] })
    await manager.execute('login', { password: 'hunter2hunter2hunter2' })
    assert.equal(logs[0].fields.args, '{"password":"[REDACT…')
  })

  test('logging without a logger still completes the call', async () => {
    const registry = new ToolRegistry()
    registry.register(tool('echo', (a) => a))
    const manager = new ToolExecutionManager(registry, { logging: true })
    const r = await manager.execute('echo', { a: 1 })
    assert.deepEqual(r.result, { a: 1 })
  })
})

describe('built-in metadata', () => {
  test('off by default: results are returned as they were', async () => {
    const { manager } = setup([tool('obj', () => ({ a: 1 }))])
    assert.deepEqual((await manager.execute('obj', {})).result, { a: 1 })
  })

  test('metadata: true adds _execution_metadata { duration_ms (2 decimals), tool_name, timestamp (ISO 8601) } to a copy', async () => {
    const original = { a: 1, nested: { b: [1, 2] } }
    const { manager } = setup([tool('obj', () => original)], { metadata: true })
    const before = Date.now()
    const r = await manager.execute('obj', {})
    const after = Date.now()
    const { _execution_metadata: meta, ...rest } = r.result
    assert.deepEqual(rest, { a: 1, nested: { b: [1, 2] } })
    assert.deepEqual(Object.keys(meta).sort(), ['duration_ms', 'timestamp', 'tool_name'])
    assert.equal(meta.tool_name, 'obj')
    assert.equal(typeof meta.duration_ms, 'number')
    assert.ok(meta.duration_ms >= 0)
    assert.ok(hasAtMostTwoDecimals(meta.duration_ms), String(meta.duration_ms))
    assert.ok(meta.duration_ms <= r.execution.timing.duration + 1)
    assert.match(meta.timestamp, ISO_8601)
    const t = Date.parse(meta.timestamp)
    assert.ok(t >= before - 1 && t <= after + 1, meta.timestamp)
    assert.equal('_execution_metadata' in original, false, 'the handler\'s object is not mutated')
  })

  test('the stamped copy keeps every own key as data, "__proto__" included, and a plain prototype', async () => {
    const fromJson = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')
    const withGetter = { get lazy() { return 42 }, [Symbol.for('tag')]: 'kept' }
    const nullProto = Object.assign(Object.create(null), { z: 26 })
    const { manager } = setup([tool('json', () => fromJson), tool('getter', () => withGetter), tool('bare', () => nullProto)], { metadata: true })
    const a = (await manager.execute('json', {})).result
    assert.equal(Object.getPrototypeOf(a), Object.prototype)
    assert.deepEqual(Object.getOwnPropertyDescriptor(a, '__proto__').value, { polluted: true })
    assert.equal(a.polluted, undefined)
    assert.equal(a.a, 1)
    assert.equal(a._execution_metadata.tool_name, 'json')
    const b = (await manager.execute('getter', {})).result
    assert.equal(Object.getOwnPropertyDescriptor(b, 'lazy').value, 42)
    assert.equal(b[Symbol.for('tag')], 'kept')
    const c = (await manager.execute('bare', {})).result
    assert.equal(c.z, 26)
    assert.equal(c._execution_metadata.tool_name, 'bare')
  })

  test('results that are not plain objects are untouched', async () => {
    const values = { num: 5, str: 'hi', arr: [1, { a: 2 }], nul: null, bool: false }
    const { manager } = setup(Object.entries(values).map(([name, v]) => tool(name, () => v)).concat(tool('undef', () => undefined)), { metadata: true })
    for (const [name, v] of Object.entries(values)) {
      const r = await manager.execute(name, {})
      assert.equal(r.success, true)
      assert.deepEqual(r.result, v, name)
    }
    assert.equal((await manager.execute('undef', {})).result, undefined)
  })

  test('a result whose getters can be read once is read once: stamped, never a hang or a crash; one that throws fails INVALID_RESULT', async () => {
    const readOnce = () => {
      let used = false
      return { status: 200, get body() { if (used) throw new TypeError('body already used'); used = true; return 'hello' } }
    }
    const { manager } = setup([
      tool('sync', readOnce), tool('async', async () => readOnce()),
      tool('unreadable', () => ({ get body() { throw new TypeError('never readable') } })),
    ], { metadata: true })
    const HANG = Symbol('hang')
    const within = (p) => Promise.race([p, sleep(2000).then(() => HANG)])
    const uncaught = []
    const onUncaught = (e) => uncaught.push(e)
    globalThis.process?.on?.('uncaughtException', onUncaught)
    try {
      for (const name of ['sync', 'async']) {
        const r = await within(manager.execute(name, {}))
        assert.notEqual(r, HANG, `${name}: execute() never settled`)
        assert.equal(r.success, true, name)
        assert.equal(r.result.body, 'hello')
        assert.equal(r.result.status, 200)
        assert.equal(r.result._execution_metadata.tool_name, name)
      }
      const bad = await within(manager.execute('unreadable', {}))
      assert.notEqual(bad, HANG)
      assert.equal(bad.error.code, 'INVALID_RESULT')
      assert.match(bad.error.message, /never readable/)
      assert.equal(manager.inFlight, 0)
      assert.deepEqual(uncaught, [])
    } finally {
      globalThis.process?.off?.('uncaughtException', onUncaught)
    }
  })

  test('a failed execution is not stamped', async () => {
    const { manager } = setup([tool('boom', () => { throw new Error('x') })], { metadata: true })
    const r = await manager.execute('boom', {})
    assert.equal(r.success, false)
    assert.equal(r.result, undefined)
  })
})

describe('selfInstrumented tools', () => {
  test('are neither logged nor stamped, while other tools of the same manager are', async () => {
    const { manager, logs } = setup([
      tool('self', () => ({ mine: true }), { metadata: { selfInstrumented: true } }),
      tool('selfBoom', () => { throw new Error('own failure') }, { metadata: { selfInstrumented: true } }),
      tool('plain', () => ({ plain: true })),
    ], { logging: true, metadata: true })
    const self = await manager.execute('self', { a: 1 })
    assert.deepEqual(self.result, { mine: true })
    const boom = await manager.execute('selfBoom', {})
    assert.equal(boom.success, false)
    assert.deepEqual(logs, [])

    const plain = await manager.execute('plain', {})
    assert.ok(plain.result._execution_metadata)
    assert.deepEqual(logs.map((l) => l.message.replace(/\(.*ms\)/, '')), [
      '[TOOL EXECUTION] Starting plain', '[TOOL EXECUTION] Completed plain ',
    ])
  })
})

describe('JS interceptors (manager.use)', () => {
  test('ctx holds toolName, args, executionId, toolCallId, sessionId, attemptNumber, maxAttempts, signal', async () => {
    const { registry, manager } = setup([])
    const s = registry.createSession()
    s.register(tool('echo', (a) => a))
    const seen = []
    manager.use(async (ctx, next) => {
      seen.push({ ...ctx, signal: ctx.signal })
      return next()
    })
    const r = await manager.execute('echo', { a: 1 }, { sessionId: s.id, toolCallId: 'call_1' })
    assert.equal(r.success, true)
    assert.equal(seen.length, 1)
    const [ctx] = seen
    assert.equal(ctx.toolName, 'echo')
    assert.deepEqual(ctx.args, { a: 1 })
    assert.equal(ctx.executionId, r.execution.id)
    assert.equal(ctx.toolCallId, 'call_1')
    assert.equal(ctx.sessionId, s.id)
    assert.equal(ctx.attemptNumber, 1)
    assert.equal(ctx.maxAttempts, r.execution.retry.maxAttempts)
    assert.ok(ctx.signal instanceof AbortSignal)
  })

  test('may change the arguments the handler receives', async () => {
    let received
    const { manager } = setup([tool('echo', (a) => { received = a; return a.n })])
    manager.use(async (ctx, next) => {
      ctx.args = { ...ctx.args, n: ctx.args.n * 10 }
      return next()
    })
    const r = await manager.execute('echo', { n: 4 })
    assert.deepEqual(received, { n: 40 })
    assert.equal(r.result, 40)
  })

  describe('arguments an interceptor changes are validated again', () => {
    const COUNT = { type: 'object', properties: { n: { type: 'integer', minimum: 0 }, when: { type: 'string' } }, required: ['n'], additionalProperties: false }
    /** A manager whose one tool checks `COUNT`, `change(ctx)` run by an interceptor that
     * keeps what `next()` rejected with; the handler's calls, and that rejection. */
    function changing(change, options = {}) {
      const calls = []
      const seen = { rejection: undefined }
      const { manager } = setup([tool('count', (args) => { calls.push(args); return args.n }, { inputSchema: COUNT })], options)
      manager.use(async (ctx, next) => {
        change(ctx)
        try {
          return await next()
        } catch (err) {
          seen.rejection = err
          throw err
        }
      })
      return { manager, calls, seen }
    }

    test('arguments the schema refuses fail the attempt, not retried: the handler never runs, next() rejects with the error', async () => {
      const { manager, calls, seen } = changing((ctx) => { ctx.args = { n: -1 } })
      const r = await manager.execute('count', { n: 4 })
      assert.equal(r.success, false)
      assert.equal(r.error.category, 'validation')
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.match(r.error.message, /^invalid arguments for tool 'count' from an interceptor: .*minimum/)
      assert.equal(r.error.validationErrors.length, 1)
      assert.equal(r.error.retryable, false)
      assert.equal(r.execution.retry.attemptNumber, 1)
      assert.deepEqual(r.execution.args, { n: 4 }, 'the record keeps the arguments the call was made with')
      assert.deepEqual(calls, [])
      // The call settles as the engine fails the attempt; the interceptor hears of it after.
      await sleep(1)
      assert.equal(seen.rejection.code, 'INVALID_ARGUMENTS')
      assert.equal(seen.rejection.message, r.error.message)
      assert.deepEqual(seen.rejection.validationErrors, r.error.validationErrors)
      assert.equal(manager.inFlight, 0)
    })

    test('arguments changed in place are checked too', async () => {
      const { manager, calls } = changing((ctx) => { ctx.args.extra = true })
      const r = await manager.execute('count', { n: 4 })
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.match(r.error.message, /extra/)
      assert.deepEqual(calls, [])
    })

    test('what an interceptor changes in place is its attempt\'s alone: the next attempt and the record start from the call\'s arguments', async () => {
      const calls = []
      const { manager } = setup([tool('count', (args, ctx) => {
        calls.push(args.n)
        if (ctx.attemptNumber === 1) throw transientError('once more')
        return args.n
      }, { inputSchema: COUNT })])
      manager.use((ctx, next) => {
        ctx.args.n += 1
        return next()
      })
      const r = await manager.execute('count', { n: 4 })
      assert.deepEqual(calls, [5, 5])
      assert.equal(r.result, 5)
      assert.deepEqual(r.execution.args, { n: 4 })
    })

    test('arguments JSON cannot hold are refused, saying what and where', async () => {
      const { manager, calls } = changing((ctx) => { ctx.args = { n: 1, when: new Map() } })
      const r = await manager.execute('count', { n: 4 })
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.equal(r.error.message, "invalid arguments for tool 'count' from an interceptor: a Map is not JSON (pass a plain object or array instead) at /when")
      let deep = 0
      for (let i = 0; i < 300; i++) deep = [deep]
      const nested = await changing((ctx) => { ctx.args = { n: 1, when: deep } }).manager.execute('count', { n: 4 })
      assert.equal(nested.error.message, "invalid arguments for tool 'count' from an interceptor: nested more than 127 levels deep")
      assert.deepEqual(calls, [])
    })

    test('valid changed arguments reach the handler as their JSON, as a call\'s arguments do', async () => {
      const { manager, calls } = changing((ctx) => { ctx.args = { n: ctx.args.n + 1, when: new Date(0) } })
      const r = await manager.execute('count', { n: 4 })
      assert.equal(r.result, 5)
      assert.deepEqual(calls, [{ n: 5, when: '1970-01-01T00:00:00.000Z' }])
    })

    test('an interceptor that swallows the rejection does not bring the attempt back', async () => {
      const calls = []
      const { manager } = setup([tool('count', (args) => { calls.push(args); return args.n }, { inputSchema: COUNT })])
      manager.use(async (ctx, next) => {
        ctx.args = { n: 'many' }
        try {
          return await next()
        } catch {
          return 'swallowed'
        }
      })
      const r = await manager.execute('count', { n: 4 })
      assert.equal(r.success, false)
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.deepEqual(calls, [])
    })

    test('with validation: false the schema is not applied to them either', async () => {
      const { manager, calls } = changing((ctx) => { ctx.args = { n: -1 } }, { validation: false })
      const r = await manager.execute('count', { n: 4 })
      assert.equal(r.result, -1)
      assert.deepEqual(calls, [{ n: -1 }])
    })

    test('redacted fields stay masked in the refusal', async () => {
      const schema = { type: 'object', properties: { pin: { type: 'string', pattern: '^[0-9]{4}$' } } }
      const { manager } = setup([tool('login', () => 'in', { inputSchema: schema })], { redact: ['pin'] })
      manager.use((ctx, next) => { ctx.args = { pin: 'secret-pin' }; return next() })
      const r = await manager.execute('login', { pin: '1234' })
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.doesNotMatch(JSON.stringify(r.error), /secret-pin/)
    })
  })

  test('may short-circuit with its own result: the handler and later interceptors do not run', async () => {
    let calls = 0
    let laterRan = false
    const { manager } = setup([tool('expensive', () => { calls++; return 'computed' })])
    manager.use(async (ctx, next) => (ctx.args.cached ? { fromCache: true } : next()))
    manager.use(async (ctx, next) => { laterRan = true; return next() })
    const cached = await manager.execute('expensive', { cached: true })
    assert.equal(cached.success, true)
    assert.deepEqual(cached.result, { fromCache: true })
    assert.equal(calls, 0)
    assert.equal(laterRan, false)
    assert.equal((await manager.execute('expensive', { cached: false })).result, 'computed')
    assert.equal(calls, 1)
  })

  test('may turn a result into an error: category execution, the thrown error as cause', async () => {
    const { manager } = setup([tool('ok', () => ({ status: 'bad' }))])
    const rejection = new Error('result rejected')
    manager.use(async (ctx, next) => {
      const r = await next()
      if (r.status === 'bad') throw rejection
      return r
    })
    const r = await manager.execute('ok', {})
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'execution')
    assert.equal(r.error.cause, rejection)
    assert.match(r.error.message, /result rejected/)
    assert.equal(r.execution.status, 'failed')
  })

  test('an interceptor that throws (sync or async) fails the execution with category execution; the handler does not run', async () => {
    let calls = 0
    for (const make of [
      (err) => () => { throw err },
      (err) => async () => { throw err },
    ]) {
      const { manager } = setup([tool('t', () => { calls++; return 1 })])
      const err = new TypeError('interceptor broke')
      let interceptorCalls = 0
      manager.use((ctx, next) => { interceptorCalls++; return make(err)(ctx, next) })
      const r = await manager.execute('t', {})
      assert.equal(r.success, false)
      assert.equal(r.error.category, 'execution')
      assert.equal(r.error.cause, err)
      assert.match(r.error.message, /interceptor broke/)
      assert.equal(interceptorCalls, 1, 'not retried')
    }
    assert.equal(calls, 0)
  })

  test('run in the order added, and again on each attempt', async () => {
    const order = []
    let handlerCalls = 0
    const { manager } = setup([tool('flaky', (args, ctx) => {
      handlerCalls++
      order.push(`handler${ctx.attemptNumber}`)
      if (ctx.attemptNumber < 3) throw transientError(`fail ${ctx.attemptNumber}`)
      return 'finally'
    })])
    for (const name of ['A', 'B', 'C']) {
      manager.use(async (ctx, next) => {
        order.push(`${name}>${ctx.attemptNumber}`)
        try {
          const r = await next()
          order.push(`${name}<${ctx.attemptNumber}`)
          return r
        } catch (e) {
          order.push(`${name}!${ctx.attemptNumber}`)
          throw e
        }
      })
    }
    const r = await manager.execute('flaky', {})
    assert.equal(r.success, true)
    assert.equal(r.result, 'finally')
    assert.equal(handlerCalls, 3)
    const attempt = (n, ok) => [`A>${n}`, `B>${n}`, `C>${n}`, `handler${n}`,
      ...(ok ? [`C<${n}`, `B<${n}`, `A<${n}`] : [`C!${n}`, `B!${n}`, `A!${n}`])]
    assert.deepEqual(order, [...attempt(1, false), ...attempt(2, false), ...attempt(3, true)])
  })

  test('an interceptor sees attemptNumber grow and the same executionId on each attempt', async () => {
    const contexts = []
    const { manager } = setup([tool('flaky', (a, ctx) => { if (ctx.attemptNumber < 2) throw transientError('again'); return 1 })])
    manager.use(async (ctx, next) => { contexts.push([ctx.executionId, ctx.attemptNumber, ctx.maxAttempts]); return next() })
    const r = await manager.execute('flaky', {}, { toolCallId: 'c' })
    assert.deepEqual(contexts, [[r.execution.id, 1, 3], [r.execution.id, 2, 3]])
  })

  test('next() called after its attempt ended (a background refresh after success or a retry) is refused, and the handler does not run', async () => {
    const runs = []
    const { manager } = setup([
      tool('send', async (a, ctx) => { runs.push(ctx.attemptNumber); return 'sent' }),
      tool('flaky', (a, ctx) => { runs.push(ctx.attemptNumber); if (ctx.attemptNumber < 2) throw transientError('again'); return 'ok' }),
    ])
    const late = []
    // What each late next() gave, caught at once (an unhandled rejection fails the test).
    const later = (ms, next) => late.push(sleep(ms).then(() => next()).then((value) => ({ value }), (error) => ({ error })))
    manager.use(async (ctx, next) => {
      if (ctx.toolName === 'send') {
        // Stale-while-revalidate: answer at once, refresh in the background.
        later(10, next)
        return 'cached'
      }
      // Keeps attempt 1's next() for after it failed.
      if (ctx.attemptNumber === 1) {
        later(30, next)
        throw transientError('first attempt fails')
      }
      return next()
    })
    const r = await manager.execute('send', {})
    assert.equal(r.result, 'cached')
    const f = await manager.execute('flaky', {})
    assert.equal(f.result, 'ok')
    assert.deepEqual(runs, [2])
    const outcomes = await Promise.all(late)
    assert.equal(outcomes.length, 2)
    for (const o of outcomes) {
      assert.equal(o.value, undefined, 'next() was refused')
      assert.equal(o.error.code, 'INVALID_CALL')
      assert.match(o.error.message, /next\(\) was called after attempt 1 of tool '(send|flaky)' \(execution [^)]+\) ended/)
    }
    assert.deepEqual(runs, [2], 'no handler ran after its attempt ended')
    assert.equal(manager.inFlight, 0)
  })

  test('ctx.signal aborts when the execution is cancelled', async () => {
    let signal
    const { manager } = setup([tool('wait', (a, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)))])
    manager.use(async (ctx, next) => { signal = ctx.signal; return next() })
    const pending = manager.execute('wait', {}, { toolCallId: 'w' })
    await sleep(10)
    assert.equal(signal.aborted, false)
    manager.cancel(manager.getExecutionsForToolCall('w')[0].id)
    assert.equal((await pending).execution.status, 'cancelled')
    assert.equal(signal.aborted, true)
  })
})
