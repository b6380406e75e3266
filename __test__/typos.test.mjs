// Typos never turn policy or validation off. Each mistake below used to be accepted in
// silence (a retry policy stored as `retry: {}`, a schema whose `requried` made
// validation pass everything) or refused with a message that did not say what to do.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { z as zod3 } from 'zod-v3'
import { z as zod325v4 } from 'zod-v3/v4'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

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
