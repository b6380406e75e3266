// Argument text of 64 KiB or more is parsed and validated in Rust on a worker thread,
// and the JS thread builds the handler's object from the worker's tape of it. These
// tests pin that this path behaves exactly like the small-argument path.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

/** SHA-256 of text, in hex, with the Web Crypto API both Node and browsers have. */
async function sha256(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('')
}

const schema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string', pattern: '^SKU-[0-9]+$' }, qty: { type: 'integer', minimum: 1 } }, required: ['sku', 'qty'] } },
  },
  required: ['id', 'items'],
}

function order(n, badAt = -1) {
  const items = Array.from({ length: n }, (_, i) => ({ sku: `SKU-${i}`, qty: i === badAt ? 0 : 1 + (i % 5) }))
  return { id: '0b7e8a5c-1f0e-4c39-9a43-0a4f5c9c2d11', items }
}

function setup(options) {
  const registry = new ToolRegistry()
  const seen = []
  registry.register({ name: 'place', description: 'places an order', inputSchema: schema, handler: (args) => { seen.push(args); return { lines: args.items.length } } })
  return { registry, manager: new ToolExecutionManager(registry, options), seen }
}

test('large valid JSON text runs the handler with the parsed object and records the arguments', async () => {
  const { manager, seen } = setup()
  const args = order(4000)
  const text = JSON.stringify(args)
  assert.ok(text.length > 64 * 1024)
  const r = await manager.execute('place', text, { toolCallId: 'big-1' })
  assert.equal(r.success, true, JSON.stringify(r.error))
  assert.deepEqual(r.result, { lines: 4000 })
  assert.deepEqual(seen[0], args)
  assert.deepEqual(r.execution.args, args)
  assert.deepEqual(manager.getExecution(r.execution.id).args, args, 'kept as text, handed back as JSON')
  assert.deepEqual(manager.getExecutionsForToolCall('big-1')[0].args, args)
})

test('large invalid JSON text fails validation with every failure and never calls the handler', async () => {
  const { manager, seen } = setup()
  const r = await manager.execute('place', JSON.stringify(order(4000, 1234)))
  assert.equal(r.success, false)
  assert.equal(r.error.code, 'INVALID_ARGUMENTS')
  assert.deepEqual(r.error.validationErrors.map((e) => e.path), ['/items/1234/qty'])
  assert.equal(seen.length, 0)
})

test('large malformed JSON text and an unknown tool fail like small ones', async () => {
  const { manager } = setup()
  const text = JSON.stringify(order(4000))
  const malformed = await manager.execute('place', text.slice(0, -1))
  assert.equal(malformed.error.code, 'INVALID_ARGUMENTS')
  assert.match(malformed.error.message, /malformed JSON/)
  const unknown = await manager.execute('nope', text)
  assert.equal(unknown.error.code, 'TOOL_NOT_FOUND')
})

test('events, audit hash and cancellation apply to large arguments', async () => {
  const { manager } = setup()
  const args = order(3000)
  const seen = []
  for (const type of ['started', 'validating', 'executing', 'succeeded']) manager.on(`tool-execution-${type}`, () => seen.push(type))
  let hash
  manager.on('tool-invocation-recorded', (r) => { hash = r.inputHash })
  const r = await manager.execute('place', JSON.stringify(args))
  assert.equal(r.success, true)
  assert.deepEqual(seen, ['started', 'validating', 'executing', 'succeeded'])
  const canonical = (v) => Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}` : JSON.stringify(v)
  assert.equal(hash, await sha256(canonical(args)))

  const controller = new AbortController()
  const pending = manager.execute('place', JSON.stringify(args), { signal: controller.signal })
  controller.abort()
  const cancelled = await pending
  assert.equal(cancelled.error.code, 'CANCELLED')
})

test('large text outside ASCII is decoded exactly: Latin-1, other BMP, astral, lone surrogates', async () => {
  // V8 keeps 'café' as a one-byte string and the others as two-byte strings; the
  // worker gets UTF-16 code units either way and must decode them without loss.
  const registry = new ToolRegistry()
  const seen = []
  const note = { type: 'string', maxLength: 4 }
  registry.register({
    name: 'annotate', description: 'notes', handler: (args) => { seen.push(args); return { ok: true } },
    inputSchema: { type: 'object', properties: { note, pad: { type: 'string' } }, required: ['note', 'pad'] },
  })
  const manager = new ToolExecutionManager(registry)
  const pad = 'x'.repeat(70 * 1024)
  for (const value of ['café', '中文字符', 'a😀😀b', 'ÿé']) {
    const r = await manager.execute('annotate', JSON.stringify({ note: value, pad }))
    assert.equal(r.success, true, `${value}: ${JSON.stringify(r.error)}`)
    assert.equal(seen.at(-1).note, value)
    assert.equal(manager.getExecution(r.execution.id).args.note, value, 'the record is decoded from the same text')
  }
  // maxLength counts code points: five of them fail, in both the one- and two-byte forms.
  for (const value of ['cafés', '中文字符串', 'a😀😀bc']) {
    const r = await manager.execute('annotate', JSON.stringify({ note: value, pad }))
    assert.equal(r.error?.code, 'INVALID_ARGUMENTS', value)
    assert.deepEqual(r.error.validationErrors.map((e) => e.path), ['/note'])
  }
  // A raw lone surrogate (JSON.stringify would escape it) is validated as U+FFFD (one
  // code point either way) on both paths, small and large; the handler and the record
  // get what JSON.parse makes of the text, the surrogate itself.
  const lone = (padding) => `{"note":"a\uD800b","pad":"${padding}"}`
  const small = await manager.execute('annotate', lone(''))
  const large = await manager.execute('annotate', lone(pad))
  assert.equal(small.success && large.success, true)
  assert.equal(manager.getExecution(small.execution.id).args.note, 'a\uD800b')
  assert.equal(manager.getExecution(large.execution.id).args.note, 'a\uD800b')
  assert.equal(seen.at(-1).note, 'a\uD800b')
})

test('large text is parsed once on the JS thread: events and the handler share one object', async () => {
  const { manager, seen } = setup()
  const args = order(3000)
  const eventArgs = []
  manager.on('tool-execution-started', (e) => eventArgs.push(e.execution.args))
  manager.on('tool-execution-validating', (e) => eventArgs.push(e.args))
  const r = await manager.execute('place', JSON.stringify(args))
  assert.equal(r.success, true, JSON.stringify(r.error))
  assert.deepEqual(seen[0], args)
  assert.equal(eventArgs.length, 2)
  for (const a of eventArgs) assert.equal(a, seen[0], 'the same object, not a second parse')
  assert.equal(r.execution.args, seen[0])
})

test('logging large text previews it from the text, whitespace dropped, without parsing it again', async () => {
  const lines = []
  const { manager } = setup({ logging: true, logger: (level, message, fields) => lines.push({ message, fields }) })
  const args = order(3000)
  const r = await manager.execute('place', JSON.stringify(args, null, 2))
  assert.equal(r.success, true)
  const start = lines.find((l) => l.message.startsWith('[TOOL EXECUTION] Starting'))
  const compact = JSON.stringify(args)
  assert.equal(start.fields.args, `${compact.slice(0, 100)}…`)
  // With redaction the preview needs the structure, and hides what it should.
  const redacted = []
  const { manager: m2 } = setup({ logging: true, redact: ['sku'], logger: (level, message, fields) => redacted.push(fields) })
  await m2.execute('place', JSON.stringify(args))
  assert.match(redacted[0].args, /"sku":"\[REDACTED\]"/)
  assert.doesNotMatch(redacted[0].args, /SKU-0/)
})

test('the audit hash of large text is the same whether the worker or the JS thread computes it, redaction included', async () => {
  const canonical = (v) => Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}` : JSON.stringify(v)
  const sha = (v) => sha256(canonical(v))
  const args = order(3000)
  const redacted = { ...args, items: args.items.map((i) => ({ ...i, sku: '[REDACTED]' })) }
  const { manager } = setup({ redact: ['sku'] })
  const hashes = []
  // Listening before the call: the worker hashes while it parses.
  manager.on('tool-invocation-recorded', (r) => hashes.push(r.inputHash))
  await manager.execute('place', JSON.stringify(args))
  // A small call takes the JS-thread path; its hash must follow the same rules.
  await manager.execute('place', args)
  assert.deepEqual(hashes, [await sha(redacted), await sha(redacted)])
})

// While a worker parses large text, the execution has no record yet; it still counts
// as in flight, and cancelAll() reaches it (it used to run to success unnoticed).
test('inFlight and cancelAll() include executions whose large text is still being parsed', async () => {
  const { manager, seen } = setup()
  const pending = manager.execute('place', JSON.stringify(order(20000)))
  assert.equal(manager.inFlight, 1)
  assert.equal(manager.cancelAll(), 1)
  assert.equal(manager.cancelAll(), 0, 'counted once')
  const r = await pending
  assert.equal(r.error.code, 'CANCELLED')
  assert.equal(seen.length, 0, 'the handler never ran')
  assert.equal(manager.inFlight, 0)
})

test('blank text of 64K characters or more is read as {}, like shorter blank text', async () => {
  const registry = new ToolRegistry()
  const seen = []
  registry.register({ name: 'noargs', description: 'takes nothing', inputSchema: { type: 'object' }, handler: (args) => { seen.push(args); return 'ok' } })
  const manager = new ToolExecutionManager(registry)
  for (const text of [' '.repeat(10), ' '.repeat(65536), '\n\t '.repeat(30000)]) {
    const r = await manager.execute('noargs', text)
    assert.equal(r.success, true, `${text.length} blank characters: ${r.error?.message}`)
    assert.deepEqual(r.execution.args, {})
  }
  assert.deepEqual(seen, [{}, {}, {}])
})

test('session.destroy() while large text is being parsed ends the call cancelled, as for object arguments', async () => {
  const registry = new ToolRegistry()
  const manager = new ToolExecutionManager(registry)
  const events = []
  manager.on('tool-execution-cancelled', (d) => events.push(d.toolName))
  for (const args of [{ pad: 'x' }, JSON.stringify({ pad: 'x'.repeat(70000) })]) {
    const session = registry.createSession()
    session.register({ name: 'stool', description: 'never ends', inputSchema: { type: 'object' }, handler: () => new Promise(() => {}) })
    const pending = manager.execute('stool', args, { sessionId: session.id })
    session.destroy()
    const r = await pending
    assert.equal(r.error.code, 'CANCELLED', r.error.message)
    assert.equal(r.execution.status, 'cancelled')
  }
  assert.deepEqual(events, ['stool', 'stool'])
})

// For large valid text the worker also lists the values (a "tape"), and the JS thread
// builds the handler's object from it instead of running JSON.parse. It must build the
// same thing JSON.parse builds: same prototypes, own keys in the same order, same
// property attributes, same values (-0 included).
function assertSameAsParse(actual, expected, path = '$') {
  if (typeof expected !== 'object' || expected === null) {
    assert.ok(Object.is(actual, expected), `${path}: ${String(actual)} is not ${String(expected)}`)
    return
  }
  assert.equal(typeof actual, 'object', path)
  assert.equal(Array.isArray(actual), Array.isArray(expected), `${path}: array or not`)
  assert.equal(Object.getPrototypeOf(actual), Object.getPrototypeOf(expected), `${path}: prototype`)
  assert.deepEqual(Reflect.ownKeys(actual), Reflect.ownKeys(expected), `${path}: own keys`)
  for (const key of Reflect.ownKeys(expected)) {
    const a = Object.getOwnPropertyDescriptor(actual, key)
    const e = Object.getOwnPropertyDescriptor(expected, key)
    assert.deepEqual([a.writable, a.enumerable, a.configurable], [e.writable, e.enumerable, e.configurable], `${path}.${String(key)}: attributes`)
    assertSameAsParse(a.value, e.value, `${path}.${String(key)}`)
  }
}

/** A seeded generator of JSON text, written by hand so it can repeat keys and vary escapes and spacing. */
function jsonWriter(seed) {
  let state = seed
  const rand = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const space = () => pick(['', '', '', ' ', '\n  ', '\t', '\r\n'])
  const KEYS = ['id', 'name', 'qty', '', '__proto__', 'constructor', 'toString', '0', '10', '-1', '1.5', 'a"b', 'é', '😀', 'line\nbreak', 'k'.repeat(40)]
  const STRINGS = ['', 'x', 'short', 'exactly12chr', 'exactly13char', 'a longer string of text', 'naïve café', '日本語のテキスト', '😀 emoji 😀', '\u2028\u2029', 'tab\tquote"back\\slash/']
  const NUMBERS = ['0', '-0', '1', '-1', '42', '1.5', '-0.0', '3.141592653589793', '1e3', '1E+2', '2.5e-3', '1e300', '5e-324', '-1e-400', '12345678901234567890', '0.1', '9007199254740993']
  function string(s) {
    // Escape some characters, write others raw, as JSON allows either.
    let out = '"'
    for (const ch of s) {
      if (ch === '"' || ch === '\\') out += '\\' + ch
      else if (ch < ' ') out += pick(['\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0'), JSON.stringify(ch).slice(1, -1)])
      else if (rand() < 0.05) out += ch.split('').map((c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')).join('')
      else out += ch
    }
    return out + '"'
  }
  function value(depth) {
    const r = rand()
    if (depth > 6 || r < 0.45) {
      const s = rand()
      if (s < 0.4) return string(pick(STRINGS))
      if (s < 0.8) return pick(NUMBERS)
      return pick(['true', 'false', 'null'])
    }
    if (r < 0.65) return `[${space()}${Array.from({ length: Math.floor(rand() * 5) }, () => value(depth + 1)).join(`,${space()}`)}${space()}]`
    return object(depth, Array.from({ length: Math.floor(rand() * 6) }, () => pick(KEYS)))
  }
  function object(depth, keys) {
    return `{${space()}${keys.map((k) => `${string(k)}${space()}:${space()}${value(depth + 1)}`).join(`,${space()}`)}${space()}}`
  }
  // Many objects of a few key lists (built by compiled literals), and odd ones.
  function document(minLength) {
    const parts = []
    let length = 0
    const shapes = [['id', 'name', 'qty'], ['name', 'id'], ['__proto__', 'id'], ['id', 'id', 'name'], ['0', 'name', '10']]
    while (length < minLength) {
      const part = rand() < 0.7 ? object(1, pick(shapes)) : value(1)
      parts.push(part)
      length += part.length + 1
    }
    return `{"rows":[${parts.join(',')}],"odd":${object(0, KEYS)}}`
  }
  return { document }
}

test('the handler gets exactly what JSON.parse builds from large text: keys, order, prototypes, numbers, escapes', async () => {
  const registry = new ToolRegistry()
  const seen = []
  registry.register({ name: 'any', description: 'takes any object', inputSchema: { type: 'object' }, handler: (args) => { seen.push(args); return 'ok' } })
  const manager = new ToolExecutionManager(registry)
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const text = jsonWriter(seed).document(70 * 1024)
    const expected = JSON.parse(text)
    const r = await manager.execute('any', text)
    assert.equal(r.success, true, `seed ${seed}: ${JSON.stringify(r.error)}`)
    assertSameAsParse(seen.at(-1), expected)
  }
  // A raw lone surrogate in a value is kept as JSON.parse keeps it.
  const lone = `{"v":"a\ud800b","pad":"${'x'.repeat(70 * 1024)}"}`
  await manager.execute('any', lone)
  assertSameAsParse(seen.at(-1), JSON.parse(lone))
})

test('large text nested as deep as validation allows (127 levels) reaches the handler intact', async () => {
  const registry = new ToolRegistry()
  let seen
  registry.register({ name: 'any', description: 'takes any object', inputSchema: { type: 'object' }, handler: (args) => { seen = args; return 'ok' } })
  const manager = new ToolExecutionManager(registry)
  const text = `{"deep":${'['.repeat(126)}${']'.repeat(126)},"pad":"${'x'.repeat(70 * 1024)}"}`
  assert.equal((await manager.execute('any', text)).success, true)
  assertSameAsParse(seen, JSON.parse(text))
})

test('with code generation from strings disallowed, large text still reaches the handler intact', () => {
  const script = `
    import { ToolRegistry, ToolExecutionManager } from ${JSON.stringify(new URL('../js/node.mjs', import.meta.url).href)}
    const registry = new ToolRegistry()
    let seen
    registry.register({ name: 'any', description: 'd', inputSchema: { type: 'object' }, handler: (args) => { seen = args; return 'ok' } })
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: 'row ' + i, __proto__: null }))
    const text = JSON.stringify({ rows })
    const r = await new ToolExecutionManager(registry).execute('any', text)
    process.stdout.write(JSON.stringify([r.success, JSON.stringify(seen) === text, Object.keys(seen.rows[7]).join()]))
  `
  const out = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.equal(out.status, 0, out.stderr)
  assert.deepEqual(JSON.parse(out.stdout), [true, true, 'id,name'])
})

test('a setter on Object.prototype does not catch keys of large argument text, as it does not catch JSON.parse', async () => {
  const registry = new ToolRegistry()
  let seen
  registry.register({ name: 'rows', description: 'takes rows', inputSchema: { type: 'object' }, handler: (args) => { seen = args; return 'ok' } })
  const manager = new ToolExecutionManager(registry)
  let caught = 0
  Object.defineProperty(Object.prototype, 'tracked', { set() { caught++ }, get() { return 'inherited' }, configurable: true })
  try {
    const rows = Array.from({ length: 4000 }, (_, i) => ({ tracked: i, name: 'a row' }))
    rows.push({ name: 'odd', tracked: 'own' })
    const text = JSON.stringify({ rows })
    assert.ok(text.length > 64 * 1024)
    assert.equal((await manager.execute('rows', text)).success, true)
    assert.equal(caught, 0)
    assert.equal(Object.getOwnPropertyDescriptor(seen.rows[7], 'tracked').value, 7)
    assert.equal(Object.getOwnPropertyDescriptor(seen.rows[4000], 'tracked').value, 'own')
  } finally {
    delete Object.prototype.tracked
  }
})

test('finished records keep large arguments as text: a full history does not keep every parsed tree alive', () => {
  // In a child process with --expose-gc: 60 calls of ~0.6 MB text each, kept in the
  // history (historyLimit 1000). Their parsed trees are ~130 MB together; the records
  // keep the one shared text, and parse it again when read.
  const script = `
    import { ToolRegistry, ToolExecutionManager } from 'toolhost'
    const registry = new ToolRegistry()
    registry.register({ name: 'rows', description: 'takes rows', inputSchema: { type: 'object' }, handler: (a) => a.rows.length })
    const manager = new ToolExecutionManager(registry, { historyLimit: 1000 })
    const text = JSON.stringify({ rows: Array.from({ length: 20000 }, (_, i) => ({ sku: 'SKU-' + i, qty: i })) })
    for (let i = 0; i < 5; i++) await manager.execute('rows', text)
    gc()
    const before = process.memoryUsage().heapUsed
    let last
    for (let i = 0; i < 60; i++) last = await manager.execute('rows', text)
    last = last.execution.id
    gc()
    const grown = (process.memoryUsage().heapUsed - before) / 1e6
    const record = manager.getExecution(last)
    process.stdout.write(JSON.stringify([grown, record.args.rows.length, record.args.rows[7].sku]))
  `
  const out = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.equal(out.status, 0, out.stderr)
  const [grownMB, rows, sku] = JSON.parse(out.stdout)
  assert.deepEqual([rows, sku], [20000, 'SKU-7'], 'a record read later still gives the arguments')
  assert.ok(grownMB < 20, `the heap grew by ${grownMB.toFixed(1)} MB over 60 kept records`)
})
