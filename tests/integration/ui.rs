//! The audit viewer (`/ui`): its pages in headless Chromium driven by Playwright
//! (`tests/ui/ui_check.py`) against a live `sluice serve` with real executions, and the API it
//! reads (pages of executions, a container's verdict) with each key kept to its own.

use crate::common;
use crate::server::{self, Server};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Debian's Chromium (CI installs it), or the one `SLUICE_TEST_CHROMIUM` names.
fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("SLUICE_TEST_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from));
    let found = candidates.into_iter().find(|path| path.exists());
    common::subject_present("Chromium (apt-get install chromium)", found.is_some()).then_some(found?)
}

async fn send(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client.request(method, url).header("x-api-key", key);
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Key `k1`'s history: a container whose first execution waits on a client tool and prints
/// markup, whose second is refused a tool and raises; then three more executions.
async fn record(server: &Server) -> (String, String, String) {
    let client = reqwest::Client::new();
    let executions = format!("{}/v1/executions", server.base);
    let lookup = json!({"name": "lookup", "allowed_callers": ["code_execution_20260120"],
                        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}});
    let code = "import json, sluice\nrows = json.loads(await lookup(q='a'))\nsluice.count('rows', len(rows))\n\
                print('<img src=x onerror=alert(1)>', len(rows))";
    let body = json!({"code": code, "tools": [lookup]});
    let (_, paused) = send(&client, reqwest::Method::POST, executions.clone(), "k1", Some(body)).await;
    let id = paused["id"].as_str().unwrap().to_owned();
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "[1, 2, 3]"}]});
    let (_, done) =
        send(&client, reqwest::Method::POST, format!("{executions}/{id}/tool_results"), "k1", Some(answer)).await;
    assert_eq!(done["status"], "completed", "{done}");
    let container = done["container"]["id"].as_str().unwrap().to_owned();
    let secret = json!({"name": "secret", "allowed_callers": ["direct"]});
    let body = json!({"code": "await secret({})", "container": container, "tools": [secret]});
    let (_, refused) = send(&client, reqwest::Method::POST, executions.clone(), "k1", Some(body)).await;
    for n in 0..3 {
        let body = json!({"code": format!("print({n})")});
        send(&client, reqwest::Method::POST, executions.clone(), "k1", Some(body)).await;
    }
    (id, container, refused["id"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_shows_each_key_its_executions_in_a_real_browser() {
    let Some(parts) = common::python_parts() else { return };
    let Some(chromium) = chromium() else { return };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ui-{}", uuid::Uuid::new_v4()));
    let server = server::start(&["--data-dir", dir.join("data").to_str().unwrap(), "--api-key", "k1,k2"], &[]);
    let (execution, container, refused) = record(&server).await;

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ui-screenshots");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/ui_check.py");
    let args = [
        &server.base,
        chromium.to_str().unwrap(),
        shots.to_str().unwrap(),
        "k1",
        "k2",
        &execution,
        &container,
        &refused,
    ];
    let output = tokio::process::Command::new(&parts.python).arg(script).args(args).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("not JSON: {stdout}"));

    assert!(seen["without_key"].as_str().unwrap().contains("401"), "{seen}");
    let listed: Vec<&str> = seen["listed"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(listed.len(), 5, "{listed:?}");
    assert_eq!(listed[4], execution, "newest first");
    assert_eq!(seen["filtered"], json!([execution]), "the tool filter");
    let pages = seen["pages"].as_array().unwrap();
    assert_eq!((pages[0].as_array().unwrap().len(), pages[1].as_array().unwrap().len()), (2, 2));
    assert_eq!(pages[1][0], listed[2], "the second page goes on where the first ended");

    assert_eq!(seen["code_lines"][1], "rows = json.loads(await lookup(q='a'))");
    let call = seen["calls"][0].as_array().unwrap();
    assert_eq!((&call[1], &call[3], &call[7]), (&json!("lookup"), &json!("succeeded"), &json!("9")), "{call:?}");
    assert_eq!(seen["stdout"], "<img src=x onerror=alert(1)> 3\n", "markup is shown as text");
    assert_eq!(seen["injected_images"], 0);
    assert_eq!(seen["alerts"], json!([]), "no script of the data ran");
    let facts = seen["facts"].to_string();
    assert!(facts.contains("completed") && facts.contains("bytes inside / returned9 / "), "{facts}");
    assert_eq!(seen["counts"], json!(["rows3"]));
    assert!(seen["replay"].as_str().unwrap().starts_with("identical"), "{seen}");

    let refused_call = seen["refused_calls"][0].as_array().unwrap();
    assert_eq!((&refused_call[1], &refused_call[3]), (&json!("secret"), &json!("refused")));
    assert!(refused_call[8].as_str().unwrap().starts_with("not_allowed: "), "{refused_call:?}");
    assert!(seen["refused_stderr"].as_str().unwrap().contains("ToolNotAllowedError"), "{seen}");

    assert!(seen["verdict"].as_str().unwrap().starts_with("Chain verified: "), "{seen}");
    assert_eq!(seen["chain"], json!([execution, refused]));
    assert_eq!(seen["export_first_line"]["container_id"], json!(container));

    assert_eq!(seen["other_key_listed"], 0, "key k2 sees none of k1's executions");
    assert!(seen["other_key_execution"].as_str().unwrap().contains("404"), "{seen}");
    assert_eq!(seen["page_errors"], json!([]));
    for name in ["executions", "execution", "container"] {
        assert!(shots.join(format!("{name}.png")).metadata().unwrap().len() > 10_000, "screenshot {name}");
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_is_served_locked_down_and_its_api_pages_and_verifies_per_key() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ui-api-{}", uuid::Uuid::new_v4()));
    let server = server::start(&["--data-dir", dir.join("data").to_str().unwrap(), "--api-key", "k1,k2"], &[]);
    let (execution, container, refused) = record(&server).await;
    let client = reqwest::Client::new();
    for (path, kind) in [("/ui", "text/html"), ("/ui/app.js", "text/javascript"), ("/ui/app.css", "text/css")] {
        let response = client.get(format!("{}{path}", server.base)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path} needs no key: it holds no data");
        let headers = response.headers();
        assert!(headers["content-type"].to_str().unwrap().starts_with(kind));
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"), "{policy}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
    }
    let get = |path: String, key: &'static str| {
        let (client, base) = (client.clone(), server.base.clone());
        async move { send(&client, reqwest::Method::GET, format!("{base}{path}"), key, None).await }
    };
    let (status, verdict) = get(format!("/v1/containers/{container}/verify"), "k1").await;
    assert_eq!(status, 200, "{verdict}");
    assert_eq!((&verdict["verified"], &verdict["problem"]), (&json!(true), &Value::Null));
    assert!(verdict["records"].as_u64().unwrap() >= 6, "{verdict}");
    assert_eq!(get(format!("/v1/containers/{container}/verify"), "k2").await.0, 404);

    let (_, first) = get("/v1/executions?limit=3".into(), "k1").await;
    assert_eq!((first["data"].as_array().unwrap().len(), &first["has_more"]), (3, &json!(true)));
    let last = first["data"][2]["id"].as_str().unwrap();
    let (_, second) = get(format!("/v1/executions?limit=3&before={last}"), "k1").await;
    assert_eq!((second["data"].as_array().unwrap().len(), &second["has_more"]), (2, &json!(false)));
    assert_eq!((&second["data"][0]["id"], &second["data"][1]["id"]), (&json!(refused), &json!(execution)));
    let (_, failed) = get("/v1/executions?status=failed".into(), "k1").await;
    assert_eq!(failed["data"], json!([]), "nothing was stopped by a limit");
    let (_, errors) = get("/v1/executions?outcome=python_error".into(), "k1").await;
    assert_eq!(errors["data"][0]["id"], json!(refused), "{errors}");
    let (status, error) = get(format!("/v1/executions?before={last}"), "k2").await;
    assert_eq!((status, &error["error"]["type"]), (400, &json!("invalid_request_error")), "another key's cursor");
    server.stop();
}
