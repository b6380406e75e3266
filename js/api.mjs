// The public API, the same whichever backend the entry module set.
import { toolhostError } from './errors.mjs'
import { ToolExecutionManager as Manager } from './manager.mjs'
import { ToolRegistry as Registry, ToolSession as Session } from './registry.mjs'

/** The class, as a constructor that, called without `new`, throws a toolhost error saying
 * how to create one (a bare class call would throw a TypeError without a code).
 * `instanceof`, `extends` and statics work through it.
 *
 * It is a function, not a Proxy of the class: with a Proxy as new.target, V8 shaped the
 * instances from the base EventTarget's map, and a manager's private fields, past its
 * dozen spare slots, made it a dictionary (each `this.#x` a hash lookup; B1 6.3 -> 5.4
 * µs/call without). A function on the class's prototype chain keeps the estimate of its
 * fields, for `new` of it and of a subclass alike. */
function requireNew(Class, how) {
  const constructor = function (...args) {
    if (new.target === undefined) throw toolhostError('INVALID_CALL', `${Class.name} is a class: create one with ${how}`)
    return Reflect.construct(Class, args, new.target === constructor ? Class : new.target)
  }
  Object.defineProperty(constructor, 'name', { value: Class.name })
  Object.setPrototypeOf(constructor, Class)
  Object.defineProperty(constructor, 'prototype', { value: Class.prototype, writable: false })
  Object.defineProperty(constructor, 'length', { value: Class.length })
  return constructor
}

export const ToolRegistry = requireNew(Registry, '`new ToolRegistry()`')
export const ToolExecutionManager = requireNew(Manager, '`new ToolExecutionManager(registry, options)`')
export const ToolSession = requireNew(Session, '`registry.createSession()`')
export { toAiSdkTools, modelOutputOf } from './tool-calls.mjs'
export { ToolhostError, transientError, permanentError } from './errors.mjs'
