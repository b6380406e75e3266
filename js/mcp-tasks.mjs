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
import { journalTask } from './manager.mjs'
import { toolhostError } from './errors.mjs'

/** The key of a task's call in the journal. */
export const taskKey = (taskId) => `task:${taskId}`

const iso = (ms) => new Date(ms).toISOString()

/** The SDK's `Task` of a journal answer `{ task, call? }`. */
function taskOf({ task, call }) {
  let status = task.status
  if (status === 'working' && call !== undefined) {
    if (call.state === 'awaiting') status = 'input_required'
    else if (call.state === 'done') status = call.outcome?.status === 'succeeded' ? 'completed' : 'failed'
  }
  const out = { taskId: task.taskId, status, ttl: task.ttl ?? null, createdAt: iso(task.createdAt), lastUpdatedAt: iso(task.lastUpdated) }
  if (task.pollInterval !== undefined) out.pollInterval = task.pollInterval
  const message = task.statusMessage ?? (status === 'failed' ? call?.outcome?.error?.message : undefined)
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

  constructor(manager, toResult) {
    this.#manager = manager
    this.#toResult = toResult
  }

  #op(op) {
    const answer = journalTask(this.#manager, op)
    if (answer === undefined) throw toolhostError('INVALID_CONFIG', 'MCP tasks need a manager with a journal')
    return answer
  }

  async createTask(taskParams) {
    const taskId = globalThis.crypto.randomUUID()
    const ttl = typeof taskParams?.ttl === 'number' ? taskParams.ttl : null
    const pollInterval = typeof taskParams?.pollInterval === 'number' ? taskParams.pollInterval : 500
    const task = await this.#op({ op: 'create', taskId, ttl, pollInterval })
    return taskOf({ task })
  }

  async getTask(taskId) {
    const found = await this.#op({ op: 'get', taskId })
    return found === null ? null : taskOf(found)
  }

  async storeTaskResult(taskId, status, result) {
    await this.#op({ op: 'update', taskId, status, result })
  }

  async getTaskResult(taskId) {
    const found = await this.#op({ op: 'get', taskId })
    if (found === null) throw toolhostError('TASK_NOT_FOUND', `task ${taskId} does not exist (or its ttl passed)`)
    if (found.task.result !== undefined) return found.task.result
    if (found.call?.state === 'done' && found.call.outcome !== undefined) return this.#toResult(found.call.outcome)
    throw toolhostError('TASK_NOT_FINISHED', `task ${taskId} has no result yet`)
  }

  async updateTaskStatus(taskId, status, statusMessage) {
    await this.#op({ op: 'update', taskId, status, statusMessage })
  }

  async listTasks(cursor) {
    const limit = 100
    const tasks = await this.#op({ op: 'list', cursor, limit })
    const out = tasks.map((task) => taskOf({ task }))
    return tasks.length === limit ? { tasks: out, nextCursor: tasks.at(-1).taskId } : { tasks: out }
  }
}
