// Tests that cannot run in a browser, each with the reason. run.mjs skips them in
// the browser (they still run under `node --test`) and prints them with their reasons.
//
// files: { 'path from the repository root': 'why' }        the whole file
// tests: { 'path: full name': 'why' }                       one test, or a whole suite
//   The full name is the describe() names and the test name joined by ' > ',
//   exactly as run.mjs prints it.
//
// The list cannot rot: a file that does not exist, or a name its file does not
// declare, fails the run.
//
// Only what is Node-only by nature is listed here. A test that merely uses a Node
// helper (createHash, Buffer.byteLength) fails with "... is not available in the
// browser"; port the helper (crypto.subtle.digest, TextEncoder) rather than list it.
export default {
  files: {
    '__test__/lifetime.test.mjs':
      'runs each case in a child process (node:child_process) and in worker_threads, and checks process exit',
    '__test__/hardening-resources.test.mjs':
      'terminates worker_threads in child processes (node:child_process) to measure RSS, and deletes the audit file\'s directory (node:fs); finding 8\'s registry costs run in the browser through registry.test.mjs and sessions.test.mjs',
    '__test__/audit.test.mjs':
      'the audit log is a file: every test writes it (auditLog path) and reads it back with node:fs in a node:os temp directory',
    '__test__/mcp-http.test.mjs':
      'serves MCP over Streamable HTTP with serveHttp (node:http) and connects to it; a page cannot listen on a port',
    '__test__/mcp-stdio.test.mjs':
      'starts `toolhost serve --stdio` as a child process (node:child_process) and kills it mid-call',
    '__test__/mcp-cli.test.mjs':
      'runs the `toolhost` command as child processes, with module files written under target/ (node:fs)',
    '__test__/types-module-formats.test.mjs':
      'writes consumer TypeScript projects (ESM, CommonJS, node10) to a temporary directory (node:fs) and runs tsc on them (node:child_process)',
    '__test__/types-without-sdk.test.mjs':
      'writes a TypeScript project to a temporary directory (node:fs) and runs tsc on it (node:child_process)',
    '__test__/platform-packages.test.mjs':
      "reads the repository's package.json files (node:fs); a page has no file system",
    '__test__/mcp-python.test.mjs':
      'runs the Python mcp client (installed with pip into a venv) against serveHttp; a page has neither',
    '__test__/mcp-failover.test.mjs':
      'kills and restarts a server process (node:child_process) and checks that the mounting process exits by itself',
    '__test__/mcp-roundtrip.test.mjs':
      'process A is a forked child (node:child_process) serving over HTTP; this process mounts it',
    '__test__/journal.test.mjs':
      'the journal is Node\'s (a page refuses the journal option): its tests open SQLite files and start a Postgres server (node:child_process)',
    '__test__/journal-providers.test.mjs':
      'the journal is Node\'s: SQLite files and a Postgres server',
    '__test__/journal-mcp.test.mjs':
      'runs two `toolhost serve` hosts (node:child_process) behind a TCP proxy (node:net) on a Postgres journal, and kills one',
    '__test__/journal-processes.test.mjs':
      'runs journal worker processes and kills them with SIGKILL (node:child_process)',
    '__test__/journal-frozen.test.mjs':
      'stops a Postgres server with SIGSTOP (process.kill) and constructs managers in a child process (node:child_process)',
    '__test__/journal-lost-answer.test.mjs':
      'proxies a Postgres connection through a TCP server in a worker thread (node:net, node:worker_threads); the journal is Node only',
    '__test__/request-context.test.mjs':
      'AsyncLocalStorage (node:async_hooks) is Node\'s; a browser has none. ctx.context, which works in both, is tested by call-context.test.mjs',
    '__test__/ag-ui-run.test.mjs':
      'starts AG-UI servers (node:http) for HttpAgent to talk to over HTTP, and bundles the entries with esbuild to list their imports; a page cannot listen on a port. The Lit page runs the same server and HttpAgent in Chromium (npm run test:lit), and ag-ui-agent.test.mjs runs runWithTools in the browser without a server',
    '__test__/serve-auth.test.mjs':
      'serves MCP over Streamable HTTP with serveHttp (node:http) and opens raw sockets to it (node:net); a page cannot listen on a port',
    '__test__/mcp-limits.test.mjs':
      'hostile MCP servers over Streamable HTTP (node:http) and stdio (node:child_process), and process warnings (process.on(\'warning\'))',
    '__test__/serve-load.test.mjs':
      'a load test of serveHttp (node:http) in a child process run with --expose-gc (node:child_process), measuring its RSS',
    '__test__/wasm-fallback.test.mjs':
      "is about Node's choice of backend: runs each case in a child process (node:child_process) with TOOLHOST_BACKEND set, and node --test on the audit files (node:fs)",
    '__test__/object-shapes.test.mjs':
      "asks V8 whether instances have fast properties: a child process (node:child_process) run with --allow-natives-syntax, which a page cannot pass to its engine",
    '__test__/wire.test.mjs':
      'runs a workload in a child process (node:child_process) with TOOLHOST_CHECK_WIRE=1, on copies of js/ it writes (node:fs); every browser test runs the same decoder',
    '__test__/readme.test.mjs':
      "runs each block of README.md as a node child process (node:child_process) from files it writes under target/; the README's browser code is the Lit example, tested by npm run test:lit",
  },
  tests: {
    '__test__/trust-boundary.test.mjs: issue 23: failures stay per call, and time is always bounded > finding 16: a duck-typed signal is refused with a coded error unless it is complete, and read safely':
      "asserts the process warnings of a signal whose methods throw (process.on('warning')); a browser has no process",
    '__test__/approval.test.mjs: approval > a needsApproval function that throws asks a person, and the throw becomes a process warning':
      "asserts a process warning (process.on('warning')); in a browser the throw is reported with reportError, an uncaught error of the page",
    "__test__/ai-sdk.test.mjs: toAiSdkTools > a needsApproval function that throws asks a person through the SDK, as execute() does; the throw becomes a process warning":
      "asserts a process warning (process.on('warning')); in a browser the throw is reported with reportError, an uncaught error of the page",
    '__test__/event-target.test.mjs: EventTarget semantics > a listener that throws disturbs neither the execution nor the listeners after it':
      'in a browser the throw is reported with reportError, which the page sees as an uncaught error (as the DOM does for a throwing listener)',
    '__test__/results.test.mjs: toModelError rewrites the text a model reads for a failure > a toModelError that throws keeps the default text, and is reported as a warning':
      "asserts a process warning (process.on('warning')); in a browser the throw is reported with reportError, an uncaught error of the page",
    '__test__/model-output.test.mjs: toModelOutput and the output budget > a toModelOutput value that is not text or parts is warned about, and the batch still gets every reply':
      "asserts process warnings (process.on('warning')); in a browser they are reported with reportError, uncaught errors of the page",
    '__test__/json-schema-suite.test.mjs: the index imports every file of the vendored suite, and only those':
      'lists the vendored folders with node:fs readdirSync to compare them with the index; a page cannot list a folder',
    '__test__/execution.test.mjs: cancellation > a reused AbortSignal over 1,000 calls keeps no abort listener':
      "counts an AbortSignal's listeners with node:events getEventListeners; a browser cannot list an EventTarget's listeners",
    '__test__/execution.test.mjs: cancellation > one signal shared by many calls in flight has one listener, and its abort cancels them all':
      "counts an AbortSignal's listeners with node:events getEventListeners, and asserts no process warning; a browser cannot list an EventTarget's listeners",
    '__test__/mcp-mount.test.mjs: mountMcp: failures > an export leaves out a mounted tool its format cannot take, warning once, and keeps every other tool':
      "asserts a process warning (process.on('warning')); in a browser it is reported with reportError, an uncaught error of the page",
    '__test__/providers.test.mjs: round trip per provider: declarations out, recorded call in, reply out > a result nested too deep to send gets its own reply saying the tool ran; the calls beside it keep theirs':
      "asserts a process warning (process.on('warning')); in a browser it is reported with reportError, an uncaught error of the page",
    '__test__/execution.test.mjs: lifecycle events > a listener that throws disturbs neither the execution nor other listeners':
      "asserts that the throw is reported as a process warning (process.on('warning')); a browser has no process",
    '__test__/execution.test.mjs: timers on the event loop (Linux, native addon)':
      "reads the native addon's timer counts (createRequire of index.js) and its threads from /proc/self/task (node:fs); the browser engine's timers are the page's setTimeout",
    '__test__/execution.test.mjs: callbacks that throw values that cannot be printed':
      "every test asserts a process warning (process.on('warning')); a browser has no process",
    '__test__/execution.test.mjs: async callbacks whose promise rejects':
      "every test asserts a process warning (process.on('warning')); a browser has no process",
    '__test__/providers.test.mjs: OpenAI strict mode > every property required, optional ones nullable, additionalProperties false at every level':
      "compiles the rewritten schema with Ajv, which generates code with new Function(); the page's CSP (no 'unsafe-eval') refuses it",
    '__test__/large-arguments.test.mjs: with code generation from strings disallowed, large text still reaches the handler intact':
      'spawns `node --disallow-code-generation-from-strings` (node:child_process); the browser page already forbids eval by its CSP',
    '__test__/large-arguments.test.mjs: finished records keep large arguments as text: a full history does not keep every parsed tree alive':
      'spawns `node --expose-gc` (node:child_process) to measure the heap after a collection; a page cannot force one',
    "__test__/mcp-server.test.mjs: createMcpServer: output schemas and progress > a tool's outputSchema is listed, and the SDK Client checks structuredContent against it":
      "the MCP SDK's Client compiles output schemas with Ajv, which generates code with new Function(); the page's CSP (no 'unsafe-eval') refuses it",
  },
}
