//! Loads `runtime.js` once per env and keeps references to its functions.

use std::cell::RefCell;
use std::ffi::CStr;
use std::ptr;
use std::rc::Rc;

use napi::sys;

use crate::js::{self, JsRef, RawEnv, RawValue};

const SOURCE: &str = include_str!("runtime.js");

/// The functions of `runtime.js`.
pub struct Runtime {
    pub execute_tool_calls: JsRef,
    pub ai_sdk_tools: JsRef,
    pub with_metadata: JsRef,
    pub run_chain: JsRef,
    pub call_logger: JsRef,
    pub log_starting: JsRef,
    pub log_completed: JsRef,
    pub emit_started: JsRef,
    pub emit_validating: JsRef,
    pub emit_executing: JsRef,
    pub emit_retrying: JsRef,
    pub emit_succeeded: JsRef,
    pub emit_failed: JsRef,
    pub emit_cancelled: JsRef,
    pub make_context: JsRef,
    pub abort_context: JsRef,
    pub watch: JsRef,
    pub listen_signal: JsRef,
    pub unlisten_signal: JsRef,
    pub record: JsRef,
    pub outcome: JsRef,
    pub tool_error: JsRef,
    pub abort_error: JsRef,
    pub timeout_error: JsRef,
    pub transient_error: JsRef,
    pub permanent_error: JsRef,
    pub emitter: JsRef,
    pub add_listener: JsRef,
    pub remove_listener: JsRef,
    pub emit: JsRef,
    pub parse: JsRef,
    pub decode_tape: JsRef,
    pub keys: JsRef,
    pub runner: JsRef,
    pub settled: JsRef,
    pub then: JsRef,
}

thread_local! {
    static RUNTIME: RefCell<Option<Rc<Runtime>>> = const { RefCell::new(None) };
}

unsafe extern "C" fn notify_cb(env: RawEnv, info: sys::napi_callback_info) -> RawValue {
    let mut argc = 6usize;
    let mut argv = [ptr::null_mut(); 6];
    unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    let kind = js::get_number(env, argv[0]).unwrap_or(-1.0) as i32;
    let manager = js::get_number(env, argv[1]).unwrap_or(0.0) as u32;
    let key = js::get_number(env, argv[2]).unwrap_or(0.0) as u64;
    let attempt = js::get_number(env, argv[3]).unwrap_or(0.0) as u32;
    let ok = js::get_bool(env, argv[4]).unwrap_or(false);
    // A panic must not unwind into Node (that aborts the process).
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match kind {
        0 => crate::manager::on_settled(env, manager, key, attempt, ok, argv[5]),
        1 => crate::manager::on_signal_aborted(env, manager, key),
        2 => crate::manager::on_run_soon(env, manager),
        _ => {}
    }));
    ptr::null_mut()
}

/// This env's runtime, loaded on first use.
pub fn runtime(env: RawEnv) -> napi::Result<Rc<Runtime>> {
    if let Some(rt) = RUNTIME.with(|r| r.borrow().clone()) {
        return Ok(rt);
    }
    crate::hop::hop(env);
    let mut factory = ptr::null_mut();
    js::check(unsafe { sys::napi_run_script(env, js::string(env, SOURCE), &mut factory) })?;
    let mut notify = ptr::null_mut();
    js::check(unsafe {
        sys::napi_create_function(env, c"notify".as_ptr(), 6, Some(notify_cb), ptr::null_mut(), &mut notify)
    })?;
    let mut format_replies = ptr::null_mut();
    js::check(unsafe {
        sys::napi_create_function(
            env,
            c"formatReplies".as_ptr(),
            13,
            Some(crate::providers::format_replies_cb),
            ptr::null_mut(),
            &mut format_replies,
        )
    })?;
    let exports = js::call(env, js::undefined(env), factory, &[notify, format_replies])
        .map_err(|_| napi::Error::from_reason("toolhost: loading runtime.js failed"))?;
    let f = |name: &CStr| JsRef::new(env, js::get(env, exports, name));
    let rt = Rc::new(Runtime {
        execute_tool_calls: f(c"executeToolCalls"),
        ai_sdk_tools: f(c"aiSdkTools"),
        with_metadata: f(c"withMetadata"),
        run_chain: f(c"runChain"),
        call_logger: f(c"callLogger"),
        log_starting: f(c"logStarting"),
        log_completed: f(c"logCompleted"),
        emit_started: f(c"emitStarted"),
        emit_validating: f(c"emitValidating"),
        emit_executing: f(c"emitExecuting"),
        emit_retrying: f(c"emitRetrying"),
        emit_succeeded: f(c"emitSucceeded"),
        emit_failed: f(c"emitFailed"),
        emit_cancelled: f(c"emitCancelled"),
        make_context: f(c"makeContext"),
        abort_context: f(c"abortContext"),
        watch: f(c"watch"),
        listen_signal: f(c"listenSignal"),
        unlisten_signal: f(c"unlistenSignal"),
        record: f(c"record"),
        outcome: f(c"outcome"),
        tool_error: f(c"toolError"),
        abort_error: f(c"abortError"),
        timeout_error: f(c"timeoutError"),
        transient_error: f(c"transientError"),
        permanent_error: f(c"permanentError"),
        emitter: f(c"emitter"),
        add_listener: f(c"addListener"),
        remove_listener: f(c"removeListener"),
        emit: f(c"emit"),
        parse: f(c"parse"),
        decode_tape: f(c"decodeTape"),
        keys: f(c"keys"),
        runner: f(c"runner"),
        settled: f(c"settled"),
        then: f(c"then"),
    });
    RUNTIME.with(|r| *r.borrow_mut() = Some(rt.clone()));
    Ok(rt)
}

impl Runtime {
    /// Calls one of the runtime's functions; a throw comes back as `Err`.
    pub fn call(&self, env: RawEnv, f: &JsRef, args: &[RawValue]) -> Result<RawValue, RawValue> {
        js::call(env, js::undefined(env), f.value(env), args)
    }
}

/// An event target: listener lists in JS, with per-type counts Rust reads directly.
pub struct Emitter {
    object: JsRef,
    counts: *const u32,
    _counts_ref: JsRef,
}

impl Emitter {
    pub fn new(env: RawEnv) -> napi::Result<Self> {
        let rt = runtime(env)?;
        let object = rt.call(env, &rt.emitter, &[]).map_err(|_| napi::Error::from_reason("creating an emitter failed"))?;
        let counts_array = js::get(env, object, c"counts");
        let mut data = ptr::null_mut();
        let mut length = 0usize;
        let mut kind = 0;
        let mut buffer = ptr::null_mut();
        let mut offset = 0usize;
        js::check(unsafe {
            sys::napi_get_typedarray_info(env, counts_array, &mut kind, &mut length, &mut data, &mut buffer, &mut offset)
        })?;
        Ok(Self { object: JsRef::new(env, object), counts: data as *const u32, _counts_ref: JsRef::new(env, counts_array) })
    }

    /// Number of listeners for slot `i` of `runtime.js`'s TYPES.
    pub fn count(&self, slot: usize) -> u32 {
        debug_assert!(slot < 16);
        // SAFETY: the Uint32Array(16) is kept alive by `_counts_ref` and never detached.
        unsafe { std::ptr::read_volatile(self.counts.add(slot)) }
    }

    pub fn add(&self, env: RawEnv, event_type: RawValue, listener: RawValue, detail_only: bool) -> Result<RawValue, RawValue> {
        let rt = runtime(env).map_err(|_| js::undefined(env))?;
        rt.call(env, &rt.add_listener, &[self.object.value(env), event_type, listener, js::boolean(env, detail_only)])
    }

    pub fn remove(&self, env: RawEnv, event_type: RawValue, listener: RawValue) -> bool {
        let Ok(rt) = runtime(env) else { return false };
        rt.call(env, &rt.remove_listener, &[self.object.value(env), event_type, listener, js::boolean(env, false)])
            .ok()
            .and_then(|v| js::get_bool(env, v))
            .unwrap_or(false)
    }

    pub fn object(&self, env: RawEnv) -> RawValue {
        self.object.value(env)
    }

    pub fn emit(&self, env: RawEnv, event_type: &str, detail: RawValue, target: RawValue) {
        if let Ok(rt) = runtime(env) {
            let _ = rt.call(env, &rt.emit, &[self.object.value(env), js::string(env, event_type), detail, target]);
        }
    }
}
