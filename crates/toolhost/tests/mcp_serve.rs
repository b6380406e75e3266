//! `McpServer` against the official TypeScript SDK's own `Client`
//! (tests/fixtures/mcp-sdk-client.mjs, run by Node), served over the client process's
//! stdin and stdout; the same process then mounts the server with toolhost's JS
//! `mountMcp`, so values, metadata and errors make the round trip. Needs `node` and the
//! repository's `npm install`, as `npm test` has.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;
use toolhost::mcp::rmcp::ServiceExt;
use toolhost::mcp::{Approval, McpServer, ServeOptions};
use toolhost::{ExecutionEvent, ManagerConfig, NeedsApproval, ToolDeclaration, ToolError, ToolExecutor, ToolRegistry};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tools() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let mut add = ToolDeclaration::new(
        "add",
        "Adds a and b",
        json!({ "type": "object", "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } }, "required": ["a", "b"] }),
    );
    add.output_schema = Some(json!({ "type": "object", "properties": { "sum": { "type": "number" } }, "required": ["sum"] }));
    add.metadata.read_only = Some(true);
    add.metadata.title = Some("Addition".into());
    add.metadata.category = Some("math".into());
    add.metadata.tags = vec!["pure".into()];
    registry.register_async(add, |args: Value, _| async move { Ok(json!({ "sum": args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap() })) }).unwrap();
    let words = ToolDeclaration::new("words", "n words", json!({ "type": "object", "properties": { "n": { "type": "integer" } } }));
    registry.register_async(words, |args: Value, _| async move { Ok(json!(vec!["word"; args["n"].as_u64().unwrap_or(1) as usize].join(" "))) }).unwrap();
    registry.register_async(ToolDeclaration::new("count", "A number", json!({ "type": "object" })), |_, _| async { Ok(json!(42)) }).unwrap();
    registry.register_async(ToolDeclaration::new("fails", "Fails", json!({ "type": "object" })), |_, _| async { Err::<Value, _>(ToolError::execution("the disk is full")) }).unwrap();
    let mut long = ToolDeclaration::new("long", "A long text", json!({ "type": "object" }));
    long.metadata.max_output_chars = Some(40);
    registry.register_async(long, |_, _| async { Ok(json!("x".repeat(500))) }).unwrap();
    let mut steps = ToolDeclaration::new("steps", "Three steps", json!({ "type": "object" }));
    steps.metadata.self_instrumented = true;
    registry
        .register_async(steps, |_, ctx| async move {
            for i in 1..=3 {
                ctx.report_progress(f64::from(i), Some(3.0), Some(&format!("step {i}")));
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok(json!("done"))
        })
        .unwrap();
    registry
        .register_async(ToolDeclaration::new("slow", "Waits until cancelled", json!({ "type": "object" })), |_, ctx| async move {
            ctx.cancellation.cancelled().await;
            Ok(json!("cancelled"))
        })
        .unwrap();
    let mut pay = ToolDeclaration::new("pay", "Pays", json!({ "type": "object", "properties": { "cents": { "type": "integer" } }, "required": ["cents"] }));
    pay.metadata.needs_approval = Some(NeedsApproval::Always);
    registry.register_async(pay, |args: Value, _| async move { Ok(json!({ "paid": args["cents"] })) }).unwrap();
    registry
}

#[tokio::test]
async fn the_sdk_client_lists_calls_cancels_and_mounts_the_rust_server() {
    assert!(repo().join("node_modules/@modelcontextprotocol/sdk").is_dir(), "the MCP SDK is not in node_modules: run `npm install` first");
    let registry = tools();
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let cancelled = Arc::new(AtomicBool::new(false));
    let seen = cancelled.clone();
    executor.on_event(move |e| {
        if matches!(e, ExecutionEvent::Cancelled { tool_name, .. } if tool_name == "slow") {
            seen.store(true, Ordering::SeqCst);
        }
    });
    let options = ServeOptions { name: "rust-tools".into(), version: "2.0.0".into(), approval: Approval::Elicit, ..ServeOptions::default() };
    let server = McpServer::new(&executor, options).unwrap();

    let mut child = tokio::process::Command::new("node")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-sdk-client.mjs"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (from_client, to_client) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let serving = tokio::spawn(async move { server.serve((from_client, to_client)).await.unwrap().waiting().await });

    let mut reports: HashMap<String, Value> = HashMap::new();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(json) = line.strip_prefix("report ") {
                let r: Value = serde_json::from_str(json).unwrap();
                reports.insert(r["what"].as_str().unwrap().to_string(), r["value"].clone());
            } else if line == "wants late" {
                // Registered while the client is connected: it hears of it.
                registry.register_async(ToolDeclaration::new("late", "Came later", json!({ "type": "object" })), |_, _| async { Ok(json!("late")) }).unwrap();
            } else {
                eprintln!("client: {line}");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read).await.expect("the client finished");
    assert!(child.wait().await.unwrap().success(), "the client exited 0");
    let _ = serving.await;

    assert_eq!(reports["server"], json!({ "name": "rust-tools", "version": "2.0.0" }));
    let listed = reports["tools"].as_array().unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "words", "count", "fails", "long", "steps", "slow", "pay"]);
    assert_eq!(listed[0]["annotations"], json!({ "title": "Addition", "readOnlyHint": true }));
    assert_eq!(listed[0]["_meta"]["toolhost/metadata"], json!({ "category": "math", "tags": ["pure"] }));
    assert_eq!(listed[0]["outputSchema"]["required"], json!(["sum"]));

    assert_eq!(reports["add"]["structuredContent"], json!({ "sum": 5 }));
    assert_eq!(reports["add"]["content"], json!([{ "type": "text", "text": "{\"sum\":5}" }]));
    assert_eq!(reports["words"]["content"], json!([{ "type": "text", "text": "word word" }]));
    assert_eq!(reports["count"]["_meta"], json!({ "toolhost/json": true }));
    let fails = &reports["fails"];
    assert_eq!(fails["isError"], json!(true));
    assert_eq!(fails["_meta"]["toolhost/error"], json!({ "category": "execution", "code": "EXECUTION_ERROR", "message": "the disk is full", "retryable": false }));
    assert!(fails["content"][0]["text"].as_str().unwrap().starts_with("Tool `fails` failed: the disk is full"), "{fails}");
    let invalid = &reports["invalid"];
    assert_eq!(invalid["_meta"]["toolhost/error"]["code"], json!("INVALID_ARGUMENTS"));
    assert!(invalid["content"][0]["text"].as_str().unwrap().contains("/a"), "{invalid}");
    assert_eq!(reports["unknown"]["thrown"]["code"], json!(-32602));
    assert!(reports["unknown"]["thrown"]["message"].as_str().unwrap().contains("nope"), "{}", reports["unknown"]);
    // Cut for the model within maxOutputChars; the value whole in _meta for a mount.
    let long = &reports["long"];
    assert!(long["content"][0]["text"].as_str().unwrap().len() < 500, "{long}");
    assert_eq!(long["_meta"]["toolhost/value"].as_str().unwrap().len(), 500);
    assert_eq!(reports["steps"]["content"][0]["text"], json!("done"));
    let progress = reports["progress"].as_array().unwrap();
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert_eq!(progress[2], json!({ "progress": 3, "total": 3, "message": "step 3" }));
    assert!(reports["slow"]["thrown"].is_object(), "the client gave up: {}", reports["slow"]);
    assert!(cancelled.load(Ordering::SeqCst), "notifications/cancelled cancelled the execution");

    // Approval over elicitation: the client was asked, and its answer decided.
    assert_eq!(reports["pay-small"]["structuredContent"], json!({ "paid": 5 }));
    let large = &reports["pay-large"];
    assert_eq!(large["isError"], json!(true), "{large}");
    assert_eq!(large["_meta"]["toolhost/error"]["category"], json!("denied"), "{large}");
    assert!(large["_meta"]["toolhost/error"]["message"].as_str().unwrap().contains("the MCP client answered decline"), "{large}");
    let asked = reports["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], json!("Allow the tool 'pay' to run with these arguments?\n{\"cents\":5}"));

    let mounted = &reports["mounted"];
    assert_eq!(mounted["tools"], json!(["rs_add", "rs_words", "rs_count", "rs_fails", "rs_long", "rs_steps", "rs_slow", "rs_pay"]));
    assert_eq!(mounted["add"]["metadata"]["category"], json!("math"));
    assert_eq!(mounted["add"]["metadata"]["readOnly"], json!(true));
    assert_eq!(reports["mounted-add"], json!({ "result": { "sum": 42 } }));
    assert_eq!(reports["mounted-count"], json!({ "result": 42 }));
    assert_eq!(reports["mounted-fails"]["error"]["code"], json!("EXECUTION_ERROR"));
    assert_eq!(reports["mounted-fails"]["error"]["message"], json!("tool 'rs_fails' failed: the disk is full"));
    assert_eq!(reports["late"], json!({ "result": "late" }), "the client heard of the new tool and mounted it");
}

#[tokio::test]
async fn a_server_of_a_session_that_does_not_exist_is_refused() {
    let executor = ToolExecutor::new(ToolRegistry::new(), ManagerConfig::default()).unwrap();
    let e = McpServer::new(&executor, ServeOptions { session_id: Some("gone".into()), ..ServeOptions::default() }).err().unwrap();
    assert_eq!(e.code, "INVALID_CONFIG");
}

/// `server` serving one connection over an in-memory pipe, mounted on the other end by
/// a Rust mount into a registry of its own; the mount and an executor of that registry.
async fn mounted_in_memory(server: McpServer, options: toolhost::mcp::MountOptions) -> (toolhost::mcp::McpMount, ToolExecutor) {
    let (near, far) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(tokio::io::split(far)).await {
            let _ = running.waiting().await;
        }
    });
    let local = ToolRegistry::new();
    let mount = toolhost::mcp::mount_mcp(&local, tokio::io::split(near), options).await.unwrap();
    (mount, ToolExecutor::new(local, ManagerConfig::default()).unwrap())
}

/// The Rust mount of the Rust server, in one process over an in-memory pipe: what one
/// writes the other reads back whole.
#[tokio::test]
async fn the_rust_mount_reads_the_rust_server_back_whole() {
    let executor = ToolExecutor::new(tools(), ManagerConfig::default()).unwrap();
    let server = McpServer::new(&executor, ServeOptions::default()).unwrap();
    let (mount, caller) = mounted_in_memory(server, toolhost::mcp::MountOptions { prefix: "rs_".into(), ..Default::default() }).await;
    let add = caller.registry().get("rs_add").unwrap();
    assert_eq!((add.metadata.category.as_deref(), add.metadata.tags.as_slice(), add.metadata.read_only), (Some("math"), &["pure".to_string()][..], Some(true)));
    let run = |tool: &'static str, args: Value| {
        let caller = caller.clone();
        async move { caller.execute(tool, args, toolhost::CallOptions::default()).await }
    };
    assert_eq!(run("rs_add", json!({ "a": 1, "b": 2 })).await.result().unwrap(), &json!({ "sum": 3 }));
    assert_eq!(run("rs_words", json!({ "n": 3 })).await.result().unwrap(), &json!("word word word"));
    assert_eq!(run("rs_count", json!({})).await.result().unwrap(), &json!(42));
    assert_eq!(run("rs_long", json!({})).await.result().unwrap(), &json!("x".repeat(500)), "cut for a model, whole for a mount");
    let failed = run("rs_fails", json!({})).await;
    let e = failed.result().unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str(), e.retryable), ("EXECUTION_ERROR", "the disk is full", false));
    mount.unmount().await;
}

/// A server of a session answers, once the session is destroyed, that it was.
#[tokio::test]
async fn a_served_session_that_was_destroyed_says_so() {
    let registry = tools();
    let session = registry.create_session(false);
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let server = McpServer::new(&executor, ServeOptions { session_id: Some(session.clone()), ..ServeOptions::default() }).unwrap();
    let (mount, caller) = mounted_in_memory(server, toolhost::mcp::MountOptions::default()).await;
    assert_eq!(mount.tools().len(), 8, "a session sees the global tools");
    assert!(registry.destroy_session(&session));
    let out = caller.execute("count", json!({}), toolhost::CallOptions::default()).await;
    let e = out.result().unwrap_err();
    assert_eq!(e.code, "MCP_PROTOCOL_ERROR");
    assert!(e.message.contains(&format!("session '{session}' was destroyed")), "{}", e.message);
    mount.unmount().await;
}

/// The approval rules of calls over MCP, with a Rust mount as the client (it cannot be
/// asked through elicitation).
#[tokio::test]
async fn served_calls_that_need_approval_fail_closed() {
    async fn pay_with(options: ServeOptions, then: impl FnOnce(ToolExecutor)) -> toolhost::ExecutionOutcome {
        let executor = ToolExecutor::new(tools(), ManagerConfig::default()).unwrap();
        then(executor.clone());
        let server = McpServer::new(&executor, options).unwrap();
        let (mount, caller) = mounted_in_memory(server, toolhost::mcp::MountOptions::default()).await;
        let out = caller.execute("pay", json!({ "cents": 7 }), toolhost::CallOptions::default()).await;
        mount.unmount().await;
        out
    }
    let denied = |out: &toolhost::ExecutionOutcome| out.result().unwrap_err().message.clone();

    let out = pay_with(ServeOptions { approval: Approval::Allow, ..ServeOptions::default() }, |_| {}).await;
    assert_eq!(out.result().unwrap(), &json!({ "paid": 7 }));
    let out = pay_with(ServeOptions { approval: Approval::Deny, ..ServeOptions::default() }, |_| {}).await;
    assert!(denied(&out).contains("this MCP server does not take approvals"), "{}", denied(&out));
    let out = pay_with(ServeOptions { approval: Approval::Elicit, ..ServeOptions::default() }, |_| {}).await;
    assert!(denied(&out).contains("the MCP client cannot be asked (it does not support elicitation)"), "{}", denied(&out));
    // Nobody answers: denied after approval_timeout.
    let quick = ServeOptions { approval_timeout: Some(Duration::from_millis(200)), ..ServeOptions::default() };
    let out = pay_with(quick, |_| {}).await;
    assert!(denied(&out).contains("nobody answered within 200 ms"), "{}", denied(&out));
    // The executor's own approve() decides with approval: Manager.
    let out = pay_with(ServeOptions::default(), |executor| {
        let approver = executor.clone();
        executor.on_event(move |e| {
            if let ExecutionEvent::ApprovalRequested { approval_id, .. } = e {
                let (approver, id) = (approver.clone(), approval_id.clone());
                tokio::spawn(async move { approver.approve(&id, None, Some("grace".into())).unwrap() });
            }
        });
    })
    .await;
    assert_eq!(out.result().unwrap(), &json!({ "paid": 7 }));
}

#[tokio::test]
async fn more_served_calls_waiting_for_approval_than_allowed_are_denied() {
    let executor = ToolExecutor::new(tools(), ManagerConfig::default()).unwrap();
    let options = ServeOptions { max_pending_approvals: 1, approval_timeout: None, ..ServeOptions::default() };
    let server = McpServer::new(&executor, options).unwrap();
    let (mount, caller) = mounted_in_memory(server, toolhost::mcp::MountOptions::default()).await;
    let call = |cents: u32| {
        let caller = caller.clone();
        tokio::spawn(async move { caller.execute("pay", json!({ "cents": cents }), toolhost::CallOptions::default()).await })
    };
    let first = call(1);
    for _ in 0..200 {
        if executor.pending_approvals().len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = call(2).await.unwrap();
    let e = second.result().unwrap_err();
    assert!(e.message.contains("more than 1 calls of this MCP session wait for approval (max_pending_approvals)"), "{}", e.message);
    let waiting = executor.pending_approvals();
    assert_eq!(waiting.len(), 1);
    executor.approve(&waiting[0].approval_id, None, None).unwrap();
    assert_eq!(first.await.unwrap().result().unwrap(), &json!({ "paid": 1 }));
    mount.unmount().await;
}

/// Each clone of a server is a connection of its own: `max_pending_approvals` counts the
/// calls of one connection, and a request id is refused only while the same connection
/// has a call in flight under it.
#[tokio::test]
async fn approvals_and_request_ids_are_counted_per_connection() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let executor = ToolExecutor::new(tools(), ManagerConfig::default()).unwrap();
    let options = ServeOptions { max_pending_approvals: 1, approval_timeout: None, ..ServeOptions::default() };
    let server = McpServer::new(&executor, options).unwrap();

    // A connection spoken to line by line, as a client that reuses a request id would.
    async fn raw(server: McpServer) -> (tokio::io::WriteHalf<tokio::io::DuplexStream>, tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>) {
        let (near, far) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(far)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut write) = tokio::io::split(near);
        let mut lines = BufReader::new(read).lines();
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } } });
        write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
        lines.next_line().await.unwrap().unwrap();
        write.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();
        (write, lines)
    }
    let pay = |id: u64, cents: u64| format!("{}\n", json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "pay", "arguments": { "cents": cents } } }));
    let waiting_for = |n: usize| {
        let executor = executor.clone();
        async move {
            for _ in 0..300 {
                if executor.pending_approvals().len() == n {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("{} approvals waiting, not {n}", executor.pending_approvals().len());
        }
    };

    let (mut a, mut a_lines) = raw(server.clone()).await;
    let (mut b, mut b_lines) = raw(server.clone()).await;
    a.write_all(pay(7, 1).as_bytes()).await.unwrap();
    waiting_for(1).await;
    // The same id on the same connection while its call runs: refused, and the first goes on.
    a.write_all(pay(7, 2).as_bytes()).await.unwrap();
    let refused: Value = serde_json::from_str(&a_lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(refused["id"], json!(7));
    assert_eq!(refused["error"]["code"], json!(-32600));
    assert_eq!(refused["error"]["message"], json!("request id 7 is already in use by a call in flight"));
    // The same id on another connection is another request, and its approval waits too:
    // the other connection's waiting call does not count against it.
    b.write_all(pay(7, 3).as_bytes()).await.unwrap();
    waiting_for(2).await;
    for waiting in executor.pending_approvals() {
        executor.approve(&waiting.approval_id, None, None).unwrap();
    }
    let answer: Value = serde_json::from_str(&b_lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!((answer["id"].clone(), answer["result"]["structuredContent"].clone()), (json!(7), json!({ "paid": 3 })));
    // The first call of connection a ran once; rmcp maps answers by request id, and the
    // refusal took id 7's place there, so its answer is dropped (README: what does not
    // work yet). Its record says it succeeded.
    for _ in 0..300 {
        if executor.executions(usize::MAX).iter().filter(|r| r.tool_name == "pay" && r.status.as_str() == "succeeded").count() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut paid: Vec<(String, i64)> = executor.executions(usize::MAX).iter().filter(|r| r.tool_name == "pay").map(|r| (r.status.as_str().to_string(), r.args.to_value()["cents"].as_i64().unwrap())).collect();
    paid.sort_by_key(|p| p.1);
    assert_eq!(paid, vec![("succeeded".to_string(), 1), ("succeeded".to_string(), 3)], "two payments ran, not the refused one (2 cents)");
    // A second waiting call on one connection is still denied.
    a.write_all(pay(8, 4).as_bytes()).await.unwrap();
    waiting_for(1).await;
    a.write_all(pay(9, 5).as_bytes()).await.unwrap();
    let denied: Value = serde_json::from_str(&a_lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(denied["id"], json!(9));
    assert!(denied["result"]["content"][0]["text"].as_str().unwrap().contains("more than 1 calls of this MCP session wait for approval"), "{denied}");
    executor.approve(&executor.pending_approvals()[0].approval_id, None, None).unwrap();
    let last: Value = serde_json::from_str(&a_lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(last["result"]["structuredContent"], json!({ "paid": 4 }));
}
