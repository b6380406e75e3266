// Request context reaches the handler (issue 22, item 1): each attempt of an execution,
// first or retried, queued or approved, runs in the async context of the `execute` call
// that started it (AsyncLocalStorage), and sees the call's `context` option as
// `ctx.context`. Node-only: a browser has no AsyncLocalStorage (call-context.test.mjs
// covers `ctx.context` there).
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'

const ID = { type: 'object', properties: { request: { type: 'integer' }, n: { type: 'integer' } }, required: ['request', 'n'] }

describe('request context (AsyncLocalStorage)', () => {
  test('40 calls started in one tick, each inside its own als.run(): every handler sees its own store', async () => {
    const als = new AsyncLocalStorage()
    const registry = new ToolRegistry()
    const seen = []
    registry.register({ name: 'who', description: 'Who calls', inputSchema: ID, handler: (args) => seen.push([args.request, als.getStore()?.request]) })
    const manager = new ToolExecutionManager(registry)
    const calls = []
    for (let request = 0; request < 40; request++) als.run({ request }, () => calls.push(manager.execute('who', { request, n: 0 })))
    await Promise.all(calls)
    assert.equal(seen.length, 40)
    for (const [asked, store] of seen) assert.equal(store, asked)
  })

  test('a thenable a retried attempt returns has its then called in the caller\'s context', async () => {
    const als = new AsyncLocalStorage()
    const registry = new ToolRegistry()
    registry.register({
      name: 'later', description: 'Answers through a thenable', inputSchema: ID,
      handler: (args, ctx) => {
        if (ctx.attemptNumber === 1) throw transientError('busy')
        return { then: (resolve) => resolve(als.getStore()?.request) }
      },
    })
    const manager = new ToolExecutionManager(registry, { retry: { baseDelay: 2, jitter: 'none' } })
    const calls = [1, 2, 3].map((request) => als.run({ request }, () => manager.execute('later', { request, n: 0 })))
    const results = await Promise.all(calls)
    assert.deepEqual(results.map((r) => [r.execution.retry.attemptNumber, r.result]), [[2, 1], [2, 2], [2, 3]])
  })

  test('1,000 concurrent calls from 50 requests, with retries, queueing and approvals: every attempt sees its own store and ctx.context', async () => {
    const als = new AsyncLocalStorage()
    const registry = new ToolRegistry()
    const attempts = []
    const mismatches = []
    const check = (where, args, ctx) => {
      const store = als.getStore()
      if (store?.request !== args.request || ctx.context?.request !== args.request) {
        mismatches.push({ where, asked: args.request, store: store?.request, context: ctx.context?.request, attempt: ctx.attemptNumber })
      }
    }
    // Fails its first attempt for half of its calls (n % 4 === 1): retried after a backoff timer.
    registry.register({
      name: 'flaky', description: 'Busy once for odd n', inputSchema: ID,
      handler: async (args, ctx) => {
        check('flaky', args, ctx)
        attempts.push('flaky')
        await sleep(args.n % 3)
        check('flaky after an await', args, ctx)
        if (args.n % 4 === 1 && ctx.attemptNumber === 1) throw transientError('busy')
        return args.request
      },
    })
    // Needs approval every fifth call; the approver answers from another request's context.
    registry.register({
      name: 'guarded', description: 'Needs approval for n % 5 === 0', inputSchema: ID,
      needsApproval: (args, ctx) => {
        if (als.getStore()?.request !== args.request || ctx.context?.request !== args.request) mismatches.push({ where: 'needsApproval', asked: args.request })
        return args.n % 5 === 0
      },
      handler: (args, ctx) => {
        check('guarded', args, ctx)
        attempts.push('guarded')
        return args.request
      },
    })
    // maxConcurrency 8: most calls wait in the queue and are started by another call's end.
    const manager = new ToolExecutionManager(registry, { maxConcurrency: 8, retry: { maxAttempts: 2, baseDelay: 1, maxDelay: 3, jitter: 'full' } })
    manager.use(async (ctx, next) => {
      if (als.getStore()?.request !== ctx.args.request || ctx.context?.request !== ctx.args.request) mismatches.push({ where: 'interceptor', asked: ctx.args.request })
      return next()
    })
    // The approver is another request altogether.
    let approvals = 0
    manager.on('tool-execution-approval-requested', ({ approvalId }) => {
      als.run({ request: 'approver' }, () => setTimeout(() => {
        approvals++
        manager.approve(approvalId)
      }, 1))
    })
    const requests = []
    for (let request = 0; request < 50; request++) {
      requests.push(als.run({ request }, async () => {
        await sleep(request % 4)
        const calls = []
        for (let n = 0; n < 20; n++) calls.push(manager.execute(n % 2 === 0 ? 'guarded' : 'flaky', { request, n }, { context: { request } }))
        const results = await Promise.all(calls)
        for (const r of results) assert.equal(r.result, request, r.error?.message)
      }))
    }
    await Promise.all(requests)
    assert.deepEqual(mismatches, [])
    assert.equal(attempts.length, 1000 + 250, '500 flaky calls, half of them retried once, and 500 guarded calls')
    assert.equal(approvals, 100)
  })

  test('a call started by executeToolCalls runs in the context of the executeToolCalls call', async () => {
    const als = new AsyncLocalStorage()
    const registry = new ToolRegistry()
    const seen = []
    registry.register({ name: 'who', description: 'Who calls', handler: (args, ctx) => seen.push([als.getStore(), ctx.context]) })
    const manager = new ToolExecutionManager(registry, { maxConcurrency: 1 })
    const response = { role: 'assistant', tool_calls: [1, 2, 3].map((k) => ({ id: `c${k}`, type: 'function', function: { name: 'who', arguments: '{}' } })) }
    await Promise.all(['a', 'b'].map((tenant) => als.run(tenant, () => manager.executeToolCalls(response, { provider: 'openai', context: { tenant } }))))
    assert.equal(seen.length, 6)
    for (const [store, context] of seen) assert.equal(store, context.tenant)
  })
})
