//! A remote MCP server's tools run by the Rust executor: this mounts toolhost's own JS
//! server (`toolhost serve examples/mcp-tools.mjs --stdio`, started with Node) through
//! rmcp's child-process transport, then calls its tools: validated here first, with
//! the executor's retries, timeouts and events, as for any tool.
//!
//! `cargo run -p toolhost --features mcp --example mcp_mount` (after `npm install`)

use std::path::Path;

use serde_json::json;
use toolhost::mcp::rmcp::transport::TokioChildProcess;
use toolhost::mcp::{mount_mcp, MountOptions};
use toolhost::{CallOptions, ManagerConfig, ToolExecutor, ToolRegistry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut server = tokio::process::Command::new("node");
    server.arg(repo.join("js/cli.mjs")).args(["serve", "--stdio"]).arg(repo.join("examples/mcp-tools.mjs"));

    let registry = ToolRegistry::new();
    let mount = mount_mcp(&registry, TokioChildProcess::new(server)?, MountOptions { prefix: "wx_".into(), ..MountOptions::default() }).await?;
    println!("mounted: {}", mount.tools().join(", "));
    let weather = registry.get("wx_get_weather").expect("mounted");
    println!("wx_get_weather: {:?}, read-only: {:?}", weather.metadata.title, weather.metadata.read_only);

    let executor = ToolExecutor::new(registry, ManagerConfig::default())?;
    for (tool, args) in [
        ("wx_get_weather", json!({ "city": "Tokyo" })),
        ("wx_convert_currency", json!({ "amount": 20, "from": "EUR", "to": "JPY" })),
        ("wx_get_weather", json!({ "city": "" })),
        ("wx_get_weather", json!({ "city": "Atlantis" })),
    ] {
        let outcome = executor.execute(tool, args, CallOptions::default()).await;
        match outcome.result() {
            Ok(value) => println!("{tool}: {value}"),
            Err(e) => println!("{tool}: {} {}", e.code, e.message),
        }
    }
    mount.unmount().await;
    Ok(())
}
