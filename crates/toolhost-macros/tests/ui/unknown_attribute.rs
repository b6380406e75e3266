use schemars::JsonSchema;
use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize, JsonSchema)]
struct Args {
    city: String,
}

/// Reports the weather
#[tool(name = "weather", descripton = "Reports the weather")]
fn weather(args: Args) -> String {
    args.city
}

fn main() {}
