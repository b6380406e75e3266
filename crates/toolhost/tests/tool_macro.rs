//! `#[tool]`: the generated declarations, their validation by the registry, and the
//! generated handlers running through the executor.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolhost::{
    tool, CallOptions, ErrorCategory, ManagerConfig, RetryOverrides, Scope, ToolDeclaration, ToolError, ToolExecutor,
    ToolRegistry,
};

fn schema_of(declaration: &ToolDeclaration) -> Value {
    declaration.input_schema.clone()
}

async fn run(registry: &ToolRegistry, name: &str, args: Value) -> Result<Value, ToolError> {
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    executor.execute(name, args, CallOptions::default()).await.result().cloned().map_err(Clone::clone)
}

// ---- the mapping table ------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct Scalars {
    text: String,
    count: i32,
    big: u64,
    ratio: f64,
    small: f32,
    flag: bool,
}

/// Describes scalar arguments
/// over two lines
#[tool]
fn scalars(args: Scalars) -> String {
    format!("{} {} {} {} {} {}", args.text, args.count, args.big, args.ratio, args.small, args.flag)
}

#[test]
fn strings_integers_floats_and_bools_map_to_their_json_types() {
    let declaration = scalars_tool::declaration();
    assert_eq!(
        serde_json::to_value(&declaration).unwrap(),
        json!({
            "name": "scalars",
            "description": "Describes scalar arguments\nover two lines",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": "Scalars",
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "count": {"type": "integer", "format": "int32"},
                    "big": {"type": "integer", "format": "uint64", "minimum": 0},
                    "ratio": {"type": "number", "format": "double"},
                    "small": {"type": "number", "format": "float"},
                    "flag": {"type": "boolean"}
                },
                "required": ["text", "count", "big", "ratio", "small", "flag"]
            },
            // The String it returns has a JsonSchema, so the tool declares its output.
            "outputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "string", "type": "string"},
            "metadata": {}
        })
    );
    assert_eq!(scalars_tool::NAME, "scalars");
}

#[derive(Deserialize, JsonSchema)]
struct Collections {
    tags: Vec<String>,
    nickname: Option<String>,
    scores: HashMap<String, i64>,
}

/// Summarises collections
#[tool]
fn collections(args: Collections) -> usize {
    args.tags.len() + args.scores.len() + args.nickname.map_or(0, |_| 1)
}

#[test]
fn vecs_options_and_maps_map_to_arrays_optional_fields_and_additional_properties() {
    assert_eq!(
        schema_of(&collections_tool::declaration()),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Collections",
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "nickname": {"type": ["string", "null"]},
                "scores": {"type": "object", "additionalProperties": {"type": "integer", "format": "int64"}}
            },
            "required": ["tags", "scores"]
        })
    );
    let registry = ToolRegistry::new();
    registry.register_tool(collections_tool).unwrap();
    let valid = json!({"tags": ["a"], "scores": {"x": 1, "y": 2}});
    assert!(registry.validate(Scope::Global, "collections", &valid).unwrap().is_empty());
    let issues =
        registry.validate(Scope::Global, "collections", &json!({"tags": ["a"], "scores": {"x": "one"}})).unwrap();
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].path, "/scores/x");
    assert_eq!(issues[0].schema_path, "/properties/scores/additionalProperties/type");
}

/// A temperature unit
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    DegreesKelvin,
}

/// A point on Earth
#[derive(Deserialize, JsonSchema)]
struct Location {
    /// Latitude in degrees
    #[schemars(range(min = -90, max = 90))]
    lat: f64,
    /// IATA code of the nearest airport
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    airport: String,
}

#[derive(Deserialize, JsonSchema)]
struct Forecast {
    /// Where to forecast
    place: Location,
    unit: Unit,
    /// Stops on the way
    stops: Vec<Location>,
    /// Days ahead
    #[schemars(range(min = 1, max = 10))]
    days: u8,
}

static FORECAST_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Forecasts the weather along a route
#[tool]
async fn forecast(args: Forecast) -> Result<Value, String> {
    FORECAST_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(
        json!({"place": args.place.airport, "lat": args.place.lat, "stops": args.stops.len(), "unit": args.unit, "days": args.days}),
    )
}

fn forecast_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Forecast",
        "type": "object",
        "properties": {
            "place": {"$ref": "#/$defs/Location", "description": "Where to forecast"},
            "unit": {"$ref": "#/$defs/Unit"},
            "stops": {"type": "array", "items": {"$ref": "#/$defs/Location"}, "description": "Stops on the way"},
            "days": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 10, "description": "Days ahead"}
        },
        "required": ["place", "unit", "stops", "days"],
        "$defs": {
            "Location": {
                "description": "A point on Earth",
                "type": "object",
                "properties": {
                    "lat": {"type": "number", "format": "double", "minimum": -90, "maximum": 90, "description": "Latitude in degrees"},
                    "airport": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code of the nearest airport"}
                },
                "required": ["lat", "airport"]
            },
            "Unit": {"description": "A temperature unit", "type": "string", "enum": ["celsius", "degrees_kelvin"]}
        }
    })
}

#[test]
fn nested_structs_unit_enums_doc_comments_and_constraints_map_as_expected() {
    assert_eq!(schema_of(&forecast_tool::declaration()), forecast_schema());
}

fn good_forecast() -> Value {
    json!({
        "place": {"lat": 48.85, "airport": "CDG"},
        "unit": "degrees_kelvin",
        "stops": [{"lat": -33.9, "airport": "SYD"}],
        "days": 3
    })
}

#[test]
fn nested_defs_resolve_and_constraints_are_enforced_by_the_registry() {
    let registry = ToolRegistry::new();
    registry.register_tool(forecast_tool).unwrap();
    assert_eq!(registry.validate(Scope::Global, "forecast", &good_forecast()).unwrap(), vec![]);

    let mut bad = good_forecast();
    bad["place"]["lat"] = json!(91.5);
    bad["stops"][0]["airport"] = json!("syd");
    bad["unit"] = json!("DegreesKelvin");
    bad["days"] = json!(11);
    let issues = registry.validate(Scope::Global, "forecast", &bad).unwrap();
    let mut found: Vec<(&str, &str)> = issues.iter().map(|i| (i.path.as_str(), i.keyword.as_str())).collect();
    found.sort();
    assert_eq!(
        found,
        vec![("/days", "maximum"), ("/place/lat", "maximum"), ("/stops/0/airport", "pattern"), ("/unit", "enum")],
        "{issues:?}"
    );
    let lat = issues.iter().find(|i| i.path == "/place/lat").unwrap();
    // The failure is located in the definition the `$ref` resolved to.
    assert_eq!(lat.schema_path, "/$defs/Location/properties/lat/maximum");
}

#[tokio::test]
async fn a_range_violation_fails_validation_before_the_fn_is_called() {
    let registry = ToolRegistry::new();
    registry.register_tool(forecast_tool).unwrap();
    let before = FORECAST_CALLS.load(Ordering::SeqCst);

    let mut bad = good_forecast();
    bad["days"] = json!(0);
    let e = run(&registry, "forecast", bad).await.unwrap_err();
    assert_eq!(e.category, ErrorCategory::Validation);
    assert_eq!(e.code, "INVALID_ARGUMENTS");
    assert_eq!(e.validation_errors.len(), 1, "{e:?}");
    assert_eq!(e.validation_errors[0].path, "/days");
    assert_eq!(e.validation_errors[0].keyword, "minimum");
    assert_eq!(FORECAST_CALLS.load(Ordering::SeqCst), before, "the fn must not run on invalid arguments");

    let ok = run(&registry, "forecast", good_forecast()).await.unwrap();
    assert_eq!(ok, json!({"place": "CDG", "lat": 48.85, "stops": 1, "unit": "degrees_kelvin", "days": 3}));
    assert_eq!(FORECAST_CALLS.load(Ordering::SeqCst), before + 1);
}

// ---- handlers through the executor --------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(Serialize)]
struct Quotient {
    result: f64,
}

/// Divides a by b
#[tool]
fn divide(args: Pair) -> Result<Quotient, String> {
    if args.b == 0.0 {
        return Err(format!("cannot divide {} by zero", args.a));
    }
    Ok(Quotient { result: args.a / args.b })
}

/// Multiplies a by b, after a pause
#[tool(name = "multiply-slowly")]
async fn multiply(args: Pair) -> f64 {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    args.a * args.b
}

#[tokio::test]
async fn sync_and_async_tools_run_through_the_executor() {
    let registry = ToolRegistry::new();
    toolhost::register_tools!(registry, divide_tool, multiply_tool).unwrap();
    assert_eq!(run(&registry, "divide", json!({"a": 9, "b": 2})).await.unwrap(), json!({"result": 4.5}));
    assert_eq!(run(&registry, "multiply-slowly", json!({"a": 3, "b": 4})).await.unwrap(), json!(12.0));

    let e = run(&registry, "divide", json!({"a": 1, "b": 0})).await.unwrap_err();
    assert_eq!(e.category, ErrorCategory::Execution);
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert_eq!(e.message, "cannot divide 1 by zero");
}

#[tokio::test]
async fn arguments_serde_refuses_are_validation_errors_even_without_schema_validation() {
    let registry = ToolRegistry::new();
    registry.register_tool(divide_tool).unwrap();
    let config = ManagerConfig { validation: false, ..ManagerConfig::default() };
    let executor = ToolExecutor::new(registry, config).unwrap();
    let outcome = executor.execute("divide", json!({"a": "one", "b": 2}), CallOptions::default()).await;
    let e = outcome.result().unwrap_err();
    assert_eq!(e.category, ErrorCategory::Validation);
    assert_eq!(e.code, "INVALID_ARGUMENTS");
    assert!(e.message.starts_with("invalid arguments for tool 'divide': /a: invalid type"), "{}", e.message);
}

#[tokio::test]
async fn what_the_schema_lets_by_and_serde_refuses_is_named_by_its_place() {
    // `1.0` is a JSON Schema integer, and `int32` is not enforced: an i32 field's serde
    // refused it with a message that named no field.
    let registry = ToolRegistry::new();
    registry.register_tool(scalars_tool).unwrap();
    let args = json!({"text": "t", "count": 1.5e10, "big": 1, "ratio": 1.0, "small": 1.0, "flag": true});
    let e = run(&registry, "scalars", args).await.unwrap_err();
    assert_eq!(e.code, "INVALID_ARGUMENTS");
    assert!(e.message.starts_with("invalid arguments for tool 'scalars': /count: "), "{}", e.message);
}

static FLAKY_CALLS: AtomicUsize = AtomicUsize::new(0);

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// Fails twice with a transient error, then succeeds
#[tool]
async fn flaky(_args: Nothing) -> Result<&'static str, ToolError> {
    let attempt = toolhost::current_context().expect("inside a tool call").attempt_number;
    FLAKY_CALLS.fetch_add(1, Ordering::SeqCst);
    if attempt < 3 {
        return Err(ToolError::transient(format!("attempt {attempt} failed"), None));
    }
    Ok("third time lucky")
}

#[tokio::test(start_paused = true)]
async fn a_returned_tool_error_keeps_its_category_so_the_engine_retries_it() {
    let registry = ToolRegistry::new();
    registry.register_tool(flaky_tool).unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig::default()).unwrap();
    let options = CallOptions {
        retry: Some(RetryOverrides { max_attempts: Some(3), ..Default::default() }),
        ..Default::default()
    };
    let outcome = executor.execute("flaky", json!({}), options).await;
    assert_eq!(outcome.result().unwrap(), &json!("third time lucky"));
    assert_eq!(FLAKY_CALLS.load(Ordering::SeqCst), 3);
    let previous: Vec<_> = outcome.record.previous_errors.iter().map(|e| (e.category, e.message.as_str())).collect();
    assert_eq!(
        previous,
        vec![(ErrorCategory::Transient, "attempt 1 failed"), (ErrorCategory::Transient, "attempt 2 failed")]
    );
}

/// Fails once with a transient error behind anyhow's `?`, then succeeds
#[tool]
async fn flaky_anyhow(_args: Nothing) -> anyhow::Result<&'static str> {
    if toolhost::current_context().expect("inside a tool call").attempt_number < 2 {
        Err(ToolError::transient("busy", None))?;
    }
    Ok("second time")
}

/// Fails once with a transient error in a boxed error, then succeeds
#[tool]
fn flaky_boxed(_args: Nothing) -> Result<&'static str, Box<dyn std::error::Error + Send + Sync>> {
    if toolhost::current_context().expect("inside a tool call").attempt_number < 2 {
        return Err(Box::new(ToolError::transient("busy", None)));
    }
    Ok("second time")
}

#[tokio::test(start_paused = true)]
async fn a_tool_error_inside_anyhow_or_a_box_keeps_its_category() {
    // Only a bare ToolError was found: behind anyhow's `?` a transient failure became an
    // execution error, never retried.
    let registry = ToolRegistry::new();
    toolhost::register_tools!(registry, flaky_anyhow_tool, flaky_boxed_tool).unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig::default()).unwrap();
    for name in ["flaky_anyhow", "flaky_boxed"] {
        let outcome = executor.execute(name, json!({}), CallOptions::default()).await;
        assert_eq!(outcome.result().unwrap(), &json!("second time"), "{name}");
        assert_eq!(outcome.record.previous_errors[0].category, ErrorCategory::Transient, "{name}");
    }
}

/// Fails with a transient error that anyhow's `context` explains
#[tool]
async fn looks_up_order(_args: Nothing) -> anyhow::Result<&'static str> {
    use anyhow::Context;
    Err(ToolError::transient("connection reset", None)).context("looking up order 42")?
}

#[tokio::test(start_paused = true)]
async fn a_tool_error_behind_anyhow_context_keeps_the_context_in_its_message() {
    // The ToolError inside was taken whole: its category was kept, and every context
    // anyhow added was lost from the message the record and the model read.
    let registry = ToolRegistry::new();
    registry.register_tool(looks_up_order_tool).unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig::default()).unwrap();
    let options = CallOptions { retry: Some(RetryOverrides { max_attempts: Some(1), ..Default::default() }), ..Default::default() };
    let outcome = executor.execute("looks_up_order", json!({}), options).await;
    let error = outcome.record.error.as_ref().expect("it failed");
    assert_eq!(error.category, ErrorCategory::Transient);
    assert_eq!(error.message, "looking up order 42: connection reset");
}

/// Does nothing, and says so with `null`
#[tool]
fn noop(_args: Nothing) {}

#[tokio::test]
async fn a_fn_without_a_return_type_returns_null() {
    let registry = ToolRegistry::new();
    registry.register_tool(noop_tool).unwrap();
    assert_eq!(run(&registry, "noop", json!({})).await.unwrap(), Value::Null);
}

static SAW_TOKEN: AtomicBool = AtomicBool::new(false);
static TOKEN_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Waits forever, watching its cancellation token from a spawned task
#[tool]
async fn wait_forever(_args: Nothing) {
    let token = toolhost::current_cancellation().expect("inside a tool call");
    SAW_TOKEN.store(!token.is_cancelled(), Ordering::SeqCst);
    tokio::spawn(async move {
        token.cancelled().await;
        TOKEN_CANCELLED.store(true, Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
}

#[tokio::test(start_paused = true)]
async fn the_attempt_cancellation_token_reaches_the_tool_and_fires_on_timeout() {
    assert!(toolhost::current_cancellation().is_none(), "no token outside a tool call");
    let registry = ToolRegistry::new();
    registry.register_tool(wait_forever_tool).unwrap();
    let executor = ToolExecutor::new(registry, ManagerConfig::default()).unwrap();
    let options = CallOptions {
        timeout_ms: Some(50.0),
        retry: Some(RetryOverrides { max_attempts: Some(1), ..Default::default() }),
        ..Default::default()
    };
    let outcome = executor.execute("wait_forever", json!({}), options).await;
    assert_eq!(outcome.result().unwrap_err().category, ErrorCategory::Timeout);
    assert!(SAW_TOKEN.load(Ordering::SeqCst), "the tool got a live token");
    tokio::task::yield_now().await;
    assert!(TOKEN_CANCELLED.load(Ordering::SeqCst), "the timeout cancelled the tool's token");
}

// ---- attributes and registration ----------------------------------------------------

/// This doc comment loses to the attribute
#[tool(
    name = "add_numbers",
    description = "Adds a and b",
    example = r#"{"a": 1, "b": 2}"#,
    example = r#"{"a": -1.5, "b": 0}"#
)]
fn add(args: Pair) -> f64 {
    args.a + args.b
}

#[test]
fn attributes_override_name_and_description_and_store_examples() {
    let declaration = add_tool::declaration();
    assert_eq!(add_tool::NAME, "add_numbers");
    assert_eq!(declaration.name, "add_numbers");
    assert_eq!(declaration.description, "Adds a and b");
    assert_eq!(
        serde_json::to_value(&declaration.metadata).unwrap(),
        json!({"examples": [{"a": 1, "b": 2}, {"a": -1.5, "b": 0}]})
    );
    // The fn itself is kept as written.
    assert_eq!(add(Pair { a: 1.0, b: 2.0 }), 3.0);
    assert_eq!(add_tool::definition().name(), "add_numbers");
}

#[test]
fn register_tool_and_register_tools_return_the_declarations() {
    let registry = ToolRegistry::new();
    let single = registry.register_tool(add_tool).unwrap();
    assert_eq!(single, add_tool::declaration());
    let many = toolhost::register_tools!(registry, divide_tool, forecast_tool,).unwrap();
    assert_eq!(many.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["divide", "forecast"]);
    assert_eq!(registry.names(), ["add_numbers", "divide", "forecast"]);
}

#[test]
fn register_tools_is_all_or_none() {
    let registry = ToolRegistry::new();
    registry.register_tool(divide_tool).unwrap();
    let e = toolhost::register_tools!(registry, add_tool, scalars_tool, divide_tool).unwrap_err();
    assert_eq!(e.code(), "DUPLICATE_TOOL");
    assert_eq!(registry.names(), ["divide"], "the tools registered before the refusal were removed again");
}

#[tokio::test]
async fn the_explicit_register_async_form_still_works_beside_generated_tools() {
    let registry = ToolRegistry::new();
    registry.register_tool(divide_tool).unwrap();
    let declaration = ToolDeclaration::new(
        "negate",
        "Negates a number",
        json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}),
    );
    registry
        .register_async(declaration, |args: Value, _ctx| async move {
            let x = args["x"].as_f64().ok_or_else(|| ToolError::execution("x is not a number"))?;
            Ok(json!(-x))
        })
        .unwrap();
    assert_eq!(run(&registry, "negate", json!({"x": 2})).await.unwrap(), json!(-2.0));
    assert_eq!(run(&registry, "divide", json!({"a": 1, "b": 4})).await.unwrap(), json!({"result": 0.25}));
    assert_eq!(run(&registry, "negate", json!({"x": "2"})).await.unwrap_err().category, ErrorCategory::Validation);
}

// ---- output schemas ---------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

#[derive(Serialize, JsonSchema)]
struct Weather {
    temp_c: f64,
}

/// The weather, typed
#[tool]
fn typed_weather(args: City) -> Result<Weather, String> {
    if args.city.is_empty() {
        return Err("no city".into());
    }
    Ok(Weather { temp_c: 21.0 })
}

#[derive(Serialize)]
struct Untyped {
    n: u32,
}

/// A result without a JsonSchema
#[tool]
fn untyped(_args: City) -> Untyped {
    Untyped { n: 1 }
}

/// Returns nothing
#[tool]
fn nothing(_args: City) {}

#[tokio::test]
async fn the_output_schema_comes_from_the_result_type_when_it_has_a_json_schema() {
    let schema = typed_weather_tool::declaration().output_schema.expect("Weather implements JsonSchema");
    assert_eq!(schema["title"], "Weather");
    assert_eq!(schema["properties"]["temp_c"]["type"], "number");
    assert_eq!(schema["required"], json!(["temp_c"]));
    assert_eq!(untyped_tool::declaration().output_schema, None, "no JsonSchema, no output schema");
    assert_eq!(nothing_tool::declaration().output_schema, None, "() has none");
    // The registry compiles it and the executor checks results against it.
    let registry = ToolRegistry::new();
    registry.register_tool(typed_weather_tool).unwrap();
    assert_eq!(run(&registry, "typed_weather", json!({"city": "Paris"})).await.unwrap(), json!({"temp_c": 21.0}));
    assert_eq!(registry.get("typed_weather").unwrap().output_schema.unwrap()["title"], "Weather");
}

#[derive(Serialize, JsonSchema)]
struct Search {
    hits: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    #[serde(rename(serialize = "nextPage", deserialize = "next_page"))]
    next_page: Option<u32>,
}

/// Searches, leaving out the warnings when there are none
#[tool]
fn search(args: City) -> Search {
    Search { hits: args.city.len() as u32, warnings: Vec::new(), next_page: None }
}

#[tokio::test]
async fn the_output_schema_describes_the_result_as_serde_serializes_it() {
    // The schema of how `Search` deserializes required `warnings` (no `serde(default)`)
    // and named `next_page`: every result without warnings failed INVALID_OUTPUT.
    let schema = search_tool::declaration().output_schema.unwrap();
    assert_eq!(schema["required"], json!(["hits", "nextPage"]), "{schema}");
    let registry = ToolRegistry::new();
    registry.register_tool(search_tool).unwrap();
    assert_eq!(run(&registry, "search", json!({"city": "Oslo"})).await.unwrap(), json!({"hits": 4, "nextPage": null}));
}
