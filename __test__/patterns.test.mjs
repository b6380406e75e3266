// Patterns a zod user writes: z.emoji(), password rules, look-around and
// backreferences were refused at registration. They now run with ECMA-262's meaning on a
// backtracking engine with a step limit, so a model's input cannot hang the thread: a
// value the engine cannot decide within the limit fails validation, fast. Patterns the
// linear engine can run keep running there.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { ToolRegistry, ToolExecutionManager } from 'toolhost'

function toolWith(properties) {
  const registry = new ToolRegistry()
  registry.register({ name: 't', description: 'd', inputSchema: { type: 'object', properties }, handler: (args) => args })
  return { registry, manager: new ToolExecutionManager(registry) }
}

describe('patterns zod writes register and validate', () => {
  test('z.emoji(), a password rule, z.iso.duration() and z.hostname()', () => {
    const registry = new ToolRegistry()
    registry.register({
      name: 'signup', description: 'd', handler: () => 1,
      inputSchema: z.object({
        mood: z.string().emoji(),
        password: z.string().regex(/^(?=.*[A-Z])(?=.*\d)(?!.*\s).{8,}$/),
        every: z.iso.duration(),
        host: z.hostname(),
      }),
    })
    const valid = (args) => registry.validate('signup', { mood: '😀', password: 'Secret123', every: 'P1D', host: 'example.com', ...args })
    assert.deepEqual(valid({}), { valid: true, errors: [] })
    for (const [key, bad] of [['mood', 'happy'], ['password', 'secret123'], ['password', 'Secret 123'], ['every', 'P'], ['host', '-bad.example']]) {
      const r = valid({ [key]: bad })
      assert.equal(r.valid, false, `${key}: ${bad}`)
      // (`every` also fails its `format: duration`.)
      assert.ok(r.errors.some((e) => e.path === `/${key}` && e.keyword === 'pattern'), `${key}: ${bad}: ${JSON.stringify(r.errors)}`)
    }
  })
})

describe('each verdict is the one JS RegExp gives', () => {
  // Run on the backtracking engine (look-around, backreferences) or on the linear one
  // in a schema that has such a pattern elsewhere.
  const PATTERNS = [
    '^(?=.*[a-z])(?=.*[0-9]).{4,}$', '(?<!\\$)\\b\\d+\\b', '(?<=@)[a-z]+', '^(\\w)\\w*\\1$', '^(?<q>["\']).*\\k<q>$',
    '^(a)?\\1b$', '^(?!.*(.).*\\1)[a-z]+$', '^\\d{3}(?=-)', '\\bcat\\b', '^[^\\s@]+@[^\\s@]+$', '^.{2}$', '^\\w+$', '^\\s*$',
  ]
  const STRINGS = ['abc1', 'ABCD', 'x1y2', '$12', 'a 12 b', 'me@home', 'abca', 'abcd', '"quoted"', "'mixed\"", 'b', 'ab', 'aab',
    'unique', 'letter', '123-456', '123456', 'a cat sat', 'concat', 'é', 'ſs', 'a\nb', '\u3000', '', '😀😀', 'K']
  test(`${PATTERNS.length} patterns x ${STRINGS.length} strings`, () => {
    const properties = Object.fromEntries(PATTERNS.map((pattern, i) => [`p${i}`, { type: 'string', pattern }]))
    const { registry } = toolWith(properties)
    for (const [i, pattern] of PATTERNS.entries()) {
      const expected = new RegExp(pattern, 'u')
      for (const s of STRINGS) {
        const r = registry.validate('t', { [`p${i}`]: s })
        assert.equal(r.valid, expected.test(s), `${pattern} on ${JSON.stringify(s)}: ${JSON.stringify(r.errors)}`)
      }
    }
  })

  test('failures quote the pattern as the schema has it', () => {
    const { registry } = toolWith({ code: { type: 'string', pattern: '^(\\d)\\1$' } })
    const r = registry.validate('t', { code: '12' })
    assert.deepEqual(r.errors, [{ path: '/code', schemaPath: '/properties/code/pattern', keyword: 'pattern', message: '"12" does not match "^(\\d)\\1$"' }])
  })
})

describe('ECMA-262 meanings the linear engine could not give', () => {
  test('\\b within (?i:...) counts ſ and the Kelvin sign as word characters, as ECMA-262 does with the u and i flags', () => {
    // Node's own RegExp has no (?i:...) modifiers yet: the flag on the whole pattern
    // gives the same verdicts here.
    const { registry } = toolWith({ s: { type: 'string', pattern: '(?i:^.\\bs)' } })
    for (const [s, flagged] of [['ſs', /^.\bs/iu], ['\u212As', /^.\bs/iu], ['-s', /^.\bs/iu], ['as', /^.\bs/iu]]) {
      assert.equal(registry.validate('t', { s }).valid, flagged.test(s), JSON.stringify(s))
    }
    assert.equal(registry.validate('t', { s: 'ſs' }).valid, false)
  })

  test('^ and $ within (?m:...) are at \\r, U+2028 and U+2029 too', () => {
    const { registry } = toolWith({ s: { type: 'string', pattern: '(?m:^total$)' } })
    for (const sep of ['\n', '\r', '\r\n', '\u2028', '\u2029']) {
      const s = `x${sep}total${sep}y`
      assert.equal(registry.validate('t', { s }).valid, /^total$/mu.test(s), JSON.stringify(sep))
      assert.equal(registry.validate('t', { s }).valid, true)
    }
    assert.equal(registry.validate('t', { s: 'subtotal' }).valid, false)
  })
})

describe('a pathological input cannot hang the thread', () => {
  // Each attempt of the backtracking engine to match this value multiplies: without a
  // limit, 40 characters take longer than the machine's lifetime.
  const evil = '^((?!x)\\w+\\s?)*$'
  const value = `${'a'.repeat(40)}!`

  test('the value fails validation with a clear message, fast', async () => {
    const { registry, manager } = toolWith({ s: { type: 'string', pattern: evil } })
    const started = performance.now()
    const r = await manager.execute('t', { s: value })
    const ms = performance.now() - started
    assert.equal(r.success, false)
    assert.equal(r.error.code, 'INVALID_ARGUMENTS')
    assert.equal(r.error.validationErrors[0].keyword, 'pattern')
    assert.match(r.error.validationErrors[0].message, /^"a{40}!" could not be matched against "\^\(\(\?!x\)\\w\+\\s\?\)\*\$" within 100000 backtracking steps, so it is refused/)
    // Measured 2-7 ms here; the bound is loose because the machine is shared: the point
    // is that it returns at all.
    assert.ok(ms < 1000, `${ms} ms`)
    assert.equal(registry.validate('t', { s: 'plain words here' }).valid, true, 'a value it can decide passes')
  })

  test('nor can it slip through a `not`, where an undecided match would read as a pass', () => {
    const { registry } = toolWith({ s: { not: { type: 'string', pattern: evil } } })
    assert.equal(registry.validate('t', { s: value }).valid, false)
    assert.equal(registry.validate('t', { s: 'xyz' }).valid, true)
  })

  test('linear patterns stay linear: ^(a+)+$ on 100,000 characters', () => {
    const { registry } = toolWith({ s: { type: 'string', pattern: '^(a+)+$' }, t: { type: 'string', pattern: '(?=a)' } })
    const started = performance.now()
    const r = registry.validate('t', { s: `${'a'.repeat(100_000)}!` })
    assert.equal(r.valid, false)
    assert.match(r.errors[0].message, /does not match/, 'decided, not stopped at a limit')
    assert.ok(performance.now() - started < 1000)
  })
})

test('what no engine runs is refused at registration, naming why', () => {
  assert.throws(() => toolWith({ s: { type: 'string', pattern: '\\k<n>(?<n>a)' } }), {
    code: 'INVALID_SCHEMA',
    message: /invalid inputSchema at \/properties\/s\/pattern: "\\\\k<n>\(\?<n>a\)" is valid ECMA-262 but the backtracking regex engine refuses it/,
  })
})
