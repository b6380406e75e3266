//! The only ways back onto the JS thread from elsewhere: one threadsafe function per
//! env, fed by the parsing workers, the journal thread and, where the JS thread's own
//! loop cannot take timers (`loop_timers`: Linux only), the deadline thread (timeouts
//! and backoff delays).
//!
//! The threadsafe function is weak except while executions are in flight, so a script
//! whose work is done exits at once, and one that awaits a backoff delay or a handler
//! stays alive until it settles. When Node tears the env down, the function is marked
//! closed under a lock before any later post can reach it, so a timer firing during
//! exit is dropped instead of touching a dead env, and the env's timers still waiting
//! are removed at once: a worker terminated with executions backing off must not leave
//! their timers (and what they hold) behind for the length of the delay.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex, OnceLock};

use napi::sys;
use toolhost::DeadlineTimer;

use crate::js::{self, RawEnv};

/// Work for the JS thread.
pub enum Message {
    /// A timer the engine asked for passed (see `toolhost::host::TimerKind`). `trace` is
    /// when it was due and when it fired, while timers are traced ([`trace`]).
    Timer { engine: u32, key: u64, attempt: u32, kind: toolhost::host::TimerKind, trace: Option<Box<TimerTrace>> },
    /// Large argument text was parsed and validated on a worker thread.
    ArgumentsReady { engine: u32, ticket: u64, arguments: Box<crate::engine_core::ParsedArguments> },
    /// The journal thread answered: its answers are in the engine's inbox
    /// (`toolhost::journal::inbox`).
    Journal { engine: u32 },
}

/// Where a timer's time went, in ms since [`trace::now`]'s anchor: armed on the JS
/// thread, due, fired (the deadline thread handed it over), received on the JS thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerTrace {
    pub armed: f64,
    pub due: f64,
    pub fired: f64,
}

/// Timer tracing, for the benchmark's B5 split (`traceTimers`): off unless asked for,
/// and then one check per timer armed and fired.
pub mod trace {
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    static ON: AtomicBool = AtomicBool::new(false);

    /// A timer received: execution id, attempt, kind, armed/due/fired, received.
    pub type Received = (String, u32, &'static str, super::TimerTrace, f64);

    thread_local! {
        /// One entry per timer received: execution id, attempt, kind, armed, due, fired, received.
        pub static RECEIVED: RefCell<Vec<Received>> = const { RefCell::new(Vec::new()) };
    }

    fn anchor() -> Instant {
        static ANCHOR: OnceLock<Instant> = OnceLock::new();
        *ANCHOR.get_or_init(Instant::now)
    }

    pub fn on() -> bool {
        ON.load(Ordering::Relaxed)
    }

    pub fn set(on: bool) {
        ON.store(on, Ordering::Relaxed);
    }

    /// Milliseconds since the anchor.
    pub fn now() -> f64 {
        anchor().elapsed().as_secs_f64() * 1000.0
    }

    /// A timer armed now for `after`, when tracing.
    pub fn armed(after: Duration) -> Option<Box<super::TimerTrace>> {
        on().then(|| {
            let armed = now();
            Box::new(super::TimerTrace { armed, due: armed + after.as_secs_f64() * 1000.0, fired: f64::NAN })
        })
    }
}

struct TsfnPtr(sys::napi_threadsafe_function);
// SAFETY: N-API allows calling a threadsafe function from any thread; we guard its
// lifetime with the mutex in `Hop`.
unsafe impl Send for TsfnPtr {}

pub struct Hop {
    tsfn: Mutex<Option<TsfnPtr>>,
}

impl Hop {
    /// Queues a message for the JS thread. False when it could not be queued (the env
    /// is going or gone): the message is dropped.
    pub fn post(&self, message: Message) -> bool {
        let guard = self.tsfn.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tsfn) = guard.as_ref() {
            let data = Box::into_raw(Box::new(message));
            let status = unsafe { sys::napi_call_threadsafe_function(tsfn.0, data as *mut c_void, sys::ThreadsafeFunctionCallMode::nonblocking) };
            if status == sys::Status::napi_ok {
                return true;
            }
            drop(unsafe { Box::from_raw(data) });
        }
        false
    }
}

thread_local! {
    static HOP: RefCell<Option<Arc<Hop>>> = const { RefCell::new(None) };
    static IN_FLIGHT: Cell<usize> = const { Cell::new(0) };
    static ALIVE: Cell<usize> = const { Cell::new(0) };
}

/// Whether `env` is this thread's live env (references may be deleted).
pub fn env_alive(env: RawEnv) -> bool {
    ALIVE.with(|a| a.get() == env as usize)
}

unsafe extern "C" fn on_env_cleanup(_arg: *mut c_void) {
    ALIVE.with(|a| a.set(0));
}

unsafe extern "C" fn on_tsfn_finalize(_env: RawEnv, data: *mut c_void, _hint: *mut c_void) {
    let hop = unsafe { &*(data as *const Hop) };
    hop.tsfn.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(deadlines) = DEADLINES.get() {
        deadlines.cancel_where(|(h, _)| ptr::eq(Arc::as_ptr(h), hop));
    }
    drop(unsafe { Arc::from_raw(data as *const Hop) });
}

unsafe extern "C" fn on_message(env: RawEnv, _js_cb: sys::napi_value, _ctx: *mut c_void, data: *mut c_void) {
    let message = unsafe { Box::from_raw(data as *mut Message) };
    if env.is_null() {
        return;
    }
    // A panic must not unwind into Node (that aborts the process).
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::engine_core::on_message(env, *message)));
}

/// This thread's hop, created on first use.
pub fn hop(env: RawEnv) -> Arc<Hop> {
    HOP.with(|slot| {
        if let Some(h) = slot.borrow().as_ref() {
            return h.clone();
        }
        ALIVE.with(|a| a.set(env as usize));
        unsafe { sys::napi_add_env_cleanup_hook(env, Some(on_env_cleanup), ptr::null_mut()) };
        let hop = Arc::new(Hop { tsfn: Mutex::new(None) });
        let mut tsfn = ptr::null_mut();
        let name = js::string(env, "toolhost");
        let finalize_data = Arc::into_raw(hop.clone()) as *mut c_void;
        let status = unsafe {
            sys::napi_create_threadsafe_function(
                env,
                ptr::null_mut(),
                ptr::null_mut(),
                name,
                0,
                1,
                finalize_data,
                Some(on_tsfn_finalize),
                ptr::null_mut(),
                Some(on_message),
                &mut tsfn,
            )
        };
        if status == sys::Status::napi_ok {
            unsafe { sys::napi_unref_threadsafe_function(env, tsfn) };
            *hop.tsfn.lock().unwrap_or_else(|e| e.into_inner()) = Some(TsfnPtr(tsfn));
        } else {
            drop(unsafe { Arc::from_raw(finalize_data as *const Hop) });
        }
        *slot.borrow_mut() = Some(hop.clone());
        hop
    })
}

/// An execution started: keep Node alive until it ends.
pub fn retain(env: RawEnv) {
    let n = IN_FLIGHT.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    if n == 1 {
        with_tsfn(env, |t| unsafe { sys::napi_ref_threadsafe_function(env, t) });
    }
}

/// An execution ended.
pub fn release(env: RawEnv) {
    let n = IN_FLIGHT.with(|c| {
        c.set(c.get().saturating_sub(1));
        c.get()
    });
    if n == 0 {
        with_tsfn(env, |t| unsafe { sys::napi_unref_threadsafe_function(env, t) });
    }
}

fn with_tsfn(env: RawEnv, f: impl FnOnce(sys::napi_threadsafe_function) -> sys::napi_status) {
    let hop = hop(env);
    let guard = hop.tsfn.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = guard.as_ref() {
        f(t.0);
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolhost-timers")
            .enable_time()
            .build()
            .expect("building the toolhost timer runtime")
    })
}

/// Runs blocking work (parsing and validating large arguments) off the JS thread.
pub fn run_blocking(work: impl FnOnce() + Send + 'static) {
    runtime().spawn_blocking(work);
}

/// A timer armed by [`schedule_timer`], for [`cancel_timer`].
#[derive(Clone, Copy, Debug)]
pub enum TimerHandle {
    /// On this thread's event loop (`loop_timers`).
    #[cfg(target_os = "linux")]
    Loop(toolhost::DeadlineKey),
    /// On the deadline thread.
    Thread(toolhost::DeadlineKey),
}

/// Arms a timer whose `message` runs on `env`'s JS thread once `after` has passed: on
/// the thread's own event loop where it can (`loop_timers`), else on the deadline thread.
pub fn schedule_timer(env: RawEnv, hop: &Arc<Hop>, after: std::time::Duration, message: Message) -> TimerHandle {
    #[cfg(target_os = "linux")]
    let message = match crate::loop_timers::schedule(env, after, message) {
        Ok(key) => return TimerHandle::Loop(key),
        Err(message) => message,
    };
    #[cfg(not(target_os = "linux"))]
    let _ = env;
    TimerHandle::Thread(deadlines().schedule(after, (hop.clone(), message)))
}

/// Cancels a timer that has not fired yet.
pub fn cancel_timer(timer: TimerHandle) {
    match timer {
        #[cfg(target_os = "linux")]
        TimerHandle::Loop(key) => crate::loop_timers::cancel(key),
        TimerHandle::Thread(key) => {
            deadlines().cancel(key);
        }
    }
}

/// Timers waiting on this thread's loop, and on the deadline thread (-1: never started).
pub fn pending_timers() -> [i64; 2] {
    #[cfg(target_os = "linux")]
    let on_loop = crate::loop_timers::pending() as i64;
    #[cfg(not(target_os = "linux"))]
    let on_loop = 0;
    [on_loop, DEADLINES.get().map_or(-1, |d| d.pending() as i64)]
}

static DEADLINES: OnceLock<DeadlineTimer<(Arc<Hop>, Message)>> = OnceLock::new();

/// The timeout thread, shared by every env of the process whose loop cannot take timers
/// (see `schedule_timer`); started when first needed.
fn deadlines() -> &'static DeadlineTimer<(Arc<Hop>, Message)> {
    DEADLINES.get_or_init(|| {
        DeadlineTimer::new(|due: Vec<(Arc<Hop>, Message)>| {
            let fired = if trace::on() { trace::now() } else { f64::NAN };
            for (hop, mut message) in due {
                if let Message::Timer { trace: Some(t), .. } = &mut message {
                    t.fired = fired;
                }
                hop.post(message);
            }
        })
    })
}
