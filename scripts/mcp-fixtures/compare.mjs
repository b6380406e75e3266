// What the promotion round trip compares between process A (where the tools are
// registered) and process B (where they are mounted): the same functions on each side.

const EXPORTS = [
  ['toOpenAITools', []], ['toOpenAITools', [{ strict: true }]], ['toOpenAIResponsesTools', []], ['toOpenAIResponsesTools', [{ strict: true }]],
  ['toAnthropicTools', []], ['toGeminiTools', []], ['toAgUiTools', []], ['toMcpTools', []],
]

/** Each export's value, or the error it throws, by `method(args)`. */
export function exportsOf(r) {
  const out = {}
  for (const [method, args] of EXPORTS) {
    const key = `${method}(${args.map((a) => JSON.stringify(a)).join(',')})`
    try {
      out[key] = { value: r[method](...args) }
    } catch (e) {
      out[key] = { error: { code: e.code, message: e.message } }
    }
  }
  return out
}

/** An execution's outcome as plain data. */
export function outcomeOf(r) {
  if (r.success) return { success: true, result: r.result === undefined ? { undefined: true } : r.result }
  const { category, code, message, retryable, validationErrors } = r.error
  const error = { category, code, message, retryable }
  if (validationErrors !== undefined) error.validationErrors = validationErrors
  return { success: false, error }
}
