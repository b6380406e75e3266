//! The state machine on its own: concurrency slots across retries.

use std::sync::Arc;

use serde_json::json;
use toolhost::{
    handler_fn, CallOptions, ExecutionEngine, Jitter, ManagerConfig, Payload, RetryConfig, Step, ToolDeclaration, ToolError,
    ToolRegistry, Transition,
};

fn engine(max_concurrency: usize) -> ExecutionEngine {
    let registry = ToolRegistry::new();
    registry.register(ToolDeclaration::new("t", "a tool", json!({"type": "object"})), handler_fn(|a, _| async move { Ok(a) })).unwrap();
    let retry = RetryConfig { base_delay_ms: 10.0, jitter: Jitter::None, ..RetryConfig::default() };
    ExecutionEngine::new(registry, ManagerConfig { max_concurrency, retry, ..ManagerConfig::default() }).unwrap()
}

fn run(t: &Transition) -> (u64, u32, String) {
    match &t.step {
        Step::Run(spec) => (spec.key, spec.attempt_number, spec.execution_id.clone()),
        _ => panic!("expected the attempt to run"),
    }
}

#[allow(clippy::result_large_err)] // the engine's own attempt outcome type
fn ok() -> Result<Payload, ToolError> {
    Ok(Arc::new(json!("done")) as Payload)
}

#[test]
fn a_backing_off_execution_keeps_its_slot_and_the_queue_runs_in_order() {
    let mut e = engine(1);
    let (a, a1, a_id) = run(&e.start("t", Ok(json!({})), CallOptions::default()));
    let b = e.start("t", Ok(json!({})), CallOptions::default());
    let c = e.start("t", Ok(json!({})), CallOptions::default());
    assert!(matches!(b.step, Step::Queued) && matches!(c.step, Step::Queued));
    assert_eq!(e.execution(&a_id).unwrap().status.as_str(), "executing");

    let retry = e.attempt_finished(a, a1, Err(ToolError::transient("again", None)));
    assert!(matches!(retry.step, Step::Retry { .. }));
    assert!(retry.admitted.is_empty(), "a retried call is not joined by queued ones meanwhile");
    assert_eq!(e.running(), 1);

    let (_, a2, _) = run(&e.begin_attempt(a));
    assert_eq!(a2, 2);
    let a_done = e.attempt_finished(a, a2, ok());
    assert!(matches!(a_done.step, Step::Finished(_)));
    assert_eq!(a_done.admitted.iter().map(|s| s.key).collect::<Vec<_>>(), vec![b.key], "b before c");
    let b_done = e.attempt_finished(b.key, 1, ok());
    assert_eq!(b_done.admitted[0].key, c.key);
    assert_eq!(e.running(), 1);
}

#[test]
fn cancelling_every_execution_in_in_flight_order_admits_none_of_them() {
    let mut e = engine(1);
    let (a, _, _) = run(&e.start("t", Ok(json!({})), CallOptions::default()));
    let b = e.start("t", Ok(json!({})), CallOptions::default()).key;
    let c = e.start("t", Ok(json!({})), CallOptions::default()).key;
    let keys = e.in_flight_keys(None);
    assert_eq!(keys, vec![b, c, a], "queued ones first, each group in submission order");
    for key in keys {
        let t = e.cancel_key(key);
        assert!(matches!(t.step, Step::Finished(_)));
        assert!(t.admitted.is_empty(), "cancelling {key} admitted {:?}", t.admitted.iter().map(|s| s.key).collect::<Vec<_>>());
    }
    assert_eq!(e.running(), 0);
}

#[test]
fn arguments_an_interceptor_changed_are_checked_as_arguments_are() {
    let registry = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}, "pin": {"type": "string"}}, "required": ["n"]});
    registry.register(ToolDeclaration::new("t", "a tool", schema), handler_fn(|a, _| async move { Ok(a) })).unwrap();
    let config = |validation| ManagerConfig { validation, redact: vec!["pin".into()], ..ManagerConfig::default() };
    let mut e = ExecutionEngine::new(registry.clone(), config(true)).unwrap();
    let (key, attempt, id) = run(&e.start("t", Ok(json!({"n": 1})), CallOptions::default()));

    assert!(e.check_intercepted_args(key, &json!({"n": 2})).is_ok());
    let refused = e.check_intercepted_args(key, &json!({"n": -1, "pin": 1234})).unwrap_err();
    assert_eq!((refused.category.as_str(), refused.code.as_str()), ("validation", "INVALID_ARGUMENTS"));
    assert!(refused.message.starts_with("invalid arguments for tool 't' from an interceptor: "), "{}", refused.message);
    assert_eq!(refused.validation_errors.len(), 2, "{:?}", refused.validation_errors);
    assert!(!refused.message.contains("1234"), "redacted fields stay masked: {}", refused.message);
    let too_deep = (0..200).fold(json!(0), |v, _| json!([v]));
    let deep = e.check_intercepted_args(key, &json!({"n": 1, "pin": too_deep})).unwrap_err();
    assert_eq!(deep.code, "INVALID_ARGUMENTS", "{}", deep.message);
    assert!(deep.message.starts_with("invalid arguments for tool 't' from an interceptor: ") && deep.message.matches("invalid arguments").count() == 1, "{}", deep.message);

    // The attempt fails with it, is not retried, and the record keeps the call's arguments.
    let done = e.attempt_finished(key, attempt, Err(refused));
    assert!(matches!(done.step, Step::Finished(_)));
    let record = e.execution(&id).unwrap();
    assert_eq!(record.status.as_str(), "failed");
    assert_eq!(record.attempt_number, 1);
    assert_eq!(record.error.as_ref().map(|e| e.code.as_str()), Some("INVALID_ARGUMENTS"));

    // Validation off: the schema is not applied, the depth still is.
    let mut lax = ExecutionEngine::new(registry, config(false)).unwrap();
    let (key, _, _) = run(&lax.start("t", Ok(json!({"n": 1})), CallOptions::default()));
    assert!(lax.check_intercepted_args(key, &json!({"n": -1})).is_ok());
    assert!(lax.check_intercepted_args(key, &json!({"n": 1, "pin": too_deep})).is_err());
}

#[test]
fn a_made_up_tool_name_gets_a_record_but_no_statistics() {
    let mut e = engine(4);
    for i in 0..50 {
        let t = e.start(&format!("made_up_{i}"), Ok(json!({})), CallOptions::default());
        assert!(matches!(&t.step, Step::Finished(r) if r.error.as_ref().unwrap().code == "TOOL_NOT_FOUND"));
    }
    assert_eq!(e.stats("made_up_0").execution_count, 0, "statistics of every distinct name would be kept for the manager's life");
    let (key, attempt, _) = run(&e.start("t", Ok(json!({})), CallOptions::default()));
    e.attempt_finished(key, attempt, ok());
    assert_eq!(e.stats("t").execution_count, 1);
}
