//! MCP both ways, with real parts (installed by `tests/python/setup.sh`): the reference servers
//! mcp-server-time and mcp-server-sqlite (PyPI) and server-memory (npm) as tool sources for
//! code, and the official Python `mcp` SDK as a client of `sluice mcp` and of `/mcp`.

use crate::common;
use crate::python_env::PythonParts;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use sluice::{ApiKeys, AppState, McpConfig, McpServers, Service, ServiceConfig, app};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn servers(config: &Value) -> McpServers {
    McpServers::start(McpConfig::from_json(&config.to_string()).unwrap()).await
}

/// The API over a SQLite audit store in `dir`, with `mcp`'s tools and keys `a` and `b`.
async fn router(dir: &Path, mcp: McpServers) -> Router {
    let store = Arc::new(sluice::Store::open(&sluice::Store::sqlite_url(dir), &common::server_key()).await.unwrap());
    let config = ServiceConfig { mcp, ..ServiceConfig::default() };
    let service = Service::with_store(common::sandbox(), config, store);
    app(AppState { keys: Arc::new(ApiKeys::new(["a", "b"])), ..AppState::new(service) })
}

async fn send(app: &Router, method: &str, uri: &str, body: Option<Value>, key: &str) -> (StatusCode, Value) {
    crate::api::send(app, method, uri, body, Some(key)).await
}

async fn execute(app: &Router, key: &str, code: &str, tools: &[&str]) -> Value {
    let (status, view) =
        send(app, "POST", "/v1/executions", Some(json!({"code": code, "tool_names": tools})), key).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    view
}

/// Ids of the processes (not this one) whose command line mentions `marker`.
fn processes_mentioning(marker: &str) -> Vec<String> {
    let mine = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()) && *pid != mine)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
        })
        .collect()
}

/// CPU a stdio SQLite MCP server has used once its slow query is surely under way: its start
/// (Python, the `mcp` package) takes about one second of CPU.
const QUERY_UNDER_WAY_CPU_SECONDS: f64 = 4.0;

/// User and system CPU time the processes `pids` have used, from `/proc/PID/stat`.
fn cpu_seconds(pids: &[String]) -> f64 {
    let ticks: u64 = pids
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            // Fields after the command name (which may hold spaces) start at its closing paren;
            // utime and stime are the 14th and 15th fields of the line.
            let rest = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    ticks as f64 / 100.0
}

const JOIN: &str = r#"
import ast, asyncio, json, sluice
await sqlite__create_table(query="CREATE TABLE orders (id INTEGER PRIMARY KEY, city TEXT, placed TEXT)")
await sqlite__write_query(query="INSERT INTO orders (city, placed) VALUES ('Tokyo', '09:30'), ('Kolkata', '14:05'), ('Shanghai', '18:45')")
rows = ast.literal_eval(await sqlite__read_query(query="SELECT id, city, placed FROM orders ORDER BY id"))
zones = {"Tokyo": "Asia/Tokyo", "Kolkata": "Asia/Kolkata", "Shanghai": "Asia/Shanghai"}
converted = await asyncio.gather(*[
    time__convert_time(source_timezone="UTC", time=r["placed"], target_timezone=zones[r["city"]]) for r in rows])
local = [json.loads(c)["target"]["datetime"][11:16] for c in converted]
await memory__create_entities(entities=[
    {"name": r["city"], "entityType": "city", "observations": [f"order {r['id']} at {t} local"]}
    for r, t in zip(rows, local)])
graph = json.loads(await memory__read_graph())
sluice.count("orders", len(rows))
print(sorted((e["name"], e["observations"][0]) for e in graph["entities"]))
"#;

#[tokio::test(flavor = "multi_thread")]
async fn code_joins_three_real_mcp_servers_in_one_audited_execution() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("join");
    let mcp = servers(&parts.config(&dir)).await;
    let names: Vec<String> = mcp.tools(None).iter().map(|t| t.name().to_owned()).collect();
    for expected in ["time__convert_time", "sqlite__read_query", "memory__create_entities", "memory__read_graph"] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
    let app = router(&dir, mcp).await;

    let (status, listed) = send(&app, "GET", "/v1/tools", None, "a").await;
    assert_eq!(status, StatusCode::OK);
    let convert = listed["data"].as_array().unwrap().iter().find(|t| t["name"] == "time__convert_time").unwrap();
    assert_eq!(convert["executor"], json!({"type": "mcp", "server": "time", "tool": "convert_time"}), "{convert}");
    assert_eq!(convert["side_effects"], "read_only", "from the server's readOnlyHint: {convert}");
    let forged = json!({"name": "x", "executor": {"type": "mcp", "server": "sqlite", "tool": "write_query"}});
    let (status, refused) = send(&app, "POST", "/v1/tools", Some(forged), "a").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "clients cannot add MCP tools: {refused}");
    let (status, _) = send(&app, "DELETE", "/v1/tools/time__convert_time", None, "a").await;
    assert_eq!(status, StatusCode::CONFLICT, "the operator's tools cannot be deleted");

    let tools = [
        "sqlite__create_table",
        "sqlite__write_query",
        "sqlite__read_query",
        "time__convert_time",
        "memory__create_entities",
        "memory__read_graph",
    ];
    let view = execute(&app, "a", JOIN, &tools).await;
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(
        view["result"]["stdout"],
        "[('Kolkata', 'order 2 at 19:35 local'), ('Shanghai', 'order 3 at 02:45 local'), ('Tokyo', 'order 1 at 18:30 local')]\n",
        "{view}"
    );
    let id = view["id"].as_str().unwrap();
    let (_, audited) = send(&app, "GET", &format!("/v1/executions/{id}"), None, "a").await;
    let ledger = audited["ledger"].as_array().unwrap();
    let called: Vec<&str> = ledger.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(called.len(), 8, "every call is on the ledger: {called:?}");
    assert_eq!(called.iter().filter(|n| **n == "time__convert_time").count(), 3);
    assert!(ledger.iter().all(|c| c["status"] == "succeeded"), "{audited}");
    let (status, replayed) = send(&app, "POST", &format!("/v1/executions/{id}/replay"), None, "a").await;
    assert_eq!((status, &replayed["result"]), (StatusCode::OK, &json!("identical")), "{replayed}");

    // server-memory keeps a graph per session: key b has a session of its own, empty.
    let other = execute(
        &app,
        "b",
        "import json\nprint(json.loads(await memory__read_graph())['entities'])",
        &["memory__read_graph"],
    )
    .await;
    assert_eq!(other["result"]["stdout"], "[]\n", "one key cannot read what another stored: {other}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_call_is_unavailable_and_the_next_call_starts_it_again() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("kill");
    let database = dir.join("slow.db");
    let config = json!({"mcpServers": {
        "sqlite": {"command": parts.sqlite_server, "args": ["--db-path", database], "timeout_ms": 60000,
                   "requires_approval": false},
        "hasty": {"command": parts.sqlite_server, "args": ["--db-path", dir.join("hasty.db")], "timeout_ms": 300,
                  "requires_approval": false}
    }});
    let app = router(&dir, servers(&config).await).await;
    // read_query takes only SELECTs: the slow count goes in a scalar subquery.
    let slow = "SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000000) \
                SELECT count(*) FROM c)";
    let code = format!(
        "import sluice\ntry:\n    await sqlite__read_query(query={slow:?})\n    print('finished')\n\
         except sluice.ToolUnavailableError as e:\n    print('unavailable')\n\
         print(await sqlite__list_tables())"
    );
    let running = {
        let app = app.clone();
        tokio::spawn(async move { execute(&app, "a", &code, &["sqlite__read_query", "sqlite__list_tables"]).await })
    };
    // Killed mid-call, not mid-start (a start cut off is another case: its failure holds the
    // next start back by the restart backoff). Python's start alone takes seconds of CPU on a
    // loaded machine, so wall time says little: wait until the server has burnt well past
    // what starting takes, which only the running query does.
    let waited = std::time::Instant::now();
    while cpu_seconds(&processes_mentioning(&database.to_string_lossy())) < QUERY_UNDER_WAY_CPU_SECONDS
        && waited.elapsed() < Duration::from_secs(50)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let server = processes_mentioning(&database.to_string_lossy());
    assert!(!server.is_empty(), "the server was running");
    for pid in server {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid]).status();
    }
    let view = running.await.unwrap();
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(view["result"]["stdout"], "unavailable\n[]\n", "{view}");
    let (_, audited) = send(&app, "GET", &format!("/v1/executions/{}", view["id"].as_str().unwrap()), None, "a").await;
    assert_eq!(audited["ledger"][0]["error_code"], "unavailable", "{audited}");
    assert_eq!(audited["ledger"][1]["status"], "succeeded", "the next call started a new session: {audited}");

    // A server that does not answer in time: the script gets the typed error, not a hang.
    let started = Instant::now();
    let code = format!(
        "import sluice\ntry:\n    await hasty__read_query(query={slow:?})\nexcept sluice.ToolUnavailableError as e:\n    print(e)"
    );
    let view = execute(&app, "a", &code, &["hasty__read_query"]).await;
    assert!(view["result"]["stdout"].as_str().unwrap().contains("did not answer"), "{view}");
    assert!(started.elapsed() < Duration::from_secs(20), "the call was cut at its timeout");
}

/// Runs `tests/mcp/client_check.py` (the official Python SDK) and returns what it printed.
fn python_client(parts: &PythonParts, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client_check.py");
    let output = std::process::Command::new(&parts.python).arg(script).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the client failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|_| panic!("not JSON: {stdout}"))
}

fn check_what_the_client_saw(seen: &Value) {
    assert_eq!(seen["server_name"], "sluice");
    assert_eq!(seen["tools"], json!(["execute_python", "search_tools"]));
    assert_eq!(
        (&seen["first"]["is_error"], &seen["first"]["structured"]["stdout"]),
        (&json!(false), &json!("set 42\n"))
    );
    assert_eq!(seen["second"]["structured"]["stdout"], "84\n", "state is kept in the container: {seen}");
    assert_eq!(seen["second"]["structured"]["container_id"], seen["first"]["structured"]["container_id"]);
    assert!(seen["second"]["text"].as_str().unwrap().starts_with("84\n"), "{seen}");
    let search = seen["search"]["text"].as_str().unwrap();
    assert!(search.starts_with("async def time__convert_time(*, "), "{search}");
    assert_eq!(seen["with_tool"]["structured"]["stdout"], "18:30\n", "{seen}");
    assert_eq!(seen["loop"]["is_error"], true);
    assert_eq!(seen["loop"]["structured"]["error"]["type"], "execution_time_exceeded", "{seen}");
    assert_eq!(seen["syntax"]["is_error"], true);
    assert!(seen["syntax"]["structured"]["stderr"].as_str().unwrap().contains("SyntaxError"), "{seen}");
    assert_eq!(seen["no_code"]["structured"]["error"]["type"], "invalid_request_error");
}

fn write_config(parts: &PythonParts, dir: &Path) -> PathBuf {
    let path = dir.join("mcp.json");
    std::fs::write(&path, parts.config(dir).to_string()).unwrap();
    path
}

#[test]
fn sluice_serves_mcp_over_stdio_to_the_python_sdk_and_audits_it() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("stdio");
    let config = write_config(&parts, &dir);
    let data = dir.join("data");
    let (data, config) = (data.to_str().unwrap(), config.to_str().unwrap());
    let binary = env!("CARGO_BIN_EXE_sluice");
    let seen = python_client(
        &parts,
        &["stdio", binary, "mcp", "--data-dir", data, "--mcp-config", config, "--limit", "time_ms=2000"],
    );
    check_what_the_client_saw(&seen);
    // On record like any execution: `sluice replay` finds it in the store and replays it.
    let id = seen["with_tool"]["structured"]["execution_id"].as_str().unwrap();
    let replay = std::process::Command::new(binary).args(["replay", id, "--data-dir", data]).output().unwrap();
    let said = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success() && said.contains("identical"), "{said}{}", String::from_utf8_lossy(&replay.stderr));
}

#[test]
fn sluice_serves_mcp_over_streamable_http_with_the_api_keys() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("http");
    let config = write_config(&parts, &dir);
    let data = dir.join("data");
    let args = ["--data-dir", data.to_str().unwrap(), "--mcp-config", config.to_str().unwrap()];
    let server = crate::server::start(&[&args[..], &["--limit", "time_ms=2000", "--api-key", "k1"]].concat(), &[]);
    let url = format!("{}/mcp", server.base);
    check_what_the_client_saw(&python_client(&parts, &["http", &url, "k1"]));

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let status = runtime.block_on(async {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let response = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        response.status()
    });
    assert_eq!(status, reqwest::StatusCode::UNAUTHORIZED, "no key, no MCP");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_tool_list_is_listed_again() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("changing");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/changing_server.py");
    let mcp = servers(
        &json!({"mcpServers": {"changing": {"command": parts.python, "args": [script], "requires_approval": false}}}),
    )
    .await;
    assert!(mcp.get(None, "changing__unlock").is_some() && mcp.get(None, "changing__secret").is_none());
    let app = router(&dir, mcp.clone()).await;
    let view = execute(&app, "a", "print(await changing__unlock())", &["changing__unlock"]).await;
    assert_eq!(view["result"]["stdout"], "unlocked\n", "{view}");
    let listed = |key: &'static str| {
        let app = app.clone();
        async move {
            let (_, tools) = send(&app, "GET", "/v1/tools", None, key).await;
            tools["data"].as_array().unwrap().iter().any(|t| t["name"] == "changing__secret")
        }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !listed("a").await {
        assert!(Instant::now() < deadline, "the new tool was not listed after notifications/tools/list_changed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let view = execute(&app, "a", "print(await changing__secret())", &["changing__secret"]).await;
    assert_eq!(view["result"]["stdout"], "the secret\n", "{view}");
    // The change happened in key a's session (a process of its own): key b's list is unchanged.
    assert!(!listed("b").await, "one key's session changed what another key sees");
    assert!(mcp.get(None, "changing__secret").is_none());
}

#[test]
fn sluice_run_calls_the_mcp_servers_of_its_config() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("run");
    let config = write_config(&parts, &dir);
    let script = dir.join("tokyo.py");
    let code = "import json\nr = json.loads(await time__convert_time(source_timezone='UTC', time='09:30', \
                target_timezone='Asia/Tokyo'))\nprint(r['target']['datetime'][11:16])";
    std::fs::write(&script, code).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("run")
        .arg(&script)
        .arg("--mcp-config")
        .arg(&config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout, "18:30\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamable_http_server_is_a_tool_source_too() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("http-source");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/changing_server.py");
    let mut child = std::process::Command::new(&parts.python)
        .arg(script)
        .args(["--http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the Python SDK's HTTP server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mcp = servers(
        &json!({"mcpServers": {"remote": {"url": url, "headers": {"X-Sluice-Test": "1"}, "requires_approval": false}}}),
    )
    .await;
    let app = router(&dir, mcp).await;
    let view = execute(&app, "a", "print(await remote__unlock())", &["remote__unlock"]).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(view["result"]["stdout"], "unlocked\n", "{view}");
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_stdio_server_starts_ends_with_its_session() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("group");
    // The server (`sh`, like `npx`) starts node, and a helper that never reads stdin and so
    // would not notice the session ending: only ending the process group ends it.
    let keepalive = dir.join("keepalive");
    std::fs::write(&keepalive, "").unwrap();
    let script = "tail -f \"$2\" > /dev/null & node \"$0\" \"$1\"; wait";
    let config = json!({"mcpServers": {"memory": {
        "command": "sh", "args": ["-c", script, parts.memory_server, dir.join("memory.jsonl"), keepalive],
        "isolation": "shared"
    }}});
    let mcp = servers(&config).await;
    assert!(mcp.get(None, "memory__read_graph").is_some(), "the server started through sh");
    let script_marker = keepalive.to_string_lossy().into_owned();
    assert!(processes_mentioning(&script_marker).len() >= 2, "sh and its tail run");
    mcp.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_mentioning(&script_marker).is_empty() {
        assert!(Instant::now() < deadline, "the server's own child outlived its session");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_write_waits_for_approval() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("approve");
    let config = json!({"mcpServers": {
        "sqlite": {"command": parts.sqlite_server, "args": ["--db-path", dir.join("a.db")], "timeout_ms": 60000}
    }});
    let app = router(&dir, servers(&config).await).await;
    let code = "print(await sqlite__create_table(query='CREATE TABLE held (x INTEGER)'))";
    let paused = execute(&app, "a", code, &["sqlite__create_table"]).await;
    assert_eq!(paused["status"], "requires_action", "an unannotated MCP tool is a write: {paused}");
    let request = &paused["approval_requests"][0];
    assert_eq!((&request["name"], &request["executor"]), (&json!("sqlite__create_table"), &json!("mcp")));
    assert!(!dir.join("a.db").exists() || std::fs::read(dir.join("a.db")).unwrap().windows(4).all(|w| w != b"held"));
    let uri = format!("/v1/executions/{}/approvals", paused["id"].as_str().unwrap());
    let approve = json!({"decisions": [{"id": request["id"], "decision": "approve"}]});
    let (status, done) = send(&app, "POST", &uri, Some(approve), "a").await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["stdout"], "Table created successfully\n", "{done}");
    assert!(std::fs::read(dir.join("a.db")).unwrap().windows(4).any(|w| w == b"held"), "the table is there now");
}
