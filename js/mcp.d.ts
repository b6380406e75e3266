// The types of `toolhost/mcp` (js/mcp.mjs): MCP servers over a registry, and MCP
// servers' tools mounted in a registry. Needs the optional peer dependency
// `@modelcontextprotocol/sdk`.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ToolExecutionManager, ToolRegistry, ToolSession } from './index.js'

// Mounting's types need nothing from the SDK (index.d.ts refers to them for
// `registry.mountMcp`, and must not need the optional peer to type-check).
export * from './mcp-mount.js'

/** `_meta` keys toolhost's server sets, and its mounts read back. */
export declare const META: {
  /** On a result whose text is JSON of a value that is not an object (a number, an array, null). */
  readonly json: 'toolhost/json'
  /** On an `isError` result: `{ category, code, message, retryable, validationErrors? }`. */
  readonly error: 'toolhost/error'
  /** On a listed tool: `{ category?, tags? }` from its metadata. */
  readonly metadata: 'toolhost/metadata'
}

export interface McpServerOptions {
  /** Serve this session's tools (its own and the registry's) and run calls in it. */
  sessionId?: string
  /** The server's name in its initialize answer. @default 'toolhost' */
  name?: string
  /** @default '0.1.0' */
  version?: string
  /** Instructions for the client's model, sent in the initialize answer. */
  instructions?: string
}

/**
 * An MCP server (the SDK's `Server`, not yet connected) over the tools `tools` shows,
 * run by `manager` (a default one when `null`). `tools/list` follows registry changes
 * and sends `notifications/tools/list_changed`; `tools/call` runs `manager.execute`;
 * `notifications/cancelled` aborts the execution; failures are `isError` results with
 * the model-facing text; an unknown tool is a JSON-RPC error (-32602).
 */
export declare function createMcpServer(tools: ToolRegistry | ToolSession, manager?: ToolExecutionManager | null, options?: McpServerOptions): Server

/** A Node stream, as far as the stdio transport uses it (typed without @types/node). */
export interface NodeStreamLike {
  on(event: string, listener: (...args: any[]) => void): unknown
  once(event: string, listener: (...args: any[]) => void): unknown
  off(event: string, listener: (...args: any[]) => void): unknown
}

/** `node:http`'s Server, as far as this API promises (typed without @types/node). */
export interface HttpServerLike {
  address(): { port: number; address: string; family: string } | string | null
  close(callback?: (err?: Error) => void): unknown
  on(event: string, listener: (...args: any[]) => void): unknown
}

export interface ServeStdioOptions extends McpServerOptions {
  /** @default process.stdin */
  stdin?: NodeStreamLike & { pause(): unknown; listenerCount(event: string): number }
  /** @default process.stdout */
  stdout?: NodeStreamLike & { write(chunk: string): boolean }
  /** A message longer than this closes the connection. @default 10 MiB (the SDK's) */
  maxMessageBytes?: number
}

export interface StdioServing {
  server: Server
  /** Resolves when the connection closed (stdin ended, or `close()`). */
  closed: Promise<void>
  close(): Promise<void>
}

/** Serves the tools over stdio. The server closes, cancelling the executions in flight, when stdin ends. */
export declare function serveStdio(tools: ToolRegistry | ToolSession, manager?: ToolExecutionManager | null, options?: ServeStdioOptions): Promise<StdioServing>

export interface ServeHttpOptions extends McpServerOptions {
  /** @default 0 (a free port; read it from `url` or `port`) */
  port?: number
  /** @default '127.0.0.1' */
  host?: string
  /** @default '/mcp' */
  path?: string
  /**
   * No sessions: each POST is served by a fresh server, so any process behind a load
   * balancer can answer any request. No `list_changed` and no cancellation then (a
   * cancel arrives as another request). @default false
   */
  stateless?: boolean
  /** A POST body over this is answered 413 with a JSON-RPC error. @default 4 MiB (the SDK's) */
  maxBodyBytes?: number
  /** A session with no request open for this long is closed. @default 900000 (15 min) */
  sessionIdleMs?: number
  /**
   * `Origin`s a browser may call from. Requests without an `Origin` (not from a
   * browser) are always served. @default loopback origins only
   */
  allowedOrigins?: string[] | '*'
  /** Answer with JSON instead of an SSE stream (no progress notifications then). @default false */
  enableJsonResponse?: boolean
}

export interface HttpServing {
  /** `http://host:port/path` */
  url: string
  port: number
  /** The `node:http` server. */
  httpServer: HttpServerLike
  /** Ids of the open sessions. */
  readonly sessions: string[]
  /** Stops accepting requests, closes every session (cancelling their executions) and the HTTP server. */
  close(): Promise<void>
}

/** Serves the tools on MCP's Streamable HTTP transport, with a session per client. */
export declare function serveHttp(tools: ToolRegistry | ToolSession, manager?: ToolExecutionManager | null, options?: ServeHttpOptions): Promise<HttpServing>

/** A successful result as toolhost's server sends it. */
export declare function toCallToolResult(value: unknown): CallToolResult
/** A remote result as a mounted tool returns it. */
export declare function fromCallToolResult(result: CallToolResult): unknown
