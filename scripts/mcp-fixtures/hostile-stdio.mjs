// `node hostile-stdio.mjs <server> [n]`: one of the hostile servers of hostile.mjs on
// stdio, for mounts of `{ command }` (__test__/mcp-limits.test.mjs).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { servers } from './hostile.mjs'

const [name, n] = process.argv.slice(2)
const { server } = servers[name](Number(n))
await server.connect(new StdioServerTransport())
