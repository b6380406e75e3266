// Tiny plain-JS stand-in for the toolhost addon API, used only with --standin
// while the real addon is being built. Its numbers mean nothing; it only lets
// the harness run end to end. Validation is deliberately minimal.
import { randomUUID } from 'node:crypto'

export function transientError(message, { retryAfterMs } = {}) {
  const e = new Error(message)
  e.category = 'transient'
  e.retryAfterMs = retryAfterMs
  return e
}

function check(schema, v) { // top-level type/required/enum only
  if (schema.type === 'object') {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
    for (const k of schema.required ?? []) if (!(k in v)) return false
    for (const [k, s] of Object.entries(schema.properties ?? {})) if (s.enum && k in v && !s.enum.includes(v[k])) return false
  }
  return true
}

export class ToolRegistry {
  tools = new Map()
  register(def) { this.tools.set(def.name, def) }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export class ToolExecutionManager {
  constructor(registry, opts = {}) {
    this.registry = registry
    this.retry = { maxAttempts: 3, baseDelay: 100, maxDelay: 30_000, backoffMultiplier: 2, retryableCategories: ['transient', 'timeout'], ...opts.retry }
    this.timeoutMs = opts.timeoutMs ?? 30_000
    this.historyLimit = opts.historyLimit ?? 1000
    this.history = []
    this.listeners = new Map()
    this.logger = opts.logging ? opts.logger : null
    this.metadata = opts.metadata ?? {}
  }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, [])
    this.listeners.get(type).push(fn)
  }
  emit(type, exec) {
    const ls = this.listeners.get(type)
    if (ls) for (const fn of ls) fn({ type, detail: { execution: exec } })
  }
  async execute(name, input, opts = {}) {
    const tool = this.registry.tools.get(name)
    const exec = { id: randomUUID(), toolName: name, status: 'running', retry: { attemptNumber: 0 }, metadata: this.metadata }
    this.history.push(exec)
    if (this.history.length > this.historyLimit) this.history.shift()
    const done = (status, extra) => {
      exec.status = status
      this.emit(`tool-execution-${status}`, exec)
      this.logger?.('info', `tool execution ${status}`, { executionId: exec.id, ...this.metadata })
      return { success: status === 'succeeded', ...extra, execution: exec }
    }
    this.emit('tool-execution-started', exec)
    if (!tool) return done('failed', { error: { category: 'not_found' } })
    this.emit('tool-execution-validating', exec)
    let args
    try { args = typeof input === 'string' ? JSON.parse(input) : input } catch { args = undefined }
    if (!check(tool.inputSchema, args)) return done('failed', { error: { category: 'validation' } })
    const ms = opts.timeoutMs ?? this.timeoutMs
    const { maxAttempts, baseDelay, maxDelay, backoffMultiplier } = this.retry
    for (let attempt = 1; ; attempt++) {
      exec.retry.attemptNumber = attempt
      this.emit('tool-execution-executing', exec)
      let timer
      try {
        const result = await Promise.race([
          tool.handler(args, { attempt }),
          new Promise((_, rej) => { timer = setTimeout(() => rej(Object.assign(new Error('timeout'), { category: 'timeout' })), ms) }),
        ])
        return done('succeeded', { result })
      } catch (err) {
        const category = err?.category ?? 'execution'
        if (attempt >= maxAttempts || !this.retry.retryableCategories.includes(category)) {
          return done('failed', { error: { category, message: err?.message } })
        }
        this.emit('tool-execution-retrying', exec)
        await sleep(Math.min(maxDelay, baseDelay * backoffMultiplier ** (attempt - 1)))
      } finally {
        clearTimeout(timer)
      }
    }
  }
}
