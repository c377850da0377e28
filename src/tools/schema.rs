//! Tool arguments against `input_schema`: safe coercion, validation, and the `$ref` check
//! done at registration.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Largest compiled size of one `pattern` of a schema (and of its matching cache).
const MAX_PATTERN_BYTES: usize = 1 << 20;
/// Deepest schema the `$ref` walk follows before calling it hostile.
const MAX_SCHEMA_DEPTH: usize = 64;

/// A compiled `input_schema`.
#[derive(Debug)]
pub(crate) struct InputSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

/// Why arguments were refused: the JSON pointer of the bad field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InputError {
    pub pointer: String,
    pub message: String,
}

impl InputSchema {
    /// Compiles a schema, refusing remote or circular `$ref`s.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        check_refs(schema)?;
        // Patterns run on every call's arguments, on the host: the linear-time engine, with
        // bounded compiled sizes, so no schema makes validation backtrack for seconds.
        let patterns =
            jsonschema::PatternOptions::regex().size_limit(MAX_PATTERN_BYTES).dfa_size_limit(MAX_PATTERN_BYTES);
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .with_pattern_options(patterns)
            .build(schema)
            .map_err(|e| format!("input_schema is not a valid JSON Schema: {e}"))?;
        Ok(Self { schema: schema.clone(), validator })
    }

    /// Coerces what is safe to coerce, then validates; returns whether anything was coerced.
    pub(crate) fn check(&self, input: &mut Map<String, Value>) -> Result<bool, InputError> {
        let mut value = Value::Object(std::mem::take(input));
        let coerced = coerce(&self.schema, &mut value, 0);
        let result = match self.validator.iter_errors(&value).next() {
            None => Ok(coerced),
            Some(error) => Err(InputError { pointer: error.instance_path().to_string(), message: error.to_string() }),
        };
        if let Value::Object(map) = value {
            *input = map;
        }
        result
    }
}

/// Applies the coercions a model's arguments commonly need, where the schema is explicit:
/// `"42"` to 42 for integer, `"2.5"` to 2.5 for number, `"true"` to true for boolean, a
/// number to its text for string. Returns whether anything changed.
pub(crate) fn coerce(schema: &Value, value: &mut Value, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return false;
    }
    let Some(schema) = schema.as_object() else { return false };
    let wanted = schema.get("type").and_then(Value::as_str);
    let replacement = match (wanted, &*value) {
        (Some("integer"), Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
        (Some("number"), Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        (Some("boolean"), Value::String(s)) => match s.trim() {
            "true" | "True" => Some(Value::Bool(true)),
            "false" | "False" => Some(Value::Bool(false)),
            _ => None,
        },
        (Some("string"), Value::Number(n)) => Some(Value::String(n.to_string())),
        _ => None,
    };
    if let Some(new) = replacement {
        *value = new;
        return true;
    }
    let mut changed = false;
    match value {
        Value::Object(fields) => {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (name, sub) in properties {
                    if let Some(field) = fields.get_mut(name) {
                        changed |= coerce(sub, field, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    changed |= coerce(item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
    changed
}

/// Only local `$ref`s (`#/$defs/..`, `#/definitions/..`), and no cycles among them.
fn check_refs(schema: &Value) -> Result<(), String> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    collect_refs(schema, "#", &mut graph, 0)?;
    for (name, target) in definitions(schema) {
        collect_refs(target, &name, &mut graph, 0)?;
    }
    for target in graph.values().flatten() {
        if target != "#" && !definitions(schema).any(|(name, _)| &name == target) {
            return Err(format!("input_schema refers to {target}, which it does not define"));
        }
    }
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = find_cycle(start, &graph, &mut path, &mut done) {
            return Err(format!("input_schema has a circular $ref: {}", cycle.join(" -> ")));
        }
    }
    Ok(())
}

fn definitions(schema: &Value) -> impl Iterator<Item = (String, &Value)> {
    ["$defs", "definitions"].into_iter().flat_map(move |key| {
        schema
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(move |defs| defs.iter().map(move |(name, v)| (format!("#/{key}/{name}"), v)))
    })
}

/// Records, for the schema node `node`, every `$ref` below it (definitions are nodes of
/// their own, so the walk does not enter them).
fn collect_refs(
    value: &Value,
    node: &str,
    graph: &mut BTreeMap<String, BTreeSet<String>>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!("input_schema is nested deeper than {MAX_SCHEMA_DEPTH} levels"));
    }
    graph.entry(node.to_owned()).or_default();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "$ref" {
                    let Some(target) = child.as_str() else { return Err("$ref must be a string".into()) };
                    if !target.starts_with('#') {
                        return Err(format!("input_schema may only use local $refs, not {target}"));
                    }
                    graph.entry(node.to_owned()).or_default().insert(target.to_owned());
                } else if depth == 0 && (key == "$defs" || key == "definitions") {
                    continue;
                } else {
                    collect_refs(child, node, graph, depth + 1)?;
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_refs(item, node, graph, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn find_cycle(
    node: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| n == node) {
        let mut cycle = path[at..].to_vec();
        cycle.push(node.to_owned());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.to_owned());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = find_cycle(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(node.to_owned());
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> InputSchema {
        InputSchema::compile(&json!({
            "type": "object",
            "properties": {
                "employee_id": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
                "ratio": {"type": "number"},
                "strict": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["employee_id"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn safe_coercions_are_applied_and_reported() {
        let mut input =
            args(json!({"employee_id": 42, "limit": "10", "ratio": "0.5", "strict": "true", "tags": ["1", 2]}));
        assert!(schema().check(&mut input).unwrap());
        assert_eq!(
            Value::Object(input),
            json!({"employee_id": "42", "limit": 10, "ratio": 0.5, "strict": true, "tags": [1, 2]})
        );
        let mut clean = args(json!({"employee_id": "E1"}));
        assert!(!schema().check(&mut clean).unwrap());
    }

    #[test]
    fn refusals_name_the_bad_field() {
        let mut bad = args(json!({"employee_id": "E1", "limit": "many"}));
        assert_eq!(schema().check(&mut bad).unwrap_err().pointer, "/limit");
        let mut nested = args(json!({"employee_id": "E1", "tags": [1, "x"]}));
        assert_eq!(schema().check(&mut nested).unwrap_err().pointer, "/tags/1");
        let mut missing = args(json!({}));
        assert_eq!(schema().check(&mut missing).unwrap_err().pointer, "");
        let mut extra = args(json!({"employee_id": "E1", "other": 1}));
        assert!(schema().check(&mut extra).is_err());
    }

    #[test]
    fn circular_and_remote_refs_are_rejected() {
        let circular = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(InputSchema::compile(&circular).unwrap_err().contains("circular"));
        let self_ref = json!({"type": "object", "properties": {"child": {"$ref": "#"}}});
        assert!(InputSchema::compile(&self_ref).unwrap_err().contains("circular"));
        let remote = json!({"$ref": "https://example.com/schema.json"});
        assert!(InputSchema::compile(&remote).unwrap_err().contains("local"));
        let dangling = json!({"$ref": "#/$defs/missing"});
        assert!(InputSchema::compile(&dangling).is_err());
        let fine =
            json!({"$defs": {"id": {"type": "string"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/id"}}});
        assert!(InputSchema::compile(&fine).is_ok());
    }
}
