//! Finding tools by what they do in a catalog too large to show a model whole: ranked search
//! over words, or a regular expression, each hit with the Python signature to call it by.
//!
//! One search serves the API (`POST /v1/tools/search`), scripts (`await
//! sluice.search_tools(...)`) and the MCP server's `search_tools`. Tools marked
//! `defer_loading` are found by a search but left out of a listing (a query of no words).

mod analysis;
mod embedding;
mod index;
mod signature;

pub use embedding::{Embedder, ModelError};
pub use index::ToolIndex;
pub(crate) use signature::{python_name, python_signature};

use super::Tool;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// Tools a search returns unless asked for more or fewer.
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = 5;
/// The most a search returns.
pub(crate) const MAX_SEARCH_LIMIT: usize = 100;
/// Longest query, in characters (a few sentences; a longer one is refused before any work).
pub(crate) const MAX_QUERY_CHARS: usize = 500;
/// Longest pattern, in characters.
pub(crate) const MAX_PATTERN_CHARS: usize = 200;
/// Compiled size a pattern may reach (`(?:a{1000}){1000}` is short but huge).
const MAX_PATTERN_PROGRAM_BYTES: usize = 1 << 20;
/// Catalogs whose indexes are kept between searches (each API key's, each busy toolset).
const CACHED_INDEXES: usize = 32;

/// The name a script's `sluice.search_tools` calls by. Not a valid tool name (it has a dot),
/// so no definition can take it; the engine answers it without a gate or an executor.
pub(crate) const SEARCH_CALL: &str = "sluice.search_tools";

/// What to look for: words (`query`) or a regular expression (`pattern`), and how many.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// What the tool should do, in natural language (at most 500 characters).
    #[serde(default)]
    pub query: Option<String>,
    /// A Python-style regular expression, case-insensitive (at most 200 characters), matched
    /// against names, descriptions and parameter names and descriptions.
    #[serde(default)]
    pub pattern: Option<String>,
    /// Tools to return, 1 to 100 (default 5).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// Why a search was not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("{0}")]
    InvalidInput(String),
}

impl SearchError {
    /// Anthropic's error code for a tool search given input it cannot take.
    pub fn code(&self) -> &'static str {
        "invalid_tool_input"
    }
}

/// A tool a search found, with how well it matched (higher is better; 0 for a listing).
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub tool: Arc<Tool>,
    pub score: f32,
}

impl SearchHit {
    /// The hit as scripts and the API show it: name, signature, description.
    pub fn describe(&self) -> Value {
        let definition = &self.tool.definition;
        json!({
            "name": definition.name,
            "signature": python_signature(&self.tool),
            "description": definition.description,
        })
    }
}

enum Matcher {
    Words(String),
    Pattern(regex::Regex),
}

impl SearchRequest {
    /// From a script's or an MCP client's arguments (unknown keys refused).
    pub fn from_arguments(arguments: &serde_json::Map<String, Value>) -> Result<Self, SearchError> {
        serde_json::from_value(Value::Object(arguments.clone()))
            .map_err(|e| SearchError::InvalidInput(format!("tool search arguments: {e}")))
    }

    fn parse(&self) -> Result<(Matcher, usize), SearchError> {
        let invalid = |message: String| Err(SearchError::InvalidInput(message));
        let limit = match self.limit {
            None => DEFAULT_SEARCH_LIMIT,
            Some(limit) if (1..=MAX_SEARCH_LIMIT as u64).contains(&limit) => limit as usize,
            Some(limit) => return invalid(format!("limit {limit} is not within 1..={MAX_SEARCH_LIMIT}")),
        };
        let matcher = match (&self.query, &self.pattern) {
            (Some(_), Some(_)) => return invalid("give a query or a pattern, not both".into()),
            (None, None) => return invalid("a query (words) or a pattern (a regular expression) is required".into()),
            (Some(query), None) if query.chars().count() > MAX_QUERY_CHARS => {
                return invalid(format!("the query is longer than {MAX_QUERY_CHARS} characters"));
            }
            (Some(query), None) => Matcher::Words(query.clone()),
            (None, Some(pattern)) if pattern.chars().count() > MAX_PATTERN_CHARS => {
                return invalid(format!("the pattern is longer than {MAX_PATTERN_CHARS} characters"));
            }
            (None, Some(pattern)) => Matcher::Pattern(compile(pattern)?),
        };
        Ok((matcher, limit))
    }
}

/// A Python-style pattern, case-insensitive. The engine runs in time linear in the text, so
/// no pattern can make a search slow; Python's lookarounds and backreferences are refused.
fn compile(pattern: &str) -> Result<regex::Regex, SearchError> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(MAX_PATTERN_PROGRAM_BYTES)
        .dfa_size_limit(MAX_PATTERN_PROGRAM_BYTES)
        .build()
        .map_err(|e| {
            let detail = match e {
                regex::Error::CompiledTooBig(_) => "it would compile to more than 1 MiB".to_owned(),
                other => other.to_string().lines().last().unwrap_or_default().trim().to_owned(),
            };
            SearchError::InvalidInput(format!(
                "the pattern {pattern:?} is not a regular expression this search takes: {detail}"
            ))
        })
}

/// Searches `tools` (a catalog: names are unique) as `request` asks.
pub fn search(tools: &[Arc<Tool>], request: &SearchRequest) -> Result<Vec<SearchHit>, SearchError> {
    let (matcher, limit) = request.parse()?;
    Ok(match matcher {
        Matcher::Words(query) => {
            cached_index(tools).rank(&query, limit).into_iter().map(|(tool, score)| SearchHit { tool, score }).collect()
        }
        Matcher::Pattern(pattern) => search_pattern(tools, &pattern, limit),
    })
}

/// Tools whose name, description or parameters match: a match in the name ranks first, then
/// the description, then the parameters; ties by name.
fn search_pattern(tools: &[Arc<Tool>], pattern: &regex::Regex, limit: usize) -> Vec<SearchHit> {
    let score = |tool: &Tool| -> f32 {
        let definition = &tool.definition;
        if pattern.is_match(&definition.name) {
            return 3.0;
        }
        if definition.description.as_deref().is_some_and(|d| pattern.is_match(d)) {
            return 2.0;
        }
        let properties = definition.input_schema.get("properties").and_then(Value::as_object);
        let in_params = properties.into_iter().flatten().any(|(name, schema)| {
            pattern.is_match(name)
                || schema.get("description").and_then(Value::as_str).is_some_and(|d| pattern.is_match(d))
        });
        if in_params { 1.0 } else { 0.0 }
    };
    let mut hits: Vec<SearchHit> = tools
        .iter()
        .filter_map(|tool| Some(score(tool)).filter(|s| *s > 0.0).map(|score| SearchHit { tool: tool.clone(), score }))
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.tool.name().cmp(b.tool.name())));
    hits.truncate(limit);
    hits
}

/// The embedding model every index of this process uses, if the operator gave one.
static MODEL: OnceLock<Arc<Embedder>> = OnceLock::new();

/// Ranks by meaning as well as by words from now on (`--search-model`); set once, at start.
pub fn use_model(model: Arc<Embedder>) {
    let _ = MODEL.set(model);
}

/// An index kept for one catalog: the same tools (the same `Arc`s) give the same index.
struct CachedIndex {
    fingerprint: (usize, u64),
    members: HashSet<usize>,
    index: Arc<ToolIndex>,
}

static INDEXES: LazyLock<Mutex<VecDeque<CachedIndex>>> = LazyLock::new(Mutex::default);
static FINGERPRINT_HASHER: LazyLock<std::collections::hash_map::RandomState> = LazyLock::new(Default::default);

/// The index of `tools`, built once while the catalog is unchanged. A catalog is the set of
/// its tools' `Arc`s (a changed definition is a new `Arc`); the index holds them, so an
/// address cannot be reused by another tool while its entry lives.
fn cached_index(tools: &[Arc<Tool>]) -> Arc<ToolIndex> {
    let pointer = |tool: &Arc<Tool>| Arc::as_ptr(tool) as usize;
    // Order-independent: a sum of each member's hash.
    let sum = tools.iter().fold(0u64, |sum, tool| sum.wrapping_add(FINGERPRINT_HASHER.hash_one(pointer(tool))));
    let fingerprint = (tools.len(), sum);
    let mut cache = INDEXES.lock().unwrap_or_else(|p| p.into_inner());
    let found = cache.iter().position(|entry| {
        entry.fingerprint == fingerprint && tools.iter().all(|t| entry.members.contains(&pointer(t)))
    });
    if let Some(at) = found {
        let entry = cache.remove(at).expect("found above");
        let index = entry.index.clone();
        cache.push_front(entry);
        return index;
    }
    drop(cache);
    let index = Arc::new(ToolIndex::with_model(tools.to_vec(), MODEL.get().cloned()));
    let members = tools.iter().map(pointer).collect();
    let mut cache = INDEXES.lock().unwrap_or_else(|p| p.into_inner());
    cache.push_front(CachedIndex { fingerprint, members, index: index.clone() });
    cache.truncate(CACHED_INDEXES);
    index
}

/// A code-callable tool for tests: name, description, input schema.
#[cfg(test)]
pub(super) fn test_tool(name: &str, description: &str, schema: Value) -> Arc<Tool> {
    let mut definition = super::ToolDefinition::code_callable(name);
    definition.description = Some(description.into());
    definition.input_schema = schema;
    Tool::new(definition).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolDefinition;

    fn catalog() -> Vec<Arc<Tool>> {
        let mut fork = ToolDefinition::code_callable("repos__create_fork");
        fork.description = Some("Create a fork of a repository".into());
        fork.input_schema =
            json!({"type": "object", "properties": {"owner": {"type": "string", "description": "The account owner"}}});
        let mut issue = ToolDefinition::code_callable("issues__create");
        issue.description = Some("Create an issue".into());
        vec![Tool::new(fork).unwrap(), Tool::new(issue).unwrap()]
    }

    fn names(hits: &[SearchHit]) -> Vec<&str> {
        hits.iter().map(|h| h.tool.name()).collect()
    }

    fn request(query: Option<&str>, pattern: Option<&str>, limit: Option<u64>) -> SearchRequest {
        SearchRequest { query: query.map(Into::into), pattern: pattern.map(Into::into), limit }
    }

    #[test]
    fn patterns_match_names_first_then_descriptions_then_parameters() {
        let tools = catalog();
        assert_eq!(
            names(&search(&tools, &request(None, Some("CREATE"), None)).unwrap()),
            ["issues__create", "repos__create_fork"]
        );
        assert_eq!(
            names(&search(&tools, &request(None, Some("repositor(y|ies)"), None)).unwrap()),
            ["repos__create_fork"]
        );
        assert_eq!(names(&search(&tools, &request(None, Some("account"), None)).unwrap()), ["repos__create_fork"]);
        assert!(search(&tools, &request(None, Some("^nothing$"), None)).unwrap().is_empty());
    }

    #[test]
    fn bad_input_is_refused_with_anthropics_code() {
        let tools = catalog();
        for bad in [
            request(None, None, None),
            request(Some("x"), Some("x"), None),
            request(Some(&"word ".repeat(101)), None, None),
            request(None, Some(&"a".repeat(201)), None),
            request(None, Some("(?<=a)b"), None),
            request(None, Some("(?:a{1000}){1000}"), None),
            request(Some("fork"), None, Some(0)),
            request(Some("fork"), None, Some(101)),
        ] {
            let error = search(&tools, &bad).unwrap_err();
            assert_eq!(error.code(), "invalid_tool_input", "{bad:?}");
        }
        let lookbehind = search(&tools, &request(None, Some("(?<=a)b"), None)).unwrap_err().to_string();
        assert!(lookbehind.contains("look-around"), "{lookbehind}");
        let unknown = SearchRequest::from_arguments(json!({"q": "x"}).as_object().unwrap()).unwrap_err();
        assert!(unknown.to_string().contains("unknown field"), "{unknown}");
    }

    #[test]
    fn a_catalog_is_indexed_once_and_a_changed_one_again() {
        let tools = catalog();
        let first = cached_index(&tools);
        let mut reversed = tools.clone();
        reversed.reverse();
        assert!(Arc::ptr_eq(&first, &cached_index(&reversed)), "the same tools in another order");
        let fewer = cached_index(&tools[..1]);
        assert_eq!(fewer.tools().len(), 1);
        let mut changed = tools.clone();
        changed[1] = Tool::new(changed[1].definition.clone()).unwrap();
        assert!(!Arc::ptr_eq(&first, &cached_index(&changed)), "an equal definition in a new Arc is another catalog");
        let hits = search(&tools, &request(Some("fork a repo"), None, Some(1))).unwrap();
        assert_eq!(names(&hits), ["repos__create_fork"]);
        assert_eq!(
            hits[0].describe()["signature"],
            "async def repos__create_fork(*, owner: str | None = None) -> str:\n    \"\"\"Create a fork of a repository\"\"\""
        );
    }
}
