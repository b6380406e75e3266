// The public API, the same whichever backend the entry module set.
export { ToolRegistry, ToolSession } from './registry.mjs'
export { ToolExecutionManager } from './manager.mjs'
export { toAiSdkTools, modelOutputOf } from './tool-calls.mjs'
export { ToolhostError, transientError, permanentError } from './errors.mjs'
