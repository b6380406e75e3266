//! Thin safe-ish wrappers over the raw N-API calls the hot path makes.
//!
//! Everything here runs on the JS thread with a live `napi_env`. The hot path uses raw
//! calls because each napi-rs convenience layer adds a conversion or an allocation, and
//! FACTS.md measured that the whole budget per call is a few microseconds.

use std::ffi::c_char;
use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, Error, Result, Status, ValueType};

pub type RawEnv = sys::napi_env;
pub type RawValue = sys::napi_value;

/// A JS value returned from a `#[napi]` method as it is.
#[derive(Clone, Copy)]
pub struct Js(pub RawValue);

impl Js {
    /// `undefined` (a null `napi_value` returned from a callback is `undefined`).
    pub fn undefined() -> Self {
        Js(ptr::null_mut())
    }
}

impl Js {
    pub fn empty_string(env: RawEnv) -> Self {
        Js(string(env, ""))
    }
}

impl ToNapiValue for Js {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        Ok(val.0)
    }
}

impl FromNapiValue for Js {
    unsafe fn from_napi_value(_env: sys::napi_env, v: sys::napi_value) -> Result<Self> {
        Ok(Js(v))
    }
}

impl TypeName for Js {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ValidateNapiValue for Js {}

#[inline]
pub fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::from(status), format!("N-API call failed with status {status}")))
    }
}

pub fn type_of(env: RawEnv, v: RawValue) -> sys::napi_valuetype {
    if v.is_null() {
        return sys::ValueType::napi_undefined;
    }
    let mut t = 0;
    unsafe { sys::napi_typeof(env, v, &mut t) };
    t
}

pub fn undefined(env: RawEnv) -> RawValue {
    let mut v = ptr::null_mut();
    unsafe { sys::napi_get_undefined(env, &mut v) };
    v
}

pub fn string(env: RawEnv, s: &str) -> RawValue {
    let mut v = ptr::null_mut();
    // ASCII is also Latin-1, which V8 copies as is; the UTF-8 path decodes and
    // validates every byte first (about half the cost of a short id or message).
    if s.is_ascii() {
        unsafe { sys::napi_create_string_latin1(env, s.as_ptr() as *const c_char, s.len() as isize, &mut v) };
    } else {
        unsafe { sys::napi_create_string_utf8(env, s.as_ptr() as *const c_char, s.len() as isize, &mut v) };
    }
    v
}

pub fn number(env: RawEnv, n: f64) -> RawValue {
    let mut v = ptr::null_mut();
    unsafe { sys::napi_create_double(env, n, &mut v) };
    v
}

pub fn array(env: RawEnv, items: impl IntoIterator<Item = RawValue>) -> RawValue {
    let mut arr = ptr::null_mut();
    unsafe { sys::napi_create_array(env, &mut arr) };
    for (i, item) in items.into_iter().enumerate() {
        unsafe { sys::napi_set_element(env, arr, i as u32, item) };
    }
    arr
}

pub fn int32_array(env: RawEnv, data: &[i32]) -> RawValue {
    typed_array(env, data, sys::TypedarrayType::int32_array)
}

pub fn float64_array(env: RawEnv, data: &[f64]) -> RawValue {
    typed_array(env, data, sys::TypedarrayType::float64_array)
}

/// A typed array holding a copy of `data`. (An external buffer over `data` itself
/// would save the copy, about 50 µs for B4's tape, but V8 counts external memory
/// towards full collections: B4 went from 1 to 81 mark-compacts per 1,000 calls.)
fn typed_array<T: Copy>(env: RawEnv, data: &[T], kind: sys::napi_typedarray_type) -> RawValue {
    let bytes = std::mem::size_of_val(data);
    let (mut buffer, mut copy) = (ptr::null_mut(), ptr::null_mut());
    let mut array = ptr::null_mut();
    if unsafe { sys::napi_create_arraybuffer(env, bytes, &mut copy, &mut buffer) } == sys::Status::napi_ok {
        if bytes > 0 {
            // SAFETY: `copy` has room for `bytes` bytes, and `data` holds that many.
            unsafe { ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), copy.cast::<u8>(), bytes) };
        }
        unsafe { sys::napi_create_typedarray(env, kind, data.len(), buffer, 0, &mut array) };
    }
    if array.is_null() { undefined(env) } else { array }
}

pub fn get_string(env: RawEnv, v: RawValue) -> Option<String> {
    if type_of(env, v) != sys::ValueType::napi_string {
        return None;
    }
    // Most strings read here are short (names, keys, values): one call into a stack
    // buffer. A cut can only happen in the last 4 bytes (a code point is written whole
    // or not at all), so fewer bytes written than that means the string fit.
    let mut small = [0u8; 256];
    let mut written = 0usize;
    unsafe { sys::napi_get_value_string_utf8(env, v, small.as_mut_ptr() as *mut c_char, small.len(), &mut written) };
    if written + 4 < small.len() {
        let bytes = &small[..written];
        return Some(std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes).into_owned(), str::to_owned));
    }
    let mut len = 0usize;
    unsafe { sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len) };
    let mut buf = vec![0u8; len + 1];
    let mut written = 0usize;
    unsafe { sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr() as *mut c_char, len + 1, &mut written) };
    buf.truncate(written);
    // N-API hands out valid UTF-8 (lone surrogates become U+FFFD).
    Some(String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Takes the pending exception, if any.
pub fn take_exception(env: RawEnv) -> Option<RawValue> {
    let mut pending = false;
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if !pending {
        return None;
    }
    let mut e = ptr::null_mut();
    unsafe { sys::napi_get_and_clear_last_exception(env, &mut e) };
    Some(e)
}

/// Calls `f(args...)` with `this = recv`; a throw comes back as `Err(exception)`.
pub fn call(env: RawEnv, recv: RawValue, f: RawValue, args: &[RawValue]) -> std::result::Result<RawValue, RawValue> {
    let mut out = ptr::null_mut();
    let status = unsafe { sys::napi_call_function(env, recv, f, args.len(), args.as_ptr(), &mut out) };
    if status == sys::Status::napi_ok {
        Ok(out)
    } else {
        Err(take_exception(env).unwrap_or_else(|| undefined(env)))
    }
}

/// A strong reference to a JS value, deleted on drop on the thread that made it.
pub struct JsRef {
    env: RawEnv,
    raw: sys::napi_ref,
    /// Primitives cannot be referenced before Node-API 10: they live in a one-element array.
    boxed: bool,
    thread: std::thread::ThreadId,
}

// SAFETY: the reference is only read and deleted on its own thread (checked in `Drop`
// and `value`); elsewhere it is only moved around.
unsafe impl Send for JsRef {}
unsafe impl Sync for JsRef {}

impl JsRef {
    pub fn new(env: RawEnv, v: RawValue) -> Self {
        let boxed = !matches!(
            type_of(env, v),
            sys::ValueType::napi_object | sys::ValueType::napi_function | sys::ValueType::napi_symbol | sys::ValueType::napi_external
        );
        let target = if boxed { array(env, [v]) } else { v };
        let mut raw = ptr::null_mut();
        unsafe { sys::napi_create_reference(env, target, 1, &mut raw) };
        Self { env, raw, boxed, thread: std::thread::current().id() }
    }

    pub fn value(&self, env: RawEnv) -> RawValue {
        debug_assert_eq!(self.thread, std::thread::current().id());
        let mut v = ptr::null_mut();
        unsafe { sys::napi_get_reference_value(env, self.raw, &mut v) };
        if v.is_null() {
            return undefined(env);
        }
        if self.boxed {
            let mut inner = ptr::null_mut();
            unsafe { sys::napi_get_element(env, v, 0, &mut inner) };
            return inner;
        }
        v
    }
}

impl Drop for JsRef {
    fn drop(&mut self) {
        // Deleting from another thread is undefined behaviour; leaking is not.
        if std::thread::current().id() == self.thread && crate::hop::env_alive(self.env) {
            unsafe { sys::napi_delete_reference(self.env, self.raw) };
        }
    }
}
