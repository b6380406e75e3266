use schemars::JsonSchema;
use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize, JsonSchema)]
struct Args {
    city: String,
}

/// Reports the weather
#[tool]
fn weather<T: Into<String>>(args: Args) -> String {
    args.city
}

fn main() {}
