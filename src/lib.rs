//! The Node.js binding of the toolhost engine: `ToolRegistry`, `ToolSession` and
//! `ToolExecutionManager`. The engine (`crates/toolhost`) owns every policy; this crate
//! converts values, calls JS handlers and dispatches events.

mod hop;
mod integrations;
mod js;
mod json;
mod large_text;
mod manager;
mod payload;
mod providers;
mod registry;
mod runtime;
mod standard_schema;
mod tool_error;
