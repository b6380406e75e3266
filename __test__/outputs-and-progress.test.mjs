// Output schemas, progress, preliminary results (issue 13), through the public package.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

describe('output schemas', () => {
  const WEATHER_OUT = { type: 'object', properties: { tempC: { type: 'number' }, sky: { type: 'string', enum: ['clear', 'cloudy'] } }, required: ['tempC'] }

  function setup(result, options) {
    const registry = new ToolRegistry()
    let calls = 0
    registry.register({ name: 'weather', description: 'The weather', outputSchema: WEATHER_OUT, handler: async () => { calls++; return result } })
    const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 1, maxDelay: 5, jitter: 'none' }, ...options })
    return { registry, manager, calls: () => calls }
  }

  test('a result matching the schema passes untouched', async () => {
    const { manager } = setup({ tempC: 21, sky: 'clear' })
    const r = await manager.execute('weather', {})
    assert.deepEqual(r.result, { tempC: 21, sky: 'clear' })
  })

  test('a result that does not match fails execution / INVALID_OUTPUT with every failure, and is not retried', async () => {
    const { manager, calls } = setup({ tempC: 'warm', sky: 'foggy' })
    const r = await manager.execute('weather', {})
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'execution')
    assert.equal(r.error.code, 'INVALID_OUTPUT')
    assert.deepEqual(r.error.validationErrors.map((e) => [e.path, e.keyword]), [['/tempC', 'type'], ['/sky', 'enum']])
    assert.match(r.error.message, /tool 'weather' returned output that does not match its outputSchema/)
    assert.equal(calls(), 1, 'not retried by default')
    assert.deepEqual(r.execution.result, undefined)
  })

  test('a result JSON cannot carry fails before its schema is checked: INVALID_RESULT', async () => {
    const { manager } = setup({ tempC: 1n })
    const r = await manager.execute('weather', {})
    assert.equal(r.error.code, 'INVALID_RESULT')
    assert.match(r.error.message, /a BigInt is not JSON .* at \/tempC$/)
  })

  test('a Standard Schema (zod) outputSchema becomes JSON Schema and is checked', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'count', description: 'Counts', outputSchema: z.object({ n: z.number().int() }), handler: (args) => ({ n: args.n }) })
    const manager = new ToolExecutionManager(registry)
    assert.equal(registry.get('count').outputSchema.properties.n.type, 'integer')
    assert.equal((await manager.execute('count', { n: 2 })).success, true)
    assert.equal((await manager.execute('count', { n: 2.5 })).error.code, 'INVALID_OUTPUT')
  })

  test('execute() takes the declaration register() returned, as TypeScript types its result by', async () => {
    const registry = new ToolRegistry()
    const declaration = registry.register({ name: 'w', description: 'Weather', outputSchema: WEATHER_OUT, handler: () => ({ tempC: 3 }) })
    const r = await new ToolExecutionManager(registry).execute(declaration, {})
    assert.deepEqual(r.result, { tempC: 3 })
  })

  test('toMcpTools exports the outputSchema', () => {
    const { registry } = setup({})
    assert.deepEqual(registry.toMcpTools()[0].outputSchema, WEATHER_OUT)
  })
})

describe('progress', () => {
  test('ctx.reportProgress sends tool-execution-progress; the record keeps the last one', async () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'crawl', description: 'Crawls pages',
      handler: async (args, ctx) => {
        for (let i = 1; i <= 3; i++) {
          ctx.reportProgress({ progress: i, total: 3, message: `page ${i}` })
          await sleep(1)
        }
        return 'done'
      },
    })
    const manager = new ToolExecutionManager(registry)
    const seen = []
    manager.on('tool-execution-progress', (d) => seen.push(d))
    const r = await manager.execute('crawl', {})
    assert.deepEqual(seen.map((d) => [d.progress, d.total, d.message]), [[1, 3, 'page 1'], [2, 3, 'page 2'], [3, 3, 'page 3']])
    assert.equal(seen[0].executionId, r.execution.id)
    assert.equal(seen[0].toolName, 'crawl')
    assert.deepEqual(r.execution.progress, { progress: 3, total: 3, message: 'page 3' })
  })

  test('bad progress reports are refused with a TypeError saying what reportProgress takes', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 't', handler: (args, ctx) => ctx.reportProgress({ progress: 'half' }) })
    const r = await new ToolExecutionManager(registry).execute('t', {})
    assert.match(r.error.message, /reportProgress\(\) takes \{ progress: number/)
  })

  test('with resetTimeoutOnProgress each report restarts the timeout; maxTotalTimeoutMs still ends it', async () => {
    const registry = new ToolRegistry()
    // Progress every 20 ms for ~400 ms, under a 150 ms attempt timeout (130 ms of room for
    // a slow machine between two reports), capped at 300 ms in all.
    registry.register({
      name: 'long', description: 'Takes long, reporting progress',
      handler: async (args, ctx) => {
        for (let i = 0; i < 20; i++) {
          await sleep(20, undefined, { signal: ctx.signal })
          ctx.reportProgress({ progress: i + 1, total: 20 })
        }
        return 'finished'
      },
    })
    const once = { retry: { maxAttempts: 1 } }
    const plain = await new ToolExecutionManager(registry, { timeoutMs: 150, ...once }).execute('long', {})
    assert.equal(plain.error.code, 'TIMEOUT', 'without resets the 150 ms timeout ends it')
    const reset = await new ToolExecutionManager(registry, { timeoutMs: 150, resetTimeoutOnProgress: true, ...once }).execute('long', {})
    assert.equal(reset.result, 'finished', JSON.stringify(reset.error))
    const t0 = performance.now()
    const capped = await new ToolExecutionManager(registry, { timeoutMs: 150, resetTimeoutOnProgress: true, maxTotalTimeoutMs: 300, ...once }).execute('long', {})
    const took = performance.now() - t0
    assert.equal(capped.error.code, 'TIMEOUT')
    assert.match(capped.error.message, /maxTotalTimeoutMs/)
    assert.ok(took >= 290 && took < 700, `ended by the 300 ms cap, after ${took} ms`)
    // The same settings per call and per tool.
    const perCall = await new ToolExecutionManager(registry, { timeoutMs: 150, ...once }).execute('long', {}, { resetTimeoutOnProgress: true, maxTotalTimeoutMs: 300 })
    assert.match(perCall.error.message, /maxTotalTimeoutMs/)
  })

  test('the total timeout ends an execution that is backing off, without another attempt', async () => {
    const registry = new ToolRegistry()
    let attempts = 0
    registry.register({ name: 'flaky', description: 'Fails', handler: () => { attempts++; const e = new Error('busy'); e.retryable = true; throw e } })
    const manager = new ToolExecutionManager(registry, { maxTotalTimeoutMs: 50, retry: { maxAttempts: 5, baseDelay: 200, maxDelay: 200, jitter: 'none' } })
    const r = await manager.execute('flaky', {})
    assert.equal(r.error.code, 'TIMEOUT')
    assert.equal(attempts, 1)
  })
})

describe('preliminary results', () => {
  test('an async-generator handler: each yield is an event, the last one is the result', async () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'report', description: 'Writes a report in parts',
      handler: async function* () {
        yield { status: 'outline' }
        await sleep(1)
        yield { status: 'draft' }
        yield { status: 'final', text: 'Done.' }
      },
    })
    const manager = new ToolExecutionManager(registry)
    const seen = []
    manager.on('tool-execution-preliminary-result', (d) => seen.push(d.result.status))
    const r = await manager.execute('report', {})
    assert.deepEqual(seen, ['outline', 'draft', 'final'])
    assert.deepEqual(r.result, { status: 'final', text: 'Done.' })
  })

  test('a yield JSON cannot carry fails the attempt INVALID_RESULT, as a result would, and stops the generator', async () => {
    // A Map or a BigInt reached the listeners as it was (one crashed on JSON.stringify).
    const registry = new ToolRegistry()
    let stopped = false
    registry.register({
      name: 'gen', description: 'yields a Map',
      handler: async function* () {
        try {
          yield { ok: 1 }
          yield new Map([['a', 1]])
          yield { never: true }
        } finally {
          stopped = true
        }
      },
    })
    const manager = new ToolExecutionManager(registry)
    const seen = []
    manager.on('tool-execution-preliminary-result', (d) => seen.push(JSON.stringify(d.result)))
    const r = await manager.execute('gen', {})
    assert.equal(r.error.code, 'INVALID_RESULT')
    assert.equal(r.error.message, "tool 'gen' returned a result that is not JSON: a Map is not JSON (it would become {}); return a plain object or array instead at the root (in a preliminary result it yielded)")
    assert.equal(r.execution.retry.attemptNumber, 1, 'not retried')
    assert.deepEqual(seen, ['{"ok":1}'])
    await sleep(5)
    assert.equal(stopped, true)
  })

  test('a handler returning an async iterable works the same; a throw inside fails the attempt', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'iter', description: 'iterates', handler: async () => ({ async *[Symbol.asyncIterator]() { yield 1; yield 2 } }) })
    registry.register({ name: 'broken', description: 'breaks', handler: async function* () { yield 1; throw new Error('stream broke') } })
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
    assert.equal((await manager.execute('iter', {})).result, 2)
    const broken = await manager.execute('broken', {})
    assert.match(broken.error.message, /stream broke/)
  })

  test('an async iterator whose next() gives no iterator result fails the attempt (EXECUTION_ERROR), neither crashing nor hanging', async () => {
    const registry = new ToolRegistry()
    // Hand-written iterators with a bug: next() resolves to undefined or null, or the
    // result's `done` getter throws.
    const iterating = (bad) => () => ({
      [Symbol.asyncIterator]() {
        let i = 0
        return { next: async () => (i++ < 1 ? { done: false, value: 'page 1' } : bad()) }
      },
    })
    registry.register({ name: 'undef', description: 'u', handler: iterating(() => undefined) })
    registry.register({ name: 'nul', description: 'n', handler: iterating(() => null) })
    registry.register({ name: 'getter', description: 'g', handler: iterating(() => ({ get done() { throw new Error('done broke') } })) })
    const manager = new ToolExecutionManager(registry, { timeoutMs: 5000, retry: { maxAttempts: 1 } })
    const rejections = []
    const onRejection = (e) => rejections.push(e)
    globalThis.process?.on?.('unhandledRejection', onRejection)
    try {
      for (const name of ['undef', 'nul', 'getter']) {
        const started = Date.now()
        const r = await manager.execute(name, {})
        assert.equal(r.success, false, name)
        assert.equal(r.error.code, 'EXECUTION_ERROR', `${name}: ${r.error.message}`)
        assert.ok(Date.now() - started < 2000, `${name} waited for its timeout`)
      }
      await sleep(20)
      assert.deepEqual(rejections, [])
      assert.equal(manager.inFlight, 0)
    } finally {
      globalThis.process?.off?.('unhandledRejection', onRejection)
    }
  })

  test('a generator cancelled mid-stream is stopped (its finally runs)', async () => {
    const registry = new ToolRegistry()
    let stopped = false
    registry.register({
      name: 'endless', description: 'never ends',
      handler: async function* () {
        try {
          for (let i = 0; ; i++) {
            yield i
            await sleep(2)
          }
        } finally {
          stopped = true
        }
      },
    })
    const manager = new ToolExecutionManager(registry)
    const pending = manager.execute('endless', {})
    await sleep(10)
    manager.cancelAll()
    assert.equal((await pending).error.code, 'CANCELLED')
    await sleep(10)
    assert.equal(stopped, true)
  })
})

test('reportProgress can be taken out of ctx (destructured) and called on its own', async () => {
  const registry = new ToolRegistry()
  registry.register({ name: 'job', description: 'Reports', handler: (args, { reportProgress }) => { reportProgress({ progress: 1, total: 2 }); return 'done' } })
  const manager = new ToolExecutionManager(registry)
  const seen = []
  manager.on('tool-execution-progress', (d) => seen.push(d.progress))
  assert.equal((await manager.execute('job', {})).result, 'done')
  assert.deepEqual(seen, [1])
})

test('progress reaches the attempt it belongs to, on a retry too, whatever the handler does to ctx', async () => {
  const registry = new ToolRegistry()
  let calls = 0
  registry.register({
    name: 'job', description: 'Reports, fails once',
    handler: (args, ctx) => {
      calls++
      // The context's fields are the handler's to change; its progress still goes to its attempt.
      ctx.attemptNumber = 99
      ctx.executionId = 'not this one'
      ctx.reportProgress({ progress: calls })
      if (calls === 1) throw Object.assign(new Error('again'), { retryable: true })
      return 'done'
    },
  })
  const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 1, maxDelay: 1, jitter: 'none' } })
  const seen = []
  manager.on('tool-execution-progress', (d) => seen.push([d.progress, d.executionId.length]))
  const r = await manager.execute('job', {})
  assert.equal(r.result, 'done')
  assert.equal(r.execution.retry.attemptNumber, 2)
  assert.deepEqual(seen, [[1, 36], [2, 36]])
  assert.deepEqual(r.execution.progress, { progress: 2 })
})
