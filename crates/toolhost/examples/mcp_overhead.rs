//! What a Rust mount adds to a call: the same tool of a Rust `McpServer` called through
//! a mount and the executor, and with rmcp's own client (`Peer::call_tool`) directly,
//! in alternating blocks, both over in-memory pipes in one process (no network).
//!
//! `cargo run --release -p toolhost --features mcp --example mcp_overhead [-- calls-per-block]`

use std::time::Instant;

use serde_json::json;
use toolhost::mcp::rmcp::model::CallToolRequestParams;
use toolhost::mcp::rmcp::ServiceExt;
use toolhost::mcp::{mount_mcp, McpServer, MountOptions, ServeOptions};
use toolhost::{CallOptions, ManagerConfig, ToolDeclaration, ToolExecutor, ToolRegistry};

/// A server of one `echo` tool on a pipe of its own; the other end.
async fn served(executor: &ToolExecutor) -> (tokio::io::ReadHalf<tokio::io::DuplexStream>, tokio::io::WriteHalf<tokio::io::DuplexStream>) {
    let server = McpServer::new(executor, ServeOptions::default()).unwrap();
    let (near, far) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(tokio::io::split(far)).await {
            let _ = running.waiting().await;
        }
    });
    tokio::io::split(near)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let block: usize = std::env::args().nth(1).map_or(Ok(2000), |n| n.parse())?;
    let tools = ToolRegistry::new();
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] });
    tools.register_async(ToolDeclaration::new("echo", "returns n", schema), |args, _| async move { Ok(json!({ "n": args["n"] })) })?;
    let server_side = ToolExecutor::new(tools, ManagerConfig::default())?;

    let direct = ().serve(served(&server_side).await).await?;
    let local = ToolRegistry::new();
    let mount = mount_mcp(&local, served(&server_side).await, MountOptions::default()).await?;
    let caller = ToolExecutor::new(local, ManagerConfig::default())?;

    let (mut direct_us, mut mounted_us) = (Vec::new(), Vec::new());
    for round in 0..6 {
        let t = Instant::now();
        for n in 0..block {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = json!({ "n": n }).as_object().cloned();
            let r = direct.call_tool(params).await?;
            assert_eq!(r.structured_content, Some(json!({ "n": n })));
        }
        let d = t.elapsed().as_secs_f64() * 1e6 / block as f64;
        let t = Instant::now();
        for n in 0..block {
            let out = caller.execute("echo", json!({ "n": n }), CallOptions::default()).await;
            assert_eq!(out.result().ok(), Some(&json!({ "n": n })));
        }
        let m = t.elapsed().as_secs_f64() * 1e6 / block as f64;
        // Round 0 warms up.
        if round > 0 {
            direct_us.push(d);
            mounted_us.push(m);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (d, m) = (median(&mut direct_us), median(&mut mounted_us));
    println!("{block} calls a block, median of 5 blocks each: direct {d:.1} us/call, mounted {m:.1} us/call, the mount adds {:.1} us ({:.0}%)", m - d, (m / d - 1.0) * 100.0);
    mount.unmount().await;
    Ok(())
}
