//! The Node.js backend of toolhost: the engine (`crates/toolhost`) as two classes the
//! package's JS runtime (`js/`) drives, `RegistryCore` and `EngineCore`. They convert
//! values and call the engine; what Node adds is the way back onto the JS thread for
//! timers and for large argument text parsed on a worker (`hop.rs`).

mod engine_core;
mod hop;
mod js;
mod large_text;
mod registry_core;

/// mimalloc, as napi-rs's package template and rolldown do. The engine allocates and
/// frees a few dozen small blocks per call (records, log lines, argument trees) and the
/// history drops whole records; under glibc's malloc that went through its slow paths
/// (`_int_malloc`, `_int_free`: 0.38 of B6's 1.76 µs/call under perf). Measured here,
/// same binaries otherwise: B6 overhead 0.94-1.04 -> 0.78-0.88 µs, B4 17.5 -> 11.8 ms a
/// call. Linux gnu only: the builds checked by `npm run test:platforms` (glibc 2.17,
/// x64 and arm64); musl, macOS and Windows keep the system allocator.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
