// toolhost/mcp: tools over MCP (Model Context Protocol), both ways, on the official
// TypeScript SDK (@modelcontextprotocol/sdk, an optional peer dependency: the main entry
// never loads this module; `registry.mountMcp` calls the `mountMcp` it hands over below,
// and in Node imports it on first use).
//
// - Serving (js/mcp-server.mjs): `createMcpServer` is an SDK `Server` over a registry or
//   session; `serveStdio` and `serveHttp` (js/mcp-http.mjs: authentication, caps, CORS,
//   draining) put it on a transport. Calls over MCP are tracked in js/mcp-calls.mjs
//   (progress, approvals that fail closed).
// - Mounting (js/mcp-mount.mjs, js/mcp-connection.mjs): a remote server's tools as local
//   tools, the server untrusted and bounded in what it can push.
//
// Only Node-only parts (node:http, stdio, child processes) are imported on use, so the
// rest (createMcpServer, and mounting an SDK Client, a Transport or a URL) also runs in
// browsers. A missing SDK is refused with the command that installs it (js/mcp-sdk.mjs).
export { META, createMcpServer, fromCallToolResult, serveStdio, toCallToolResult, SERVER_DEFAULTS, DEFAULT_DRAIN_MS } from './mcp-server.mjs'
export { APPROVAL_DEFAULTS } from './mcp-calls.mjs'
export { serveHttp, HTTP_DEFAULTS } from './mcp-http.mjs'
export { McpMount, mountMcp, MOUNT_DEFAULTS } from './mcp-mount.mjs'
import { mountMcp as mount } from './mcp-mount.mjs'
import { linkMcp } from './registry.mjs'

// `registry.mountMcp` works wherever this module is loaded (a page imports it itself).
linkMcp({ mount })
