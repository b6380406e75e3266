//! `mount_mcp` against a real server: one made with the official TypeScript SDK's own
//! `Server` (tests/fixtures/mcp-sdk-server.mjs), run by Node over stdio, reached through
//! rmcp's child-process transport. Needs `node` and the repository's `npm install` (the
//! SDK in node_modules), as `npm test` has.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::mcp::rmcp::transport::TokioChildProcess;
use toolhost::mcp::{mount_mcp, mount_mcp_with, McpMount, MountOptions};
use toolhost::{CallOptions, ErrorCategory, ExecutionEvent, ManagerConfig, RetryOverrides, Scope, ToolDeclaration, ToolError, ToolExecutor, ToolRegistry};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-sdk-server.mjs")
}

/// What the server wrote as `seen <json>` on stderr.
type Seen = Arc<Mutex<Vec<Value>>>;

/// The fixture server as an rmcp transport, and what it reports seeing.
fn server() -> (TokioChildProcess, Seen) {
    assert!(
        repo().join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the MCP SDK is not in node_modules: run `npm install` in the repository first"
    );
    let mut command = tokio::process::Command::new("node");
    command.arg(fixture());
    let (transport, stderr) = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn().expect("node starts");
    let seen = Seen::default();
    let into = seen.clone();
    let stderr = stderr.expect("stderr is piped");
    tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match line.strip_prefix("seen ") {
                Some(json) => into.lock().unwrap().push(serde_json::from_str(json).unwrap()),
                None => eprintln!("server: {line}"),
            }
        }
    });
    (transport, seen)
}

/// Waits (up to 10 s) until `check` holds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting until {what}");
}

async fn mounted(registry: &ToolRegistry, options: MountOptions) -> (McpMount, Seen) {
    let (transport, seen) = server();
    let mount = mount_mcp(registry, transport, options).await.expect("the fixture mounts");
    (mount, seen)
}

fn sdk() -> MountOptions {
    MountOptions { prefix: "sdk_".into(), ..MountOptions::default() }
}

#[tokio::test]
async fn a_servers_tools_are_registered_with_what_it_declared_and_over_limits_skipped() {
    let registry = ToolRegistry::new();
    let (mount, _) = mounted(&registry, sdk()).await;
    // `echo.text` has a character a name may not have; `costly`'s schema is over the cost bound.
    assert_eq!(mount.tools(), ["sdk_add", "sdk_echo_text", "sdk_fails", "sdk_slow", "sdk_shadow_me", "sdk_steps", "sdk_crash", "sdk_huge"]);
    assert_eq!(registry.names(), mount.tools());
    let skipped = mount.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].name, "costly");
    assert!(skipped[0].reason.starts_with("INVALID_SCHEMA: "), "{}", skipped[0].reason);
    assert!(skipped[0].reason.contains("validation steps"), "{}", skipped[0].reason);

    let add = registry.get("sdk_add").unwrap();
    assert_eq!(add.description, "Adds a and b");
    assert_eq!(add.metadata.title.as_deref(), Some("Add two numbers"));
    assert_eq!((add.metadata.read_only, add.metadata.idempotent, add.metadata.destructive), (Some(true), Some(true), None));
    assert_eq!(add.output_schema.as_ref().unwrap()["required"], json!(["sum"]));
    assert_eq!(add.metadata.extra["custom"], json!({ "mcp": { "server": "sdk-fixture", "tool": "add" } }));
    // No description: the one a model reads says where the tool is.
    assert_eq!(registry.get("sdk_shadow_me").unwrap().description, "The tool shadow_me of MCP server sdk-fixture");
    assert_eq!(mount.server_info().unwrap().server_info.as_ref().unwrap().version, "1.2.3");

    mount.unmount().await;
    assert!(registry.names().is_empty());
    assert!(mount.is_unmounted());
    assert_eq!(mount.refresh().await.unwrap_err().code, "MCP_UNMOUNTED");
}

#[tokio::test]
async fn calls_go_through_the_executor_validated_first_and_errors_are_the_tools() {
    let registry = ToolRegistry::new();
    let (mount, seen) = mounted(&registry, sdk()).await;
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();

    let call = CallOptions { tool_call_id: Some("call-7".into()), ..CallOptions::default() };
    let out = executor.execute("sdk_add", json!({ "a": 1, "b": 2 }), call).await;
    assert_eq!(out.result().unwrap(), &json!({ "sum": 3 }));
    let text = executor.execute("sdk_echo_text", json!({ "text": "hi" }), CallOptions::default()).await;
    assert_eq!(text.result().unwrap(), &json!("hi"));

    // Refused here: the server never sees it.
    let bad = executor.execute("sdk_add", json!({ "a": "one", "b": 2 }), CallOptions::default()).await;
    assert_eq!(bad.result().unwrap_err().code, "INVALID_ARGUMENTS");

    let failed = executor.execute("sdk_fails", json!({}), CallOptions::default()).await;
    let error = failed.result().unwrap_err();
    assert_eq!((error.category, error.code.as_str(), error.message.as_str(), error.retryable), (ErrorCategory::Execution, "MCP_TOOL_ERROR", "the disk is full", false));
    assert_eq!(failed.record.attempt_number, 1, "a tool's own error is not retried");
    let remote = error.cause.as_ref().unwrap().downcast_ref::<Value>().unwrap();
    assert_eq!(remote["isError"], json!(true));

    let calls: Vec<Value> = seen.lock().unwrap().iter().filter(|s| s.get("call").is_some()).cloned().collect();
    let names: Vec<&str> = calls.iter().map(|c| c["call"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "echo.text", "fails"]);
    assert_eq!(calls[0]["args"], json!({ "a": 1, "b": 2 }));
    // The idempotency key travels with the call: the tool-call id here, else the execution id.
    assert_eq!(calls[0]["meta"]["toolhost/idempotencyKey"], json!("call-7"));
    assert_eq!(calls[1]["meta"]["toolhost/idempotencyKey"], json!(text.record.id));
    mount.unmount().await;
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_at_the_server() {
    let registry = ToolRegistry::new();
    let (mount, seen) = mounted(&registry, sdk()).await;
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let count = |what: &str| seen.lock().unwrap().iter().filter(|s| s[what] == json!("slow")).count();
    let once = toolhost::RetryOverrides { max_attempts: Some(1), ..Default::default() };
    let call = CallOptions { timeout_ms: Some(300.0), retry: Some(once), ..CallOptions::default() };
    let out = executor.execute("sdk_slow", json!({}), call).await;
    assert_eq!(out.result().unwrap_err().category, ErrorCategory::Timeout);
    eventually("the server saw the cancellation", || count("cancelled") == 1).await;
    assert_eq!(count("call"), 1);

    // And a call cancelled by the caller.
    let token = toolhost::CancellationToken::new();
    let running = {
        let (executor, token) = (executor.clone(), token.clone());
        tokio::spawn(async move { executor.execute_with("sdk_slow", json!({}), CallOptions::default(), token).await })
    };
    eventually("the second call reached the server", || count("call") == 2).await;
    token.cancel();
    let out = running.await.unwrap();
    assert_eq!(out.result().unwrap_err().category, ErrorCategory::Cancelled);
    eventually("the server saw the second cancellation", || count("cancelled") == 2).await;
    mount.unmount().await;
}

#[tokio::test]
async fn the_servers_progress_is_the_calls_progress() {
    let registry = ToolRegistry::new();
    let (mount, _) = mounted(&registry, sdk()).await;
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let into = reports.clone();
    executor.on_event(move |e| {
        if let ExecutionEvent::Progress { progress, tool_name, .. } = e {
            into.lock().unwrap().push((tool_name.clone(), progress.progress, progress.total, progress.message.clone()));
        }
    });
    let out = executor.execute("sdk_steps", json!({}), CallOptions::default()).await;
    assert_eq!(out.result().unwrap(), &json!("done"));
    eventually("three reports arrived", || reports.lock().unwrap().len() == 3).await;
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports[0], ("sdk_steps".to_string(), 1.0, Some(3.0), Some("step 1".to_string())));
    assert_eq!(reports[2].1, 3.0);
    mount.unmount().await;

    // With `progress: false`, the server's reports are not the call's.
    let (mount, _) = mounted(&registry, MountOptions { progress: false, ..sdk() }).await;
    let quiet = Arc::new(Mutex::new(0));
    let count = quiet.clone();
    executor.on_event(move |e| {
        if matches!(e, ExecutionEvent::Progress { .. }) {
            *count.lock().unwrap() += 1;
        }
    });
    let out = executor.execute("sdk_steps", json!({}), CallOptions::default()).await;
    assert!(out.is_success());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(*quiet.lock().unwrap(), 0);
    mount.unmount().await;
}

/// toolhost's own server (`toolhost serve`, the JS CLI) adds what MCP has no field for:
/// a mount reads the category, a non-object value, and the error's own code back.
#[tokio::test]
async fn a_toolhost_servers_metadata_values_and_errors_come_back_whole() {
    let mut command = tokio::process::Command::new("node");
    command.arg(repo().join("js/cli.mjs")).args(["serve", "--stdio"]).arg(repo().join("examples/mcp-tools.mjs"));
    let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().unwrap();
    let registry = ToolRegistry::new();
    let mount = mount_mcp(&registry, transport, MountOptions::default()).await.unwrap();
    assert_eq!(mount.tools(), ["get_weather", "convert_currency"]);
    let weather = registry.get("get_weather").unwrap();
    assert_eq!((weather.metadata.category.as_deref(), weather.metadata.title.as_deref(), weather.metadata.open_world), (Some("weather"), Some("Weather"), Some(true)));
    let keys: Vec<&String> = weather.input_schema.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "properties", "required", "additionalProperties"]);

    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let out = executor.execute("get_weather", json!({ "city": "Oslo" }), CallOptions::default()).await;
    assert_eq!(out.result().unwrap(), &json!({ "city": "Oslo", "temperatureC": 6, "sky": "rain" }));
    let out = executor.execute("convert_currency", json!({ "amount": 10, "from": "EUR", "to": "USD" }), CallOptions::default()).await;
    assert_eq!(out.result().unwrap(), &json!(10.8), "a number comes back a number, not text");
    let out = executor.execute("get_weather", json!({ "city": "Atlantis" }), CallOptions::default()).await;
    let e = out.result().unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("EXECUTION_ERROR", "no weather station in Atlantis (try Paris, Tokyo or Oslo)"));
    mount.unmount().await;
}

/// What a JS tool's `toModelError` hides from its model (an internal address) reaches
/// neither a Rust mount of its `toolhost serve` (the error, the text its model reads, the
/// server's result kept as the cause) nor, through a Rust `McpServer` of that mount, an
/// rmcp client: the server's `_meta` error carries the rewritten text (31de130).
#[tokio::test]
async fn what_a_js_tools_to_model_error_hides_reaches_no_rust_mount_nor_its_clients() {
    use toolhost::mcp::rmcp::{model::CallToolRequestParams, ServiceExt};
    const HIDDEN: &str = "10.0.3.7";
    const WRITTEN: &str = "The order service is unavailable; tell the user to try later.";
    let mut command = tokio::process::Command::new("node");
    command.arg(repo().join("js/cli.mjs")).args(["serve", "--stdio"]).arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/model-error-tools.mjs"));
    let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().unwrap();
    let registry = ToolRegistry::new();
    let mount = mount_mcp(&registry, transport, MountOptions::default()).await.unwrap();
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();

    let out = executor.execute("orders", json!({ "id": "A1" }), CallOptions::default()).await;
    let e = out.result().unwrap_err();
    assert_eq!((e.category, e.code.as_str(), e.message.as_str()), (ErrorCategory::Execution, "EXECUTION_ERROR", WRITTEN));
    let text = toolhost::providers::model_errors::for_failure(&registry, Scope::Global, "orders", r#"{"id":"A1"}"#, e.category.as_str(), &e.code, &e.message, e.retryable, &e.validation_errors);
    let cause = e.cause.as_ref().and_then(|c| c.downcast_ref::<Value>()).expect("the server's result is the cause");
    for (what, seen) in [("the error's message", e.message.clone()), ("the model's text", text), ("the cause", cause.to_string())] {
        assert!(!seen.contains(HIDDEN), "{what} carries what toModelError hid: {seen}");
    }
    // Without a toModelError the mount reads the real message.
    let plain = executor.execute("fails", json!({}), CallOptions::default()).await;
    assert_eq!(plain.result().unwrap_err().message, "the disk is full");

    // This side serves the mount on: its client reads no more than the mount got.
    let server = toolhost::mcp::McpServer::new(&executor, toolhost::mcp::ServeOptions::default()).unwrap();
    let (near, far) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(tokio::io::split(far)).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(tokio::io::split(near)).await.unwrap();
    let mut params = CallToolRequestParams::new("orders");
    params.arguments = json!({ "id": "A1" }).as_object().cloned();
    let result = serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap();
    assert_eq!(result["isError"], json!(true), "{result}");
    assert_eq!(result["_meta"]["toolhost/error"]["message"], json!(WRITTEN), "{result}");
    assert!(!result.to_string().contains(HIDDEN), "an rmcp client of the Rust server read what toModelError hid: {result}");
    drop(client);
    mount.unmount().await;
}

#[tokio::test]
async fn a_list_change_at_the_server_mounts_the_new_tool() {
    let registry = ToolRegistry::new();
    let (mount, _) = mounted(&registry, sdk()).await;
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    // The fixture adds `late` and sends notifications/tools/list_changed.
    let out = executor.execute("sdk_echo_text", json!({ "text": "add a tool" }), CallOptions::default()).await;
    assert!(out.is_success());
    eventually("sdk_late is mounted", || mount.tools().contains(&"sdk_late".to_string())).await;
    let late = executor.execute("sdk_late", json!({}), CallOptions::default()).await;
    assert_eq!(late.result().unwrap(), &json!("late"));
    // A refresh with nothing new changes nothing.
    assert_eq!(mount.refresh().await.unwrap(), toolhost::mcp::MountChanges::default());
    mount.unmount().await;
}

#[tokio::test]
async fn a_mount_never_takes_a_visible_tools_place_unless_allowed_by_name() {
    let registry = ToolRegistry::new();
    registry
        .register_async(ToolDeclaration::new("shadow_me", "the local one", json!({ "type": "object" })), |_, _| async { Ok::<_, ToolError>(json!("local")) })
        .unwrap();
    let session = registry.create_session(false);
    let into_session = |shadow: Vec<String>| MountOptions { session_id: Some(session.clone()), include: Some(vec!["shadow_me".into(), "add".into()]), shadow, ..MountOptions::default() };

    let (mount, _) = mounted(&registry, into_session(Vec::new())).await;
    assert_eq!(mount.tools(), ["add"]);
    let skipped = mount.skipped();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].reason.starts_with("DUPLICATE_TOOL: a mounted tool may not take the place of the global tool 'shadow_me'"), "{}", skipped[0].reason);
    mount.unmount().await;

    let (mount, _) = mounted(&registry, into_session(vec!["shadow_me".into()])).await;
    assert_eq!(mount.tools(), ["add", "shadow_me"]);
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let in_session = CallOptions { session_id: Some(session.clone()), ..CallOptions::default() };
    let out = executor.execute("shadow_me", json!({}), in_session).await;
    assert_eq!(out.result().unwrap_err().message, "no tool shadow_me", "the session's call reaches the mounted tool");
    let global = executor.execute("shadow_me", json!({}), CallOptions::default()).await;
    assert_eq!(global.result().unwrap(), &json!("local"));
    mount.unmount().await;
    // Unmounting removes only what the mount registered.
    assert_eq!(registry.names(), ["shadow_me"]);
    assert!(registry.resolve(Scope::Session(&session), "add").is_err());

    // A session destroyed takes its mount with it.
    let (mount, _) = mounted(&registry, into_session(Vec::new())).await;
    assert!(registry.destroy_session(&session));
    eventually("the mount is unmounted", || mount.is_unmounted()).await;
    assert!(mount.tools().is_empty());
    assert_eq!(registry.names(), ["shadow_me"]);
}

#[tokio::test]
async fn include_exclude_and_shadow_names_that_match_no_tool_are_warnings_with_the_close_name() {
    let registry = ToolRegistry::new();
    // `Add` is `add` but for case, `fials` two edits from `fails`; `shadow_me` is the
    // remote name, not the local one.
    let options = MountOptions {
        exclude: vec!["echo.text".into(), "Add".into(), "fials".into(), "Add".into()],
        shadow: vec!["sdk_steps".into(), "shadow_me".into(), "zzz".into()],
        ..sdk()
    };
    let (mount, _) = mounted(&registry, options).await;
    assert_eq!(mount.tools(), ["sdk_add", "sdk_fails", "sdk_slow", "sdk_shadow_me", "sdk_steps", "sdk_crash", "sdk_huge"], "a misspelt exclude name hides nothing");
    let warned = [
        "mount_mcp: exclude names 'Add' (did you mean 'add'?), 'fials' (did you mean 'fails'?), which MCP server sdk-fixture does not list",
        "mount_mcp: shadow names 'shadow_me' (did you mean 'sdk_shadow_me'?), 'zzz', which no tool of MCP server sdk-fixture has as its local name",
    ];
    assert_eq!(mount.warnings(), warned);
    // Recomputed on each listing.
    mount.refresh().await.unwrap();
    assert_eq!(mount.warnings(), warned);
    mount.unmount().await;

    // An include name that matches nothing mounts nothing, and says so; at most 10 shown.
    let mut include = vec!["ad".to_string()];
    include.extend((0..11).map(|i| format!("x{i}{}", "y".repeat(300))));
    let (mount, _) = mounted(&registry, MountOptions { include: Some(include), ..sdk() }).await;
    assert!(mount.tools().is_empty());
    let note = &mount.warnings()[0];
    assert!(note.starts_with("mount_mcp: include names 'ad' (did you mean 'add'?), 'x0yyy"), "{note}");
    assert!(note.ends_with("yyy' and 2 more, which MCP server sdk-fixture does not list"), "{note}");
    assert!(note.len() < 2400, "{} characters", note.len());
    mount.unmount().await;

    // Names that all match: no such warning.
    let (mount, _) = mounted(&registry, MountOptions { include: Some(vec!["add".into(), "steps".into()]), exclude: vec!["steps".into()], shadow: vec!["sdk_add".into()], ..sdk() }).await;
    assert_eq!(mount.tools(), ["sdk_add"]);
    assert!(mount.warnings().is_empty(), "{:?}", mount.warnings());
    mount.unmount().await;
}

#[tokio::test]
async fn options_that_cannot_work_are_refused_and_dropping_the_mount_unmounts() {
    let registry = ToolRegistry::new();
    for (options, says) in [
        (MountOptions { max_tools: 0, ..MountOptions::default() }, "max_tools must be at least 1"),
        (MountOptions { session_id: Some("nope".into()), ..MountOptions::default() }, "session 'nope' does not exist"),
        (MountOptions { prefix: "a b".into(), ..MountOptions::default() }, "prefix 'a b' must be"),
        (MountOptions { prefix: "é".repeat(40), ..MountOptions::default() }, "must be at most 63 letters"),
        (MountOptions { prefix: "p".repeat(64), ..MountOptions::default() }, "must be at most 63 letters"),
        (MountOptions { list_timeout: Duration::ZERO, ..MountOptions::default() }, "must be more than 0"),
    ] {
        let (transport, _) = server();
        let e = mount_mcp(&registry, transport, options).await.err().expect("refused");
        assert_eq!(e.code, "INVALID_CONFIG");
        assert!(e.message.contains(says), "{}", e.message);
    }
    // A peer that never answers initialize: refused after connect_timeout, not a hang.
    let (near, _far) = tokio::io::duplex(1024);
    let quick = MountOptions { connect_timeout: Duration::from_millis(200), ..MountOptions::default() };
    let e = mount_mcp(&registry, tokio::io::split(near), quick).await.err().expect("refused");
    assert_eq!((e.code.as_str(), e.category), ("MCP_CONNECTION_FAILED", ErrorCategory::Transient));
    assert!(e.message.contains("did not answer initialize within connect_timeout (200 ms)"), "{}", e.message);

    let (mount, _) = mounted(&registry, MountOptions { max_tools: 2, ..MountOptions::default() }).await;
    assert_eq!(mount.tools(), ["add", "echo_text"]);
    assert_eq!(mount.warnings(), ["MCP server sdk-fixture lists more than max_tools (2) tools: the first 2 are used"]);
    drop(mount);
    assert!(registry.names().is_empty());
}

/// The JS mount (`mountMcp`) and this one register the same declarations for the same
/// server. Both make them with the engine's `declaration_of`, each from what its own
/// client (the TypeScript SDK's, rmcp's) read of the listing, and each skips on its own:
/// this fails when those drift apart.
#[tokio::test]
async fn the_js_mount_registers_the_same_declarations() {
    let script = format!(
        "import {{ ToolRegistry }} from {node}\n\
         import {{ mountMcp }} from {mcp}\n\
         const registry = new ToolRegistry()\n\
         const mount = await mountMcp(registry, {{ command: process.execPath, args: [{fixture}] }}, {{ prefix: 'sdk_' }})\n\
         process.stdout.write(JSON.stringify({{ tools: mount.tools.map((n) => registry.get(n)), skipped: mount.skipped.map((s) => s.name) }}))\n\
         await mount.unmount()\n",
        node = json!(repo().join("js/node.mjs").to_str().unwrap()),
        mcp = json!(repo().join("js/mcp.mjs").to_str().unwrap()),
        fixture = json!(fixture().to_str().unwrap()),
    );
    let out = tokio::process::Command::new("node").args(["--input-type=module", "-e", &script]).stderr(Stdio::inherit()).output().await.unwrap();
    assert!(out.status.success(), "the JS mount ran");
    let js: Value = serde_json::from_slice(&out.stdout).unwrap();

    let registry = ToolRegistry::new();
    let (mount, _) = mounted(&registry, sdk()).await;
    let rust: Vec<Value> = mount.tools().iter().map(|n| serde_json::to_value(registry.get(n).unwrap()).unwrap()).collect();
    let js_tools = js["tools"].as_array().unwrap();
    assert_eq!(js_tools.len(), rust.len());
    for (j, r) in js_tools.iter().zip(&rust) {
        for key in ["name", "description", "inputSchema", "outputSchema", "metadata"] {
            assert_eq!(j.get(key), r.get(key), "{key} of {}", r["name"]);
        }
    }
    assert_eq!(js["skipped"], json!(mount.skipped().iter().map(|s| s.name.clone()).collect::<Vec<_>>()));
    mount.unmount().await;
}

#[tokio::test]
async fn a_mount_with_connect_reconnects_after_its_server_died_and_one_without_does_not() {
    let once = || CallOptions { retry: Some(RetryOverrides { max_attempts: Some(1), ..Default::default() }), ..CallOptions::default() };
    let add = json!({ "a": 1, "b": 2 });

    let registry = ToolRegistry::new();
    let started = Arc::new(Mutex::new(0));
    let count = started.clone();
    let connect = move || {
        *count.lock().unwrap() += 1;
        let mut command = tokio::process::Command::new("node");
        command.arg(fixture());
        async move { TokioChildProcess::new(command) }
    };
    let mount = mount_mcp_with(&registry, connect, sdk()).await.unwrap();
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let crashed = executor.execute("sdk_crash", json!({}), once()).await;
    let e = crashed.result().unwrap_err();
    assert_eq!((e.code.as_str(), e.category), ("MCP_CONNECTION_CLOSED", ErrorCategory::Transient), "{}", e.message);
    // The next call starts the server again.
    let out = executor.execute("sdk_add", add.clone(), once()).await;
    assert_eq!(out.result().unwrap(), &json!({ "sum": 3 }));
    assert_eq!(*started.lock().unwrap(), 2);
    // The tools were listed again on the new connection.
    eventually("the tools are listed again", || mount.tools().len() == 8).await;
    // With retries (the default), a call in flight when the server died is sent again on
    // a new connection: `crash` ends each server it reaches, so all three attempts do.
    let crashed = executor.execute("sdk_crash", json!({}), CallOptions::default()).await;
    assert_eq!(crashed.record.attempt_number, 3);
    assert_eq!(*started.lock().unwrap(), 4);
    mount.unmount().await;
    assert_eq!(executor.execute("sdk_add", add.clone(), once()).await.result().unwrap_err().code, "TOOL_NOT_FOUND");

    // Without `connect`, the connection stays closed.
    let (mount, _) = mounted(&registry, sdk()).await;
    assert_eq!(executor.execute("sdk_crash", json!({}), once()).await.result().unwrap_err().code, "MCP_CONNECTION_CLOSED");
    assert_eq!(executor.execute("sdk_add", add, once()).await.result().unwrap_err().code, "MCP_CONNECTION_CLOSED");
    mount.unmount().await;
}

/// rmcp bounds a message at 16 MiB (its `DEFAULT_MAX_LINE_LENGTH`): a larger answer is
/// dropped, so its call ends at its timeout, and the connection goes on.
#[tokio::test]
async fn an_answer_over_rmcps_bound_times_the_call_out_and_the_mount_goes_on() {
    let registry = ToolRegistry::new();
    let (mount, seen) = mounted(&registry, MountOptions { request_timeout: Some(Duration::from_secs(3)), ..sdk() }).await;
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let once = CallOptions { retry: Some(RetryOverrides { max_attempts: Some(1), ..Default::default() }), ..CallOptions::default() };
    let out = executor.execute("sdk_huge", json!({}), once).await;
    let e = out.result().unwrap_err();
    assert_eq!((e.code.as_str(), e.category), ("MCP_REQUEST_TIMEOUT", ErrorCategory::Timeout), "{}", e.message);
    assert!(seen.lock().unwrap().iter().any(|s| s["call"] == json!("huge")));
    let out = executor.execute("sdk_add", json!({ "a": 1, "b": 2 }), CallOptions::default()).await;
    assert_eq!(out.result().unwrap(), &json!({ "sum": 3 }));
    mount.unmount().await;
}
