//! Timeouts and backoff delays on one background thread, cheap enough for the hot path.
//!
//! Scheduling takes a lock and inserts into a `BTreeMap`; the thread is only woken when
//! a new deadline is earlier than the moment it will wake by itself, so a steady stream
//! of calls with the same timeout wakes nothing. Cancelling removes the entry. When
//! deadlines pass, the thread hands their items to the `on_fire` callback (the Node
//! binding, where it uses this thread rather than its JS thread's event loop, that is
//! off Linux, forwards them to the JS thread: the only hop a timer costs, and only when
//! it fires).
//!
//! Waking a sleeping thread costs its waker 10-12 µs on a 2-core VM (measured: a
//! `Condvar::notify_one` to a waiting thread, an inter-processor interrupt), more than a
//! whole tool call, and short timers (backoff delays of a few ms) are nearly always
//! earlier than what the thread sleeps towards (the 30 s timeouts). So once a short
//! timer is scheduled, the thread wakes by itself every [`POLL_STEP`] for [`POLL_FOR`]:
//! a short timer then needs no wake unless it is due within one step, and the schedulers
//! (the JS thread) pay nothing. The polling costs this thread ~1,000 wake-ups a second,
//! and only while short timers keep coming.
//!
//! On Linux the thread asks the scheduler for a short time slice (0.1 ms, against the
//! 0.75-3 ms other threads get; EEVDF, kernel 6.12 and later) when it starts. A thread
//! that wakes with a short slice runs at once rather than after what holds its CPU has
//! used up its own slice, and on 2 cores what holds it is often V8 compiling or
//! collecting: B5's timer part (the deadline thread firing after it was due) had its
//! longest delays go from 3.8-3.9 ms to 0.8-1.0 ms (two `b5-split` runs each way), its
//! p99 from 0.27-0.29 to 0.15-0.17 ms. The thread keeps its policy and nice value; an
//! older kernel ignores the request, and a refused one changes nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A timer this short or shorter starts the polling.
pub const SHORT: Duration = Duration::from_millis(50);
/// How often the thread wakes by itself while polling.
pub const POLL_STEP: Duration = Duration::from_millis(1);
/// How long it keeps polling after the last short timer.
pub const POLL_FOR: Duration = Duration::from_millis(100);

/// Identifies a scheduled deadline for [`DeadlineTimer::cancel`] (and [`Deadlines::remove`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeadlineKey(Instant, u64);

/// Deadlines in order, with no thread or clock of their own: what [`DeadlineTimer`]
/// keeps under its lock, and what the Node addon keeps on its JS thread where timers
/// wait on the event loop.
pub struct Deadlines<T> {
    entries: BTreeMap<DeadlineKey, T>,
    next_seq: u64,
}

impl<T> Default for Deadlines<T> {
    fn default() -> Self {
        Self { entries: BTreeMap::new(), next_seq: 0 }
    }
}

impl<T> Deadlines<T> {
    /// Adds `item`, due `after` from `now`.
    pub fn insert(&mut self, now: Instant, after: Duration, item: T) -> DeadlineKey {
        // A deadline past what an Instant holds is as good as never: 100 years.
        let at = now.checked_add(after).unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400));
        let key = DeadlineKey(at, self.next_seq);
        self.next_seq += 1;
        self.entries.insert(key, item);
        key
    }

    /// Removes a deadline; its item when it was still there.
    pub fn remove(&mut self, key: &DeadlineKey) -> Option<T> {
        self.entries.remove(key)
    }

    /// Removes and returns the items due at `now`, earliest first.
    pub fn take_due(&mut self, now: Instant) -> Vec<T> {
        let mut due = Vec::new();
        while let Some(entry) = self.entries.first_entry() {
            if entry.key().0 > now {
                break;
            }
            due.push(entry.remove());
        }
        due
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<Instant> {
        self.entries.first_key_value().map(|(k, _)| k.0)
    }

    /// Keeps the items `keep` picks; returns how many went.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, item| keep(item));
        before - self.entries.len()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl DeadlineKey {
    /// When it is due.
    pub fn at(&self) -> Instant {
        self.0
    }
}

/// What the thread did, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeadlineStats {
    /// Times a scheduler woke the thread.
    pub woken: u64,
    /// Times the thread woke (by itself or woken) and looked at its deadlines.
    pub rounds: u64,
}

struct State<T> {
    entries: Deadlines<T>,
    /// When the thread wakes by itself; `None` while it waits for work.
    wakes_at: Option<Instant>,
    /// The thread polls until then (see the module's doc).
    poll_until: Option<Instant>,
    stats: DeadlineStats,
    shutdown: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    wake: Condvar,
}

/// A timer thread. Dropping it stops the thread.
pub struct DeadlineTimer<T: Send + 'static> {
    shared: Arc<Shared<T>>,
}

impl<T: Send + 'static> DeadlineTimer<T> {
    pub fn new(on_fire: impl Fn(Vec<T>) + Send + 'static) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                entries: Deadlines::default(),
                wakes_at: None,
                poll_until: None,
                stats: DeadlineStats::default(),
                shutdown: false,
            }),
            wake: Condvar::new(),
        });
        let worker = shared.clone();
        std::thread::Builder::new()
            .name("toolhost-deadlines".into())
            .spawn(move || run(worker, on_fire))
            .expect("spawning the deadline thread");
        Self { shared }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Calls `on_fire` with `item` once `after` has passed, unless cancelled first.
    pub fn schedule(&self, after: Duration, item: T) -> DeadlineKey {
        let now = Instant::now();
        let mut s = self.state();
        let key = s.entries.insert(now, after, item);
        let at = key.at();
        if after <= SHORT {
            s.poll_until = Some(now + POLL_FOR);
        }
        if s.wakes_at.is_none_or(|wakes| at < wakes) {
            s.wakes_at = Some(at);
            s.stats.woken += 1;
            self.shared.wake.notify_one();
        }
        key
    }

    /// Removes a deadline. Returns the item when it had not fired yet.
    pub fn cancel(&self, key: DeadlineKey) -> Option<T> {
        self.state().entries.remove(&key)
    }

    /// Removes every deadline whose item `doomed` picks, without firing it (the items of
    /// a torn-down owner). Returns how many.
    pub fn cancel_where(&self, mut doomed: impl FnMut(&T) -> bool) -> usize {
        self.state().entries.retain(|item| !doomed(item))
    }

    /// Deadlines not yet fired or cancelled.
    pub fn pending(&self) -> usize {
        self.state().entries.len()
    }

    pub fn stats(&self) -> DeadlineStats {
        self.state().stats
    }
}

impl<T: Send + 'static> Drop for DeadlineTimer<T> {
    fn drop(&mut self) {
        self.state().shutdown = true;
        self.shared.wake.notify_one();
    }
}

fn run<T: Send + 'static>(shared: Arc<Shared<T>>, on_fire: impl Fn(Vec<T>)) {
    ask_for_a_short_slice();
    let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if s.shutdown {
            return;
        }
        s.stats.rounds += 1;
        let now = Instant::now();
        let due = s.entries.take_due(now);
        if !due.is_empty() {
            drop(s);
            on_fire(due);
            s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            continue;
        }
        // Towards the first deadline; while there is none, keep sleeping towards the
        // moment it would have woken if that is still ahead, so a new deadline later
        // than it needs no wake-up.
        let mut until = s.entries.next().or_else(|| s.wakes_at.filter(|at| *at > now));
        match s.poll_until {
            Some(end) if end > now => until = Some(until.map_or(now + POLL_STEP, |u| u.min(now + POLL_STEP))),
            Some(_) => s.poll_until = None,
            None => {}
        }
        s.wakes_at = until;
        s = match until {
            Some(at) => shared.wake.wait_timeout(s, at.saturating_duration_since(now)).unwrap_or_else(|e| e.into_inner()).0,
            None => shared.wake.wait(s).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// The slice this thread asks for, in ns (the kernel's lower bound).
pub const SLICE_NS: u64 = 100_000;

/// Asks for a [`SLICE_NS`] time slice for the calling thread, if it runs the normal
/// policy (see the module's doc). A refusal changes nothing.
#[cfg(target_os = "linux")]
fn ask_for_a_short_slice() {
    // SAFETY: sched_attr is plain integers; both calls only read or write it, at the size
    // given, for the calling thread (pid 0).
    unsafe {
        let mut attr: libc::sched_attr = std::mem::zeroed();
        let size = std::mem::size_of::<libc::sched_attr>() as u32;
        if libc::syscall(libc::SYS_sched_getattr, 0, &mut attr as *mut libc::sched_attr, size, 0) != 0 {
            return;
        }
        if attr.sched_policy != libc::SCHED_OTHER as u32 {
            return;
        }
        // As read, nice value included; on the normal policy `sched_runtime` is the slice.
        attr.size = size;
        attr.sched_runtime = SLICE_NS;
        libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const libc::sched_attr, 0);
    }
}

#[cfg(not(target_os = "linux"))]
fn ask_for_a_short_slice() {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn fires_in_deadline_order_and_skips_cancelled() {
        let (tx, rx) = mpsc::channel();
        let timer = DeadlineTimer::new(move |items: Vec<u32>| items.into_iter().for_each(|i| tx.send(i).unwrap()));
        timer.schedule(Duration::from_millis(60), 3);
        let cancelled = timer.schedule(Duration::from_millis(20), 99);
        timer.schedule(Duration::from_millis(10), 1);
        timer.schedule(Duration::from_millis(40), 2);
        assert_eq!(timer.cancel(cancelled), Some(99));
        let got: Vec<u32> = (0..3).map(|_| rx.recv_timeout(Duration::from_secs(2)).unwrap()).collect();
        assert_eq!(got, vec![1, 2, 3]);
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err(), "the cancelled deadline never fires");
        assert_eq!(timer.pending(), 0);
    }

    #[test]
    fn an_unrepresentable_deadline_is_accepted_and_cancellable() {
        let timer = DeadlineTimer::new(|_: Vec<u8>| panic!("must not fire"));
        let key = timer.schedule(Duration::MAX, 1);
        assert_eq!(timer.cancel(key), Some(1));
    }

    #[test]
    fn an_earlier_deadline_wakes_a_thread_sleeping_towards_a_later_one() {
        let (tx, rx) = mpsc::channel();
        let timer = DeadlineTimer::new(move |items: Vec<&str>| items.into_iter().for_each(|i| tx.send(i).unwrap()));
        timer.schedule(Duration::from_secs(30), "late");
        std::thread::sleep(Duration::from_millis(20));
        let started = Instant::now();
        timer.schedule(Duration::from_millis(10), "early");
        assert_eq!(rx.recv_timeout(Duration::from_secs(2)).unwrap(), "early");
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_short_timer_scheduled_while_the_thread_polls_wakes_nothing() {
        let (tx, rx) = mpsc::channel();
        let timer = DeadlineTimer::new(move |items: Vec<u32>| items.into_iter().for_each(|i| tx.send(i).unwrap()));
        timer.schedule(Duration::from_secs(30), 0);
        std::thread::sleep(Duration::from_millis(20));
        // The first short timer is earlier than the 30 s the thread sleeps towards: one wake.
        let woken = timer.stats().woken;
        timer.schedule(Duration::from_millis(3), 1);
        assert_eq!(timer.stats().woken, woken + 1);
        assert_eq!(rx.recv_timeout(Duration::from_secs(2)).unwrap(), 1);
        // Polling now: ten more, each due later than the thread's next step, wake nothing.
        for i in 2..12 {
            timer.schedule(Duration::from_millis(5), i);
            assert_eq!(rx.recv_timeout(Duration::from_secs(2)).unwrap(), i);
        }
        assert_eq!(timer.stats().woken, woken + 1, "{:?}", timer.stats());
    }

    #[test]
    fn polling_stops_once_short_timers_stop() {
        let (tx, rx) = mpsc::channel();
        let timer = DeadlineTimer::new(move |items: Vec<u32>| items.into_iter().for_each(|i| tx.send(i).unwrap()));
        let rounds = timer.stats().rounds;
        timer.schedule(Duration::from_millis(1), 1);
        assert_eq!(rx.recv_timeout(Duration::from_secs(2)).unwrap(), 1);
        std::thread::sleep(POLL_FOR / 2);
        assert!(timer.stats().rounds > rounds + 2, "the thread polls after a short timer: {:?}", timer.stats());
        std::thread::sleep(POLL_FOR * 2);
        let quiet = timer.stats().rounds;
        std::thread::sleep(POLL_FOR);
        assert_eq!(timer.stats().rounds, quiet, "the thread sleeps once no short timer came for POLL_FOR");
    }

    /// The slice the calling thread runs with, in ns, as the kernel reports it.
    #[cfg(target_os = "linux")]
    fn own_slice() -> Option<u64> {
        let sched = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = sched.lines().find(|l| l.starts_with("se.slice"))?;
        line.split(':').nth(1)?.trim().parse().ok()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_thread_runs_with_a_short_slice_where_the_kernel_has_them() {
        let (tx, rx) = mpsc::channel();
        let timer = DeadlineTimer::new(move |_: Vec<u8>| tx.send((own_slice(), unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) })).unwrap());
        timer.schedule(Duration::from_millis(1), 0);
        let (slice, nice) = rx.recv_timeout(Duration::from_secs(2)).unwrap();
        // `se.slice` is in /proc/<tid>/sched from kernel 6.6 (EEVDF); per-thread slices
        // from 6.12. Where the kernel has neither, there is nothing to check.
        let Some(slice) = slice else { return };
        let default = own_slice().expect("this thread's slice");
        assert_eq!(nice, unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, "the thread keeps the process's nice value");
        if default == SLICE_NS {
            return; // this test thread already runs with the short slice
        }
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let version: Vec<u32> = kernel.split(['.', '-']).take(2).filter_map(|p| p.parse().ok()).collect();
        if version.as_slice() >= [6, 12].as_slice() {
            assert_eq!(slice, SLICE_NS, "kernel {kernel}: the deadline thread's slice, against {default} ns for others");
        }
    }

    #[test]
    fn cancel_where_drops_the_picked_items_unfired() {
        let (tx, rx) = mpsc::channel();
        let timer = DeadlineTimer::new(move |items: Vec<u32>| items.into_iter().for_each(|i| tx.send(i).unwrap()));
        for i in 0..6 {
            timer.schedule(Duration::from_millis(10 + i as u64), i);
        }
        assert_eq!(timer.cancel_where(|i| i % 2 == 1), 3);
        let got: Vec<u32> = (0..3).map(|_| rx.recv_timeout(Duration::from_secs(2)).unwrap()).collect();
        assert_eq!(got, vec![0, 2, 4]);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        assert_eq!(timer.pending(), 0);
    }
}
