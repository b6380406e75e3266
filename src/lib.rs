//! The Node.js backend of toolhost: the engine (`crates/toolhost`) as two classes the
//! package's JS runtime (`js/`) drives, `RegistryCore` and `EngineCore`. They convert
//! values and call the engine; what Node adds is the way back onto the JS thread for
//! timers and for large argument text parsed on a worker (`hop.rs`).

// The binding has no Rust tests (`test = false`); a cfg(test) build (`clippy --all-targets`)
// has no N-API registration (napi-derive emits it under `not(test)`), so every export looks unused.
#![cfg_attr(test, allow(dead_code))]

mod engine_core;
mod hop;
mod js;
mod large_text;
#[cfg(target_os = "linux")]
mod loop_timers;
mod registry_core;
