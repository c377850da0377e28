//! The audit trail's cost and replay speed, printed as a table (one process, one run).
//!
//! Run with `cargo bench --bench audit`. Recording cost: the same execution (ten tool calls
//! gathered, answered by a local http tool) with the SQLite store and with events kept in
//! memory, interleaved run by run.

use serde_json::json;
use sluice::NewExecution;
use sluice::ToolDefinition;
use sluice::replay;
use sluice::{ContainerHistory, MemoryRecorder, Store};
use sluice::{Sandbox, SandboxConfig, Service, ServiceConfig};
use std::sync::Arc;
use std::time::Instant;

const RUNS: usize = 301;
const HISTORY_LENGTH: usize = 20;
const REPLAY_RUNS: usize = 21;

fn median(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    (samples[samples.len() / 2], samples[0], samples[samples.len() - 1])
}

async fn echo_tool() -> ToolDefinition {
    let app = axum::Router::new().route("/echo", axum::routing::post(|body: String| async move { body }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    serde_json::from_value(json!({"name": "echo", "allowed_callers": ["code_execution_20260120"],
        "executor": {"type": "http", "url": format!("http://{address}/echo")}, "side_effects": "read_only"}))
    .expect("tool")
}

async fn run_once(service: &Service, container: Option<uuid::Uuid>, tool: &ToolDefinition, code: &str) -> uuid::Uuid {
    let request = NewExecution { code: code.into(), container, tools: vec![tool.clone()], ..Default::default() };
    let view = service.create_execution(&"bench".to_owned(), request).await.expect("execution");
    assert!(view.outcome.as_ref().is_some_and(|o| o.return_code == 0), "{:?}", view.outcome);
    view.container_id
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("sandbox");
        let dir = std::env::temp_dir().join(format!("sluice-audit-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let store = Arc::new(Store::open(&Store::sqlite_url(&dir), &sluice::ServerKey::random()).await.expect("store"));
        let recorded = Service::with_store(sandbox.clone(), ServiceConfig::default(), store.clone());
        let in_memory = Service::with_recorder(sandbox.clone(), ServiceConfig::default(), Arc::new(MemoryRecorder::default()));
        let tool = echo_tool().await;
        let code = "import asyncio\nr = await asyncio.gather(*(echo({'i': i}) for i in range(10)))\nprint(len(r))";
        let sqlite_container = run_once(&recorded, None, &tool, code).await;
        let memory_container = run_once(&in_memory, None, &tool, code).await;
        let (mut with_store, mut with_memory) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
        for _ in 0..RUNS {
            let started = Instant::now();
            run_once(&recorded, Some(sqlite_container), &tool, code).await;
            with_store.push(started.elapsed().as_secs_f64() * 1e3);
            let started = Instant::now();
            run_once(&in_memory, Some(memory_container), &tool, code).await;
            with_memory.push(started.elapsed().as_secs_f64() * 1e3);
        }

        // A container with a history of twenty executions, each with a tool call.
        let history_container = run_once(&recorded, None, &tool, "total = 0").await;
        for i in 1..HISTORY_LENGTH {
            let step = format!("total += len(await echo({{'i': {i}}}))\nprint(total)");
            run_once(&recorded, Some(history_container), &tool, &step).await;
        }
        let records = store.records(&history_container.to_string()).await.expect("records");
        let history = ContainerHistory::from_records(&history_container.to_string(), &records).expect("history");
        let target = history.executions.last().expect("executions").execution_id.clone();
        let mut replays = Vec::with_capacity(REPLAY_RUNS);
        for _ in 0..REPLAY_RUNS {
            let started = Instant::now();
            let report = replay(&sandbox, &history, &target).await.expect("replay");
            replays.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(report.divergence, None);
            assert_eq!(report.executions_replayed, HISTORY_LENGTH);
        }

        let (s_med, s_min, s_max) = median(&mut with_store);
        let (m_med, m_min, m_max) = median(&mut with_memory);
        let (r_med, r_min, r_max) = median(&mut replays);
        println!("| figure | median | min | max | target | |");
        println!("| --- | ---: | ---: | ---: | ---: | --- |");
        println!("| execution with 10 tool calls, SQLite store | {s_med:.3} ms | {s_min:.3} ms | {s_max:.3} ms | | |");
        println!("| execution with 10 tool calls, events kept in memory | {m_med:.3} ms | {m_min:.3} ms | {m_max:.3} ms | | |");
        let overhead = s_med - m_med;
        println!(
            "| recording cost (difference of medians) | {overhead:.3} ms | | | <= 1 ms | {} |",
            if overhead <= 1.0 { "ok" } else { "MISSED" }
        );
        println!(
            "| replay of a {HISTORY_LENGTH}-execution history | {r_med:.1} ms | {r_min:.1} ms | {r_max:.1} ms | < 100 ms | {} |",
            if r_med < 100.0 { "ok" } else { "MISSED" }
        );
        println!("\n{RUNS} interleaved runs per store; {REPLAY_RUNS} replays; {} records in the replayed chain.", records.len());
        let _ = std::fs::remove_dir_all(&dir);
    });
}
