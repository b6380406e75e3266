// A call that waits for an approval nobody is asked for is not silent: a manager with no
// 'tool-execution-approval-requested' listener warns, once, when a call starts waiting.
// In Node the warning is a process warning (type ToolhostApprovalWarning); in a browser,
// where there is no process, it is console.warn.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const inNode = typeof process === 'object' && typeof process?.on === 'function'

/** Collects toolhost's approval warnings until `stop()`. */
function warnings() {
  const seen = []
  if (inNode) {
    const on = (w) => {
      if (w.name === 'ToolhostApprovalWarning') seen.push({ message: w.message, code: w.code })
    }
    process.on('warning', on)
    return { seen, stop: () => process.off('warning', on) }
  }
  const original = console.warn
  console.warn = (...args) => {
    const text = args.join(' ')
    if (text.startsWith('toolhost:')) seen.push({ message: text, code: 'APPROVAL_UNHEARD' })
    else original.apply(console, args)
  }
  return { seen, stop: () => { console.warn = original } }
}

/** Lets a warning arrive (a process warning is emitted on a later tick). */
const settle = () => sleep(20)

/** Managers made by a test: whatever still waits is denied at the end, so a failed
 * assertion never leaves a call waiting (and the test run open). */
const made = []
function denyAll() {
  for (const m of made.splice(0)) for (const p of m.pendingApprovals()) m.deny(p.approvalId, { reason: 'test over' })
}

function setup(options) {
  const registry = new ToolRegistry()
  registry.register({
    name: 'transfer',
    description: 'Sends money',
    inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
    needsApproval: true,
    handler: ({ cents }) => `sent ${cents}`,
  })
  const manager = new ToolExecutionManager(registry, options)
  made.push(manager)
  return { registry, manager }
}

async function waiting(manager, count = 1) {
  for (let i = 0; i < 200; i++) {
    const pending = manager.pendingApprovals()
    if (pending.length >= count) return pending
    await sleep(1)
  }
  throw new Error(`fewer than ${count} calls wait for approval`)
}

describe('approval with nobody listening', () => {
  test('a call that waits with no listener and no timeout warns that it waits forever, once per manager', async () => {
    const w = warnings()
    try {
      const { manager } = setup()
      const first = manager.execute('transfer', { cents: 100 })
      const second = manager.execute('transfer', { cents: 200 })
      const pending = await waiting(manager, 2)
      await settle()
      assert.equal(w.seen.length, 1, `warnings: ${JSON.stringify(w.seen)}`)
      const [{ message, code }] = w.seen
      assert.equal(code, 'APPROVAL_UNHEARD')
      assert.match(message, /tool 'transfer' waits for approval/)
      assert.ok(message.includes(pending[0].approvalId), message)
      assert.match(message, /'tool-execution-approval-requested' listener/)
      assert.match(message, /waits forever/)
      assert.match(message, /approvalTimeoutMs/)
      // The calls still wait (the warning changes nothing), and can be answered.
      for (const p of pending) manager.deny(p.approvalId, { reason: 'test over' })
      assert.equal((await first).error.code, 'APPROVAL_DENIED')
      assert.equal((await second).error.code, 'APPROVAL_DENIED')
    } finally {
      w.stop()
      denyAll()
    }
  })

  test('with approvalTimeoutMs the warning says when the call is denied', async () => {
    const w = warnings()
    try {
      const { manager } = setup({ approvalTimeoutMs: 150 })
      const call = manager.execute('transfer', { cents: 100 })
      await waiting(manager)
      await settle()
      assert.equal(w.seen.length, 1)
      assert.match(w.seen[0].message, /denied when approvalTimeoutMs runs out \(150 ms\)/)
      const r = await call
      assert.equal(r.error.category, 'denied')
    } finally {
      w.stop()
      denyAll()
    }
  })

  test('each manager without a listener warns', async () => {
    const w = warnings()
    try {
      const a = setup().manager
      const b = setup().manager
      const calls = [a.execute('transfer', { cents: 1 }), b.execute('transfer', { cents: 2 })]
      await waiting(a)
      await waiting(b)
      await settle()
      assert.equal(w.seen.length, 2)
      for (const m of [a, b]) for (const p of m.pendingApprovals()) m.deny(p.approvalId)
      await Promise.all(calls)
    } finally {
      w.stop()
      denyAll()
    }
  })

  test('no warning with a listener, nor for a call approved elsewhere, nor for tools that need none', async () => {
    const w = warnings()
    try {
      const { manager } = setup()
      const done = await manager.execute('transfer', { cents: 5 }, { approved: { by: 'elsewhere' } })
      assert.equal(done.result, 'sent 5')
      const listening = setup().manager
      listening.on('tool-execution-approval-requested', ({ approvalId }) => listening.approve(approvalId))
      assert.equal((await listening.execute('transfer', { cents: 7 })).result, 'sent 7')
      await settle()
      assert.deepEqual(w.seen, [])
    } finally {
      w.stop()
      denyAll()
    }
  })
})
