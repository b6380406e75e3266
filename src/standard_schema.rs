//! `inputSchema` as a Standard Schema (zod v4, valibot, ArkType ...): turned into JSON
//! Schema once, at registration. Validation still runs in Rust on the JSON Schema.
//!
//! Tried in order: the Standard JSON Schema interface
//! (`schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' })`), then the
//! schema's own `toJSONSchema()` method. Anything else that carries `~standard` is
//! refused with `INVALID_SCHEMA`, since it cannot be validated in Rust.

use serde_json::Value;
use toolhost::RegistryError;

use crate::js::{self, RawEnv, RawValue};
use crate::json::to_json;

pub fn to_json_schema(env: RawEnv, tool: &str, schema: RawValue) -> Result<Value, RegistryError> {
    let Some(standard) = js::get_opt(env, schema, c"~standard") else {
        return to_json(env, schema)
            .map_err(|e| RegistryError::invalid_schema(format!("tool '{tool}': inputSchema is not JSON: {e}"), e.path.clone()));
    };
    let failed = |how: &str| RegistryError::invalid_schema(format!("tool '{tool}': {how}"), "");
    let produced = if let Some(input) = js::get_opt(env, standard, c"jsonSchema").and_then(|j| {
        let f = js::get(env, j, c"input");
        js::is_function(env, f).then_some((j, f))
    }) {
        let options = js::object(env);
        js::set(env, options, c"target", js::string(env, "draft-2020-12"));
        js::call(env, input.0, input.1, &[options]).map_err(|_| failed("the Standard Schema's jsonSchema.input() threw"))?
    } else {
        let f = js::get(env, schema, c"toJSONSchema");
        if !js::is_function(env, f) {
            let vendor = js::get_string_prop(env, standard, c"vendor").unwrap_or_default();
            return Err(failed(&format!(
                "this Standard Schema ({vendor}) offers no JSON Schema output (~standard.jsonSchema or toJSONSchema()); pass a JSON Schema instead"
            )));
        }
        js::call(env, schema, f, &[]).map_err(|_| failed("the schema's toJSONSchema() threw"))?
    };
    let mut value = to_json(env, produced).map_err(|e| failed(&format!("the produced JSON Schema is not JSON: {e}")))?;
    if let Value::Object(map) = &mut value {
        // Converters stamp their own draft URI; the engine selects drafts itself.
        if map.get("$schema").and_then(Value::as_str).is_some_and(|s| s.contains("2020-12")) {
            map.remove("$schema");
        }
    }
    Ok(value)
}
