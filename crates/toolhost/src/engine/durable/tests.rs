//! The journaled state machine on its own: the test plays the journal, answering each
//! request by hand, so every path is decided by the engine's policy alone.

use std::sync::Arc;

use serde_json::json;

use super::super::{CallOptions, ExecutionEngine, ManagerConfig, Step, Transition};
use crate::declaration::{NeedsApproval, ToolDeclaration};
use crate::error::ToolError;
use crate::handler::handler_fn;
use crate::journal::{
    Claim, ClaimAnswer, Effect, JournalAnswer, JournalPolicy, JournalRequest, RecordAnswer, Recovery, RowKey, RowState, StoredOutcome,
};
use crate::record::{EventMask, ExecutionEvent, ExecutionStatus, Payload};
use crate::registry::ToolRegistry;

fn engine(effect: Effect, needs_approval: bool) -> ExecutionEngine {
    let registry = ToolRegistry::new();
    let mut decl = ToolDeclaration::new("pay", "pays", json!({ "type": "object", "properties": { "cents": { "type": "integer" } } }));
    decl.metadata.effect = Some(effect);
    if needs_approval {
        decl.metadata.needs_approval = Some(NeedsApproval::Always);
    }
    registry.register(decl, handler_fn(|a, _| async move { Ok(a) })).unwrap();
    let mut e = ExecutionEngine::new(registry, ManagerConfig { journal: Some(JournalPolicy::default()), ..ManagerConfig::default() }).unwrap();
    e.set_wanted_events(EventMask(u16::MAX));
    e
}

fn keyed(key: &str) -> CallOptions {
    CallOptions { idempotency_key: Some(key.into()), ..CallOptions::default() }
}

fn claim_of(t: &Transition) -> Claim {
    match &t.step {
        Step::Journal(JournalRequest::Claim(c) | JournalRequest::Watch(c)) => c.clone(),
        _ => panic!("expected a claim"),
    }
}

fn answer(e: &mut ExecutionEngine, a: JournalAnswer) -> Transition {
    e.journal_answered(a).pop().expect("a transition")
}

fn outcome(result: serde_json::Value) -> StoredOutcome {
    StoredOutcome {
        status: "succeeded".into(),
        result: Some(result),
        error: None,
        execution_id: "earlier".into(),
        attempts: 1,
        started_at: Some(1.0),
        completed_at: 2.0,
        duration_ms: Some(1.0),
        approval: None,
    }
}

#[test]
fn a_call_claims_its_key_runs_and_ends_only_once_its_outcome_is_stored() {
    let mut e = engine(Effect::Once, false);
    let t = e.start("pay", Ok(json!({ "cents": 5 })), keyed("order-1"));
    let claim = claim_of(&t);
    assert_eq!(claim.row, RowKey { scope: String::new(), key: "order-1".into() });
    assert_eq!(claim.fingerprint, crate::journal::fingerprint("pay", &json!({ "cents": 5 })));
    assert_eq!(claim.effect, Effect::Once);
    let key = t.key;
    let run = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim), answer: ClaimAnswer::Claimed { fence: 3, taken_over: None } });
    assert!(matches!(run.step, Step::Run(_)));
    e.set_result_json(key, json!({ "paid": 5 }));
    let done = e.attempt_finished(key, 1, Ok(Arc::new(json!({ "paid": 5 })) as Payload));
    let record = match done.step {
        Step::Journal(JournalRequest::Record(r)) => r,
        _ => panic!("the outcome is stored before the call ends"),
    };
    assert_eq!(record.fence, 3);
    assert_eq!(record.outcome.result, Some(json!({ "paid": 5 })));
    assert!(done.events.is_empty(), "nobody hears of it before the journal has it");
    assert!(matches!(e.cancel_key(key).step, Step::Stale), "too late to cancel");
    let end = answer(&mut e, JournalAnswer::Recorded { exec: key, row: record.row, answer: RecordAnswer::Recorded });
    match end.step {
        Step::Finished(r) => assert_eq!(r.status, ExecutionStatus::Succeeded),
        _ => panic!("it ends once recorded"),
    }
    assert!(end.events.iter().any(|e| matches!(e, ExecutionEvent::Succeeded { .. })));
}

#[test]
fn a_finished_key_is_replayed_without_running() {
    let mut e = engine(Effect::Once, false);
    let t = e.start("pay", Ok(json!({ "cents": 5 })), keyed("order-1"));
    let end = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ClaimAnswer::Finished(Box::new(outcome(json!({ "paid": 5 })))) });
    match &end.step {
        Step::Finished(r) => {
            assert!(r.replayed);
            assert_eq!(r.attempt_number, 0, "nothing ran");
            assert_eq!(crate::record::payload_json(r.result.as_ref().unwrap()), Some(&json!({ "paid": 5 })));
        }
        _ => panic!("a replay ends at once"),
    }
    assert!(end.journal.is_empty(), "nothing more to store");
}

#[test]
fn a_claim_that_ends_a_dead_process_s_row_reports_the_recovery() {
    let mut e = engine(Effect::Once, false);
    let t = e.start("pay", Ok(json!({ "cents": 5 })), keyed("order-1"));
    let mut interrupted = outcome(json!(null));
    interrupted.status = "failed".into();
    interrupted.result = None;
    let ended = ClaimAnswer::Ended { outcome: Box::new(interrupted), action: "interrupted" };
    let end = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ended });
    let id = match &end.step {
        Step::Finished(r) => {
            assert!(r.replayed && r.status == ExecutionStatus::Failed);
            r.id.clone()
        }
        _ => panic!("it ends at once"),
    };
    match &end.events[..] {
        [ExecutionEvent::Recovered { execution_id, idempotency_key, action: "interrupted", .. }, .., ExecutionEvent::Failed { .. }] => {
            assert_eq!((execution_id, idempotency_key.as_str()), (&id, "order-1"));
        }
        other => panic!("the recovery is reported first: {other:?}"),
    }
    // A plain replay reports none.
    let t = e.start("pay", Ok(json!({ "cents": 5 })), keyed("order-2"));
    let end = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ClaimAnswer::Finished(Box::new(outcome(json!(1)))) });
    assert!(!end.events.iter().any(|e| matches!(e, ExecutionEvent::Recovered { .. })));
}

#[test]
fn a_conflict_is_refused_and_a_key_in_flight_is_watched_until_it_finishes() {
    let mut e = engine(Effect::Once, false);
    let t = e.start("pay", Ok(json!({ "cents": 5 })), keyed("k"));
    let end = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ClaimAnswer::Conflict { tool: "pay".into() } });
    match &end.step {
        Step::Finished(r) => assert_eq!(r.error.as_ref().unwrap().code, "IDEMPOTENCY_CONFLICT"),
        _ => panic!(),
    }
    let t = e.start("pay", Ok(json!({ "cents": 5 })), keyed("busy"));
    let wait = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ClaimAnswer::InFlight });
    let watched = match &wait.step {
        Step::Journal(JournalRequest::Watch(c)) => c.clone(),
        _ => panic!("a key held elsewhere is watched"),
    };
    let end = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(watched), answer: ClaimAnswer::Finished(Box::new(outcome(json!(1)))) });
    assert!(matches!(&end.step, Step::Finished(r) if r.replayed));
}

#[test]
fn a_call_cancelled_before_it_ran_lets_its_key_go_and_a_late_claim_is_released() {
    let mut e = engine(Effect::Once, false);
    let t = e.start("pay", Ok(json!({})), keyed("c"));
    let claim = claim_of(&t);
    let cancelled = e.cancel_key(t.key);
    assert!(matches!(cancelled.step, Step::Finished(_)));
    let late = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim), answer: ClaimAnswer::Claimed { fence: 1, taken_over: None } });
    assert!(matches!(late.journal[..], [JournalRequest::Release { fence: 1, .. }]));
}

#[test]
fn cancelling_a_running_once_call_stores_cancelled_and_a_read_call_lets_its_key_go() {
    for (effect, stores) in [(Effect::Once, true), (Effect::Read, false)] {
        let mut e = engine(effect, false);
        let t = e.start("pay", Ok(json!({})), keyed("c"));
        let run = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ClaimAnswer::Claimed { fence: 1, taken_over: None } });
        assert!(matches!(run.step, Step::Run(_)));
        let cancelled = e.cancel_key(t.key);
        match (&cancelled.step, stores) {
            (Step::Journal(JournalRequest::Record(r)), true) => assert_eq!(r.outcome.status, "cancelled"),
            (Step::Finished(_), false) => assert!(matches!(cancelled.journal[..], [JournalRequest::Release { .. }])),
            _ => panic!("{effect:?}: unexpected step"),
        }
    }
}

#[test]
fn a_claim_the_journal_cannot_make_fails_the_call_without_running_it() {
    let mut e = engine(Effect::Once, false);
    let t = e.start("pay", Ok(json!({})), keyed("x"));
    let end = answer(&mut e, JournalAnswer::Failed {
        exec: Some(t.key),
        ticket: None,
        claim: Some(Box::new(claim_of(&t))),
        error: crate::journal::JournalError::unavailable("connection refused"),
    });
    match &end.step {
        Step::Finished(r) => {
            let err = r.error.as_ref().unwrap();
            assert_eq!((err.code.as_str(), err.category.as_str()), ("JOURNAL_UNAVAILABLE", "transient"));
            assert_eq!(r.attempt_number, 0);
        }
        _ => panic!(),
    }
}

#[test]
fn an_approval_waits_on_its_row_and_runs_once_the_row_says_approved() {
    let mut e = engine(Effect::Once, true);
    let t = e.start("pay", Ok(json!({ "cents": 9 })), keyed("ask"));
    let claim = claim_of(&t);
    let approval_id = claim.approval.as_ref().expect("claimed with its approval").approval_id.clone();
    let wait = answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim.clone()), answer: ClaimAnswer::Claimed { fence: 1, taken_over: None } });
    assert!(matches!(wait.step, Step::AwaitApproval { .. }));
    assert!(matches!(wait.journal[..], [JournalRequest::WatchApproval { fence: 1, .. }]));
    let row = RowState {
        row: claim.row.clone(),
        state: "approved".into(),
        owner: "me".into(),
        fence: 1,
        lease_until: 0,
        effect: Effect::Once,
        tool: "pay".into(),
        args: r#"{"cents":4}"#.into(),
        execution_id: claim.execution_id.clone(),
        tool_call_id: None,
        approval_id: Some(approval_id.clone()),
        approval: Some(json!({ "approvalId": approval_id, "requestedAt": 1.0, "decision": "approved", "by": "grace", "edited": true })),
        outcome: None,
    };
    let start = answer(&mut e, JournalAnswer::ApprovalChanged { exec: t.key, row: Some(Box::new(row)) });
    assert!(matches!(start.step, Step::Journal(JournalRequest::Start { fence: 1, .. })), "it marks its row running first");
    assert_eq!(start.edited_args.as_deref(), Some(r#"{"cents":4}"#));
    assert!(start.events.iter().any(|e| matches!(e, ExecutionEvent::Approved { edited: true, .. })));
    let run = answer(&mut e, JournalAnswer::Started { exec: t.key, ok: true });
    match run.step {
        Step::Run(spec) => assert_eq!(*spec.args.to_value(), json!({ "cents": 4 })),
        _ => panic!("approved and started, it runs"),
    }
}

#[test]
fn recovery_runs_read_and_idempotent_calls_again_and_interrupts_once_calls() {
    let mut e = engine(Effect::Idempotent, false);
    let row = |key: &str, effect: Effect, state: &str| RowState {
        row: RowKey { scope: String::new(), key: key.into() },
        state: state.into(),
        owner: "dead".into(),
        fence: 4,
        lease_until: 0,
        effect,
        tool: "pay".into(),
        args: "{}".into(),
        execution_id: "old".into(),
        tool_call_id: None,
        approval_id: None,
        approval: None,
        outcome: None,
    };
    let due = answer(&mut e, JournalAnswer::Due(vec![row("a", Effect::Idempotent, "running"), row("b", Effect::Once, "running"), row("c", Effect::Once, "awaiting")]));
    let takeovers: Vec<(String, Recovery, String)> = due
        .journal
        .iter()
        .map(|r| match r {
            JournalRequest::TakeOver { row, then, execution_id, .. } => (row.row.key.clone(), then.clone(), execution_id.clone()),
            _ => panic!("recovery only takes over"),
        })
        .collect();
    let kinds: Vec<(&str, &Recovery)> = takeovers.iter().map(|(k, then, _)| (k.as_str(), then)).collect();
    assert_eq!(kinds, [("a", &Recovery::Run), ("b", &Recovery::Interrupt)], "an awaiting row without expiry is left waiting");
    // Each takeover names the execution that will end it here (a lost one is let go by it).
    let (run_id, interrupt_id) = (takeovers[0].2.clone(), takeovers[1].2.clone());
    assert!(run_id != interrupt_id && run_id != "old" && !run_id.is_empty());

    let rerun = answer(&mut e, JournalAnswer::TakenOver { row: Box::new(row("a", Effect::Idempotent, "running")), fence: Some(5), then: Recovery::Run, execution_id: run_id.clone() });
    assert!(rerun.recovered);
    assert!(matches!(rerun.step, Step::Run(_)));
    assert!(rerun.events.iter().any(|e| matches!(e, ExecutionEvent::Recovered { action: "rerun", execution_id, .. } if *execution_id == run_id)));

    let interrupted = answer(&mut e, JournalAnswer::TakenOver { row: Box::new(row("b", Effect::Once, "running")), fence: Some(5), then: Recovery::Interrupt, execution_id: interrupt_id.clone() });
    assert!(interrupted.recovered);
    match &interrupted.step {
        Step::Finished(r) => {
            assert_eq!(r.error.as_ref().unwrap().category.as_str(), "interrupted");
            assert_eq!(r.id, interrupt_id);
        }
        _ => panic!(),
    }
    match &interrupted.journal[..] {
        [JournalRequest::Record(r)] => {
            assert_eq!(r.fence, 5);
            assert_eq!(r.outcome.error.as_ref().unwrap().code, "INTERRUPTED");
            assert_eq!(r.outcome.execution_id, interrupt_id);
        }
        _ => panic!("the interruption is stored"),
    }
}

#[test]
fn a_fenced_outcome_gives_the_caller_what_the_journal_holds() {
    let mut e = engine(Effect::Idempotent, false);
    let t = e.start("pay", Ok(json!({})), keyed("lost"));
    answer(&mut e, JournalAnswer::Claimed { claim: Box::new(claim_of(&t)), answer: ClaimAnswer::Claimed { fence: 1, taken_over: None } });
    let rec = e.attempt_finished(t.key, 1, Err(ToolError::execution("boom")));
    let row = match rec.step {
        Step::Journal(JournalRequest::Record(r)) => r.row,
        _ => panic!(),
    };
    let end = answer(&mut e, JournalAnswer::Recorded { exec: t.key, row, answer: RecordAnswer::Fenced(Some(Box::new(outcome(json!("theirs"))))) });
    match &end.step {
        Step::Finished(r) => {
            assert!(r.replayed);
            assert_eq!(r.status, ExecutionStatus::Succeeded);
        }
        _ => panic!(),
    }
}
