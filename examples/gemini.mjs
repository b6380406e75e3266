// Google Gemini: `functionDeclarations` out (in Gemini's Schema dialect), `functionCall`
// parts in, one user `Content` of `functionResponse` parts back. The model is scripted
// (recorded responses), so this runs with no network and no key:
//
//   node examples/gemini.mjs
//
// With @google/genai, `scriptedModel(request)` is `await ai.models.generateContent(request)`.
import { ToolExecutionManager, ToolRegistry } from 'toolhost'

const registry = new ToolRegistry()
registry.register({
  name: 'find_restaurants',
  description: 'Restaurants near a place, best rated first',
  inputSchema: {
    type: 'object',
    properties: {
      near: { type: 'string' },
      cuisine: { type: ['string', 'null'] },
      limit: { type: 'integer', minimum: 1, maximum: 5 },
    },
    required: ['near'],
  },
  handler: ({ near, limit = 2 }) => ({
    near,
    restaurants: [{ name: 'Trattoria Da Enzo', rating: 4.7 }, { name: 'Roscioli', rating: 4.6 }, { name: 'Armando', rating: 4.5 }].slice(0, limit),
  }),
})
const manager = new ToolExecutionManager(registry, { timeoutMs: 2000 })

/** Recorded GenerateContentResponses, picked by what the contents hold so far. */
function scriptedModel({ contents }) {
  const responses = contents.flatMap((c) => c.parts).filter((p) => p.functionResponse)
  if (responses.length === 0) {
    const call = { name: 'find_restaurants', args: { near: 'Pantheon, Rome', cuisine: 'roman', limit: 2 } }
    return { candidates: [{ content: { role: 'model', parts: [{ functionCall: call }] }, finishReason: 'STOP' }] }
  }
  const { near, restaurants } = responses[0].functionResponse.response
  const text = `Near ${near}: ${restaurants.map((r) => `${r.name} (${r.rating})`).join(' and ')}.`
  return { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP' }] }
}

const tools = [registry.toGeminiTools()]
const contents = [{ role: 'user', parts: [{ text: 'Where should we eat near the Pantheon tonight?' }] }]
console.log(`tools: ${JSON.stringify(tools[0].functionDeclarations[0].parameters)}`)
console.log(`user: ${contents[0].parts[0].text}`)

for (;;) {
  const response = scriptedModel({ model: 'gemini-2.5-flash', contents, config: { tools } })
  const content = response.candidates[0].content
  contents.push(content)
  const calls = content.parts.filter((p) => p.functionCall)
  if (calls.length === 0) {
    console.log(`model: ${content.parts.map((p) => p.text).join('')}`)
    break
  }
  const { messages } = await manager.executeToolCalls(response, { provider: 'gemini' })
  for (const { functionCall } of calls) console.log(`  model calls ${functionCall.name}(${JSON.stringify(functionCall.args)})`)
  for (const { functionResponse } of messages[0].parts) console.log(`  functionResponse ${functionResponse.name} -> ${JSON.stringify(functionResponse.response)}`)
  contents.push(...messages)
}
