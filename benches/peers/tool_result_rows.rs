//! The tool result of the peers bench's workload 6, shared with the cells bench.

use crate::support::Rng;
use serde_json::{Value, json};

/// Records in the result: about 76 KB of compact JSON.
pub const TOOL_RESULT_ROWS: u64 = 1_000;

/// The rows workload 6's tool returns, the same on every run (a seeded generator).
pub fn tool_result_rows() -> String {
    let mut rng = Rng::new(6);
    let rows: Vec<Value> = (0..TOOL_RESULT_ROWS)
        .map(|id| {
            json!({"id": id, "region": *rng.pick(&["north", "south", "east", "west"]),
                   "status": *rng.pick(&["paid", "open", "void"]), "cents": rng.range(100, 100_000),
                   "customer": format!("C{:04}", rng.range(1, 400))})
        })
        .collect();
    Value::Array(rows).to_string()
}
