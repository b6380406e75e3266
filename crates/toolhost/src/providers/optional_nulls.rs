//! Undoing what OpenAI strict mode asks of a model.
//!
//! In strict mode every property is required and the optional ones are nullable
//! ([`super::make_strict_schema`]), so a model sends `null` for an optional property it
//! means to leave out. [`drop_optional_nulls`] removes such `null`s where the original
//! schema neither requires the property nor allows `null` for it, at every object level
//! the strict schema describes: through `properties`, `items` and `prefixItems`, local
//! `$ref`s, `allOf` members, and the `anyOf` / `oneOf` branch the value fits. A call
//! valid under the exported strict schema is then valid under the original one.

use serde_json::{Map, Value};

/// Most steps (a schema visited, a `$ref` followed, a branch tried) spent at one place
/// in the arguments: a `$ref` loop, or `allOf`s that each name the next level twice,
/// stop here instead of running away. Where the budget runs out a `null` is kept, and
/// validation decides.
const STEPS_PER_PLACE: usize = 1024;

/// Removes from `args` the `null`s that strict mode made a model send for properties
/// `schema` leaves optional and does not allow to be `null`.
pub fn drop_optional_nulls(schema: &Value, args: &mut Value) {
    Nulls { root: schema }.drop_in(&[schema], args);
}

struct Nulls<'a> {
    /// The tool's input schema, where local `$ref`s point.
    root: &'a Value,
}

impl<'a> Nulls<'a> {
    /// Drops the optional `null`s in `value`, which each of `schemas` describes.
    fn drop_in(&self, schemas: &[&'a Value], value: &mut Value) {
        let mut steps = STEPS_PER_PLACE;
        let mut facets = Vec::new();
        for schema in schemas {
            self.facets(schema, value, &mut facets, &mut steps);
        }
        match value {
            Value::Object(map) => {
                let required = |k: &str| {
                    facets.iter().any(|f| f.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|n| n == k)))
                };
                map.retain(|k, v| {
                    let optional_null = v.is_null() && !required(k) && properties_named(&facets, k).next().is_some();
                    !(optional_null && properties_named(&facets, k).all(|p| !self.allows_null(p, &mut steps)))
                });
                for (k, v) in map.iter_mut() {
                    let schemas: Vec<&Value> = properties_named(&facets, k).collect();
                    if !schemas.is_empty() {
                        self.drop_in(&schemas, v);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let schemas: Vec<&Value> = facets.iter().filter_map(|f| item_schema(f, i)).collect();
                    if !schemas.is_empty() {
                        self.drop_in(&schemas, item);
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds to `out` the schemas that apply to `value` at one place: `schema`, what its
    /// `$ref` points at, its `allOf` members, and the first `anyOf` / `oneOf` branch
    /// `value` fits (each schema once).
    fn facets(&self, schema: &'a Value, value: &Value, out: &mut Vec<&'a Value>, steps: &mut usize) {
        let Some(map) = schema.as_object() else { return };
        if !spend(steps) || out.iter().any(|f| std::ptr::eq(*f, schema)) {
            return;
        }
        out.push(schema);
        if let Some(Some(target)) = self.target(map) {
            self.facets(target, value, out, steps);
        }
        for member in map.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            self.facets(member, value, out, steps);
        }
        for key in ["anyOf", "oneOf"] {
            let mut branches = map.get(key).and_then(Value::as_array).into_iter().flatten();
            if let Some(branch) = branches.find(|b| self.fits(b, value, steps)) {
                self.facets(branch, value, out, steps);
            }
        }
    }

    /// Whether `value` looks like what `schema` describes: of its type, and for an
    /// object, keys among its `properties` (strict mode's `additionalProperties: false`)
    /// with the `const` / `enum` values they name. Enough to pick the branch of a union a
    /// strict-mode model answered with; validation later has the last word.
    fn fits(&self, schema: &Value, value: &Value, steps: &mut usize) -> bool {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(b) => return *b,
            _ => return false,
        };
        if !spend(steps) {
            return false;
        }
        match self.target(map) {
            Some(Some(target)) if !self.fits(target, value, steps) => return false,
            _ => {}
        }
        if !of_type(map.get("type"), value) || !matches_values(map, value) {
            return false;
        }
        if let (Value::Object(args), Some(Value::Object(props))) = (value, map.get("properties")) {
            let fits_prop = |(k, v): (&String, &Value)| props.get(k).is_some_and(|p| v.is_null() || matches_values_of(p, v));
            if !args.iter().all(fits_prop) {
                return false;
            }
        }
        ["anyOf", "oneOf"].iter().all(|k| {
            map.get(*k).and_then(Value::as_array).is_none_or(|bs| bs.iter().any(|b| self.fits(b, value, steps)))
        })
    }

    /// Whether `schema` lets a property be `null`. An untyped schema with `properties`
    /// is read as an object's (a model sending `null` for it meant to leave it out).
    fn allows_null(&self, schema: &Value, steps: &mut usize) -> bool {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(b) => return *b,
            _ => return true,
        };
        if !spend(steps) {
            return true; // cannot tell: keep the null, validation decides
        }
        let typed = match map.get("type") {
            None => !map.contains_key("properties"),
            Some(Value::String(t)) => t == "null",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
            Some(_) => true,
        };
        let values = map.get("const").is_none_or(Value::is_null)
            && map.get("enum").and_then(Value::as_array).is_none_or(|v| v.contains(&Value::Null));
        if !typed || !values {
            return false;
        }
        let referenced = match self.target(map) {
            None | Some(None) => true, // no `$ref`, or one this cannot follow
            Some(Some(target)) => self.allows_null(target, steps),
        };
        let branches = |k: &str| map.get(k).and_then(Value::as_array);
        referenced
            && ["anyOf", "oneOf"].iter().all(|k| branches(k).is_none_or(|bs| bs.iter().any(|b| self.allows_null(b, steps))))
            && branches("allOf").is_none_or(|bs| bs.iter().all(|b| self.allows_null(b, steps)))
    }

    /// What the `$ref` of `map` points at: `None` without one, `Some(None)` for one that
    /// is not local (`#/...`) or points at nothing.
    fn target(&self, map: &Map<String, Value>) -> Option<Option<&'a Value>> {
        let reference = map.get("$ref")?;
        let pointer = reference.as_str().and_then(|r| r.strip_prefix('#'));
        Some(pointer.and_then(|p| self.root.pointer(p)))
    }
}

/// The schemas `facets` give property `name`.
fn properties_named<'a, 's>(facets: &'s [&'a Value], name: &'s str) -> impl Iterator<Item = &'a Value> + 's {
    facets.iter().filter_map(move |f| f.get("properties")?.get(name))
}

/// Takes a step from the budget; `false` once it is spent.
fn spend(steps: &mut usize) -> bool {
    *steps = steps.saturating_sub(1);
    *steps > 0
}

/// The schema of item `i` of an array under `schema`: `prefixItems`, then `items`
/// (an array of schemas, in drafts before 2020-12, is positional too).
fn item_schema(schema: &Value, i: usize) -> Option<&Value> {
    let prefix = schema.get("prefixItems").and_then(Value::as_array);
    if let Some(s) = prefix.and_then(|p| p.get(i)) {
        return Some(s);
    }
    match schema.get("items")? {
        Value::Array(list) => list.get(i),
        items => Some(items),
    }
}

/// Whether `value` is of the JSON Schema `type` (absent: any).
fn of_type(ty: Option<&Value>, value: &Value) -> bool {
    let is = |t: &str| match (t, value) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("string", Value::String(_)) => true,
        ("array", Value::Array(_)) | ("object", Value::Object(_)) | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    };
    match ty {
        Some(Value::String(t)) => is(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(is),
        _ => true,
    }
}

/// Whether `value` is one of the values `map` names with `const` or `enum`, if it names any.
fn matches_values(map: &Map<String, Value>, value: &Value) -> bool {
    map.get("const").is_none_or(|c| c == value)
        && map.get("enum").and_then(Value::as_array).is_none_or(|values| values.contains(value))
}

fn matches_values_of(schema: &Value, value: &Value) -> bool {
    schema.as_object().is_none_or(|map| matches_values(map, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drops_nulls_strict_mode_added_and_keeps_the_rest() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"}, "note": {"type": ["string", "null"]},
                "req": {"type": "string"},
                "stops": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "nights": {"type": "integer"}}}}
            },
            "required": ["city", "req"]
        });
        let mut args = json!({"city": "Paris", "days": null, "note": null, "req": null, "stops": [{"name": "Lyon", "nights": null}]});
        drop_optional_nulls(&schema, &mut args);
        assert_eq!(args, json!({"city": "Paris", "note": null, "req": null, "stops": [{"name": "Lyon"}]}));
    }

    #[test]
    fn a_ref_loop_ends() {
        let schema = json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"x": {"$ref": "#/$defs/a"}}});
        let mut args = json!({"x": null});
        drop_optional_nulls(&schema, &mut args);
        assert_eq!(args, json!({"x": null}));
    }
}
