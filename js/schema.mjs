// `inputSchema` / `outputSchema` given as a Standard Schema (zod v4, valibot, ArkType,
// ...): turned into JSON Schema once, at registration. Validation still runs in the
// engine, on the JSON Schema.
//
// Tried in order: the Standard JSON Schema interface
// (`schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' })`), then the
// schema's own `toJSONSchema()`. Anything else that carries `~standard` is refused, since
// it cannot be validated in the engine.
import { toolhostError } from './errors.mjs'

function failed(tool, how, err) {
  const reason = err === undefined ? '' : `: ${err instanceof Error ? err.message : String(err)}`
  return toolhostError('INVALID_SCHEMA', `tool '${tool}': ${how}${reason}`, { schemaPath: '', cause: err })
}

/** The JSON Schema of `schema` for tool `tool`; `side` is 'input' or 'output'. */
export function toJsonSchema(tool, schema, side = 'input') {
  if (schema === null || typeof schema !== 'object' || !('~standard' in schema)) return schema
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
