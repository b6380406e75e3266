// The browser entry: the API over the wasm-bindgen build of the engine (wasm/, made by
// `npm run build:wasm`). No special headers, no eval, no workers: the module is fetched
// next to this file and instantiated once, before the API is handed out (top-level
// await). Timers are the page's own setTimeout (js/wasm-engine.mjs arms them).
import init, { EngineCore as WasmEngine, RegistryCore, unknownOption } from '../wasm/toolhost_wasm.js'
import { setBackend } from './backend.mjs'
import { wasmEngineCore } from './wasm-engine.mjs'

const wasm = await init()

const EngineCore = wasmEngineCore(
  { EngineCore: WasmEngine, memory: () => wasm.memory },
  { setTimer: (f, ms) => setTimeout(f, ms), clearTimer: (id) => clearTimeout(id) },
)

setBackend({ name: 'wasm', RegistryCore, EngineCore, largeText: undefined, auditFile: false, unknownOption })

export * from './api.mjs'
