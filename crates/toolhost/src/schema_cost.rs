//! Schema cost: a bound, found at registration, on the work one validation can do.
//!
//! The validator applies a schema to a value by applying subschemas to parts of it.
//! A *step* is one subschema applied at one place in the value. Most schemas take a
//! few steps per place, but applicators multiply: `anyOf: [{"$ref": "#/$defs/b"},
//! {"$ref": "#/$defs/b"}]` where `b` does the same again takes 2^n steps for n levels,
//! and a value that fails every branch keeps an error for each (19 levels: about 2 s
//! and 435 MB for one call). The cost of a schema is the most steps validating any
//! value can take along one path from the value's root to a leaf, for values at most
//! [`MAX_ARGUMENT_DEPTH`] levels deep (deeper arguments are refused before validation):
//!
//! - at one place, a subschema costs 1 step plus its in-place applicators (`allOf`,
//!   `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, `$ref`...), each
//!   counted every time it is reached (a shared `$ref` target counts once per use);
//! - a value's child is reached through the descending applicators that apply to it:
//!   `items`/`prefixItems`/`contains`... for an element, `properties[k]` with
//!   `patternProperties` for a member `k`, `additionalProperties` for one no
//!   `properties` names, `propertyNames` for a key. The path takes the costliest child.
//!
//! The count is an upper bound (every `patternProperties` is taken to match), in
//! arithmetic that saturates, so finding it is linear in the schema's size per level of
//! depth, whatever the bound. Steps bound memory as well as time: the validator keeps at
//! most one error per step.
//!
//! In-place cycles (`{"anyOf": [{"$ref": "#"}]}` at one place of the value) cost one step
//! per turn: the validator does not follow them again at the same place.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::arguments::MAX_ARGUMENT_DEPTH;
use crate::error::RegistryError;

/// The default bound on a mounted tool's schema cost, in steps (see the module docs).
/// The costliest schema it lets through (8,191 steps, 11 doubling levels) took 5.3 ms
/// per failing validation here; 12 levels, refused, took 20 ms, and 19 levels 3.8 s.
pub const DEFAULT_MAX_SCHEMA_COST: u64 = 10_000;

/// What bounding a schema found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cost {
    /// At most this many steps along one path of any value.
    Steps(u64),
    /// More than the bound it was asked about (the count stopped there).
    Over,
    /// A `$ref` (its text) that could not be followed, so no bound is known.
    Unfollowed(String),
}

/// The cost of `schema`, counted up to `limit` (see the module docs).
pub fn cost(schema: &Value, limit: u64) -> Cost {
    let index = Index::of(schema);
    let graph = match Graph::build(schema, &index) {
        Ok(g) => g,
        Err(reference) => return Cost::Unfollowed(reference),
    };
    graph.steps(limit)
}

/// Whose bound a schema is held to, as a refusal names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// A mounted server's schema (the mount's `maxSchemaCost`).
    Mounted,
    /// A schema registered in a registry created with `maxSchemaCost`.
    Registry,
}

/// How many times a schema's bound one validation may take in all: the cost is per path,
/// and a value of many elements runs the path's schema once for each (1,000 elements of
/// an 11-level `anyOf` took 11 s), so the values a validation may see are bounded too
/// (see [`CompiledSchema::bound_work`](crate::schema::CompiledSchema::bound_work)).
pub const WORK_FACTOR: u64 = 16;

/// Refuses a schema over `limit` with `INVALID_SCHEMA` naming the tool, its cost and the
/// bound. `what` is `inputSchema` or `outputSchema`. Returns its cost, in steps.
///
/// # Errors
/// `INVALID_SCHEMA` when the schema's cost is over `limit` or cannot be bounded.
pub fn check(tool: &str, what: &str, schema: &Value, limit: u64, bound: Bound) -> Result<u64, RegistryError> {
    let (over, unbounded) = match bound {
        Bound::Mounted => (" (maxSchemaCost), which a mounted server's schema may not", "which a mounted server's schema may not"),
        Bound::Registry => (", over this registry's maxSchemaCost", "which this registry's maxSchemaCost does not allow"),
    };
    match cost(schema, limit) {
        Cost::Steps(steps) => Ok(steps),
        Cost::Over => Err(RegistryError::invalid_schema(
            format!("tool '{tool}': {what} could take more than {limit} validation steps for one value{over}: its applicators (anyOf, allOf, $ref...) multiply"),
            "",
        )),
        Cost::Unfollowed(r) => Err(RegistryError::invalid_schema(format!("tool '{tool}': {what} has a $ref ({r:?}) whose validation cost cannot be bounded, {unbounded}"), "")),
    }
}

/// Where each object of the document is: its resource's base URI and root, and the
/// resources and anchors `$ref` can name.
struct Index<'a> {
    /// Object address -> (base URI without fragment, the root of its resource).
    place: HashMap<*const Value, (String, &'a Value)>,
    /// Base URI -> resource root.
    resources: HashMap<String, &'a Value>,
    /// (base URI, anchor) -> schema (`$anchor`, `$dynamicAnchor`, draft 7's `$id: "#a"`).
    anchors: HashMap<(String, String), &'a Value>,
    /// `$dynamicAnchor` name -> every schema declaring it.
    dynamic: HashMap<String, Vec<&'a Value>>,
    /// Draft 7 and before: `$ref` hides the keywords beside it.
    ref_alone: bool,
}

/// Keys whose values are data, never schemas.
const DATA_KEYS: &[&str] = &["const", "enum", "default", "examples"];

impl<'a> Index<'a> {
    fn of(root: &'a Value) -> Self {
        // Before 2019-09, `$ref` makes the keywords beside it ignored, `$id` included.
        let ref_alone = root.get("$schema").and_then(Value::as_str).is_some_and(|s| s.contains("draft-0"));
        let mut index = Index { place: HashMap::new(), resources: HashMap::new(), anchors: HashMap::new(), dynamic: HashMap::new(), ref_alone };
        index.resources.insert(String::new(), root);
        // Depth first, without recursion: a schema may nest deeper than the stack.
        let mut work: Vec<(&'a Value, String, &'a Value)> = vec![(root, String::new(), root)];
        while let Some((v, base, resource)) = work.pop() {
            match v {
                Value::Object(map) => {
                    let (base, resource) = index.enter(v, map, base, resource);
                    index.place.insert(v as *const Value, (base.clone(), resource));
                    for (k, child) in map {
                        if !DATA_KEYS.contains(&k.as_str()) {
                            work.push((child, base.clone(), resource));
                        }
                    }
                }
                Value::Array(items) => work.extend(items.iter().map(|c| (c, base.clone(), resource))),
                _ => {}
            }
        }
        index
    }

    /// Notes `map`'s `$id` and anchors; returns its base URI and resource root.
    fn enter(&mut self, v: &'a Value, map: &'a Map<String, Value>, base: String, resource: &'a Value) -> (String, &'a Value) {
        let (mut base, mut resource) = (base, resource);
        let id = if self.ref_alone && map.contains_key("$ref") { None } else { map.get("$id").and_then(Value::as_str) };
        if let Some(id) = id {
            let resolved = resolve(&base, id);
            let (uri, fragment) = split(&resolved);
            // Draft 7's `$id: "#name"` is an anchor, not a new resource.
            if !id.starts_with('#') {
                base = uri.to_string();
                resource = v;
                self.resources.insert(base.clone(), v);
            }
            if !fragment.is_empty() && !fragment.starts_with('/') {
                self.anchors.insert((base.clone(), fragment.to_string()), v);
            }
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(name) = map.get(key).and_then(Value::as_str) {
                self.anchors.insert((base.clone(), name.to_string()), v);
                if key == "$dynamicAnchor" {
                    self.dynamic.entry(name.to_string()).or_default().push(v);
                }
            }
        }
        (base, resource)
    }

    /// The schemas `reference`, written in the object at `from`, stands for (several for
    /// a `$dynamicRef` whose anchor more than one resource declares).
    fn follow(&self, from: &Value, reference: &str, dynamic: bool) -> Option<Vec<&'a Value>> {
        let (base, resource) = self.place.get(&(from as *const Value))?;
        let resolved = resolve(base, reference);
        let (uri, fragment) = split(&resolved);
        let document: &'a Value = if uri.is_empty() || uri == base {
            resource
        } else {
            self.resources.get(uri).copied()?
        };
        let fragment = percent_decoded(fragment);
        if fragment.is_empty() {
            return Some(vec![document]);
        }
        if fragment.starts_with('/') {
            return pointer(document, &fragment).map(|v| vec![v]);
        }
        let mut found: Vec<&'a Value> = Vec::new();
        if dynamic {
            found.extend(self.dynamic.get(&fragment).into_iter().flatten().copied());
        }
        let key_base = if uri.is_empty() { base.clone() } else { uri.to_string() };
        if let Some(v) = self.anchors.get(&(key_base, fragment)) {
            found.push(v);
        }
        if found.is_empty() {
            None
        } else {
            Some(found)
        }
    }
}

fn split(uri: &str) -> (&str, &str) {
    uri.split_once('#').unwrap_or((uri, ""))
}

fn has_scheme(uri: &str) -> bool {
    uri.split_once(':').is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
}

/// A URI reference resolved against a base (enough of RFC 3986 for `$id` and `$ref`).
fn resolve(base: &str, reference: &str) -> String {
    if has_scheme(reference) || base.is_empty() {
        return reference.to_string();
    }
    let base = split(base).0;
    if reference.is_empty() || reference.starts_with('#') {
        return format!("{base}{reference}");
    }
    if let Some(rest) = reference.strip_prefix('/') {
        let origin_end = base.find("://").and_then(|i| base[i + 3..].find('/').map(|j| i + 3 + j)).unwrap_or(base.len());
        return format!("{}/{rest}", &base[..origin_end]);
    }
    let reference = reference.strip_prefix("./").unwrap_or(reference);
    match base.rfind('/') {
        Some(i) if i > base.find("://").map_or(0, |j| j + 2) => format!("{}/{reference}", &base[..i]),
        _ => format!("{base}/{reference}"),
    }
}

fn percent_decoded(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn pointer<'a>(mut v: &'a Value, fragment: &str) -> Option<&'a Value> {
    for part in fragment.split('/').skip(1) {
        let key = part.replace("~1", "/").replace("~0", "~");
        v = match v {
            Value::Object(m) => m.get(&key)?,
            Value::Array(a) => a.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// One subschema and where validation goes from it.
#[derive(Default)]
struct Node<'a> {
    /// Applied at the same place of the value (each use counts). Each entry is one
    /// applicator; an entry of several is one of them, not known until run time (a
    /// `$dynamicRef`), and the costliest counts.
    inplace: Vec<Vec<usize>>,
    /// Applied to each element; one entry per keyword, the costliest alternative of an
    /// entry counts (`prefixItems`: each applies to another element).
    item: Vec<Vec<usize>>,
    /// `propertyNames`.
    name: Vec<usize>,
    /// `properties`.
    named: Vec<(&'a str, usize)>,
    /// `patternProperties`: taken to apply to every member.
    every_member: Vec<usize>,
    /// `additionalProperties`, `unevaluatedProperties`: members `properties` does not name.
    other_members: Vec<usize>,
}

struct Graph<'a> {
    nodes: Vec<Node<'a>>,
    /// Node ids, each after every node it applies in place (in-place cycles cut).
    order: Vec<usize>,
    /// In-place edges that close a cycle, by (from, entry of `inplace`, alternative).
    cut: std::collections::HashSet<(usize, usize, usize)>,
}

const IN_PLACE_LISTS: &[&str] = &["allOf", "anyOf", "oneOf"];
const IN_PLACE_ONE: &[&str] = &["not", "if", "then", "else"];
const REFS: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

impl<'a> Graph<'a> {
    /// The nodes reachable from the root, or the text of a `$ref` that cannot be followed.
    fn build(root: &'a Value, index: &Index<'a>) -> Result<Self, String> {
        let mut ids: HashMap<*const Value, usize> = HashMap::new();
        let mut nodes: Vec<Node<'a>> = Vec::new();
        let mut schemas: Vec<&'a Value> = Vec::new();
        let mut id_of = |v: &'a Value, nodes: &mut Vec<Node<'a>>, schemas: &mut Vec<&'a Value>| -> usize {
            *ids.entry(v as *const Value).or_insert_with(|| {
                nodes.push(Node::default());
                schemas.push(v);
                nodes.len() - 1
            })
        };
        id_of(root, &mut nodes, &mut schemas);
        let mut next = 0;
        while next < schemas.len() {
            let at = next;
            next += 1;
            let Value::Object(map) = schemas[at] else { continue };
            let mut node = Node::default();
            let is_schema = |v: &Value| v.is_object() || v.is_boolean();
            for (key, v) in map {
                let key = key.as_str();
                if IN_PLACE_LISTS.contains(&key) {
                    for c in v.as_array().into_iter().flatten().filter(|c| is_schema(c)) {
                        node.inplace.push(vec![id_of(c, &mut nodes, &mut schemas)]);
                    }
                } else if IN_PLACE_ONE.contains(&key) && is_schema(v) {
                    node.inplace.push(vec![id_of(v, &mut nodes, &mut schemas)]);
                } else if key == "dependentSchemas" || key == "dependencies" {
                    for c in v.as_object().into_iter().flat_map(|m| m.values()).filter(|c| is_schema(c)) {
                        node.inplace.push(vec![id_of(c, &mut nodes, &mut schemas)]);
                    }
                } else if REFS.contains(&key) {
                    let Some(reference) = v.as_str() else { continue };
                    let mut targets: Vec<usize> = index
                        .follow(schemas[at], reference, key != "$ref")
                        .ok_or_else(|| reference.to_string())?
                        .into_iter()
                        .map(|t| id_of(t, &mut nodes, &mut schemas))
                        .collect();
                    if key == "$recursiveRef" {
                        // `$recursiveAnchor` may send it to the outermost resource.
                        targets.push(id_of(root, &mut nodes, &mut schemas));
                    }
                    targets.dedup();
                    node.inplace.push(targets);
                } else if matches!(key, "items" | "prefixItems") {
                    match v {
                        Value::Array(tuple) => {
                            let alternatives: Vec<usize> = tuple.iter().filter(|c| is_schema(c)).map(|c| id_of(c, &mut nodes, &mut schemas)).collect();
                            if !alternatives.is_empty() {
                                node.item.push(alternatives);
                            }
                        }
                        _ if is_schema(v) => node.item.push(vec![id_of(v, &mut nodes, &mut schemas)]),
                        _ => {}
                    }
                } else if matches!(key, "additionalItems" | "unevaluatedItems" | "contains") && is_schema(v) {
                    node.item.push(vec![id_of(v, &mut nodes, &mut schemas)]);
                } else if key == "propertyNames" && is_schema(v) {
                    node.name.push(id_of(v, &mut nodes, &mut schemas));
                } else if key == "properties" {
                    for (k, c) in v.as_object().into_iter().flatten().filter(|(_, c)| is_schema(c)) {
                        node.named.push((k.as_str(), id_of(c, &mut nodes, &mut schemas)));
                    }
                } else if key == "patternProperties" {
                    for c in v.as_object().into_iter().flat_map(|m| m.values()).filter(|c| is_schema(c)) {
                        node.every_member.push(id_of(c, &mut nodes, &mut schemas));
                    }
                } else if matches!(key, "additionalProperties" | "unevaluatedProperties") && is_schema(v) {
                    node.other_members.push(id_of(v, &mut nodes, &mut schemas));
                }
            }
            nodes[at] = node;
        }
        let (order, cut) = in_place_order(&nodes);
        Ok(Graph { nodes, order, cut })
    }

    /// Steps along the costliest path of any value, up to `limit`.
    fn steps(&self, limit: u64) -> Cost {
        let n = self.nodes.len();
        // Steps at one place, in-place applicators included.
        let mut here = vec![0u64; n];
        for &s in &self.order {
            let node = &self.nodes[s];
            let mut total = 1u64;
            for (i, alternatives) in node.inplace.iter().enumerate() {
                let costliest = alternatives.iter().enumerate().map(|(j, &c)| if self.cut.contains(&(s, i, j)) { 1 } else { here[c] }).max().unwrap_or(0);
                total = total.saturating_add(costliest);
            }
            here[s] = total;
        }
        // previous[s]: the cost of s for values one level shallower.
        let mut previous = here.clone();
        if previous[0] > limit {
            return Cost::Over;
        }
        for _depth in 1..=MAX_ARGUMENT_DEPTH {
            let mut classes: Vec<Option<Classes<'a>>> = (0..n).map(|_| None).collect();
            let mut current = vec![0u64; n];
            for &s in &self.order {
                let node = &self.nodes[s];
                let mut c = self.own(node, &previous, &here);
                for (i, alternatives) in node.inplace.iter().enumerate() {
                    let mut costliest: Option<Classes<'a>> = None;
                    for (j, &child) in alternatives.iter().enumerate() {
                        let Some(theirs) = classes[child].as_ref().filter(|_| !self.cut.contains(&(s, i, j))) else { continue };
                        match &mut costliest {
                            None => costliest = Some(theirs.clone()),
                            Some(m) => m.widen(theirs),
                        }
                    }
                    if let Some(m) = costliest {
                        c.add(&m);
                    }
                }
                current[s] = here[s].saturating_add(c.costliest());
                classes[s] = Some(c);
            }
            if current[0] > limit {
                return Cost::Over;
            }
            if current == previous {
                break;
            }
            previous = current;
        }
        Cost::Steps(previous[0])
    }

    /// What `node`'s own descending applicators cost, by kind of child.
    fn own(&self, node: &Node<'a>, previous: &[u64], here: &[u64]) -> Classes<'a> {
        let sum = |ids: &[usize]| ids.iter().fold(0u64, |t, &c| t.saturating_add(previous[c]));
        let every = sum(&node.every_member);
        let mut c = Classes {
            item: node.item.iter().fold(0u64, |t, alts| t.saturating_add(alts.iter().map(|&a| previous[a]).max().unwrap_or(0))),
            // A key is a string: no children below it.
            name: node.name.iter().fold(0u64, |t, &c| t.saturating_add(here[c])),
            other: sum(&node.other_members).saturating_add(every),
            named: BTreeMap::new(),
        };
        for &(k, id) in &node.named {
            let e = c.named.entry(k).or_insert(every);
            *e = e.saturating_add(previous[id]);
        }
        c
    }
}

/// The steps below one place of the value, by the child the path goes to.
#[derive(Clone)]
struct Classes<'a> {
    item: u64,
    name: u64,
    /// A member no `properties` of these schemas names.
    other: u64,
    named: BTreeMap<&'a str, u64>,
}

impl<'a> Classes<'a> {
    fn get(&self, k: &str) -> u64 {
        self.named.get(k).copied().unwrap_or(self.other)
    }

    /// Both sets of schemas applied at one place.
    fn add(&mut self, o: &Classes<'a>) {
        for (k, v) in self.named.iter_mut() {
            *v = v.saturating_add(o.get(k));
        }
        for (k, v) in &o.named {
            if !self.named.contains_key(k) {
                self.named.insert(k, self.other.saturating_add(*v));
            }
        }
        self.other = self.other.saturating_add(o.other);
        self.item = self.item.saturating_add(o.item);
        self.name = self.name.saturating_add(o.name);
    }

    /// At least what either costs, for each child (one of two sets applies).
    fn widen(&mut self, o: &Classes<'a>) {
        for (k, v) in self.named.iter_mut() {
            *v = (*v).max(o.get(k));
        }
        for (k, v) in &o.named {
            if !self.named.contains_key(k) {
                self.named.insert(k, self.other.max(*v));
            }
        }
        self.other = self.other.max(o.other);
        self.item = self.item.max(o.item);
        self.name = self.name.max(o.name);
    }

    fn costliest(&self) -> u64 {
        self.named.values().copied().chain([self.item, self.name, self.other]).max().unwrap_or(0)
    }
}

/// Nodes in an order where each comes after those it applies in place, and the in-place
/// edges that close a cycle (left out of that order). Without recursion.
fn in_place_order(nodes: &[Node<'_>]) -> (Vec<usize>, std::collections::HashSet<(usize, usize, usize)>) {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    let mut cut = std::collections::HashSet::new();
    for start in 0..nodes.len() {
        if state[start] != NEW {
            continue;
        }
        // (node, next in-place entry, next alternative of it)
        let mut stack = vec![(start, 0usize, 0usize)];
        state[start] = OPEN;
        while let Some(&mut (s, ref mut i, ref mut j)) = stack.last_mut() {
            if *i < nodes[s].inplace.len() {
                let (entry, alternative) = (*i, *j);
                if *j + 1 < nodes[s].inplace[entry].len() {
                    *j += 1;
                } else {
                    *i += 1;
                    *j = 0;
                }
                let Some(&c) = nodes[s].inplace[entry].get(alternative) else { continue };
                match state[c] {
                    NEW => {
                        state[c] = OPEN;
                        stack.push((c, 0, 0));
                    }
                    OPEN => {
                        cut.insert((s, entry, alternative));
                    }
                    _ => {}
                }
            } else {
                state[s] = DONE;
                order.push(s);
                stack.pop();
            }
        }
    }
    (order, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `levels` of `anyOf: [$ref next, $ref next]`, as the hostile server writes it.
    fn doubling(levels: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..levels {
            let next = format!("#/$defs/l{}", i + 1);
            defs.insert(format!("l{i}"), json!({"anyOf": [{"$ref": next}, {"$ref": next}]}));
        }
        defs.insert(format!("l{levels}"), json!({"type": "string"}));
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/l0"}}, "$defs": defs})
    }

    #[test]
    fn a_doubling_anyof_costs_two_to_the_levels() {
        // Level i costs 3 + twice level i + 1: 2^(n+2) - 1 steps with the root.
        assert_eq!(cost(&doubling(10), u64::MAX), Cost::Steps(2u64.pow(12) - 1));
        assert_eq!(cost(&doubling(11), DEFAULT_MAX_SCHEMA_COST), Cost::Steps(2u64.pow(13) - 1));
        assert_eq!(cost(&doubling(12), DEFAULT_MAX_SCHEMA_COST), Cost::Over);
        assert_eq!(cost(&doubling(19), DEFAULT_MAX_SCHEMA_COST), Cost::Over);
        // Counting saturates: 2^200 paths are counted as fast as 2^10.
        let started = std::time::Instant::now();
        assert_eq!(cost(&doubling(200), DEFAULT_MAX_SCHEMA_COST), Cost::Over);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn ordinary_schemas_cost_little() {
        let flat = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "number"}, {"type": "null"}]}}, "required": ["a"]});
        assert_eq!(cost(&flat, DEFAULT_MAX_SCHEMA_COST), Cost::Steps(4));
        // Members with different names are different paths: the costliest one counts.
        let mut props = Map::new();
        for i in 0..50 {
            let mut inner = Map::new();
            for j in 0..50 {
                inner.insert(format!("p{j}"), json!({"type": "string"}));
            }
            props.insert(format!("o{i}"), json!({"type": "object", "properties": inner}));
        }
        assert_eq!(cost(&json!({"type": "object", "properties": props}), DEFAULT_MAX_SCHEMA_COST), Cost::Steps(3));
    }

    #[test]
    fn recursive_schemas_cost_what_their_depth_allows() {
        // A tree: one more level per level of the value.
        let tree = json!({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}});
        let Cost::Steps(steps) = cost(&tree, DEFAULT_MAX_SCHEMA_COST) else { panic!() };
        assert!(steps <= 2 * MAX_ARGUMENT_DEPTH as u64 + 2, "{steps}");
        // Any JSON value: an element is in an array or an object, never both.
        let any = json!({"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}, "$defs": {"v": {"anyOf": [
            {"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/v"}}, {"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}},
        ]}}});
        let Cost::Steps(steps) = cost(&any, u64::MAX) else { panic!() };
        assert!(steps <= 5 * (MAX_ARGUMENT_DEPTH as u64 + 1), "{steps}");
        // Two recursive branches on the same child double per level.
        let double = json!({"type": "object", "properties": {"a": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}});
        assert_eq!(cost(&double, DEFAULT_MAX_SCHEMA_COST), Cost::Over);
        // An in-place cycle is one step a turn.
        assert!(matches!(cost(&json!({"type": "object", "anyOf": [{"$ref": "#"}]}), 100), Cost::Steps(s) if s <= 3));
    }

    #[test]
    fn references_by_id_anchor_and_escaped_pointer_are_followed() {
        let s = json!({
            "$id": "https://example.com/root.json",
            "type": "object",
            "properties": {
                "a": {"$ref": "item.json"},
                "b": {"$ref": "#thing"},
                "c": {"$ref": "#/$defs/a~1b%25"},
            },
            "$defs": {
                "item": {"$id": "item.json", "type": "string"},
                "thing": {"$anchor": "thing", "type": "number"},
                "a/b%": {"type": "null"},
            }
        });
        assert_eq!(cost(&s, 100), Cost::Steps(3));
        assert_eq!(cost(&json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}), 100), Cost::Unfollowed("#/$defs/missing".into()));
    }

    #[test]
    fn the_bound_applies_to_mounted_tools_only() {
        use crate::registry::{Scope, ToolRegistry};
        use crate::declaration::ToolDeclaration;
        let r = ToolRegistry::new();
        let noop = || crate::handler::handler_fn(|_args, _ctx| async { Ok(Value::Null) });
        let e = r.register_mounted_in(Scope::Global, ToolDeclaration::new("deep", "remote", doubling(19)), noop(), false, Some(DEFAULT_MAX_SCHEMA_COST)).unwrap_err();
        assert_eq!(e.code, crate::error::RegistryErrorCode::InvalidSchema);
        assert!(!r.has("deep"));
        let mut with_output = ToolDeclaration::new("out", "remote", json!({"type": "object"}));
        with_output.output_schema = Some(doubling(19));
        assert!(r.register_mounted_in(Scope::Global, with_output, noop(), false, Some(DEFAULT_MAX_SCHEMA_COST)).unwrap_err().message.contains("outputSchema could take more than"));
        // The developer's own schema is theirs to judge; no bound asked for, none applied.
        r.register_mounted_in(Scope::Global, ToolDeclaration::new("unbounded", "remote", doubling(19)), noop(), false, None).unwrap();
        r.register(ToolDeclaration::new("local", "mine", doubling(19)), noop()).unwrap();
    }

    #[test]
    fn check_names_the_tool_and_the_bound() {
        let e = check("deep", "inputSchema", &doubling(19), DEFAULT_MAX_SCHEMA_COST, Bound::Mounted).unwrap_err();
        assert!(e.message.contains("tool 'deep': inputSchema could take more than 10000 validation steps"), "{}", e.message);
        assert!(e.message.contains("which a mounted server's schema may not"), "{}", e.message);
        let own = check("deep", "inputSchema", &doubling(19), 500, Bound::Registry).unwrap_err();
        assert!(own.message.contains("more than 500 validation steps for one value, over this registry's maxSchemaCost: its applicators"), "{}", own.message);
        assert!(check("ok", "inputSchema", &doubling(5), DEFAULT_MAX_SCHEMA_COST, Bound::Mounted).is_ok());
    }

    #[test]
    fn every_schema_of_the_json_schema_test_suite_is_under_the_default_bound() {
        // The vendored suite: every schema the registry accepts, recursive and dynamic
        // references included, is followed and costs a tenth of the bound at most.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../__test__/fixtures/json-schema-test-suite");
        let mut seen = 0;
        for draft in ["draft2020-12", "draft7"] {
            let Ok(entries) = std::fs::read_dir(dir.join(draft)) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().and_then(|e| e.to_str()) != Some("json") {
                    continue;
                }
                let cases: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                for case in cases.as_array().into_iter().flatten() {
                    let schema = &case["schema"];
                    // Schemas the registry refuses (remote references) need no bound.
                    if crate::schema::CompiledSchema::compile_output("t", schema).is_err() {
                        continue;
                    }
                    seen += 1;
                    match cost(schema, DEFAULT_MAX_SCHEMA_COST) {
                        Cost::Steps(steps) => assert!(steps < 1_000, "{}: {} costs {steps}", path.display(), case["description"]),
                        other => panic!("{}: {} is {other:?}", path.display(), case["description"]),
                    }
                }
            }
        }
        assert!(seen > 500, "the suite was not found ({seen} schemas)");
    }
}
