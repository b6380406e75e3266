//! A `#[tool]` fn served over MCP on stdin/stdout, for any MCP client (Claude Desktop,
//! the AI SDK, `mountMcp` in toolhost's JS API): each `tools/call` runs through the Rust
//! executor, validated first, with its retries, timeouts, cancellation and progress.
//!
//! `cargo run -q -p toolhost --features mcp --example mcp_serve` (it waits for a client
//! on stdin). From JS: `registry.mountMcp({ command: 'cargo', args: ['run', '-q', '-p',
//! 'toolhost', '--features', 'mcp', '--example', 'mcp_serve'] })`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost::mcp::rmcp::{transport::stdio, ServiceExt};
use toolhost::mcp::{McpServer, ServeOptions};
use toolhost::{tool, ManagerConfig, ToolExecutor, ToolRegistry};

#[derive(Deserialize, JsonSchema)]
struct DivideArgs {
    /// The dividend
    a: f64,
    /// The divisor, not zero
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Quotient {
    quotient: f64,
}

/// Divides a by b
#[tool]
async fn divide(args: DivideArgs) -> Result<Quotient, String> {
    if args.b == 0.0 {
        return Err(format!("cannot divide {} by zero", args.a));
    }
    Ok(Quotient { quotient: args.a / args.b })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    toolhost::register_tools!(registry, divide_tool)?;
    let executor = ToolExecutor::new(registry, ManagerConfig::default())?;
    let server = McpServer::new(&executor, ServeOptions { name: "rust-divide".into(), ..ServeOptions::default() })?;
    // Serves until the client closes stdin.
    server.serve(stdio()).await?.waiting().await?;
    Ok(())
}
