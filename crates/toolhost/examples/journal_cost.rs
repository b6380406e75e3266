//! How long a journal store takes per call (a claim, then an outcome), without any
//! thread hop: `cargo run --release -p toolhost --features journal --example journal_cost -- <url> [calls]`.
use std::time::Instant;

use serde_json::json;
use toolhost::journal::{open, Claim, ClaimAnswer, Effect, Record, RowKey, StoredOutcome};

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("a journal URL");
    let calls: usize = args.next().map_or(5000, |n| n.parse().unwrap());
    let mut store = open(&url).unwrap_or_else(|e| panic!("{e}"));
    let run = uuid::Uuid::new_v4();
    let t0 = Instant::now();
    for i in 0..calls {
        let row = RowKey { scope: String::new(), key: format!("{run}-{i}") };
        let args = json!({ "n": i });
        let claim = Claim {
            exec: i as u64,
            row: row.clone(),
            fingerprint: toolhost::journal::fingerprint("t", &args),
            tool: "t".into(),
            effect: Effect::Once,
            args: args.to_string(),
            execution_id: format!("e{i}"),
            tool_call_id: None,
            approval: None,
        };
        let now = 1_000_000 + i as i64;
        let fence = match store.as_store().claim("me", now + 10_000, now, &[claim]).unwrap().remove(0) {
            ClaimAnswer::Claimed { fence, .. } => fence,
            other => panic!("{other:?}"),
        };
        let outcome = StoredOutcome { status: "succeeded".into(), result: Some(json!({ "n": i })), error: None, execution_id: format!("e{i}"), attempts: 1, started_at: None, completed_at: 0.0, duration_ms: None, approval: None };
        store.as_store().record(now, &[Record { exec: i as u64, row, fence, outcome }]).unwrap();
    }
    let us = t0.elapsed().as_secs_f64() * 1e6 / calls as f64;
    println!("{url}: {us:.1} µs per call (claim + outcome, {calls} calls)");
}
