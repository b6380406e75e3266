use schemars::JsonSchema;
use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize, JsonSchema)]
struct Args {
    city: String,
}

/// Reports the weather
#[tool]
fn weather(args: Args, days: u32, verbose: bool) -> String {
    format!("{} {days} {verbose}", args.city)
}

fn main() {}
