// The types of `toolhost/mcp` (js/mcp.mjs): MCP servers over a registry, and MCP
// servers' tools mounted in a registry. Needs the optional peer dependency
// `@modelcontextprotocol/sdk`.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { AuthInfo, ToolExecutionManager, ToolRegistry, ToolSession } from './index.js'

// Mounting's types need nothing from the SDK (index.d.ts refers to them for
// `registry.mountMcp`, and must not need the optional peer to type-check).
export * from './mcp-mount.js'

/** `_meta` keys toolhost's server sets, and its mounts read back. */
export declare const META: {
  /** On a result whose text is JSON of a value that is not an object (a number, an array, null). */
  readonly json: 'toolhost/json'
  /** On a result with no `structuredContent` whose text is not the value itself (the
   * tool's `toModelOutput`, or a cut to `maxOutputChars`): the value, for a mount. */
  readonly value: 'toolhost/value'
  /** On a result whose content is what the server's model reads, not the value's own
   * text (`toModelOutput`, a cut to `maxOutputChars`): a mount's model reads it too. */
  readonly shaped: 'toolhost/shaped'
  /** On an `isError` result: `{ category, code, message, retryable, validationErrors? }`;
   * when a `toModelError` wrote the text, `{ category, code, message: that text, retryable, rewritten: true }`. */
  readonly error: 'toolhost/error'
  /** On a listed tool: `{ category?, tags? }` from its metadata. */
  readonly metadata: 'toolhost/metadata'
  /** On a listed tool: the key order of a schema's root, when the SDK's parsing would
   * change it (it puts `type`, `properties`, `required` first); a mount restores it. */
  readonly keyOrder: 'toolhost/keyOrder'
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
  /**
   * Who decides whether a call that needs approval runs: `'manager'` your own
   * `approve()` / `deny()` (listen to `tool-execution-approval-requested`); `'elicit'` the
   * MCP client, asked through elicitation (a client that cannot be asked gets the call
   * denied, saying so); `'deny'` nobody (denied at once); `'allow'` everybody.
   * @default 'manager'
   */
  approval?: 'manager' | 'elicit' | 'deny' | 'allow'
  /** How long a call over MCP waits for approval when neither the tool nor the manager
   * says (then the call is denied). @default 300000 (5 minutes) */
  approvalTimeoutMs?: number
  /** Calls of one connection (an HTTP session) that may wait for approval at once; the
   * next is denied at once. @default 16 */
  maxPendingApprovals?: number
  /** The most characters of a JSON-RPC request id kept in the `toolCallId`
   * (`mcp-<session>-<id>`); a longer id is cut and a digest of it added. @default 128 */
  maxRequestIdChars?: number
}

/** The defaults of `approvalTimeoutMs` and `maxPendingApprovals`. */
export declare const APPROVAL_DEFAULTS: { readonly approvalTimeoutMs: 300000; readonly maxPendingApprovals: 16 }
/** The default of `maxRequestIdChars`. */
export declare const SERVER_DEFAULTS: { readonly maxRequestIdChars: 128 }
/** How long `close()` lets calls in flight finish by default (`drainMs`). */
export declare const DEFAULT_DRAIN_MS: 10000

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
  /** How long `close()` lets calls in flight finish before cancelling them. @default 10000 */
  drainMs?: number
}

export interface StdioServing {
  server: Server
  /** Resolves when the connection closed (stdin ended, or `close()`). */
  closed: Promise<void>
  /** Drains: refuses new calls, lets those in flight finish for up to `drainMs`, then closes. */
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
   * `Origin`s a browser may call from, with CORS (a preflight is answered, and responses
   * carry `Access-Control-Allow-Origin`). Requests without an `Origin` (not from a
   * browser) are always served. @default loopback origins only
   */
  allowedOrigins?: string[] | '*'
  /**
   * `Host` headers served (a name alone allows it with any port written as the server's),
   * by the SDK's DNS-rebinding protection; others get 403.
   * @default ['localhost', '127.0.0.1', '[::1]'] on loopback, no check on other hosts
   */
  allowedHosts?: string[]
  /** Answer with JSON instead of an SSE stream (no progress notifications then). @default false */
  enableJsonResponse?: boolean
  /**
   * Who may call. A string is a bearer token every request must carry
   * (`Authorization: Bearer <token>`), compared in constant time; a function verifies the
   * token and says who calls (an `AuthInfo`, a client id string, `true`; `undefined`,
   * `false` or a throw refuses with 401). The identity reaches each handler as
   * `ctx.authInfo`, and a session answers only the identity that opened it. `false`
   * serves without authentication, which a host that is not loopback requires saying.
   * @default none on loopback; required otherwise
   */
  auth?: string | ((token: string, request: unknown) => AuthInfo | Partial<AuthInfo> | string | boolean | undefined | null | Promise<AuthInfo | Partial<AuthInfo> | string | boolean | undefined | null>) | false
  /** Sessions open at once; a new one past it gets 503. @default 1000 */
  maxSessions?: number
  /** Sessions one client (its `auth` identity, else its address) holds; a new one past it gets 429. @default 100 */
  maxSessionsPerClient?: number
  /** Connections open at once; more are closed at once. @default 1000 */
  maxConnections?: number
  /** Connections from one address; more are closed at once (raise it behind a proxy). @default 100 */
  maxConnectionsPerClient?: number
  /** A request's headers must arrive within this (and a connection that sends nothing is closed after it). @default 10000 */
  headersTimeoutMs?: number
  /** A whole request (headers and body) must arrive within this. @default 30000 */
  requestTimeoutMs?: number
  /** How long `close()` lets calls in flight finish before cancelling them. @default 10000 */
  drainMs?: number
}

/** The defaults of serveHttp's caps. */
export declare const HTTP_DEFAULTS: {
  readonly maxSessions: 1000
  readonly maxSessionsPerClient: 100
  readonly maxConnections: 1000
  readonly maxConnectionsPerClient: 100
  readonly headersTimeoutMs: 10000
  readonly requestTimeoutMs: 30000
  readonly sessionIdleMs: 900000
}

export interface HttpServing {
  /** `http://host:port/path` */
  url: string
  port: number
  /** The `node:http` server. */
  httpServer: HttpServerLike
  /** Ids of the open sessions. */
  readonly sessions: string[]
  /** Drains: stops accepting (connections, sessions, calls), lets calls in flight finish
   * for up to `drainMs`, then closes every session (cancelling what is left) and the server. */
  close(): Promise<void>
}

/** Serves the tools on MCP's Streamable HTTP transport, with a session per client. */
export declare function serveHttp(tools: ToolRegistry | ToolSession, manager?: ToolExecutionManager | null, options?: ServeHttpOptions): Promise<HttpServing>

/** A successful result as toolhost's server sends it. */
export declare function toCallToolResult(value: unknown): CallToolResult
/** A remote result as a mounted tool returns it. */
export declare function fromCallToolResult(result: CallToolResult): unknown
