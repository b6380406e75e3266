use schemars::JsonSchema;
use serde::Deserialize;
use toolhost::tool;

#[derive(Deserialize, JsonSchema)]
struct Args {
    city: String,
}

struct Station;

impl Station {
    /// Reports the weather
    #[tool]
    fn weather(&self, args: Args) -> String {
        args.city
    }
}

fn main() {}
