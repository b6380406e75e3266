//! Approval, progress and an output schema on the Rust executor: a transfer waits for a
//! person (here, a task that approves a smaller amount), a crawl reports progress, and
//! a result that breaks its output schema comes back as `INVALID_OUTPUT`.
//!
//! `cargo run -p toolhost --example approval_progress`

use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{CallOptions, ExecutionEvent, ManagerConfig, NeedsApproval, ToolDeclaration, ToolExecutor, ToolRegistry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();

    let mut transfer = ToolDeclaration::new(
        "transfer",
        "Sends money",
        json!({"type": "object", "properties": {"cents": {"type": "integer"}}, "required": ["cents"]}),
    );
    transfer.metadata.needs_approval = Some(NeedsApproval::Always);
    registry.register_async(transfer, |args: Value, _ctx| async move { Ok(json!({ "sent": args["cents"] })) })?;

    registry.register_async(ToolDeclaration::new("crawl", "Crawls three pages", json!({"type": "object"})), |_args, ctx| async move {
        for page in 1..=3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            ctx.report_progress(f64::from(page), Some(3.0), Some("page"));
        }
        Ok(json!({ "pages": 3 }))
    })?;

    let mut weather = ToolDeclaration::new("weather", "The weather", json!({"type": "object"}));
    weather.output_schema = Some(json!({"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}));
    registry.register_async(weather, |_args, _ctx| async move { Ok(json!({ "celsius": "warm" })) })?;

    let executor = ToolExecutor::new(registry, ManagerConfig::default())?;
    executor.on_event(|event| match event {
        ExecutionEvent::Progress { .. } | ExecutionEvent::ApprovalRequested { .. } => println!("event: {}", event.event_type().as_str()),
        _ => {}
    });

    // The person who approves: waits for the request, then approves a smaller amount.
    let approver = executor.clone();
    tokio::spawn(async move {
        loop {
            if let Some(waiting) = approver.pending_approvals().first() {
                println!("{} asks to run with {}", waiting.tool_name, waiting.args);
                approver.approve(&waiting.approval_id, Some(json!({"cents": 2500})), Some("grace".into())).unwrap();
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let transfer = executor.execute("transfer", json!({"cents": 5000}), CallOptions::default()).await;
    let approval = transfer.record.approval.as_ref().expect("an approval record");
    println!("transfer: {} (approved by {:?}, edited: {})", transfer.result().unwrap(), approval.by, approval.edited);

    let crawl = executor.execute("crawl", json!({}), CallOptions::default()).await;
    println!("crawl: {}", crawl.result().unwrap());

    let weather = executor.execute("weather", json!({}), CallOptions::default()).await;
    let error = weather.result().unwrap_err();
    println!("weather: {} at {}", error.code, error.validation_errors[0].path);
    Ok(())
}
