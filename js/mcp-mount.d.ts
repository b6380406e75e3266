// The types of mounting MCP servers (`registry.mountMcp`, `mountMcp` of toolhost/mcp),
// written without the SDK's types so that they type-check without the optional peer
// dependency @modelcontextprotocol/sdk installed. Where it is installed, `mount.client`
// is its `Client`.

import type { ToolRegistry } from './index.js'
// The SDK is an optional peer: where it is missing, this import is unresolved (the
// @ts-ignore keeps that from being an error) and its type matches anything, which the
// probe below tells apart from the real Client (which has no such property).
// Resolved as an ES module import wherever this file is read (toolhost/mcp is
// import-only): the SDK ships separate ESM and CommonJS declarations, whose Clients
// TypeScript tells apart.
// @ts-ignore
import type { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js' with { 'resolution-mode': 'import' }

/** The SDK's `Client` where @modelcontextprotocol/sdk is installed, else `McpClientLike`. */
export type McpClient = [SdkClient] extends [{ readonly __toolhostNoSdk: true }] ? McpClientLike : SdkClient

/** An MCP SDK `Client`, as far as mounting uses it (the SDK's `Client` is one). */
export interface McpClientLike {
  connect(transport: any, options?: any): Promise<void>
  request(request: any, resultSchema: any, options?: any): Promise<any>
  setNotificationHandler(schema: any, handler: (notification: any) => void | Promise<void>): void
  close(): Promise<void>
}

/** An MCP SDK `Transport`, as far as mounting uses it (the SDK's transports are). */
export interface McpTransportLike {
  start(): Promise<void>
  send(message: any, options?: any): Promise<void>
  close(): Promise<void>
}

/** A tool as an MCP server lists it. */
export interface McpListedTool {
  name: string
  title?: string
  description?: string
  inputSchema: { type: 'object'; [keyword: string]: unknown }
  outputSchema?: { type: 'object'; [keyword: string]: unknown }
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean }
  _meta?: { [key: string]: unknown }
  [key: string]: unknown
}

/** What `mountMcp` connects to. */
export type McpSource =
  /** A connected SDK Client: used as it is, closed by `unmount()`, never reopened. */
  | McpClientLike
  /** An SDK Transport, not started: connected once, never reopened. */
  | McpTransportLike
  /** Streamable HTTP; reconnected (a new session) after the connection breaks. */
  | { url: string | URL; headers?: Record<string, string>; fetch?: typeof fetch }
  /** A child process speaking MCP on stdio; started again after it exits. */
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string; stderr?: 'inherit' | 'ignore' | 'pipe' }

/** Chooses remote tools by name: a list, a RegExp, or a function of the listed tool. */
export type McpToolFilter = string[] | RegExp | ((tool: McpListedTool) => boolean)

export interface MountMcpOptions {
  /** Put before each remote name (characters a toolhost name cannot have become `_`). */
  prefix?: string
  /** Register the tools in this session instead of the registry; destroying it unmounts. */
  sessionId?: string
  include?: McpToolFilter
  exclude?: McpToolFilter
  /** The SDK's own limit on one `tools/call`; the local manager's `timeoutMs` is the one to set. @default none */
  requestTimeoutMs?: number
  /** Limit on connecting (initialize) and on each `tools/list` page. @default 10000 */
  connectTimeoutMs?: number
  /** This client's name in its initialize request. @default { name: 'toolhost', version: '0.1.0' } */
  clientInfo?: { name: string; version: string }
  /** Called when a refresh started by `list_changed` or a reconnection fails. @default a process warning */
  onError?: (error: unknown) => void
  /**
   * Ask the server for progress and report it with the handler's `ctx.reportProgress`
   * (events, `resetTimeoutOnProgress`). `false` saves a few µs per call. @default true
   */
  progress?: boolean
  /**
   * Local names (after `prefix`) allowed, one by one, to shadow a global tool of the same
   * name inside the session (`sessionId`). A mounted tool never takes the place of a
   * tool visible where it is mounted otherwise: it is skipped, and a global tool
   * registered later wins over it in the session. @default []
   */
  shadow?: string[]
  // What a mount takes from its server, which it does not trust (see MOUNT_DEFAULTS).
  /** Tools taken from one listing; the rest are left, with a warning. @default 1000 */
  maxTools?: number
  /** Time for a whole listing (every page); a cursor the server sent before also ends it. @default 30000 */
  listTimeoutMs?: number
  /** A longer description is cut to this many characters, with a warning. @default 8192 */
  maxDescriptionChars?: number
  /** Characters of JSON of a tool's input and output schemas; a tool over it is skipped. @default 131072 */
  maxSchemaChars?: number
  /** Validation steps a schema may take for one value, along one path (see the README);
   * a tool over it is skipped. `Infinity` for no bound. @default 10000 */
  maxSchemaCost?: number
  /** Bytes of one response (over HTTP also of one SSE line); a call whose answer is
   * larger fails with `MCP_RESULT_TOO_LARGE`. @default 16 MiB */
  maxResultBytes?: number
}

/** The defaults of what a mount takes in. */
export declare const MOUNT_DEFAULTS: {
  readonly maxTools: 1000
  readonly listTimeoutMs: 30000
  readonly maxDescriptionChars: 8192
  readonly maxSchemaChars: 131072
  readonly maxSchemaCost: 10000
  readonly maxResultBytes: 16777216
}

/**
 * A mounted MCP server. Each mounted tool's metadata says where it lives:
 * `metadata.custom.mcp = { server, tool }` (the server's name, the remote tool name).
 */
export declare class McpMount {
  private constructor()
  /** Local names of the mounted tools. */
  get tools(): string[]
  /** Remote tools that could not be mounted (an invalid tool, name or schema, a schema
   * over a limit, a name taken), each with its reason; each was also a warning. */
  get skipped(): { name: string; reason: string }[]
  /** What the last listing cut (a listing stopped at a limit, a description cut), and
   * the `include`, `exclude` and `shadow` names that matched no tool it listed. */
  get warnings(): string[]
  /** The SDK Client in use (a new one after a reconnection), or `null` once unmounted. */
  get client(): McpClient | null
  /** The server's `{ name, version }`. */
  get serverInfo(): { name: string; version: string } | undefined
  get unmounted(): boolean
  /** Lists the remote tools again and updates the mounted set (`list_changed` does it by itself). */
  refresh(): Promise<{ added: string[]; removed: string[]; updated: string[] }>
  /** Removes the mounted tools and closes the connection. */
  unmount(): Promise<void>
}

/** `registry.mountMcp(source, options)`. */
export declare function mountMcp(registry: ToolRegistry, source: McpSource, options?: MountMcpOptions): Promise<McpMount>
