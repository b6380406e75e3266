// `inputSchema` / `outputSchema` given as a Standard Schema (zod v4, valibot, ArkType,
// ...): turned into JSON Schema once, at registration. Validation still runs in the
// engine, on the JSON Schema.
//
// Tried in order: the Standard JSON Schema interface
// (`schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' })`), then the
// schema's own `toJSONSchema()`. Anything else that carries `~standard` is refused, since
// it cannot be validated in the engine; a zod schema of a version that gives no JSON
// Schema (zod 3, zod 4.0 and 4.1, `zod/v4` from zod 3.25) is refused saying so.
import { toolhostError } from './errors.mjs'

function failed(tool, how, err) {
  const reason = err === undefined ? '' : `: ${err instanceof Error ? err.message : String(err)}`
  return toolhostError('INVALID_SCHEMA', `tool '${tool}': ${how}${reason}`, { schemaPath: '', cause: err })
}

// A property read that never throws (a getter, a revoked Proxy).
function read(o, key) {
  try {
    return o?.[key]
  } catch {
    return undefined
  }
}

const NEEDS_ZOD_4 = 'toolhost needs zod 4.2 or later, whose schemas give their own JSON Schema: npm install zod@^4.2'

/** Why a zod schema of a version that cannot give its JSON Schema is refused, or
 * undefined for anything else: zod 3 (its `_def.typeName` is `ZodObject`, ...), and zod
 * 4.0 / 4.1 or the `zod/v4` preview of zod 3.25 (`_zod.version` 4.0 or 4.1). */
function oldZod(schema, side) {
  const what = `${side}Schema`
  const version = read(read(schema, '_zod'), 'version')
  if (version !== null && typeof version === 'object' && version.major === 4 && version.minor < 2) {
    const v = `${version.major}.${version.minor}.${version.patch}`
    return `${what} is a zod ${v} schema (zod 4.0 or 4.1, or 'zod/v4' from zod 3.25), which cannot give its JSON Schema; ${NEEDS_ZOD_4}, or pass z.toJSONSchema(schema)`
  }
  const typeName = read(read(schema, '_def'), 'typeName')
  if (version === undefined && typeof typeName === 'string' && typeName.startsWith('Zod')) {
    return `${what} is a zod 3 schema (${typeName}); ${NEEDS_ZOD_4}, or pass a JSON Schema (zod-to-json-schema makes one from a zod 3 schema)`
  }
  return undefined
}

/** The JSON Schema of `schema` for tool `tool`; `side` is 'input' or 'output'. */
export function toJsonSchema(tool, schema, side = 'input') {
  if (schema === null || (typeof schema !== 'object' && typeof schema !== 'function')) return schema
  const old = oldZod(schema, side)
  if (old !== undefined) throw failed(tool, old)
  if (!('~standard' in schema)) return schema
  const standard = schema['~standard']
  const jsonSchema = standard?.jsonSchema
  let produced
  if (jsonSchema !== undefined && typeof jsonSchema[side] === 'function') {
    try {
      produced = jsonSchema[side]({ target: 'draft-2020-12' })
    } catch (err) {
      throw failed(tool, `the Standard Schema's jsonSchema.${side}() cannot express this schema as JSON Schema`, err)
    }
  } else if (typeof schema.toJSONSchema === 'function') {
    try {
      produced = schema.toJSONSchema()
    } catch (err) {
      throw failed(tool, "the schema's toJSONSchema() cannot express this schema as JSON Schema", err)
    }
  } else {
    throw failed(tool, `this Standard Schema (${standard?.vendor ?? 'unknown vendor'}) offers no JSON Schema output (~standard.jsonSchema or toJSONSchema()); pass a JSON Schema instead`)
  }
  if (produced !== null && typeof produced === 'object' && typeof produced.$schema === 'string' && produced.$schema.includes('2020-12')) {
    // Converters stamp their own draft URI; the engine selects drafts itself.
    const { $schema, ...rest } = produced
    return rest
  }
  return produced
}
