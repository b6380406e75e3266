// MCP tasks (the 2025-11-25 revision's experimental tasks, as @modelcontextprotocol/sdk
// 1.32 implements them) kept in a manager's journal, so a task outlives the server
// process that created it and the client's connection.
//
// A task is a row of its own (`toolhost_tasks`: ttl, poll interval, a stored result)
// and the journal row of its call, whose key is `task:<taskId>`. Until a result is stored,
// the task's status and result follow that call: working while it runs, input_required
// while it waits for approval, completed or failed once it finished, here or, after a
// crash, wherever recovery finished it. The SDK's own `tasks/get`, `tasks/result`,
// `tasks/list` and `tasks/cancel` read this store through its `TaskStore` interface.
//
// A store made for an authenticated identity (serveHttp with `auth`) binds each task to
// it: the task id starts with a digest of the identity, which the journal keeps with the
// row, so the binding outlives this process. Such a store answers only its identity's
// tasks: another's id is not found, and tasks/list is the identity's own (ids sharing a
// prefix sort together, so a page is one range of the journal's list). Without an
// identity a task id is a bare UUID and every task is seen, as before.
import { journalTask } from './manager.mjs'
import { toolhostError } from './errors.mjs'

/** The key of a task's call in the journal. */
export const taskKey = (taskId) => `task:${taskId}`

const iso = (ms) => new Date(ms).toISOString()

/** The calls of tasks running in this process, by manager and then task id, whichever
 * server (one per session or identity) started them: tasks/cancel aborts the call. A
 * call running in another process over the same journal is not reached from here. */
const running = new WeakMap()

/** Runs a task's call as `start(signal)`, a signal that tasks/cancel aborts. */
export function runTask(manager, taskId, start) {
  let calls = running.get(manager)
  if (calls === undefined) running.set(manager, (calls = new Map()))
  const controller = new AbortController()
  calls.set(taskId, controller)
  const call = start(controller.signal)
  const forget = () => {
    if (calls.get(taskId) === controller) calls.delete(taskId)
  }
  call.then(forget, forget)
  return call
}

const notFound = (taskId) => toolhostError('TASK_NOT_FOUND', `task ${taskId} does not exist (or its ttl passed)`)

/** The text of a stored `CallToolResult`'s first part, if it has one. */
function replyText(result) {
  const first = result?.content?.[0]
  return first?.type === 'text' && typeof first.text === 'string' ? first.text : undefined
}

/** The SDK's `Task` of a journal answer `{ task, call? }`. */
function taskOf({ task, call }) {
  let status = task.status
  if (status === 'working' && call !== undefined) {
    if (call.state === 'awaiting') status = 'input_required'
    else if (call.state === 'done') status = call.outcome?.status === 'succeeded' ? 'completed' : 'failed'
  }
  const out = { taskId: task.taskId, status, ttl: task.ttl ?? null, createdAt: iso(task.createdAt), lastUpdatedAt: iso(task.lastUpdated) }
  if (task.pollInterval !== undefined) out.pollInterval = task.pollInterval
  // A failure's text as its reply has it (what toModelError wrote), never the raw error.
  const message = task.statusMessage ?? (status === 'failed' ? replyText(task.result) ?? call?.outcome?.error?.code : undefined)
  if (message !== undefined) out.statusMessage = message
  return out
}

/**
 * A `TaskStore` over a manager's journal. `toResult(outcome)` makes the `CallToolResult`
 * of a call's stored outcome (the server's own reply: the JSON text, structuredContent,
 * or the error text a model reads).
 */
export class JournalTaskStore {
  #manager
  #toResult
  /** The identity this store answers (undefined: anyone), and its id prefix, once made. */
  #owner
  #prefix

  constructor(manager, toResult, owner) {
    this.#manager = manager
    this.#toResult = toResult
    this.#owner = typeof owner === 'string' ? owner : undefined
  }

  /** The prefix of the owner's task ids: 32 hex digits of a SHA-256 of the identity and a
   * dot ('' without an owner). A bare UUID has a dash at its 9th character, so it never
   * has such a prefix. crypto.subtle: this module also loads in a browser. */
  async #ownerPrefix() {
    if (this.#owner === undefined) return ''
    if (this.#prefix === undefined) {
      const bytes = new TextEncoder().encode(`toolhost task owner\0${this.#owner}`)
      const hash = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes))
      this.#prefix = `${[...hash.slice(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('')}.`
    }
    return this.#prefix
  }

  /** Whether this store may answer `taskId`: its own identity's, or any without one. */
  async #mine(taskId) {
    const prefix = await this.#ownerPrefix()
    return typeof taskId === 'string' && taskId.startsWith(prefix)
  }

  /** The task `{ task, call? }`, or null when it does not exist or is another identity's. */
  async #get(taskId) {
    if (!(await this.#mine(taskId))) return null
    return this.#op({ op: 'get', taskId })
  }

  #op(op) {
    const answer = journalTask(this.#manager, op)
    if (answer === undefined) throw toolhostError('INVALID_CONFIG', 'MCP tasks need a manager with a journal')
    return answer
  }

  async createTask(taskParams) {
    const taskId = `${await this.#ownerPrefix()}${globalThis.crypto.randomUUID()}`
    const ttl = typeof taskParams?.ttl === 'number' ? taskParams.ttl : null
    const pollInterval = typeof taskParams?.pollInterval === 'number' ? taskParams.pollInterval : 500
    const task = await this.#op({ op: 'create', taskId, ttl, pollInterval })
    return taskOf({ task })
  }

  async getTask(taskId) {
    const found = await this.#get(taskId)
    if (found === null) return null
    // A call another process finished has no stored reply: its status message is the text
    // its reply gets.
    const { task, call } = found
    if (task.result === undefined && call?.state === 'done' && call.outcome !== undefined && call.outcome.status !== 'succeeded') {
      return taskOf({ task: { ...task, result: this.#toResult(call.outcome, call) }, call })
    }
    return taskOf(found)
  }

  async storeTaskResult(taskId, status, result) {
    if (!(await this.#mine(taskId))) throw notFound(taskId)
    await this.#op({ op: 'update', taskId, status, result })
  }

  async getTaskResult(taskId) {
    const found = await this.#get(taskId)
    if (found === null) throw notFound(taskId)
    if (found.task.result !== undefined) return found.task.result
    if (found.call?.state === 'done' && found.call.outcome !== undefined) return this.#toResult(found.call.outcome, found.call)
    throw toolhostError('TASK_NOT_FINISHED', `task ${taskId} has no result yet`)
  }

  async updateTaskStatus(taskId, status, statusMessage) {
    if (!(await this.#mine(taskId))) throw notFound(taskId)
    await this.#op({ op: 'update', taskId, status, statusMessage })
    // tasks/cancel: the call stops too, as notifications/cancelled stops a plain one. Its
    // outcome does not replace the task's status, which the journal keeps once final.
    if (status === 'cancelled') running.get(this.#manager)?.get(taskId)?.abort(new DOMException('the MCP client cancelled the task', 'AbortError'))
  }

  async listTasks(cursor) {
    const limit = 100
    const prefix = await this.#ownerPrefix()
    // The owner's ids are the range after its prefix: a cursor outside it starts there.
    const from = typeof cursor === 'string' && cursor.startsWith(prefix) ? cursor : prefix === '' ? cursor : prefix
    const rows = await this.#op({ op: 'list', cursor: from, limit })
    const tasks = rows.filter((task) => task.taskId.startsWith(prefix))
    const out = tasks.map((task) => taskOf({ task }))
    // A row past the owner's range means the range ended within this page.
    return rows.length === limit && tasks.length === limit ? { tasks: out, nextCursor: tasks.at(-1).taskId } : { tasks: out }
  }
}
