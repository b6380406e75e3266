// A custom element's subscription to a ToolExecutionManager's events (toolhost/lit):
// made again when the element's `manager` changes, dropped when it is disconnected.

/** Calls `listener(type, detail)` for the manager's `tool-execution-<type>` events. */
export class ManagerEvents {
  #off = []
  #manager
  constructor(types, listener) {
    this.types = types
    this.listener = listener
  }

  /** Listens to `manager` (nothing when it is not one). */
  connect(manager) {
    this.disconnect()
    if (manager === null || manager === undefined || typeof manager.on !== 'function') return
    this.#manager = manager
    for (const type of this.types) this.#off.push(manager.on(`tool-execution-${type}`, (detail) => this.listener(type, detail)))
  }

  disconnect() {
    for (const off of this.#off) off()
    this.#off = []
    this.#manager = undefined
  }

  get manager() {
    return this.#manager
  }
}
