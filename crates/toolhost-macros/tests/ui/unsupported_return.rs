use schemars::JsonSchema;
use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize, JsonSchema)]
struct Args {
    city: String,
}

/// Reports the weather
#[tool]
fn weather(args: Args) -> impl std::fmt::Display {
    args.city
}

fn main() {}
