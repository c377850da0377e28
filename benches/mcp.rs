//! MCP tools called from code, against the same tool called directly by the official Python
//! `mcp` SDK, and the tokens a join across MCP servers returns to the model against those
//! that stayed inside. One process, one run, printed as a table.
//!
//! Run with `cargo bench --bench mcp` after `tests/python/setup.sh` (which installs the servers
//! and the SDK). Sluice's per-call figure includes the whole path: the script's call, the
//! gate, the ledger (written to a SQLite audit store), the MCP round trip to
//! mcp-server-time over stdio, and the result back into the script.

#[path = "../tests/common/python_env.rs"]
mod python_env;

use python_env::PythonParts;
use serde_json::Value;
use sluice::{McpConfig, McpServers, NewExecution, Sandbox, SandboxConfig, Service, ServiceConfig, TokenCounter};
use std::time::Instant;

const ROUNDS: usize = 9;
const SEQUENTIAL_CALLS: usize = 50;
const GATHER_CALLS: usize = 100;
const OWNER: &str = "bench";

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

/// Milliseconds per call of `calls` calls made by `code`, the median over the rounds.
async fn per_call_ms(service: &Service, tools: &[String], code: &str, calls: usize) -> f64 {
    let mut samples = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let request = NewExecution { code: code.to_owned(), tool_names: tools.to_vec(), ..NewExecution::default() };
        let started = Instant::now();
        let view = service.create_execution(&OWNER.to_owned(), request).await.expect("execution");
        samples.push(started.elapsed().as_secs_f64() * 1000.0 / calls as f64);
        let outcome = view.outcome.expect("finished");
        assert_eq!(outcome.stdout, format!("{calls}\n"), "{}", outcome.stderr);
    }
    median(&mut samples)
}

fn direct_sdk(parts: &PythonParts) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/mcp_direct.py");
    let output = std::process::Command::new(&parts.python)
        .arg(script)
        .args([ROUNDS, SEQUENTIAL_CALLS, GATHER_CALLS].map(|n| n.to_string()))
        .arg(&parts.time_server)
        .args(["--local-timezone", "UTC"])
        .output()
        .expect("the Python SDK runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("JSON from mcp_direct.py")
}

const JOIN: &str = r#"
import ast, asyncio, json
await sqlite__create_table(query="CREATE TABLE orders (id INTEGER PRIMARY KEY, city TEXT, placed TEXT)")
cities = ["Tokyo", "Kolkata", "Shanghai", "Dubai", "Singapore"]
zones = {"Tokyo": "Asia/Tokyo", "Kolkata": "Asia/Kolkata", "Shanghai": "Asia/Shanghai", "Dubai": "Asia/Dubai",
         "Singapore": "Asia/Singapore"}
values = ", ".join(f"('{cities[i % 5]}', '{i % 24:02d}:{(i * 7) % 60:02d}')" for i in range(200))
await sqlite__write_query(query=f"INSERT INTO orders (city, placed) VALUES {values}")
rows = ast.literal_eval(await sqlite__read_query(query="SELECT id, city, placed FROM orders"))
converted = await asyncio.gather(*[
    time__convert_time(source_timezone="UTC", time=r["placed"], target_timezone=zones[r["city"]]) for r in rows])
evening = sum(1 for c in converted if 18 <= int(json.loads(c)["target"]["datetime"][11:13]) < 24)
await memory__create_entities(entities=[{"name": "orders", "entityType": "report",
                                          "observations": [f"{evening} of {len(rows)} orders placed in the local evening"]}])
print(json.loads(await memory__read_graph())["entities"][0]["observations"][0])
"#;

fn tokens<'a>(texts: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut counter = TokenCounter::default();
    texts.into_iter().for_each(|t| counter.add(t));
    counter.total().tokens
}

fn main() {
    let Some(parts) = PythonParts::find() else {
        eprintln!("the MCP parts are missing: run tests/python/setup.sh first");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let dir = std::env::temp_dir().join(format!("sluice-bench-mcp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch");
        let config = McpConfig::from_json(&parts.config(&dir).to_string()).expect("config");
        let mcp = McpServers::start(config).await;
        let store = sluice::Store::open(&sluice::Store::sqlite_url(&dir), &sluice::ServerKey::load_or_create(&dir).expect("key"))
            .await
            .expect("store");
        let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("sandbox");
        let service = Service::with_store(sandbox, ServiceConfig { mcp, ..ServiceConfig::default() }, std::sync::Arc::new(store));
        let time_tool = vec!["time__get_current_time".to_owned()];
        let sequential = format!(
            "n = 0\nfor _ in range({SEQUENTIAL_CALLS}):\n    await time__get_current_time(timezone='UTC')\n    n += 1\nprint(n)"
        );
        let gather = format!(
            "import asyncio\nprint(len(await asyncio.gather(*[time__get_current_time(timezone='UTC') for _ in range({GATHER_CALLS})])))"
        );
        per_call_ms(&service, &time_tool, &gather, GATHER_CALLS).await; // warm-up
        let sluice_sequential = per_call_ms(&service, &time_tool, &sequential, SEQUENTIAL_CALLS).await;
        let sluice_gather = per_call_ms(&service, &time_tool, &gather, GATHER_CALLS).await;
        let direct = direct_sdk(&parts);
        let (direct_sequential, direct_gather) =
            (direct["sequential_ms"].as_f64().expect("ms"), direct["gather_ms"].as_f64().expect("ms"));

        let join_tools: Vec<String> = service.server_side_tools(&OWNER.to_owned()).iter().map(|t| t.name().to_owned()).collect();
        let request = NewExecution { code: JOIN.to_owned(), tool_names: join_tools, ..NewExecution::default() };
        let view = service.create_execution(&OWNER.to_owned(), request).await.expect("join");
        let outcome = view.outcome.expect("finished");
        assert!(outcome.stderr.is_empty(), "{}", outcome.stderr);
        let inside = tokens(view.ledger.iter().filter_map(|c| c.result.as_deref()));
        let returned = tokens([outcome.stdout.as_str()]);

        println!("MCP tool from code vs the Python SDK calling it directly (mcp-server-time over stdio; medians of {ROUNDS} rounds)\n");
        println!("| per call | Sluice, from code | Python SDK, direct | ratio |");
        println!("| --- | ---: | ---: | ---: |");
        for (what, ours, theirs) in [
            (format!("sequential ({SEQUENTIAL_CALLS})"), sluice_sequential, direct_sequential),
            (format!("gather of {GATHER_CALLS}"), sluice_gather, direct_gather),
        ] {
            println!("| {what} | {ours:.3} ms | {theirs:.3} ms | {:.2} |", ours / theirs);
        }
        println!(
            "\nJoin across sqlite, time and memory ({} calls): {inside} tokens of tool results stayed inside, \
             {returned} came back ({:.2}% fewer)\n  {}",
            view.ledger.len(),
            100.0 * (1.0 - returned as f64 / inside.max(1) as f64),
            outcome.stdout.trim()
        );
        service.shutdown().await;
    });
}
