//! Bounds on JSON values that cross a trust boundary (guest arguments, client definitions).
//!
//! serde_json refuses input nested deeper than 128 levels. A value accepted at 127 levels and
//! then stored inside an event (three or four levels deeper) could never be read back, so
//! every value Sluice keeps is held to [`MAX_DEPTH`], well inside the parser's limit.

use serde_json::Value;

/// Deepest nesting accepted in a value the service stores (arguments, schemas, examples).
pub(crate) const MAX_DEPTH: usize = 64;

/// How deep a value nests (a scalar is 1) and how many values it holds, counted without
/// recursion so that no input can exhaust the host's stack.
pub(crate) fn shape(value: &Value) -> Shape {
    let mut shape = Shape { depth: 0, values: 0 };
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        shape.values += 1;
        shape.depth = shape.depth.max(depth);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    shape
}

/// The depth and size of a value, as [`shape`] measures them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub depth: usize,
    pub values: usize,
}

/// Refuses a value nested deeper than [`MAX_DEPTH`]; `what` names it in the message.
pub(crate) fn check_depth(what: &str, value: &Value) -> Result<(), String> {
    let depth = shape(value).depth;
    if depth > MAX_DEPTH {
        return Err(format!("{what} nests {depth} levels deep, more than {MAX_DEPTH}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Value {
        let text = format!("{}1{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn shape_counts_depth_and_values() {
        assert_eq!(shape(&serde_json::json!(1)), Shape { depth: 1, values: 1 });
        assert_eq!(shape(&serde_json::json!({"a": [1, 2], "b": {}})), Shape { depth: 3, values: 5 });
        assert_eq!(shape(&nested(100)).depth, 100);
    }

    #[test]
    fn values_deeper_than_the_limit_are_refused_and_the_rest_read_back_inside_events() {
        assert!(check_depth("x", &nested(MAX_DEPTH)).is_ok());
        assert!(check_depth("x", &nested(MAX_DEPTH + 1)).unwrap_err().contains("nests 65 levels"));
        // What is accepted survives being wrapped the way events wrap it, and read back.
        let wrapped = serde_json::json!({"event": {"call": {"input": {"v": nested(MAX_DEPTH)}}}});
        let text = serde_json::to_string(&wrapped).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), wrapped);
    }
}
