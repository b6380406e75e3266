// The MCP SDK (@modelcontextprotocol/sdk) for toolhost/mcp: an optional peer dependency.
//
// Loaded as namespaces through `import()` with literal specifiers: a bundler building an
// app without the SDK (Vite, for `registry.mountMcp`'s lazy import) leaves the loads to
// fail at run time instead of failing the build. A missing SDK is said plainly, with the
// command that installs it, wherever it is first needed (`toolhost/mcp`, `mountMcp`,
// `toolhost serve`).
import { toolhostError } from './errors.mjs'

const INSTALL = 'npm install @modelcontextprotocol/sdk'

/** Whether `err` says the SDK (or one of its modules) could not be found. */
function isMissing(err) {
  const text = err instanceof Error ? `${err.code ?? ''} ${err.message}` : String(err)
  return /@modelcontextprotocol\/sdk/.test(text) && /ERR_MODULE_NOT_FOUND|Cannot find|Failed to resolve|Failed to fetch|not found/i.test(text)
}

/** Awaits `load()` (an `import()` of an SDK module); a missing SDK becomes `MCP_SDK_MISSING`. */
export async function sdk(load) {
  try {
    return await load()
  } catch (err) {
    if (!isMissing(err)) throw err
    throw toolhostError('MCP_SDK_MISSING', `toolhost/mcp needs the MCP SDK, an optional peer dependency that is not installed: ${INSTALL}`, { cause: err })
  }
}

const [clientModule, serverModule, types] = await Promise.all([
  sdk(() => import('@modelcontextprotocol/sdk/client/index.js')),
  sdk(() => import('@modelcontextprotocol/sdk/server/index.js')),
  sdk(() => import('@modelcontextprotocol/sdk/types.js')),
])

export const { Client } = clientModule
export const { Server } = serverModule
export const {
  CallToolRequestSchema,
  CallToolResultSchema,
  ElicitResultSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  RELATED_TASK_META_KEY,
  RequestSchema,
  ResultSchema,
  ToolListChangedNotificationSchema,
} = types
