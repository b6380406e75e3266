use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize)]
struct Untyped {
    city: String,
}

/// Reports the weather
#[tool]
fn weather(args: Untyped) -> String {
    args.city
}

fn main() {}
