// The engine's WebAssembly build (wasm/, the one browsers run) as the backend in Node:
// what js/node.mjs falls back to when no native addon loads, or runs on when
// TOOLHOST_BACKEND=wasm. Same engine, same API; each call costs more (README, "Platforms").
//
// - Loaded synchronously (initSync of the .wasm read from disk): `require('toolhost')`
//   cannot load a module with top-level await.
// - Timers are unref'd, and one ref'd handle is held while any engine has executions in
//   flight, as the napi backend does (src/hop.rs): a script whose work is done exits at
//   once (a stale backoff timer does not hold it), and one that awaits a backoff delay
//   or a handler stays alive until it settles.
// - `auditLog` is written from JS (js/audit-file.mjs), with the native writer's promises.
import { AsyncResource } from 'node:async_hooks'
import { readFileSync } from 'node:fs'
import { AuditFile } from './audit-file.mjs'
import { wasmEngineCore } from './wasm-engine.mjs'
import * as glue from '../wasm/toolhost_wasm.js'

const instance = glue.initSync({ module: readFileSync(new URL('../wasm/toolhost_wasm_bg.wasm', import.meta.url)) })

/** The one ref'd handle: an interval that never fires in practice, ref'd while engines are busy. */
let aliveHandle = null
let busyEngines = 0
function keepAlive(busy) {
  busyEngines += busy ? 1 : -1
  if (busyEngines === 1 && busy) {
    aliveHandle ??= setInterval(() => {}, 2 ** 31 - 1)
    aliveHandle.ref()
  } else if (busyEngines === 0 && aliveHandle !== null) {
    aliveHandle.unref()
  }
}

const EngineCore = wasmEngineCore(
  { EngineCore: glue.EngineCore, memory: () => instance.memory },
  {
    setTimer: (f, ms) => setTimeout(f, ms).unref(),
    clearTimer: (id) => clearTimeout(id),
    keepAlive,
    openAuditFile: (path, sync) => new AuditFile(path, sync),
  },
)

/** The backend object js/backend.mjs describes. */
export const wasmBackend = {
  name: 'wasm',
  RegistryCore: glue.RegistryCore,
  EngineCore,
  largeText: undefined,
  auditFile: true,
  unknownOption: glue.unknownOption,
  closestName: glue.closestName,
  // Each execution keeps the async context of the `execute` call that started it.
  captureScope: () => new AsyncResource('toolhost.execution'),
}
