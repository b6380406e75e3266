//! The Rust `ToolExecutor` with a journal (`journal` feature), on a SQLite file and on a
//! real Postgres server: replay, conflict, and recovery of a call a dead process left.
#![cfg(feature = "journal")]

mod postgres_cluster;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::journal::{open, Claim, Effect, JournalPolicy, RowKey};
use toolhost::{handler_fn, CallOptions, ManagerConfig, ToolDeclaration, ToolExecutor, ToolRegistry};

fn registry(runs: Arc<AtomicU32>) -> ToolRegistry {
    let r = ToolRegistry::new();
    let mut pay = ToolDeclaration::new("pay", "Pays", json!({ "type": "object", "properties": { "cents": { "type": "integer" } } }));
    pay.metadata.effect = Some(Effect::Once);
    let counted = runs.clone();
    r.register(pay, handler_fn(move |args: Value, _| {
        let counted = counted.clone();
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(json!({ "paid": args["cents"] }))
        }
    }))
    .unwrap();
    let mut sync = ToolDeclaration::new("sync", "Safe to run again", json!({ "type": "object" }));
    sync.metadata.effect = Some(Effect::Idempotent);
    r.register(sync, handler_fn(move |_, _| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(100, Ordering::SeqCst);
            Ok(json!("synced"))
        }
    }))
    .unwrap();
    r
}

fn keyed(key: &str) -> CallOptions {
    CallOptions { idempotency_key: Some(key.into()), ..CallOptions::default() }
}

/// Runs `test` on a SQLite journal and on a Postgres one, each on a multi-thread runtime
/// of its own. `setup` runs first, outside any runtime (the Postgres client blocks).
fn each_journal(setup: impl Fn(&str), test: impl Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) {
    let cluster = postgres_cluster::Cluster::start();
    let dir = std::env::temp_dir().join(format!("toolhost-executor-journal-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    for url in [format!("sqlite:{}", dir.join("j.db").display()), cluster.database("executor")] {
        setup(&url);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(test(url));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_key_runs_once_is_replayed_and_conflicts_with_other_arguments() {
    each_journal(|_| {}, |url| {
        Box::pin(async move {
            let runs = Arc::new(AtomicU32::new(0));
            let ex = ToolExecutor::with_journal(registry(runs.clone()), ManagerConfig::default(), &url, JournalPolicy::default()).unwrap();
            let first = ex.execute("pay", json!({ "cents": 5 }), keyed("order-1")).await;
            assert_eq!(first.result().unwrap(), &json!({ "paid": 5 }), "{url}");
            let again = ex.execute("pay", json!({ "cents": 5 }), keyed("order-1")).await;
            assert!(again.record.replayed, "{url}");
            assert_eq!(again.result().unwrap(), &json!({ "paid": 5 }));
            let other = ex.execute("pay", json!({ "cents": 6 }), keyed("order-1")).await;
            assert_eq!(other.result().unwrap_err().code, "IDEMPOTENCY_CONFLICT");
            assert_eq!(runs.load(Ordering::SeqCst), 1, "{url}");
        })
    });
}

#[test]
fn recovery_runs_an_idempotent_call_a_dead_process_left_and_interrupts_a_once_call() {
    // A dead process's claims: running, leases long expired.
    let leave = |url: &str| {
            let mut store = open(url).unwrap();
            for (key, tool, effect) in [("left-sync", "sync", Effect::Idempotent), ("left-pay", "pay", Effect::Once)] {
                let claim = Claim {
                    exec: 1,
                    row: RowKey { scope: String::new(), key: key.into() },
                    fingerprint: toolhost::journal::fingerprint(tool, &json!({})),
                    tool: tool.into(),
                    effect,
                    args: "{}".into(),
                    execution_id: "dead".into(),
                    tool_call_id: None,
                    approval: None,
                };
                // Its lease ran out a moment ago.
                let now = toolhost::record::now_ms() as i64;
                store.as_store().claim("dead-process", now - 1000, now - 11_000, &[claim]).unwrap();
            }
    };
    each_journal(leave, |url| {
        Box::pin(async move {
            let runs = Arc::new(AtomicU32::new(0));
            let recovered = Arc::new(std::sync::Mutex::new(Vec::new()));
            let ex = ToolExecutor::with_journal(registry(runs.clone()), ManagerConfig::default(), &url, JournalPolicy { lease_ms: 300, ..JournalPolicy::default() }).unwrap();
            let seen = recovered.clone();
            ex.on_event(move |e| {
                if let toolhost::ExecutionEvent::Recovered { idempotency_key, action, .. } = e {
                    seen.lock().unwrap().push((idempotency_key.clone(), *action));
                }
            });
            // Recovery runs on start (and every half lease): the idempotent call runs here.
            for _ in 0..100 {
                if runs.load(Ordering::SeqCst) >= 100 && recovered.lock().unwrap().len() >= 2 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(runs.load(Ordering::SeqCst), 100, "{url}: sync ran once, pay never");
            let mut actions = recovered.lock().unwrap().clone();
            actions.sort();
            assert_eq!(actions, [("left-pay".to_string(), "interrupted"), ("left-sync".to_string(), "rerun")], "{url}");
            // A replay of each key gets what recovery stored.
            let sync = ex.execute("sync", json!({}), keyed("left-sync")).await;
            assert!(sync.record.replayed && sync.is_success(), "{url}");
            let pay = ex.execute("pay", json!({}), keyed("left-pay")).await;
            assert_eq!(pay.result().unwrap_err().code, "INTERRUPTED", "{url}");
            assert_eq!(runs.load(Ordering::SeqCst), 100);
        })
    });
}

/// A key with a NUL character, or over ~2.7 KB, failed `JOURNAL_UNAVAILABLE` ("transient",
/// "safe to call again") on Postgres every time, while SQLite took it: every store now
/// refuses it up front, `INVALID_CONFIG` naming the option and the limit, without running.
#[test]
fn a_key_no_store_can_keep_is_refused_alike_on_every_store() {
    each_journal(|_| {}, |url| {
        Box::pin(async move {
            let runs = Arc::new(AtomicU32::new(0));
            let ex = ToolExecutor::with_journal(registry(runs.clone()), ManagerConfig::default(), &url, JournalPolicy::default()).unwrap();
            for (options, name, why) in [
                (keyed("a\0b"), "idempotencyKey", "NUL"),
                (keyed(&"k".repeat(1025)), "idempotencyKey", "1025 bytes"),
                (CallOptions { tool_call_id: Some("c".repeat(3000)), ..CallOptions::default() }, "toolCallId", "3000 bytes"),
            ] {
                let r = ex.execute("pay", json!({ "cents": 1 }), options).await;
                let e = r.result().unwrap_err();
                assert_eq!(e.code, "INVALID_CONFIG", "{url}: {}", e.message);
                assert!(e.message.contains(name) && e.message.contains(why) && e.message.contains("1024 bytes"), "{url}: {}", e.message);
            }
            let longest = ex.execute("pay", json!({ "cents": 1 }), keyed(&"k".repeat(1024))).await;
            assert!(longest.result().is_ok(), "{url}: {:?}", longest.result());
            assert_eq!(runs.load(Ordering::SeqCst), 1, "{url}");
        })
    });
}
