//! The journal stores (`JournalStore`) against a real SQLite file and a real Postgres
//! server: every test runs on both, and they must answer the same.
#![cfg(feature = "journal")]

mod postgres_cluster;

use std::sync::{Arc, Barrier};

use serde_json::json;
use toolhost::journal::{
    open, ApprovalRequest, Claim, ClaimAnswer, DecideAnswer, Decision, Effect, Record, RecordAnswer, RowKey, Store,
    StoredApproval, StoredOutcome, TakeOver, Verdict,
};

const LEASE: i64 = 10_000;

/// A fresh journal of each kind: a SQLite file, and a Postgres cluster of the test's
/// own (stopped when the test ends: a static one would never be stopped).
struct Journals {
    _cluster: postgres_cluster::Cluster,
    dir: std::path::PathBuf,
    urls: Vec<(&'static str, String)>,
}

impl Drop for Journals {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn journals(test: &str) -> Journals {
    let dir = std::env::temp_dir().join(format!("toolhost-journal-test-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = postgres_cluster::Cluster::start();
    let urls = vec![("sqlite", format!("sqlite:{}", dir.join(format!("{test}.db")).display())), ("postgres", cluster.database(test))];
    Journals { _cluster: cluster, dir, urls }
}

fn store(url: &str) -> Store {
    open(url).unwrap_or_else(|e| panic!("open {url}: {e}"))
}

fn row(key: &str) -> RowKey {
    RowKey { scope: String::new(), key: key.into() }
}

fn claim(key: &str, args: serde_json::Value, effect: Effect) -> Claim {
    Claim {
        exec: 1,
        row: row(key),
        fingerprint: toolhost::journal::fingerprint("pay", &args),
        tool: "pay".into(),
        effect,
        args: args.to_string(),
        execution_id: format!("exec-{key}"),
        tool_call_id: Some(key.into()),
        approval: None,
    }
}

fn outcome(result: serde_json::Value) -> StoredOutcome {
    StoredOutcome {
        status: "succeeded".into(),
        result: Some(result),
        error: None,
        execution_id: "exec".into(),
        attempts: 1,
        started_at: Some(1.0),
        completed_at: 2.0,
        duration_ms: Some(1.0),
        approval: None,
    }
}

fn one(store: &mut Store, owner: &str, now: i64, c: &Claim) -> ClaimAnswer {
    store.as_store().claim(owner, now + LEASE, now, std::slice::from_ref(c)).unwrap().remove(0)
}

fn fence_of(a: &ClaimAnswer) -> i64 {
    match a {
        ClaimAnswer::Claimed { fence, .. } => *fence,
        other => panic!("expected Claimed, got {other:?}"),
    }
}

/// A decision check that takes every decision.
#[allow(clippy::result_large_err)] // the stores' own check type, `Result<(), ToolError>`
fn accept(_: &StoredApproval) -> Result<(), toolhost::ToolError> {
    Ok(())
}

#[test]
fn a_key_is_claimed_once_replayed_after_its_outcome_and_refused_with_other_arguments() {
    let j = journals("replay");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        let c = claim("k1", json!({ "cents": 5 }), Effect::Once);
        let fence = fence_of(&one(&mut s, "a", 1_000, &c));
        assert!(matches!(one(&mut s, "b", 1_001, &c), ClaimAnswer::InFlight), "{kind}: a live claim makes others wait");
        let other = claim("k1", json!({ "cents": 6 }), Effect::Once);
        assert!(matches!(one(&mut s, "b", 1_002, &other), ClaimAnswer::Conflict { ref tool } if tool == "pay"), "{kind}: other arguments conflict");
        let rec = Record { exec: 1, row: row("k1"), fence, outcome: outcome(json!({ "paid": 5 })) };
        assert!(matches!(s.as_store().record(1_003, std::slice::from_ref(&rec)).unwrap()[..], [RecordAnswer::Recorded]), "{kind}");
        match one(&mut s, "b", 1_004, &c) {
            ClaimAnswer::Finished(o) => assert_eq!(o.result, Some(json!({ "paid": 5 })), "{kind}"),
            other => panic!("{kind}: expected Finished, got {other:?}"),
        }
        // A second outcome for the same key is fenced off and sees the first.
        match &s.as_store().record(1_005, &[Record { outcome: outcome(json!("other")), ..rec }]).unwrap()[..] {
            [RecordAnswer::Fenced(Some(o))] => assert_eq!(o.result, Some(json!({ "paid": 5 })), "{kind}"),
            other => panic!("{kind}: expected Fenced, got {other:?}"),
        }
    }
}

#[test]
fn an_expired_lease_is_taken_over_by_effect() {
    let j = journals("takeover");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        // `once`: ends interrupted, never claimed to run again.
        let once = claim("once", json!({}), Effect::Once);
        fence_of(&one(&mut s, "dead", 0, &once));
        match one(&mut s, "alive", LEASE + 1, &once) {
            ClaimAnswer::Ended { outcome: o, action } => {
                assert_eq!(action, "interrupted", "{kind}");
                assert_eq!(o.status, "failed", "{kind}");
                assert_eq!(o.error.as_ref().unwrap().category, "interrupted", "{kind}");
                assert_eq!(o.error.as_ref().unwrap().code, "INTERRUPTED", "{kind}");
            }
            other => panic!("{kind}: expected Ended(interrupted), got {other:?}"),
        }
        // `idempotent`: taken over to run again, with a new fence; the old owner is fenced off.
        let idem = claim("idem", json!({}), Effect::Idempotent);
        let old = fence_of(&one(&mut s, "dead", 0, &idem));
        match one(&mut s, "alive", LEASE + 1, &idem) {
            ClaimAnswer::Claimed { fence, taken_over: Some(prior) } => {
                assert_eq!(fence, old + 1, "{kind}");
                assert_eq!(prior.state, "running", "{kind}");
                assert_eq!(prior.owner, "dead", "{kind}");
            }
            other => panic!("{kind}: expected a takeover, got {other:?}"),
        }
        let late = Record { exec: 1, row: row("idem"), fence: old, outcome: outcome(json!("late")) };
        assert!(matches!(s.as_store().record(LEASE + 2, &[late]).unwrap()[..], [RecordAnswer::Fenced(None)]), "{kind}: the dead owner's write is refused");
        // A renewed lease is not taken over.
        let renewed = claim("renewed", json!({}), Effect::Idempotent);
        fence_of(&one(&mut s, "slow", 0, &renewed));
        s.as_store().renew("slow", 3 * LEASE).unwrap();
        assert!(matches!(one(&mut s, "other", LEASE + 1, &renewed), ClaimAnswer::InFlight), "{kind}");
    }
}

#[test]
fn exactly_one_approval_decision_wins_and_a_denial_is_the_outcome() {
    let j = journals("approvals");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        let mut c = claim("ask", json!({ "cents": 100 }), Effect::Once);
        c.approval = Some(ApprovalRequest { approval_id: "ap-1".into(), requested_at: 10.0, expires_at: None });
        let fence = fence_of(&one(&mut s, "owner", 10, &c));
        let listed = s.as_store().approvals().unwrap();
        assert_eq!(listed.len(), 1, "{kind}");
        assert_eq!((listed[0].approval_id.as_str(), listed[0].tool.as_str(), listed[0].args.as_str()), ("ap-1", "pay", r#"{"cents":100}"#), "{kind}");
        let approve = Decision { approval_id: "ap-1".into(), verdict: Verdict::Approve { args: Some(r#"{"cents":50}"#.into()) }, by: Some("ada".into()), now_ms: 20.0 };
        // A check that refuses leaves everything as it was.
        #[allow(clippy::result_large_err)] // the stores' own check type, `Result<(), ToolError>`
        let refused = s.as_store().decide(&approve, &|_| Err(toolhost::ToolError::execution("no"))).unwrap();
        assert!(matches!(refused, DecideAnswer::Refused(_)), "{kind}");
        assert!(matches!(s.as_store().decide(&approve, &accept).unwrap(), DecideAnswer::Decided(_)), "{kind}");
        let deny = Decision { approval_id: "ap-1".into(), verdict: Verdict::Deny { reason: "late".into() }, by: None, now_ms: 21.0 };
        assert!(matches!(s.as_store().decide(&deny, &accept).unwrap(), DecideAnswer::NotFound), "{kind}: answered once");
        assert!(s.as_store().approvals().unwrap().is_empty(), "{kind}");
        let r = s.as_store().rows(&[row("ask")]).unwrap().remove(0);
        assert_eq!(r.state, "approved", "{kind}");
        assert_eq!(r.args, r#"{"cents":50}"#, "{kind}: the edited arguments are kept");
        assert_eq!(r.approval.as_ref().unwrap()["by"], "ada", "{kind}");
        assert_eq!(s.as_store().start("owner", 30 + LEASE, &[(row("ask"), fence)]).unwrap(), [true], "{kind}");
        assert_eq!(s.as_store().rows(&[row("ask")]).unwrap()[0].state, "running", "{kind}");

        let mut d = claim("deny", json!({}), Effect::Once);
        d.approval = Some(ApprovalRequest { approval_id: "ap-2".into(), requested_at: 10.0, expires_at: Some(1_000.0) });
        fence_of(&one(&mut s, "owner", 10, &d));
        let deny = Decision { approval_id: "ap-2".into(), verdict: Verdict::Deny { reason: "too much".into() }, by: Some("bob".into()), now_ms: 30.0 };
        assert!(matches!(s.as_store().decide(&deny, &accept).unwrap(), DecideAnswer::Decided(_)), "{kind}");
        match one(&mut s, "replayer", 40, &d) {
            ClaimAnswer::Finished(o) => {
                assert_eq!(o.error.as_ref().unwrap().code, "APPROVAL_DENIED", "{kind}");
                assert!(o.error.as_ref().unwrap().message.contains("too much"), "{kind}");
                assert_eq!(o.approval.as_ref().unwrap()["by"], "bob", "{kind}");
            }
            other => panic!("{kind}: expected the denial, got {other:?}"),
        }
    }
}

#[test]
fn an_unanswered_approval_of_a_dead_owner_expires_into_a_denial() {
    let j = journals("expiry");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        let mut c = claim("ask", json!({}), Effect::Once);
        c.approval = Some(ApprovalRequest { approval_id: "ap".into(), requested_at: 0.0, expires_at: Some(5.0) });
        fence_of(&one(&mut s, "dead", 0, &c));
        match one(&mut s, "alive", LEASE + 1, &c) {
            ClaimAnswer::Ended { outcome: o, action: "expired" } => assert_eq!(o.error.unwrap().code, "APPROVAL_DENIED", "{kind}"),
            other => panic!("{kind}: expected the expiry, got {other:?}"),
        }
        // One that has not expired is taken over to keep waiting for the same approval.
        let mut w = claim("wait", json!({}), Effect::Once);
        w.approval = Some(ApprovalRequest { approval_id: "ap-w".into(), requested_at: 0.0, expires_at: None });
        fence_of(&one(&mut s, "dead", 0, &w));
        match one(&mut s, "alive", LEASE + 1, &w) {
            ClaimAnswer::Claimed { taken_over: Some(prior), .. } => {
                assert_eq!(prior.state, "awaiting", "{kind}");
                assert_eq!(prior.approval_id.as_deref(), Some("ap-w"), "{kind}");
            }
            other => panic!("{kind}: expected a takeover of the wait, got {other:?}"),
        }
    }
}

#[test]
fn release_due_take_over_and_prune() {
    let j = journals("housekeeping");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        let c = claim("gone", json!({}), Effect::Once);
        let fence = fence_of(&one(&mut s, "a", 0, &c));
        s.as_store().release(&[(row("gone"), fence)]).unwrap();
        assert_eq!(fence_of(&one(&mut s, "b", 1, &c)), 1, "{kind}: a released key is claimed afresh");

        let stale = claim("stale", json!({}), Effect::Idempotent);
        let old = fence_of(&one(&mut s, "dead", 0, &stale));
        let due = s.as_store().due(LEASE + 5, None, 10).unwrap();
        assert!(due.iter().any(|r| r.row.key == "stale" && r.effect == Effect::Idempotent), "{kind}: {due:?}");
        let take = |execution_id: &str| TakeOver { row: row("stale"), fence: old, state: "running".into(), execution_id: execution_id.into() };
        let taken = s.as_store().take_over("rescuer", 3 * LEASE, LEASE + 5, &take("exec-rescue")).unwrap();
        assert_eq!(taken, Some(old + 1), "{kind}");
        assert_eq!(s.as_store().take_over("other", 3 * LEASE, LEASE + 5, &take("exec-other")).unwrap(), None, "{kind}: one takeover wins");
        let held = s.as_store().rows(&[row("stale")]).unwrap().remove(0);
        assert_eq!((held.owner.as_str(), held.execution_id.as_str()), ("rescuer", "exec-rescue"), "{kind}: held for the execution that took it");

        let f = fence_of(&one(&mut s, "a", 0, &claim("old", json!({}), Effect::Once)));
        s.as_store().record(100, &[Record { exec: 1, row: row("old"), fence: f, outcome: outcome(json!(1)) }]).unwrap();
        assert_eq!(s.as_store().prune(200, i64::MIN).unwrap(), 1, "{kind}: the finished row past retention");
        assert!(s.as_store().rows(&[row("old")]).unwrap().is_empty(), "{kind}");
        // Abandoned past retention: an idempotent call goes; a once call that was running
        // stays until recovery has stored its interruption; a call waiting for approval,
        // or approved and not yet run, stays (pruning them lost approvals a day after a
        // crash, while the approvals dashboard still listed them).
        one(&mut s, "gone", 0, &claim("abandoned-idem", json!({}), Effect::Idempotent));
        one(&mut s, "gone", 0, &claim("abandoned-once", json!({}), Effect::Once));
        for key in ["abandoned-awaiting", "abandoned-approved"] {
            let mut c = claim(key, json!({}), Effect::Idempotent);
            c.approval = Some(ApprovalRequest { approval_id: format!("ap-{key}"), requested_at: 0.0, expires_at: None });
            one(&mut s, "gone", 0, &c);
        }
        let approve = Decision { approval_id: "ap-abandoned-approved".into(), verdict: Verdict::Approve { args: None }, by: None, now_ms: 1.0 };
        assert!(matches!(s.as_store().decide(&approve, &accept).unwrap(), DecideAnswer::Decided(_)), "{kind}");
        s.as_store().prune(i64::MIN, 5 * LEASE).unwrap();
        let keys = ["abandoned-idem", "abandoned-once", "abandoned-awaiting", "abandoned-approved"].map(row);
        let left: Vec<String> = s.as_store().rows(&keys).unwrap().into_iter().map(|r| r.row.key).collect();
        assert_eq!(left, ["abandoned-once", "abandoned-awaiting", "abandoned-approved"], "{kind}");
        assert_eq!(s.as_store().approvals().unwrap().len(), 1, "{kind}: the waiting call is still listed");
    }
}

#[test]
fn two_connections_racing_for_one_key_get_one_claim() {
    let j = journals("race");
    for (kind, url) in j.urls.clone() {
        for round in 0..20 {
            let key = format!("race-{round}");
            let barrier = Arc::new(Barrier::new(4));
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let (url, key, barrier) = (url.clone(), key.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        let mut s = store(&url);
                        barrier.wait();
                        one(&mut s, &format!("owner-{i}"), 0, &claim(&key, json!({}), Effect::Once))
                    })
                })
                .collect();
            let answers: Vec<ClaimAnswer> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let claimed = answers.iter().filter(|a| matches!(a, ClaimAnswer::Claimed { .. })).count();
            assert_eq!(claimed, 1, "{kind} round {round}: {answers:?}");
        }
    }
}

#[test]
fn a_newer_schema_is_refused() {
    let j = journals("newer");
    for (kind, url) in j.urls.clone() {
        drop(store(&url));
        match kind {
            "sqlite" => {
                let path = url.strip_prefix("sqlite:").unwrap();
                let c = rusqlite_connection(path);
                c.execute("UPDATE toolhost_meta SET value = '999' WHERE name = 'schema_version'", []).unwrap();
            }
            _ => {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                c.execute("UPDATE toolhost_meta SET value = '999' WHERE name = 'schema_version'", &[]).unwrap();
            }
        }
        let e = open(&url).err().expect("a newer schema must be refused");
        assert_eq!(e.code(), "JOURNAL_SCHEMA_NEWER", "{kind}: {}", e.message);
    }
}

fn rusqlite_connection(path: &str) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// SQLite only: a new file opened by several connections at the same moment. Switching a
/// file to WAL upgrades a read lock to a write lock, and SQLite answers `SQLITE_BUSY` at
/// once there rather than call the busy handler; processes starting together (a fleet's
/// workers, or a test's) must still all open it.
#[test]
fn connections_opening_a_new_sqlite_file_together_all_open_it() {
    let dir = std::env::temp_dir().join(format!("toolhost-journal-test-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for round in 0..60 {
        let url = format!("sqlite:{}", dir.join(format!("open-{round}.db")).display());
        let barrier = Arc::new(Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let (url, barrier) = (url.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    open(&url).map(drop).map_err(|e| e.message)
                })
            })
            .collect();
        failures.extend(handles.into_iter().filter_map(|h| h.join().unwrap().err()).map(|e| format!("round {round}: {e}")));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} of 360 opens failed: {:?}", failures.len(), &failures[..failures.len().min(3)]);
}

#[test]
fn a_task_s_final_status_is_kept() {
    use toolhost::journal::{TaskOp, TaskRow};
    let j = journals("task_final");
    for (kind, url) in &j.urls {
        let mut s = store(url);
        let update = |s: &mut Store, status: &str, result: Option<serde_json::Value>| {
            let op = TaskOp::Update { task_id: "t1".into(), status: status.into(), status_message: None, result, now: 2 };
            s.as_store().task(&op).unwrap()
        };
        let row = TaskRow { task_id: "t1".into(), status: "working".into(), status_message: None, ttl: None, poll_interval: None, created_at: 1, last_updated: 1, result: None };
        s.as_store().task(&TaskOp::Create(row)).unwrap();
        assert_eq!(update(&mut s, "input_required", None), json!(true), "{kind}");
        assert_eq!(update(&mut s, "cancelled", None), json!(true), "{kind}");
        // The cancelled call's outcome comes after: the task stays cancelled, with no result.
        assert_eq!(update(&mut s, "completed", Some(json!({ "content": [] }))), json!(false), "{kind}");
        let got = s.as_store().task(&TaskOp::Get { task_id: "t1".into() }).unwrap();
        assert_eq!(got["task"]["status"], json!("cancelled"), "{kind}: {got}");
        assert!(got["task"].get("result").is_none(), "{kind}: {got}");
    }
}

/// A dead process's 100 unanswered approvals (no deadline) filled recovery's list of due
/// rows for ever (`ORDER BY lease_until LIMIT 100`): an idempotent call that crashed later
/// was never listed, so never run again. Awaiting rows are left out until their approval
/// expires, and the listing pages on from the last row, so rows recovery leaves (a tool
/// it lacks) cannot hide the rest either.
#[test]
fn due_rows_are_not_hidden_by_waiting_approvals_or_rows_left_alone() {
    let j = journals("due_pages");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        for i in 0..5 {
            let mut c = claim(&format!("ask-{i}"), json!({ "i": i }), Effect::Once);
            c.approval = Some(ApprovalRequest { approval_id: format!("ap-{i}"), requested_at: 0.0, expires_at: None });
            one(&mut s, "dead", 0, &c);
        }
        let mut later = claim("ask-later", json!({}), Effect::Once);
        later.approval = Some(ApprovalRequest { approval_id: "ap-later".into(), requested_at: 0.0, expires_at: Some(1e15) });
        one(&mut s, "dead", 0, &later);
        let mut expired = claim("ask-expired", json!({}), Effect::Once);
        expired.approval = Some(ApprovalRequest { approval_id: "ap-expired".into(), requested_at: 0.0, expires_at: Some(5.0) });
        one(&mut s, "dead", 0, &expired);
        for i in 0..3 {
            one(&mut s, "dead", 1 + i, &claim(&format!("sync-{i}"), json!({}), Effect::Idempotent));
        }
        let keys = |rows: &[toolhost::journal::RowState]| rows.iter().map(|r| r.row.key.clone()).collect::<Vec<_>>();
        let due = s.as_store().due(LEASE + 100, None, 10).unwrap();
        assert_eq!(keys(&due), ["ask-expired", "sync-0", "sync-1", "sync-2"], "{kind}: only rows recovery may act on");
        // Two at a time, each page after the last.
        let first = s.as_store().due(LEASE + 100, None, 2).unwrap();
        assert_eq!(keys(&first), ["ask-expired", "sync-0"], "{kind}");
        let last = first.last().unwrap();
        let next = s.as_store().due(LEASE + 100, Some(&(last.lease_until, last.row.clone())), 2).unwrap();
        assert_eq!(keys(&next), ["sync-1", "sync-2"], "{kind}");
        let last = next.last().unwrap();
        assert!(s.as_store().due(LEASE + 100, Some(&(last.lease_until, last.row.clone())), 2).unwrap().is_empty(), "{kind}");
    }
}

/// An approval past its deadline, whose asker died before its timer denied it, was still
/// listed and could be approved (the call then ran, 800 ms after a 300 ms timeout): only
/// recovery enforced the deadline. It is no longer listed, an approval of it finds
/// nothing (so recovery's denial cannot overwrite an approval either), a denial is taken.
#[test]
fn an_approval_past_its_deadline_is_not_listed_nor_approved() {
    let j = journals("late_approval");
    let now = toolhost::record::now_ms();
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        for (key, expires) in [("late", Some(now - 500.0)), ("open", Some(now + 60_000.0)), ("forever", None)] {
            let mut c = claim(key, json!({ "k": key }), Effect::Once);
            c.approval = Some(ApprovalRequest { approval_id: format!("ap-{key}"), requested_at: now - 800.0, expires_at: expires });
            one(&mut s, "dead", now as i64 - 800, &c);
        }
        let listed: Vec<String> = s.as_store().approvals().unwrap().into_iter().map(|a| a.approval_id).collect();
        assert_eq!(listed, ["ap-forever", "ap-open"], "{kind}");
        let approve = |id: &str| Decision { approval_id: id.into(), verdict: Verdict::Approve { args: None }, by: Some("late".into()), now_ms: now };
        assert!(matches!(s.as_store().decide(&approve("ap-late"), &accept).unwrap(), DecideAnswer::NotFound), "{kind}");
        assert_eq!(s.as_store().rows(&[row("late")]).unwrap()[0].state, "awaiting", "{kind}: nothing written");
        assert!(matches!(s.as_store().decide(&approve("ap-open"), &accept).unwrap(), DecideAnswer::Decided(_)), "{kind}");
        let deny = Decision { approval_id: "ap-late".into(), verdict: Verdict::Deny { reason: "no".into() }, by: None, now_ms: now };
        assert!(matches!(s.as_store().decide(&deny, &accept).unwrap(), DecideAnswer::Decided(_)), "{kind}: a denial is taken");
    }
}

/// What a claim whose answer was lost wrote is let go by `forget`, and nothing else: a
/// fresh claim is deleted, a row taken over (fence 2) is left as the dead process left it
/// (no owner, lease expired); not another owner's row, another execution's, nor a
/// finished one.
#[test]
fn forget_undoes_only_an_unfinished_claim_of_its_owner_and_execution() {
    let j = journals("forget");
    for (kind, url) in j.urls.clone() {
        let mut s = store(&url);
        let lost = claim("lost", json!({}), Effect::Once);
        fence_of(&one(&mut s, "me", 0, &lost));
        let mut awaiting = claim("lost-awaiting", json!({}), Effect::Once);
        awaiting.approval = Some(ApprovalRequest { approval_id: "ap-lost".into(), requested_at: 0.0, expires_at: None });
        fence_of(&one(&mut s, "me", 0, &awaiting));
        fence_of(&one(&mut s, "other", 0, &claim("theirs", json!({}), Effect::Once)));
        fence_of(&one(&mut s, "me", 0, &claim("other-exec", json!({}), Effect::Once)));
        // Taken over from a dead process by a claim of this one: the row names its execution.
        for (key, execution_id) in [("taken", "exec-taken-by-me"), ("taken-kept", "exec-kept")] {
            let mut taken = claim(key, json!({}), Effect::Idempotent);
            fence_of(&one(&mut s, "dead", 0, &taken));
            taken.execution_id = execution_id.into();
            assert_eq!(fence_of(&one(&mut s, "me", LEASE + 1, &taken)), 2, "{kind}");
            assert_eq!(s.as_store().rows(&[row(key)]).unwrap()[0].execution_id, execution_id, "{kind}");
        }
        let f = fence_of(&one(&mut s, "me", 0, &claim("done", json!({}), Effect::Once)));
        s.as_store().record(1, &[Record { exec: 1, row: row("done"), fence: f, outcome: outcome(json!(1)) }]).unwrap();

        let forget: Vec<(toolhost::journal::RowKey, String)> = [
            ("lost", "exec-lost"),
            ("lost-awaiting", "exec-lost-awaiting"),
            ("theirs", "exec-theirs"),
            ("other-exec", "exec-someone-else"),
            ("taken", "exec-taken-by-me"),
            // The dead process's execution: this one's takeover is not let go.
            ("taken-kept", "exec-taken-kept"),
            ("done", "exec-done"),
            ("absent", "exec-absent"),
        ]
        .iter()
        .map(|(k, e)| (row(k), e.to_string()))
        .collect();
        s.as_store().forget("me", &forget).unwrap();
        let keys = ["lost", "lost-awaiting", "theirs", "other-exec", "taken", "taken-kept", "done"].map(row);
        let mut left: Vec<(String, String, i64)> = s.as_store().rows(&keys).unwrap().into_iter().map(|r| (r.row.key, r.owner, r.fence)).collect();
        left.sort();
        let at = |k: &str, o: &str, f: i64| (k.to_string(), o.to_string(), f);
        assert_eq!(left, [at("done", "me", 1), at("other-exec", "me", 1), at("taken", "", 2), at("taken-kept", "me", 2), at("theirs", "other", 1)], "{kind}");
        // The row let go is due for recovery at once, and a claim takes it over again.
        let due = s.as_store().due(2, None, 10).unwrap();
        assert!(due.iter().any(|r| r.row.key == "taken" && r.lease_until == 0), "{kind}: {due:?}");
        assert_eq!(fence_of(&one(&mut s, "me", 2, &claim("taken", json!({}), Effect::Idempotent))), 3, "{kind}");
        assert!(s.as_store().approvals().unwrap().is_empty(), "{kind}: the lost claim's approval is gone too");
        // The key is free again.
        assert_eq!(fence_of(&one(&mut s, "me", 1, &lost)), 1, "{kind}");
    }
}
