//! Crash safety: SIGKILL the server while executions with tool calls run, restart it on the
//! same data directory, and check that nothing reported was lost, nothing cut off was lost
//! or duplicated, an execution paused for a client tool resumes, the chains verify, and a
//! write tool was not called again.

use crate::server;

use serde_json::{Value, json};
use server::{Server, get, post};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// `sluice serve` on `data_dir`, with `http` tools allowed under `tools` (a URL prefix).
fn start_server(data_dir: &Path, tools: &str) -> Server {
    server::start(&["--data-dir", data_dir.to_str().unwrap(), "--http-tool-allow", tools], &[])
}

/// A write tool that records each call and then never answers.
async fn hanging_write_tool(hits: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().route(
        "/pay",
        axum::routing::post(move || {
            let hits = hits.clone();
            async move {
                hits.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "paid"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}/pay")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_loses_nothing_it_reported() {
    let data_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("crash-{}", uuid::Uuid::new_v4()));
    let hits = Arc::new(AtomicUsize::new(0));
    let pay_url = hanging_write_tool(hits.clone()).await;
    let client = reqwest::Client::new();
    let tools = pay_url.trim_end_matches("pay").to_owned();
    let server = start_server(&data_dir, &tools);
    let base = server.base.clone();

    // Reported: a completed execution, and one waiting for a client tool.
    eprintln!("server up at {base}");
    let done = post(&client, format!("{base}/v1/executions"), json!({"code": "print('done before the crash')"})).await;
    assert_eq!(done["status"], "completed");
    let client_tool = json!({"name": "approve", "allowed_callers": ["code_execution_20260120"]});
    let waiting = post(
        &client,
        format!("{base}/v1/executions"),
        json!({"code": "print(await approve({}))", "tools": [client_tool]}),
    )
    .await;
    assert_eq!(waiting["status"], "requires_action");
    eprintln!("two executions reported");

    // In flight when the server dies: a write tool call, and a long computation.
    let pay_tool = json!({"name": "pay", "allowed_callers": ["code_execution_20260120"], "side_effects": "write",
                          "executor": {"type": "http", "url": pay_url}, "timeout_ms": 600000,
                          "requires_approval": false});
    let paying = tokio::spawn({
        let (client, base) = (client.clone(), base.clone());
        async move {
            client
                .post(format!("{base}/v1/executions"))
                .header("content-type", "application/json")
                .body(json!({"code": "print(await pay({'amount': 10}))", "tools": [pay_tool]}).to_string())
                .send()
                .await
        }
    });
    let spinning = tokio::spawn({
        let (client, base) = (client.clone(), base.clone());
        async move {
            client
                .post(format!("{base}/v1/executions"))
                .header("content-type", "application/json")
                .body(json!({"code": "while True: pass", "limits": {"time_ms": 600000}}).to_string())
                .send()
                .await
        }
    });
    for _ in 0..100 {
        if hits.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the write tool was called");
    eprintln!("the write tool is in flight");
    tokio::time::sleep(Duration::from_millis(300)).await;

    drop(server); // SIGKILL, then reap
    let (paid, spun) = (paying.await.unwrap(), spinning.await.unwrap());
    assert!(paid.is_err() && spun.is_err(), "the open requests broke: {paid:?} {spun:?}");

    let restarted = start_server(&data_dir, &tools);
    let base = restarted.base.clone();
    let first = get(&client, format!("{base}/v1/executions/{}", done["id"].as_str().unwrap())).await;
    assert_eq!(first["status"], "completed");
    assert_eq!(first["result"]["stdout"], "done before the crash\n");
    // The paused execution was saved when it paused: it survives the crash and resumes.
    let waiting_id = waiting["id"].as_str().unwrap();
    let still_waiting = get(&client, format!("{base}/v1/executions/{waiting_id}")).await;
    assert_eq!(still_waiting["status"], "requires_action", "{still_waiting}");
    let tool_use_id = still_waiting["tool_uses"][0]["id"].as_str().unwrap();
    assert_eq!(tool_use_id, waiting["tool_uses"][0]["id"].as_str().unwrap());
    let resumed = post(
        &client,
        format!("{base}/v1/executions/{waiting_id}/tool_results"),
        json!({"tool_results": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": "approved"}]}),
    )
    .await;
    assert_eq!(resumed["status"], "completed", "{resumed}");
    assert_eq!(resumed["result"]["stdout"], "approved\n", "{resumed}");

    let listed = get(&client, format!("{base}/v1/executions")).await;
    let rows = listed["data"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "every execution once: {listed}");
    assert!(rows.iter().all(|r| r["status"] != "running"), "none left running: {listed}");
    let interrupted: Vec<&Value> = rows.iter().filter(|r| r["outcome"] == "interrupted").collect();
    assert_eq!(interrupted.len(), 2, "the two in flight: {listed}");
    let pay_row = rows.iter().find(|r| r["tools"] == json!(["pay"])).expect("the paying execution is on record");
    let paying = get(&client, format!("{base}/v1/executions/{}", pay_row["id"].as_str().unwrap())).await;
    let call = &paying["ledger"][0];
    assert_eq!((call["tool"].as_str(), call["status"].as_str()), (Some("pay"), Some("cancelled")), "{paying}");
    assert_eq!(call["error_code"], "interrupted");
    assert_eq!(call["idempotency_key"].as_str().unwrap().len(), 32);

    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the write tool was not called again");
    let verify = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["audit", "verify", "--data-dir", data_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
    drop(restarted);
}
