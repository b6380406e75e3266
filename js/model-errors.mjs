// The text a model reads for a failed execution, for code outside the manager that
// answers a model itself (the MCP server in js/mcp.mjs). It is the engine's text, the
// same `executeToolCalls` and `toAiSdkTools` reply with
// (crates/toolhost/src/host/registry.rs `model_error_text`).
import { stateOf } from './registry.mjs'

/**
 * The model-facing text for `error` (an execution's `ToolError`) of a call of `name`
 * with `argumentsText` (the arguments as JSON text, or the raw text a model sent), in
 * the tool set of `target` (a ToolRegistry or a ToolSession): validation issues with
 * the expected schema, the tools it could have called, or the failure's category and
 * message with whether retrying may help.
 */
export function modelErrorText(target, name, argumentsText, error) {
  const session = typeof target?.id === 'string' && target.registry !== undefined ? target.id : null
  const state = stateOf(session === null ? target : target.registry, 'modelErrorText')
  const { category, code, message, retryable, validationErrors } = error
  const facts = JSON.stringify({ category, code, message, retryable, validationErrors })
  return state.core.modelErrorText(session, name, argumentsText, facts)
}
