#!/usr/bin/env node
// `toolhost serve ./tools.mjs [--http [port] | --stdio]`: serves the tools a module
// registers over MCP, without writing a server. See `toolhost --help`.
import { BlockList, isIP } from 'node:net'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { inspect } from 'node:util'
import { ToolExecutionManager, ToolRegistry, permanentError, transientError } from './node.mjs'

const USAGE = `Usage: toolhost serve <module> [--stdio | --http [port]] [options]

Serves the tools <module> registers over MCP (Model Context Protocol).

<module> exports (default, or as \`registry\`) either
  - a ToolRegistry, or
  - a function (registry, toolhost) => void | ToolExecutionManager, which registers its
    tools in the registry it is given (and may return the manager to run them with).
It may also export \`manager\` (a ToolExecutionManager over the registry) or
\`managerOptions\` (options for a new one).

Transports:
  --stdio              stdin/stdout, for an MCP host that starts the process (default)
  --http [port]        Streamable HTTP on http://<host>:<port><path> (default port 8080)

Options (HTTP):
  --host <host>        interface to listen on (default 127.0.0.1; 0.0.0.0 for all);
                       beyond loopback (localhost, 127.0.0.0/8, ::1) it needs auth
  --path <path>        endpoint path (default /mcp)
  --stateless          no sessions: any instance behind a load balancer answers any request
  --allow-origin <o>   a browser Origin allowed to call (repeatable; '*' for any)
  --allow-host <h>     a Host header allowed (repeatable; default: loopback names when
                       listening on loopback, no check otherwise)
  --no-auth            serve a non-loopback host without authentication, on purpose
Authentication (HTTP): with TOOLHOST_TOKEN set in the environment, every request must
carry "Authorization: Bearer $TOOLHOST_TOKEN". Listening beyond loopback needs it, or
--no-auth.
Options:
  --approval <mode>    who approves calls of tools that need approval (needsApproval):
                       elicit  the MCP client, through elicitation (default); a client
                               that cannot be asked gets the call denied, with that reason
                       deny    nobody: such calls are denied with a clear reply
                       allow   everybody: such calls run without asking
                       manager the module's own ToolExecutionManager listeners
  --drain <ms>         on SIGTERM or SIGINT, let calls in flight finish for this long
                       before cancelling them (default 10000)
  --name <name>        server name in the initialize answer (default: toolhost)
  --server-version <v> server version (default: 0.1.0)
  -h, --help           this text`

function fail(message) {
  process.stderr.write(`toolhost: ${message}\n\n${USAGE}\n`)
  process.exit(2)
}

/** Ends the process with a message and no usage text (the command line was fine). */
function die(message) {
  process.stderr.write(`toolhost: ${message}\n`)
  process.exit(1)
}

const APPROVALS = ['elicit', 'deny', 'allow', 'manager']

/** Flags that only --http reads: given with --stdio they would be ignored in silence
 * (--host 0.0.0.0 --stdio looked like a network server and was none). */
const HTTP_FLAGS = ['--port', '--host', '--path', '--stateless', '--allow-origin', '--allow-host', '--no-auth']

const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

/** Whether `host` is loopback: 'localhost', or an IP address in 127.0.0.0/8 or ::1 (a
 * name such as 127.attacker.example is not, whatever it starts with). */
function isLoopback(host) {
  if (host === 'localhost') return true
  const ip = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const version = isIP(ip)
  return version !== 0 && LOOPBACK.check(ip, version === 6 ? 'ipv6' : 'ipv4')
}

function parse(argv) {
  const args = { transport: 'stdio', port: 8080, host: '127.0.0.1', path: '/mcp', stateless: false, origins: [], hosts: [], noAuth: false, approval: 'elicit', drainMs: 10_000, module: undefined }
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(argv.length === 0 ? 2 : 0)
  }
  const [command, ...rest] = argv
  if (command !== 'serve') fail(`unknown command '${command}'`)
  const httpFlags = new Set()
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]
    if (HTTP_FLAGS.includes(a)) httpFlags.add(a)
    const value = () => {
      if (i + 1 >= rest.length) fail(`${a} needs a value`)
      return rest[++i]
    }
    // Number('') and Number(' ') are 0: `--port ''` served on a random port, `--drain ''`
    // cut calls in flight at once.
    const number = () => {
      const text = value()
      return text.trim() === '' ? NaN : Number(text)
    }
    switch (a) {
      case '--stdio':
        args.transport = 'stdio'
        break
      case '--http':
        args.transport = 'http'
        if (i + 1 < rest.length && /^\d+$/.test(rest[i + 1])) args.port = Number(rest[++i])
        break
      case '--port':
        args.port = number()
        break
      case '--host':
        args.host = value()
        break
      case '--path':
        args.path = value()
        break
      case '--stateless':
        args.stateless = true
        break
      case '--allow-origin':
        args.origins.push(value())
        break
      case '--allow-host':
        args.hosts.push(value())
        break
      case '--no-auth':
        args.noAuth = true
        break
      case '--approval':
        args.approval = value()
        if (!APPROVALS.includes(args.approval)) fail(`--approval must be one of ${APPROVALS.join(', ')}`)
        break
      case '--drain':
        args.drainMs = number()
        if (!Number.isInteger(args.drainMs) || args.drainMs < 0) fail('--drain must be a number of milliseconds')
        break
      case '--name':
        args.name = value()
        break
      case '--server-version':
        args.version = value()
        break
      default:
        if (a.startsWith('-')) fail(`unknown option '${a}'`)
        if (args.module !== undefined) fail(`one module only (got '${args.module}' and '${a}')`)
        args.module = a
    }
  }
  if (args.module === undefined) fail('which module? e.g. toolhost serve ./tools.mjs')
  if (args.transport === 'stdio' && httpFlags.size > 0) {
    fail(`${[...httpFlags].join(', ')} ${httpFlags.size === 1 ? 'is' : 'are'} for --http, and this serves over stdio: add --http, or leave ${httpFlags.size === 1 ? 'it' : 'them'} out`)
  }
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) fail('the port must be an integer from 0 to 65535')
  // Checked here, before the module runs (serveHttp would refuse it after).
  if (!args.path.startsWith('/') || new URL(args.path, 'http://localhost').pathname !== args.path) {
    fail(`--path must be a URL path starting with '/', with no query or fragment (such as /mcp), not '${args.path}'`)
  }
  return args
}

const isManager = (m) => m instanceof ToolExecutionManager

/** How to run a TypeScript module on a Node that does not read TypeScript. */
function typescriptAdvice(file) {
  return `cannot load ${file}: Node ${process.version} does not run TypeScript by itself. Either
  - run toolhost with a TypeScript loader (npm install --save-dev tsx):
      node --import tsx node_modules/toolhost/js/cli.mjs serve ${file}
  - on Node 22.6 or later: node --experimental-strip-types node_modules/toolhost/js/cli.mjs serve ${file}
    (Node 23.6 and later need no flag)
  - or compile it to JavaScript (tsc) and serve the .js file`
}

/** Imports the tools module. A module whose top-level await never settles would let the
 * process end with nothing said and code 0: that is an error, said as one. */
async function importModule(file) {
  let loading = true
  const stuck = () => {
    if (loading) die(`${file} never finished loading: its top-level await did not settle, and nothing was left to run`)
  }
  process.once('beforeExit', stuck)
  try {
    return await import(pathToFileURL(resolve(file)).href)
  } catch (err) {
    if (err?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?tsx?$/.test(file)) die(typescriptAdvice(file))
    fail(`could not load ${file}: ${err instanceof Error ? err.stack : String(err)}`)
  } finally {
    loading = false
    process.off('beforeExit', stuck)
  }
}

/** The registry and manager the module gives. */
async function load(file) {
  const mod = await importModule(file)
  const exported = mod.default ?? mod.registry
  let registry
  let manager = isManager(mod.manager) ? mod.manager : undefined
  if (exported instanceof ToolRegistry) registry = exported
  else if (typeof exported === 'function') {
    registry = new ToolRegistry()
    const returned = await exported(registry, { ToolRegistry, ToolExecutionManager, transientError, permanentError })
    if (isManager(returned)) manager = returned
    else if (returned instanceof ToolRegistry) registry = returned
  } else if (exported !== null && typeof exported === 'object' && typeof exported.register === 'function') {
    fail(`${file} exports a ToolRegistry of another copy of toolhost than this command's; export a function (registry) => { registry.register(...) } instead, which fills the registry it is given`)
  } else {
    fail(`${file} must export (default, or as \`registry\`) a ToolRegistry or a function that registers tools in the registry it is given`)
  }
  if (manager !== undefined && manager.registry !== registry) fail(`${file}: the manager runs another registry's tools`)
  return { registry, manager: manager ?? new ToolExecutionManager(registry, mod.managerOptions) }
}

async function main() {
  const args = parse(process.argv.slice(2))
  // On stdio, stdout carries the protocol: what the tools print goes to stderr.
  if (args.transport === 'stdio') {
    // console.dir, table, group, count, time and trace write through these or stderr;
    // dir wrote to stdout on its own and broke the client's JSON-RPC stream.
    for (const level of ['log', 'info', 'debug']) console[level] = (...a) => console.error(...a)
    console.dir = (value, options) => console.error(inspect(value, options))
  }
  const token = process.env.TOOLHOST_TOKEN
  const loopback = isLoopback(args.host)
  // Refused before the module runs: its top-level code may have effects.
  if (token !== undefined && token !== '' && token.trim() !== token) {
    die(`TOOLHOST_TOKEN ${token.trim() === '' ? 'is only whitespace' : 'starts or ends with whitespace'}, which no Authorization header carries: trim it`)
  }
  if (args.transport === 'http' && !loopback && !token && !args.noAuth) {
    die(`listening on ${args.host} lets anyone who reaches it run every tool: set TOOLHOST_TOKEN to a secret that clients send as "Authorization: Bearer <token>", or pass --no-auth to serve without authentication on purpose`)
  }
  const { registry, manager } = await load(args.module)
  let mcp
  try {
    mcp = await import('./mcp.mjs')
  } catch (err) {
    if (err?.code === 'MCP_SDK_MISSING') die(err.message)
    throw err
  }
  const { serveHttp, serveStdio } = mcp
  const options = { approval: args.approval, drainMs: args.drainMs }
  if (args.name !== undefined) options.name = args.name
  if (args.version !== undefined) options.version = args.version
  let serving
  if (args.transport === 'http') {
    if (args.origins.length > 0) options.allowedOrigins = args.origins.includes('*') ? '*' : args.origins
    if (args.hosts.length > 0) options.allowedHosts = args.hosts
    if (token) options.auth = token
    else if (args.noAuth) options.auth = false
    try {
      serving = await serveHttp(registry, manager, { ...options, port: args.port, host: args.host, path: args.path, stateless: args.stateless })
    } catch (err) {
      if (err?.code === 'EADDRINUSE') die(`${args.host} port ${args.port} is already in use: stop what listens there, or pick another with --http <port>`)
      throw err
    }
    const how = token ? ' (bearer token from TOOLHOST_TOKEN)' : args.noAuth ? ' (WITHOUT authentication: --no-auth)' : ''
    process.stdout.write(`toolhost: serving ${registry.names.length} tools (${registry.names.join(', ')}) at ${serving.url}${how}\n`)
  } else {
    serving = await serveStdio(registry, manager, options)
    process.stderr.write(`toolhost: serving ${registry.names.length} tools over stdio\n`)
    serving.closed.then(() => process.exit(0))
  }
  // The first signal drains (no new calls; those in flight get --drain ms), a second one
  // ends the process at once.
  let stopping = false
  const stop = () => {
    if (stopping) process.exit(1)
    stopping = true
    serving.close().then(() => process.exit(0), () => process.exit(1))
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

main().catch((err) => {
  // A refused option says what is wrong in its message; anything else shows where.
  const config = err?.code === 'INVALID_CONFIG' && typeof err.message === 'string'
  process.stderr.write(`toolhost: ${config ? err.message : err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
