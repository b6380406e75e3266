//! Timers on the JS thread's own event loop (Linux): an env's timeouts and backoff delays
//! in a map on its JS thread, and a `timerfd` set to the earliest of them in the loop's
//! epoll set (a libuv poll handle). The loop wakes when a timer is due, to the
//! microsecond, and runs it; no other thread takes part.
//!
//! The deadline thread (`hop::deadlines`) did this before, and does it still where this
//! cannot be had: on other systems, and in a runtime whose N-API has no libuv (the
//! symbols are looked up, not linked). Each timer it fired was a wake-up of that thread
//! and a post to the JS thread, and it woke each millisecond while short timers kept
//! coming. In B5 (2,000 timers a run, one every 0.2 ms) that thread ran 20-30 ms a run;
//! here it costs nothing, the JS thread waits less for a CPU (1.5-7.8 ms a steady run
//! against 11.7-20.5) and the median retry starts 0.11 ms late against 0.17. B5's tail
//! did not move (README, Performance).
//!
//! A timer costs no system call unless it is earlier than the one the `timerfd` is set
//! for: every execution's 30 s timeout is later than the first, and a cancelled timer is
//! only removed from the map (the `timerfd` then fires once for nothing and is set for
//! the next). The poll handle is unreferenced: timers never keep Node alive by
//! themselves (executions in flight do, through the threadsafe function). When the env
//! goes away, an async cleanup hook closes the handle and the `timerfd`, so a worker's
//! loop closes with nothing of ours open.

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use napi::sys;
use toolhost::{DeadlineKey, Deadlines};

use crate::hop::{self, Message};
use crate::js::{self, RawEnv};

/// `UV_POLL` of libuv's `uv_handle_type` and `UV_READABLE` of `uv_poll_event` (uv.h).
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type CloseCb = unsafe extern "C" fn(*mut c_void);

/// The libuv functions used, from the process (Node exports them to addons).
struct Uv {
    handle_size: unsafe extern "C" fn(c_int) -> usize,
    poll_init: unsafe extern "C" fn(*mut c_void, *mut c_void, c_int) -> c_int,
    poll_start: unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int,
    poll_stop: unsafe extern "C" fn(*mut c_void) -> c_int,
    close: unsafe extern "C" fn(*mut c_void, Option<CloseCb>),
    unref: unsafe extern "C" fn(*mut c_void),
}

impl Uv {
    /// Stops and closes a poll handle of ours; `on_closed` then closes `fd`, frees the
    /// handle and removes `hook` (unless null).
    ///
    /// # Safety
    /// `poll` is an initialized poll handle of ours on this thread's loop, not closing.
    unsafe fn close_poll(&self, poll: *mut c_void, fd: c_int, hook: sys::napi_async_cleanup_hook_handle) {
        // SAFETY: as the caller promises; `data` is the handle's first field (uv.h's
        // UV_HANDLE_FIELDS), which libuv leaves to its user. Stopping a handle that never
        // started does nothing.
        unsafe {
            (self.poll_stop)(poll);
            *(poll as *mut *mut c_void) = Box::into_raw(Box::new(Closing { fd, hook })).cast();
            (self.close)(poll, Some(on_closed));
        }
    }
}

fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        let sym = |name: &CStr| {
            // SAFETY: dlsym with RTLD_DEFAULT only looks a name up.
            let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        // SAFETY: each symbol has the C signature uv.h gives it (libuv 1.x).
        unsafe {
            Some(Uv {
                handle_size: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int) -> usize>(sym(c"uv_handle_size")?),
                poll_init: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void, *mut c_void, c_int) -> c_int>(sym(c"uv_poll_init")?),
                poll_start: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int>(sym(c"uv_poll_start")?),
                poll_stop: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void) -> c_int>(sym(c"uv_poll_stop")?),
                close: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void, Option<CloseCb>)>(sym(c"uv_close")?),
                unref: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void)>(sym(c"uv_unref")?),
            })
        }
    })
    .as_ref()
}

struct Timers {
    env: RawEnv,
    fd: c_int,
    /// A `uv_poll_t` (libuv's size for it, zeroed), watching `fd`.
    poll: *mut c_void,
    /// The async context each timer's JS runs in (a callback scope: microtasks and
    /// `process.nextTick` callbacks run after it, as after any event).
    context: sys::napi_async_context,
    entries: Deadlines<Message>,
    /// What the `timerfd` is set for, if anything.
    armed: Option<Instant>,
}

enum State {
    Untried,
    Unavailable,
    Ready(Timers),
    /// The env is gone: timers are refused (the engines are going too).
    Closed,
}

thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State::Untried) };
    /// Set by tests: new timers go to the deadline thread, as where this is not had.
    static BYPASSED: Cell<bool> = const { Cell::new(false) };
}

/// Sends this thread's new timers to the deadline thread (`on`), or back to the loop;
/// for tests of that path.
pub fn bypass(on: bool) {
    BYPASSED.with(|b| b.set(on));
}

impl Timers {
    fn arm(&mut self, at: Instant, now: Instant) {
        // Zero would disarm it: a timer already due is set a nanosecond ahead.
        let d = at.saturating_duration_since(now).max(Duration::from_nanos(1));
        // SAFETY: itimerspec is plain integers; all zero is a valid (disarmed) value.
        let mut spec: libc::itimerspec = unsafe { std::mem::zeroed() };
        spec.it_value.tv_sec = d.as_secs().min(i32::MAX as u64) as _;
        spec.it_value.tv_nsec = d.subsec_nanos() as _;
        // SAFETY: `fd` is our timerfd, `spec` a valid itimerspec.
        unsafe { libc::timerfd_settime(self.fd, 0, &spec, ptr::null_mut()) };
        self.armed = Some(at);
    }
}

/// Sets up the timers of `env`'s thread; `None` where libuv or a timerfd is missing.
fn open(env: RawEnv) -> Option<Timers> {
    let uv = uv()?;
    let mut uv_loop = ptr::null_mut();
    // SAFETY: a live env, on its JS thread.
    if unsafe { sys::napi_get_uv_event_loop(env, &mut uv_loop) } != sys::Status::napi_ok || uv_loop.is_null() {
        return None;
    }
    // SAFETY: plain system calls; every failure path below closes what was opened.
    unsafe {
        let fd = libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let poll = libc::calloc(1, (uv.handle_size)(UV_POLL));
        if poll.is_null() {
            libc::close(fd);
            return None;
        }
        if (uv.poll_init)(uv_loop.cast(), poll, fd) != 0 {
            libc::free(poll);
            libc::close(fd);
            return None;
        }
        if (uv.poll_start)(poll, UV_READABLE, on_readable) != 0 {
            uv.close_poll(poll, fd, ptr::null_mut());
            return None;
        }
        (uv.unref)(poll);
        let mut context = ptr::null_mut();
        let mut hook = ptr::null_mut();
        let ok = sys::Status::napi_ok;
        // Without a cleanup hook, a worker's loop would close with the handle open (Node
        // aborts then); without an async context, timers would have no callback scope.
        if sys::napi_async_init(env, ptr::null_mut(), js::string(env, "toolhost.timer"), &mut context) != ok
            || sys::napi_add_async_cleanup_hook(env, Some(on_cleanup), ptr::null_mut(), &mut hook) != ok
        {
            if !context.is_null() {
                sys::napi_async_destroy(env, context);
            }
            uv.close_poll(poll, fd, ptr::null_mut());
            return None;
        }
        Some(Timers { env, fd, poll, context, entries: Deadlines::default(), armed: None })
    }
}

/// Runs `message` on `env`'s JS thread once `after` has passed, unless cancelled first;
/// hands it back where this thread's loop cannot take timers.
pub fn schedule(env: RawEnv, after: Duration, message: Message) -> Result<DeadlineKey, Message> {
    if BYPASSED.with(Cell::get) {
        return Err(message);
    }
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if matches!(*s, State::Untried) {
            *s = open(env).map_or(State::Unavailable, State::Ready);
        }
        let State::Ready(t) = &mut *s else { return Err(message) };
        if t.env != env {
            return Err(message);
        }
        let now = Instant::now();
        let key = t.entries.insert(now, after, message);
        let at = key.at();
        if t.armed.is_none_or(|armed| at < armed) {
            t.arm(at, now);
        }
        Ok(key)
    })
}

/// Removes a timer that has not run yet.
pub fn cancel(key: DeadlineKey) {
    let _ = STATE.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            if let State::Ready(t) = &mut *s {
                t.entries.remove(&key);
            }
        }
    });
}

/// Timers waiting on this thread (tests and benchmarks).
pub fn pending() -> usize {
    STATE.with(|s| match &*s.borrow() {
        State::Ready(t) => t.entries.len(),
        _ => 0,
    })
}

/// The `timerfd` is readable: runs the timers that are due, each in its own callback
/// scope, after setting the `timerfd` for the next.
unsafe extern "C" fn on_readable(_poll: *mut c_void, _status: c_int, _events: c_int) {
    let Some((env, context, due)) = take_due() else { return };
    let fired = if hop::trace::on() { hop::trace::now() } else { f64::NAN };
    for mut message in due {
        if !hop::env_alive(env) {
            return;
        }
        if let Message::Timer { trace: Some(t), .. } = &mut message {
            t.fired = fired;
        }
        // SAFETY: on the env's JS thread, outside any JS frame (a libuv callback); the
        // scopes are closed in reverse order, a panic included (it must not unwind into
        // libuv, nor cost the timers after it). Node ignores the resource object.
        unsafe {
            let mut handles = ptr::null_mut();
            sys::napi_open_handle_scope(env, &mut handles);
            let mut scope = ptr::null_mut();
            sys::napi_open_callback_scope(env, ptr::null_mut(), context, &mut scope);
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::engine_core::on_message(env, message)));
            sys::napi_close_callback_scope(env, scope);
            sys::napi_close_handle_scope(env, handles);
        }
    }
}

/// Takes the timers that are due out of the map and sets the `timerfd` for the next.
fn take_due() -> Option<(RawEnv, sys::napi_async_context, Vec<Message>)> {
    STATE.with(|s| {
        let mut s = s.try_borrow_mut().ok()?;
        let State::Ready(t) = &mut *s else { return None };
        let mut expirations = 0u64;
        // SAFETY: reads the 8-byte expiration count of our non-blocking timerfd.
        unsafe { libc::read(t.fd, (&mut expirations as *mut u64).cast(), 8) };
        let now = Instant::now();
        let due = t.entries.take_due(now);
        t.armed = None;
        if let Some(next) = t.entries.next() {
            t.arm(next, now);
        }
        Some((t.env, t.context, due))
    })
}

/// What closing the poll handle has left to do, in its `data`.
struct Closing {
    fd: c_int,
    hook: sys::napi_async_cleanup_hook_handle,
}

unsafe extern "C" fn on_cleanup(hook: sys::napi_async_cleanup_hook_handle, _data: *mut c_void) {
    let timers = STATE.with(|s| match std::mem::replace(&mut *s.borrow_mut(), State::Closed) {
        State::Ready(t) => Some(t),
        _ => None,
    });
    let (Some(t), Some(uv)) = (timers, uv()) else {
        // SAFETY: the handle Node gave this hook.
        unsafe { sys::napi_remove_async_cleanup_hook(hook) };
        return;
    };
    // SAFETY: the context and the handle are ours and open. The messages still waiting
    // go with the map.
    unsafe {
        sys::napi_async_destroy(t.env, t.context);
        uv.close_poll(t.poll, t.fd, hook);
    }
}

unsafe extern "C" fn on_closed(poll: *mut c_void) {
    // SAFETY: `data` holds the Closing boxed above; libuv is done with the handle.
    unsafe {
        let closing = Box::from_raw(*(poll as *mut *mut Closing));
        libc::close(closing.fd);
        libc::free(poll);
        if !closing.hook.is_null() {
            sys::napi_remove_async_cleanup_hook(closing.hook);
        }
    }
}
