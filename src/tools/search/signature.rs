//! A tool as the Python signature a script calls it by, its description as the docstring.

use crate::tools::Tool;
use serde_json::Value;

/// Python's keywords: a tool named like one is bound with a `_` after it.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The global a tool is bound to in a script: its name where that is an identifier, else
/// with `_` for each other character (`get-expenses` is `get_expenses`), as the guest binds it.
pub(crate) fn python_name(name: &str) -> String {
    let mut ident: String = name.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    if PYTHON_KEYWORDS.contains(&ident.as_str()) {
        ident.push('_');
    }
    ident
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
    let mut signature = format!("async def {}({arguments}) -> str", python_name(&definition.name));
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
    use crate::tools::search::test_tool as tool;

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
        let dashed = python_signature(&tool("get-expenses", "", serde_json::json!({"type": "object"})));
        assert_eq!(dashed, "async def get_expenses() -> str: ...");
        assert_eq!((python_name("2fa"), python_name("class")), ("_2fa".to_owned(), "class_".to_owned()));
        let bare = Tool::new(ToolDefinition::code_callable("ping")).unwrap();
        assert_eq!(python_signature(&bare), "async def ping() -> str: ...");
    }
}
