//! Shared by the examples: a seeded generator, a local tool server, Sluice in-process over
//! loopback HTTP, token counting and the comparison table.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;

/// A small deterministic generator (SplitMix64): the same seed gives the same data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }

    /// An index chosen with the given weights (in thousandths).
    pub fn weighted(&mut self, weights: &[u64]) -> usize {
        let mut roll = self.next_u64() % weights.iter().sum::<u64>();
        for (index, weight) in weights.iter().enumerate() {
            if roll < *weight {
                return index;
            }
            roll -= weight;
        }
        weights.len() - 1
    }

    /// Cents in `low..=high` dollars, as a two-decimal amount.
    pub fn amount(&mut self, low: u64, high: u64) -> f64 {
        self.range(low * 100, high * 100) as f64 / 100.0
    }
}

/// One tool served over HTTP: the handler gets the JSON arguments, returns the result text.
pub type Handler = Arc<dyn Fn(Value) -> String + Send + Sync>;

/// Serves `tools` at `http://127.0.0.1:<port>/<name>`; returns the base URL.
pub async fn serve_tools(tools: Vec<(&'static str, Handler)>) -> String {
    let mut router = axum::Router::new();
    for (name, handler) in tools {
        router = router.route(
            &format!("/{name}"),
            axum::routing::post(move |body: String| {
                let handler = handler.clone();
                async move { handler(serde_json::from_str(&body).unwrap_or(json!({}))) }
            }),
        );
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port for the tools");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}

/// Starts Sluice in this process, listening on loopback, with `http` tools allowed under
/// `tools_base` only; returns its base URL.
pub async fn start_sluice(tools_base: &str) -> String {
    let sandbox = sluice::Sandbox::new(sluice::SandboxConfig::default()).await.expect("the sandbox image");
    let policy = sluice::EgressPolicy::new([format!("{tools_base}/")]).expect("a valid prefix");
    let http = sluice::HttpExecutor::new(policy, &[]).expect("an HTTP client");
    let config = sluice::ServiceConfig { http, ..sluice::ServiceConfig::default() };
    let state = sluice::AppState::new(sluice::Service::new(sandbox, config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port for Sluice");
    let address = listener.local_addr().expect("address");
    tokio::spawn(sluice::serve(listener, state, std::future::pending()));
    format!("http://{address}")
}

/// As [`start_sluice`], with an audit store (SQLite in a fresh temporary directory), so
/// executions are on record and can be listed and replayed.
pub async fn start_sluice_with_store(tools_base: &str) -> String {
    let key = sluice::ServerKey::random();
    let config = sluice::SandboxConfig { snapshot_key: key.snapshot_key(), ..sluice::SandboxConfig::default() };
    let sandbox = sluice::Sandbox::new(config).await.expect("the sandbox image");
    let dir = std::env::temp_dir().join(format!("sluice-example-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("a directory for the audit store");
    let store = sluice::Store::open(&sluice::Store::sqlite_url(&dir), &key).await.expect("an audit store");
    let policy = sluice::EgressPolicy::new([format!("{tools_base}/")]).expect("a valid prefix");
    let http = sluice::HttpExecutor::new(policy, &[]).expect("an HTTP client");
    let config = sluice::ServiceConfig { http, ..sluice::ServiceConfig::default() };
    let state = sluice::AppState::new(sluice::Service::with_store(sandbox, config, Arc::new(store)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port for Sluice");
    let address = listener.local_addr().expect("address");
    tokio::spawn(sluice::serve(listener, state, std::future::pending()));
    format!("http://{address}")
}

/// Tool definitions for Sluice: each tool is an `http` tool at `base/<name>`.
pub fn http_tools(base: &str, tools: &[(&str, &str, Value)]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|(name, description, schema)| {
                json!({"name": name, "description": description, "input_schema": schema,
                       "allowed_callers": ["code_execution_20260120"], "side_effects": "read_only",
                       "executor": {"type": "http", "url": format!("{base}/{name}")}})
            })
            .collect(),
    )
}

/// Runs `code` through Sluice's API; returns the execution as JSON.
pub async fn run_ptc(sluice: &str, code: &str, tools: &Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{sluice}/v1/executions"))
        .header("content-type", "application/json")
        .body(json!({"code": code, "tools": tools}).to_string())
        .send()
        .await
        .expect("Sluice answers");
    let execution: Value = serde_json::from_str(&response.text().await.expect("a body")).expect("JSON");
    assert_eq!(execution["status"], "completed", "{execution}");
    assert_eq!(execution["result"]["return_code"], 0, "{}", execution["result"]["stderr"]);
    execution
}

pub fn tokens(text: &str) -> u64 {
    // Examples count everything exactly (the service counts a bounded prefix exactly).
    let mut counter = sluice::TokenCounter::with_budget(usize::MAX);
    counter.add(text);
    counter.total().tokens
}

/// The two ways of answering one question, measured.
pub struct Comparison {
    pub question: &'static str,
    pub traditional_calls: usize,
    /// Every tool result plus the final answer: what enters the model's context.
    pub traditional_tokens: u64,
    pub ptc_calls: u64,
    /// Only what the script printed.
    pub ptc_tokens: u64,
    /// The script the model writes (output tokens, for reference).
    pub code_tokens: u64,
    pub answer: String,
    pub answer_matches: bool,
}

impl Comparison {
    pub fn reduction(&self) -> f64 {
        1.0 - self.ptc_tokens as f64 / self.traditional_tokens as f64
    }

    pub fn print(&self) {
        println!("{}\n", self.question);
        println!("| path | tool calls | tokens into the model's context |");
        println!("| --- | ---: | ---: |");
        println!(
            "| (a) traditional: every tool result in context | {} | {} |",
            self.traditional_calls, self.traditional_tokens
        );
        println!("| (b) Sluice: only the script's output | {} | {} |", self.ptc_calls, self.ptc_tokens);
        println!(
            "\nreduction: {:.2}% fewer tokens (the script itself is {} tokens the model writes)",
            self.reduction() * 100.0,
            self.code_tokens
        );
        println!("answer: {}", self.answer);
        println!(
            "checked against a direct computation over the data: {}",
            if self.answer_matches { "match" } else { "MISMATCH" }
        );
        println!("tokenizer: {}", sluice::TOKENIZER);
    }
}

/// What the traditional loop puts into the model's context: every tool result, then the
/// model's answer.
pub struct Traditional {
    pub results: Vec<String>,
    pub answer: String,
}

/// Measures both paths for one question: the traditional one as given, and `script` run
/// through Sluice next to `tools` (served over HTTP). `answer_matches` checks the JSON the
/// script printed against a direct computation.
pub async fn compare_paths(
    question: &'static str,
    traditional: Traditional,
    tools: Vec<(&'static str, Handler)>,
    specs: &[(&str, &str, Value)],
    script: &str,
    answer_matches: impl Fn(&[Value]) -> bool,
) -> Comparison {
    let traditional_tokens = traditional.results.iter().map(|r| tokens(r)).sum::<u64>() + tokens(&traditional.answer);
    let tools_base = serve_tools(tools).await;
    let sluice = start_sluice(&tools_base).await;
    let execution = run_ptc(&sluice, script, &http_tools(&tools_base, specs)).await;
    let stdout = execution["result"]["stdout"].as_str().expect("stdout").to_owned();
    let got: Vec<Value> = serde_json::from_str(stdout.trim()).expect("the script prints JSON");
    Comparison {
        question,
        traditional_calls: traditional.results.len(),
        traditional_tokens,
        ptc_calls: execution["usage"]["tool_calls"].as_u64().unwrap_or(0),
        ptc_tokens: tokens(&stdout),
        code_tokens: tokens(script),
        answer: stdout.trim().to_owned(),
        answer_matches: answer_matches(&got),
    }
}

/// An example's `main`: prints the comparison, and fails when the answer was wrong.
pub fn run_example(compare: impl Future<Output = Comparison>) {
    let comparison = block_on(compare);
    comparison.print();
    if !comparison.answer_matches {
        std::process::exit(1);
    }
}

/// Runs an example's future on a fresh runtime.
pub fn block_on<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime").block_on(future)
}
