//! Driving the engine from a host that runs handlers itself: the JS runtime of the npm
//! package, over its two backends (the napi addon for Node, the wasm-bindgen build for
//! browsers). Both backends only move text and numbers between JS and these types, so
//! Node and the browser get the same behaviour, decided here.
//!
//! - [`HostRegistry`]: registry operations, provider formats and model-facing error
//!   text, with JSON text in and out.
//! - [`HostEngine`]: one manager's execution engine. Each call leaves its output in a
//!   [`Wire`] (ops as numbers, strings in one text) and asks for timers with
//!   [`TimerRequest`]s.
//! - [`options`]: manager and call options as a JS user writes them, strictly read.
//! - [`metadata`]: a tool definition's `metadata`, as strictly.

mod engine;
pub mod metadata;
pub mod options;
mod registry;
pub mod wire;

pub use engine::{HostEngine, TimerKind, TimerRequest};
pub use registry::{answer, registry_error_json, tool_id, ErrorFacts, HostHandler, HostRegistry};
pub use wire::Wire;

/// The cause an error holds when its cause is the value the host saw thrown: the host
/// keeps that value and attaches it.
pub struct HostCause;

/// The result an execution record holds for a host's execution: the host keeps the value.
pub struct HostValue;
