//! The audit trail's cost and replay speed, printed as a table (one process, one run).
//!
//! Run with `cargo bench --bench audit`. Recording cost: the same execution (ten tool calls
//! gathered, answered by a local http tool) with the SQLite store and with events kept in
//! memory, interleaved run by run. Listing: pages of one key's 10,000 executions, as the
//! audit viewer asks for them (the first, one 9,000 deep, a filtered one), and one container's
//! verification.

use serde_json::json;
use sluice::NewExecution;
use sluice::ToolDefinition;
use sluice::replay;
use sluice::{ContainerHistory, ExecutionFilter, MemoryRecorder, Store};
use sluice::{Sandbox, SandboxConfig, Service, ServiceConfig};
use std::sync::Arc;
use std::time::Instant;

const RUNS: usize = 301;
const HISTORY_LENGTH: usize = 20;
const REPLAY_RUNS: usize = 21;
/// Executions of the key whose listing is measured, in containers of `PER_CONTAINER`.
const LISTED: usize = 10_000;
const PER_CONTAINER: usize = 100;
const LIST_RUNS: usize = 51;

fn median(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    (samples[samples.len() / 2], samples[0], samples[samples.len() - 1])
}

/// A local tool that echoes, and the service configuration that may call it.
async fn echo_tool() -> (ToolDefinition, ServiceConfig) {
    let app = axum::Router::new().route("/echo", axum::routing::post(|body: String| async move { body }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let tool = serde_json::from_value(json!({"name": "echo", "allowed_callers": ["code_execution_20260120"],
        "executor": {"type": "http", "url": format!("http://{address}/echo")}, "side_effects": "read_only"}))
    .expect("tool");
    let egress = sluice::EgressPolicy::new([format!("http://{address}/")]).expect("a prefix");
    let config =
        ServiceConfig { http: sluice::HttpExecutor::new(egress, &[]).expect("a client"), ..ServiceConfig::default() };
    (tool, config)
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
        let (tool, config) = echo_tool().await;
        let recorded = Service::with_store(sandbox.clone(), config.clone(), store.clone());
        let in_memory = Service::with_recorder(sandbox.clone(), config, Arc::new(MemoryRecorder::default()));
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
            let report = replay(&sandbox, &history, &target, &Default::default()).await.expect("replay");
            replays.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(report.divergence, None);
            assert_eq!(report.executions_replayed, HISTORY_LENGTH);
        }

        // One key's 10,000 executions; every hundredth raises (for the filtered page).
        let lister = "lister".to_owned();
        let mut ids = Vec::with_capacity(LISTED);
        let mut container = None;
        for i in 0..LISTED {
            if i % PER_CONTAINER == 0 {
                container = None;
            }
            let code = if i % 100 == 99 { "raise ValueError('x')" } else { "x = 1" };
            let request = NewExecution { code: code.into(), container, ..Default::default() };
            let view = recorded.create_execution(&lister, request).await.expect("execution");
            container = Some(view.container_id);
            ids.push(view.id);
        }
        // The three kinds of page, interleaved run by run (token counting of the executions
        // just made runs in the background meanwhile, as it would in service).
        let filters = [
            ExecutionFilter { limit: Some(50), ..Default::default() },
            ExecutionFilter { limit: Some(50), before: Some(ids[LISTED / 10].clone()), ..Default::default() },
            ExecutionFilter { limit: Some(50), outcome: Some("python_error".into()), ..Default::default() },
        ];
        let mut pages: Vec<(Vec<f64>, usize)> = filters.iter().map(|_| (Vec::with_capacity(LIST_RUNS), 0)).collect();
        for _ in 0..LIST_RUNS {
            for (filter, (samples, rows)) in filters.iter().zip(pages.iter_mut()) {
                let started = Instant::now();
                *rows = recorded.list_executions(&lister, filter.clone()).await.expect("a page").data.len();
                samples.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
        let mut pages = pages.into_iter().map(|(mut samples, rows)| (median(&mut samples), rows));
        let (first, deep, errors) =
            (pages.next().expect("first"), pages.next().expect("deep"), pages.next().expect("filtered"));
        let mut verifies = Vec::with_capacity(LIST_RUNS);
        let verified = container.expect("a container");
        for _ in 0..LIST_RUNS {
            let started = Instant::now();
            let verdict = recorded.verify_container(&lister, verified).await.expect("verify");
            verifies.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(verdict.problem, None);
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
        for (what, ((med, min, max), rows)) in [
            ("first page of 10,000 executions (50 rows)", first),
            ("a page 9,000 executions deep (before=)", deep),
            ("first page filtered by outcome (100 of 10,000 match)", errors),
        ] {
            println!(
                "| {what} | {med:.2} ms | {min:.2} ms | {max:.2} ms | < 20 ms | {} ({rows} rows) |",
                if med < 20.0 { "ok" } else { "MISSED" }
            );
        }
        let (v_med, v_min, v_max) = median(&mut verifies);
        println!(
            "| verify one container ({PER_CONTAINER} executions) | {v_med:.2} ms | {v_min:.2} ms | {v_max:.2} ms | < 100 ms | {} |",
            if v_med < 100.0 { "ok" } else { "MISSED" }
        );
        println!("\n{RUNS} interleaved runs per store; {REPLAY_RUNS} replays; {} records in the replayed chain; {LIST_RUNS} runs per listing.", records.len());
        let _ = std::fs::remove_dir_all(&dir);
    });
}
