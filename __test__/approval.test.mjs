// Human approval (issue 13): a call that needs approval waits in 'awaiting-approval'
// (no slot, no timeout) until approve() or deny(), through the public package.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const AMOUNT = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }

function setup({ needsApproval = true, options = {}, handler } = {}) {
  const registry = new ToolRegistry()
  const runs = []
  registry.register({
    name: 'pay', description: 'Pays an amount', inputSchema: AMOUNT, needsApproval,
    handler: handler ?? ((args) => {
      runs.push(args)
      return { paid: args.amount }
    }),
  })
  registry.register({ name: 'free', description: 'Needs nothing', handler: () => 'free' })
  const manager = new ToolExecutionManager(registry, options)
  const events = []
  for (const type of ['started', 'validating', 'approval-requested', 'approved', 'denied', 'executing', 'succeeded', 'failed', 'cancelled']) {
    manager.on(`tool-execution-${type}`, (d) => events.push([type, d]))
  }
  return { registry, manager, runs, events }
}

/** Resolves once a call waits for approval; resolves its pending entry. */
async function waitingFor(manager) {
  for (let i = 0; i < 200; i++) {
    const [p] = manager.pendingApprovals()
    if (p !== undefined) return p
    await sleep(1)
  }
  throw new Error('no call waits for approval')
}

describe('approval', () => {
  test('approve: the call waits, then runs; events in order; the record says who approved', async () => {
    const { manager, runs, events } = setup()
    const pending = manager.execute('pay', { amount: 5 }, { toolCallId: 'call_1' })
    const waiting = await waitingFor(manager)
    assert.equal(runs.length, 0, 'nothing runs before the approval')
    assert.equal(manager.getExecution(waiting.executionId).status, 'awaiting-approval')
    manager.approve(waiting.approvalId, { by: 'ada' })
    const r = await pending
    assert.deepEqual(r.result, { paid: 5 })
    assert.deepEqual(events.map(([t]) => t), ['started', 'validating', 'approval-requested', 'approved', 'executing', 'succeeded'])
    const requested = events.find(([t]) => t === 'approval-requested')[1]
    assert.equal(requested.approvalId, waiting.approvalId)
    assert.equal(requested.execution.status, 'awaiting-approval')
    assert.deepEqual(events.find(([t]) => t === 'approved')[1], { executionId: r.execution.id, toolName: 'pay', approvalId: waiting.approvalId, by: 'ada', edited: false })
    assert.equal(r.execution.approval.decision, 'approved')
    assert.equal(r.execution.approval.by, 'ada')
    assert.equal(r.execution.approval.edited, false)
    assert.ok(r.execution.approval.decidedAt >= r.execution.approval.requestedAt)
    assert.throws(() => manager.approve(waiting.approvalId), { code: 'APPROVAL_NOT_FOUND' }, 'an approval is answered once')
  })

  test('the pending state is plain JSON: it survives JSON.stringify/parse and is answered from the copy', async () => {
    const { manager } = setup()
    const pending = manager.execute('pay', '{"amount": 42}', { toolCallId: 'call_7' })
    await waitingFor(manager)
    // What a server would send to the person who approves, and get back.
    const overTheWire = JSON.parse(JSON.stringify(manager.pendingApprovals()))
    assert.equal(overTheWire.length, 1)
    const [entry] = overTheWire
    assert.deepEqual(Object.keys(entry).sort(), ['approvalId', 'args', 'executionId', 'requestedAt', 'toolCallId', 'toolName'])
    assert.deepEqual({ toolName: entry.toolName, toolCallId: entry.toolCallId, args: entry.args }, { toolName: 'pay', toolCallId: 'call_7', args: { amount: 42 } })
    manager.approve(entry.approvalId, { by: 'reviewer@example.com' })
    assert.equal((await pending).result.paid, 42)
  })

  test('edited arguments are validated again, refused edits leave it waiting, and the handler gets the edit', async () => {
    const { manager, runs } = setup()
    const pending = manager.execute('pay', { amount: 500 })
    const { approvalId } = await waitingFor(manager)
    assert.throws(() => manager.approve(approvalId, { args: { amount: 'fifty' } }), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENTS')
      assert.equal(e.validationErrors[0].path, '/amount')
      return true
    })
    // Edited text that is not JSON names the tool (it named "tool 'the approved call'").
    assert.throws(() => manager.approve(approvalId, { args: '{"amount": 5' }), { code: 'INVALID_ARGUMENTS', message: /^invalid arguments for tool 'pay': malformed JSON/ })
    assert.equal(manager.pendingApprovals().length, 1, 'still waiting')
    manager.approve(approvalId, { args: { amount: 50 }, by: 'ada' })
    const r = await pending
    assert.deepEqual(runs, [{ amount: 50 }])
    assert.deepEqual(r.execution.args, { amount: 50 })
    assert.equal(r.execution.approval.edited, true)
  })

  test('arguments handed back unchanged (a form that always sends them) are not an edit', async () => {
    const { manager, runs, events } = setup()
    const pending = manager.execute('pay', { amount: 500, memo: 'rent' })
    const { approvalId, args } = await waitingFor(manager)
    // The same value, its keys in another order.
    manager.approve(approvalId, { args: { memo: args.memo, amount: args.amount } })
    const r = await pending
    assert.deepEqual(runs, [{ amount: 500, memo: 'rent' }])
    assert.equal(r.execution.approval.edited, false)
    assert.equal(events.find(([t]) => t === 'approved')[1].edited, false)
  })

  test('deny: the call ends failed, category denied, APPROVAL_DENIED, with the reason; it never ran', async () => {
    const { manager, runs, events } = setup()
    const pending = manager.execute('pay', { amount: 5 })
    const { approvalId } = await waitingFor(manager)
    manager.deny(approvalId, { reason: 'over budget', by: 'bob' })
    const r = await pending
    assert.equal(r.success, false)
    assert.equal(r.error.category, 'denied')
    assert.equal(r.error.code, 'APPROVAL_DENIED')
    assert.match(r.error.message, /over budget/)
    assert.equal(runs.length, 0)
    assert.deepEqual(events.map(([t]) => t), ['started', 'validating', 'approval-requested', 'denied', 'failed'])
    assert.deepEqual(events.find(([t]) => t === 'denied')[1], { executionId: r.execution.id, toolName: 'pay', approvalId, reason: 'over budget', by: 'bob' })
    assert.equal(r.execution.approval.decision, 'denied')
    assert.throws(() => manager.deny(approvalId), { code: 'APPROVAL_NOT_FOUND' })
  })

  test('pendingApprovals() is oldest first, and calls asked for in the same millisecond keep the order they were asked in', async () => {
    const { manager } = setup()
    // Sixteen requests in one synchronous loop: in a browser (whole milliseconds) most
    // share a requestedAt, and a hash map's order used to break the tie.
    const calls = Array.from({ length: 16 }, (_, i) => manager.execute('pay', { amount: i }, { toolCallId: `c${i}` }))
    await waitingFor(manager)
    for (let i = 0; i < 50 && manager.pendingApprovals().length < 16; i++) await sleep(1)
    const pending = manager.pendingApprovals()
    assert.deepEqual(pending.map((p) => p.toolCallId), calls.map((_, i) => `c${i}`))
    for (let i = 1; i < pending.length; i++) assert.ok(pending[i - 1].requestedAt <= pending[i].requestedAt)
    assert.equal(manager.cancelAll(), 16)
    await Promise.all(calls)
  })

  test('approvalTimeoutMs ends an unanswered call denied; no attempt timeout runs while it waits', async () => {
    const { manager, runs } = setup({ options: { approvalTimeoutMs: 60, timeoutMs: 10 } })
    const t0 = performance.now()
    const r = await manager.execute('pay', { amount: 5 })
    assert.ok(performance.now() - t0 >= 55, 'waited for the approval timeout, not the 10 ms attempt timeout')
    assert.equal(r.error.code, 'APPROVAL_DENIED')
    assert.match(r.error.message, /within 60 ms/)
    assert.equal(runs.length, 0)
  })

  test('cancel and cancelAll reach waiting calls; a waiting call holds no concurrency slot', async () => {
    const { manager } = setup({ options: { maxConcurrency: 1 } })
    const first = manager.execute('pay', { amount: 1 })
    const second = manager.execute('pay', { amount: 2 })
    await waitingFor(manager)
    await sleep(5)
    assert.equal(manager.pendingApprovals().length, 2)
    assert.equal((await manager.execute('free', {})).result, 'free', 'the slot is free while two calls wait')
    const [one] = manager.pendingApprovals()
    assert.equal(manager.cancel(one.executionId), true)
    assert.equal(manager.cancelAll(), 1)
    const results = await Promise.all([first, second])
    assert.deepEqual(results.map((r) => r.error.code), ['CANCELLED', 'CANCELLED'])
    assert.deepEqual(manager.pendingApprovals(), [])
  })

  test('an aborted signal reaches a waiting call', async () => {
    const { manager } = setup()
    const controller = new AbortController()
    const pending = manager.execute('pay', { amount: 1 }, { signal: controller.signal })
    await waitingFor(manager)
    controller.abort()
    assert.equal((await pending).error.category, 'cancelled')
  })

  test('needsApproval as a function decides per call, sync or async', async () => {
    for (const policy of [(args) => args.amount > 100, async (args, ctx) => { assert.equal(ctx.toolName, 'pay'); return args.amount > 100 }]) {
      const { manager, runs } = setup({ needsApproval: policy })
      assert.equal((await manager.execute('pay', { amount: 5 })).result.paid, 5, 'small payments pass')
      const big = manager.execute('pay', { amount: 500 })
      const { approvalId } = await waitingFor(manager)
      manager.approve(approvalId)
      assert.equal((await big).result.paid, 500)
      assert.equal(runs.length, 2)
    }
  })

  test('a needsApproval function that throws asks a person, and the throw becomes a process warning', async () => {
    const { manager } = setup({ needsApproval: () => { throw new Error('policy broke') } })
    const warned = new Promise((resolve) => process.once('warning', resolve))
    const pending = manager.execute('pay', { amount: 1 })
    const { approvalId } = await waitingFor(manager)
    assert.match(String((await warned).message), /policy broke/)
    manager.deny(approvalId)
    assert.equal((await pending).error.code, 'APPROVAL_DENIED')
  })

  test('a manager policy applies to tools that declare nothing; a tool\'s own false wins', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'a', description: 'declares nothing', handler: () => 'a' })
    registry.register({ name: 'b', description: 'never needs approval', needsApproval: false, handler: () => 'b' })
    const manager = new ToolExecutionManager(registry, { needsApproval: (args, ctx) => ctx.toolName === 'a' })
    assert.equal((await manager.execute('b', {})).result, 'b')
    const pending = manager.execute('a', {})
    const { approvalId, toolName } = await waitingFor(manager)
    assert.equal(toolName, 'a')
    manager.approve(approvalId)
    assert.equal((await pending).result, 'a')
  })

  test('a call approved elsewhere ({ approved: { by } }) runs at once and is recorded as approved', async () => {
    const { manager, runs, events } = setup()
    const r = await manager.execute('pay', { amount: 9 }, { approved: { by: 'upstream-ui' } })
    assert.deepEqual(r.result, { paid: 9 })
    assert.deepEqual(events.map(([t]) => t), ['started', 'validating', 'approved', 'executing', 'succeeded'])
    assert.deepEqual([r.execution.approval.decision, r.execution.approval.by], ['approved', 'upstream-ui'])
    assert.equal(runs.length, 1)
    await assert.rejects(manager.execute('pay', { amount: 9 }, { approved: 'yes' }), { code: 'INVALID_CONFIG', message: /approved must be true or \{ by: string \}/ })
  })

  test('an approval given inside execute() runs the handler from a microtask: a cancel() right after execute() stops it', async () => {
    // An auto-approve listener answered inside execute(), and the handler ran there,
    // before execute() returned; so did a needsApproval function returning false.
    const ways = [
      ['a listener approving at once', { needsApproval: true }, (manager) => manager.on('tool-execution-approval-requested', (d) => manager.approve(d.approvalId, { by: 'auto-policy' }))],
      ['a needsApproval function returning false', { needsApproval: () => false }, () => {}],
    ]
    for (const [way, definition, listen] of ways) {
      const { manager, runs } = setup(definition)
      listen(manager)
      const cancelled = manager.execute('pay', { amount: 1 })
      assert.equal(runs.length, 0, `${way}: not run inside execute()`)
      assert.equal(manager.cancel(manager.getExecutions()[0].id), true, way)
      assert.equal((await cancelled).error.code, 'CANCELLED', way)
      assert.equal(runs.length, 0, `${way}: a cancelled call never runs its handler`)
      // Not cancelled, it runs once the caller's synchronous code is done.
      const ran = manager.execute('pay', { amount: 2 })
      assert.equal(runs.length, 0, way)
      await Promise.resolve()
      assert.equal(runs.length, 1, `${way}: run from a microtask`)
      assert.equal((await ran).result.paid, 2, way)
    }
  })

  test('bad answers are refused clearly', async () => {
    const { manager } = setup()
    assert.throws(() => manager.approve(42), { code: 'INVALID_ARGUMENTS' })
    assert.throws(() => manager.approve('nope'), { code: 'APPROVAL_NOT_FOUND' })
    assert.throws(() => manager.approve('nope', { arg: {} }), { code: 'INVALID_CONFIG', message: /did you mean `args`/ })
    assert.throws(() => manager.deny('nope', { reason: 5 }), { code: 'INVALID_CONFIG', message: /reason must be a string/ })
    assert.throws(() => new ToolExecutionManager(new ToolRegistry(), { needsApproval: 'yes' }), { code: 'INVALID_CONFIG', message: /needsApproval/ })
  })
})
