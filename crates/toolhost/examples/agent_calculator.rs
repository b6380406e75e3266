//! The calculator of issue 6 as an agent would host it: a `#[tool]` fn registered with
//! `register_tools!`, its declaration exported in OpenAI Chat Completions format, and
//! four calls through the executor, one of which divides by zero and comes back as a
//! structured error.
//!
//! Run it from `crates/toolhost` with `cargo run --example agent_calculator`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolhost::{tool, CallOptions, ManagerConfig, ToolExecutor, ToolRegistry};

#[derive(Deserialize, JsonSchema)]
struct CalculatorArgs {
    /// The operation to perform
    operation: Operation,
    /// First operand
    a: f64,
    /// Second operand
    b: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(Serialize)]
struct CalculatorResult {
    result: f64,
}

/// Perform basic arithmetic operations
#[tool]
async fn calculator(args: CalculatorArgs) -> Result<CalculatorResult, String> {
    let result = match args.operation {
        Operation::Add => args.a + args.b,
        Operation::Subtract => args.a - args.b,
        Operation::Multiply => args.a * args.b,
        Operation::Divide if args.b == 0.0 => return Err(format!("cannot divide {} by zero", args.a)),
        Operation::Divide => args.a / args.b,
    };
    Ok(CalculatorResult { result })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    let declarations = toolhost::register_tools!(registry, calculator_tool)?;

    // The same converter the Node package uses for `registry.toOpenAITools()`.
    let tools = toolhost::providers::openai_chat_tools(&declarations, false)?;
    println!("OpenAI Chat Completions tools:\n{}\n", serde_json::to_string_pretty(&tools)?);

    let executor = ToolExecutor::new(registry, ManagerConfig::default())?;
    let calls = [
        json!({"operation": "add", "a": 2, "b": 3}),
        json!({"operation": "multiply", "a": 6, "b": 7}),
        json!({"operation": "subtract", "a": 10, "b": 4.5}),
        json!({"operation": "divide", "a": 1, "b": 0}),
    ];
    for args in calls {
        let outcome = executor.execute(calculator_tool::NAME, args.clone(), CallOptions::default()).await;
        match outcome.result() {
            Ok(result) => println!("calculator({args}) -> {result}"),
            Err(error) => println!(
                "calculator({args}) -> error {}",
                json!({"category": error.category.as_str(), "code": error.code, "message": error.message})
            ),
        }
    }
    Ok(())
}
