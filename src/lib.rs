//! The Node.js backend of toolhost: the engine (`crates/toolhost`) as two classes the
//! package's JS runtime (`js/`) drives, `RegistryCore` and `EngineCore`. They convert
//! values and call the engine; what Node adds is the way back onto the JS thread for
//! timers and for large argument text parsed on a worker (`hop.rs`).

mod engine_core;
mod hop;
mod js;
mod large_text;
#[cfg(target_os = "linux")]
mod loop_timers;
mod registry_core;
