// A new user's mistakes (issue 15): each is refused with a toolhost error that has a
// code and a sentence saying what to do, never napi's internal words or silence.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { ToolRegistry, ToolExecutionManager, ToolSession, ToolhostError } from 'toolhost'

const handler = () => 'ok'

/** Asserts `fn` throws a toolhost error with `code` and a message matching `message`. */
function refused(fn, code, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.code, code, `${e.code}: ${e.message}`)
    assert.match(e.message, message)
    return true
  })
}

describe('misuse gets a clear, coded error', () => {
  test('classes called without new', () => {
    refused(() => ToolRegistry(), 'INVALID_CALL', /^ToolRegistry is a class: create one with `new ToolRegistry\(\)`$/)
    refused(() => ToolExecutionManager(new ToolRegistry()), 'INVALID_CALL', /create one with `new ToolExecutionManager\(registry, options\)`/)
    refused(() => ToolSession(), 'INVALID_CALL', /create one with `registry.createSession\(\)`/)
    // The classes themselves still work: instanceof, new, extends.
    const registry = new ToolRegistry()
    assert.ok(registry instanceof ToolRegistry && registry.createSession() instanceof ToolSession)
    class Mine extends ToolRegistry {}
    assert.ok(new Mine() instanceof ToolRegistry)
  })

  test('a manager without a registry', () => {
    refused(() => new ToolExecutionManager(), 'INVALID_ARGUMENTS', /takes a ToolRegistry \(create one with new ToolRegistry\(\)\)/)
    refused(() => new ToolExecutionManager({}), 'INVALID_ARGUMENTS', /takes a ToolRegistry/)
  })

  test('misspelt definition keys, with the closest known one', () => {
    const registry = new ToolRegistry()
    const schema = { type: 'object', properties: { city: { type: 'string' } } }
    refused(() => registry.register({ name: 't', description: 'd', input_schema: schema, handler }), 'INVALID_DEFINITION', /unknown option `input_schema` in tool 't'; did you mean `inputSchema`\?/)
    refused(() => registry.register({ name: 't', description: 'd', schema, handler }), 'INVALID_DEFINITION', /unknown option `schema`/)
    refused(() => registry.register({ name: 't', description: 'd', params: schema, handler }), 'INVALID_DEFINITION', /did you mean `parameters`\?/)
    refused(() => registry.register({ name: 't', description: 'd', handler, metadata: { timeout: 100 } }), 'INVALID_DEFINITION', /unknown option `timeout` in the metadata of tool 't'; did you mean `timeoutMs`\?.*metadata\.custom/)
    assert.equal(registry.names.length, 0, 'nothing was registered')
    // The user's own data has a place.
    registry.register({ name: 't', description: 'd', handler, metadata: { custom: { owner: 'team-a' } } })
    assert.deepEqual(registry.get('t').metadata.custom, { owner: 'team-a' })
  })

  test('what stands for a function on the wire is refused as a user\'s value: needsApproval \'ask\', toModelError true', () => {
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 'd', handler })
    const thrown = (fn) => { try { fn() } catch (e) { return e } }
    // Refused as needsApproval: 'yes' is: no function stands behind 'ask' (the call waited
    // for a person), and a manager's toModelError: true did nothing.
    assert.equal(thrown(() => new ToolExecutionManager(registry, { needsApproval: 'ask' }))?.message, thrown(() => new ToolExecutionManager(registry, { needsApproval: 'yes' })).message)
    refused(() => new ToolExecutionManager(registry, { needsApproval: 'ask' }), 'INVALID_CONFIG', /^needsApproval must be true, false or a function/)
    refused(() => new ToolExecutionManager(registry, { toModelError: true }), 'INVALID_CONFIG', /^toModelError must be a function \(error, info\) => string$/)
    refused(() => new ToolRegistry().register({ name: 'b', description: 'd', handler, needsApproval: 'ask' }), 'INVALID_DEFINITION', /^tool 'b': needsApproval must be true, false or a function/)
    refused(() => new ToolRegistry().register({ name: 'b', description: 'd', handler, needsApproval: 'yes' }), 'INVALID_DEFINITION', /^tool 'b': needsApproval must be true, false or a function/)
    refused(() => new ToolRegistry().register({ name: 'b', description: 'd', handler, toModelError: true }), 'INVALID_DEFINITION', /toModelError must be a function/)
    // The functions themselves, and booleans, are as before.
    assert.ok(new ToolExecutionManager(registry, { needsApproval: () => false, toModelError: () => 'x' }))
    assert.ok(new ToolExecutionManager(registry, { needsApproval: true }))
    new ToolRegistry().register({ name: 'b', description: 'd', handler, needsApproval: () => true, toModelError: () => 'x' })
  })

  test('misspelt manager and call options', async () => {
    const registry = new ToolRegistry()
    registry.register({ name: 't', description: 'd', handler })
    refused(() => new ToolExecutionManager(registry, { timeout: 5000 }), 'INVALID_CONFIG', /unknown option `timeout` in manager options; did you mean `timeoutMs`\?/)
    refused(() => new ToolExecutionManager(registry, { retries: 3 }), 'INVALID_CONFIG', /did you mean `retry`\?/)
    refused(() => new ToolExecutionManager(registry, { retry: { maxAttempt: 3 } }), 'INVALID_CONFIG', /did you mean `maxAttempts`\?/)
    const manager = new ToolExecutionManager(registry)
    const pending = manager.execute('t', {}, { timeout: 10 })
    assert.ok(pending instanceof Promise, 'execute never throws: it rejects')
    await assert.rejects(pending, { code: 'INVALID_CONFIG', message: /did you mean `timeoutMs`\?/ })
    await assert.rejects(manager.executeToolCalls([], { provider: 'openai', concurency: 2 }), { code: 'INVALID_CONFIG', message: /did you mean `concurrency`\?/ })
    refused(() => registry.createSession({ isolate: true }), 'INVALID_CONFIG', /did you mean `isolated`\?/)
  })

  test('a Standard Schema that cannot become JSON Schema keeps its library\'s reason', () => {
    const registry = new ToolRegistry()
    assert.throws(() => registry.register({ name: 'when', description: 'd', inputSchema: z.object({ at: z.date() }), handler }), (e) => {
      assert.equal(e.code, 'INVALID_SCHEMA')
      assert.match(e.message, /tool 'when': the Standard Schema's jsonSchema\.input\(\) cannot express this schema as JSON Schema: .*Date/i)
      return true
    })
  })

  test('errors are ToolhostErrors with a code', () => {
    const registry = new ToolRegistry()
    try {
      registry.register({ name: 'bad name!', description: 'd', handler })
      assert.fail('expected a throw')
    } catch (e) {
      assert.ok(e instanceof ToolhostError && e instanceof Error)
      assert.equal(e.code, 'INVALID_TOOL_NAME')
    }
  })

  test('a Map, a Set, Headers or a function in the arguments is refused, not silently turned into {}', async () => {
    const registry = new ToolRegistry()
    let called = false
    registry.register({ name: 't', description: 'd', handler: () => { called = true } })
    const manager = new ToolExecutionManager(registry)
    for (const [args, says] of [
      [{ tags: new Map([['a', 1]]) }, /a Map is not JSON .* at \/tags/],
      [{ ids: new Set([1]) }, /a Set is not JSON/],
      [{ f() {} }, /a function is not JSON at \/f/],
      // Objects of a class with no own fields: JSON would write {}.
      [{ headers: new Headers({ authorization: 'Bearer t' }) }, /a Headers is not JSON \(it would become \{\}\); pass a plain object instead at \/headers$/],
      [{ query: [new URLSearchParams('q=cats')] }, /a URLSearchParams is not JSON \(it would become \{\}\); pass a plain object instead at \/query\/0$/],
      // The README said so; it became {"0":1,"1":2}.
      [{ bytes: new Uint8Array([1, 2]) }, /a Uint8Array is not JSON \(it would become an object of indexes\); pass Array.from\(it\) or a base64 string at \/bytes$/],
      [{ view: new DataView(new ArrayBuffer(2)) }, /a DataView is not JSON/],
    ]) {
      const r = await manager.execute('t', args)
      assert.equal(r.error.code, 'INVALID_ARGUMENTS')
      assert.match(r.error.message, says)
    }
    assert.equal(called, false)
    // A Date is read as JSON.stringify reads it, and the handler gets that string.
    let seen
    registry.register({ name: 'at', description: 'd', handler: (a) => { seen = a } })
    await manager.execute('at', { when: new Date(0) })
    assert.deepEqual(seen, { when: '1970-01-01T00:00:00.000Z' })
    // A class instance is written with its own fields, as JSON.stringify writes it.
    class Point {
      constructor() {
        this.x = 1
      }
    }
    await manager.execute('at', { at: new Point() })
    assert.deepEqual(seen, { at: { x: 1 } })
  })
})
