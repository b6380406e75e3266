// ToolRegistry (issue 2): registration, lookup, validation, change events, refusals,
// and inputs that must never crash the process.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

const objectSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

function weatherTool(overrides = {}) {
  return {
    name: 'get_weather',
    description: 'Current weather for a city',
    inputSchema: objectSchema,
    handler: async () => ({ tempC: 21 }),
    metadata: { category: 'weather', tags: ['read-only'], idempotent: true },
    ...overrides,
  }
}

function simpleTool(name, extra = {}) {
  return { name, description: `the ${name} tool`, inputSchema: { type: 'object' }, handler: () => name, ...extra }
}

/** Snapshot of everything observable about a registry's contents. */
function snapshot(registry) {
  return { names: registry.names, all: registry.all, decls: registry.names.map((n) => registry.get(n)) }
}

describe('registration and lookup', () => {
  test('register returns the declaration; get returns declaration + metadata without the handler', () => {
    const registry = new ToolRegistry()
    const decl = registry.register(weatherTool())
    assert.equal(decl.name, 'get_weather')
    const got = registry.get('get_weather')
    assert.equal(got.name, 'get_weather')
    assert.equal(got.description, 'Current weather for a city')
    assert.deepEqual(got.inputSchema, objectSchema)
    assert.deepEqual(got.metadata, { category: 'weather', tags: ['read-only'], idempotent: true })
    assert.equal('handler' in got, false, 'get() must not expose the handler')
    assert.equal(registry.get('absent'), undefined)
  })

  test('has, names and all follow registration order', () => {
    const registry = new ToolRegistry()
    assert.deepEqual(registry.names, [])
    assert.deepEqual(registry.all, [])
    registry.register(simpleTool('b_tool'))
    registry.register(simpleTool('a_tool'))
    registry.register(simpleTool('c-tool'))
    assert.equal(registry.has('a_tool'), true)
    assert.equal(registry.has('zzz'), false)
    assert.deepEqual(registry.names, ['b_tool', 'a_tool', 'c-tool'])
    assert.deepEqual(registry.all.map((d) => d.name), ['b_tool', 'a_tool', 'c-tool'])
    assert.ok(registry.all.every((d) => !('handler' in d)))
  })

  test('unregister returns true once, then false; clear removes everything', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('one'))
    registry.register(simpleTool('two'))
    assert.equal(registry.unregister('one'), true)
    assert.equal(registry.unregister('one'), false)
    assert.equal(registry.has('one'), false)
    assert.equal(registry.get('one'), undefined)
    assert.deepEqual(registry.names, ['two'])
    registry.clear()
    assert.deepEqual(registry.names, [])
    assert.equal(registry.has('two'), false)
    // The name is free again after unregister/clear.
    registry.register(simpleTool('one'))
    assert.deepEqual(registry.names, ['one'])
  })

  test('getByCategory and getByTag', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('w1', { metadata: { category: 'weather', tags: ['read-only', 'fast'] } }))
    registry.register(simpleTool('w2', { metadata: { category: 'weather', tags: ['slow'] } }))
    registry.register(simpleTool('m1', { metadata: { category: 'math', tags: ['fast'] } }))
    registry.register(simpleTool('plain'))
    assert.deepEqual(registry.getByCategory('weather').map((d) => d.name), ['w1', 'w2'])
    assert.deepEqual(registry.getByCategory('math').map((d) => d.name), ['m1'])
    assert.deepEqual(registry.getByCategory('none'), [])
    assert.deepEqual(registry.getByTag('fast').map((d) => d.name), ['w1', 'm1'])
    assert.deepEqual(registry.getByTag('slow').map((d) => d.name), ['w2'])
    assert.deepEqual(registry.getByTag('nope'), [])
  })
})

describe('validate', () => {
  const registry = new ToolRegistry()
  registry.register({
    name: 'multi',
    description: 'several constraints',
    inputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer', minimum: 1 },
        units: { enum: ['c', 'f'] },
      },
      required: ['city', 'days'],
      additionalProperties: false,
    },
    handler: () => null,
  })

  test('valid arguments (object and JSON text)', () => {
    assert.deepEqual(registry.validate('multi', { city: 'Paris', days: 2 }), { valid: true, errors: [] })
    assert.deepEqual(registry.validate('multi', '{"city":"Paris","days":2,"units":"c"}'), { valid: true, errors: [] })
  })

  const expected = [
    { path: '/city', schemaPath: '/properties/city/type', keyword: 'type' },
    { path: '/days', schemaPath: '/properties/days/minimum', keyword: 'minimum' },
    { path: '/units', schemaPath: '/properties/units/enum', keyword: 'enum' },
    { path: '', schemaPath: '/additionalProperties', keyword: 'additionalProperties' },
  ]
  const bad = { city: 7, days: 0, units: 'k', extra: true }

  for (const [label, args] of [['an object', bad], ['JSON text', JSON.stringify(bad)]]) {
    test(`returns every failure with path, schemaPath, keyword and message (${label})`, () => {
      const result = registry.validate('multi', args)
      assert.equal(result.valid, false)
      assert.equal(result.errors.length, expected.length, JSON.stringify(result.errors))
      for (const want of expected) {
        const got = result.errors.find((e) => e.keyword === want.keyword)
        assert.ok(got, `missing ${want.keyword} error in ${JSON.stringify(result.errors)}`)
        assert.equal(got.path, want.path)
        assert.equal(got.schemaPath, want.schemaPath)
        assert.equal(typeof got.message, 'string')
        assert.ok(got.message.length > 0)
      }
    })
  }

  test('required failure points at the parent object', () => {
    const result = registry.validate('multi', '{}')
    assert.equal(result.valid, false)
    const required = result.errors.filter((e) => e.keyword === 'required')
    assert.ok(required.length >= 1)
    assert.ok(required.every((e) => e.path === '' && e.schemaPath === '/required'))
    assert.match(required.map((e) => e.message).join(' '), /city/)
  })

  test('messages are readable', () => {
    const [err] = registry.validate('multi', { city: 7, days: 1 }).errors
    assert.match(err.message, /7/)
    assert.match(err.message, /string/)
  })

  test('unknown tool throws TOOL_NOT_FOUND naming the tool', () => {
    assert.throws(() => registry.validate('missing_tool', {}), (e) => {
      assert.ok(e instanceof Error)
      assert.equal(e.code, 'TOOL_NOT_FOUND')
      assert.match(e.message, /missing_tool/)
      return true
    })
  })
})

describe('change events', () => {
  test('addEventListener receives { detail } for registered, unregistered and cleared', () => {
    const registry = new ToolRegistry()
    const seen = []
    const listener = (e) => {
      assert.equal(e.type, 'tool-registry-change')
      seen.push(e.detail)
    }
    registry.addEventListener('tool-registry-change', listener)
    registry.register(simpleTool('a'))
    registry.register(simpleTool('b'))
    registry.unregister('a')
    registry.unregister('a') // nothing removed: no event expected
    registry.clear()
    assert.deepEqual(seen[0], { action: 'registered', toolName: 'a', toolNames: ['a'] })
    assert.deepEqual(seen[1], { action: 'registered', toolName: 'b', toolNames: ['a', 'b'] })
    assert.deepEqual(seen[2], { action: 'unregistered', toolName: 'a', toolNames: ['b'] })
    assert.equal(seen[3].action, 'cleared')
    assert.deepEqual(seen[3].toolNames, [])
    assert.equal(seen.length, 4)

    // As the DOM specifies, removeEventListener returns nothing.
    assert.equal(registry.removeEventListener('tool-registry-change', listener), undefined)
    registry.register(simpleTool('c'))
    assert.equal(seen.length, 4, 'a removed listener gets no more events')
  })

  test('on() passes the detail alone and returns a working unsubscribe function', () => {
    const registry = new ToolRegistry()
    const seen = []
    const off = registry.on('tool-registry-change', (detail) => seen.push(detail))
    assert.equal(typeof off, 'function')
    registry.register(simpleTool('x'))
    assert.deepEqual(seen, [{ action: 'registered', toolName: 'x', toolNames: ['x'] }])
    off()
    registry.register(simpleTool('y'))
    registry.unregister('x')
    assert.equal(seen.length, 1)
  })

  test('a refused registration emits no event', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('a'))
    const seen = []
    registry.on('tool-registry-change', (d) => seen.push(d))
    assert.throws(() => registry.register(simpleTool('a')))
    assert.throws(() => registry.register(simpleTool('bad name')))
    assert.deepEqual(seen, [])
  })
})

describe('refusals: code, message naming tool and problem, registry unchanged', () => {
  const cases = [
    { label: 'name outside the pattern', code: 'INVALID_TOOL_NAME', def: simpleTool('bad name!'), message: /bad name!/ },
    { label: 'name longer than 64 characters', code: 'INVALID_TOOL_NAME', def: simpleTool('a'.repeat(65)), message: /a{65}/ },
    { label: 'empty name', code: 'INVALID_TOOL_NAME', def: simpleTool(''), message: /name/ },
    { label: 'non-string name', code: 'INVALID_TOOL_NAME', def: simpleTool(42), message: /name/ },
    { label: 'duplicate name', code: 'DUPLICATE_TOOL', def: simpleTool('existing'), message: /existing.*already registered/ },
    {
      label: 'missing handler', code: 'INVALID_DEFINITION',
      def: { name: 'no_handler', description: 'd', inputSchema: { type: 'object' } }, message: /no_handler.*handler/,
    },
    {
      label: 'non-function handler', code: 'INVALID_DEFINITION',
      def: { name: 'str_handler', description: 'd', inputSchema: { type: 'object' }, handler: 'nope' }, message: /str_handler.*handler/,
    },
    {
      label: 'missing description', code: 'INVALID_DEFINITION',
      def: { name: 'no_desc', inputSchema: { type: 'object' }, handler() {} }, message: /no_desc.*description/,
    },
    {
      label: 'schema invalid against the meta-schema', code: 'INVALID_SCHEMA', schemaPath: '/properties/a/type',
      def: simpleTool('bad_type', { inputSchema: { type: 'object', properties: { a: { type: 'strang' } } } }),
      message: /bad_type.*\/properties\/a\/type/,
    },
    {
      label: 'minimum that is not a number', code: 'INVALID_SCHEMA', schemaPath: '/properties/a/minimum',
      def: simpleTool('bad_min', { inputSchema: { type: 'object', properties: { a: { minimum: 'x' } } } }),
      message: /bad_min/,
    },
    {
      label: 'root not an object type', code: 'INVALID_SCHEMA', schemaPath: '/type',
      def: simpleTool('string_root', { inputSchema: { type: 'string' } }), message: /string_root.*object/,
    },
    {
      label: 'root without a type', code: 'INVALID_SCHEMA', schemaPath: '/type',
      def: simpleTool('untyped_root', { inputSchema: { properties: {} } }), message: /untyped_root.*object/,
    },
    {
      label: 'external $ref over http', code: 'INVALID_SCHEMA', schemaPath: '/properties/a/$ref',
      def: simpleTool('ref_http', { inputSchema: { type: 'object', properties: { a: { $ref: 'http://example.com/s.json' } } } }),
      message: /ref_http.*http:\/\/example\.com\/s\.json/,
    },
    {
      label: 'external $ref over https', code: 'INVALID_SCHEMA', schemaPath: '/properties/a/$ref',
      def: simpleTool('ref_https', { inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/s.json#/x' } } } }),
      message: /ref_https.*https:\/\/example\.com/,
    },
    {
      label: 'external $ref to a file', code: 'INVALID_SCHEMA', schemaPath: '/properties/a/$ref',
      def: simpleTool('ref_file', { inputSchema: { type: 'object', properties: { a: { $ref: 'file:///etc/passwd' } } } }),
      message: /ref_file.*file:\/\/\/etc\/passwd/,
    },
    // Metadata no manager could run with (these used to fail every execute() instead).
    {
      label: 'metadata.timeoutMs of 0', code: 'INVALID_DEFINITION',
      def: simpleTool('zero_timeout', { metadata: { timeoutMs: 0 } }), message: /zero_timeout.*metadata\.timeoutMs/,
    },
    {
      label: 'metadata.retry.maxAttempts of 0', code: 'INVALID_DEFINITION',
      def: simpleTool('no_attempts', { metadata: { retry: { maxAttempts: 0 } } }), message: /no_attempts.*metadata\.retry\.maxAttempts/,
    },
    {
      label: 'an unknown metadata.retry.jitter', code: 'INVALID_DEFINITION',
      def: simpleTool('wobbly', { metadata: { retry: { jitter: 'wobbly' } } }), message: /wobbly.*metadata\.retry\.jitter/,
    },
    {
      label: 'metadata.retry.baseDelay above its own maxDelay', code: 'INVALID_DEFINITION',
      def: simpleTool('inverted', { metadata: { retry: { baseDelay: 50, maxDelay: 10 } } }), message: /inverted.*baseDelay/,
    },
    {
      label: 'draft-04 $schema', code: 'INVALID_SCHEMA', schemaPath: '/$schema',
      def: simpleTool('draft4', { inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } }),
      message: /draft4.*draft-04/,
    },
  ]

  for (const c of cases) {
    test(`${c.code}: ${c.label}`, () => {
      const registry = new ToolRegistry()
      registry.register(simpleTool('existing', { metadata: { category: 'keep', tags: ['t'] } }))
      const before = snapshot(registry)
      assert.throws(() => registry.register(c.def), (e) => {
        assert.ok(e instanceof Error, 'refusals are Error instances')
        assert.equal(e.code, c.code, e.message)
        assert.match(e.message, c.message)
        if (c.schemaPath !== undefined) assert.equal(e.schemaPath, c.schemaPath)
        return true
      })
      assert.deepEqual(snapshot(registry), before, 'a refusal changes nothing')
      if (typeof c.def.name === 'string' && c.def.name !== 'existing') assert.equal(registry.has(c.def.name), false)
      // Validation through the surviving tool still works.
      assert.equal(registry.validate('existing', {}).valid, true)
    })
  }

  test('metadata.retry valid on its own is accepted; a clash with a manager\'s settings names the metadata', async () => {
    const registry = new ToolRegistry()
    // baseDelay above the default maxDelay is fine for a manager with a larger maxDelay.
    registry.register(simpleTool('slow_retry', { metadata: { retry: { baseDelay: 60_000 } } }))
    const roomy = new ToolExecutionManager(registry, { retry: { maxDelay: 120_000 } })
    assert.equal((await roomy.execute('slow_retry', {})).result, 'slow_retry')
    const tight = new ToolExecutionManager(registry, { retry: { maxDelay: 1_000 } })
    const r = await tight.execute('slow_retry', {})
    assert.equal(r.error.code, 'INVALID_CONFIG')
    assert.match(r.error.message, /tool 'slow_retry' metadata with this manager's retry settings: retry\.baseDelay/)
  })

  test('a name of exactly 64 characters and all allowed characters is accepted', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('a'.repeat(64)))
    registry.register(simpleTool('Az09_-'))
    assert.deepEqual(registry.names, ['a'.repeat(64), 'Az09_-'])
  })

  test('a local $ref into $defs is accepted and validated', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('local_ref', {
      inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/pos' } }, $defs: { pos: { type: 'integer', minimum: 1 } } },
    }))
    assert.equal(registry.validate('local_ref', { a: 3 }).valid, true)
    const bad = registry.validate('local_ref', { a: 0 })
    assert.equal(bad.valid, false)
    assert.equal(bad.errors[0].path, '/a')
    assert.equal(bad.errors[0].keyword, 'minimum')
  })
})

describe('pattern keyword', () => {
  test('a catastrophic pattern against a 50k-character string returns', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('redos', { inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } }))
    const result = registry.validate('redos', { s: 'a'.repeat(50_000) + '!' })
    assert.equal(result.valid, false)
    assert.equal(result.errors[0].keyword, 'pattern')
    assert.equal(result.errors[0].path, '/s')
    assert.equal(registry.validate('redos', { s: 'aaaa' }).valid, true)
  })
})

describe('inputs that must not crash', () => {
  const registry = new ToolRegistry()
  registry.register(simpleTool('any'))

  function deepObject(depth) {
    const root = {}
    let cur = root
    for (let i = 0; i < depth; i++) cur = cur.a = {}
    return root
  }
  const cyclic = { name: 'loop' }
  cyclic.self = cyclic

  const cases = [
    ['a cyclic object', cyclic, /cycl/i],
    ['an object nested 200 levels deep', deepObject(200), /128|deep/i],
    ['JSON text nested 200 levels deep', '{"a":'.repeat(200) + '1' + '}'.repeat(200), /128|deep/i],
    ['JSON text larger than 16 MiB', JSON.stringify({ s: 'x'.repeat(16 * 1024 * 1024 + 16) }), /limit|large|exceed/i],
    ['an object larger than 16 MiB as JSON', { parts: Array.from({ length: 17 }, () => 'x'.repeat(1024 * 1024)) }, /16777216-byte argument limit/],
    ['malformed JSON text', '{"city": ', /malformed|JSON/],
    ['a function value', { f() {} }, /function/],
    ['a symbol value', { s: Symbol('s') }, /symbol/i],
    ['a BigInt value', { n: 10n }, /BigInt/],
    ['a NaN value', { n: NaN }, /NaN/],
    ['an Infinity value', { n: Infinity }, /inf/i],
    ['a -Infinity value', { n: -Infinity }, /inf/i],
  ]

  for (const [label, args, message] of cases) {
    test(`${label} gives valid:false with a clear json error`, () => {
      const result = registry.validate('any', args)
      assert.equal(result.valid, false)
      assert.equal(result.errors.length, 1)
      const [err] = result.errors
      assert.equal(err.keyword, 'json')
      assert.match(err.message, message)
      assert.match(err.message, /any/, 'the message names the tool')
    })
  }

  test('a definition that cannot be read (a throwing getter, a revoked Proxy) is refused INVALID_DEFINITION, naming the tool, its error as cause', () => {
    const boom = new Error('boom')
    const revoked = Proxy.revocable({ name: 'lookup' }, {})
    revoked.revoke()
    const cases = [
      ['a getter on description', { name: 'lookup', get description() { throw boom }, handler: () => 1 }, "tool 'lookup': the definition could not be read: boom", boom],
      ['a getter on metadata', { name: 'lookup', description: 'd', handler: () => 1, get metadata() { throw boom } }, "tool 'lookup': the definition could not be read: boom", boom],
      ['a getter on handler', { name: 'lookup', description: 'd', get handler() { throw boom } }, "tool 'lookup': the definition could not be read: boom", boom],
      ['a getter on name', { get name() { throw boom }, description: 'd', handler: () => 1 }, 'register(): the definition could not be read: boom', boom],
      ['a revoked Proxy', revoked.proxy, /^register\(\): the definition could not be read: .*revoked/, TypeError],
    ]
    const fresh = new ToolRegistry()
    for (const [label, def, message, cause] of cases) {
      assert.throws(() => fresh.register(def), (e) => {
        assert.equal(e.name, 'ToolhostError', label)
        assert.equal(e.code, 'INVALID_DEFINITION', label)
        if (typeof message === 'string') assert.equal(e.message, message, label)
        else assert.match(e.message, message, label)
        if (cause === boom) assert.equal(e.cause, boom, label)
        else assert.ok(e.cause instanceof cause, label)
        return true
      })
    }
    assert.deepEqual(fresh.names, [])
    // Each property is read once: a getter that answers only once still registers.
    let reads = 0
    fresh.register({ name: 'once', get description() { if (reads++ > 0) throw boom; return 'd' }, handler: () => 1 })
    assert.deepEqual(fresh.names, ['once'])
  })

  test('the process keeps working after all of them', () => {
    assert.equal(registry.validate('any', { ok: true }).valid, true)
    assert.equal(registry.validate('any', '{"ok":true}').valid, true)
  })
})

function throwingElement() {
  const items = [1, 2, 3]
  Object.defineProperty(items, 1, { get() { throw new Error('element getter threw') } })
  return items
}

describe('argument objects are read as JSON.stringify reads them', () => {
  class Point {
    constructor() { this.x = 1; this.y = 2 }
    toJSON() { return this } // returns itself: its own keys are read
  }
  const revocable = Proxy.revocable({ a: 1 }, {})
  revocable.revoke()
  const withArrayToJSON = [1, 2]
  withArrayToJSON.toJSON = () => 'the array'
  const nonEnumerable = { shown: 1 }
  Object.defineProperty(nonEnumerable, 'hidden', { value: 2, enumerable: false })
  const same = [
    ['a Date (toJSON)', { when: new Date(0) }],
    ['toJSON returning another value, given the property name', { inner: { toJSON: (key) => ({ key }) } }],
    ['toJSON on the prototype returning the object itself', { p: new Point() }],
    ['toJSON on an array', { list: withArrayToJSON }],
    ['inherited enumerable properties (skipped)', { o: Object.create({ inherited: 1 }, { own: { value: 2, enumerable: true } }) }],
    ['non-enumerable and symbol keys (skipped)', { o: nonEnumerable, [Symbol('s')]: 3 }],
    ['getters', { get lazy() { return 42 } }],
    ['integer-like keys', { b: 1, 2: 'two', a: [{ 1: 'one' }] }],
    ['a Proxy', { p: new Proxy({ a: 1, b: [true, null] }, {}) }],
    ['undefined properties (skipped)', { a: undefined, b: 1 }],
  ]
  for (const [label, args] of same) {
    test(`${label}`, () => {
      const registry = new ToolRegistry()
      registry.register({ ...simpleTool('exact'), inputSchema: { type: 'object', const: JSON.parse(JSON.stringify(args)) } })
      const result = registry.validate('exact', args)
      assert.deepEqual(result.errors, [])
      assert.equal(result.valid, true)
    })
  }

  const refused = [
    ['a getter that throws', { get boom() { throw new Error('no') } }, /property "boom" could not be read/],
    ['a toJSON that throws', { t: { toJSON() { throw new Error('no') } } }, /toJSON\(\) threw at \/t/],
    ['a revoked Proxy', { p: revocable.proxy }, /its properties could not be read at \/p/],
    // The failed read used to be ignored: the element and those after it read as null,
    // and the exception stayed pending until the next call into JS swallowed it.
    ['an array element whose getter throws', { items: throwingElement() }, /the element could not be read at \/items\/1/],
  ]
  for (const [label, args, message] of refused) {
    test(`${label} is refused with a json error naming where`, () => {
      const registry = new ToolRegistry()
      registry.register(simpleTool('any'))
      const result = registry.validate('any', args)
      assert.equal(result.valid, false)
      assert.equal(result.errors[0].keyword, 'json')
      assert.match(result.errors[0].message, message)
    })
  }
})

describe('a name or id that is not a string is refused clearly by every method', () => {
  // napi's own conversion printed the value, so a cyclic object, a throwing toJSON or
  // a hostile Proxy failed with an unrelated error (or 'Create Error reference failed').
  const cyclic = {}
  cyclic.self = cyclic
  const bad = [
    ['a number', 42, 'a number'],
    ['undefined', undefined, 'undefined'],
    ['a cyclic object', cyclic, 'an object'],
    ['an object whose toJSON throws', { toJSON() { throw new TypeError('boom from toJSON') } }, 'an object'],
    ['a Proxy whose traps throw a string', new Proxy({}, { get() { throw 'trap' }, ownKeys() { throw 'trap' } }), 'an object'],
    ['a symbol', Symbol('s'), 'a symbol'],
  ]
  const registry = new ToolRegistry()
  registry.register(simpleTool('tool'))
  const session = registry.createSession()
  const manager = new ToolExecutionManager(registry)
  const calls = [
    ['registry.has', (v) => registry.has(v), 'has() takes the tool name'],
    ['registry.get', (v) => registry.get(v), 'get() takes the tool name'],
    ['registry.unregister', (v) => registry.unregister(v), 'unregister() takes the tool name'],
    ['registry.validate', (v) => registry.validate(v, {}), 'validate() takes the tool name'],
    ['registry.getByCategory', (v) => registry.getByCategory(v), 'getByCategory() takes the category'],
    ['registry.getByTag', (v) => registry.getByTag(v), 'getByTag() takes the tag'],
    ['registry.getSession', (v) => registry.getSession(v), 'getSession() takes the session id'],
    ['session.has', (v) => session.has(v), 'has() takes the tool name'],
    ['session.get', (v) => session.get(v), 'get() takes the tool name'],
    ['session.unregister', (v) => session.unregister(v), 'unregister() takes the tool name'],
    ['session.validate', (v) => session.validate(v, {}), 'validate() takes the tool name'],
    ['manager.cancel', (v) => manager.cancel(v), 'cancel() takes the execution id'],
    ['manager.getExecution', (v) => manager.getExecution(v), 'getExecution() takes the execution id'],
    ['manager.getExecutionsForToolCall', (v) => manager.getExecutionsForToolCall(v), 'getExecutionsForToolCall() takes the tool call id'],
    ['manager.stats', (v) => manager.stats(v), 'stats() takes the tool name'],
    // execute() reports a caller's mistake through its promise, never by throwing.
    ['manager.execute', (v) => manager.execute(v, {}), 'execute() takes the tool name', true],
  ]
  for (const [method, call, says, rejects] of calls) {
    test(method, async () => {
      for (const [label, value, got] of bad) {
        const check = rejects ? (f, m, l) => assert.rejects(f, m, l) : (f, m, l) => assert.throws(f, m, l)
        await check(() => call(value), (e) => {
          assert.ok(e instanceof TypeError, `${label}: ${e}`)
          assert.equal(e.code, 'INVALID_ARGUMENTS')
          assert.equal(e.message, `${says} as a string, got ${got}`)
          return true
        }, label)
      }
      assert.equal(registry.has('tool'), true, 'nothing was changed')
    })
  }
})

describe('drafts and format', () => {
  const formatSchema = (schemaUri) => ({
    ...(schemaUri ? { $schema: schemaUri } : {}),
    type: 'object',
    properties: { email: { type: 'string', format: 'email' }, day: { type: 'string', format: 'date' } },
  })
  const drafts = [
    ['2020-12 (default)', undefined],
    ['2020-12 (explicit)', 'https://json-schema.org/draft/2020-12/schema'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['draft-07', 'http://json-schema.org/draft-07/schema#'],
  ]
  for (const [label, uri] of drafts) {
    test(`${label} is accepted and format is asserted`, () => {
      const registry = new ToolRegistry()
      registry.register(simpleTool('fmt', { inputSchema: formatSchema(uri) }))
      assert.equal(registry.validate('fmt', { email: 'a@example.com', day: '2024-02-29' }).valid, true)
      const result = registry.validate('fmt', { email: 'not an email', day: '2023-02-30' })
      assert.equal(result.valid, false)
      assert.deepEqual(result.errors.map((e) => [e.path, e.keyword]).sort(), [['/day', 'format'], ['/email', 'format']])
    })
  }

  test('draft-07 semantics apply when selected (items array = tuple)', () => {
    const registry = new ToolRegistry()
    registry.register(simpleTool('d7', {
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { t: { items: [{ type: 'string' }], additionalItems: false } },
      },
    }))
    assert.equal(registry.validate('d7', { t: ['x'] }).valid, true)
    assert.equal(registry.validate('d7', { t: ['x', 1] }).valid, false)
    assert.equal(registry.validate('d7', { t: [1] }).valid, false)
  })

  test('draft-04 is refused', () => {
    const registry = new ToolRegistry()
    assert.throws(
      () => registry.register(simpleTool('d4', { inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } })),
      { code: 'INVALID_SCHEMA' },
    )
    assert.equal(registry.has('d4'), false)
  })
})

test('a pattern no engine runs is refused at registration, not at call time', () => {
  const registry = new ToolRegistry()
  assert.throws(
    () => registry.register({ name: 'x', description: 'd', handler() {}, inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '\\k<n>(?<n>a)' } } } }),
    (e) => e.code === 'INVALID_SCHEMA' && e.schemaPath === '/properties/s/pattern' && /'x'/.test(e.message),
  )
  assert.equal(registry.has('x'), false)
})

describe('maxSchemaCost: a bound on the validation cost of the schemas registered here', () => {
  // Each level's anyOf applies the next level twice: 2^levels steps for one value.
  const doubling = (levels) => {
    const $defs = { [`l${levels}`]: { type: 'string' } }
    for (let i = 0; i < levels; i++) $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] }
    return { type: 'object', properties: { x: { $ref: '#/$defs/l0' } }, required: ['x'], $defs }
  }
  const tool = (name, schemas) => ({ name, description: 'd', handler: () => 'ok', ...schemas })

  test('a schema over the bound is refused, naming the tool, the schema and the bound; one under it registers and runs', async () => {
    const registry = new ToolRegistry({ maxSchemaCost: 1000 })
    assert.throws(() => registry.register(tool('costly', { inputSchema: doubling(12) })), {
      code: 'INVALID_SCHEMA',
      message: "tool 'costly': inputSchema could take more than 1000 validation steps for one value, over this registry's maxSchemaCost: its applicators (anyOf, allOf, $ref...) multiply",
    })
    assert.throws(() => registry.register(tool('costly_out', { inputSchema: { type: 'object' }, outputSchema: doubling(12) })), { code: 'INVALID_SCHEMA', message: /^tool 'costly_out': outputSchema could take more than 1000/ })
    assert.equal(registry.has('costly') || registry.has('costly_out'), false)
    registry.register(tool('cheap', { inputSchema: doubling(5) }))
    const r = await new ToolExecutionManager(registry).execute('cheap', { x: 'y' })
    assert.equal(r.result, 'ok')
  })

  test('the values of one call are bounded too: each element of an array runs its path again', async () => {
    // The cost is per path: 1,000 elements of an 11-level doubling schema (within the
    // mount's default bound) froze the JS thread for 11 s. One validation may take
    // 16 times the bound in all.
    const registry = new ToolRegistry({ maxSchemaCost: 1000 })
    const items = doubling(7)
    registry.register(tool('many', { inputSchema: { type: 'object', properties: { xs: { type: 'array', items: items.properties.x } }, $defs: items.$defs } }))
    const manager = new ToolExecutionManager(registry)
    const few = await manager.execute('many', { xs: ['a', 'b'] })
    assert.equal(few.result, 'ok')
    const started = performance.now()
    const many = await manager.execute('many', { xs: Array.from({ length: 1000 }, () => 1) })
    assert.equal(many.error.code, 'INVALID_ARGUMENTS')
    assert.match(many.error.message, /^invalid arguments for tool 'many': \/: more than \d+ values: each may take up to \d+ validation steps with this schema, and one validation may take 16000 in all; send fewer at once$/)
    assert.ok(performance.now() - started < 1000, 'refused before it is validated')
    // A registry without the bound validates whatever it is given, as before.
    const unbounded = new ToolRegistry()
    unbounded.register(tool('many', { inputSchema: { type: 'object', properties: { xs: { type: 'array', items: { type: 'integer' } } } } }))
    assert.equal((await new ToolExecutionManager(unbounded).execute('many', { xs: Array.from({ length: 100_000 }, () => 1) })).result, 'ok')
  })

  test('it holds in sessions too', () => {
    const registry = new ToolRegistry({ maxSchemaCost: 1000 })
    const session = registry.createSession()
    assert.throws(() => session.register(tool('costly', { inputSchema: doubling(12) })), { code: 'INVALID_SCHEMA', message: /over this registry's maxSchemaCost/ })
    assert.equal(session.has('costly'), false)
  })

  test('without it, or with Infinity, no bound applies', () => {
    new ToolRegistry().register(tool('deep', { inputSchema: doubling(19) }))
    new ToolRegistry({ maxSchemaCost: Infinity }).register(tool('deep', { inputSchema: doubling(19) }))
  })

  test('a mistyped or misspelt maxSchemaCost is refused', () => {
    // NaN and -Infinity were written as null by JSON, read as no bound at all.
    for (const bad of [0, -5, 1.5, '1000', true, NaN, -Infinity]) {
      assert.throws(() => new ToolRegistry({ maxSchemaCost: bad }), { code: 'INVALID_CONFIG', message: 'new ToolRegistry: maxSchemaCost must be a whole number >= 1' }, String(bad))
    }
    assert.throws(() => new ToolRegistry({ strictSchemas: NaN }), { code: 'INVALID_CONFIG', message: 'new ToolRegistry: strictSchemas must be true or false' })
    assert.throws(() => new ToolRegistry({ maxSchemaCosts: 1000 }), { code: 'INVALID_CONFIG', message: /unknown option `maxSchemaCosts` in registry options; did you mean `maxSchemaCost`\?/ })
  })
})
