// `node --import ./scripts/mcp-fixtures/no-sdk.mjs ...` runs as if the optional peer
// dependency @modelcontextprotocol/sdk were not installed: resolving it fails as Node
// fails for a package that is not there (ERR_MODULE_NOT_FOUND).
import { register } from 'node:module'

const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === '@modelcontextprotocol/sdk' || specifier.startsWith('@modelcontextprotocol/sdk/')) {
    const e = new Error("Cannot find package '@modelcontextprotocol/sdk' imported from " + context.parentURL)
    e.code = 'ERR_MODULE_NOT_FOUND'
    throw e
  }
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(hooks)}`)
