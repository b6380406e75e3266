// A scripted "model" in the OpenAI Chat Completions format: no network, no key. It
// reads the conversation, tool replies included, and answers as a model would: it
// searches, books with a wrong argument, reads the validation error toolhost sends
// back, and books again with the argument fixed.
export const PROMPT = 'Book the cheapest flight to Lisbon for two of us.'

export async function scriptedModel(messages) {
  await new Promise((resolve) => setTimeout(resolve, 450)) // "thinking"
  const replies = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
  const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })
  const ask = (content, ...calls) => ({ role: 'assistant', content, tool_calls: calls })

  if (!replies.has('call_1')) return ask('Let me look for flights to Lisbon.', call('call_1', 'search_flights', { to: 'LIS' }))
  if (!replies.has('call_2')) {
    const { flights } = JSON.parse(replies.get('call_1'))
    // The mistake: the number of passengers as a word.
    return ask(`${flights[0].flight} is the cheapest. Booking it.`, call('call_2', 'book_flight', { flight: flights[0].flight, passengers: 'two' }))
  }
  if (!replies.has('call_3')) {
    // The error reply names the failing path: fix that argument and try again.
    const error = replies.get('call_2')
    if (!error.includes('/passengers')) throw new Error(`the scripted model did not expect this reply: ${error}`)
    const sent = JSON.parse(messages.find((m) => m.tool_calls?.[0]?.id === 'call_2').tool_calls[0].function.arguments)
    const words = { one: 1, two: 2, three: 3 }
    return ask('passengers must be a number: booking again with 2.', call('call_3', 'book_flight', { ...sent, passengers: words[sent.passengers] }))
  }
  const booking = JSON.parse(replies.get('call_3'))
  return { role: 'assistant', content: `Booked ${booking.flight} for ${booking.passengers} passengers. Your confirmation code is ${booking.confirmation}.` }
}
