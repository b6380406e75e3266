//! The thread that does a manager's journal IO, so that no store call ever runs on the
//! driver's main thread (the JS thread, in Node).
//!
//! It takes [`JournalRequest`]s from a channel and hands [`JournalAnswer`]s to a callback
//! in batches: requests that arrive together are written together (one SQLite
//! transaction for a batch of claims, one for a batch of outcomes), and the answers of a
//! batch cross back to the driver in one call. Besides the requests it:
//! - renews the leases of every unfinished row it holds, every third of a lease;
//! - looks again at what callers wait for (keys held elsewhere, approvals decided
//!   elsewhere) every poll, and at once when Postgres notifies a change;
//! - lists the rows whose lease expired, on start and every half lease, for recovery;
//! - deletes finished rows past their retention, on start and every minute (or every
//!   retention period, when that is shorter);
//! - retries outcomes it could not write (a lost connection) with backoff until they are.
//!
//! Dropping the worker stops the thread after its current batch.

use std::collections::{HashMap, VecDeque};

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::{
    ClaimAnswer, Claim, DueCursor, JournalAnswer, JournalError, JournalPolicy, JournalRequest, Record, RowKey, Store, TakeOver,
};

// Each request is moved once into the channel; boxing it would add an allocation to
// every journaled call (the engine's Step carries it unboxed for the same reason).
#[allow(clippy::large_enum_variant)]
enum Message {
    Work(JournalRequest),
    /// Postgres notified a change: look at what callers wait for now.
    Notified,
    Stop,
}

/// How long the worker looks for the next request after a batch before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// The largest batch after which the worker looks (see [`SPIN`]).
const SPIN_BATCH: usize = 2;

/// How many due rows recovery is handed at a time.
const DUE_PAGE: usize = 100;

/// A message that arrives within `spin`, looked for without sleeping.
fn spin_recv(rx: &Receiver<Message>, spin: Duration) -> Option<Message> {
    let until = Instant::now() + spin;
    loop {
        if let Ok(m) = rx.try_recv() {
            return Some(m);
        }
        if Instant::now() >= until {
            return None;
        }
        std::hint::spin_loop();
    }
}

/// The callback answers go to, called on the worker's thread.
pub type Deliver = Box<dyn Fn(Vec<JournalAnswer>) + Send>;

/// A running journal thread. See the module docs.
pub struct JournalWorker {
    tx: Sender<Message>,
    owner: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl JournalWorker {
    /// Starts the thread over an open store. `deliver` receives the answers.
    pub fn start(store: Store, policy: JournalPolicy, deliver: Deliver) -> Self {
        let (tx, rx) = mpsc::channel();
        let owner = format!("{}:{}", std::process::id(), uuid::Uuid::new_v4());
        if let Store::Postgres(pg) = &store {
            listen(pg.config().clone(), pg.connect_timeout(), pg.deadline(), tx.clone());
        }
        let state = Worker::new(store, policy, owner.clone(), deliver);
        let thread = std::thread::Builder::new()
            .name("toolhost-journal".into())
            .spawn(move || state.run(rx))
            .expect("starting the journal thread");
        Self { tx, owner, thread: Some(thread) }
    }

    /// Stops the thread after the batch it is in, and hands back its handle: joined, the
    /// store's connection is closed (SQLite's file is no longer locked by it).
    pub fn stop(mut self) -> Option<std::thread::JoinHandle<()>> {
        let _ = self.tx.send(Message::Stop);
        self.thread.take()
    }

    /// Queues a request.
    pub fn send(&self, request: JournalRequest) {
        let _ = self.tx.send(Message::Work(request));
    }

    /// This worker's owner id in the journal (`pid:uuid`).
    pub fn owner(&self) -> &str {
        &self.owner
    }
}

impl Drop for JournalWorker {
    fn drop(&mut self) {
        let _ = self.tx.send(Message::Stop);
    }
}

/// Wakes the worker on every Postgres `NOTIFY`, on a connection of its own, connecting
/// again (every second) when it is lost; the worker polls meanwhile. Ends when the worker
/// has stopped.
///
/// Nothing here waits on the server unbounded: connecting takes `connect_timeout` at most
/// (the startup handshake included), `LISTEN` the store's `deadline`, and after every
/// quiet period (5 s) an empty query checks within `deadline` that the server still
/// answers, else the connection is dropped and made again. A frozen server holds up this
/// thread only, which the worker does not wait for.
fn listen(config: tokio_postgres::Config, connect_timeout: Duration, deadline: Duration, tx: Sender<Message>) {
    use tokio::time::timeout;
    let _ = std::thread::Builder::new().name("toolhost-journal-listen".into()).spawn(move || {
        let Ok(rt) = super::postgres::runtime() else { return };
        loop {
            let ended = rt.block_on(async {
                let Ok(Ok((client, mut connection))) = timeout(connect_timeout, config.connect(tokio_postgres::NoTls)).await else {
                    return Listened::Unreachable;
                };
                // The connection's messages: notifications are passed on, the rest dropped.
                let (notified, mut notifications) = tokio::sync::mpsc::unbounded_channel();
                let task = tokio::spawn(async move {
                    while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                        if matches!(message, tokio_postgres::AsyncMessage::Notification(_)) && notified.send(()).is_err() {
                            return;
                        }
                    }
                });
                let listening = timeout(deadline, client.batch_execute(&format!("LISTEN {}", super::postgres::CHANNEL))).await;
                let result = if matches!(listening, Ok(Ok(()))) {
                    loop {
                        // A change, or a quiet period (which also tells whether the worker still runs).
                        let heard = timeout(Duration::from_secs(5), notifications.recv()).await;
                        if tx.send(Message::Notified).is_err() {
                            break Listened::Stopped;
                        }
                        match heard {
                            Ok(Some(())) => {}
                            // The connection ended.
                            Ok(None) => break Listened::Lost,
                            Err(_) => {
                                if !matches!(timeout(deadline, client.simple_query("")).await, Ok(Ok(_))) {
                                    break Listened::Lost;
                                }
                            }
                        }
                    }
                } else {
                    Listened::Unreachable
                };
                task.abort();
                result
            });
            match ended {
                Listened::Stopped => return,
                Listened::Lost => {}
                Listened::Unreachable => {
                    std::thread::sleep(Duration::from_secs(1));
                    if tx.send(Message::Notified).is_err() {
                        return;
                    }
                }
            }
        }
    });
}

/// How a listening connection ended.
enum Listened {
    /// The worker has stopped.
    Stopped,
    /// The connection was lost or stopped answering: connect again at once.
    Lost,
    /// Connecting failed: try again in a second.
    Unreachable,
}

fn now_ms() -> i64 {
    crate::record::now_ms() as i64
}

/// A write that failed and is tried again later.
enum Retry {
    Record(Box<Record>),
    Start { exec: u64, row: RowKey, fence: i64 },
    Release { row: RowKey, fence: i64 },
    /// A claim whose answer was lost: what it may have written ([`JournalStore::forget`]).
    Forget { row: RowKey, execution_id: String },
}

struct Worker {
    store: Store,
    policy: JournalPolicy,
    owner: String,
    deliver: Deliver,
    /// Keys held elsewhere that callers here wait for, by execution.
    watches: HashMap<u64, Claim>,
    /// Approvals executions here wait for: (row, our fence), by execution.
    approvals: HashMap<u64, (RowKey, i64)>,
    retries: VecDeque<Retry>,
    retry_delay: Duration,
    next_retry: Option<Instant>,
    next_renew: Instant,
    next_poll: Instant,
    next_due: Instant,
    next_prune: Instant,
    /// Where the next listing of due rows goes on from (see [`Worker::housekeeping`]).
    due_after: Option<DueCursor>,
    notified: bool,
}

impl Worker {
    fn new(store: Store, policy: JournalPolicy, owner: String, deliver: Deliver) -> Self {
        let now = Instant::now();
        Self {
            store,
            policy,
            owner,
            deliver,
            watches: HashMap::new(),
            approvals: HashMap::new(),
            retries: VecDeque::new(),
            retry_delay: Duration::from_millis(50),
            next_retry: None,
            next_renew: now + Duration::from_millis(policy.lease_ms / 3),
            next_poll: now,
            // Recovery and pruning run at once on start.
            next_due: now,
            next_prune: now,
            due_after: None,
            notified: false,
        }
    }

    fn lease_until(&self) -> i64 {
        now_ms() + self.policy.lease_ms as i64
    }

    fn run(mut self, rx: Receiver<Message>) {
        let mut busy = false;
        loop {
            // After a small batch the next request usually follows within microseconds (a
            // call's outcome after its claim, the next call after an answer): look for it
            // for a moment before sleeping, as waking a sleeping thread costs 15 to 80 µs on a
            // virtual machine, which is most of a journaled call's added time.
            let spun = if busy { spin_recv(&rx, SPIN) } else { None };
            let first = match spun {
                Some(m) => Some(m),
                None => {
                    let wait = self.next_deadline().saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Ok(m) => Some(m),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            };

            let mut batch = Vec::new();
            let mut stop = false;
            for m in first.into_iter().chain(std::iter::from_fn(|| rx.try_recv().ok())) {
                match m {
                    Message::Work(r) => batch.push(r),
                    Message::Notified => self.notified = true,
                    Message::Stop => stop = true,
                }
            }
            // Only a caller that makes one call at a time waits on each answer; under load
            // batches are larger, requests arrive while the last batch is written, and a
            // look would only take a core from the other processes on the machine.
            busy = (1..=SPIN_BATCH).contains(&batch.len());
            // The requests' answers go before housekeeping, whose writes (renewing leases,
            // pruning) may each wait out the busy timeout behind another process's lock:
            // a caller's answer, a failure included, does not wait behind them too.
            let mut answers = Vec::new();
            self.work(batch, &mut answers);
            if !answers.is_empty() {
                (self.deliver)(std::mem::take(&mut answers));
            }
            self.housekeeping(&mut answers);
            if !answers.is_empty() {
                (self.deliver)(answers);
            }
            if stop {
                return;
            }
        }
    }

    fn next_deadline(&self) -> Instant {
        let mut at = self.next_renew.min(self.next_due).min(self.next_prune);
        if !self.watches.is_empty() || !self.approvals.is_empty() {
            at = at.min(self.next_poll);
        }
        if let Some(r) = self.next_retry {
            at = at.min(r);
        }
        at
    }

    /// Does a batch of requests, writing alike requests together.
    fn work(&mut self, batch: Vec<JournalRequest>, answers: &mut Vec<JournalAnswer>) {
        let mut claims = Vec::new();
        let mut records = Vec::new();
        let mut releases = Vec::new();
        let mut starts = Vec::new();
        for r in batch {
            match r {
                JournalRequest::Claim(c) => claims.push(c),
                JournalRequest::Watch(c) => {
                    self.watches.insert(c.exec, c);
                    self.next_poll = Instant::now() + Duration::from_millis(self.policy.poll_ms);
                }
                JournalRequest::Unwatch { exec } => {
                    self.watches.remove(&exec);
                    self.approvals.remove(&exec);
                }
                JournalRequest::Record(r) => records.push(r),
                JournalRequest::Release { row, fence } => releases.push((row, fence)),
                JournalRequest::Start { exec, row, fence } => starts.push((exec, row, fence)),
                JournalRequest::WatchApproval { exec, row, fence } => {
                    self.approvals.insert(exec, (row, fence));
                }
                JournalRequest::Decide { ticket, decision, check } => {
                    match self.store.as_store().decide(&decision, &*check) {
                        Ok(answer) => {
                            // A decision here may be what an execution here waits for.
                            self.notified = true;
                            answers.push(JournalAnswer::Decided { ticket, answer });
                        }
                        Err(mut error) => {
                            // Deciding again cannot tell: the row is no longer waiting
                            // either way. Say what to look at instead.
                            if error.maybe_written {
                                error.message.push_str(
                                    "; the decision may have been stored before its answer was lost: if it was, \
                                     the approval is no longer pending, and deciding it again answers APPROVAL_NOT_FOUND",
                                );
                            }
                            answers.push(JournalAnswer::Failed { exec: None, ticket: Some(ticket), claim: None, error })
                        }
                    }
                }
                JournalRequest::Approvals { ticket } => match self.store.as_store().approvals() {
                    Ok(approvals) => answers.push(JournalAnswer::Approvals { ticket, approvals }),
                    Err(error) => answers.push(JournalAnswer::Failed { exec: None, ticket: Some(ticket), claim: None, error }),
                },
                JournalRequest::Task { ticket, op } => match self.store.as_store().task(&op) {
                    Ok(answer) => answers.push(JournalAnswer::Task { ticket, answer }),
                    Err(error) => answers.push(JournalAnswer::Failed { exec: None, ticket: Some(ticket), claim: None, error }),
                },
                JournalRequest::TakeOver { row, state, then, execution_id } => {
                    let (now, until) = (now_ms(), self.lease_until());
                    let take = TakeOver { row: row.row.clone(), fence: row.fence, state, execution_id };
                    match self.store.as_store().take_over(&self.owner, until, now, &take) {
                        Ok(fence) => answers.push(JournalAnswer::TakenOver { row, fence, then, execution_id: take.execution_id }),
                        // Recovery looks again at its next pass: once the row is let go, if
                        // the server may have written the takeover.
                        Err(e) => {
                            tracing::warn!(target: "toolhost::journal", "taking over {:?} failed: {e}", row.row);
                            if e.maybe_written {
                                self.retries.push_back(Retry::Forget { row: take.row, execution_id: take.execution_id });
                                self.schedule_retry();
                            }
                        }
                    }
                }
            }
        }
        if !claims.is_empty() {
            let (now, until) = (now_ms(), self.lease_until());
            match self.store.as_store().claim(&self.owner, until, now, &claims) {
                Ok(found) => {
                    for (claim, answer) in claims.into_iter().zip(found) {
                        answers.push(JournalAnswer::Claimed { claim: Box::new(claim), answer });
                    }
                }
                Err(error) => {
                    // The calls fail without running, but the server may have written some
                    // claims (a connection lost or timed out after a claim was sent): they
                    // would hold their keys for as long as this process renews its leases.
                    // (Not when nothing was sent: a journal down for long fails every call.)
                    if error.maybe_written {
                        self.lost(&claims);
                    }
                    for claim in claims {
                        answers.push(JournalAnswer::Failed { exec: Some(claim.exec), ticket: None, claim: Some(Box::new(claim)), error: error.clone() });
                    }
                }
            }
        }
        if !records.is_empty() {
            self.record(records, answers);
        }
        if !starts.is_empty() {
            self.start(starts, answers);
        }
        if !releases.is_empty() {
            if let Err(e) = self.store.as_store().release(&releases) {
                tracing::warn!(target: "toolhost::journal", "releasing claims failed, will retry: {e}");
                self.retries.extend(releases.into_iter().map(|(row, fence)| Retry::Release { row, fence }));
                self.schedule_retry();
            }
        }
    }

    fn record(&mut self, records: Vec<Record>, answers: &mut Vec<JournalAnswer>) {
        match self.store.as_store().record(now_ms(), &records) {
            Ok(found) => {
                for (r, answer) in records.into_iter().zip(found) {
                    answers.push(JournalAnswer::Recorded { exec: r.exec, row: r.row, answer });
                }
                self.notified = true;
            }
            // A corrupt file fails every write the same way: the executions end with the
            // error (their effect happened; the message says so) instead of waiting for ever.
            Err(error) if error.lasting => {
                tracing::warn!(target: "toolhost::journal", "writing {} outcome(s) failed for good: {error}", records.len());
                for r in records {
                    answers.push(JournalAnswer::Failed { exec: Some(r.exec), ticket: None, claim: None, error: error.clone() });
                }
            }
            Err(e) => {
                tracing::warn!(target: "toolhost::journal", "writing {} outcome(s) failed, will retry: {e}", records.len());
                self.retries.extend(records.into_iter().map(|r| Retry::Record(Box::new(r))));
                self.schedule_retry();
            }
        }
    }

    fn start(&mut self, starts: Vec<(u64, RowKey, i64)>, answers: &mut Vec<JournalAnswer>) {
        let rows: Vec<(RowKey, i64)> = starts.iter().map(|(_, row, fence)| (row.clone(), *fence)).collect();
        let until = self.lease_until();
        match self.store.as_store().start(&self.owner, until, &rows) {
            Ok(found) => {
                for ((exec, _, _), ok) in starts.into_iter().zip(found) {
                    answers.push(JournalAnswer::Started { exec, ok });
                }
            }
            Err(error) if error.lasting => {
                for (exec, _, _) in starts {
                    answers.push(JournalAnswer::Failed { exec: Some(exec), ticket: None, claim: None, error: error.clone() });
                }
            }
            Err(e) => {
                tracing::warn!(target: "toolhost::journal", "starting approved calls failed, will retry: {e}");
                self.retries.extend(starts.into_iter().map(|(exec, row, fence)| Retry::Start { exec, row, fence }));
                self.schedule_retry();
            }
        }
    }

    /// Claims whose answers were lost: what they wrote is deleted when the journal answers
    /// again ([`Worker::forget`]).
    fn lost(&mut self, claims: &[Claim]) {
        self.retries.extend(claims.iter().map(|c| Retry::Forget { row: c.row.clone(), execution_id: c.execution_id.clone() }));
        self.schedule_retry();
    }

    /// Deletes what lost claims may have written; false (they are kept) when it fails.
    /// A lost claim of an execution that still waits (a watched key) is claimed again by
    /// the next poll: this goes first, so that it never deletes that later claim's row.
    fn forget(&mut self) -> bool {
        if !self.retries.iter().any(|r| matches!(r, Retry::Forget { .. })) {
            return true;
        }
        let mut rows = Vec::new();
        self.retries.retain(|r| match r {
            Retry::Forget { row, execution_id } => {
                rows.push((row.clone(), execution_id.clone()));
                false
            }
            _ => true,
        });
        match self.store.as_store().forget(&self.owner, &rows) {
            Ok(()) => true,
            // A corrupt SQLite file: nothing is written to it any more.
            Err(e) if e.lasting => {
                tracing::warn!(target: "toolhost::journal", "letting go of {} claim(s) whose answers were lost failed for good: {e}", rows.len());
                true
            }
            Err(e) => {
                tracing::warn!(target: "toolhost::journal", "letting go of {} claim(s) whose answers were lost failed, will retry: {e}", rows.len());
                self.retries.extend(rows.into_iter().map(|(row, execution_id)| Retry::Forget { row, execution_id }));
                self.schedule_retry();
                false
            }
        }
    }

    fn schedule_retry(&mut self) {
        self.next_retry = Some(Instant::now() + self.retry_delay);
        self.retry_delay = (self.retry_delay * 2).min(Duration::from_secs(5));
    }

    /// Timed work: retries, lease renewal, watches, recovery, pruning.
    fn housekeeping(&mut self, answers: &mut Vec<JournalAnswer>) {
        let now = Instant::now();
        if self.next_retry.is_some_and(|at| at <= now) {
            self.next_retry = None;
            let forgotten = self.forget();
            let pending: Vec<Retry> = self.retries.drain(..).collect();
            let (mut records, mut starts, mut releases) = (Vec::new(), Vec::new(), Vec::new());
            for r in pending {
                match r {
                    Retry::Record(r) => records.push(*r),
                    Retry::Start { exec, row, fence } => starts.push((exec, row, fence)),
                    Retry::Release { row, fence } => releases.push((row, fence)),
                    // Kept by forget(), which failed: tried again with the rest.
                    forget @ Retry::Forget { .. } => self.retries.push_back(forget),
                }
            }
            let before = answers.len();
            if !records.is_empty() {
                self.record(records, answers);
            }
            if !starts.is_empty() {
                self.start(starts, answers);
            }
            if !releases.is_empty() && self.store.as_store().release(&releases).is_err() {
                self.retries.extend(releases.into_iter().map(|(row, fence)| Retry::Release { row, fence }));
                self.schedule_retry();
            }
            if self.retries.is_empty() && (answers.len() > before || forgotten) {
                self.retry_delay = Duration::from_millis(50);
            }
        }
        if now >= self.next_renew {
            self.next_renew = now + Duration::from_millis((self.policy.lease_ms / 3).max(1));
            let until = self.lease_until();
            if let Err(e) = self.store.as_store().renew(&self.owner, until) {
                tracing::warn!(target: "toolhost::journal", "renewing leases failed: {e}");
            }
        }
        if (!self.watches.is_empty() || !self.approvals.is_empty()) && (self.notified || now >= self.next_poll) {
            self.next_poll = now + Duration::from_millis(self.policy.poll_ms);
            self.poll(answers);
        }
        self.notified = false;
        if now >= self.next_due {
            self.next_due = now + Duration::from_millis((self.policy.lease_ms / 2).max(1));
            // A page at a time, going on from the last page's last row: rows this process
            // leaves (a tool it does not have) do not hide the ones after them. A full
            // page is followed by the next at once, the last one by a rest.
            match self.store.as_store().due(now_ms(), self.due_after.as_ref(), DUE_PAGE) {
                Ok(rows) => {
                    self.due_after = None;
                    if rows.len() == DUE_PAGE {
                        let last = rows.last().expect("a full page");
                        self.due_after = Some((last.lease_until, last.row.clone()));
                        self.next_due = now;
                    }
                    if !rows.is_empty() {
                        answers.push(JournalAnswer::Due(rows));
                    }
                }
                Err(e) => tracing::warn!(target: "toolhost::journal", "listing expired leases failed: {e}"),
            }
        }
        if now >= self.next_prune {
            self.next_prune = now + Duration::from_millis(self.policy.retention_ms.clamp(1, 60_000));
            let now = now_ms();
            let retention = self.policy.retention_ms as i64;
            if let Err(e) = self.store.as_store().prune(now - retention, now - retention) {
                tracing::warn!(target: "toolhost::journal", "pruning failed: {e}");
            }
        }
    }

    /// Looks again at what callers wait for.
    fn poll(&mut self, answers: &mut Vec<JournalAnswer>) {
        if !self.watches.is_empty() && self.forget() {
            let claims: Vec<Claim> = self.watches.values().cloned().collect();
            let (now, until) = (now_ms(), self.lease_until());
            match self.store.as_store().claim(&self.owner, until, now, &claims) {
                Ok(found) => {
                    for (claim, answer) in claims.into_iter().zip(found) {
                        if !matches!(answer, ClaimAnswer::InFlight) {
                            self.watches.remove(&claim.exec);
                            answers.push(JournalAnswer::Claimed { claim: Box::new(claim), answer });
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "toolhost::journal", "looking at awaited keys failed: {e}");
                    if e.maybe_written {
                        self.lost(&claims);
                    }
                }
            }
        }
        if !self.approvals.is_empty() {
            let keys: Vec<RowKey> = self.approvals.values().map(|(row, _)| row.clone()).collect();
            match self.store.as_store().rows(&keys) {
                Ok(rows) => {
                    let mut by_key: HashMap<RowKey, super::RowState> = rows.into_iter().map(|r| (r.row.clone(), r)).collect();
                    let waiting: Vec<(u64, RowKey, i64)> = self.approvals.iter().map(|(e, (r, f))| (*e, r.clone(), *f)).collect();
                    for (exec, row, fence) in waiting {
                        let changed = match by_key.get(&row) {
                            None => true,
                            Some(r) => r.fence != fence || r.state != "awaiting",
                        };
                        if changed {
                            self.approvals.remove(&exec);
                            answers.push(JournalAnswer::ApprovalChanged { exec, row: by_key.remove(&row).map(Box::new) });
                        }
                    }
                }
                Err(e) => tracing::warn!(target: "toolhost::journal", "looking at awaited approvals failed: {e}"),
            }
        }
    }
}

impl From<JournalError> for String {
    fn from(e: JournalError) -> Self {
        e.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{open, Effect};

    fn claim(exec: u64, key: &str) -> Claim {
        Claim {
            exec,
            row: RowKey { scope: String::new(), key: key.into() },
            fingerprint: "f".into(),
            tool: "pay".into(),
            effect: Effect::Once,
            args: "{}".into(),
            execution_id: format!("e{exec}"),
            tool_call_id: None,
            approval: None,
        }
    }

    /// Another process holds the SQLite file's write lock: a new call's claim fails when
    /// the busy timeout (5 s) runs out, and its answer is not held back by the pruning
    /// that is due in the same turn and waits out the same timeout (10 s before).
    ///
    /// Pruning runs on start and then every `retention_ms` (2 s here); leases of 10 s are
    /// renewed from 3.3 s on. The lock is taken, and the second claim sent, 1 s after the
    /// start, when the worker is idle: its turn starts then, the claim fails at 6 s, and
    /// the pruning due at 2 s runs in that turn, after the claim.
    #[test]
    fn a_failed_claim_is_answered_before_housekeeping_waits_on_the_same_lock() {
        let dir = std::env::temp_dir().join(format!("toolhost-worker-test-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("held.db");
        let store = open(&format!("sqlite:{}", path.display())).unwrap();
        let (tx, rx) = mpsc::channel();
        let policy = JournalPolicy { retention_ms: 2_000, ..JournalPolicy::default() };
        let started = Instant::now();
        let worker = JournalWorker::start(store, policy, Box::new(move |answers| answers.into_iter().for_each(|a| {
            let _ = tx.send(a);
        })));
        let first = |rx: &mpsc::Receiver<JournalAnswer>| loop {
            match rx.recv_timeout(Duration::from_secs(30)).expect("an answer") {
                JournalAnswer::Due(_) => continue,
                other => return other,
            }
        };
        worker.send(JournalRequest::Claim(claim(1, "a")));
        assert!(matches!(first(&rx), JournalAnswer::Claimed { .. }), "the first claim, before the lock is held");

        std::thread::sleep(Duration::from_secs(1).saturating_sub(started.elapsed()));
        let holder = rusqlite::Connection::open(&path).unwrap();
        holder.busy_timeout(Duration::from_secs(5)).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        let sent = Instant::now();
        worker.send(JournalRequest::Claim(claim(2, "b")));
        let answer = first(&rx);
        let waited = sent.elapsed();
        holder.execute_batch("ROLLBACK").unwrap();
        match answer {
            JournalAnswer::Failed { exec: Some(2), error, .. } => assert!(error.message.contains("database is locked"), "{}", error.message),
            other => panic!("expected the claim to fail, got {other:?}"),
        }
        assert!(waited < Duration::from_millis(8_000), "answered after {waited:?}: the busy timeout is 5 s");
        drop(worker);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
