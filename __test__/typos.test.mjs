// Typos never turn policy or validation off. Each mistake below used to be accepted in
// silence (a retry policy stored as `retry: {}`, a schema whose `requried` made
// validation pass everything) or refused with a message that did not say what to do.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { z as zod3 } from 'zod-v3'
import { z as zod325v4 } from 'zod-v3/v4'
import { ToolRegistry, ToolExecutionManager, transientError, permanentError } from 'toolhost'

const handler = () => 'ok'

function refusal(registry, definition) {
  try {
    registry.register(definition)
  } catch (e) {
    return e
  }
  assert.fail(`registered: ${JSON.stringify(definition)}`)
}

describe('nested option objects are as strict as the top level', () => {
  test('metadata.retry and metadata.circuitBreaker refuse unknown keys with a did-you-mean', () => {
    const registry = new ToolRegistry()
    let e = refusal(registry, { name: 't', description: 'd', handler, metadata: { retry: { maxAttempt: 5 } } })
    assert.equal(e.code, 'INVALID_DEFINITION')
    assert.equal(e.message, "unknown option `maxAttempt` in metadata.retry of tool 't'; did you mean `maxAttempts`?")
    e = refusal(registry, { name: 't', description: 'd', handler, metadata: { circuitBreaker: { failureTreshold: 3, recoveryTimeoutMs: 100 } } })
    assert.equal(e.message, "unknown option `failureTreshold` in metadata.circuitBreaker of tool 't'; did you mean `failureThreshold`?")
    assert.equal(registry.has('t'), false)
  })

  test('the policy that is written is the policy that runs', async () => {
    const registry = new ToolRegistry()
    let runs = 0
    registry.register({
      name: 'flaky', description: 'd', metadata: { retry: { maxAttempts: 3, baseDelay: 1, jitter: 'none' } },
      handler: () => {
        runs++
        throw Object.assign(new Error('busy'), { retryable: true })
      },
    })
    const r = await new ToolExecutionManager(registry).execute('flaky', {})
    assert.equal(r.success, false)
    assert.equal(runs, 3)
  })

  test('a field of the wrong type names the field and the type it takes', () => {
    const registry = new ToolRegistry()
    const cases = [
      [{ timeoutMs: '100' }, 'metadata.timeoutMs must be a whole number of milliseconds > 0, got the string "100"'],
      // null was read as absent: the manager's timeout applied where "no timeout" was meant.
      [{ timeoutMs: null }, 'metadata.timeoutMs must be a whole number of milliseconds > 0, got null (leave it out for the default)'],
      [{ maxOutputChars: null }, 'metadata.maxOutputChars must be a whole number of characters > 0, got null (leave it out for the default)'],
      [{ retry: { baseDelay: '1s' } }, 'metadata.retry.baseDelay must be a number'],
      [{ retry: 3 }, 'metadata.retry must be an object of retry settings, got the number 3'],
      [{ tags: 'search' }, 'metadata.tags must be an array of strings, got the string "search"'],
      [{ readOnly: 'yes' }, 'metadata.readOnly must be true or false, got the string "yes"'],
      [{ circuitBreaker: { failureThreshold: 2 } }, 'metadata.circuitBreaker.recoveryTimeoutMs is required (a whole number of milliseconds >= 0)'],
    ]
    for (const [metadata, message] of cases) {
      const e = refusal(registry, { name: 't', description: 'd', handler, metadata })
      assert.equal(e.code, 'INVALID_DEFINITION')
      assert.equal(e.message, `tool 't': ${message}`)
    }
    assert.equal(refusal(registry, { name: 't', description: 'd', handler: 'run' }).message, "tool 't': handler must be a function (args, ctx) => result, got a string")
    assert.equal(refusal(registry, { name: 't', description: 42, handler }).message, "tool 't': description must be a string, got the number 42")
  })
})

describe("other libraries' names for definition keys", () => {
  test('execute, handle and run suggest handler', () => {
    const registry = new ToolRegistry()
    const e = refusal(registry, { name: 't', description: 'd', inputSchema: { type: 'object' }, execute: async () => 1 })
    assert.equal(e.code, 'INVALID_DEFINITION')
    assert.equal(e.message, "unknown option `execute` in tool 't'; did you mean `handler`? (the AI SDK's and the Agents SDK's `execute` is toolhost's `handler`)")
    for (const key of ['handle', 'run']) {
      assert.equal(refusal(registry, { name: 't', description: 'd', [key]: handler }).message, `unknown option \`${key}\` in tool 't'; did you mean \`handler\`?`)
    }
    assert.match(refusal(registry, { name: 't', description: 'd', handler, parameters_schema: {} }).message, /unknown option `parameters_schema`/)
  })
})

describe('schema keyword typos are refused at registration (strict schemas)', () => {
  const typos = [
    [{ type: 'object', properties: { id: { type: 'string' } }, requried: ['id'] }, '/requried', 'required'],
    [{ type: 'object', proprties: { id: { type: 'string' } } }, '/proprties', 'properties'],
    [{ type: 'object', properties: { id: { type: 'string', minLenght: 3 } } }, '/properties/id/minLenght', 'minLength'],
    [{ type: 'object', properties: { xs: { type: 'array', items: { maximun: 3 } } } }, '/properties/xs/items/maximun', 'maximum'],
  ]

  test('each typo is refused with its schema path and the keyword meant', () => {
    const registry = new ToolRegistry()
    for (const [inputSchema, path, meant] of typos) {
      const e = refusal(registry, { name: 't', description: 'd', inputSchema, handler })
      assert.equal(e.code, 'INVALID_SCHEMA')
      assert.equal(e.schemaPath, path)
      const typo = path.split('/').pop()
      assert.ok(e.message.startsWith(`tool 't': invalid inputSchema at ${path}: unknown keyword \`${typo}\`; did you mean \`${meant}\`?`), e.message)
      assert.ok(e.message.includes('strictSchemas: false'), e.message)
    }
    const e = refusal(registry, { name: 't', description: 'd', handler, outputSchema: { type: 'object', requried: ['a'] } })
    assert.equal([e.code, e.schemaPath].join(' '), 'INVALID_SCHEMA /requried')
  })

  test('strictSchemas: false registers them, and shows why strict is the default: nothing is checked', () => {
    const registry = new ToolRegistry({ strictSchemas: false })
    registry.register({ name: 't', description: 'd', inputSchema: typos[0][0], handler })
    assert.equal(registry.validate('t', {}).valid, true, 'the misspelt `required` checks nothing')
  })

  test('annotations of your own, comments, examples and property names that look like typos are allowed', () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 't', description: 'd', handler,
      inputSchema: {
        type: 'object', $comment: 'internal', 'x-owner': 'team-geo', examples: [{ requried: 1 }],
        properties: { requried: { type: 'string', 'x-widget': 'textarea', example: 'a', default: 'b' } },
        $defs: { minLenght: { type: 'integer' } },
      },
    })
    assert.equal(registry.validate('t', { requried: 7 }).valid, false)
  })

  test("another draft's keyword names the draft; OpenAPI's nullable says how to write it", () => {
    const registry = new ToolRegistry()
    let e = refusal(registry, {
      name: 't', description: 'd', handler,
      inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', unevaluatedProperties: false },
    })
    assert.match(e.message, /`unevaluatedProperties` is a draft 2020-12 keyword, not a draft-07 one/)
    e = refusal(registry, { name: 't', description: 'd', handler, inputSchema: { type: 'object', properties: { a: { type: 'string', nullable: true } } } })
    assert.equal(e.schemaPath, '/properties/a/nullable')
    assert.match(e.message, /`nullable` is OpenAPI 3\.0, not JSON Schema: .*type: \['string', 'null'\]/)
  })

  test('schemas zod 4 writes register in strict mode', () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'zod_tool', description: 'd', handler,
      inputSchema: z.object({
        email: z.email(), when: z.iso.datetime().optional(), tags: z.array(z.string().min(1)).max(5).describe('labels'),
        kind: z.enum(['a', 'b']).default('a'), n: z.number().int().gte(0), id: z.uuid(), nested: z.object({ x: z.union([z.string(), z.null()]) }),
      }),
    })
    assert.equal(registry.validate('zod_tool', { email: 'x', n: 1, id: 'nope', nested: { x: null }, tags: [] }).valid, false)
  })

  test('registry options are checked too', () => {
    assert.throws(() => new ToolRegistry({ strictSchema: false }), {
      code: 'INVALID_CONFIG',
      message: 'new ToolRegistry: unknown option `strictSchema` in registry options; did you mean `strictSchemas`?',
    })
    assert.throws(() => new ToolRegistry({ strictSchemas: 'no' }), { code: 'INVALID_CONFIG', message: 'new ToolRegistry: strictSchemas must be true or false' })
    assert.throws(() => new ToolRegistry(3), { code: 'INVALID_CONFIG' })
  })
})

describe('messages that say what to do', () => {
  test('a duplicate name says how to replace it, in the registry and in a session', () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'search', description: 'd', handler })
    assert.throws(() => registry.register({ name: 'search', description: 'd', handler }), {
      code: 'DUPLICATE_TOOL',
      message: "a tool named 'search' is already registered: to replace it (a hot reload registering its tools again, say), call registry.unregister('search') first",
    })
    registry.unregister('search')
    registry.register({ name: 'search', description: 'a new version', handler })
    assert.equal(registry.get('search').description, 'a new version')
    const session = registry.createSession()
    session.register({ name: 'mine', description: 'd', handler })
    assert.throws(() => session.register({ name: 'mine', description: 'd', handler }), { code: 'DUPLICATE_TOOL', message: /call session\.unregister\('mine'\) first$/ })
  })

  test('approve(executionId) says it was given an execution id, and which approval id to use', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 'pay', description: 'd', needsApproval: true, handler: () => 'paid' })
    const manager = new ToolExecutionManager(registry)
    const requested = new Promise((resolve) => manager.on('tool-execution-approval-requested', resolve))
    const running = manager.execute('pay', {})
    const { execution, approvalId } = await requested
    assert.throws(() => manager.approve(execution.id), {
      code: 'APPROVAL_NOT_FOUND',
      message: new RegExp(`^'${execution.id}' is an execution id, not an approval id: this execution waits for approval '${approvalId}'`),
    })
    assert.throws(() => manager.deny(execution.id), { code: 'APPROVAL_NOT_FOUND', message: /is an execution id, not an approval id/ })
    manager.approve(approvalId)
    assert.equal((await running).result, 'paid')
  })

  test('zod 3 and zod/v4 of zod 3.25 get "needs zod 4", not a generic refusal', () => {
    const registry = new ToolRegistry()
    let e = refusal(registry, { name: 't', description: 'd', handler, inputSchema: zod3.object({ city: zod3.string() }) })
    assert.equal(e.code, 'INVALID_SCHEMA')
    assert.match(e.message, /^tool 't': inputSchema is a zod 3 schema \(ZodObject\); toolhost needs zod 4\.2 or later, .*npm install zod@\^4\.2/)
    e = refusal(registry, { name: 't', description: 'd', handler, inputSchema: zod325v4.object({ city: zod325v4.string() }) })
    assert.match(e.message, /^tool 't': inputSchema is a zod 4\.0\.0 schema \(zod 4\.0 or 4\.1, or 'zod\/v4' from zod 3\.25\), which cannot give its JSON Schema; toolhost needs zod 4\.2 or later/)
    e = refusal(registry, { name: 't', description: 'd', handler, outputSchema: zod3.string() })
    assert.match(e.message, /^tool 't': outputSchema is a zod 3 schema \(ZodString\)/)
  })
})

describe('misspelt options and event types are refused, not dropped', () => {
  // Each was accepted in silence: strict mode left off, a listener that never fires, a
  // retry hint dropped, a concurrency made into another number, a progress total lost.
  const lookup = { name: 'lookup', description: 'x', inputSchema: { type: 'object', properties: { id: { type: 'string' } } }, handler }

  test('manager options that are not an object are refused; a misspelt provider gets a did-you-mean', async () => {
    const registry = new ToolRegistry()
    registry.register(lookup)
    // An array was spread into {}: the manager ran with no options at all.
    assert.throws(() => new ToolExecutionManager(registry, [{ timeoutMs: 5 }]), { code: 'INVALID_CONFIG', message: 'options must be an object, got an array' })
    assert.throws(() => new ToolExecutionManager(registry, 'fast'), { code: 'INVALID_CONFIG', message: 'options must be an object, got a string' })
    const manager = new ToolExecutionManager(registry)
    await assert.rejects(manager.executeToolCalls({ role: 'assistant', tool_calls: [] }, { provider: 'opnai' }), {
      code: 'INVALID_CONFIG', message: /unknown provider `opnai`; expected one of: openai, openai-responses, anthropic, gemini, ag-ui, mcp; did you mean `openai`\?$/,
    })
  })

  test('toOpenAITools and toOpenAIResponsesTools refuse an unknown option with a did-you-mean', () => {
    const registry = new ToolRegistry()
    registry.register(lookup)
    const session = registry.createSession()
    for (const target of [registry, session]) {
      for (const method of ['toOpenAITools', 'toOpenAIResponsesTools']) {
        assert.throws(() => target[method]({ strcit: true }), {
          code: 'INVALID_CONFIG', message: new RegExp(`^${method}: unknown option \`strcit\` in ${method} options; did you mean \`strict\`\\?`),
        })
        assert.equal(target[method]({ strict: true }).length, 1)
      }
    }
  })

  test('the other exports take no options: strict, a typo or any key is refused, on registries and sessions alike', () => {
    const registry = new ToolRegistry()
    registry.register(lookup)
    const session = registry.createSession()
    for (const target of [registry, session]) {
      for (const method of ['toAnthropicTools', 'toGeminiTools', 'toAgUiTools', 'toMcpTools']) {
        // Anthropic has a `strict` tool flag: toAnthropicTools({ strict: true }) gave non-strict tools.
        for (const key of ['strict', 'strcit']) {
          assert.throws(() => target[method]({ [key]: true }), {
            code: 'INVALID_CONFIG',
            message: `${method}: unknown option \`${key}\`: ${method}() takes no options; strict mode is only for the OpenAI exports (toOpenAITools, toOpenAIResponsesTools)`,
          })
        }
        assert.throws(() => target[method]({ names: ['lookup'] }), { code: 'INVALID_CONFIG', message: `${method}: unknown option \`names\`: ${method}() takes no options` })
        assert.throws(() => target[method](true), { code: 'INVALID_CONFIG', message: `${method}: takes no options, got a boolean` })
        // None, undefined, null or {} are as before.
        const tools = target[method]()
        assert.deepEqual(target[method](undefined), tools)
        assert.deepEqual(target[method](null), tools)
        assert.deepEqual(target[method]({}), tools)
      }
    }
  })

  test('on() refuses an event type the object never dispatches; addEventListener does not', () => {
    const registry = new ToolRegistry()
    const manager = new ToolExecutionManager(registry)
    assert.throws(() => manager.on('tool-execution-succeded', () => {}), {
      code: 'INVALID_CONFIG',
      message: "on('tool-execution-succeded', ...): a ToolExecutionManager never dispatches 'tool-execution-succeded'; did you mean 'tool-execution-succeeded'?",
    })
    assert.throws(() => registry.on('tool-registry-changed', () => {}), { code: 'INVALID_CONFIG', message: /a ToolRegistry never dispatches 'tool-registry-changed'; did you mean 'tool-registry-change'\?/ })
    assert.throws(() => registry.createSession().on('changed', () => {}), { code: 'INVALID_CONFIG', message: /a ToolSession never dispatches 'changed'; it dispatches 'tool-registry-change'/ })
    // Every type a manager dispatches is accepted, the audit's two as well.
    for (const type of ['tool-execution-recovered', 'tool-execution-preliminary-result', 'tool-invocation-recorded', 'tool-audit-error']) {
      assert.equal(manager.on(type, () => {})(), true)
    }
    // addEventListener stays as the DOM's: the caller may dispatch types of its own.
    let heard = 0
    manager.addEventListener('my-own-event', () => heard++)
    manager.dispatchEvent(new Event('my-own-event'))
    assert.equal(heard, 1)
  })

  test('transientError and permanentError refuse unknown options, and options that are not an object', () => {
    assert.throws(() => transientError('busy', { retryAfter: 5000 }), {
      code: 'INVALID_CONFIG', message: 'transientError: unknown option `retryAfter` in transientError options; did you mean `retryAfterMs`?',
    })
    // A permanent error is never retried: a retry hint on it would be ignored.
    assert.throws(() => permanentError('gone', { retryAfterMs: 5000 }), { code: 'INVALID_CONFIG', message: /^permanentError: unknown option `retryAfterMs` in permanentError options/ })
    for (const [make, name] of [[transientError, 'transientError'], [permanentError, 'permanentError']]) {
      assert.throws(() => make('busy', { cod: 'E' }), { code: 'INVALID_CONFIG', message: new RegExp(`did you mean \`code\`\\?`) })
      for (const bad of [null, 'E_BUSY', 5000]) {
        assert.throws(() => make('busy', bad), { code: 'INVALID_CONFIG', message: new RegExp(`^${name}\\(message, options\\): options must be an object`) })
      }
      const e = make('busy', { code: 'E_BUSY', cause: 'why' })
      assert.deepEqual([e.code, e.cause], ['E_BUSY', 'why'])
      assert.equal(make('busy', undefined).message, 'busy')
    }
    assert.equal(transientError('busy', { retryAfterMs: 5000 }).retryAfterMs, 5000)
  })

  test('executeToolCalls takes a concurrency that is a whole number >= 1, or none', async () => {
    const registry = new ToolRegistry()
    registry.register(lookup)
    const manager = new ToolExecutionManager(registry)
    const response = { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'lookup', arguments: '{}' } }] }
    for (const [concurrency, got] of [[0, '0'], [-3, '-3'], ['four', 'the string "four"'], [2.5, '2.5'], [null, 'null']]) {
      await assert.rejects(manager.executeToolCalls(response, { provider: 'openai', concurrency }), {
        code: 'INVALID_CONFIG', message: `executeToolCalls: concurrency must be a whole number >= 1, got ${got} (leave it out for the default of 4)`,
      })
    }
    for (const concurrency of [undefined, 1, 8]) {
      const { results } = await manager.executeToolCalls(response, { provider: 'openai', concurrency })
      assert.equal(results[0].success, true)
    }
  })

  test('reportProgress refuses an unknown key as it refuses a progress that is not a number', async () => {
    const registry = new ToolRegistry()
    let thrown
    registry.register({ ...lookup, handler: (args, ctx) => {
      try {
        ctx.reportProgress({ progress: 1, totl: 10 })
      } catch (e) {
        thrown = e
      }
      ctx.reportProgress({ progress: 1, total: 10, message: 'one of ten' })
      return 'ok'
    } })
    const manager = new ToolExecutionManager(registry)
    const seen = []
    manager.on('tool-execution-progress', ({ progress, total, message }) => seen.push({ progress, total, message }))
    assert.equal((await manager.execute('lookup', {})).result, 'ok')
    assert.ok(thrown instanceof TypeError)
    assert.equal(thrown.code, 'INVALID_ARGUMENTS')
    assert.equal(thrown.message, "reportProgress() takes { progress: number, total?: number, message?: string }: unknown key 'totl'; did you mean 'total'?")
    assert.deepEqual(seen, [{ progress: 1, total: 10, message: 'one of ten' }])
  })
})
