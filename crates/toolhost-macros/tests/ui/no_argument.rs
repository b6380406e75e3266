use toolhost::tool;

/// Reports the weather
#[tool]
fn weather() -> String {
    "sunny".into()
}

fn main() {}
