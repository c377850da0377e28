//! The service's figures over loopback HTTP, printed as a table (one process, one run).
//!
//! Run with `cargo bench --bench service`. The server and its clients share this machine's
//! cores, so the throughput figure includes the clients' own cost.

use serde_json::{Value, json};
use sluice::AppState;
use sluice::{Sandbox, SandboxConfig, Service, ServiceConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const LATENCY_RUNS: usize = 2_000;
const THROUGHPUT_CLIENTS: usize = 16;
const THROUGHPUT_WINDOW: Duration = Duration::from_secs(5);
const GATHER_RUNS: usize = 21;
const GATHER_CALLS: usize = 100;
const TOOL_DELAY: Duration = Duration::from_millis(50);

fn stats(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    (samples[samples.len() / 2], samples[0], samples[samples.len() - 1])
}

async fn execute(client: &reqwest::Client, base: &str, body: &Value) -> Value {
    let response = client
        .post(format!("{base}/v1/executions"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    let value: Value = serde_json::from_str(&response.text().await.expect("body")).expect("json");
    assert_eq!(value["status"], "completed", "{value}");
    value
}

async fn start_service() -> String {
    let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("sandbox");
    let state = AppState::new(Service::new(sandbox, ServiceConfig::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let address = listener.local_addr().expect("address");
    tokio::spawn(sluice::serve(listener, state, std::future::pending()));
    format!("http://{address}")
}

/// A tool endpoint that answers every call after `TOOL_DELAY`.
async fn start_slow_tool() -> String {
    let app = axum::Router::new().route(
        "/tool",
        axum::routing::post(|body: String| async move {
            tokio::time::sleep(TOOL_DELAY).await;
            body
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}/tool")
}

async fn new_container(client: &reqwest::Client, base: &str) -> String {
    let first = execute(client, base, &json!({"code": "x = 0"})).await;
    first["container"]["id"].as_str().expect("id").to_owned()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let base = start_service().await;
        let client = reqwest::Client::new();

        let container = new_container(&client, &base).await;
        let body = json!({"code": "x = 1 + 1", "container": container});
        for _ in 0..100 {
            execute(&client, &base, &body).await;
        }
        let mut latency = Vec::with_capacity(LATENCY_RUNS);
        for _ in 0..LATENCY_RUNS {
            let started = Instant::now();
            execute(&client, &base, &body).await;
            latency.push(started.elapsed().as_secs_f64() * 1e3);
        }

        let done = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + THROUGHPUT_WINDOW;
        let mut clients = Vec::new();
        for _ in 0..THROUGHPUT_CLIENTS {
            let (client, base, done) = (client.clone(), base.clone(), done.clone());
            clients.push(tokio::spawn(async move {
                let container = new_container(&client, &base).await;
                let body = json!({"code": "x = 1 + 1", "container": container});
                while Instant::now() < deadline {
                    execute(&client, &base, &body).await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }));
        }
        let started = Instant::now();
        for c in clients {
            c.await.expect("client");
        }
        let per_second = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();

        let tool_url = start_slow_tool().await;
        let tools = json!([{"name": "slow", "allowed_callers": ["code_execution_20260120"],
                            "executor": {"type": "http", "url": tool_url}, "side_effects": "read_only"}]);
        let code = format!("import asyncio\nr = await asyncio.gather(*(slow({{'i': i}}) for i in range({GATHER_CALLS})))\nlen(r)");
        let container = new_container(&client, &base).await;
        let body = json!({"code": code, "container": container, "tools": tools});
        let mut gather = Vec::with_capacity(GATHER_RUNS);
        for _ in 0..GATHER_RUNS {
            let started = Instant::now();
            let value = execute(&client, &base, &body).await;
            assert_eq!(value["result"]["value_repr"], GATHER_CALLS.to_string());
            gather.push(started.elapsed().as_secs_f64() * 1e3);
        }

        let (l_med, l_min, l_max) = stats(&mut latency);
        let (g_med, g_min, g_max) = stats(&mut gather);
        println!("| figure | median | min | max | target | |");
        println!("| --- | ---: | ---: | ---: | ---: | --- |");
        println!(
            "| POST /v1/executions `x = 1 + 1`, warm container, loopback | {l_med:.3} ms | {l_min:.3} ms | {l_max:.3} ms | <= 1 ms | {} |",
            if l_med <= 1.0 { "ok" } else { "MISSED" }
        );
        println!(
            "| executions per second, {THROUGHPUT_CLIENTS} concurrent clients, {}s | {per_second:.0} /s | | | >= 1000 /s | {} |",
            THROUGHPUT_WINDOW.as_secs(),
            if per_second >= 1000.0 { "ok" } else { "MISSED" }
        );
        println!(
            "| gather of {GATHER_CALLS} http calls, tool answers in {} ms | {g_med:.1} ms | {g_min:.1} ms | {g_max:.1} ms | < 150 ms | {} |",
            TOOL_DELAY.as_millis(),
            if g_med < 150.0 { "ok" } else { "MISSED" }
        );
        println!("\n{LATENCY_RUNS} latency samples; {GATHER_RUNS} gather samples.");
    });
}
