//! A Postgres server that accepts connections but never answers: its processes stopped
//! with `SIGSTOP` (the postmaster and every process under it). The kernel still
//! completes TCP handshakes and acknowledges what is sent, so only the journal's own
//! deadlines end the wait: an operation fails `JOURNAL_UNAVAILABLE` within the store's
//! deadline, connecting (a new store, or the next operation) within the connect timeout,
//! and once the server runs again the same store connects again by itself.
//!
//! Every blocking step runs on a thread of its own and must return within a bound a few
//! times its timeout: a hang fails the test instead of hanging the suite. The server is
//! sent `SIGCONT` on every way out (a guard), or stopping the cluster would wait for ever.
#![cfg(all(feature = "journal", target_os = "linux"))]

mod postgres_cluster;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use toolhost::error::RegistryErrorCode;
use toolhost::journal::worker::JournalWorker;
use toolhost::journal::{open, Claim, ClaimAnswer, Effect, JournalAnswer, JournalError, JournalPolicy, JournalRequest, RowKey, Store};

/// The processes under `pid`, children first found first.
fn descendants(pid: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        // `pid (comm) state ppid ...`: the name may hold spaces and parentheses.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(ppid) = stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)).and_then(|p| p.parse::<i32>().ok()) else { continue };
        parents.push((child, ppid));
    }
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for &(child, parent) in &parents {
            if parent == p && !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// The server stopped (`SIGSTOP`) until this is dropped (`SIGCONT`), a panic included.
struct Frozen {
    postmaster: i32,
    stopped: Vec<i32>,
}

impl Frozen {
    fn new(postmaster: i32) -> Self {
        let mut frozen = Self { postmaster, stopped: vec![postmaster] };
        // The postmaster first: stopped, it forks nothing new meanwhile.
        assert_eq!(unsafe { libc::kill(postmaster, libc::SIGSTOP) }, 0, "SIGSTOP {postmaster}");
        for pid in descendants(postmaster) {
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            frozen.stopped.push(pid);
        }
        frozen
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        let mut all = self.stopped.clone();
        all.extend(descendants(self.postmaster));
        for pid in all {
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }
}

/// Runs `f` on a thread of its own: its value and how long it took, or a panic when it
/// has not returned within `bound`.
fn within<T: Send + 'static>(bound: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> (T, Duration) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let started = Instant::now();
        let value = f();
        let _ = tx.send((value, started.elapsed()));
    });
    rx.recv_timeout(bound).unwrap_or_else(|_| panic!("{what} did not return within {bound:?}: it waits on the frozen server"))
}

fn unavailable(e: &JournalError, says: &str) {
    assert_eq!(e.code, RegistryErrorCode::JournalUnavailable, "{}", e.message);
    assert!(e.message.starts_with("the Postgres journal at postgres://postgres@127.0.0.1:"), "names the store: {}", e.message);
    assert!(e.message.contains(says), "says {says:?}: {}", e.message);
}

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

#[test]
fn a_frozen_server_fails_within_the_deadlines_and_the_store_reconnects_once_it_runs() {
    let cluster = postgres_cluster::Cluster::start();
    let url = format!("{}?connect_timeout=2", cluster.database("frozen"));
    let mut store = open(&url).unwrap_or_else(|e| panic!("open {url}: {e}"));
    let Store::Postgres(pg) = &mut store else { panic!("a Postgres store") };
    assert_eq!(pg.connect_timeout(), Duration::from_secs(2), "the URL's connect_timeout");
    pg.set_deadline(Duration::from_secs(1));
    store.as_store().approvals().expect("the server answers before it is stopped");

    let frozen = Frozen::new(cluster.postmaster_pid());

    // (a) An operation on the open connection: the deadline (1 s), then the connection
    // is dropped.
    let ((mut store, r), took) = within(Duration::from_secs(10), "an operation", move || {
        let r = store.as_store().approvals();
        (store, r)
    });
    let e = r.expect_err("no answer");
    unavailable(&e, "timed out after 1000 ms");
    assert!(e.maybe_written, "sent, unanswered: it may have been written");
    eprintln!("an operation on the frozen server failed after {took:?}");
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(5), "{took:?}");

    // The next one connects again: the connect timeout (2 s), the handshake unanswered.
    let ((mut store, r), took) = within(Duration::from_secs(15), "an operation that reconnects", move || {
        let r = store.as_store().claim("me", i64::MAX, 0, &[claim(1, "while-frozen")]);
        (store, r)
    });
    let e = r.expect_err("no answer");
    unavailable(&e, "connecting timed out after 2000 ms");
    assert!(!e.maybe_written, "nothing was sent: the claim cannot have been written");
    eprintln!("reconnecting to the frozen server failed after {took:?}");
    assert!(took >= Duration::from_millis(1_900) && took < Duration::from_secs(8), "{took:?}");
    // Right after, an operation fails at once with that error instead of waiting again.
    let ((mut store, r), took) = within(Duration::from_secs(15), "an operation right after", move || {
        let r = store.as_store().renew("me", i64::MAX);
        (store, r)
    });
    unavailable(&r.expect_err("no answer"), "connecting timed out after 2000 ms");
    assert!(took < Duration::from_millis(500), "{took:?}");

    // (b) Opening a new store: the connect timeout, not a hang.
    let opening = url.clone();
    let (r, took) = within(Duration::from_secs(15), "opening a store", move || open(&opening).map(drop));
    let e = r.expect_err("no answer");
    assert_eq!(e.code, RegistryErrorCode::JournalUnavailable, "{}", e.message);
    assert!(e.message.contains("connecting timed out after 2000 ms"), "{}", e.message);
    eprintln!("opening a store on the frozen server failed after {took:?}");
    assert!(took >= Duration::from_millis(1_900) && took < Duration::from_secs(8), "{took:?}");

    // (c) The server runs again: the same store connects again and works.
    drop(frozen);
    let ((mut store, claimed), took) = within(Duration::from_secs(15), "an operation after SIGCONT", move || {
        let r = store.as_store().claim("me", i64::MAX, 0, &[claim(2, "after")]);
        (store, r)
    });
    eprintln!("the first operation after SIGCONT took {took:?}");
    assert!(matches!(claimed.expect("the server answers again")[..], [ClaimAnswer::Claimed { fence: 1, .. }]));
    assert!(store.as_store().approvals().unwrap().is_empty());
}

/// The worker and its listener on a frozen server: a claim fails within the store's
/// bounds instead of waiting; dropping nothing and stopping nothing waits on the server;
/// once it runs again a claim goes through.
#[test]
fn the_journal_thread_answers_while_the_server_is_frozen_and_works_after() {
    let cluster = postgres_cluster::Cluster::start();
    let url = format!("{}?connect_timeout=2", cluster.database("frozen_worker"));
    let mut store = open(&url).unwrap_or_else(|e| panic!("open {url}: {e}"));
    let Store::Postgres(pg) = &mut store else { panic!("a Postgres store") };
    pg.set_deadline(Duration::from_secs(1));
    let (tx, rx) = mpsc::channel();
    let worker = JournalWorker::start(store, JournalPolicy::default(), Box::new(move |answers| {
        for a in answers {
            let _ = tx.send(a);
        }
    }));
    let answer = |bound: Duration| loop {
        match rx.recv_timeout(bound).expect("an answer within the bound") {
            JournalAnswer::Due(_) => continue,
            other => return other,
        }
    };
    worker.send(JournalRequest::Claim(claim(1, "before")));
    assert!(matches!(answer(Duration::from_secs(10)), JournalAnswer::Claimed { answer: ClaimAnswer::Claimed { .. }, .. }));

    let frozen = Frozen::new(cluster.postmaster_pid());
    let sent = Instant::now();
    worker.send(JournalRequest::Claim(claim(2, "frozen")));
    // At worst behind one turn of housekeeping (renewing, listing, pruning: 2 s each to
    // reconnect) and its own: well under 20 s.
    match answer(Duration::from_secs(20)) {
        JournalAnswer::Failed { exec: Some(2), error, .. } => {
            unavailable(&error, "timed out after");
        }
        other => panic!("expected the claim to fail, got {other:?}"),
    }
    eprintln!("a claim through the journal thread on the frozen server failed after {:?}", sent.elapsed());

    // Running again: a claim goes through, once the journal thread's last attempt to
    // connect, which may have timed out just before, is a second old (`RECONNECT_PAUSE`:
    // meanwhile claims fail at once with its error).
    drop(frozen);
    let thawed = Instant::now();
    for exec in 3.. {
        assert!(thawed.elapsed() < Duration::from_secs(20), "no claim went through in 20 s after SIGCONT");
        worker.send(JournalRequest::Claim(claim(exec, "after")));
        match answer(Duration::from_secs(20)) {
            JournalAnswer::Claimed { answer: ClaimAnswer::Claimed { .. }, .. } => break,
            JournalAnswer::Failed { exec: Some(e), error, .. } if e == exec => {
                unavailable(&error, "timed out after");
                std::thread::sleep(Duration::from_millis(100));
            }
            other => panic!("expected the claim to go through, got {other:?}"),
        }
    }
    eprintln!("a claim after SIGCONT went through after {:?}", thawed.elapsed());
    let handle = worker.stop();
    within(Duration::from_secs(10), "stopping the journal thread", move || handle.map(|h| h.join()));
}
