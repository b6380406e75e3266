// <toolhost-approvals> (toolhost/lit) in Chromium, through the package as a page uses it:
// rows keyed by approval (focus and an open editor stay with their call when another
// leaves), the deny reason, and the cost of many approvals. run.mjs runs this file with
// __test__/*.test.mjs (it is named *.element.mjs so that `node --test`, which has no DOM,
// does not pick it up).
import { test, describe, afterEach } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'
import 'toolhost/lit'

const TRANSFER = { type: 'object', properties: { to: { type: 'string' }, cents: { type: 'integer' } }, required: ['to', 'cents'] }

function setup() {
  const registry = new ToolRegistry()
  const ran = []
  registry.register({
    name: 'transfer',
    description: 'Moves money',
    needsApproval: true,
    inputSchema: TRANSFER,
    handler: async (args) => {
      ran.push(args.to)
      return args
    },
  })
  const manager = new ToolExecutionManager(registry)
  managers.push(manager)
  return { registry, manager, ran }
}

function attach(manager, attributes = {}) {
  const el = document.createElement('toolhost-approvals')
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value)
  el.manager = manager
  document.body.append(el)
  return el
}

const managers = []
afterEach(() => {
  for (const el of document.querySelectorAll('toolhost-approvals')) el.remove()
  // A test that failed half way leaves no call waiting.
  for (const manager of managers.splice(0)) manager.cancelAll()
})

/** Waits until `check()` is true, the element updated (2 s at most). */
async function until(el, check, what) {
  for (let i = 0; i < 400; i++) {
    await el.updateComplete
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const rows = (el) => [...el.shadowRoot.querySelectorAll('li[part=approval]')]
const approvalOf = (manager, toolCallId) => manager.pendingApprovals().find((p) => p.toolCallId === toolCallId)

/** Three transfers waiting: A, B and C, in that order. */
async function threeWaiting(manager, el) {
  const outcomes = {}
  const calls = [['A', 'alice', 100], ['B', 'bob', 200], ['C', 'mallory', 999999]].map(([id, to, cents]) =>
    manager.execute('transfer', { to, cents }, { toolCallId: id }).then((r) => {
      outcomes[id] = r.success ? 'ran' : r.error.code
    }))
  await until(el, () => rows(el).length === 3, 'three rows')
  return { outcomes, calls }
}

describe('<toolhost-approvals>', () => {
  test('focus on B\'s Approve stays on B\'s button when A is decided elsewhere: activating it approves B, not C', async () => {
    const { manager, ran } = setup()
    const el = attach(manager)
    const { outcomes, calls } = await threeWaiting(manager, el)
    const b = approvalOf(manager, 'B')
    const button = el.shadowRoot.querySelector(`button.approve[data-approval-id="${b.approvalId}"]`)
    assert.equal(button.getAttribute('aria-label'), 'Approve transfer (call B)', 'the label tells the calls apart')
    button.focus()
    assert.equal(el.shadowRoot.activeElement, button)

    // A is decided elsewhere (another tab, a timeout): its row leaves.
    await manager.deny(approvalOf(manager, 'A').approvalId)
    await until(el, () => rows(el).length === 2, 'A\'s row to leave')
    const focused = el.shadowRoot.activeElement
    assert.equal(focused?.dataset.approvalId, b.approvalId, 'the focused button is still B\'s')
    assert.equal(focused.getAttribute('aria-label'), 'Approve transfer (call B)')
    focused.click()
    await until(el, () => rows(el).length === 1, 'B\'s row to leave')

    manager.cancelAll()
    await Promise.all(calls)
    assert.deepEqual(outcomes, { A: 'APPROVAL_DENIED', B: 'ran', C: 'CANCELLED' })
    assert.deepEqual(ran, ['bob'])
  })

  test('an open editor keeps its text and its focus when an earlier approval leaves', async () => {
    const { manager } = setup()
    const el = attach(manager)
    const { calls } = await threeWaiting(manager, el)
    const c = approvalOf(manager, 'C')
    el.shadowRoot.querySelector(`button.edit[data-approval-id="${c.approvalId}"]`).click()
    await until(el, () => el.shadowRoot.activeElement?.tagName === 'TEXTAREA', 'the editor to take focus')
    const editor = el.shadowRoot.activeElement
    assert.equal(editor.dataset.approvalId, c.approvalId)
    editor.value = '{"to":"mallory","cents":1}'
    editor.dispatchEvent(new Event('input', { bubbles: true, composed: true }))

    await manager.deny(approvalOf(manager, 'A').approvalId)
    await until(el, () => rows(el).length === 2, 'A\'s row to leave')
    assert.equal(el.shadowRoot.activeElement, editor, 'the same textarea, still focused')
    assert.equal(editor.value, '{"to":"mallory","cents":1}')
    assert.equal(editor.dataset.approvalId, c.approvalId)
    assert.equal(el.shadowRoot.querySelector(`label[for="${editor.id}"]`)?.textContent.startsWith('Arguments (JSON)'), true, 'its label still names it')

    manager.cancelAll()
    await Promise.all(calls)
  })

  for (const [name, configure, reason] of [
    ['removed', (el) => {
      el.setAttribute('deny-reason', 'Not now')
      el.removeAttribute('deny-reason')
    }, 'The user denied this call.'],
    ['empty', (el) => el.setAttribute('deny-reason', ''), 'The user denied this call.'],
    ['null (property)', (el) => {
      el.denyReason = null
    }, 'The user denied this call.'],
    ['given', (el) => el.setAttribute('deny-reason', 'Not now'), 'Not now'],
  ]) {
    test(`deny-reason ${name}: Deny denies the call, and the model reads "${reason}"`, async () => {
      const { manager } = setup()
      const el = attach(manager)
      configure(el)
      const call = manager.execute('transfer', { to: 'bob', cents: 1 })
      await until(el, () => rows(el).length === 1, 'the row')
      el.shadowRoot.querySelector('button.deny').click()
      await until(el, () => manager.pendingApprovals().length === 0 || el.shadowRoot.querySelector('[part=error]') !== null, 'the call to be denied')
      assert.equal(el.shadowRoot.querySelector('[part=error]')?.textContent.trim(), undefined, 'no error shown')
      const r = await call
      assert.equal(r.error.code, 'APPROVAL_DENIED')
      assert.equal(r.execution.approval.reason, reason)
      assert.ok(r.error.message.endsWith(reason), r.error.message)
      await until(el, () => rows(el).length === 0, 'the row to leave')
    })
  }

  test('1000 approvals requested, then approved, with the element attached: pendingApprovals() read once per burst, not per event', async () => {
    const { registry, manager } = setup()
    let reads = 0
    // The element takes any object with the manager's methods; this one counts the reads.
    const counted = {
      registry,
      on: (type, listener) => manager.on(type, listener),
      pendingApprovals: () => {
        reads++
        return manager.pendingApprovals()
      },
      approve: (id, options) => manager.approve(id, options),
      deny: (id, options) => manager.deny(id, options),
    }
    const el = attach(counted)
    await el.updateComplete
    const before = reads
    const calls = Array.from({ length: 1000 }, (_, i) => manager.execute('transfer', { to: `p${i}`, cents: i }))
    await until(el, () => rows(el).length === 1000, '1000 rows')
    const requestReads = reads - before
    for (const p of manager.pendingApprovals()) manager.approve(p.approvalId)
    await Promise.all(calls)
    await until(el, () => rows(el).length === 0, 'the rows to leave')
    const approveReads = reads - before - requestReads
    assert.ok(requestReads <= 2, `1000 requests read pendingApprovals() ${requestReads} times`)
    assert.ok(approveReads <= 3, `1000 approvals read pendingApprovals() ${approveReads} times`)
  })
})
