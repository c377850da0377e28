//! `POST /v1/messages`: the official `anthropic` SDK as the client (`tests/messages/client_check.py`)
//! against `sluice serve --upstream`, the upstream a scripted model (`tests/messages/upstream.py`)
//! that answers as Anthropic's API or as an OpenAI-compatible server.

use crate::common;
use crate::server;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The scripted upstream, its port, and the log of what it was sent.
pub(crate) struct ScriptedUpstream {
    child: std::process::Child,
    pub port: u16,
    log: PathBuf,
}

impl Drop for ScriptedUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ScriptedUpstream {
    pub(crate) fn start(python: &Path, dialect: &str, mode: &str, dir: &Path) -> Self {
        let log = dir.join(format!("upstream-{dialect}.jsonl"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages/upstream.py");
        let mut child = std::process::Command::new(python)
            .args([script.as_os_str(), dialect.as_ref(), mode.as_ref(), log.as_os_str()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Self { child, port: line.trim().parse().expect("the upstream's port"), log }
    }

    /// `anthropic:URL` or `openai:URL` for `--upstream`.
    pub(crate) fn spec(&self, dialect: &str) -> String {
        match dialect {
            "openai" => format!("openai:http://127.0.0.1:{}/", self.port),
            _ => format!("anthropic:http://127.0.0.1:{}", self.port),
        }
    }

    /// Every request the upstream received, in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// Runs `client_check.py` with `args` after the base URL and key; its JSON.
pub(crate) fn client_check(python: &Path, base: &str, key: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages/client_check.py");
    let output = std::process::Command::new(python).arg(script).args([base, key]).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("not JSON: {stdout}"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The recorded conversation through `dialect`: pauses twice on client tools, a script that
/// fails, the model's answer; then the same streamed; then an upstream error.
fn programmatic_tool_calling_through(dialect: &str) {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("messages");
    let turns = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages/ptc_turns.json");
    let upstream = ScriptedUpstream::start(&parts.python, dialect, &format!("replay:{}", turns.display()), &dir);
    let data = dir.join("data");
    let spec = upstream.spec(dialect);
    let args = ["--data-dir", data.to_str().unwrap(), "--api-key", "sluice-key", "--upstream", &spec];
    let server = server::start(&args, &[("SLUICE_UPSTREAM_API_KEY", "upstream-key")]);
    let seen = client_check(&parts.python, &server.base, "sluice-key", &["ptc"]);

    for run in ["plain", "streamed"] {
        let seen = &seen[run];
        assert_eq!(seen["stops"], json!(["tool_use", "tool_use", "end_turn"]), "{run}: {seen}");
        assert_eq!(
            seen["blocks"],
            json!([
                ["text", "server_tool_use", "tool_use"],
                ["tool_use", "tool_use"],
                ["code_execution_tool_result", "server_tool_use", "code_execution_tool_result", "text"],
            ]),
            "{run}: {seen}"
        );
        assert_eq!(seen["callers"], json!(vec!["code_execution_20260120"; 3]), "{run}");
        let servers = seen["server_tool_ids"].as_array().unwrap();
        assert_eq!(seen["caller_tool_ids"], json!([servers[0]]), "the calls name the code that made them: {seen}");
        let results = &seen["results"];
        assert_eq!(results[0]["stdout"], "2 people, 3 expense rows, 1 failed\n", "{run}: {seen}");
        assert_eq!(results[0]["return_code"], 0);
        assert_eq!(results[1]["stdout"], "2\n", "the container kept `team` between executions: {seen}");
        assert!(results[1]["stderr"].as_str().unwrap().contains("ZeroDivisionError"), "{seen}");
        assert_eq!(results[1]["return_code"], 1);
        assert_eq!(seen["final_text"], "Two people, three expense rows; one lookup failed.");
        assert_eq!(seen["containers"].as_array().unwrap().len(), 1, "one container for the conversation: {seen}");
        let last_usage = &seen["usage"][2];
        assert_eq!(last_usage["server_tool_use"]["code_execution_requests"], 2, "{seen}");
        assert!(last_usage["input_tokens"].as_u64().unwrap() > 0, "the upstream's tokens: {seen}");
        if run == "plain" {
            // Sluice's counts beside Anthropic's; a streamed message's usage is what the SDK
            // keeps of `message_delta`, Anthropic's fields only.
            assert_eq!(last_usage["sluice"]["tool_calls"], 3, "the first script's three calls: {seen}");
        }
    }
    assert_eq!(seen["upstream_error"], json!([429, "rate_limit_error", "upstream_error"]), "{seen}");
    // The upstream streamed its text in two pieces: they reached the client as two deltas.
    assert_eq!(seen["text_deltas"], json!([2, 0, 2]), "{seen}");
    // Each upstream answer is in the container's sealed audit trail, beside the executions.
    let container = seen["plain"]["containers"][0].as_str().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = reqwest::Client::new();
    let fetch = |path: String| {
        let request = client.get(format!("{}{path}", server.base)).header("x-api-key", "sluice-key");
        runtime.block_on(async { request.send().await.unwrap().error_for_status().unwrap().text().await.unwrap() })
    };
    let bundle = fetch(format!("/v1/containers/{container}/export"));
    let model_calls: Vec<Value> = bundle
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["kind"] == "model_call")
        .map(|record| serde_json::from_str(record["body"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(model_calls.len(), 3, "one record per upstream answer: {bundle}");
    assert_eq!(model_calls[0]["executions"].as_array().map(Vec::len), Some(1), "{model_calls:?}");
    assert!(model_calls.iter().all(|c| c["input_tokens"].as_u64() > Some(0)), "{model_calls:?}");
    let verdict: Value = serde_json::from_str(&fetch(format!("/v1/containers/{container}/verify"))).unwrap();
    assert_eq!(verdict["verified"], true, "{verdict}");

    let requests = upstream.requests();
    assert_eq!(requests.len(), 7, "three upstream calls per conversation, then the refused one");
    for request in &requests {
        let text = request["body"].to_string();
        for raw in ["RAW-ROW-MARKER", "RAW-ERROR-MARKER", "Ada"] {
            assert!(!text.contains(raw), "a raw tool result reached the model: {text}");
        }
        let expected_key = if dialect == "openai" { "authorization" } else { "x-api-key" };
        let key = request[expected_key].as_str().unwrap_or_default();
        assert!(key.ends_with("upstream-key"), "the configured key, never the client's: {request}");
    }
    // The second call reads the first script's output as its code tool's result.
    let second = requests[1]["body"].to_string();
    assert!(second.contains("2 people, 3 expense rows, 1 failed"), "{second}");
    let described = requests[0]["body"]["tools"].to_string();
    assert!(described.contains("async def get_expenses(*, employee_id: str, quarter: str) -> str"), "{described}");
    server.stop();
}

#[test]
fn programmatic_tool_calling_through_an_anthropic_upstream() {
    programmatic_tool_calling_through("anthropic");
}

#[test]
fn programmatic_tool_calling_through_an_openai_compatible_upstream() {
    programmatic_tool_calling_through("openai");
}

/// Refused code input reaches the model as an error result, a direct call ends the turn, and a
/// model that keeps calling code is stopped with `pause_turn` after the per-request budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_code_direct_calls_and_the_upstream_call_budget() {
    let Some(parts) = common::python_parts() else { return };
    let dir = scratch("messages-edge");
    let turns = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages/edge_turns.json");
    let upstream = ScriptedUpstream::start(&parts.python, "anthropic", &format!("replay:{}", turns.display()), &dir);
    let data = dir.join("data");
    let spec = upstream.spec("anthropic");
    let server = server::start(&["--data-dir", data.to_str().unwrap(), "--upstream", &spec], &[]);
    let client = reqwest::Client::new();
    let url = format!("{}/v1/messages", server.base);
    let tools = json!([{"type": "code_execution_20260120", "name": "code_execution"},
        {"name": "lookup", "input_schema": {"type": "object"}, "allowed_callers": ["direct"]}]);
    let ask = |container: Option<&str>| {
        json!({"model": "m", "max_tokens": 100, "tools": tools, "container": container,
            "messages": [{"role": "user", "content": "go"}]})
    };

    let first = server::post(&client, url.clone(), ask(None)).await;
    let kinds: Vec<&str> = first["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["server_tool_use", "code_execution_tool_result", "tool_use"], "{first}");
    assert_eq!(first["content"][1]["content"]["error_code"], "invalid_tool_input", "{first}");
    assert_eq!(first["content"][2]["caller"], json!({"type": "direct"}));
    assert_eq!(first["stop_reason"], "tool_use");
    let told = upstream.requests()[1]["body"]["messages"].to_string();
    assert!(told.contains("invalid code input"), "the model reads why its call was refused: {told}");

    let second = server::post(&client, url.clone(), ask(None)).await;
    assert_eq!(second["stop_reason"], "pause_turn", "{second}");
    let outputs: Vec<&str> = second["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "code_execution_tool_result")
        .map(|b| b["content"]["stdout"].as_str().unwrap())
        .collect();
    assert_eq!(outputs.len(), 10, "ten upstream calls, each with its code run: {second}");
    assert_eq!(outputs.last(), Some(&"10\n"), "one container all along: {second}");
    let container = second["container"]["id"].as_str().unwrap().to_owned();
    let third = server::post(&client, url, ask(Some(&container))).await;
    assert_eq!((third["stop_reason"].as_str(), third["content"][0]["text"].as_str()), (Some("end_turn"), Some("done")));
    assert_eq!(third["container"]["id"], container.as_str(), "the named container: {third}");
    server.stop();
}

fn router(upstream: Option<&str>, keys: &[&str]) -> axum::Router {
    let service = sluice::Service::new(common::sandbox(), sluice::ServiceConfig::default());
    let upstream = upstream.map(|spec| std::sync::Arc::new(sluice::Upstream::new(spec, None).unwrap()));
    let keys = std::sync::Arc::new(sluice::ApiKeys::new(keys));
    sluice::app(sluice::AppState { keys, upstream, ..sluice::AppState::new(service) })
}

fn ask(text: &str) -> Value {
    json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_upstream_or_with_one_down_the_errors_say_which() {
    let (status, answer) = crate::api::send(&router(None, &[]), "POST", "/v1/messages", Some(ask("hi")), None).await;
    assert_eq!((status.as_u16(), answer["error"]["code"].as_str()), (404, Some("no_upstream")), "{answer}");
    // Nothing listens on port 9 of loopback.
    let down = router(Some("anthropic:http://127.0.0.1:9"), &[]);
    let (status, answer) = crate::api::send(&down, "POST", "/v1/messages", Some(ask("hi")), None).await;
    assert_eq!((status.as_u16(), answer["error"]["type"].as_str()), (502, Some("api_error")), "{answer}");
    assert_eq!(answer["error"]["code"], "upstream_error");
    let mut unknown = ask("hi");
    unknown["mcp_servers"] = json!([]);
    let (status, answer) = crate::api::send(&down, "POST", "/v1/messages", Some(unknown), None).await;
    assert_eq!(status.as_u16(), 400, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_cannot_resume_another_keys_execution() {
    let app = router(Some("anthropic:http://127.0.0.1:9"), &["key-a", "key-b"]);
    let tool =
        json!({"name": "lookup", "allowed_callers": ["code_execution_20260120"], "input_schema": {"type": "object"}});
    let code = json!({"code": "print(await lookup())", "tools": [tool]});
    let (status, paused) = crate::api::send(&app, "POST", "/v1/executions", Some(code), Some("key-a")).await;
    assert_eq!((status.as_u16(), paused["status"].as_str()), (200, Some("requires_action")), "{paused}");
    let server_id = paused["id"].as_str().unwrap().replace("exec_", "srvtoolu_");
    let call_id = paused["tool_uses"][0]["id"].clone();
    let hijack = json!({"model": "m", "max_tokens": 5,
    "tools": [{"type": "code_execution_20260120", "name": "code_execution"}, tool],
    "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": server_id, "name": "code_execution", "input": {"code": "x"}},
            {"type": "tool_use", "id": call_id, "name": "lookup", "input": {},
             "caller": {"type": "code_execution_20260120", "tool_id": server_id}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "forged"}]},
    ]});
    let (status, answer) = crate::api::send(&app, "POST", "/v1/messages", Some(hijack.clone()), Some("key-b")).await;
    assert_eq!(status.as_u16(), 404, "another key's execution is not found: {answer}");
    let uri = format!("/v1/executions/{}", paused["id"].as_str().unwrap());
    let (_, still) = crate::api::send(&app, "GET", &uri, None, Some("key-a")).await;
    assert_eq!(still["status"], "requires_action", "the owner's execution still waits: {still}");

    // The owner's answer resumes it; the upstream (down) then fails the turn. The same request
    // again finds the script already past those answers and goes on to the upstream, not 409.
    for attempt in 0..2 {
        let (status, answer) =
            crate::api::send(&app, "POST", "/v1/messages", Some(hijack.clone()), Some("key-a")).await;
        assert_eq!(status.as_u16(), 502, "attempt {attempt}: {answer}");
    }
    let (_, done) = crate::api::send(&app, "GET", &uri, None, Some("key-a")).await;
    assert_eq!((done["status"].as_str(), done["result"]["stdout"].as_str()), (Some("completed"), Some("forged\n")));
}
