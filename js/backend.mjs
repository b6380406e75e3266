// The engine backend this package runs on, set once by the entry module: the napi
// addon in Node (js/node.mjs), the wasm-bindgen build in browsers (js/browser.mjs).
//
// A backend is `{ name, RegistryCore, EngineCore, largeText?, auditFile, setWake,
// unknownOption, closestName }`:
// - `RegistryCore`: registry operations with JSON text in and out
//   (crates/toolhost/src/host/registry.rs says what each takes and answers);
// - `EngineCore`: one manager's engine. Each call leaves its output in `scratch`
//   (a Float64Array: [op count, ...ops]; a count of -1 means call `bigOps()`) and
//   returns the ops' strings as one text (crates/toolhost/src/host/wire.rs);
// - `setWake(fn)`: `fn(engineId, ticket, text)` is called when a timer the engine
//   asked for fired (ticket 0: its output is in scratch) or, in Node, when large
//   argument text was parsed off the JS thread (the ticket of that call);
// - `largeText`: argument text at least this long goes to `startLarge` (Node only);
// - `auditFile`: whether `auditLog` (a file) is available;
// - `unknownOption(key, known, what)`: the engine's wording of a misspelt option;
//   `closestName(word, known)`: the known name it suggests for a typo of a name, or
//   null (host/options.rs);
// - `captureScope()` (Node): the caller's async context as an object with
//   `runInAsyncScope(fn, thisArg, ...args)`, which each attempt of an execution runs in.
export let backend = null

export function setBackend(b) {
  backend = b
}
