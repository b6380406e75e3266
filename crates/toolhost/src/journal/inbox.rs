//! Journal answers on their way from the journal thread ([`super::worker`]) to the
//! driver's main thread (the JS thread, in Node).
//!
//! The journal thread hands its answers to an [`Inbox`]; usually the driver is then sent a
//! message, and takes them when its loop runs it. A caller making one journaled call at a
//! time, though, waits on two answers a call (the claim, then the outcome) with nothing
//! else to do, and waking a sleeping thread costs 15 to 80 µs on a virtual machine, each
//! time. So when every execution in flight waits on a request just handed to the journal
//! ([`crate::host::HostEngine::exchange_journal`] decides), the main thread waits for the
//! answer itself, spinning for at most [`INLINE_WAIT`], and the answer comes without a
//! wake-up; one later than that comes by the message, as before. The worker spins for
//! the next request in the same case, so neither side sleeps between the requests of
//! sequential calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::JournalAnswer;

/// The longest the main thread spins for an answer: several times what a SQLite
/// transaction in WAL mode with `synchronous=normal` and the handover took here (26.5 µs
/// on average; 0.2% of waits took longer than this), less than a Postgres commit that
/// reaches the disk.
pub const INLINE_WAIT: Duration = Duration::from_micros(200);

#[derive(Default)]
struct State {
    /// Answers not yet taken, in the order the journal gave them.
    answers: Vec<JournalAnswer>,
    /// The main thread is spinning in [`Inbox::wait`].
    waiting: bool,
    /// A message to the main thread is on its way, and will take what is here.
    posted: bool,
    /// Waits to skip, after one that timed out (a store slower than [`INLINE_WAIT`],
    /// such as Postgres committing to disk, would have the main thread spin for nothing,
    /// taking a core the store may need): 1, 2, 4 ... [`MAX_SKIP`] after each timeout in a
    /// row, then one wait to try again; none after one that got its answer.
    skip: u32,
    backoff: u32,
}

/// The most waits skipped after a wait that timed out.
pub const MAX_SKIP: u32 = 64;

/// See the module docs.
#[derive(Default)]
pub struct Inbox {
    state: Mutex<State>,
    /// Set while the main thread waits, once answers are there.
    ready: AtomicBool,
}

impl Inbox {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// On the journal thread: keeps `answers`. True when the main thread must be sent a
    /// message for them (it is not waiting, and no message is on its way already).
    pub fn deliver(&self, answers: Vec<JournalAnswer>) -> bool {
        let mut s = self.state();
        s.answers.extend(answers);
        if s.waiting {
            self.ready.store(true, Ordering::Release);
            false
        } else {
            !std::mem::replace(&mut s.posted, true)
        }
    }

    /// On the journal thread: the message [`Self::deliver`] asked for could not be sent;
    /// the next delivery asks again.
    pub fn post_failed(&self) {
        self.state().posted = false;
    }

    /// On the main thread, for the message: the answers there (none when a wait took them).
    pub fn take_posted(&self) -> Vec<JournalAnswer> {
        let mut s = self.state();
        s.posted = false;
        std::mem::take(&mut s.answers)
    }

    /// On the main thread: the answers there, waiting up to `limit` for some when there are
    /// none yet, unless recent waits timed out (see `State::skip`). An answer that comes
    /// later is posted.
    pub fn wait(&self, limit: Duration) -> Vec<JournalAnswer> {
        {
            let mut s = self.state();
            if !s.answers.is_empty() {
                return std::mem::take(&mut s.answers);
            }
            if s.skip > 0 {
                s.skip -= 1;
                return Vec::new();
            }
            s.waiting = true;
        }
        let until = Instant::now() + limit;
        while !self.ready.load(Ordering::Acquire) && Instant::now() < until {
            std::hint::spin_loop();
        }
        let mut s = self.state();
        s.waiting = false;
        if self.ready.swap(false, Ordering::Relaxed) {
            s.backoff = 0;
        } else {
            s.backoff = (s.backoff * 2).clamp(1, MAX_SKIP);
            s.skip = s.backoff;
        }
        std::mem::take(&mut s.answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn answer(exec: u64) -> JournalAnswer {
        JournalAnswer::Started { exec, ok: true }
    }

    fn execs(answers: &[JournalAnswer]) -> Vec<u64> {
        answers.iter().map(|a| match a { JournalAnswer::Started { exec, .. } => *exec, _ => unreachable!() }).collect()
    }

    #[test]
    fn a_message_is_posted_once_until_taken() {
        let inbox = Inbox::default();
        assert!(inbox.deliver(vec![answer(1)]));
        assert!(!inbox.deliver(vec![answer(2)]), "a message is already on its way");
        assert_eq!(execs(&inbox.take_posted()), [1, 2]);
        assert!(inbox.deliver(vec![answer(3)]), "taken: the next answer posts again");
    }

    #[test]
    fn a_message_that_could_not_be_sent_is_asked_for_again() {
        let inbox = Inbox::default();
        assert!(inbox.deliver(vec![answer(1)]));
        inbox.post_failed();
        assert!(inbox.deliver(vec![answer(2)]), "asked for again");
        assert_eq!(execs(&inbox.take_posted()), [1, 2], "nothing was lost");
    }

    #[test]
    fn a_wait_takes_what_is_there_and_a_late_message_finds_nothing() {
        let inbox = Inbox::default();
        assert!(inbox.deliver(vec![answer(1)]));
        assert_eq!(execs(&inbox.wait(Duration::ZERO)), [1]);
        assert!(inbox.take_posted().is_empty());
    }

    #[test]
    fn answers_given_during_a_wait_end_it_without_a_message() {
        let inbox = Arc::new(Inbox::default());
        let theirs = inbox.clone();
        let worker = std::thread::spawn(move || {
            // Until the main thread waits.
            while !theirs.state().waiting {
                std::hint::spin_loop();
            }
            theirs.deliver(vec![answer(7)])
        });
        let got = inbox.wait(Duration::from_secs(30));
        assert!(!worker.join().unwrap(), "no message while the main thread waits");
        assert_eq!(execs(&got), [7]);
    }

    #[test]
    fn after_a_wait_times_out_the_next_ones_are_skipped_more_each_time_until_one_is_answered() {
        let inbox = Inbox::default();
        let skipped = |n: u32| {
            for _ in 0..n {
                let t0 = Instant::now();
                assert!(inbox.wait(Duration::from_secs(30)).is_empty());
                assert!(t0.elapsed() < Duration::from_secs(10), "a skipped wait does not spin");
            }
        };
        // Timeouts in a row: 1, 2, 4 waits skipped.
        for n in [1, 2, 4] {
            assert!(inbox.wait(Duration::from_micros(10)).is_empty());
            skipped(n);
        }
        // Answers already there are taken, skipping or not.
        assert!(inbox.wait(Duration::from_micros(10)).is_empty()); // 8 to skip now
        assert!(inbox.deliver(vec![answer(1)]));
        assert_eq!(execs(&inbox.wait(Duration::ZERO)), [1]);
        skipped(8);
        // The backoff stops at MAX_SKIP.
        let mut s = inbox.state();
        s.backoff = MAX_SKIP;
        drop(s);
        assert!(inbox.wait(Duration::from_micros(10)).is_empty());
        assert_eq!(inbox.state().skip, MAX_SKIP);
        inbox.state().skip = 0;
        // A wait that gets its answer ends the backoff.
        let inbox = Arc::new(inbox);
        let theirs = inbox.clone();
        let worker = std::thread::spawn(move || {
            while !theirs.state().waiting {
                std::hint::spin_loop();
            }
            theirs.deliver(vec![answer(2)]);
        });
        assert_eq!(execs(&inbox.wait(Duration::from_secs(30))), [2]);
        worker.join().unwrap();
        let s = inbox.state();
        assert_eq!((s.skip, s.backoff), (0, 0));
    }

    #[test]
    fn a_wait_that_times_out_leaves_later_answers_to_the_message() {
        let inbox = Inbox::default();
        assert!(inbox.wait(Duration::from_micros(10)).is_empty());
        assert!(inbox.deliver(vec![answer(4)]), "no longer waiting: posted");
        assert_eq!(execs(&inbox.take_posted()), [4]);
    }
}
