// AG-UI events a scripted model sends, built the way a model streams them: text in
// pieces, tool-call arguments in many deltas, several calls interleaved.

/** The events of one text message, its content in `pieces` deltas. */
export function textMessage(messageId, text, pieces = 4) {
  return [
    { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' },
    ...split(text, pieces).map((delta) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta })),
    { type: 'TEXT_MESSAGE_END', messageId },
  ]
}

/** `[id, name, args]` tool calls of one assistant message, their arguments streamed in
 * `pieces` deltas each, interleaved: every call starts, then their deltas alternate,
 * then they end in order. `args` may be text (JSON or not) or a value. */
export function toolCalls(parentMessageId, calls, pieces = 4) {
  const deltas = calls.map(([, , args]) => split(typeof args === 'string' ? args : JSON.stringify(args), pieces))
  const events = calls.map(([toolCallId, toolCallName]) => ({ type: 'TOOL_CALL_START', toolCallId, toolCallName, parentMessageId }))
  for (let k = 0; k < Math.max(...deltas.map((d) => d.length)); k++) {
    calls.forEach(([toolCallId], c) => {
      if (k < deltas[c].length) events.push({ type: 'TOOL_CALL_ARGS', toolCallId, delta: deltas[c][k] })
    })
  }
  for (const [toolCallId] of calls) events.push({ type: 'TOOL_CALL_END', toolCallId })
  return events
}

/** A backend tool's result, which the server sends itself (the client adds it to the
 * conversation as a tool message). */
export function toolResult(messageId, toolCallId, value) {
  return { type: 'TOOL_CALL_RESULT', messageId, toolCallId, role: 'tool', content: typeof value === 'string' ? value : JSON.stringify(value) }
}

/** A pause between events (`{ pause: ms }`): `stream` waits, and sends nothing. */
export const pause = (ms) => ({ pause: ms })

/** `text` cut in `pieces` parts or fewer (never an empty one). */
export function split(text, pieces) {
  if (text.length === 0) return ['']
  const size = Math.ceil(text.length / Math.max(1, pieces))
  const parts = []
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size))
  return parts
}

/** The events of one run, framed by RUN_STARTED (echoing the input, as the protocol
 * allows) and RUN_FINISHED, sent `gapMs` apart, `{ pause }` entries waited out. Stops
 * when `signal` aborts. */
export async function* stream(input, events, { signal, gapMs = 8, result } = {}) {
  const { threadId, runId } = input
  yield { type: 'RUN_STARTED', threadId, runId }
  for (const event of events) {
    if ('pause' in event) {
      await wait(event.pause, signal)
      continue
    }
    if (gapMs > 0) await wait(gapMs, signal)
    yield event
  }
  yield result === undefined ? { type: 'RUN_FINISHED', threadId, runId } : { type: 'RUN_FINISHED', threadId, runId, result }
}

export function wait(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
