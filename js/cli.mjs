#!/usr/bin/env node
// `toolhost serve ./tools.mjs [--http [port] | --stdio]`: serves the tools a module
// registers over MCP, without writing a server. See `toolhost --help`.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
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
  --host <host>        interface to listen on (default 127.0.0.1; 0.0.0.0 for all)
  --path <path>        endpoint path (default /mcp)
  --stateless          no sessions: any instance behind a load balancer answers any request
  --allow-origin <o>   a browser Origin allowed to call (repeatable; '*' for any)
Options:
  --name <name>        server name in the initialize answer (default: toolhost)
  --server-version <v> server version (default: 0.1.0)
  -h, --help           this text`

function fail(message) {
  process.stderr.write(`toolhost: ${message}\n\n${USAGE}\n`)
  process.exit(2)
}

function parse(argv) {
  const args = { transport: 'stdio', port: 8080, host: '127.0.0.1', path: '/mcp', stateless: false, origins: [], module: undefined }
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(argv.length === 0 ? 2 : 0)
  }
  const [command, ...rest] = argv
  if (command !== 'serve') fail(`unknown command '${command}'`)
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]
    const value = () => {
      if (i + 1 >= rest.length) fail(`${a} needs a value`)
      return rest[++i]
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
        args.port = Number(value())
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
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) fail('the port must be an integer from 0 to 65535')
  return args
}

const isManager = (m) => m instanceof ToolExecutionManager

/** The registry and manager the module gives. */
async function load(file) {
  let mod
  try {
    mod = await import(pathToFileURL(resolve(file)).href)
  } catch (err) {
    fail(`could not load ${file}: ${err instanceof Error ? err.stack : String(err)}`)
  }
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
    for (const level of ['log', 'info', 'debug']) console[level] = (...a) => console.error(...a)
  }
  const { registry, manager } = await load(args.module)
  const { serveHttp, serveStdio } = await import('./mcp.mjs')
  const options = {}
  if (args.name !== undefined) options.name = args.name
  if (args.version !== undefined) options.version = args.version
  let serving
  if (args.transport === 'http') {
    if (args.origins.length > 0) options.allowedOrigins = args.origins.includes('*') ? '*' : args.origins
    serving = await serveHttp(registry, manager, { ...options, port: args.port, host: args.host, path: args.path, stateless: args.stateless })
    process.stdout.write(`toolhost: serving ${registry.names.length} tools (${registry.names.join(', ')}) at ${serving.url}\n`)
  } else {
    serving = await serveStdio(registry, manager, options)
    process.stderr.write(`toolhost: serving ${registry.names.length} tools over stdio\n`)
    serving.closed.then(() => process.exit(0))
  }
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
  process.stderr.write(`toolhost: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
