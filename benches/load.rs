//! Load: 200 containers, each running executions with a tool call back to back, over
//! loopback HTTP, with the SQLite audit store. Reports throughput, p50/p99 latency, wrong
//! answers and lost records.
//!
//! Run with `cargo bench --bench load` (60 s; `SLUICE_LOAD_SECS=10` for a shorter run).

use serde_json::{Value, json};
use sluice::AppState;
use sluice::{ExecutionFilter, Store};
use sluice::{Sandbox, SandboxConfig, Service, ServiceConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONTAINERS: usize = 200;
const DEFAULT_SECONDS: u64 = 60;

/// A `/proc/self/status` figure in MiB. `RssAnon` is memory the process wrote; `VmRSS` also
/// counts, once per container, the shared image pages each container has mapped.
fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field).and_then(|rest| rest.strip_prefix(':')))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

struct ClientReport {
    latencies_ms: Vec<f64>,
    wrong: Vec<String>,
    executions: usize,
}

async fn client_loop(base: String, tools: Value, deadline: Instant, id: usize) -> ClientReport {
    let client = reqwest::Client::new();
    let mut report = ClientReport { latencies_ms: Vec::new(), wrong: Vec::new(), executions: 0 };
    let mut container: Option<String> = None;
    let mut expected_total = 0u64;
    let mut step = 0u64;
    while Instant::now() < deadline {
        step += 1;
        let code = if container.is_none() {
            "total = 0\nimport json".to_owned()
        } else {
            format!("total += json.loads(await echo({{'n': {step}}}))['n']\nprint(total)")
        };
        let mut body = json!({"code": code, "tools": tools});
        if let Some(c) = &container {
            body["container"] = json!(c);
        }
        let started = Instant::now();
        let response = client
            .post(format!("{base}/v1/executions"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
        let value: Value = match response {
            Ok(r) => serde_json::from_str(&r.text().await.unwrap_or_default()).unwrap_or(Value::Null),
            Err(e) => {
                report.wrong.push(format!("client {id}: {e}"));
                continue;
            }
        };
        report.latencies_ms.push(started.elapsed().as_secs_f64() * 1e3);
        report.executions += 1;
        match &container {
            None => container = value["container"]["id"].as_str().map(str::to_owned),
            Some(_) => {
                expected_total += step;
                let stdout = value["result"]["stdout"].as_str().unwrap_or("");
                if stdout.trim() != expected_total.to_string() {
                    report.wrong.push(format!("client {id} step {step}: expected {expected_total}, got {value}"));
                    break;
                }
            }
        }
    }
    report
}

fn main() {
    let seconds = std::env::var("SLUICE_LOAD_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SECONDS);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let dir = std::env::temp_dir().join(format!("sluice-load-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let store = Arc::new(Store::open(&Store::sqlite_url(&dir), &sluice::ServerKey::random()).await.expect("store"));
        let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("sandbox");
        let state = AppState::new(Service::with_store(sandbox, ServiceConfig::default(), store.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(sluice::serve(listener, state, std::future::pending()));
        let echo = axum::Router::new().route("/echo", axum::routing::post(|body: String| async move { body }));
        let tool_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
        let tool_url = format!("http://{}/echo", tool_listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(tool_listener, echo).await });
        let tools = json!([{"name": "echo", "allowed_callers": ["code_execution_20260120"], "side_effects": "read_only",
                            "executor": {"type": "http", "url": tool_url}}]);

        let (anon_before, rss_before) = (status_mib("RssAnon"), status_mib("VmRSS"));
        let started = Instant::now();
        let deadline = started + Duration::from_secs(seconds);
        let clients: Vec<_> =
            (0..CONTAINERS).map(|id| tokio::spawn(client_loop(base.clone(), tools.clone(), deadline, id))).collect();
        let mut latencies = Vec::new();
        let (mut wrong, mut executions) = (Vec::new(), 0);
        for client in clients {
            let report = client.await.expect("client");
            latencies.extend(report.latencies_ms);
            wrong.extend(report.wrong);
            executions += report.executions;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let (anon_after, rss_after) = (status_mib("RssAnon"), status_mib("VmRSS"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let filter = ExecutionFilter { limit: Some(i64::MAX), ..ExecutionFilter::default() };
        let mut recorded = 0;
        // The listing is capped per call; count per container instead.
        let rows = store.list_executions(&filter).await.expect("list");
        let containers: std::collections::BTreeSet<String> = rows.iter().map(|r| r.container_id.clone()).collect();
        for container in &containers {
            let filter = ExecutionFilter { container_id: Some(container.clone()), limit: Some(i64::MAX), ..Default::default() };
            recorded += store.list_executions(&filter).await.expect("list").len();
        }
        let verify = store.verify().await.expect("verify");

        latencies.sort_by(|a, b| a.total_cmp(b));
        let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
        println!("| figure | value |");
        println!("| --- | ---: |");
        println!("| containers, concurrent clients | {CONTAINERS} |");
        println!("| duration | {elapsed:.1} s |");
        println!("| executions answered | {executions} |");
        println!("| throughput | {:.0} executions/s |", executions as f64 / elapsed);
        println!("| latency p50 / p99 | {:.1} ms / {:.1} ms |", pct(0.50), pct(0.99));
        println!("| wrong answers | {} |", wrong.len());
        println!("| executions on record / answered | {recorded} / {executions} |");
        println!("| chains verify | {} |", if verify.broken.is_none() { "yes" } else { "NO" });
        println!("| private memory (RssAnon) before / after | {anon_before:.0} MiB / {anon_after:.0} MiB |");
        println!("| resident incl. each container's view of the shared image (VmRSS) | {rss_before:.0} MiB / {rss_after:.0} MiB |");
        for w in wrong.iter().take(5) {
            println!("wrong: {w}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}
