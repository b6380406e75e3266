//! Micro-benchmarks of the engine's hot spots: argument validation and backoff
//! computation, one whole start -> attempt_finished cycle of the state machine, and the
//! tape of 1 MB of argument text (what the binding's worker adds for large arguments).
//! Run with `cargo bench -p toolhost`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::json;
use toolhost::{
    handler_fn, parse_arguments, Backoff, CallOptions, CompiledSchema, ExecutionEngine, Jitter, ManagerConfig, Payload,
    RetryConfig, Step, ToolDeclaration, ToolError, ToolRegistry,
};

fn weather_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0},
            "q": {"type": "string", "maxLength": 200},
            "flag": {"type": "boolean"}
        },
        "required": ["n", "q"],
        "additionalProperties": false
    })
}

fn validation(c: &mut Criterion) {
    let schema = CompiledSchema::compile("echo", &weather_schema()).unwrap();
    let valid = json!({"n": 7, "q": "weather in Paris", "flag": true});
    let invalid = json!({"n": -1, "q": 7, "extra": true});
    c.bench_function("validate small valid object", |b| b.iter(|| schema.is_valid(black_box(&valid))));
    c.bench_function("validate small invalid object, all errors", |b| b.iter(|| schema.validate(black_box(&invalid))));
    let text = r#"{"n": 7, "q": "weather in Paris", "flag": true}"#;
    c.bench_function("parse small argument text", |b| b.iter(|| parse_arguments("echo", black_box(text)).unwrap()));
}

fn backoff(c: &mut Criterion) {
    let mut rng = rand::rng();
    let error = ToolError::transient("x", None);
    for jitter in [Jitter::None, Jitter::Full, Jitter::Decorrelated] {
        let config = RetryConfig { max_attempts: 100, base_delay_ms: 100.0, max_delay_ms: 30_000.0, jitter, ..RetryConfig::default() };
        let mut b = Backoff::new(config);
        c.bench_function(&format!("backoff delay ({jitter:?} jitter)"), |bench| {
            let mut n = 0u32;
            bench.iter(|| {
                n = n % 64 + 1;
                b.next_delay(black_box(n), &error, &mut rng)
            })
        });
    }
}

fn state_machine(c: &mut Criterion) {
    let registry = ToolRegistry::new();
    registry
        .register(ToolDeclaration::new("echo", "echo", weather_schema()), handler_fn(|args, _ctx| async move { Ok(args) }))
        .unwrap();
    let mut engine = ExecutionEngine::new(registry, ManagerConfig::default()).unwrap();
    let args = json!({"n": 7, "q": "weather in Paris", "flag": true});
    let result: Payload = std::sync::Arc::new(json!({"n": 7}));
    c.bench_function("engine start + attempt_finished (no listeners)", |b| {
        b.iter(|| {
            let t = engine.start("echo", Ok(args.clone()), CallOptions::default());
            let Step::Run(spec) = t.step else { panic!("expected a run") };
            let done = engine.attempt_finished(spec.key, spec.attempt_number, Ok(result.clone()));
            black_box(done.step);
        })
    });
}

/// One call through the host engine, as `execute()` makes it: start, then the handler's
/// result, with the built-in logger and metadata stamp on and off (B6's engine share).
fn host_engine(c: &mut Criterion) {
    use toolhost::host::{HostEngine, HostRegistry};
    let registry = HostRegistry::new();
    let def = json!({"name": "echo", "description": "echoes", "handler": true, "inputSchema": weather_schema()}).to_string();
    registry.register(None, &def).unwrap();
    let args = r#"{"n":7,"q":"weather in Paris","flag":true}"#;
    for (name, options) in [("plain", r#"{"historyLimit":1000}"#), ("logging + metadata", r#"{"historyLimit":1000,"logging":true,"logger":true,"metadata":true}"#), ("logging", r#"{"historyLimit":1000,"logging":true,"logger":true}"#), ("logging no args", r#"{"historyLimit":1000,"logging":true,"logger":true,"logArguments":false}"#), ("metadata", r#"{"historyLimit":1000,"metadata":true}"#)] {
        let mut host = HostEngine::new(&registry, options).unwrap();
        let key_at = toolhost::host::wire::offset(toolhost::host::wire::op::NEW, "key").unwrap();
        let mut ticket = 0.0;
        c.bench_function(&format!("host engine start + settle ({name})"), |b| {
            b.iter(|| {
                ticket += 1.0;
                host.start(ticket, "echo", black_box(args), "", "", false);
                let key = host.wire.ops[key_at] as u64;
                host.take_timers().for_each(drop);
                host.settle(key, 1, None);
                host.take_timers().for_each(drop);
                black_box(host.wire.text.len());
            })
        });
    }
}

/// About 1 MB of JSON shaped like the JS benchmark's B4 order: 5,000 line items.
fn order_text() -> String {
    let items: Vec<_> = (0..5000)
        .map(|i| {
            let currency = ["USD", "EUR", "GBP", "JPY"][i % 4];
            let mut item = json!({
                "sku": format!("ABC-{i:06}"), "name": format!("Widget model {i} (blue, large)"), "quantity": 1 + i % 50,
                "unitPrice": 9.99 + (i % 100) as f64, "currency": currency,
                "tags": ["hardware", format!("batch-{}", i % 7)], "productUrl": format!("https://shop.example.com/p/ABC-{i}"),
            });
            if i % 3 == 0 {
                item["discount"] = json!({"kind": "percent", "value": 5});
            }
            item
        })
        .collect();
    json!({"orderId": "0b7e8a5c-1f0e-4c39-9a43-0a4f5c9c2d11", "status": "paid", "items": items}).to_string()
}

fn tape(c: &mut Criterion) {
    let units: Vec<u16> = order_text().encode_utf16().collect();
    c.bench_function("tape of 1 MB of argument text", |b| b.iter(|| toolhost::tape::build(black_box(&units)).unwrap()));
}

criterion_group!(benches, validation, backoff, state_machine, host_engine, tape);
criterion_main!(benches);
