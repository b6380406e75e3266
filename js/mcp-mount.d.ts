// The types of mounting MCP servers (`registry.mountMcp`, `mountMcp` of toolhost/mcp),
// written without the SDK's types so that they type-check without the optional peer
// dependency @modelcontextprotocol/sdk installed. Where it is installed, `mount.client`
// is its `Client`.

import type { ToolRegistry } from './index.js'
// The SDK is an optional peer: where it is missing, this import is unresolved (the
// @ts-ignore keeps that from being an error) and its type matches anything, which the
// probe below tells apart from the real Client (which has no such property).
// @ts-ignore
import type { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js'

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
  /** Limit on connecting (initialize) and on `tools/list`. @default 10000 */
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
}

/**
 * A mounted MCP server. Each mounted tool's metadata says where it lives:
 * `metadata.custom.mcp = { server, tool }` (the server's name, the remote tool name).
 */
export declare class McpMount {
  private constructor()
  /** Local names of the mounted tools. */
  get tools(): string[]
  /** Remote tools that could not be mounted (an invalid name or schema, a name taken). */
  get skipped(): { name: string; reason: string }[]
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
