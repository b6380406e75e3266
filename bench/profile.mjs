// Where one call's time goes: a scenario (B1 by default) under a sampling profiler, each
// sample put in the layer it was spent in, as µs per call.
//
//   node bench/profile.mjs [--scenario B1] [--node] [--chromium] [--calls N] [--json out.json]
//
// --calls is the scenario's size in `npm run bench` unless given (B1 100,000, B5 1,000).
//
// - Node: the native addon under Linux `perf` (cpu-clock, 5 kHz, call graphs, JS frames
//   named through --perf-basic-prof); only the JS thread's samples count. Without perf
//   (not installed, or not allowed) this side is skipped.
// - Chromium: the wasm backend under the DevTools sampling profiler (100 µs), on a page
//   as bench/browser.mjs runs it.
// A sample is put in the first layer found walking from the function it was taken in
// towards its callers: a memcpy is the engine's when the engine called it, a
// JSON.parse is the JS runtime's. The layers:
//   - "JS: execute() in": js/ code from `execute()` to the engine call (argument text, options, the promise);
//   - "crossing": the binding's own code on both sides (napi-rs and N-API; wasm-bindgen glue, js/wasm-engine.mjs);
//   - "strings": making UTF-8 of JS strings and JS strings of UTF-8 (napi string calls, TextEncoder/TextDecoder, the glue's string copies);
//   - "engine": crates/toolhost (validation, records, events, log lines) and the allocator and clock it calls;
//   - "timers": arming and clearing each call's timeout (the deadline thread's lock, setTimeout/clearTimeout);
//   - "JS: ops out": js/ code reading the engine's ops (records, events, log lines, results);
//   - "JS: handler": running the handler (its context, arguments, promise) and the benchmark's own loop;
//   - "GC": the garbage collector;
//   - "other": V8 compiling, the event loop, start-up.
// Each layer's µs/call is its share of the samples times the µs/call measured in the
// same (profiled) run; the profiler's own cost is in every layer alike.
import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { StringDecoder } from 'node:string_decoder'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback)

export const LAYERS = ['JS: execute() in', 'crossing', 'strings', 'engine', 'timers', 'JS: ops out', 'JS: handler', 'GC', 'other']

// ---------------------------------------------------------------- JS functions by layer

/** js/ functions by layer (by module, then by name; '*' for the rest of the module). */
const JS_LAYERS = {
  'manager.mjs': {
    execute: 'JS: execute() in', '#start': 'JS: execute() in', Execution: 'JS: execute() in', optionsText: 'JS: execute() in',
    optionNumbers: 'JS: execute() in', captureScope: 'JS: execute() in', isAbortSignal: 'JS: execute() in',
    '#runSoon': 'JS: handler', '#runner': 'JS: handler', '#runAdmitted': 'JS: handler', '#run': 'JS: handler', '#invoke': 'JS: handler',
    '#outcome': 'JS: handler', '#settled': 'JS: handler', '#failed': 'JS: handler', value: 'JS: handler', '#iterate': 'JS: handler',
    resultText: 'JS: handler',
    '*': 'JS: ops out',
  },
  'arguments.mjs': { resultProblem: 'JS: handler', '*': 'JS: execute() in' },
  'context.mjs': { withMetadata: 'JS: ops out', '*': 'JS: handler' },
  'ops.mjs': { '*': 'JS: ops out' },
  'errors.mjs': { '*': 'JS: ops out' },
  'events.mjs': { '*': 'JS: ops out' },
  'wasm-engine.mjs': { later: 'timers', '#fired': 'timers', fire: 'timers', '#timer': 'timers', '#armHost': 'timers', '#onHostTimer': 'timers', textOf: 'strings', '*': 'crossing' },
  'wire-text.mjs': { '*': 'strings' },
  'toolhost_wasm.js': { passStringToWasm0: 'strings', getStringFromWasm0: 'strings', decodeText: 'strings', '*': 'crossing' },
  'node.mjs': { '*': 'crossing' },
  'wasm-node.mjs': { '*': 'crossing' },
  'browser.mjs': { '*': 'crossing' },
}

function jsLayer(file, fn) {
  const base = file.slice(file.lastIndexOf('/') + 1)
  if (/\/bench\/|scenarios\.mjs|page-runtime|^bench:/.test(file) || base === 'scenarios.mjs') return 'JS: handler'
  const table = JS_LAYERS[base]
  if (table === undefined) return undefined
  return table[fn] ?? table['*']
}

// ---------------------------------------------------------------- Node, under perf

/** Layer of one perf frame, or undefined to look at its caller. */
function perfLayer(sym, dso) {
  if (/toolhost.*\.node$/.test(dso)) {
    // Library code (std, serde_json, hashbrown, ...) is its caller's.
    if (/^(<?toolhost::)?(<?toolhost::)?deadline|DeadlineTimer|toolhost_node::hop/.test(sym) || /^<?toolhost::deadline/.test(sym)) return 'timers'
    if (/^<?(toolhost_node::|napi::|napi_)|__napi_impl|as napi::/.test(sym)) return /string|String|utf8|latin1/.test(sym) ? 'strings' : 'crossing'
    if (/^<?toolhost::/.test(sym)) return 'engine'
    return undefined
  }
  if (/Scavenge|Heap::|MarkCompact|Sweeper|ConcurrentMarking|MinorMarkSweep|GCTracer|Evacuat|RememberedSet|MemoryAllocator|MemoryChunk|SemiSpace|NewSpace::|PagedSpace|LargeObjectSpace|Marking/.test(sym)) return 'GC'
  if (/^(v8::String::WriteUtf8|v8::String::NewFrom|v8::String::WriteOneByte|v8::String::Utf8Length|v8::internal::Utf8|v8::internal::Factory::NewStringFrom|v8::internal::Factory::NewRawOneByteString|napi_get_value_string|napi_create_string|v8::String::IsExternal|v8::internal::String::Flatten|v8::internal::String::SlowFlatten|v8::internal::String::WriteToFlat)/.test(sym)) return 'strings'
  if (/^(napi_|v8impl::|node::|v8::(HandleScope|EscapableHandleScope|Object::|Value::|Function::|Number::|Boolean::|ArrayBuffer|Float64Array|Isolate::|Local|External|Context::|TypedArray|Persistent|api_internal)|v8::internal::HandleScope|v8::Utils)/.test(sym)) return 'crossing'
  if (sym.includes('node:internal/async_hooks')) return /AsyncResource|emitInit/.test(sym) ? 'JS: execute() in' : 'JS: handler'
  if (sym.startsWith('JS:') || sym.startsWith('LazyCompile:') || sym.startsWith('Function:')) {
    const m = /^(?:JS|LazyCompile|Function):[*~^+]?(\S*) (\S+?)(?::\d+(?::\d+)?)?$/.exec(sym)
    if (m) return jsLayer(m[2], m[1] || '(anonymous)')
    return undefined
  }
  if (/compiler::|Compiler|Turbofan|Maglev|Sparkplug|Parser|Scanner|Bytecode|Deoptimiz/.test(sym)) return 'other'
  return undefined
}

/** The lines of the file at `path`, read a megabyte at a time: `perf script`'s text for
 * a long run is more than a JS string can hold. */
function* linesOf(path) {
  const fd = openSync(path, 'r')
  try {
    const buf = Buffer.alloc(1 << 20)
    // A character cut at the end of a read is finished by the next.
    const utf8 = new StringDecoder('utf8')
    let rest = ''
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) {
      const lines = (rest + utf8.write(buf.subarray(0, n))).split('\n')
      rest = lines.pop()
      yield* lines
    }
    if (rest !== '') yield rest
  } finally {
    closeSync(fd)
  }
}

function perfSamples(data, mainTid) {
  const text = `${data}.txt`
  const fd = openSync(text, 'w')
  let r
  try {
    r = spawnSync('perf', ['script', '--no-inline', '-i', data, '-F', 'tid,ip,sym,dso'], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' })
  } finally {
    closeSync(fd)
  }
  if (r.status !== 0) throw new Error(`perf script failed: ${(r.stderr ?? '').slice(-500)}`)
  const samples = []
  let frames = null
  let tid = 0
  for (const line of linesOf(text)) {
    if (line === '') {
      if (frames !== null && tid === mainTid) samples.push(frames)
      frames = null
      continue
    }
    // A sample starts with a line holding only its thread id; its frames follow.
    const header = /^\s*(\d+)\s*$/.exec(line)
    if (header !== null) {
      tid = Number(header[1])
      frames = []
      continue
    }
    const m = /^\s*[0-9a-f]+ (.*) \((.*)\)$/.exec(line)
    if (m && frames !== null) frames.push([m[1].replace(/\+0x[0-9a-f]+$/, ''), m[2]])
  }
  if (frames !== null && tid === mainTid) samples.push(frames)
  return samples
}

const unplaced = new Map()
function classifyPerf(frames) {
  let addon = false
  for (const [sym, dso] of frames) {
    const layer = perfLayer(sym, dso)
    if (layer !== undefined) return layer
    addon ||= /toolhost.*\.node$/.test(dso)
  }
  if (addon) return 'engine'
  if (process.env.PROFILE_DEBUG) {
    const key = frames.slice(0, 4).map(([s, d]) => `${s} (${d.slice(d.lastIndexOf('/') + 1)})`).join(' < ')
    unplaced.set(key, (unplaced.get(key) ?? 0) + 1)
  }
  return 'other'
}

/** Whether a sample was taken in the C library, the loader or the vDSO: frame-pointer
 * call graphs lose their caller, DWARF ones keep it. */
const helperLeaf = (frames) => frames.length > 0 && /libc\.so|ld-linux|\[vdso\]|libstdc\+\+|libgcc/.test(frames[0][1])

/** One perf run of the scenario in a child: its samples and the µs/call it measured. */
function perfRun(scenario, calls, callGraph) {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-profile-'))
  let measured
  try {
    // In the temporary folder: --perf-basic-prof also leaves V8's isolate-*.log in the
    // working directory.
    const data = join(dir, 'perf.data')
    const result = join(dir, 'result.json')
    const r = spawnSync('perf', ['record', '-e', 'cpu-clock', '-F', '4999', '--call-graph', callGraph, '-o', data, '--',
      process.execPath, '--perf-basic-prof', fileURLToPath(import.meta.url), '--child', scenario, String(calls), result], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`perf record failed: ${r.stderr.slice(-500)}`)
    measured = JSON.parse(readFileSync(result, 'utf8'))
    return { samples: perfSamples(data, measured.pid), usPerCall: measured.usPerCall }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    // The JIT symbol map --perf-basic-prof wrote.
    if (measured !== undefined) rmSync(`/tmp/perf-${measured.pid}.map`, { force: true })
  }
}

/**
 * Runs the scenario under perf twice: with frame-pointer call graphs, which follow JS
 * frames but lose the caller of C library code (malloc, memcpy), and with DWARF ones,
 * which keep it but stop at JS frames. Samples in the C library take the layers the
 * DWARF run gives them; every other sample its layer in the frame-pointer run.
 */
function profileNode(scenario, calls) {
  const probe = spawnSync('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', '--', 'true'], { stdio: 'ignore' })
  if (probe.error || probe.status !== 0) return { error: 'perf is not available here (Linux perf with cpu-clock sampling)' }
  const fp = perfRun(scenario, calls, 'fp')
  const dwarf = perfRun(scenario, Math.min(calls, 50_000), 'dwarf,8192')
  const weights = new Map()
  const add = (layer, w) => weights.set(layer, (weights.get(layer) ?? 0) + w)
  const inHelpers = dwarf.samples.filter(helperLeaf).map(classifyPerf)
  const helperSamples = fp.samples.filter(helperLeaf).length
  for (const frames of fp.samples) if (!helperLeaf(frames)) add(classifyPerf(frames), 1)
  for (const layer of inHelpers) add(layer, helperSamples / inHelpers.length)
  return { ...tallyWeights(weights, fp.usPerCall), usPerCall: fp.usPerCall }
}

async function child(scenario, calls, out) {
  const { SCENARIOS } = await import('./scenarios.mjs')
  const api = await import('../js/node.mjs')
  const r = await SCENARIOS[scenario](api, calls, 5)
  writeFileSync(out, JSON.stringify({ usPerCall: r.usPerCall, pid: process.pid }))
}

// ---------------------------------------------------------------- Chromium, CDP profile

const BUILTIN_LAYERS = {
  setTimeout: 'timers', clearTimeout: 'timers',
  decode: 'strings', encode: 'strings', encodeInto: 'strings',
  '(garbage collector)': 'GC', '(program)': 'other', '(idle)': 'other', '(root)': 'other',
}

function classifyCdp(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const memo = new Map()
  const layerOf = (id) => {
    if (memo.has(id)) return memo.get(id)
    const { callFrame: cf } = byId.get(id)
    let layer
    if (/\.wasm$|^wasm:/.test(cf.url)) layer = 'engine'
    else if (cf.url === '') layer = BUILTIN_LAYERS[cf.functionName]
    else layer = jsLayer(cf.url.replace(/\?.*$/, ''), cf.functionName || '(anonymous)')
    if (layer === undefined) layer = parent.has(id) ? layerOf(parent.get(id)) : 'other'
    memo.set(id, layer)
    return layer
  }
  const weights = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const layer = layerOf(profile.samples[i])
    weights.set(layer, (weights.get(layer) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  return weights
}

/** The scenario in Chromium under the CDP profiler; the bundle is mapped back to modules. */
async function profileChromium(scenario, calls) {
  const { runBrowser } = await import('./browser.mjs')
  const r = await runBrowser({ ids: [], profileIds: [scenario], sizes: { [scenario]: calls }, runs: 5, profile: true, first: false, rawProfile: true, log: (s) => process.stderr.write(s) })
  if (r.profile.error) return { error: r.profile.error }
  const { raw, moduleOf } = r.profile
  // Bundle URLs name the bundle: give each frame its source module's path instead.
  for (const n of raw.nodes) {
    const cf = n.callFrame
    if (cf.url !== '' && !/\.wasm$|^wasm:/.test(cf.url)) cf.url = moduleOf(cf.url, cf.lineNumber)
  }
  const weights = classifyCdp(raw)
  return { ...tallyWeights(weights, r.profile.usPerCall), usPerCall: r.profile.usPerCall }
}

// ---------------------------------------------------------------- tables

function tally(layers, usPerCall) {
  const weights = new Map()
  for (const l of layers) weights.set(l, (weights.get(l) ?? 0) + 1)
  return tallyWeights(weights, usPerCall)
}

function tallyWeights(weights, usPerCall) {
  let total = 0
  for (const w of weights.values()) total += w
  const rows = LAYERS.map((layer) => {
    const share = (weights.get(layer) ?? 0) / total
    return { layer, share, us: share * usPerCall }
  })
  return { rows, samples: total }
}

export function table(results) {
  const sides = Object.keys(results).filter((k) => results[k] && !results[k].error)
  const out = [`| layer | ${sides.map((s) => `${s} µs/call (share)`).join(' | ')} |`, `|---|${sides.map(() => '---|').join('')}`]
  for (const layer of LAYERS) {
    out.push(`| ${layer} | ${sides.map((s) => {
      const row = results[s].rows.find((r) => r.layer === layer)
      return `${row.us.toFixed(2)} (${(row.share * 100).toFixed(0)}%)`
    }).join(' | ')} |`)
  }
  out.push(`| **total (the profiled run's µs/call)** | ${sides.map((s) => `**${results[s].usPerCall.toFixed(2)}**`).join(' | ')} |`)
  return out.join('\n')
}

async function main() {
  const scenario = opt('--scenario', 'B1')
  const { SIZES } = await import('./scenarios.mjs')
  const calls = Number(opt('--calls', String(SIZES[scenario] ?? 100_000)))
  const both = !argv.includes('--node') && !argv.includes('--chromium')
  const results = {}
  if (both || argv.includes('--node')) {
    process.stderr.write(`${scenario} in Node under perf ... `)
    results.node = profileNode(scenario, calls)
    process.stderr.write(results.node.error ? `skipped: ${results.node.error}\n` : `${results.node.usPerCall.toFixed(2)} µs/call\n`)
  }
  if (both || argv.includes('--chromium')) results.chromium = await profileChromium(scenario, calls)
  if (process.env.PROFILE_DEBUG) for (const [k, n] of [...unplaced].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.error(n, k)
  console.log(`### ${scenario}: where a call's time goes\n`)
  console.log(table(results))
  for (const [side, r] of Object.entries(results)) if (r.error) console.log(`\n${side}: ${r.error}`)
  if (argv.includes('--json')) writeFileSync(opt('--json'), JSON.stringify(results, null, 2))
}

if (argv[0] === '--child') await child(argv[1], Number(argv[2]), argv[3])
else await main()
