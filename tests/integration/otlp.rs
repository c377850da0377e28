//! Traces over OTLP: `sluice serve --otlp-endpoint` sends each execution as a trace that a
//! receiver decodes with OpenTelemetry's official protobuf definitions (`tests/otlp/receiver.py`).

use crate::common;
use crate::server;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The receiver, its port, and the file it writes decoded exports to.
struct Receiver {
    child: std::process::Child,
    port: u16,
    out: PathBuf,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn receiver(python: &Path, dir: &Path) -> Receiver {
    let out = dir.join("spans.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp/receiver.py");
    let mut child =
        std::process::Command::new(python).arg(script).arg(&out).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    Receiver { child, port: line.trim().parse().expect("the receiver's port"), out }
}

/// The exports received so far, once `count` of them are there.
fn exports(receiver: &Receiver, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let lines: Vec<Value> = std::fs::read_to_string(&receiver.out)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if lines.len() >= count || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn attribute<'a>(span: &'a Value, key: &str) -> &'a Value {
    let value = &span["attributes"][key];
    value.get("stringValue").or(value.get("intValue")).or(value.get("boolValue")).unwrap_or(&Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_execution_is_a_trace_in_the_callers_trace_decoded_by_the_official_definitions() {
    let Some(parts) = common::python_parts() else { return };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("otlp-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let receiver = receiver(&parts.python, &dir);
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let server = server::start(&["--data-dir", dir.join("data").to_str().unwrap(), "--otlp-endpoint", &endpoint], &[]);
    let client = reqwest::Client::new();

    let lookup = json!({"name": "lookup", "allowed_callers": ["code_execution_20260120"]});
    let secret = json!({"name": "secret", "allowed_callers": ["direct"]});
    let code = "import sluice\nprint(await lookup({'q': 1}))\ntry:\n    await secret({})\nexcept sluice.ToolNotAllowedError:\n    print('refused')";
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let response = client
        .post(format!("{}/v1/executions", server.base))
        .header("content-type", "application/json")
        .header("traceparent", traceparent)
        .body(json!({"code": code, "tools": [lookup, secret]}).to_string())
        .send()
        .await
        .unwrap();
    let paused: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    let id = paused["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "found"}]});
    let done = server::post(&client, format!("{}/v1/executions/{id}/tool_results", server.base), answer).await;
    assert_eq!(done["result"]["stdout"], "found\nrefused\n", "{done}");
    // A second execution, with no trace context and a limit stop: a trace of its own.
    let body = json!({"code": "while True: pass", "limits": {"time_ms": 200}});
    let stopped = server::post(&client, format!("{}/v1/executions", server.base), body).await;

    let received = exports(&receiver, 2);
    assert_eq!(received.len(), 2, "{received:?}");
    assert!(received.iter().all(|r| r.get("error").is_none()), "every export decodes: {received:?}");
    let spans_of = |execution: &str| -> Vec<Value> {
        received
            .iter()
            .flat_map(|r| r["spans"].as_array().unwrap().clone())
            .filter(|s| s["trace_id"] == received_trace(&received, execution))
            .collect()
    };
    let spans = spans_of(&id);
    let root = spans.iter().find(|s| s["name"] == "execute_tool code_execution").expect("the execution's span");
    assert_eq!(root["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736", "joins the caller's trace");
    assert_eq!(root["parent_span_id"], "00f067aa0ba902b7");
    assert_eq!(root["kind"], 2, "SPAN_KIND_SERVER");
    assert_eq!(
        (attribute(root, "gen_ai.operation.name"), attribute(root, "gen_ai.tool.call.id")),
        (&json!("execute_tool"), &json!(id))
    );
    assert_eq!(attribute(root, "sluice.execution.outcome"), "completed");
    assert_eq!(attribute(root, "sluice.tool_calls"), "2");
    assert!(attribute(root, "sluice.tokens.returned").as_str().unwrap().parse::<u64>().unwrap() > 0);
    assert_eq!(root["resource"]["service.name"]["stringValue"], "sluice");

    let children: Vec<&Value> = spans.iter().filter(|s| s["parent_span_id"] == root["span_id"]).collect();
    let names: Vec<&str> = children.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["execute_tool lookup", "execute_tool secret", "sluice.pause"], "{children:?}");
    let lookup_span = children[0];
    assert_eq!(attribute(lookup_span, "gen_ai.tool.name"), "lookup");
    assert_eq!(attribute(lookup_span, "gen_ai.tool.call.id"), &paused["tool_uses"][0]["id"]);
    assert_eq!(attribute(lookup_span, "sluice.call.status"), "succeeded");
    let refused = children[1];
    assert_eq!((&refused["status"], attribute(refused, "error.type")), (&json!(2), &json!("not_allowed")));
    let pause = children[2];
    assert_eq!(attribute(pause, "sluice.pause.calls"), "1");
    let (start, end) = (pause["start"].as_u64().unwrap(), pause["end"].as_u64().unwrap());
    assert!(end - start >= 25_000_000, "the pause lasted until the answer: {pause}");
    let (root_start, root_end) = (root["start"].as_u64().unwrap(), root["end"].as_u64().unwrap());
    assert!(root_start <= start && end <= root_end, "the pause is inside the execution");

    let other = spans_of(stopped["id"].as_str().unwrap());
    let other_root = &other[0];
    assert_ne!(other_root["trace_id"], root["trace_id"], "no traceparent, a trace of its own");
    assert_eq!((&other_root["parent_span_id"], &other_root["status"]), (&json!(""), &json!(2)));
    assert_eq!(attribute(other_root, "error.type"), "execution_time_exceeded");
    server.stop();
}

/// The trace id of the export whose root span is `execution`'s.
fn received_trace(received: &[Value], execution: &str) -> Value {
    received
        .iter()
        .flat_map(|r| r["spans"].as_array().unwrap().iter())
        .find(|s| {
            s["attributes"]["gen_ai.tool.call.id"]["stringValue"] == execution
                && s["name"] == "execute_tool code_execution"
        })
        .map(|s| s["trace_id"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn a_bad_endpoint_stops_the_start_saying_why() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("otlp-bad-{}", uuid::Uuid::new_v4()));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir", dir.to_str().unwrap(), "--otlp-endpoint", "ftp://x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--otlp-endpoint"), "{output:?}");
}
