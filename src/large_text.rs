//! Large argument text handed from the JS thread to a worker with as little JS-thread
//! work as N-API allows.
//!
//! `napi_get_value_string_utf8` makes V8 count and then encode the string, both on the
//! JS thread: about 0.55 ms for 1 MB of JSON in B4, more than the rest of the call
//! around it. Copying the UTF-16 code units instead is a widening `memcpy` for
//! V8's one-byte strings (about 30 µs for 1 MB) and exact for every string, so the
//! UTF-8 encoding moves to the worker. The copies go into buffers that are reused, so
//! the JS thread does not fault in fresh pages for each call.

use std::ptr;
use std::sync::Mutex;

use napi::sys;

use crate::js::{RawEnv, RawValue};

/// Buffers kept for reuse, and the largest one kept (in code units): at most
/// 2 × 8 MB stay allocated between calls.
const POOL_BUFFERS: usize = 2;
const POOL_MAX_UNITS: usize = 4 << 20;

static POOL: Mutex<Vec<Vec<u16>>> = Mutex::new(Vec::new());

/// The length of a JS string in UTF-16 code units (O(1) in V8).
pub fn len(env: RawEnv, s: RawValue) -> usize {
    let mut len = 0usize;
    unsafe { sys::napi_get_value_string_utf16(env, s, ptr::null_mut(), 0, &mut len) };
    len
}

/// The code units of a JS string of `len` units, in a buffer from the pool.
pub fn copy(env: RawEnv, s: RawValue, len: usize) -> Vec<u16> {
    let mut buf = POOL.lock().map(|mut p| p.pop()).ok().flatten().unwrap_or_default();
    buf.clear();
    buf.reserve(len + 1);
    let mut written = 0usize;
    // SAFETY: the buffer has room for `len + 1` units; N-API writes at most that many
    // (the string's units and a terminating 0) and reports how many string units it wrote.
    unsafe {
        sys::napi_get_value_string_utf16(env, s, buf.as_mut_ptr(), len + 1, &mut written);
        buf.set_len(written.min(len));
    }
    buf
}

/// Decodes code units copied by [`copy`] (on any thread). Lone surrogates become
/// U+FFFD, as `napi_get_value_string_utf8` does.
pub fn to_string(units: &[u16]) -> String {
    // Branch-free OR over all units: the compiler vectorises it, and JSON text is
    // nearly always ASCII, where narrowing is the whole conversion.
    if units.iter().fold(0u16, |acc, &u| acc | u) < 0x80 {
        let bytes: Vec<u8> = units.iter().map(|&u| u as u8).collect();
        String::from_utf8(bytes).expect("ASCII is UTF-8")
    } else {
        String::from_utf16_lossy(units)
    }
}

/// Returns a buffer from [`copy`] to the pool.
pub fn recycle(units: Vec<u16>) {
    if units.capacity() <= POOL_MAX_UNITS {
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() < POOL_BUFFERS {
                pool.push(units);
            }
        }
    }
}
