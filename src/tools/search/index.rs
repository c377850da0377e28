//! A catalog of tools indexed for ranked search: BM25F over each tool's name, the first line
//! of its description, the rest of it, and its parameters' names and descriptions, with a
//! bonus for tools that match more of the query's distinct words.
//!
//! Built once per catalog (see `cached_index`): a query is then a walk over the postings of
//! its terms, with each posting's weight computed at build time.

use super::analysis::{Concept, clauses, query_concepts, terms, words};
use super::embedding::Embedder;
use crate::tools::Tool;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;

/// The parts of a tool a query is matched against, with how much a match in each counts
/// (`weight`) and how much a long field is discounted (`length_norm`, BM25's `b`).
#[derive(Debug, Clone, Copy)]
struct Field {
    weight: f32,
    length_norm: f32,
}

const NAME: Field = Field { weight: 3.0, length_norm: 0.3 };
/// The description's first line: what the tool does, in the author's words.
const SUMMARY: Field = Field { weight: 3.0, length_norm: 0.5 };
const DESCRIPTION: Field = Field { weight: 0.5, length_norm: 0.75 };
const PARAM_NAMES: Field = Field { weight: 1.5, length_norm: 0.5 };
const PARAM_DESCRIPTIONS: Field = Field { weight: 0.2, length_norm: 0.75 };
const FIELDS: [Field; 5] = [NAME, SUMMARY, DESCRIPTION, PARAM_NAMES, PARAM_DESCRIPTIONS];

/// How much matching all of a query's words beats matching one of them strongly: the score
/// is multiplied by `(matched / words) ^ COVERAGE_EXPONENT`.
const COVERAGE_EXPONENT: f32 = 0.5;

/// Reciprocal rank fusion's damping: small, so each clause's first tool ranks near the top.
const FUSION_K: f32 = 1.0;
/// How deep each ranking goes before fusion.
const FUSION_DEPTH: usize = 30;
/// Fusion's damping between the words' ranking and the model's: larger than [`FUSION_K`],
/// so a tool both rank fairly high beats one only the first ranks first.
const SEMANTIC_FUSION_K: f32 = 5.0;

/// A tool catalog, ready to rank tools against a query.
#[derive(Debug)]
pub struct ToolIndex {
    /// By name: a tie in score goes to the name that sorts first.
    tools: Vec<Arc<Tool>>,
    vocabulary: HashMap<String, u32>,
    /// Per term: the tools it occurs in and its saturated BM25F weight there, times its idf.
    postings: Vec<Vec<(u32, f32)>>,
    /// With an embedding model: the model and each tool's unit vector, one after another.
    vectors: Option<(Arc<Embedder>, Vec<f32>)>,
    built_in: Duration,
}

/// A tool's text, split into its fields' terms.
fn field_terms(tool: &Tool) -> [Vec<String>; 5] {
    let definition = &tool.definition;
    let description = definition.description.as_deref().unwrap_or("").trim();
    let (summary, rest) = split_summary(description);
    let properties = definition.input_schema.get("properties").and_then(Value::as_object);
    let mut param_names = Vec::new();
    let mut param_descriptions = Vec::new();
    for (name, schema) in properties.into_iter().flatten() {
        param_names.extend(terms(name));
        if let Some(text) = schema.get("description").and_then(Value::as_str) {
            param_descriptions.extend(terms(text));
        }
    }
    [terms(&definition.name), terms(summary), terms(rest), param_names, param_descriptions]
}

/// The first line or sentence of a description, and the rest.
fn split_summary(description: &str) -> (&str, &str) {
    let line_end = description.find('\n').unwrap_or(description.len());
    let sentence_end = description[..line_end].find(". ").map_or(line_end, |at| at + 1);
    (&description[..sentence_end], &description[sentence_end..])
}

/// What the model embeds of a tool: its name's words and the first sentence of its description.
fn embedded_text(tool: &Tool) -> String {
    let description = tool.definition.description.as_deref().unwrap_or("").trim();
    format!("{}. {}", words(tool.name()).join(" "), split_summary(description).0)
}

impl ToolIndex {
    /// Indexes `tools` (any order; names are unique in a catalog) for ranking by words.
    pub fn new(tools: Vec<Arc<Tool>>) -> Self {
        Self::with_model(tools, None)
    }

    /// Indexes `tools` for ranking by words and, with `model`, by meaning too.
    pub fn with_model(mut tools: Vec<Arc<Tool>>, model: Option<Arc<Embedder>>) -> Self {
        let started = Instant::now();
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        let documents: Vec<[Vec<String>; 5]> = tools.iter().map(|tool| field_terms(tool)).collect();
        let count = documents.len().max(1) as f32;
        let mut average_length = [0f32; 5];
        for document in &documents {
            for (total, field) in average_length.iter_mut().zip(document) {
                *total += field.len() as f32;
            }
        }
        for total in &mut average_length {
            *total = (*total / count).max(1.0);
        }
        let mut vocabulary: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        for (doc, document) in documents.iter().enumerate() {
            // Per term: its frequency in each field.
            let mut frequencies: HashMap<&str, [u16; 5]> = HashMap::new();
            for (f, field) in document.iter().enumerate() {
                for term in field {
                    let counts = frequencies.entry(term.as_str()).or_default();
                    counts[f] = counts[f].saturating_add(1);
                }
            }
            for (term, counts) in frequencies {
                let weighted: f32 = FIELDS
                    .iter()
                    .zip(counts)
                    .zip(document.iter().zip(average_length))
                    .map(|((field, tf), (text, average))| {
                        let norm = 1.0 - field.length_norm + field.length_norm * text.len() as f32 / average;
                        field.weight * f32::from(tf) / norm
                    })
                    .sum();
                let id = *vocabulary.entry(term.to_owned()).or_insert_with(|| {
                    postings.push(Vec::new());
                    (postings.len() - 1) as u32
                });
                postings[id as usize].push((doc as u32, weighted * (K1 + 1.0) / (weighted + K1)));
            }
        }
        for list in &mut postings {
            let n = list.len() as f32;
            let idf = (1.0 + (count - n + 0.5) / (n + 0.5)).ln();
            for (_, weight) in list.iter_mut() {
                *weight *= idf;
            }
        }
        let vectors = model.map(|model| {
            let vectors = tools.iter().flat_map(|tool| model.embed(&embedded_text(tool))).collect();
            (model, vectors)
        });
        Self { tools, vocabulary, postings, vectors, built_in: started.elapsed() }
    }

    /// The tools, by name.
    pub fn tools(&self) -> &[Arc<Tool>] {
        &self.tools
    }

    /// How long building the index took.
    pub fn built_in(&self) -> Duration {
        self.built_in
    }

    /// The best `limit` tools for `query` with their scores, best first (ties by name). A
    /// query with no words to match lists the tools not marked `defer_loading`, by name. A
    /// request of several steps is ranked as a whole and clause by clause, and the rankings
    /// fused, so each step's tool can reach the top.
    pub fn rank(&self, query: &str, limit: usize) -> Vec<(Arc<Tool>, f32)> {
        let concepts = query_concepts(query);
        if concepts.is_empty() {
            return self
                .tools
                .iter()
                .filter(|tool| !tool.definition.defer_loading)
                .take(limit)
                .map(|tool| (tool.clone(), 0.0))
                .collect();
        }
        let clauses = clauses(query);
        let depth = limit.max(FUSION_DEPTH);
        let by_words = if clauses.len() < 2 {
            self.rank_concepts(&concepts, depth)
        } else {
            let mut rankings = vec![self.rank_concepts(&concepts, depth)];
            rankings.extend(clauses.iter().map(|clause| self.rank_concepts(&query_concepts(clause), depth)));
            fuse(&rankings, FUSION_K, depth)
        };
        let mut ranked = match &self.vectors {
            Some((model, vectors)) => {
                fuse(&[by_words, self.rank_meaning(model, vectors, query, depth)], SEMANTIC_FUSION_K, limit)
            }
            None => by_words,
        };
        ranked.truncate(limit);
        ranked.into_iter().map(|(doc, score)| (self.tools[doc].clone(), score)).collect()
    }

    /// The `limit` tools whose vectors are nearest the query's (cosine), best first.
    fn rank_meaning(&self, model: &Embedder, vectors: &[f32], query: &str, limit: usize) -> Vec<(usize, f32)> {
        let query = model.embed(query);
        let mut ranked: Vec<(usize, f32)> = vectors
            .chunks_exact(model.dimensions())
            .enumerate()
            .map(|(doc, vector)| (doc, vector.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>()))
            .filter(|(_, similarity)| *similarity > 0.0)
            .collect();
        top(&mut ranked, limit);
        ranked
    }

    /// The best `limit` tools for a query's concepts, as (tool, score), best first.
    fn rank_concepts(&self, concepts: &[Concept], limit: usize) -> Vec<(usize, f32)> {
        let n = self.tools.len();
        let mut scores = vec![0f32; n];
        let mut matched = vec![0u16; n];
        // One concept's best term per tool: its synonyms do not add up.
        let mut best = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for concept in concepts {
            for (term, weight) in &concept.terms {
                let Some(&id) = self.vocabulary.get(term) else { continue };
                for &(doc, impact) in &self.postings[id as usize] {
                    let slot = &mut best[doc as usize];
                    if *slot == 0.0 {
                        touched.push(doc);
                    }
                    *slot = slot.max(weight * impact);
                }
            }
            for doc in touched.drain(..) {
                let doc = doc as usize;
                scores[doc] += std::mem::take(&mut best[doc]);
                matched[doc] += 1;
            }
        }
        let words = concepts.len().max(1) as f32;
        let mut ranked: Vec<(usize, f32)> = scores
            .iter()
            .enumerate()
            .filter(|(_, score)| **score > 0.0)
            .map(|(doc, score)| (doc, score * (f32::from(matched[doc]) / words).powf(COVERAGE_EXPONENT)))
            .collect();
        top(&mut ranked, limit);
        ranked
    }
}

/// Keeps the best `limit` of `ranked`, best first (ties by name, which is document order).
fn top(ranked: &mut Vec<(usize, f32)>, limit: usize) {
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if ranked.len() > limit {
        ranked.select_nth_unstable_by(limit, order);
        ranked.truncate(limit);
    }
    ranked.sort_by(order);
}

/// Reciprocal rank fusion: a tool scores `1 / (k + rank)` in each ranking it is in.
fn fuse(rankings: &[Vec<(usize, f32)>], k: f32, limit: usize) -> Vec<(usize, f32)> {
    let mut fused: HashMap<usize, f32> = HashMap::new();
    for ranking in rankings {
        for (rank, (doc, _)) in ranking.iter().enumerate() {
            *fused.entry(*doc).or_default() += 1.0 / (k + rank as f32 + 1.0);
        }
    }
    let mut ranked: Vec<(usize, f32)> = fused.into_iter().collect();
    top(&mut ranked, limit);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolDefinition;
    use crate::tools::search::test_tool as tool;

    fn names(found: &[(Arc<Tool>, f32)]) -> Vec<&str> {
        found.iter().map(|(t, _)| t.name()).collect()
    }

    #[test]
    fn the_best_match_comes_first_and_misses_are_left_out() {
        let object = serde_json::json!({"type": "object"});
        let index = ToolIndex::new(vec![
            tool("time__convert_time", "Convert time between timezones", object.clone()),
            tool("sqlite__read_query", "Execute a SELECT query on the SQLite database", object.clone()),
            tool("memory__create_entities", "Create multiple new entities in the knowledge graph", object),
        ]);
        assert_eq!(names(&index.rank("run an sql query", 10))[0], "sqlite__read_query");
        assert_eq!(names(&index.rank("timezones convert", 10))[0], "time__convert_time");
        assert!(index.rank("weather", 10).is_empty());
        assert_eq!(index.rank("  the ", 2).len(), 2, "a query of no words lists tools by name, up to the limit");
    }

    #[test]
    fn stems_synonyms_and_parameters_find_what_plain_words_miss() {
        let org = serde_json::json!({"type": "object", "properties": {"org": {"type": "string"}}});
        let repo = serde_json::json!({"type": "object", "properties": {"owner": {}, "repo": {}}});
        let index = ToolIndex::new(vec![
            tool("actions__list_org_secrets", "List organization secrets", org),
            tool("actions__list_repo_secrets", "List repository secrets", repo.clone()),
            tool("issues__create", "Create an issue", repo.clone()),
            tool("pulls__create", "Create a pull request", repo),
        ]);
        assert_eq!(names(&index.rank("file a bug", 1)), ["issues__create"]);
        assert_eq!(names(&index.rank("open a PR", 1)), ["pulls__create"]);
        assert_eq!(names(&index.rank("show the secrets of my company", 1)), ["actions__list_org_secrets"]);
        assert_eq!(names(&index.rank("secrets in this repositories", 1)), ["actions__list_repo_secrets"]);
    }

    #[test]
    fn deferred_tools_are_found_but_not_listed() {
        let mut hidden = ToolDefinition::code_callable("rare_tool");
        hidden.description = Some("Rotate the signing keys".into());
        hidden.defer_loading = true;
        let shown = ToolDefinition::code_callable("common_tool");
        let index = ToolIndex::new(vec![Tool::new(hidden).unwrap(), Tool::new(shown).unwrap()]);
        assert_eq!(names(&index.rank("", 10)), ["common_tool"]);
        assert_eq!(names(&index.rank("rotate signing keys", 10)), ["rare_tool"]);
    }
}
