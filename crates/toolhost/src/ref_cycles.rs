//! `$ref` cycles with no constraint between: `{"$ref": "#/$defs/a"}` where `a` is
//! `{"$ref": "#/$defs/a"}`. Such a schema means nothing (it is its own definition), and
//! the validator lets every value through it, so it is refused at registration.
//!
//! A schema is *only a reference* when its keywords are `$ref` and annotations (title,
//! description, `$defs`, ...), or a one-element `allOf`/`anyOf`/`oneOf` and annotations.
//! Following such schemas from reference to target, a cycle is refused; a cycle through
//! any schema with a constraint of its own (`type`, `properties`, ...) is an ordinary
//! recursive schema and is kept. References are followed when they are JSON Pointer
//! fragments (`#`, `#/...`) of the resource they appear in.

use std::collections::HashMap;

use serde_json::Value;

/// Keywords that do not constrain a value.
const ANNOTATIONS: &[&str] = &[
    "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$defs", "definitions",
    "$anchor", "$dynamicAnchor", "$id", "$schema", "$vocabulary",
];

/// The first schema of a `$ref` cycle with no constraint between, as
/// `(schema path, the cycle's schema paths)`.
pub fn find_cycle(schema: &Value) -> Option<(String, Vec<String>)> {
    // Each schema that is only a reference, by its path, and the path it stands for.
    let mut next = HashMap::new();
    let mut order = Vec::new();
    collect(schema, "", "", &mut next, &mut order);
    for start in &order {
        let mut chain: Vec<&str> = vec![start];
        let mut at = next.get(start.as_str());
        while let Some(target) = at {
            if let Some(k) = chain.iter().position(|p| *p == target.as_str()) {
                let cycle: Vec<String> = chain[k..].iter().map(|p| p.to_string()).collect();
                return Some((cycle[0].clone(), cycle));
            }
            if chain.len() > next.len() {
                break;
            }
            chain.push(target);
            at = next.get(target.as_str());
        }
    }
    None
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Walks `v` at `path` (within the resource at `resource`), noting the schemas that are
/// only a reference.
fn collect(v: &Value, path: &str, resource: &str, next: &mut HashMap<String, String>, order: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            let resource = if path.is_empty() || map.contains_key("$id") { path } else { resource };
            let constraints: Vec<&String> = map.keys().filter(|k| !ANNOTATIONS.contains(&k.as_str())).collect();
            let target = match constraints.as_slice() {
                [k] if k.as_str() == "$ref" => map[k.as_str()].as_str().and_then(|r| r.strip_prefix('#')).filter(|f| f.is_empty() || f.starts_with('/')).map(|f| format!("{resource}{f}")),
                [k] if matches!(k.as_str(), "allOf" | "anyOf" | "oneOf") => match &map[k.as_str()] {
                    Value::Array(one) if one.len() == 1 => Some(format!("{path}/{k}/0")),
                    _ => None,
                },
                _ => None,
            };
            if let Some(t) = target {
                next.insert(path.to_string(), t);
                order.push(path.to_string());
            }
            for (k, child) in map {
                if !matches!(k.as_str(), "const" | "enum" | "default" | "examples") {
                    collect(child, &format!("{path}/{}", escape(k)), resource, next, order);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect(child, &format!("{path}/{i}"), resource, next, order);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_cycles_with_nothing_between() {
        let direct = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}});
        assert_eq!(find_cycle(&direct).unwrap().0, "/$defs/a");
        let two = json!({"properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"title": "b", "$ref": "#/$defs/a"}}});
        assert_eq!(find_cycle(&two).unwrap().1, vec!["/$defs/a", "/$defs/b"]);
        let through_all_of = json!({"properties": {"a": {"allOf": [{"$ref": "#/properties/a"}]}}});
        assert_eq!(find_cycle(&through_all_of).unwrap().0, "/properties/a");
    }

    #[test]
    fn keeps_recursive_schemas_with_a_constraint_in_the_loop() {
        for s in [
            json!({"type": "object", "properties": {"a": {"$ref": "#"}}}),
            json!({"type": "object", "$ref": "#"}),
            json!({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"}),
            json!({"const": {"$ref": "#/const"}}),
        ] {
            assert_eq!(find_cycle(&s), None, "{s}");
        }
    }
}
