//! Finding tools by what they do (BM25 over names, descriptions and parameter names), and
//! showing each as the Python signature a script calls it by.
//!
//! A model given a large catalog asks for the few tools it needs instead of reading every
//! schema; the signature tells it the argument names and types to write.

use super::Tool;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Tools a search returns unless asked for fewer.
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = 10;
/// The most a search returns.
pub(crate) const MAX_SEARCH_LIMIT: usize = 100;
/// Longest query taken (a few sentences; a longer one is refused before any work).
pub(crate) const MAX_QUERY_BYTES: usize = 1_000;
/// BM25's saturation and length normalisation, at their usual values.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;
/// A word of a tool's name counts this many times as one of its description.
const NAME_WEIGHT: usize = 3;

/// Lower-case words: split at anything not a letter or digit, and at camelCase humps.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            words.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    words.extend((!current.is_empty()).then_some(current));
    words
}

/// The words a tool is found by.
fn document(tool: &Tool) -> Vec<String> {
    let definition = &tool.definition;
    let mut document = Vec::new();
    for _ in 0..NAME_WEIGHT {
        document.extend(words(&definition.name));
    }
    document.extend(words(definition.description.as_deref().unwrap_or("")));
    for param in definition.params() {
        document.extend(words(&param));
    }
    document
}

/// The tools that match `query`, best first (ties by name), at most `limit`. A blank query
/// matches every tool, by name. Callers bound the query ([`MAX_QUERY_BYTES`]).
pub(crate) fn search(tools: &[Arc<Tool>], query: &str, limit: usize) -> Vec<Arc<Tool>> {
    let limit = limit.clamp(1, MAX_SEARCH_LIMIT);
    let mut query_words = words(query);
    query_words.sort();
    query_words.dedup();
    let mut sorted: Vec<Arc<Tool>> = tools.to_vec();
    sorted.sort_by(|a, b| a.name().cmp(b.name()));
    if query_words.is_empty() {
        sorted.truncate(limit);
        return sorted;
    }
    // Each document's word counts, once: scoring is then a lookup per query word.
    let documents: Vec<(usize, HashMap<String, usize>)> = sorted
        .iter()
        .map(|tool| {
            let words = document(tool);
            let mut counts = HashMap::new();
            for word in &words {
                *counts.entry(word.clone()).or_default() += 1;
            }
            (words.len(), counts)
        })
        .collect();
    let count = documents.len() as f64;
    let average_length = documents.iter().map(|(length, _)| *length).sum::<usize>() as f64 / count.max(1.0);
    let idf: HashMap<&str, f64> = query_words
        .iter()
        .map(|word| {
            let n = documents.iter().filter(|(_, counts)| counts.contains_key(word)).count() as f64;
            (word.as_str(), ((count - n + 0.5) / (n + 0.5) + 1.0).ln())
        })
        .collect();
    let mut scored: Vec<(f64, Arc<Tool>)> = sorted
        .into_iter()
        .zip(&documents)
        .map(|(tool, (length, counts))| {
            let length_factor = 1.0 - BM25_B + BM25_B * *length as f64 / average_length.max(1.0);
            let score = query_words
                .iter()
                .map(|word| {
                    let frequency = counts.get(word).copied().unwrap_or(0) as f64;
                    idf[word.as_str()] * frequency * (BM25_K1 + 1.0) / (frequency + BM25_K1 * length_factor)
                })
                .sum::<f64>();
            (score, tool)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    // Stable: equal scores keep the order by name.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(limit).map(|(_, tool)| tool).collect()
}

/// The Python type a JSON Schema type reads as.
fn python_type(schema: &Value) -> String {
    let one = |kind: &str| match kind {
        "string" => "str",
        "integer" => "int",
        "number" => "float",
        "boolean" => "bool",
        "array" => "list",
        "object" => "dict",
        "null" => "None",
        _ => "Any",
    };
    match schema.get("type") {
        Some(Value::String(kind)) => one(kind).to_owned(),
        Some(Value::Array(kinds)) => {
            let names: Vec<&str> = kinds.iter().filter_map(Value::as_str).map(one).collect();
            if names.is_empty() { "Any".to_owned() } else { names.join(" | ") }
        }
        _ if schema.get("enum").is_some() => "str".to_owned(),
        _ => "Any".to_owned(),
    }
}

/// `async def name(*, a: str, b: int | None = None) -> str` with the description as its
/// docstring: keyword arguments, required ones first, as a script can call it.
pub(crate) fn python_signature(tool: &Tool) -> String {
    let definition = &tool.definition;
    let properties = definition.input_schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = definition
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut params: Vec<(bool, String)> = properties
        .into_iter()
        .flatten()
        .map(|(name, schema)| {
            let kind = python_type(schema);
            if required.contains(&name.as_str()) {
                (false, format!("{name}: {kind}"))
            } else {
                let kind = if kind.split(" | ").any(|k| k == "None") { kind } else { format!("{kind} | None") };
                (true, format!("{name}: {kind} = None"))
            }
        })
        .collect();
    params.sort_by_key(|(optional, _)| *optional);
    let params: Vec<String> = params.into_iter().map(|(_, p)| p).collect();
    let arguments = if params.is_empty() { String::new() } else { format!("*, {}", params.join(", ")) };
    let mut signature = format!("async def {}({arguments}) -> str", definition.name);
    match definition.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        Some(description) => {
            let mut body = description.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"").replace('\n', "\n    ");
            if body.ends_with('"') {
                body.push(' '); // `""""` would end the docstring a quote early
            }
            signature.push_str(&format!(":\n    \"\"\"{body}\"\"\""));
        }
        None => signature.push_str(": ..."),
    }
    signature
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolDefinition;

    fn tool(name: &str, description: &str, schema: Value) -> Arc<Tool> {
        let mut definition = ToolDefinition::code_callable(name);
        definition.description = Some(description.into());
        definition.input_schema = schema;
        Tool::new(definition).unwrap()
    }

    #[test]
    fn words_split_at_punctuation_and_humps() {
        assert_eq!(words("time__getCurrentTime"), ["time", "get", "current", "time"]);
        assert_eq!(words("read-query, SQL!"), ["read", "query", "sql"]);
    }

    #[test]
    fn the_best_match_comes_first_and_misses_are_left_out() {
        let object = serde_json::json!({"type": "object"});
        let tools = vec![
            tool("time__convert_time", "Convert time between timezones", object.clone()),
            tool("sqlite__read_query", "Execute a SELECT query on the SQLite database", object.clone()),
            tool("memory__create_entities", "Create multiple new entities in the knowledge graph", object),
        ];
        let found = search(&tools, "run an sql query", 10);
        assert_eq!(found.iter().map(|t| t.name()).collect::<Vec<_>>(), ["sqlite__read_query"]);
        let found = search(&tools, "timezones convert", 10);
        assert_eq!(found[0].name(), "time__convert_time");
        assert!(search(&tools, "weather", 10).is_empty());
        assert_eq!(search(&tools, "  ", 2).len(), 2, "a blank query lists tools by name, up to the limit");
    }

    #[test]
    fn signatures_show_keyword_arguments_required_first() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}, "tags": {"type": ["array", "null"]}},
            "required": ["query"]
        });
        let signature = python_signature(&tool("db__find", "Find rows.\nFast.", schema));
        assert_eq!(
            signature,
            "async def db__find(*, query: str, limit: int | None = None, tags: list | None = None) -> str:\n    \"\"\"Find rows.\n    Fast.\"\"\""
        );
        let quoted = python_signature(&tool("q", r#"says "hi" in C:\"#, serde_json::json!({"type": "object"})));
        assert_eq!(
            quoted, "async def q() -> str:\n    \"\"\"says \"hi\" in C:\\\\\"\"\"",
            "a trailing backslash is escaped"
        );
        let ends_quoted = python_signature(&tool("e", r#"say "hi""#, serde_json::json!({"type": "object"})));
        assert!(ends_quoted.ends_with("say \"hi\" \"\"\""), "{ends_quoted}");
        let bare = Tool::new(ToolDefinition::code_callable("ping")).unwrap();
        assert_eq!(python_signature(&bare), "async def ping() -> str: ...");
    }
}
