// The `context` call option (issue 22, item 1): the caller's own object reaches the
// handler as `ctx.context`, and interceptors and the approval predicate see it, on every
// attempt. It never goes through JSON: any value, functions and class instances included.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager, transientError } from 'toolhost'

describe('ctx.context', () => {
  test('the same object reaches each attempt, interceptors and the approval predicate', async () => {
    class Tenant {
      constructor(id) {
        this.id = id
      }
      can(action) {
        return action === 'read'
      }
    }
    const tenant = new Tenant('acme')
    const registry = new ToolRegistry()
    const seen = []
    registry.register({
      name: 'read', description: 'Reads', needsApproval: (args, ctx) => {
        seen.push(['needsApproval', ctx.context])
        return false
      },
      handler: (args, ctx) => {
        seen.push([`attempt ${ctx.attemptNumber}`, ctx.context])
        if (ctx.attemptNumber === 1) throw transientError('busy')
        return ctx.context.can('read')
      },
    })
    const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 2, baseDelay: 1, jitter: 'none' } })
    manager.use(async (ctx, next) => {
      seen.push(['interceptor', ctx.context])
      return next()
    })
    const r = await manager.execute('read', {}, { context: tenant })
    assert.equal(r.result, true)
    assert.deepEqual(seen.map(([where]) => where), ['needsApproval', 'interceptor', 'attempt 1', 'interceptor', 'attempt 2'])
    for (const [, context] of seen) assert.equal(context, tenant, 'the very object, not a copy')
  })

  test('without the option ctx.context is undefined; it is not part of the record', async () => {
    const registry = new ToolRegistry()
    // (A result holding the function itself would be refused as not JSON: INVALID_RESULT.)
    registry.register({ name: 'peek', description: 'Peeks', handler: (args, ctx) => (ctx.context === undefined ? undefined : { secret: typeof ctx.context.secret }) })
    const manager = new ToolExecutionManager(registry)
    assert.equal((await manager.execute('peek', {})).result, undefined)
    const r = await manager.execute('peek', {}, { context: { secret: () => 1 } })
    assert.equal(r.result.secret, 'function', 'a function survives: nothing is serialized')
    assert.equal('context' in r.execution, false)
  })

  test('a misspelt context option is refused with the right name suggested', async () => {
    const manager = new ToolExecutionManager(new ToolRegistry())
    await assert.rejects(manager.execute('x', {}, { contxt: {} }), { code: 'INVALID_CONFIG', message: /did you mean `context`\?/ })
  })

  test('executeToolCalls hands its context to each call', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'who', description: 'Who', handler: (args, ctx) => ctx.context.user })
    const manager = new ToolExecutionManager(registry)
    const { results } = await manager.executeToolCalls(
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'who', arguments: '{}' } }] },
      { provider: 'openai', context: { user: 'ada' } },
    )
    assert.equal(results[0].result, 'ada')
  })
})
