// The browser entry: the API over the wasm-bindgen build of the engine (wasm/, made by
// `npm run build:wasm`). No special headers, no eval, no workers. Importing it blocks
// nothing: the engine (a .wasm fetched next to this file) loads on the first `ready()`,
// and the classes need it from their constructor on, so a page renders first and
// awaits `ready()` where it first needs tools. Timers are the page's own setTimeout
// (js/wasm-engine.mjs, shared with Node's WebAssembly fallback, arms them).
import init, { EngineCore as WasmEngine, RegistryCore, closestName, unknownOption } from '../wasm/toolhost_wasm.js'
import { setBackend } from './backend.mjs'
import { checkOptions, toolhostError } from './errors.mjs'
import { wasmEngineCore } from './wasm-engine.mjs'

/** The wasm module's exports, once `ready()` has loaded them. */
let wasm = null
/** The load under way or done, `{ promise, source }` (source: `ready()`'s `wasm`, undefined
 * for the URL next to this module): null before the first `ready()`, and after a load
 * that failed. */
let loading = null

function notReady() {
  // The first use starts the load, so a page that tries again later finds the engine.
  ready().catch(() => {})
  return toolhostError('ENGINE_NOT_READY', "toolhost's engine (WebAssembly) is not loaded yet in this page: `await ready()` (import { ready } from 'toolhost') before creating a ToolRegistry or a ToolExecutionManager")
}

/** The backend until the engine is loaded: what needs the engine says to await `ready()`. */
class Unloaded {
  constructor() {
    throw notReady()
  }
}
setBackend({
  name: 'wasm', RegistryCore: Unloaded, EngineCore: Unloaded, largeText: undefined, auditFile: false,
  // For a misspelt option before the engine is there (`ready({ wams })`): no did-you-mean.
  unknownOption: (key, known, what) => `unknown option \`${key}\` in ${what}; expected one of ${known.map((k) => `\`${k}\``).join(', ')}`,
  closestName: () => undefined,
})

const READY_OPTIONS = ['wasm']

/**
 * Loads the engine: fetches and instantiates its `.wasm` (once; later calls return the
 * same promise). Until it resolves, `new ToolRegistry()` throws `ENGINE_NOT_READY`.
 * `options.wasm` says where the `.wasm` is when it is not next to this module (a bundler
 * that does not copy it, a CDN): a URL or string, a `Response`, its bytes, or a compiled
 * `WebAssembly.Module`. A failed load rejects with `ENGINE_LOAD_FAILED`; the next call
 * tries again, and a `ready({ wasm })` made while another load is under way (one a
 * constructor started) loads from its `wasm` if that one fails. A misspelt option rejects
 * with `INVALID_CONFIG`.
 */
export function ready(options) {
  if (options !== undefined) {
    try {
      if (options === null || typeof options !== 'object') throw toolhostError('INVALID_CONFIG', 'ready() takes { wasm } or nothing')
      checkOptions(options, READY_OPTIONS, 'ready() options')
    } catch (err) {
      return Promise.reject(err)
    }
  }
  const source = options?.wasm
  if (loading === null) return load(source)
  if (wasm !== null || source === undefined || source === loading.source) return loading.promise
  // A load from elsewhere is under way: the URL next to this module (a constructor that
  // threw ENGINE_NOT_READY started it) or another ready({ wasm }). This source is tried
  // when that one fails; it was dropped, and the caller got the other load's failure.
  const first = loading.promise
  return first.catch(() => (loading !== null && loading.source === source ? loading.promise : load(source)))
}

/** Starts loading the engine from `source`. */
function load(source) {
  const promise = init(source === undefined ? undefined : { module_or_path: source }).then(
    (exports) => {
      wasm = exports
      const EngineCore = wasmEngineCore(
        { EngineCore: WasmEngine, memory: () => wasm.memory },
        { setTimer: (f, ms) => setTimeout(f, ms), clearTimer: (id) => clearTimeout(id) },
      )
      setBackend({ name: 'wasm', RegistryCore, EngineCore, largeText: undefined, auditFile: false, unknownOption, closestName })
    },
    (err) => {
      if (loading !== null && loading.promise === promise) loading = null
      // wasm-bindgen's message names the URL of a fetch that failed.
      throw toolhostError('ENGINE_LOAD_FAILED', `toolhost could not load its WebAssembly engine: ${err?.message ?? err}. ` +
        'A bundler that does not copy the .wasm next to the bundle (esbuild, Rollup) needs it copied there from node_modules/toolhost/wasm/, or its URL passed as ready({ wasm: url })', { cause: err })
    },
  )
  loading = { promise, source }
  return promise
}

export * from './api.mjs'
