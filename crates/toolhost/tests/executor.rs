//! The tokio driver under a paused clock: exact backoff schedules, retry hints,
//! timeouts, cancellation, and the built-in interceptors.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;
use toolhost::log_lines::{LogLevel, LogOptions};
use toolhost::{CallOptions, ManagerConfig, RetryConfig, ToolContext, ToolDeclaration, ToolError, ToolExecutor, ToolRegistry};

fn config(jitter: toolhost::Jitter) -> ManagerConfig {
    ManagerConfig {
        retry: RetryConfig { max_attempts: 5, base_delay_ms: 100.0, max_delay_ms: 250.0, backoff_multiplier: 2.0, jitter, ..RetryConfig::default() },
        ..ManagerConfig::default()
    }
}

/// A tool that fails transiently `failures` times (with an optional retry hint),
/// recording when each attempt started.
fn flaky(registry: &ToolRegistry, failures: u32, hint: Option<u64>) -> Arc<Mutex<Vec<Instant>>> {
    let starts = Arc::new(Mutex::new(Vec::new()));
    let seen = starts.clone();
    let calls = Arc::new(AtomicU32::new(0));
    registry
        .register_async(ToolDeclaration::new("flaky", "fails, then works", json!({"type": "object"})), move |_args, _ctx| {
            seen.lock().unwrap().push(Instant::now());
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < failures {
                    Err(ToolError::transient("try again", hint))
                } else {
                    Ok(json!({ "attempts": n + 1 }))
                }
            }
        })
        .unwrap();
    starts
}

fn gaps_ms(starts: &[Instant]) -> Vec<u128> {
    starts.windows(2).map(|w| (w[1] - w[0]).as_millis()).collect()
}

#[tokio::test(start_paused = true)]
async fn backoff_follows_the_exact_schedule_without_jitter_and_is_capped() {
    let registry = ToolRegistry::new();
    let starts = flaky(&registry, 4, None);
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::None)).unwrap();
    let outcome = executor.execute("flaky", json!({}), CallOptions::default()).await;
    assert_eq!(outcome.result().unwrap(), &json!({ "attempts": 5 }));
    assert_eq!(gaps_ms(&starts.lock().unwrap()), vec![100, 200, 250, 250], "100 * 2^(n-1), capped at maxDelay 250");
    assert_eq!(outcome.record.previous_errors.len(), 4);
}

#[tokio::test(start_paused = true)]
async fn retry_after_hints_replace_the_schedule_capped_by_max_delay() {
    let registry = ToolRegistry::new();
    let starts = flaky(&registry, 1, Some(180));
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::Full)).unwrap();
    executor.execute("flaky", json!({}), CallOptions::default()).await;
    assert_eq!(gaps_ms(&starts.lock().unwrap()), vec![180]);

    let registry = ToolRegistry::new();
    let starts = flaky(&registry, 1, Some(10_000));
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::Full)).unwrap();
    executor.execute("flaky", json!({}), CallOptions::default()).await;
    assert_eq!(gaps_ms(&starts.lock().unwrap()), vec![250]);
}

#[tokio::test(start_paused = true)]
async fn full_jitter_stays_within_the_schedule() {
    let registry = ToolRegistry::new();
    let starts = flaky(&registry, 4, None);
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::Full)).unwrap();
    executor.execute("flaky", json!({}), CallOptions::default()).await;
    for (gap, cap) in gaps_ms(&starts.lock().unwrap()).into_iter().zip([100, 200, 250, 250]) {
        assert!(gap <= cap, "{gap} > {cap}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_attempt_past_its_timeout_fails_with_timeout_and_its_token_fires() {
    let registry = ToolRegistry::new();
    let fired = Arc::new(AtomicU32::new(0));
    let seen = fired.clone();
    registry
        .register_async(ToolDeclaration::new("slow", "too slow", json!({"type": "object"})), move |_args, ctx: ToolContext| {
            let seen = seen.clone();
            async move {
                tokio::spawn(async move {
                    ctx.cancellation.cancelled().await;
                    seen.fetch_add(1, Ordering::SeqCst);
                });
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(json!(null))
            }
        })
        .unwrap();
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::None)).unwrap();
    let started = Instant::now();
    let options = CallOptions { timeout_ms: Some(50.0), retry: Some(toolhost::RetryOverrides { max_attempts: Some(2), ..Default::default() }), ..Default::default() };
    let outcome = executor.execute("slow", json!({}), options).await;
    let e = outcome.result().unwrap_err();
    assert_eq!((e.category.as_str(), e.code.as_str()), ("timeout", "TIMEOUT"));
    assert_eq!(outcome.record.attempt_number, 2, "timeouts are retryable by default");
    assert_eq!(started.elapsed(), Duration::from_millis(50 + 100 + 50));
    tokio::task::yield_now().await;
    assert_eq!(fired.load(Ordering::SeqCst), 2, "each attempt's token fired");
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_backoff_ends_cancelled_with_no_further_attempt() {
    let registry = ToolRegistry::new();
    let starts = flaky(&registry, 10, None);
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::None)).unwrap();
    let token = toolhost::CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        cancel.cancel();
    });
    let outcome = executor.execute_with("flaky", json!({}), CallOptions::default(), token).await;
    assert_eq!(outcome.result().unwrap_err().code, "CANCELLED");
    assert_eq!(starts.lock().unwrap().len(), 2, "attempt 3 (due at 300 ms) never started");
}

#[tokio::test]
async fn logging_metadata_and_audit_interceptors() {
    let registry = ToolRegistry::new();
    registry
        .register_async(ToolDeclaration::new("login", "logs in", json!({"type": "object"})), |args: Value, _ctx| async move {
            if args["password"] == "wrong" {
                Err(ToolError::execution("bad password"))
            } else {
                Ok(json!({ "ok": true }))
            }
        })
        .unwrap();
    let config = ManagerConfig {
        logging: Some(LogOptions { truncate_logs: 1000, redact: vec!["password".into()], ..LogOptions::default() }),
        metadata: true,
        redact: vec!["password".into()],
        ..ManagerConfig::default()
    };
    let executor = ToolExecutor::new(registry, config).unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    executor.set_logger(move |line| seen.lock().unwrap().push((line.level, line.message.clone(), Value::Object(line.fields.to_map()))));
    let audits = Arc::new(Mutex::new(Vec::new()));
    let seen = audits.clone();
    executor.on_audit(move |r| seen.lock().unwrap().push(r.clone()));

    let ok = executor.execute("login", json!({ "user": "ada", "password": "s3cret" }), CallOptions::default()).await;
    let result = ok.result().unwrap();
    assert_eq!(result["ok"], true);
    let meta = &result["_execution_metadata"];
    assert_eq!(meta["tool_name"], "login");
    assert!(meta["duration_ms"].as_f64().unwrap() >= 0.0);
    assert!(meta["timestamp"].as_str().unwrap().ends_with('Z'));

    executor.execute("login", json!({ "password": "wrong", "user": "ada" }), CallOptions::default()).await;
    let lines = lines.lock().unwrap();
    let messages: Vec<&str> = lines.iter().map(|l| l.1.as_str()).collect();
    assert_eq!(messages[0], "[TOOL EXECUTION] Starting login");
    assert!(messages[1].starts_with("[TOOL EXECUTION] Completed login (") && messages[1].ends_with("ms)"), "{}", messages[1]);
    assert_eq!(messages[3], "[TOOL EXECUTION] Error in login: bad password");
    assert_eq!(lines[3].0, LogLevel::Error);
    let logged_args = lines[0].2["args"].as_str().unwrap();
    assert!(logged_args.contains("[REDACTED]") && !logged_args.contains("s3cret"), "{logged_args}");

    let audits = audits.lock().unwrap();
    assert_eq!(audits.len(), 2);
    assert_eq!(audits[0].status, "succeeded");
    assert_eq!(audits[1].error_code.as_deref(), Some("EXECUTION_ERROR"));
    assert_eq!(audits[0].input_hash, audits[1].input_hash, "the redacted password does not enter the hash; key order does not matter");
}

#[tokio::test(start_paused = true)]
async fn concurrency_holds_across_retries_and_every_queued_execution_finishes() {
    let registry = ToolRegistry::new();
    let running = Arc::new(AtomicU32::new(0));
    let peak = Arc::new(AtomicU32::new(0));
    let attempts = Arc::new(Mutex::new(std::collections::HashMap::<u64, u32>::new()));
    let (r, p, a) = (running.clone(), peak.clone(), attempts.clone());
    registry
        .register_async(ToolDeclaration::new("flaky", "fails once per key", json!({"type": "object"})), move |args: Value, _ctx| {
            let (r, p, a) = (r.clone(), p.clone(), a.clone());
            async move {
                let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                r.fetch_sub(1, Ordering::SeqCst);
                let key = args["key"].as_u64().unwrap();
                let n = {
                    let mut seen = a.lock().unwrap();
                    let n = seen.entry(key).or_insert(0);
                    *n += 1;
                    *n
                };
                if n == 1 {
                    Err(ToolError::transient("once more", None))
                } else {
                    Ok(json!(key))
                }
            }
        })
        .unwrap();
    let config = ManagerConfig { max_concurrency: 2, ..config(toolhost::Jitter::None) };
    let executor = ToolExecutor::new(registry, config).unwrap();
    let calls = (0..10u64).map(|key| {
        let executor = executor.clone();
        tokio::spawn(async move { executor.execute("flaky", json!({ "key": key }), CallOptions::default()).await })
    });
    let outcomes = futures_join(calls.collect()).await;
    for (key, outcome) in outcomes.iter().enumerate() {
        assert_eq!(outcome.result().unwrap(), &json!(key), "execution {key}");
        assert_eq!(outcome.record.attempt_number, 2);
    }
    assert_eq!(peak.load(Ordering::SeqCst), 2, "never more than maxConcurrency handlers at once");
}

async fn futures_join(handles: Vec<tokio::task::JoinHandle<toolhost::ExecutionOutcome>>) -> Vec<toolhost::ExecutionOutcome> {
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test(start_paused = true)]
async fn a_listener_taken_off_hears_nothing_more() {
    let registry = ToolRegistry::new();
    registry.register_async(ToolDeclaration::new("ok", "works", json!({"type": "object"})), |_, _| async { Ok(json!(1)) }).unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig::default()).unwrap();
    let heard = Arc::new(AtomicU32::new(0));
    let (a, b) = (heard.clone(), heard.clone());
    let first = executor.on_event(move |_| {
        a.fetch_add(1, Ordering::SeqCst);
    });
    let second = executor.on_event(move |_| {
        b.fetch_add(100, Ordering::SeqCst);
    });
    assert_ne!(first, second);
    executor.execute("ok", json!({}), CallOptions::default()).await;
    let both = heard.load(Ordering::SeqCst);
    assert!(both > 0 && both.is_multiple_of(101), "each event reached both: {both}");
    assert!(executor.off_event(second));
    assert!(!executor.off_event(second), "taken off once");
    executor.execute("ok", json!({}), CallOptions::default()).await;
    assert_eq!(heard.load(Ordering::SeqCst), both + both / 101, "only the first one heard the second call");
}

#[tokio::test(start_paused = true)]
async fn executions_lists_those_in_flight_last_started_first_then_history_last_finished_first() {
    let registry = ToolRegistry::new();
    registry.register_async(ToolDeclaration::new("quick", "returns i", json!({"type": "object"})), |args, _ctx| async move { Ok(args) }).unwrap();
    registry
        .register_async(ToolDeclaration::new("slow", "takes a second", json!({"type": "object"})), |args, _ctx| async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(args)
        })
        .unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig { history_limit: 2, ..ManagerConfig::default() }).unwrap();
    assert!(executor.executions(usize::MAX).is_empty());
    for i in 0..3 {
        executor.execute("quick", json!({ "i": i }), CallOptions::default()).await;
    }
    let slow: Vec<_> = (0..2)
        .map(|k| {
            let executor = executor.clone();
            tokio::spawn(async move { executor.execute("slow", json!({ "k": k }), CallOptions::default()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let listed = executor.executions(usize::MAX);
    let shown: Vec<(String, &str, Value)> = listed.iter().map(|r| (r.tool_name.clone(), r.status.as_str(), r.args.to_value().into_owned())).collect();
    assert_eq!(
        shown,
        vec![
            ("slow".into(), "executing", json!({ "k": 1 })),
            ("slow".into(), "executing", json!({ "k": 0 })),
            ("quick".into(), "succeeded", json!({ "i": 2 })),
            ("quick".into(), "succeeded", json!({ "i": 1 })),
        ],
        "in flight, last started first, then history (history_limit 2), last finished first"
    );
    assert_eq!(executor.executions(1).len(), 1);
    assert!(executor.executions(0).is_empty());
    for handle in slow {
        assert!(handle.await.unwrap().is_success());
    }
    let after: Vec<Value> = executor.executions(usize::MAX).iter().map(|r| r.args.to_value().into_owned()).collect();
    assert_eq!(after.len(), 2, "history keeps 2");
    assert!(executor.executions(usize::MAX).iter().all(|r| r.tool_name == "slow" && r.status.as_str() == "succeeded"));
}

// ---- What a Rust caller does that a JS one cannot: drop the future, panic, `?` ----

/// A tool that sleeps `ms` (paused clock) and one that answers at once.
fn sleeper_and_quick(registry: &ToolRegistry) {
    registry
        .register_async(ToolDeclaration::new("sleeper", "sleeps", json!({"type": "object"})), |_args, _ctx| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(json!("woke"))
        })
        .unwrap();
    registry.register_async(ToolDeclaration::new("quick", "answers", json!({"type": "object"})), |_args, _ctx| async { Ok(json!(1)) }).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_dropped_execute_future_cancels_its_execution_and_frees_its_slot() {
    // With no drop guard the slot stayed taken and the record Executing: once
    // maxConcurrency futures were dropped (a timeout around execute), every call hung.
    let registry = ToolRegistry::new();
    sleeper_and_quick(&registry);
    let executor = ToolExecutor::new(registry, ManagerConfig { max_concurrency: 1, ..config(toolhost::Jitter::None) }).unwrap();
    let ended = Arc::new(Mutex::new(Vec::new()));
    let seen = ended.clone();
    executor.on_audit(move |r| seen.lock().unwrap().push((r.tool_name.clone(), r.status.clone())));
    for _ in 0..3 {
        // Running, then (behind a running one) queued: both dropped by their timeouts.
        let running = tokio::time::timeout(Duration::from_millis(10), executor.execute("sleeper", json!({}), CallOptions::default()));
        assert!(running.await.is_err(), "the sleeper is still running when its timeout drops it");
    }
    let first = executor.execute("sleeper", json!({}), CallOptions::default());
    let queued = tokio::time::timeout(Duration::from_millis(10), executor.execute("quick", json!({}), CallOptions::default()));
    let (first, queued) = tokio::join!(tokio::time::timeout(Duration::from_millis(20), first), queued);
    assert!(first.is_err() && queued.is_err());
    let next = tokio::time::timeout(Duration::from_secs(1), executor.execute("quick", json!({}), CallOptions::default())).await;
    assert_eq!(next.expect("a call after the dropped ones runs").result().unwrap(), &json!(1));
    let records = executor.executions(usize::MAX);
    assert_eq!(records.iter().filter(|r| r.status == toolhost::ExecutionStatus::Cancelled).count(), 5, "{records:?}");
    assert_eq!(ended.lock().unwrap().iter().filter(|(_, s)| s == "cancelled").count(), 5, "each dropped call has its audit record");
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_fails_its_attempt_and_leaves_the_executor_whole() {
    let registry = ToolRegistry::new();
    registry
        .register_async(ToolDeclaration::new("boom", "panics", json!({"type": "object"})), |_args, _ctx| async {
            panic!("the disk is on fire");
            #[allow(unreachable_code)]
            Ok(json!(1))
        })
        .unwrap();
    registry.register(ToolDeclaration::new("boom_now", "panics before its future", json!({"type": "object"})), toolhost::handler_fn(|_args: Value, _ctx: ToolContext| -> std::future::Ready<Result<Value, ToolError>> { panic!("at once") })).unwrap();
    registry.register_async(ToolDeclaration::new("quick", "answers", json!({"type": "object"})), |_args, _ctx| async { Ok(json!(1)) }).unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig { max_concurrency: 1, ..config(toolhost::Jitter::None) }).unwrap();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for tool in ["boom", "boom_now"] {
        for _ in 0..3 {
            let outcome = executor.execute(tool, json!({}), CallOptions::default()).await;
            let e = outcome.result().unwrap_err();
            assert_eq!((e.code.as_str(), e.category), ("EXECUTION_ERROR", toolhost::ErrorCategory::Execution));
            assert!(e.message.starts_with(&format!("tool '{tool}' panicked: ")), "{}", e.message);
        }
    }
    std::panic::set_hook(hook);
    assert!(executor.execute("boom", json!({}), CallOptions::default()).await.result().unwrap_err().message.contains("the disk is on fire"));
    assert_eq!(executor.execute("quick", json!({}), CallOptions::default()).await.result().unwrap(), &json!(1));
}

#[tokio::test(start_paused = true)]
async fn an_approval_policy_alone_decides_for_every_tool() {
    // It was consulted only with ManagerConfig.needs_approval = Ask: set as the README
    // shows, it let every call run unapproved.
    let registry = ToolRegistry::new();
    sleeper_and_quick(&registry);
    let executor = ToolExecutor::new(registry, config(toolhost::Jitter::None)).unwrap();
    executor.set_approval_policy(|tool, _args| tool == "quick");
    let asked = executor.execute("quick", json!({}), CallOptions::default());
    let decide = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let pending = executor.pending_approvals();
        assert_eq!(pending.len(), 1, "the call waits for a person");
        executor.approve(&pending[0].approval_id, None, Some("ada".into())).unwrap();
    };
    let (outcome, ()) = tokio::join!(asked, decide);
    assert_eq!(outcome.record.approval.as_ref().and_then(|a| a.by.clone()).as_deref(), Some("ada"));
    assert_eq!(outcome.result().unwrap(), &json!(1));
    let free = tokio::time::timeout(Duration::from_millis(5), executor.execute("sleeper", json!({}), CallOptions::default())).await;
    assert!(free.is_err(), "the policy said no approval: the sleeper ran (and was still running)");
    assert!(executor.pending_approvals().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_timeout_too_long_for_the_clock_means_none_and_never_panics() {
    // 1e22 ms is a valid Duration but past what an Instant can add: the executor
    // panicked ("overflow when adding duration to instant") in the caller's task.
    let registry = ToolRegistry::new();
    registry
        .register_async(ToolDeclaration::new("slow", "takes an hour", json!({"type": "object"})), |_args, ctx: ToolContext| async move {
            ctx.report_progress(1.0, None, None);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(json!("done"))
        })
        .unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig::default()).unwrap();
    for options in [
        CallOptions { timeout_ms: Some(1e22), ..CallOptions::default() },
        CallOptions { timeout_ms: Some(f64::INFINITY), max_total_timeout_ms: Some(1e22), ..CallOptions::default() },
        // The default total bound is ten attempt timeouts: past the clock too.
        CallOptions { timeout_ms: Some(1e21), reset_timeout_on_progress: Some(true), ..CallOptions::default() },
    ] {
        let outcome = executor.execute("slow", json!({}), options).await;
        assert_eq!(outcome.result().unwrap(), &json!("done"));
    }
}
