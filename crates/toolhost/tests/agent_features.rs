//! Approval, output schemas and progress (issue 13), driven through the tokio executor
//! under a paused clock, so waits and timeouts are exact.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{
    ApprovalDecision, CallOptions, ErrorCategory, ExecutionEvent, ExecutionStatus, ManagerConfig, NeedsApproval, RetryConfig,
    ToolDeclaration, ToolExecutor, ToolRegistry,
};

fn declaration(name: &str, needs_approval: Option<NeedsApproval>) -> ToolDeclaration {
    let mut d = ToolDeclaration::new(name, "a tool", json!({"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}));
    d.metadata.needs_approval = needs_approval;
    d
}

/// A registry with a `pay` tool echoing the amount it ran with, and an executor over it
/// that records every event's type.
fn setup(needs_approval: Option<NeedsApproval>, config: ManagerConfig) -> (ToolExecutor, Arc<AtomicU32>, Arc<Mutex<Vec<String>>>) {
    let registry = ToolRegistry::new();
    let runs = Arc::new(AtomicU32::new(0));
    let counted = runs.clone();
    registry
        .register_async(declaration("pay", needs_approval), move |args: Value, _ctx| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!({ "paid": args["amount"] })) }
        })
        .unwrap();
    let executor = ToolExecutor::new(registry, config).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    executor.on_event(move |e: &ExecutionEvent| seen.lock().unwrap().push(e.event_type().as_str().trim_start_matches("tool-execution-").to_string()));
    (executor, runs, events)
}

/// Waits (in paused time) until a call waits for approval, and returns its approval id.
async fn pending(executor: &ToolExecutor) -> String {
    for _ in 0..100 {
        if let Some(p) = executor.pending_approvals().first() {
            return p.approval_id.clone();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("no call waits for approval");
}

#[tokio::test(start_paused = true)]
async fn an_approved_call_runs_after_the_approval_with_its_events_in_order() {
    let (executor, runs, events) = setup(Some(NeedsApproval::Always), ManagerConfig::default());
    let run = tokio::spawn({
        let executor = executor.clone();
        async move { executor.execute("pay", json!({"amount": 5}), CallOptions::default()).await }
    });
    let id = pending(&executor).await;
    let waiting = &executor.pending_approvals()[0];
    assert_eq!((waiting.tool_name.as_str(), &waiting.args), ("pay", &json!({"amount": 5})));
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing runs before the approval");
    executor.approve(&id, None, Some("ada".into())).unwrap();
    let outcome = run.await.unwrap();
    assert_eq!(outcome.result().unwrap(), &json!({"paid": 5}));
    assert_eq!(*events.lock().unwrap(), ["started", "validating", "approval-requested", "approved", "executing", "succeeded"]);
    let approval = outcome.record.approval.as_ref().unwrap();
    assert_eq!((approval.decision, approval.by.as_deref(), approval.edited), (Some(ApprovalDecision::Approved), Some("ada"), false));
    assert!(executor.approve(&id, None, None).is_err(), "an approval is answered once");
}

#[tokio::test(start_paused = true)]
async fn edited_arguments_are_validated_again_and_recorded_as_edited() {
    let (executor, _, _) = setup(Some(NeedsApproval::Always), ManagerConfig::default());
    let run = tokio::spawn({
        let executor = executor.clone();
        async move { executor.execute("pay", json!({"amount": 500}), CallOptions::default()).await }
    });
    let id = pending(&executor).await;
    let refused = executor.approve(&id, Some(json!({"amount": "fifty"})), None).unwrap_err();
    assert_eq!((refused.code.as_str(), refused.validation_errors[0].path.as_str()), ("INVALID_ARGUMENTS", "/amount"));
    assert_eq!(executor.pending_approvals().len(), 1, "refused edits leave the call waiting");
    executor.approve(&id, Some(json!({"amount": 50})), Some("ada".into())).unwrap();
    let outcome = run.await.unwrap();
    assert_eq!(outcome.result().unwrap(), &json!({"paid": 50}), "the handler runs with the edited arguments");
    assert_eq!(outcome.record.args.to_value().into_owned(), json!({"amount": 50}));
    assert!(outcome.record.approval.as_ref().unwrap().edited);
}

#[tokio::test(start_paused = true)]
async fn a_denied_call_ends_denied_without_running() {
    let (executor, runs, events) = setup(Some(NeedsApproval::Always), ManagerConfig::default());
    let run = tokio::spawn({
        let executor = executor.clone();
        async move { executor.execute("pay", json!({"amount": 5}), CallOptions::default()).await }
    });
    let id = pending(&executor).await;
    executor.deny(&id, Some("too much".into()), Some("bob".into())).unwrap();
    let outcome = run.await.unwrap();
    let error = outcome.result().unwrap_err();
    assert_eq!((error.category, error.code.as_str()), (ErrorCategory::Denied, "APPROVAL_DENIED"));
    assert!(error.message.contains("too much"), "{}", error.message);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(*events.lock().unwrap(), ["started", "validating", "approval-requested", "denied", "failed"]);
    assert_eq!(outcome.record.approval.as_ref().unwrap().by.as_deref(), Some("bob"));
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_ends_denied_when_its_timeout_passes_and_no_timeout_runs_meanwhile() {
    // A 50 ms attempt timeout must not end a call that waits 10 s for approval.
    let config = ManagerConfig { approval_timeout_ms: Some(10_000.0), timeout_ms: Some(50.0), ..ManagerConfig::default() };
    let (executor, runs, _) = setup(Some(NeedsApproval::Always), config);
    let started = tokio::time::Instant::now();
    let outcome = executor.execute("pay", json!({"amount": 5}), CallOptions::default()).await;
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    let error = outcome.result().unwrap_err();
    assert_eq!(error.code, "APPROVAL_DENIED");
    assert!(error.message.contains("within 10000 ms"), "{}", error.message);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn cancelling_reaches_a_waiting_call_and_it_holds_no_slot() {
    let config = ManagerConfig { max_concurrency: 1, needs_approval: NeedsApproval::Never, ..ManagerConfig::default() };
    let registry = ToolRegistry::new();
    registry.register_async(declaration("gate", Some(NeedsApproval::Always)), |_args, _ctx| async { Ok(json!("gated")) }).unwrap();
    registry.register_async(declaration("free", None), |_args, _ctx| async { Ok(json!("free")) }).unwrap();
    let executor = ToolExecutor::new(registry, config).unwrap();
    let waiting = tokio::spawn({
        let executor = executor.clone();
        async move { executor.execute("gate", json!({"amount": 1}), CallOptions::default()).await }
    });
    pending(&executor).await;
    // With maxConcurrency 1, a call that needs no approval still runs.
    let free = executor.execute("free", json!({"amount": 1}), CallOptions::default()).await;
    assert_eq!(free.result().unwrap(), &json!("free"));
    executor.cancel_all();
    let outcome = waiting.await.unwrap();
    assert_eq!(outcome.record.status, ExecutionStatus::Cancelled);
    assert!(executor.pending_approvals().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_manager_policy_applies_unless_the_tool_says_otherwise() {
    let config = ManagerConfig { needs_approval: NeedsApproval::Always, ..ManagerConfig::default() };
    let (executor, runs, _) = setup(Some(NeedsApproval::Never), config);
    let outcome = executor.execute("pay", json!({"amount": 1}), CallOptions::default()).await;
    assert!(outcome.is_success() && outcome.record.approval.is_none());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn an_ask_policy_asks_the_host_per_call() {
    let (executor, runs, _) = setup(Some(NeedsApproval::Ask), ManagerConfig::default());
    executor.set_approval_policy(|_tool, args| args["amount"].as_f64().unwrap_or(0.0) > 100.0);
    let small = executor.execute("pay", json!({"amount": 5}), CallOptions::default()).await;
    assert!(small.is_success() && small.record.approval.is_none(), "small payments need no approval");
    let big = tokio::spawn({
        let executor = executor.clone();
        async move { executor.execute("pay", json!({"amount": 500}), CallOptions::default()).await }
    });
    let id = pending(&executor).await;
    executor.approve(&id, None, None).unwrap();
    assert!(big.await.unwrap().is_success());
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn results_are_checked_against_the_output_schema_and_not_retried() {
    let registry = ToolRegistry::new();
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let mut d = ToolDeclaration::new("weather", "the weather", json!({"type": "object"}));
    d.output_schema = Some(json!({"type": "object", "properties": {"tempC": {"type": "number"}}, "required": ["tempC"]}));
    registry
        .register_async(d, move |args: Value, _ctx| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok(if args["ok"] == json!(true) { json!({"tempC": 21}) } else { json!({"tempC": "warm", "extra": 1}) }) }
        })
        .unwrap();
    let config = ManagerConfig { retry: RetryConfig { max_attempts: 3, base_delay_ms: 10.0, ..RetryConfig::default() }, ..ManagerConfig::default() };
    let executor = ToolExecutor::new(registry, config).unwrap();
    assert!(executor.execute("weather", json!({"ok": true}), CallOptions::default()).await.is_success());
    let bad = executor.execute("weather", json!({}), CallOptions::default()).await;
    let error = bad.result().unwrap_err();
    assert_eq!((error.category, error.code.as_str()), (ErrorCategory::Execution, "INVALID_OUTPUT"));
    assert_eq!(error.validation_errors[0].path, "/tempC");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "an invalid output is not retried by default");
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_the_attempt_timeout_until_the_total_cap() {
    // Each 40 ms step reports progress; the attempt timeout is 50 ms, so without resets
    // the attempt times out at 50 ms. With resets it goes on until the 300 ms cap.
    let registry = ToolRegistry::new();
    registry
        .register_async(ToolDeclaration::new("crawl", "crawls", json!({"type": "object"})), |_args, ctx| async move {
            for step in 0..100u32 {
                tokio::time::sleep(Duration::from_millis(40)).await;
                ctx.report_progress(f64::from(step + 1), Some(100.0), Some("page"));
            }
            Ok(json!("done"))
        })
        .unwrap();
    let config = ManagerConfig {
        timeout_ms: Some(50.0),
        reset_timeout_on_progress: true,
        max_total_timeout_ms: Some(300.0),
        retry: RetryConfig { max_attempts: 1, ..RetryConfig::default() },
        ..ManagerConfig::default()
    };
    let executor = ToolExecutor::new(registry.clone(), config).unwrap();
    let progress = Arc::new(Mutex::new(0u32));
    let counted = progress.clone();
    executor.on_event(move |e| {
        if let ExecutionEvent::Progress { .. } = e {
            *counted.lock().unwrap() += 1;
        }
    });
    let started = tokio::time::Instant::now();
    let outcome = executor.execute("crawl", json!({}), CallOptions::default()).await;
    assert_eq!(started.elapsed(), Duration::from_millis(300), "the total cap ends it");
    let error = outcome.result().unwrap_err();
    assert_eq!(error.code, "TIMEOUT");
    assert!(error.message.contains("maxTotalTimeoutMs"), "{}", error.message);
    assert_eq!(*progress.lock().unwrap(), 7, "progress at 40, 80, ..., 280 ms");
    assert_eq!(outcome.record.progress.as_ref().unwrap().progress, 7.0, "the record keeps the last progress");

    // Without resets the 50 ms attempt timeout ends the same handler.
    let plain = ToolExecutor::new(registry, ManagerConfig { timeout_ms: Some(50.0), retry: RetryConfig { max_attempts: 1, ..RetryConfig::default() }, ..ManagerConfig::default() }).unwrap();
    let started = tokio::time::Instant::now();
    let outcome = plain.execute("crawl", json!({}), CallOptions::default()).await;
    assert_eq!(started.elapsed(), Duration::from_millis(50));
    assert!(outcome.result().unwrap_err().message.contains("timed out after 50 ms"));
}

#[tokio::test(start_paused = true)]
async fn an_execution_id_given_as_the_approval_id_is_named_as_one() {
    let (executor, runs, _) = setup(Some(NeedsApproval::Always), ManagerConfig::default());
    let run = tokio::spawn({
        let executor = executor.clone();
        async move { executor.execute("pay", json!({"amount": 5}), CallOptions::default()).await }
    });
    let approval_id = pending(&executor).await;
    let execution_id = executor.pending_approvals()[0].execution_id.clone();
    let e = executor.approve(&execution_id, None, None).unwrap_err();
    assert_eq!(e.code, "APPROVAL_NOT_FOUND");
    assert!(e.message.starts_with(&format!("'{execution_id}' is an execution id, not an approval id: this execution waits for approval '{approval_id}'")), "{}", e.message);
    assert!(executor.deny(&execution_id, None, None).unwrap_err().message.contains("is an execution id"));
    assert_eq!(runs.load(Ordering::SeqCst), 0, "it still waits");
    executor.approve(&approval_id, None, None).unwrap();
    assert!(run.await.unwrap().result().is_ok());
    assert!(executor.approve("nope", None, None).unwrap_err().message.starts_with("no call waits for approval 'nope'"));
}

#[tokio::test(start_paused = true)]
async fn a_call_s_max_total_timeout_is_checked_as_its_timeout_is() {
    // `timeout_ms: Some(-5.0)` was refused, but `max_total_timeout_ms: Some(-5.0)` (or
    // NaN) silently meant no bound at all, and `Some(0.0)` failed every call at once.
    let (executor, runs, _) = setup(None, ManagerConfig::default());
    for bad in [-5.0, f64::NAN, 0.0] {
        let options = CallOptions { max_total_timeout_ms: Some(bad), ..CallOptions::default() };
        let outcome = executor.execute("pay", json!({"amount": 1}), options).await;
        let e = outcome.result().unwrap_err();
        assert_eq!(e.code, "INVALID_CONFIG", "{bad}: {}", e.message);
        assert!(e.message.contains("maxTotalTimeoutMs must be a number of milliseconds > 0"), "{}", e.message);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let infinite = CallOptions { max_total_timeout_ms: Some(f64::INFINITY), ..CallOptions::default() };
    assert!(executor.execute("pay", json!({"amount": 1}), infinite).await.is_success(), "infinity means none");
}

#[test]
fn a_tool_s_zero_limits_are_refused_at_registration() {
    // The JS host refused these; a Rust declaration registered them, and then every
    // approval was denied at once, every call timed out at once, or its result cut to nothing.
    let registry = ToolRegistry::new();
    for key in ["approvalTimeoutMs", "maxTotalTimeoutMs", "maxOutputChars"] {
        let mut d = declaration("pay", None);
        match key {
            "approvalTimeoutMs" => d.metadata.approval_timeout_ms = Some(0),
            "maxTotalTimeoutMs" => d.metadata.max_total_timeout_ms = Some(0),
            _ => d.metadata.max_output_chars = Some(0),
        }
        let e = registry.register_async(d, |_args: Value, _ctx| async { Ok(json!(null)) }).unwrap_err();
        assert_eq!(e.code(), "INVALID_DEFINITION", "{key}");
        assert!(e.message.contains(&format!("tool 'pay': metadata.{key} must be")), "{}", e.message);
    }
    assert!(!registry.has("pay"));
}
