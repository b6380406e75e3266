// The trust boundary (issue 23): approval fails closed, and a mounted MCP server never
// takes the place of a local tool. Each test is named after the finding it covers.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager, toAiSdkTools } from 'toolhost'

const AMOUNT = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }

function payTool(needsApproval, runs) {
  const registry = new ToolRegistry()
  registry.register({
    name: 'pay', description: 'Pays an amount', inputSchema: AMOUNT, needsApproval,
    handler: (args) => {
      runs.push(args)
      return { paid: args.amount }
    },
  })
  return registry
}

describe('issue 23: approval fails closed', () => {
  test('finding 2: a needsApproval function that answers a truthy non-boolean refuses the call', async () => {
    const answers = [
      [500, 'the number 500'], ['yes', 'the string "yes"'], [{}, 'an object'], [[], 'an array'],
      [1, 'the number 1'], [null, 'null'], [undefined, 'undefined'],
    ]
    for (const [answer, described] of answers) {
      for (const policy of [() => answer, async () => answer]) {
        const runs = []
        const manager = new ToolExecutionManager(payTool(policy, runs))
        const r = await manager.execute('pay', { amount: 5 })
        assert.equal(r.success, false, `${described} must not let the call through`)
        assert.equal(r.error.code, 'INVALID_APPROVAL_POLICY')
        assert.equal(r.error.category, 'permanent')
        assert.equal(r.error.retryable, false)
        assert.equal(r.error.message, `tool 'pay' was not run: its needsApproval function returned ${described}, not true or false`)
        assert.deepEqual(runs, [], 'the handler never runs')
        assert.deepEqual(manager.pendingApprovals(), [], 'nobody is asked either')
      }
    }
  })

  test('finding 2: a manager-wide needsApproval function is held to the same rule', async () => {
    const runs = []
    const manager = new ToolExecutionManager(payTool(undefined, runs), { needsApproval: () => 'sure' })
    const r = await manager.execute('pay', { amount: 5 })
    assert.equal(r.error.code, 'INVALID_APPROVAL_POLICY')
    assert.deepEqual(runs, [])
  })

  test('finding 2: true and false still decide', async () => {
    const runs = []
    const manager = new ToolExecutionManager(payTool((args) => args.amount > 100, runs))
    assert.equal((await manager.execute('pay', { amount: 5 })).result.paid, 5)
    const requested = new Promise((resolve) => manager.on('tool-execution-approval-requested', resolve))
    const big = manager.execute('pay', { amount: 500 })
    await requested
    manager.deny(manager.pendingApprovals()[0].approvalId)
    assert.equal((await big).error.code, 'APPROVAL_DENIED')
    assert.equal(runs.length, 1)
  })

  test('finding 16: a needsApproval promise that never settles is bounded by approvalTimeoutMs', async () => {
    const runs = []
    const manager = new ToolExecutionManager(payTool(() => new Promise(() => {}), runs), { approvalTimeoutMs: 40 })
    const started = Date.now()
    const r = await manager.execute('pay', { amount: 5 })
    assert.ok(Date.now() - started < 2000)
    assert.equal(r.error.code, 'APPROVAL_DENIED')
    assert.match(r.error.message, /its needsApproval function did not answer within 40 ms/)
    assert.deepEqual(runs, [])
  })

  test('finding 2: through toAiSdkTools, a non-boolean answer is an error, not a pass', async () => {
    const runs = []
    const manager = new ToolExecutionManager(payTool(() => 500, runs))
    const tools = toAiSdkTools(manager)
    await assert.rejects(tools.pay.needsApproval({ amount: 5 }, { toolCallId: 'c1', messages: [] }), { code: 'INVALID_APPROVAL_POLICY' })
    assert.deepEqual(runs, [])
  })
})
