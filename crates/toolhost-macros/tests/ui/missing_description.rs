use schemars::JsonSchema;
use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize, JsonSchema)]
struct Args {
    city: String,
}

#[tool]
fn weather(args: Args) -> String {
    args.city
}

fn main() {}
