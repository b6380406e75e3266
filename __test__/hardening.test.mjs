// Hardening (issue 16): each finding of the adversarial review has a regression test
// here, named after it, through the public package.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

/** A tool whose schema forbids `isAdmin: true` at the root and one level down, and
 * whose handler reports what it received. */
function payTool() {
  const seen = []
  const registry = new ToolRegistry()
  const noAdmin = { isAdmin: { const: false } }
  registry.register({
    name: 'pay',
    description: 'Pays an amount',
    inputSchema: {
      type: 'object',
      properties: { amount: { type: 'number' }, ...noAdmin, nested: { type: 'object', properties: noAdmin } },
      required: ['amount'],
    },
    handler: (args) => {
      seen.push(args)
      return { paid: args.amount }
    },
  })
  const manager = new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } })
  return { manager, seen }
}

/** What every path must hand the handler: an own `__proto__` key (as `JSON.parse` makes
 * it), never an object whose prototype the model chose. */
function assertOwnProto(args) {
  assert.equal(Object.getPrototypeOf(args), Object.prototype)
  assert.equal(args.isAdmin, undefined, 'isAdmin must not be inherited from a model-chosen prototype')
  assert.ok(Object.hasOwn(args, '__proto__'))
  assert.deepEqual(Object.getOwnPropertyDescriptor(args, '__proto__').value, { isAdmin: true })
  assert.equal(Object.getPrototypeOf(args.nested), Object.prototype)
  assert.equal(args.nested.isAdmin, undefined)
  assert.ok(Object.hasOwn(args.nested, '__proto__'))
}

const TEXT = '{"amount":5,"__proto__":{"isAdmin":true},"nested":{"__proto__":{"isAdmin":true}}}'

describe('finding 1: a __proto__ key cannot bypass the schema', () => {
  const calls = {
    openai: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'pay', arguments: TEXT } }] },
    'openai-responses': [{ type: 'function_call', call_id: 'c1', name: 'pay', arguments: TEXT }],
    anthropic: { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'pay', input: JSON.parse(TEXT) }] },
    gemini: [{ functionCall: { id: 'c1', name: 'pay', args: JSON.parse(TEXT) } }],
    'ag-ui': [
      { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'pay' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: TEXT },
      { type: 'TOOL_CALL_END', toolCallId: 'c1' },
    ],
  }
  for (const [provider, response] of Object.entries(calls)) {
    test(`executeToolCalls, ${provider}: the handler gets an own __proto__ key, not a prototype`, async () => {
      const { manager, seen } = payTool()
      const { results } = await manager.executeToolCalls(response, { provider })
      assert.equal(results[0].success, true, JSON.stringify(results[0].error))
      assert.equal(seen.length, 1)
      assertOwnProto(seen[0])
    })
  }

  test('execute with the same text and with JSON.parse of it', async () => {
    for (const args of [TEXT, JSON.parse(TEXT)]) {
      const { manager, seen } = payTool()
      const r = await manager.execute('pay', args)
      assert.equal(r.success, true, JSON.stringify(r.error))
      assertOwnProto(seen[0])
    }
  })
})

const PROVIDERS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'ag-ui', 'mcp']

/** A model response of `provider` calling tool `name` with `args` (an object) as call
 * `a`, then (but for MCP, one call per request) with `{}` as call `b`. `text` is the
 * arguments' JSON text, for the providers that send text. */
function response(provider, name, args, text = JSON.stringify(args)) {
  switch (provider) {
    case 'openai':
      return { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name, arguments: text } },
        { id: 'b', type: 'function', function: { name, arguments: '{}' } },
      ] }
    case 'openai-responses':
      return [{ type: 'function_call', call_id: 'a', name, arguments: text }, { type: 'function_call', call_id: 'b', name, arguments: '{}' }]
    case 'anthropic':
      return { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name, input: args }, { type: 'tool_use', id: 'b', name, input: {} }] }
    case 'gemini':
      // The deepest envelope a provider has: the arguments sit 8 levels down.
      return { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'a', name, args } }, { functionCall: { id: 'b', name, args: {} } }] } }] }
    case 'ag-ui':
      return [
        { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: name },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: text },
        { type: 'TOOL_CALL_END', toolCallId: 'a' },
        { type: 'TOOL_CALL_START', toolCallId: 'b', toolCallName: name },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'b', delta: '{}' },
        { type: 'TOOL_CALL_END', toolCallId: 'b' },
      ]
    case 'mcp':
      return { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name, arguments: args } }
  }
}

/** A tool taking any object, counting the calls its handler gets. */
function anyTool(options) {
  const seen = []
  const registry = new ToolRegistry()
  registry.register({ name: 't', description: 'Takes any object', inputSchema: { type: 'object' }, handler: (args) => { seen.push(args); return 'ran' } })
  return { manager: new ToolExecutionManager(registry, { retry: { maxAttempts: 1 }, ...options }), seen, registry }
}

/** The text of every reply in a provider's messages. */
const replyText = (messages) => JSON.stringify(messages)

describe('finding 2: the 16 MiB argument limit holds for objects and every provider', () => {
  test('execute with an object holding a 64 MiB string is refused without running the handler', async () => {
    const { manager, seen } = anyTool()
    const started = Date.now()
    const r = await manager.execute('t', { s: 'x'.repeat(64 * 1024 * 1024) })
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.match(r.error.message, /16777216-byte argument limit/)
    assert.equal(seen.length, 0)
    assert.ok(Date.now() - started < 2000, 'refused before the string is written out')
  })

  test('execute with an object whose parts pass but whose text exceeds the limit is refused', async () => {
    const { manager, seen } = anyTool()
    const nine = 'y'.repeat(9 * 1024 * 1024)
    const r = await manager.execute('t', { a: nine, b: nine })
    assert.equal(r.error?.code, 'INVALID_ARGUMENTS')
    assert.match(r.error.message, /argument limit/)
    assert.equal(seen.length, 0)
  })

  const big = 'x'.repeat(20 * 1000 * 1000)
  for (const provider of PROVIDERS) {
    test(`executeToolCalls, ${provider}: a 20 MB call gets a validation reply and the call beside it runs`, async () => {
      const { manager, seen } = anyTool()
      const { messages, results } = await manager.executeToolCalls(response(provider, 't', { s: big }), { provider })
      assert.equal(results[0].success, false)
      assert.equal(results[0].error.code, 'INVALID_ARGUMENTS')
      assert.match(results[0].error.message, /16777216-byte argument limit/)
      if (provider !== 'mcp') {
        assert.equal(results.length, 2)
        assert.equal(results[1].success, true, JSON.stringify(results[1].error))
        assert.equal(seen.length, 1, 'only the small call ran')
      } else assert.equal(seen.length, 0)
      const text = replyText(messages)
      assert.ok(text.length < 20_000, `the reply to the model stays small (${text.length} characters)`)
      assert.match(text, /argument limit/)
    })
  }
})

describe('finding 6: a sparse array is refused at once, not walked', () => {
  test('{ a } with a.length = 1e8 is refused at once', async () => {
    const { manager, seen } = anyTool()
    const a = []
    a.length = 1e8
    const started = Date.now()
    const r = await manager.execute('t', { a })
    assert.equal(r.error?.code, 'INVALID_ARGUMENTS')
    assert.match(r.error.message, /argument limit at \/a/)
    assert.ok(Date.now() - started < 500, `took ${Date.now() - started} ms`)
    assert.equal(seen.length, 0)
  })

  test('one element at index 2**32 - 2 is refused at once', async () => {
    const { manager, registry } = anyTool()
    const b = []
    b[2 ** 32 - 2] = 1
    const started = Date.now()
    const r = await manager.execute('t', { b })
    assert.equal(r.error?.code, 'INVALID_ARGUMENTS')
    assert.match(r.error.message, /argument limit at \/b/)
    const v = registry.validate('t', { b })
    assert.equal(v.valid, false)
    assert.ok(Date.now() - started < 500, `took ${Date.now() - started} ms`)
  })

  test('a sparse array small enough to pass is refused too (its holes are not values), naming the first hole', async () => {
    const { manager, seen } = anyTool()
    const c = []
    c[70_000] = 1
    const r = await manager.execute('t', { c })
    assert.equal(r.error?.code, 'INVALID_ARGUMENTS')
    assert.match(r.error.message, /a sparse array \(no element at index 0\) is not JSON at \/c/)
    assert.equal(seen.length, 0)
  })
})

/** `n` levels of nested objects: `{ a: { a: ... {} } }`. */
function nested(n) {
  let v = {}
  for (let i = 1; i < n; i++) v = { a: v }
  return v
}

describe('finding 3: a deep call gets a validation reply, and the envelope does not count against it', () => {
  test('execute takes 127 levels and refuses 128, as text and as an object', async () => {
    const { manager } = anyTool()
    for (const args of [nested(127), JSON.stringify(nested(127))]) assert.equal((await manager.execute('t', args)).success, true)
    for (const args of [nested(128), JSON.stringify(nested(128))]) {
      const r = await manager.execute('t', args)
      assert.equal(r.error?.code, 'INVALID_ARGUMENTS')
      assert.match(r.error.message, /nested more than 127 levels deep/)
    }
  })

  for (const provider of PROVIDERS) {
    test(`executeToolCalls, ${provider}: 127 levels run, as with execute`, async () => {
      const { manager, seen } = anyTool()
      const { results } = await manager.executeToolCalls(response(provider, 't', nested(127)), { provider })
      assert.equal(results[0].success, true, JSON.stringify(results[0].error))
      assert.deepEqual(seen[0], nested(127))
    })

    for (const depth of [128, 125 + 1000]) {
      test(`executeToolCalls, ${provider}: ${depth} levels get a validation reply and the call beside it runs`, async () => {
        const { manager, seen } = anyTool()
        const { messages, results } = await manager.executeToolCalls(response(provider, 't', nested(depth)), { provider })
        assert.equal(results[0].success, false)
        assert.equal(results[0].error.code, 'INVALID_ARGUMENTS')
        assert.match(results[0].error.message, /nested more than 127 levels deep/)
        if (provider !== 'mcp') {
          assert.equal(results[1].success, true, JSON.stringify(results[1].error))
          assert.equal(seen.length, 1)
        } else assert.equal(seen.length, 0)
        assert.match(replyText(messages), /nested more than 127 levels deep/)
      })
    }
  }
})

describe('finding 5: redacted fields are masked in every message written from the arguments', () => {
  function loginTool() {
    const lines = []
    const registry = new ToolRegistry()
    registry.register({
      name: 'login',
      description: 'Logs in',
      // maxProperties makes a failure at the root, whose message quotes the whole object.
      inputSchema: { type: 'object', maxProperties: 1, properties: { user: { type: 'string' }, password: { type: 'string', minLength: 12 } } },
      handler: () => 'in',
    })
    const manager = new ToolExecutionManager(registry, {
      retry: { maxAttempts: 1 },
      redact: ['password'],
      logging: true,
      logger: (level, message, fields) => lines.push(JSON.stringify([level, message, fields])),
    })
    return { manager, lines }
  }
  const args = { user: 'bob', password: 'hunter2' }

  test('execute: the log lines, error message and validation errors never quote the value', async () => {
    const { manager, lines } = loginTool()
    const r = await manager.execute('login', args)
    assert.equal(r.error?.code, 'INVALID_ARGUMENTS')
    assert.ok(lines.length > 0)
    for (const text of [...lines, r.error.message, JSON.stringify(r.error.validationErrors)]) {
      assert.doesNotMatch(text, /hunter2/)
    }
    assert.match(r.error.message, /\/password: "\[REDACTED\]" is shorter than 12 characters/)
    assert.match(r.error.message, /"user":"bob"/, 'what is not redacted is still shown')
    // The record keeps the handler's real arguments, as documented.
    assert.equal(manager.getExecution(r.execution.id).args.password, 'hunter2')
  })

  for (const provider of PROVIDERS) {
    test(`executeToolCalls, ${provider}: the reply to the model masks the value`, async () => {
      const { manager, lines } = loginTool()
      const { messages, results } = await manager.executeToolCalls(response(provider, 'login', args), { provider })
      assert.equal(results[0].error?.code, 'INVALID_ARGUMENTS')
      for (const text of [replyText(messages), results[0].error.message, ...lines]) assert.doesNotMatch(text, /hunter2/)
      assert.match(replyText(messages), /REDACTED/)
    })
  }
})

describe('finding 7: JSON text with a lone surrogate is read as JSON.parse reads it', () => {
  const texts = ['{"s":"\\uD800"}', '{"s":"\\uDC00"}', '{"s":"\\uDC00\\uD800x"}', '{"s":"a\\uD83D"}']
  function stringTool() {
    const seen = []
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 'Takes a string', inputSchema: { type: 'object', properties: { s: { type: 'string', maxLength: 3 } } }, handler: (a) => { seen.push(a); return 'ran' } })
    return { registry, manager: new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } }), seen }
  }

  test('execute and validate: the text and JSON.parse of it agree, and the handler gets JSON.parse of the text', async () => {
    for (const text of texts) {
      const { registry, manager, seen } = stringTool()
      assert.equal(registry.validate('t', text).valid, true, text)
      assert.equal(registry.validate('t', JSON.parse(text)).valid, true, text)
      for (const args of [text, JSON.parse(text)]) {
        const r = await manager.execute('t', args)
        assert.equal(r.success, true, `${text}: ${JSON.stringify(r.error)}`)
      }
      assert.deepEqual(seen, [JSON.parse(text), JSON.parse(text)])
    }
  })

  test('an escaped backslash before uD800 is not a surrogate escape', async () => {
    const { manager, seen } = stringTool()
    const r = await manager.execute('t', '{"s":"\\\\uD800"}'.replace('"s"', '"x"'))
    assert.equal(r.success, true, JSON.stringify(r.error))
    assert.equal(seen[0].x, '\\uD800')
  })

  test('large text (the worker path) with a lone surrogate', async () => {
    const { manager, seen } = stringTool()
    const text = `{"s":"\\uD800","pad":"${'x'.repeat(2_000_000)}"}`
    const r = await manager.execute('t', text)
    assert.equal(r.success, true, JSON.stringify(r.error))
    assert.equal(seen[0].s, '\uD800')
  })

  for (const provider of PROVIDERS) {
    test(`executeToolCalls, ${provider}: the handler gets the lone surrogate`, async () => {
      for (const text of texts) {
        const { manager, seen } = stringTool()
        const { results } = await manager.executeToolCalls(response(provider, 't', JSON.parse(text), text), { provider })
        assert.equal(results[0].success, true, `${text}: ${JSON.stringify(results[0].error)}`)
        assert.deepEqual(seen[0], JSON.parse(text))
      }
    })
  }
})

describe('finding 7, found again by the fuzz test: raw lone surrogates in OpenAI argument text, and in definitions', () => {
  for (const provider of ['openai', 'openai-responses']) {
    test(`executeToolCalls, ${provider}: arguments text holding a lone surrogate itself (not an escape) reaches the handler exactly`, async () => {
      for (const s of ['\uD800', 'a\uDFFFb', '\uDC00\uD800']) {
        const text = `{"k":"${s}"}`
        const seen = []
        const registry = new ToolRegistry()
        registry.register({ name: 't', description: 'Takes a string', inputSchema: { type: 'object', properties: { k: { type: 'string' }, o: { type: ['string', 'null'] } } }, handler: (a) => { seen.push(a); return 'ran' } })
        const manager = new ToolExecutionManager(registry)
        const response = provider === 'openai'
          ? { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: text } }] }
          : { output: [{ type: 'function_call', call_id: 'c1', name: 't', arguments: text }] }
        const { results, calls } = await manager.executeToolCalls(response, { provider })
        assert.equal(results[0].success, true, JSON.stringify(results[0].error))
        assert.equal(seen[0].k, JSON.parse(text).k)
        assert.equal(calls[0].arguments.k, JSON.parse(text).k)
      }
    })
  }

  test('a definition holding a lone surrogate is refused, saying so (get() and the exports could not give it back)', () => {
    const registry = new ToolRegistry()
    assert.throws(
      () => registry.register({ name: 't', description: 'Takes one value', inputSchema: { type: 'object', properties: { k: { const: '\uD800' } } }, handler: () => 'ran' }),
      (e) => e.code === 'INVALID_DEFINITION' && /tool 't' holds a string with a lone surrogate/.test(e.message),
    )
    assert.equal(registry.has('t'), false)
  })
})

describe('finding 9: validation errors are capped: the first 20, then how many more', () => {
  function listTool() {
    const registry = new ToolRegistry()
    registry.register({ name: 'list', description: 'Takes strings', inputSchema: { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } } }, handler: () => 'ran' })
    return { registry, manager: new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } }) }
  }
  const text = JSON.stringify({ items: new Array(100_000).fill(0) })

  test('100,000 failing items give 20 errors and a count of the rest, quickly', async () => {
    const { manager, registry } = listTool()
    const started = Date.now()
    for (let i = 0; i < 3; i++) {
      const r = await manager.execute('list', text)
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.equal(r.error.validationErrors.length, 21)
      assert.deepEqual(r.error.validationErrors.slice(0, 20).map((e) => e.path), Array.from({ length: 20 }, (_, k) => `/items/${k}`))
      assert.equal(r.error.validationErrors[20].keyword, 'more')
      assert.match(r.error.validationErrors[20].message, /99980 more/)
      assert.ok(r.error.message.length < 4000, `message of ${r.error.message.length} characters`)
    }
    const elapsed = Date.now() - started
    assert.ok(elapsed < 600, `3 calls took ${elapsed} ms`)
    const v = registry.validate('list', text)
    assert.equal(v.errors.length, 21)
  })

  for (const provider of PROVIDERS) {
    test(`executeToolCalls, ${provider}: the reply to the model stays small`, async () => {
      const { manager } = listTool()
      const { messages, results } = await manager.executeToolCalls(response(provider, 'list', JSON.parse(text), text), { provider })
      assert.equal(results[0].error.validationErrors.length, 21)
      const reply = replyText(messages)
      assert.ok(reply.length < 8000, `reply of ${reply.length} characters`)
      assert.match(reply, /99980 more/)
    })
  }

  test('one failure quoting a huge value is cut in the message', async () => {
    const { manager } = listTool()
    const r = await manager.execute('list', { items: 'x'.repeat(1_000_000) })
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.ok(r.error.message.length < 4000, `message of ${r.error.message.length} characters`)
  })
})

describe('finding 10: $ref cycles and patterns that are not ECMA-262 are refused at registration', () => {
  const register = (inputSchema) => new ToolRegistry().register({ name: 'cyc', description: 'd', inputSchema, handler: () => 1 })

  test('a $ref that resolves to itself with no constraint between is refused', () => {
    for (const [schema, at] of [
      [{ type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/a' } } }, '/$defs/a'],
      [{ type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/b' }, b: { description: 'x', $ref: '#/$defs/a' } } }, '/$defs/a'],
      [{ type: 'object', properties: { a: { $ref: '#/properties/a' } } }, '/properties/a'],
      [{ type: 'object', properties: { a: { allOf: [{ $ref: '#/properties/a' }] } } }, '/properties/a'],
    ]) {
      assert.throws(() => register(schema), (e) => {
        assert.equal(e.code, 'INVALID_SCHEMA')
        assert.match(e.message, /tool 'cyc'/)
        assert.match(e.message, /\$ref cycle/)
        assert.ok(e.schemaPath.startsWith(at), `${e.schemaPath} for ${JSON.stringify(schema)}`)
        return true
      })
    }
  })

  test('recursive schemas with a constraint in the loop are kept', () => {
    register({ type: 'object', properties: { a: { $ref: '#' } } })
    register({ type: 'object', properties: { n: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } } })
    register({ type: 'object', $ref: '#' })
  })

  test('patterns that are not ECMA-262 are refused, with why', () => {
    for (const pattern of ['[[:alpha:]]', '(?i)abc', 'a\\z', '\\Aa']) {
      for (const schema of [{ type: 'object', properties: { a: { type: 'string', pattern } } }, { type: 'object', patternProperties: { [pattern]: {} } }]) {
        assert.throws(() => register(schema), (e) => {
          assert.equal(e.code, 'INVALID_SCHEMA')
          assert.match(e.message, /not an ECMA-262 regular expression/, e.message)
          return true
        }, pattern)
      }
    }
    // A value that only looks like a pattern is data, not a schema.
    register({ type: 'object', properties: { a: { const: { pattern: '[[:alpha:]]' } } } })
  })

  test('ECMA-262 patterns compile, or the refusal says exactly why', () => {
    for (const pattern of ['^\\p{L}+$', '^[a-z]{2,8}$', '\\u{1F600}', '(?<year>\\d{4})', '\\cJ']) {
      const registry = new ToolRegistry()
      try {
        registry.register({ name: 'p', description: 'd', inputSchema: { type: 'object', properties: { a: { type: 'string', pattern } } }, handler: () => 1 })
      } catch (e) {
        assert.fail(`${pattern}: ${e.message}`)
      }
    }
    assert.throws(() => register({ type: 'object', properties: { a: { type: 'string', pattern: '\\p{L}{1000}' } } }), (e) => {
      assert.equal(e.code, 'INVALID_SCHEMA')
      assert.match(e.message, /size limit/)
      return true
    })
    // Look-around and backreferences run on the backtracking engine (__test__/patterns.test.mjs);
    // what that engine refuses (a reference to a later group) is refused at registration.
    register({ type: 'object', properties: { a: { type: 'string', pattern: '^(?!admin).*' }, b: { type: 'string', pattern: '(a)\\1' } } })
    assert.throws(() => register({ type: 'object', properties: { a: { type: 'string', pattern: '\\k<n>(?<n>a)' } } }), /the backtracking regex engine refuses it/)
  })
})

// What `pattern` means is ECMA-262's `new RegExp(pattern, 'u')`: each row's expected
// verdict is computed here by JS itself.
const PATTERN_ROWS = [
  ['^.{0,3}$', ['a\r', 'a\n', 'a\u2028', 'a\u2029', 'abc', 'a\u0085', 'ab\u000b', '😀😀😀']],
  ['^.*$', ['x\ry', 'x\ny', 'plain', 'x\u2028']],
  ['^a.c$', ['abc', 'a\rc', 'a.c', 'a\u2029c']],
  ['^[.]$', ['.', 'x']],
  ['^\\.$', ['.', 'x']],
  ['^[^a]$', ['\n', '\r', 'b']],
  ['^(.)\\s?$', ['\r', '\t', 'x ']],
  ['\\bab', ['éab', 'ab', 'xab', '_ab', ' ab', '1ab', 'ßab']],
  ['ab\\b', ['abé', 'ab', 'abc', 'ab-']],
  ['\\Bab', ['éab', 'xab', 'ab', ' ab']],
  ['^\\w+\\b', ['é', 'aé', 'a b']],
  ['^[\\b]$', ['\b', 'b']],
  ['^[\\w.]+$', ['a.b', 'a\rb', 'é']],
  ['\\\\.', ['\\\r', '\\x']],
  ['^(?:a|.)$', ['\r', 'b']],
  ['^\\p{L}.$', ['é\r', 'éx']],
  ['^[^]*$', ['a\nb\r', '']],
  ['^a[]?$', ['a', 'ab']],
  ['^\\0$', ['\0', '0']],
  ['^[\\0-\\x1f]$', ['\u0001', ' ']],
]

/** A tool whose argument `p` must match `pattern`, and whose keys must match it too. */
function patternTool(pattern) {
  const registry = new ToolRegistry()
  registry.register({
    name: 'p',
    description: 'Takes a string matching a pattern',
    inputSchema: {
      type: 'object',
      properties: { p: { type: 'string', pattern }, o: { type: 'object', patternProperties: { [pattern]: true }, additionalProperties: false } },
    },
    handler: () => 'ran',
  })
  return registry
}

describe('fuzz finding 2 and 3: pattern follows ECMA-262 (u flag) for `.`, \\b and \\B', () => {
  for (const [pattern, inputs] of PATTERN_ROWS) {
    test(`${JSON.stringify(pattern)} agrees with new RegExp(pattern, 'u')`, () => {
      const registry = patternTool(pattern)
      const re = new RegExp(pattern, 'u')
      for (const input of inputs) {
        const expected = re.test(input)
        assert.equal(registry.validate('p', { p: input }).valid, expected, `pattern ${JSON.stringify(pattern)} on ${JSON.stringify(input)}`)
        assert.equal(registry.validate('p', { o: { [input]: 1 } }).valid, expected, `patternProperties ${JSON.stringify(pattern)} on key ${JSON.stringify(input)}`)
      }
    })
  }

  test('a failure quotes the pattern as the schema has it', () => {
    const registry = patternTool('^a.\\bz$')
    const { valid, errors } = registry.validate('p', { p: 'a\rz', o: { 'a\rz': 1 } })
    assert.equal(valid, false)
    const pattern = errors.find((e) => e.keyword === 'pattern')
    assert.equal(pattern.schemaPath, '/properties/p/pattern')
    assert.match(pattern.message, /does not match "\^a\.\\bz\$"/)
    assert.ok(errors.every((e) => !e.message.includes('(?-u') && !e.schemaPath.includes('(?-u')), JSON.stringify(errors))
  })
})

/** A tool `n` whose schema bounds the number `n`, and the values its handler got. */
function boundTool(bound) {
  const seen = []
  const registry = new ToolRegistry()
  registry.register({
    name: 'n',
    description: 'Takes a bounded number',
    inputSchema: { type: 'object', properties: { n: { type: 'number', ...bound }, pad: { type: 'string' } }, required: ['n'] },
    handler: (args) => {
      seen.push(args.n)
      return 'ran'
    },
  })
  return { registry, manager: new ToolExecutionManager(registry, { retry: { maxAttempts: 1 } }), seen }
}

// Integers past 2**53 and long decimals, as a model may write them: JS reads each as the
// nearest double, and that double is what the handler gets and what must be validated.
const NUMBER_TEXTS = [
  '9007199254740993', '9007199254740992', '9007199254740995', '9007199254740993.0', '9.007199254740993e15',
  '90071992547409930e-1', '18446744073709551617', '123456789012345678901234567890', '-9007199254740993',
  '-9223372036854775809', '0.1', '2.2250738585072011e-308', '9007199254740992.9999999999',
]
const BOUNDS = [
  { exclusiveMinimum: 2 ** 53 },
  { maximum: 2 ** 53 },
  { minimum: 2 ** 53 + 2 },
  { exclusiveMaximum: -(2 ** 53) },
  { minimum: -(2 ** 53) },
  { multipleOf: 2 },
  { const: 2 ** 53 },
]

/** Whether `n` meets `bound`, as the handler sees it. */
function meets(n, bound) {
  const [[k, b]] = Object.entries(bound)
  switch (k) {
    case 'exclusiveMinimum': return n > b
    case 'minimum': return n >= b
    case 'maximum': return n <= b
    case 'exclusiveMaximum': return n < b
    case 'multipleOf': return Number.isInteger(n / b)
    case 'const': return n === b
  }
}

describe('fuzz finding 1: a number is validated as the handler gets it (integers past 2**53 and long decimals)', () => {
  const texts = (number) => ({ short: `{"n":${number}}`, large: `{"pad":"${'x'.repeat(70_000)}","n":${number}}` })
  for (const bound of BOUNDS) {
    test(`execute and validate with ${JSON.stringify(bound)}: the verdict is the one JS's own number gets`, async () => {
      const { registry, manager, seen } = boundTool(bound)
      for (const number of NUMBER_TEXTS) {
        for (const [size, text] of Object.entries(texts(number))) {
          const n = JSON.parse(text).n
          const expected = meets(n, bound)
          const label = `${number} (${size} text, JS reads ${n}): expected ${expected ? 'valid' : 'invalid'}`
          assert.equal(registry.validate('n', text).valid, expected, label)
          seen.length = 0
          const r = await manager.execute('n', text)
          assert.equal(r.success, expected, `${label}: ${JSON.stringify(r.error?.validationErrors)}`)
          assert.deepEqual(seen, expected ? [n] : [], label)
        }
      }
    })
  }

  test('the security case: exclusiveMinimum 2**53 refuses 9007199254740993, which JS reads as 2**53', async () => {
    const { manager, seen } = boundTool({ exclusiveMinimum: 9007199254740992 })
    const r = await manager.execute('n', '{"n":9007199254740993}')
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.equal(seen.length, 0)
  })

  for (const provider of ['openai', 'openai-responses', 'ag-ui']) {
    test(`executeToolCalls, ${provider}: argument text with 9007199254740993 is validated as 2**53`, async () => {
      const { manager, seen } = boundTool({ exclusiveMinimum: 2 ** 53 })
      const r1 = await manager.executeToolCalls(response(provider, 'n', null, '{"n":9007199254740993}'), { provider })
      assert.equal(r1.results[0].success, false, 'exclusiveMinimum 2**53 refuses what JS reads as 2**53')
      assert.equal(seen.length, 0)
      const other = boundTool({ maximum: 2 ** 53 })
      const r2 = await other.manager.executeToolCalls(response(provider, 'n', null, '{"n":9007199254740993}'), { provider })
      assert.equal(r2.results[0].success, true, JSON.stringify(r2.results[0].error))
      assert.deepEqual(other.seen, [2 ** 53])
    })
  }
})

describe('fuzz finding 4: a call over the limit made of many small values is refused fast', () => {
  const many = { a: new Array(4_000_000).fill(null) }
  const manyText = JSON.stringify(many)
  for (const provider of PROVIDERS) {
    test(`executeToolCalls, ${provider}: a 20 MB call of 4M nulls gets its reply in well under 2 s and the call beside it runs`, async () => {
      const { manager, seen } = anyTool()
      const started = performance.now()
      const { messages, results, calls } = await manager.executeToolCalls(response(provider, 't', many, manyText), { provider })
      const ms = performance.now() - started
      assert.equal(results[0].success, false)
      assert.equal(results[0].error.code, 'INVALID_ARGUMENTS')
      assert.match(results[0].error.message, /16777216-byte argument limit/)
      assert.equal(calls[0].arguments, null, 'the arguments of a call over the limit are not copied out')
      if (provider !== 'mcp') {
        assert.equal(results[1].success, true, JSON.stringify(results[1].error))
        assert.equal(seen.length, 1)
        assert.deepEqual(calls[1].arguments, {})
      }
      const text = replyText(messages)
      assert.ok(text.length < 20_000, `the reply to the model stays small (${text.length} characters)`)
      assert.match(text, /argument limit/)
      assert.ok(ms < 1500, `took ${ms.toFixed(0)} ms`)
    })
  }
})
