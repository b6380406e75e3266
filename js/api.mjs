// The public API, the same whichever backend the entry module set.
import { toolhostError } from './errors.mjs'
import { ToolExecutionManager as Manager } from './manager.mjs'
import { ToolRegistry as Registry, ToolSession as Session } from './registry.mjs'

/** The class itself, but called without `new` it throws a toolhost error saying how to
 * create one (a bare class call would throw a TypeError without a code, and a function
 * would return nothing useful). `instanceof`, `extends` and statics work through it. */
function requireNew(Class, how) {
  return new Proxy(Class, {
    apply() {
      throw toolhostError('INVALID_CALL', `${Class.name} is a class: create one with ${how}`)
    },
  })
}

export const ToolRegistry = requireNew(Registry, '`new ToolRegistry()`')
export const ToolExecutionManager = requireNew(Manager, '`new ToolExecutionManager(registry, options)`')
export const ToolSession = requireNew(Session, '`registry.createSession()`')
export { toAiSdkTools, modelOutputOf } from './tool-calls.mjs'
export { ToolhostError, transientError, permanentError } from './errors.mjs'
