// The benchmark's browser column: B1 and B3 in headless Chromium, toolhost's wasm
// backend (js/browser.mjs) against the same peer (ajv + cockatiel + EventTarget), with
// the same scenario code as in Node (bench/scenarios.mjs, checks included).
//
// - Each side is bundled once with esbuild, for the browser, as a user's bundler would:
//   `toolhost` resolves through the package's `exports` with the `browser` condition.
//   scenarios.mjs and peer.mjs import node:perf_hooks and node:crypto; those two are
//   aliased to the page's `performance` and `crypto.randomUUID`.
// - Pages are served from 127.0.0.1 (no COOP/COEP). The toolhost page has the strict
//   CSP `script-src 'self' 'wasm-unsafe-eval'`: the run fails if the page records any
//   CSP violation, or if eval turns out not to be blocked there, so every toolhost
//   number is also proof that no eval is needed. The peer page adds 'unsafe-eval',
//   which ajv needs (it compiles validators with `new Function`).
// - Every side x scenario runs in a fresh browser context and page (its own renderer
//   process), 5 runs plus the warm-up inside the page, median: as a Node child does.
// - Peak memory is the peak RSS (VmHWM, Linux /proc) of the page's renderer process:
//   the renderer that burned CPU between the page's "ready" and "result" reports. It
//   includes wasm linear memory, which a JS-heap figure would not. V8's heap size at the
//   end of the run (CDP Performance.getMetrics, JSHeapTotalSize) is reported beside it.
// - With `profile`, one more toolhost B1 page runs under the CDP sampling profiler
//   (its timings are not used) and the top self-time functions are returned.
import { readFileSync, readdirSync } from 'node:fs'
import { createServer } from 'node:http'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'
import { ensureChromium } from '../scripts/browser-tests/lib/chromium.mjs'
import { launchBrowser } from '../scripts/browser-tests/lib/browser.mjs'

export const BROWSER_SCENARIOS = ['B1', 'B3']

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')

export const CSP = {
  toolhost: "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'",
  peer: "default-src 'self'; script-src 'self' 'unsafe-eval'; connect-src 'self'",
}

// ---------------------------------------------------------------- bundling

/** The page runtime, evaluated before anything else in the bundle (first import). */
const PAGE_RUNTIME = `
export const violations = []
export const send = (event) => globalThis.__benchReport(event)
document.addEventListener('securitypolicyviolation', (e) => {
  violations.push(\`\${e.effectiveDirective} refused \${e.blockedURI || '(inline)'} at \${e.sourceFile}:\${e.lineNumber}\`)
})
addEventListener('error', (e) => { send({ type: 'error', error: String(e.error?.stack ?? e.message) }) })
addEventListener('unhandledrejection', (e) => { send({ type: 'error', error: 'unhandled rejection: ' + String(e.reason?.stack ?? e.reason) }) })
`

/** The entry: runs SCENARIOS[id](api, n, runs) as bench/run.mjs's child does. */
const ENTRY = (apiPath) => `
import { violations, send } from 'bench:page-runtime'
import * as api from ${JSON.stringify(apiPath)}
import { SCENARIOS } from './scenarios.mjs'

const q = new URLSearchParams(location.search)
const id = q.get('id'), n = Number(q.get('n')), runs = Number(q.get('runs'))
// toolhost's engine loads on ready(), outside the measured scenario.
if (typeof api.ready === 'function') await api.ready()
await send({ type: 'ready', crossOriginIsolated: globalThis.crossOriginIsolated === true })
// The answer to a report comes back as a DevTools evaluation, and code that runs in its
// microtasks runs with eval allowed whatever the CSP says ('ready' would otherwise
// start the scenario there): start from a task of the page's own.
await new Promise((r) => setTimeout(r, 0))
let msg
try {
  const res = await SCENARIOS[id](api, n, runs)
  // securitypolicyviolation events are queued as tasks: let any pending one land.
  await new Promise((r) => setTimeout(r, 50))
  const seen = [...violations]
  // Is eval really refused here? (After the snapshot: this probe's own violation is not counted.)
  let evalAllowed
  try { new Function('return 1')(); evalAllowed = true } catch { evalAllowed = false }
  msg = { type: 'result', ok: true, n, ...res, violations: seen, evalAllowed }
} catch (err) {
  msg = { type: 'result', ok: false, error: String(err?.stack ?? err) }
}
await send(msg)
`

const NODE_ALIASES = {
  'node:perf_hooks': 'export const performance = globalThis.performance\nexport default { performance }',
  'node:crypto': 'export const randomUUID = () => globalThis.crypto.randomUUID()\nexport default { randomUUID }',
}

function benchPlugin(apiPath) {
  return {
    name: 'bench-browser',
    setup(build) {
      build.onResolve({ filter: /^bench:/ }, (args) => ({ path: args.path, namespace: 'bench' }))
      // `toolhost` is this checkout, through its package.json's `exports` with the
      // `browser` condition (as a user's bundler resolves it), never an installed copy.
      build.onResolve({ filter: /^toolhost$/ }, () => {
        const entry = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports?.['.']?.browser
        if (typeof entry !== 'string') throw new Error('package.json has no exports["."].browser entry')
        return { path: join(ROOT, entry) }
      })
      build.onResolve({ filter: /^node:/ }, (args) => (NODE_ALIASES[args.path]
        ? { path: args.path, namespace: 'bench' }
        // Any other built-in is only reached by code the benchmark does not run.
        : { path: args.path, external: true }))
      // Modules loaded on first use (registry.mountMcp -> js/mcp.mjs) are not on the
      // measured path: left out, as a code-splitting bundler would load them apart.
      build.onResolve({ filter: /.*/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined))
      build.onLoad({ filter: /.*/, namespace: 'bench' }, (args) => ({
        contents: args.path === 'bench:entry' ? ENTRY(apiPath) : args.path === 'bench:page-runtime' ? PAGE_RUNTIME : NODE_ALIASES[args.path],
        resolveDir: HERE,
        loader: 'js',
      }))
      // import.meta.url of a bundled module is its own file's URL on the server
      // (wasm/toolhost_wasm.js fetches toolhost_wasm_bg.wasm next to itself).
      build.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return undefined
        const urlPath = `/${relative(ROOT, args.path).split(sep).join('/')}`
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(urlPath)}, location.href).href`), loader: 'js' }
      })
    },
  }
}

async function bundle(side, standin) {
  const apiPath = side === 'peer' ? './peer.mjs' : standin ? './toolhost-standin.mjs' : 'toolhost'
  const result = await esbuild.build({
    entryPoints: ['bench:entry'],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['browser'],
    target: 'es2022',
    outfile: join(ROOT, `${side}.js`), // names only: nothing is written
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [benchPlugin(apiPath)],
  }).catch((error) => {
    const lines = error.errors?.map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text)) ?? [error.message]
    throw new Error(`esbuild could not bundle the ${side} page:\n${lines.join('\n')}`)
  })
  // Every source outside node_modules must come from this checkout.
  const foreign = Object.keys(result.metafile.inputs).filter((f) => f.startsWith('../') && !f.includes('node_modules/'))
  if (foreign.length) throw new Error(`the ${side} bundle took files from outside ${ROOT}: ${foreign.join(', ')}`)
  return Buffer.from(result.outputFiles[0].contents)
}

// ---------------------------------------------------------------- serving

function startServer(files) {
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://127.0.0.1').pathname
    const file = files.get(path)
    // Browsers ask for it on their own; a 404 would be a console error in the page.
    if (path === '/favicon.ico') { res.writeHead(204).end(); return }
    const headers = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store', 'Content-Security-Policy': file?.csp ?? CSP.toolhost }
    if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(file ? 405 : 404, headers).end()
      return
    }
    res.writeHead(200, { ...headers, 'Content-Type': file.type, 'Content-Length': file.contents.length })
    res.end(req.method === 'HEAD' ? undefined : file.contents)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve({
      origin: `http://127.0.0.1:${server.address().port}`,
      close: () => new Promise((done) => { server.closeAllConnections?.(); server.close(() => done()) }),
    }))
  })
}

const page = (side) => Buffer.from(`<!doctype html><meta charset="utf-8"><title>toolhost bench: ${side}</title><script type="module" src="/${side}.js"></script>\n`)

// ---------------------------------------------------------------- renderer processes (Linux /proc)

function procInfo(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]) }
  } catch { return undefined }
}

/** pid -> CPU ticks of every renderer process under the browser process. */
function renderers(browserPid) {
  const all = new Map()
  let names
  try { names = readdirSync('/proc') } catch { return new Map() }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    const info = procInfo(name)
    if (info) all.set(Number(name), info)
  }
  const out = new Map()
  for (const [pid, info] of all) {
    let p = info.ppid
    for (let depth = 0; p > 1 && p !== browserPid && depth < 8; depth++) p = all.get(p)?.ppid ?? 0
    if (p !== browserPid) continue
    let cmd = ''
    try { cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') } catch {}
    if (cmd.includes('--type=renderer')) out.set(pid, info.cpuTicks)
  }
  return out
}

const peakRssMB = (pid) => {
  try { return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024 } catch { return undefined }
}
const alive = (pid) => procInfo(pid) !== undefined

// ---------------------------------------------------------------- CPU profile

/** `(url, line) => module`: the source module of a bundle line, by esbuild's `// path`
 * markers (the .wasm and unknown URLs as they are). */
export function moduleMapper(bundles) {
  const linesMemo = new Map()
  const linesOf = (url) => {
    const name = url.slice(url.lastIndexOf('/') + 1)
    if (!linesMemo.has(name)) linesMemo.set(name, bundles.get(name)?.toString('utf8').split('\n'))
    return linesMemo.get(name)
  }
  const modulesOf = new Map()
  const moduleAt = (url, line) => {
    const name = url.slice(url.lastIndexOf('/') + 1)
    const lines = linesOf(url)
    if (!lines) return /^wasm:|\.wasm$/.test(url) ? 'wasm (toolhost_wasm_bg.wasm)' : url
    if (!modulesOf.has(name)) {
      const marks = []
      lines.forEach((l, i) => { const m = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(l); if (m) marks.push([i, m[1]]) })
      modulesOf.set(name, marks)
    }
    let mod = name
    for (const [i, m] of modulesOf.get(name)) { if (i <= line) mod = m; else break }
    return mod.replace(/^node_modules\//, '')
  }
  return { moduleAt, linesOf }
}

/** Top self-time functions of a CDP profile; bundle line -> source module by esbuild's `// path` markers. */
function topSelfTime(profile, bundles, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const { moduleAt, linesOf } = moduleMapper(bundles)
  // An anonymous function is named by the start of the bundle line it is defined on.
  const anonymous = (cf) => {
    const line = linesOf(cf.url)?.[cf.lineNumber]?.trim()
    return line ? `(anonymous: ${line.length > 60 ? `${line.slice(0, 60)}…` : line})` : '(anonymous)'
  }
  const agg = new Map()
  let total = 0
  for (const [id, us] of selfUs) {
    const { callFrame: cf } = byId.get(id)
    total += us
    const where = moduleAt(cf.url, cf.lineNumber)
    const key = `${cf.functionName || anonymous(cf)}\t${where}`
    agg.set(key, (agg.get(key) ?? 0) + us)
  }
  const rows = [...agg].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, us]) => {
    const [fn, where] = key.split('\t')
    return { fn, where, selfMs: us / 1000, pct: (100 * us) / total }
  })
  // Self time by where the code is: each source module, the wasm module, the browser's
  // built-ins (setTimeout, TextDecoder.decode, ...) and V8's own buckets ((garbage collector), ...).
  const places = new Map()
  for (const [key, us] of agg) {
    const [fn, where] = key.split('\t')
    const place = where || (fn.startsWith('(') ? fn : '(browser built-ins)')
    places.set(place, (places.get(place) ?? 0) + us)
  }
  return { totalMs: total / 1000, rows, places: [...places].sort((a, b) => b[1] - a[1]).map(([place, us]) => ({ place, pct: (100 * us) / total })) }
}

// ---------------------------------------------------------------- pages

function withTimeout(promise, ms, what) {
  let timer
  return Promise.race([promise, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(what)), ms) })]).finally(() => clearTimeout(timer))
}

/** One side x scenario in a fresh context and page. Resolves with the page's result. */
async function runOne(browser, browserPid, { url, side, timeoutMs, profile }) {
  const context = await browser.createBrowserContext()
  const errors = []
  let settle
  const done = new Promise((resolve) => { settle = resolve })
  let cpu0 = new Map(), rendererPid, session
  // An error after the result was sent still fails the run (errors is checked at the end).
  const fail = (error) => { errors.push(error); settle({ ok: false, error }) }
  let result
  try {
    const tab = await context.newPage()
    await tab.exposeFunction('__benchReport', async (event) => {
      if (event?.type === 'ready') {
        cpu0 = renderers(browserPid)
        if (profile) {
          session = await tab.createCDPSession()
          await session.send('Profiler.enable')
          await session.send('Profiler.setSamplingInterval', { interval: 100 })
          await session.send('Profiler.start')
        }
      } else if (event?.type === 'result') {
        // The page's renderer: the one that ran the scenario (most CPU since "ready").
        let best = -1
        for (const [pid, ticks] of renderers(browserPid)) {
          const d = ticks - (cpu0.get(pid) ?? 0)
          if (d > best) { best = d; rendererPid = pid }
        }
        const r = { ...event, peakRssMB: rendererPid ? peakRssMB(rendererPid) : undefined }
        // V8's heap as the run ends (CDP Performance.getMetrics): how much of the renderer is JS heap.
        try { r.jsHeapMB = (await tab.metrics()).JSHeapTotalSize / 2 ** 20 } catch {}
        if (session) r.profile = (await session.send('Profiler.stop')).profile
        settle(r)
      } else if (event?.type === 'error') fail(`page error: ${event.error}`)
    })
    tab.on('pageerror', (e) => fail(`page error: ${e?.stack ?? e}`))
    tab.on('error', (e) => fail(`the page crashed: ${e.message}`))
    // CSP refusals are checked through the page's violation list (see below).
    tab.on('console', (m) => { if (m.type() === 'error' && !/Content Security Policy/.test(m.text())) errors.push(`console.error: ${m.text()} (${m.location()?.url ?? ''})`) })
    await tab.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs })
    result = await withTimeout(done, timeoutMs, `the page did not finish within ${timeoutMs / 1000} s`)
  } catch (error) {
    result = { ok: false, error: error.message }
  }
  await withTimeout(context.close(), 10_000, 'close').catch(() => {})
  // The next page's renderer must not be confused with this one: wait until it has exited.
  for (let i = 0; rendererPid && alive(rendererPid) && i < 100; i++) await new Promise((r) => setTimeout(r, 50))

  if (result.ok && errors.length) result = { ok: false, error: `errors in the page:\n${errors.join('\n')}` }
  if (result.ok && result.violations?.length) result = { ok: false, error: `CSP violations in the ${side} page:\n${result.violations.join('\n')}` }
  if (result.ok && side === 'toolhost' && result.evalAllowed !== false) result = { ok: false, error: 'eval was not refused in the toolhost page: its CSP is not in force, so the run proves nothing' }
  if (result.ok && result.crossOriginIsolated) result = { ok: false, error: 'the page is cross-origin isolated: it must not be' }
  return result
}

// ---------------------------------------------------------------- the engine's weight and first result

/** The .wasm a page downloads, in bytes: raw, gzip (-9, Node's zlib) and brotli (11). */
export function wasmSize() {
  const bytes = readFileSync(join(ROOT, 'wasm', 'toolhost_wasm_bg.wasm'))
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  }
}

/** A page that imports toolhost, awaits ready(), registers a tool and runs it once:
 * when (after navigation start) its code starts, the engine is ready, the result is in. */
const FIRST_RESULT_ENTRY = `
import { ToolExecutionManager, ToolRegistry, ready } from 'toolhost'
const appStart = performance.now()
await ready()
const engineReady = performance.now()
const registry = new ToolRegistry()
registry.register({
  name: 'get_weather', description: 'Weather',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  handler: ({ city }) => ({ city, tempC: 21 }),
})
const r = await new ToolExecutionManager(registry).execute('get_weather', { city: 'Paris' })
const firstResult = performance.now()
const load = await new Promise((done) => (document.readyState === 'complete' ? done() : addEventListener('load', () => done(), { once: true })))
window.__first = { ok: r.success && r.result.tempC === 21, appStart, engineReady, firstResult, loadEvent: performance.getEntriesByType('navigation')[0].loadEventStart, wasmFetchMs: performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'))?.duration }
`

async function bundleFirstResult() {
  const result = await esbuild.build({
    stdin: { contents: FIRST_RESULT_ENTRY, resolveDir: HERE, sourcefile: 'first.js' },
    absWorkingDir: ROOT, bundle: true, format: 'esm', platform: 'browser', conditions: ['browser'], target: 'es2022',
    outfile: join(ROOT, 'first.js'), write: false, logLevel: 'silent', plugins: [benchPlugin('toolhost')],
  })
  return Buffer.from(result.outputFiles[0].contents)
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Loads the first-result page `runs` times, each in a fresh context (no cache: the
 * server sends no-store); medians in ms after navigation start. */
async function firstResult(browser, origin, runs) {
  const seen = []
  for (let i = 0; i < runs; i++) {
    const context = await browser.createBrowserContext()
    try {
      const p = await context.newPage()
      await p.goto(`${origin}/first.html`, { waitUntil: 'load', timeout: 60_000 })
      await p.waitForFunction(() => window.__first !== undefined, { timeout: 60_000, polling: 20 })
      const r = await p.evaluate(() => window.__first)
      if (!r.ok) throw new Error(`the first-result page got a wrong result: ${JSON.stringify(r)}`)
      seen.push(r)
    } finally {
      await context.close()
    }
  }
  const pick = (k) => median(seen.map((r) => r[k]))
  return { runs, appStartMs: pick('appStart'), engineReadyMs: pick('engineReady'), firstResultMs: pick('firstResult'), loadEventMs: pick('loadEvent'), wasmFetchMs: pick('wasmFetchMs') }
}

/**
 * Runs `ids` (of BROWSER_SCENARIOS) for both sides. `sizes` maps id -> call count.
 * Returns { version, results: { id: { toolhost, peer } }, profile? }; a side that failed
 * is { ok: false, error }. Throws only if Chromium or the bundles cannot be had.
 */
export async function runBrowser({ ids, sizes, runs, standin = false, profile = false, profileIds = ['B1'], first: wantFirst = true, rawProfile = false, timeoutMs = 600_000, log = () => {} }) {
  const executable = ensureChromium()
  const bundles = new Map()
  for (const side of ['toolhost', 'peer']) bundles.set(`${side}.js`, await bundle(side, standin))
  const files = new Map()
  for (const side of ['toolhost', 'peer']) {
    files.set(`/${side}.html`, { contents: page(side), type: 'text/html; charset=utf-8', csp: CSP[side] })
    files.set(`/${side}.js`, { contents: bundles.get(`${side}.js`), type: 'text/javascript; charset=utf-8' })
  }
  if (!standin) {
    files.set('/first.html', { contents: Buffer.from('<!doctype html><meta charset="utf-8"><title>toolhost: first result</title><script type="module" src="/first.js"></script>\n'), type: 'text/html; charset=utf-8' })
    files.set('/first.js', { contents: await bundleFirstResult(), type: 'text/javascript; charset=utf-8' })
  }
  for (const name of readdirSync(join(ROOT, 'wasm'))) {
    const type = name.endsWith('.wasm') ? 'application/wasm' : name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'application/octet-stream'
    files.set(`/wasm/${name}`, { contents: readFileSync(join(ROOT, 'wasm', name)), type })
  }
  const server = await startServer(files)
  const { browser, version, close } = await launchBrowser(executable)
  const browserPid = browser.process()?.pid
  try {
    const results = {}
    const url = (side, id) => `${server.origin}/${side}.html?id=${id}&n=${sizes[id]}&runs=${runs}`
    for (const id of ids) {
      results[id] = {}
      for (const side of ['toolhost', 'peer']) {
        log(`${id} ${side} (Chromium) ... `)
        const r = await runOne(browser, browserPid, { url: url(side, id), side, timeoutMs })
        results[id][side] = r
        log(r.ok ? `${r.usPerCall.toFixed(2)} µs/call\n` : `FAILED\n${r.error}\n`)
      }
    }
    let first
    if (!standin && wantFirst) {
      log('time to first tool result (Chromium, 5 fresh pages) ... ')
      try {
        first = await firstResult(browser, server.origin, 5)
        log(`${first.firstResultMs.toFixed(0)} ms\n`)
      } catch (err) {
        first = { error: String(err?.message ?? err) }
        log(`FAILED\n${first.error}\n`)
      }
    }
    let prof
    if (profile) {
      const id = profileIds[0]
      log(`${id} toolhost (Chromium, CPU profile) ... `)
      const r = await runOne(browser, browserPid, { url: url('toolhost', id), side: 'toolhost', timeoutMs, profile: true })
      prof = r.ok ? { usPerCall: r.usPerCall, ...topSelfTime(r.profile, bundles, 20), ...(rawProfile ? { raw: r.profile, moduleOf: moduleMapper(bundles).moduleAt } : {}) } : { error: r.error }
      log(r.ok ? 'done\n' : `FAILED\n${r.error}\n`)
    }
    return { version, results, profile: prof, first, wasm: standin ? undefined : wasmSize() }
  } finally {
    await close()
    await server.close()
  }
}
