//! Per-attempt timeouts on one background thread, cheap enough for the hot path.
//!
//! Scheduling takes a lock and inserts into a `BTreeMap`; the thread is only woken when
//! a new deadline is earlier than the one it sleeps towards, so a steady stream of
//! calls with the same timeout wakes nothing. Cancelling removes the entry. When
//! deadlines pass, the thread hands their items to the `on_fire` callback (the Node
//! binding forwards them to the JS thread: the only hop a timeout costs, and only when
//! it fires).

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Identifies a scheduled deadline for [`DeadlineTimer::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeadlineKey(Instant, u64);

struct State<T> {
    entries: BTreeMap<DeadlineKey, T>,
    next_seq: u64,
    /// The deadline the thread sleeps towards; `None` while it waits for work.
    sleeping_until: Option<Instant>,
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
            state: Mutex::new(State { entries: BTreeMap::new(), next_seq: 0, sleeping_until: None, shutdown: false }),
            wake: Condvar::new(),
        });
        let worker = shared.clone();
        std::thread::Builder::new()
            .name("toolhost-deadlines".into())
            .spawn(move || run(worker, on_fire))
            .expect("spawning the deadline thread");
        Self { shared }
    }

    /// Calls `on_fire` with `item` once `after` has passed, unless cancelled first.
    pub fn schedule(&self, after: Duration, item: T) -> DeadlineKey {
        let now = Instant::now();
        // A deadline past what an Instant holds is as good as never: 100 years.
        let at = now.checked_add(after).unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400));
        let mut s = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = DeadlineKey(at, s.next_seq);
        s.next_seq += 1;
        s.entries.insert(key, item);
        if s.sleeping_until.is_none_or(|until| at < until) {
            s.sleeping_until = Some(at);
            self.shared.wake.notify_one();
        }
        key
    }

    /// Removes a deadline. Returns the item when it had not fired yet.
    pub fn cancel(&self, key: DeadlineKey) -> Option<T> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).entries.remove(&key)
    }

    /// Deadlines not yet fired or cancelled.
    pub fn pending(&self) -> usize {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).entries.len()
    }
}

impl<T: Send + 'static> Drop for DeadlineTimer<T> {
    fn drop(&mut self) {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).shutdown = true;
        self.shared.wake.notify_one();
    }
}

fn run<T: Send + 'static>(shared: Arc<Shared<T>>, on_fire: impl Fn(Vec<T>)) {
    let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if s.shutdown {
            return;
        }
        let now = Instant::now();
        let mut due = Vec::new();
        while let Some(entry) = s.entries.first_entry() {
            if entry.key().0 > now {
                break;
            }
            due.push(entry.remove());
        }
        if !due.is_empty() {
            drop(s);
            on_fire(due);
            s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            continue;
        }
        match s.entries.first_key_value().map(|(k, _)| k.0) {
            Some(at) => {
                s.sleeping_until = Some(at);
                s = shared.wake.wait_timeout(s, at.saturating_duration_since(now)).unwrap_or_else(|e| e.into_inner()).0;
            }
            None => {
                // Keep sleeping towards the last deadline if it is still ahead: a new
                // deadline later than it then needs no wake-up.
                match s.sleeping_until.filter(|until| *until > now) {
                    Some(until) => {
                        s = shared.wake.wait_timeout(s, until - now).unwrap_or_else(|e| e.into_inner()).0;
                    }
                    None => {
                        s.sleeping_until = None;
                        s = shared.wake.wait(s).unwrap_or_else(|e| e.into_inner());
                    }
                }
            }
        }
    }
}

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
}
