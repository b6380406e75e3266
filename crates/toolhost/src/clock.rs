//! The engine's clocks, one import for every target.
//!
//! - `Instant` is tokio's on native targets, so tests can pause and advance it
//!   (`#[tokio::test(start_paused = true)]`); in a browser (`wasm32-unknown-unknown`)
//!   `std`'s and tokio's `Instant::now()` panic, and `web-time` reads
//!   `performance.now()` instead.
//! - `SystemTime` is `std`'s on native targets and `Date.now()` in a browser.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use tokio::time::Instant;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use web_time::Instant;

pub use web_time::{SystemTime, UNIX_EPOCH};
