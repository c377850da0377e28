//! The HTTP API through the real router: the PTC pause/resume flow, http tools, refusals,
//! expiry, conflicts, auth isolation and the error shapes.

use crate::common;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use sluice::EgressPolicy;
use sluice::HttpExecutor;
use sluice::{ApiKeys, AppState, app};
use sluice::{Service, ServiceConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

fn router_with(config: ServiceConfig, keys: &[&str]) -> Router {
    let service = Service::new(common::sandbox(), config);
    app(AppState { keys: Arc::new(ApiKeys::new(keys)), ..AppState::new(service) })
}

fn router() -> Router {
    router_with(ServiceConfig::default(), &[])
}

/// A router whose `http` tools may call `base` (a test's tool server on loopback).
fn router_allowing(base: &str) -> Router {
    let policy = EgressPolicy::new([format!("{base}/")]).unwrap();
    let config = ServiceConfig { http: HttpExecutor::new(policy, &[]).unwrap(), ..ServiceConfig::default() };
    router_with(config, &[])
}

pub(crate) async fn send(
    app: &Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
    key: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let body = match body {
        Some(json) => {
            request = request.header("content-type", "application/json");
            Body::from(json.to_string())
        }
        None => Body::empty(),
    };
    let response = app.clone().oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value =
        serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, value)
}

async fn post(app: &Router, uri: &str, body: Value) -> (StatusCode, Value) {
    send(app, "POST", uri, Some(body), None).await
}

fn client_tool(name: &str) -> Value {
    json!({"name": name, "allowed_callers": ["code_execution_20260120"],
           "input_schema": {"type": "object", "properties": {"employee_id": {"type": "string"}, "limit": {"type": "integer"}}}})
}

#[tokio::test]
async fn client_tools_pause_the_script_and_results_resume_it() {
    let app = router();
    let code = "import asyncio, json, sluice\nteam = json.loads(await get_team({}))\nrows = await asyncio.gather(*[get_expenses({'employee_id': m, 'limit': '5'}) for m in team])\nsluice.count('rows', len(rows))\nprint(sorted(rows))";
    let (status, first) = post(
        &app,
        "/v1/executions",
        json!({"code": code, "tools": [client_tool("get_team"), client_tool("get_expenses")]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["status"], "requires_action");
    assert_eq!(first["type"], "execution");
    let exec_id = first["id"].as_str().unwrap().to_owned();
    let uses = first["tool_uses"].as_array().unwrap();
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0]["type"], "tool_use");
    assert_eq!(uses[0]["name"], "get_team");
    assert_eq!(uses[0]["caller"], json!({"type": "code_execution_20260120", "tool_id": exec_id}));
    assert!(first["result"].is_null());

    let uri = format!("/v1/executions/{exec_id}/tool_results");
    let answer =
        json!({"tool_results": [{"type": "tool_result", "tool_use_id": uses[0]["id"], "content": "[\"a\", \"b\"]"}]});
    let (status, second) = post(&app, &uri, answer).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let uses = second["tool_uses"].as_array().unwrap();
    assert_eq!(uses.len(), 2, "the gather pauses once with both calls");
    assert_eq!(uses[0]["input"], json!({"employee_id": "a", "limit": 5}), "inputs show the coerced arguments");

    let results: Vec<Value> = uses
        .iter()
        .map(|u| {
            let text = format!("rows of {}", u["input"]["employee_id"].as_str().unwrap());
            json!({"type": "tool_result", "tool_use_id": u["id"], "content": [{"type": "text", "text": text}]})
        })
        .collect();
    let (status, done) = post(&app, &uri, json!({"tool_results": results})).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["type"], "code_execution_result");
    assert_eq!(done["result"]["stdout"], "['rows of a', 'rows of b']\n");
    assert_eq!(done["result"]["return_code"], 0);
    assert_eq!(done["counts"], json!({"rows": 2}));
    assert_eq!(done["usage"]["tool_calls"], 3);
    assert!(done["tool_uses"].as_array().unwrap().is_empty());

    let (_, audit) = send(&app, "GET", &format!("/v1/executions/{exec_id}"), None, None).await;
    assert_eq!(audit["code"], code);
    let ledger = audit["ledger"].as_array().unwrap();
    assert_eq!(ledger.len(), 3);
    assert!(ledger.iter().all(|c| c["status"] == "succeeded"));
    assert_eq!(ledger[1]["coerced"], true);
}

#[tokio::test]
async fn tool_results_must_answer_exactly_the_pending_calls() {
    let app = router();
    let code = "import asyncio\nprint(await asyncio.gather(t({}), t({})))";
    let (_, paused) = post(&app, "/v1/executions", json!({"code": code, "tools": [client_tool("t")]})).await;
    let uri = format!("/v1/executions/{}/tool_results", paused["id"].as_str().unwrap());
    let ids: Vec<Value> = paused["tool_uses"].as_array().unwrap().iter().map(|u| u["id"].clone()).collect();
    let block = |id: &Value| json!({"type": "tool_result", "tool_use_id": id, "content": "x"});
    for bad in [
        json!({"tool_results": [block(&ids[0])]}),
        json!({"tool_results": [block(&ids[0]), block(&ids[0])]}),
        json!({"tool_results": [block(&ids[0]), block(&ids[1]), block(&json!("call_unknown"))]}),
        json!({"tool_results": [{"type": "tool_result", "tool_use_id": ids[0], "content": 5}, block(&ids[1])]}),
        json!({"tool_results": [{"type": "image", "tool_use_id": ids[0]}, block(&ids[1])]}),
    ] {
        let (status, error) = post(&app, &uri, bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad} -> {error}");
        assert_eq!(error["error"]["type"], "invalid_request_error");
    }
    // Nothing was lost: the right answer still completes the execution.
    let (status, done) = post(&app, &uri, json!({"tool_results": [block(&ids[1]), block(&ids[0])]})).await;
    assert_eq!((status, done["status"].as_str()), (StatusCode::OK, Some("completed")), "{done}");
    assert_eq!(done["result"]["stdout"], "['x', 'x']\n");
    // And a finished execution takes no more results.
    let (status, _) = post(&app, &uri, json!({"tool_results": [block(&ids[0])]})).await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn error_results_and_refusals_raise_distinct_exceptions_and_are_recorded() {
    let app = router();
    let mut quota = client_tool("limited");
    quota["max_calls_per_execution"] = json!(1);
    quota["executor"] = json!({"type": "client"});
    let code = r#"
import sluice
out = []
for attempt in [
    lambda: sluice.call_tool("missing", {}),
    lambda: direct_only({}),
    lambda: get_expenses({"employee_id": "e", "limit": "lots"}),
]:
    try:
        await attempt()
    except sluice.ToolError as e:
        out.append((type(e).__name__, e.code, e.details.get("pointer")))
await limited({})
try:
    await limited({})
except sluice.ToolNotAllowedError as e:
    out.append(("quota", e.code, None))
try:
    await get_expenses({"employee_id": "e"})
except sluice.ToolError as e:
    out.append(("client error", e.code, str(e)))
print(out)
"#;
    let tools = json!([client_tool("get_expenses"), quota, {"name": "direct_only"}]);
    let (_, paused) = post(&app, "/v1/executions", json!({"code": code, "tools": tools})).await;
    assert_eq!(paused["status"], "requires_action", "{paused}");
    let uri = format!("/v1/executions/{}/tool_results", paused["id"].as_str().unwrap());
    let use_id = paused["tool_uses"][0]["id"].clone();
    assert_eq!(paused["tool_uses"][0]["name"], "limited");
    let (_, paused) =
        post(&app, &uri, json!({"tool_results": [{"type": "tool_result", "tool_use_id": use_id, "content": "ok"}]}))
            .await;
    let use_id = paused["tool_uses"][0]["id"].clone();
    assert_eq!(paused["tool_uses"][0]["name"], "get_expenses");
    let error = json!({"tool_results": [{"type": "tool_result", "tool_use_id": use_id, "content": "card declined", "is_error": true}]});
    let (_, done) = post(&app, &uri, error).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["stdout"],
        "[('ToolNotAllowedError', 'unknown_tool', None), ('ToolNotAllowedError', 'not_allowed', None), \
         ('ToolInputError', 'invalid_input', '/limit'), ('quota', 'quota_exceeded', None), \
         ('client error', 'tool_error', 'card declined')]\n"
    );
    let (_, audit) = send(&app, "GET", &format!("/v1/executions/{}", done["id"].as_str().unwrap()), None, None).await;
    let statuses: Vec<(&str, &str)> = audit["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["tool"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("missing", "refused"),
            ("direct_only", "refused"),
            ("get_expenses", "refused"),
            ("limited", "succeeded"),
            ("limited", "refused"),
            ("get_expenses", "failed")
        ]
    );
}

/// A local tool server: `/slow` answers after 200 ms, `/flaky` fails twice then answers,
/// `/boom` always fails, `/echo` returns the arguments it got.
async fn tool_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use axum::routing::post as route_post;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let flaky = Arc::new(AtomicUsize::new(0));
    let counter = flaky.clone();
    let app = Router::new()
        .route(
            "/slow",
            route_post(|body: String| async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                body
            }),
        )
        .route(
            "/flaky",
            route_post(move || {
                let counter = counter.clone();
                async move {
                    if counter.fetch_add(1, Ordering::SeqCst) < 2 {
                        (StatusCode::SERVICE_UNAVAILABLE, "try again".to_owned())
                    } else {
                        (StatusCode::OK, "finally".to_owned())
                    }
                }
            }),
        )
        .route("/boom", route_post(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }))
        .route(
            "/echo",
            route_post(|headers: axum::http::HeaderMap, body: String| async move {
                let key = headers.get("idempotency-key").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
                format!("{body}|{}", key.len())
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), flaky)
}

fn http_tool(name: &str, url: String, side_effects: &str) -> Value {
    // `requires_approval: false`: these tests are about executors, not approvals (tests/integration/approvals.rs).
    json!({"name": name, "allowed_callers": ["code_execution_20250825"], "executor": {"type": "http", "url": url},
           "side_effects": side_effects, "timeout_ms": 2000, "requires_approval": false})
}

#[tokio::test]
async fn http_tools_run_concurrently_and_retry_only_when_allowed() {
    let (base, flaky_hits) = tool_server().await;
    let app = router_allowing(&base);
    let tools = json!([
        http_tool("slow", format!("{base}/slow"), "read_only"),
        http_tool("flaky", format!("{base}/flaky"), "idempotent"),
        http_tool("boom_write", format!("{base}/boom"), "write"),
        http_tool("echo", format!("{base}/echo"), "write"),
    ]);
    let code = r#"
import asyncio, sluice
results = await asyncio.gather(*(slow({"i": i}) for i in range(10)))
print(len(results), results[3])
print(await flaky({}))
try:
    await boom_write({})
except sluice.ToolUnavailableError as e:
    print("unavailable", e.code)
print(await echo({"x": 1}))
"#;
    let started = Instant::now();
    let (status, done) = post(&app, "/v1/executions", json!({"code": code, "tools": tools})).await;
    let elapsed = started.elapsed();
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["stdout"], "10 {\"i\":3}\nfinally\nunavailable unavailable\n{\"x\":1}|32\n");
    // Ten 200 ms calls, gathered: far less than the 2 s they would take one after another.
    assert!(elapsed < Duration::from_millis(1500), "took {elapsed:?}");
    assert_eq!(flaky_hits.load(std::sync::atomic::Ordering::SeqCst), 3, "two retries for an idempotent tool");
    let (_, audit) = send(&app, "GET", &format!("/v1/executions/{}", done["id"].as_str().unwrap()), None, None).await;
    let ledger = audit["ledger"].as_array().unwrap();
    let by_tool = |name: &str| ledger.iter().find(|c| c["tool"] == name).unwrap().clone();
    assert_eq!(by_tool("flaky")["attempts"], 3);
    assert_eq!(by_tool("boom_write")["attempts"], 1, "write tools are never retried blindly");
    assert_eq!(by_tool("boom_write")["status"], "failed");
    assert_eq!(by_tool("echo")["idempotency_key"].as_str().unwrap().len(), 32);
}

#[tokio::test]
async fn an_unanswered_client_call_times_out_inside_the_script() {
    let app = router();
    let code = "try:\n    await slow({})\nexcept TimeoutError as e:\n    print('gave up:', type(e).__name__)";
    let body = json!({"code": code, "tools": [client_tool("slow")], "limits": {"pending_timeout_ms": 200}});
    let (_, paused) = post(&app, "/v1/executions", body).await;
    assert_eq!(paused["status"], "requires_action");
    let uri = format!("/v1/executions/{}", paused["id"].as_str().unwrap());
    let mut view = Value::Null;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        view = send(&app, "GET", &uri, None, None).await.1;
        if view["status"] == "completed" {
            break;
        }
    }
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(view["result"]["stdout"], "gave up: ToolTimeoutError\n");
    assert_eq!(view["ledger"][0]["status"], "timed_out");
}

#[tokio::test]
async fn containers_keep_state_run_one_execution_at_a_time_and_can_be_deleted() {
    let app = router();
    let (status, container) = send(&app, "POST", "/v1/containers", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(container["type"], "container");
    assert!(container["expires_at"].as_str().unwrap().ends_with('Z'));
    let id = container["id"].as_str().unwrap().to_owned();
    let (_, first) = post(&app, "/v1/executions", json!({"code": "total = 41", "container": id})).await;
    assert_eq!(first["status"], "completed");
    let (_, paused) =
        post(&app, "/v1/executions", json!({"code": "x = await t({})", "container": id, "tools": [client_tool("t")]}))
            .await;
    assert_eq!(paused["status"], "requires_action");
    let (status, busy) = post(&app, "/v1/executions", json!({"code": "total", "container": id})).await;
    assert_eq!((status, busy["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
    assert_eq!((busy["type"].as_str(), busy["error"]["type"].as_str()), (Some("error"), Some("invalid_request_error")));
    let uri = format!("/v1/executions/{}/tool_results", paused["id"].as_str().unwrap());
    let answer =
        json!({"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "1"}]});
    post(&app, &uri, answer).await;
    let (_, sum) = post(&app, "/v1/executions", json!({"code": "total + int(x)", "container": id})).await;
    assert_eq!(sum["result"]["value_repr"], "42");
    assert_eq!(sum["container"]["id"], id.as_str());

    let (status, _) = send(&app, "DELETE", &format!("/v1/containers/{id}"), None, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = send(&app, "GET", &format!("/v1/containers/{id}"), None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = post(&app, "/v1/executions", json!({"code": "1", "container": id})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "never a silent new container");
}

#[tokio::test]
async fn idle_containers_expire_and_answer_410() {
    let config = ServiceConfig { idle_timeout: Duration::from_millis(300), ..ServiceConfig::default() };
    let app = router_with(config, &[]);
    let (_, done) = post(&app, "/v1/executions", json!({"code": "x = 1"})).await;
    let id = done["container"]["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let (status, gone) = send(&app, "GET", &format!("/v1/containers/{id}"), None, None).await;
    assert_eq!((status, gone["error"]["code"].as_str()), (StatusCode::GONE, Some("container_expired")));
    let (status, _) = post(&app, "/v1/executions", json!({"code": "x", "container": id})).await;
    assert_eq!(status, StatusCode::GONE);
}

#[tokio::test]
async fn api_keys_isolate_owners() {
    let app = router_with(ServiceConfig::default(), &["key-a", "key-b"]);
    let (status, error) = post(&app, "/v1/executions", json!({"code": "1"})).await;
    assert_eq!((status, error["error"]["type"].as_str()), (StatusCode::UNAUTHORIZED, Some("authentication_error")));
    let (status, _) = send(&app, "POST", "/v1/executions", Some(json!({"code": "1"})), Some("wrong")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, mine) = send(&app, "POST", "/v1/executions", Some(json!({"code": "secret = 1"})), Some("key-a")).await;
    assert_eq!(status, StatusCode::OK);
    let container = mine["container"]["id"].as_str().unwrap();
    let execution = mine["id"].as_str().unwrap();
    for (method, uri) in
        [("GET", format!("/v1/containers/{container}")), ("GET", format!("/v1/executions/{execution}"))]
    {
        let (status, _) = send(&app, method, &uri, None, Some("key-b")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri} is invisible to another key");
        let (status, _) = send(&app, method, &uri, None, Some("key-a")).await;
        assert_eq!(status, StatusCode::OK);
    }
    let body = json!({"code": "secret", "container": container});
    let (status, _) = send(&app, "POST", "/v1/executions", Some(body), Some("key-b")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_requests_get_clear_typed_errors() {
    let app = router();
    let raw = |body: &'static str| {
        Request::builder()
            .method("POST")
            .uri("/v1/executions")
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap()
    };
    for (body, status) in [
        ("{not json", StatusCode::BAD_REQUEST),
        (r#"{"code": 5}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "colour": "red"}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "limits": {"time_ms": 999999999}}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "limits": {"cpu": 1}}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "tool_names": ["nope"]}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "tools": [{"name": "a b"}]}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "tools": [{"name": "t", "allowed_callers": ["root"]}]}"#, StatusCode::BAD_REQUEST),
        (r#"{"code": "1", "container": "not-a-uuid"}"#, StatusCode::NOT_FOUND),
        (r#"{"code": "1", "container": "7f1c3a52-0000-4000-8000-000000000000"}"#, StatusCode::NOT_FOUND),
    ] {
        let response = app.clone().oneshot(raw(body)).await.unwrap();
        assert_eq!(response.status(), status, "{body}");
        let header = response.headers()["request-id"].to_str().unwrap().to_owned();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let error: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(error["error"]["type"].is_string() && error["error"]["message"].is_string(), "{body}: {error}");
        assert_eq!((error["type"].as_str(), error["request_id"].as_str()), (Some("error"), Some(header.as_str())));
        assert!(header.starts_with("req_"), "{header}");
    }
    let huge = format!(r#"{{"code": "{}"}}"#, "x".repeat(5 << 20));
    let response = app
        .clone()
        .oneshot(
            Request::builder()
                .method("POST")
                .uri("/v1/executions")
                .header("content-type", "application/json")
                .body(Body::from(huge))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (status, error) = post(&app, "/v1/executions", json!({"code": "#".repeat(2 << 20)})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    let circular = json!({"name": "tree", "input_schema": {"$defs": {"n": {"properties": {"c": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}});
    let (status, error) = post(&app, "/v1/tools", circular).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error["error"]["message"].as_str().unwrap().contains("circular"), "{error}");
    let (status, error) = send(&app, "GET", "/v1/nowhere", None, None).await;
    assert_eq!((status, error["error"]["type"].as_str()), (StatusCode::NOT_FOUND, Some("not_found_error")));
}

#[tokio::test]
async fn a_limit_stop_is_a_failed_execution_with_a_stable_type() {
    let app = router();
    let (status, failed) =
        post(&app, "/v1/executions", json!({"code": "print('go')\nwhile True: pass", "limits": {"time_ms": 200}}))
            .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["type"], "execution_time_exceeded");
    assert_eq!(failed["result"]["stdout"], "go\n");
    assert_ne!(failed["result"]["return_code"], 0);
    let (_, python_error) = post(&app, "/v1/executions", json!({"code": "1/0"})).await;
    assert_eq!(python_error["status"], "completed");
    assert_eq!(python_error["result"]["return_code"], 1);
    assert!(python_error["result"]["stderr"].as_str().unwrap().contains("ZeroDivisionError"));
}

#[tokio::test]
async fn the_tool_registry_serves_tools_by_name() {
    let app = router();
    let (status, created) = post(&app, "/v1/tools", client_tool("lookup")).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, _) = post(&app, "/v1/tools", client_tool("lookup")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, list) = send(&app, "GET", "/v1/tools", None, None).await;
    assert_eq!(list["data"][0]["name"], "lookup");
    let (_, one) = send(&app, "GET", "/v1/tools/lookup", None, None).await;
    assert_eq!(one["allowed_callers"], json!(["code_execution_20260120"]));
    let (_, paused) = post(&app, "/v1/executions", json!({"code": "await lookup({})", "tool_names": ["lookup"]})).await;
    assert_eq!(paused["tool_uses"][0]["name"], "lookup");
    let (status, _) = send(&app, "DELETE", "/v1/tools/lookup", None, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = send(&app, "GET", "/v1/tools/lookup", None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn health_metrics_and_openapi_are_served() {
    let app = router();
    post(&app, "/v1/executions", json!({"code": "1"})).await;
    let (status, health) = send(&app, "GET", "/healthz", None, None).await;
    assert_eq!((status, health["status"].as_str()), (StatusCode::OK, Some("ok")));
    let (_, metrics) = send(&app, "GET", "/metrics", None, None).await;
    let metrics = metrics.as_str().unwrap();
    assert!(metrics.contains("sluice_executions_total{status=\"completed\"} 1"), "{metrics}");
    assert!(metrics.contains("sluice_containers 1"));
    let (_, doc) = send(&app, "GET", "/openapi.json", None, None).await;
    for path in ["/v1/executions", "/v1/executions/{id}/tool_results", "/v1/containers/{id}", "/v1/tools/{name}"] {
        assert!(doc["paths"][path].is_object(), "openapi lacks {path}");
    }
}

#[tokio::test]
async fn the_service_answers_over_a_real_listener() {
    let state = AppState::new(Service::new(common::sandbox(), ServiceConfig::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(sluice::serve(listener, state, async move {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::new();
    let response = client
        .post(format!("http://{address}/v1/executions"))
        .header("content-type", "application/json")
        .body(json!({"code": "sum(range(5))"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["result"]["value_repr"], "10");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_audit_trail_is_listed_exported_and_replayed_over_http() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("api-audit-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = sluice::Store::sqlite_url(&dir);
    let store = Arc::new(sluice::Store::open(&url, &common::server_key()).await.unwrap());
    let app = app(AppState::new(Service::with_store(common::sandbox(), ServiceConfig::default(), store)));
    let (_, paused) =
        post(&app, "/v1/executions", json!({"code": "print(len(await t({})))", "tools": [client_tool("t")]})).await;
    let id = paused["id"].as_str().unwrap().to_owned();
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "abcd"}]});
    let (_, done) = post(&app, &format!("/v1/executions/{id}/tool_results"), answer).await;
    assert_eq!(done["result"]["stdout"], "4\n");
    post(&app, "/v1/executions", json!({"code": "1/0"})).await;

    let (status, listed) = send(&app, "GET", "/v1/executions?tool=t", None, None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    assert_eq!(listed["data"][0]["id"], id.as_str());
    let (_, errors) =
        send(&app, "GET", "/v1/executions?outcome=python_error&since=2020-01-01T00:00:00Z", None, None).await;
    assert_eq!(errors["data"].as_array().unwrap().len(), 1);
    let (status, _) = send(&app, "GET", "/v1/executions?since=yesterday", None, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, replayed) = send(&app, "POST", &format!("/v1/executions/{id}/replay"), None, None).await;
    assert_eq!(status, StatusCode::OK, "{replayed}");
    assert_eq!(replayed["result"], "identical");

    // A tool whose results must not be stored keeps only their hash: on record, not replayable.
    let mut secret = client_tool("secret");
    secret["result_storage"] = json!("hash");
    let (_, paused) =
        post(&app, "/v1/executions", json!({"code": "print(len(await secret({})))", "tools": [secret]})).await;
    let secret_id = paused["id"].as_str().unwrap().to_owned();
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "hunter2"}]});
    post(&app, &format!("/v1/executions/{secret_id}/tool_results"), answer).await;
    let (_, audit) = send(&app, "GET", &format!("/v1/executions/{secret_id}"), None, None).await;
    assert!(audit["ledger"][0]["result"].is_null(), "{audit}");
    assert_eq!(audit["ledger"][0]["result_bytes"], 7);
    assert_eq!(audit["ledger"][0]["result_sha256"].as_str().unwrap().len(), 64);
    let (status, refused) = send(&app, "POST", &format!("/v1/executions/{secret_id}/replay"), None, None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");

    let container = done["container"]["id"].as_str().unwrap();
    let (status, bundle) = send(&app, "GET", &format!("/v1/containers/{container}/export"), None, None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, records) = sluice::read_bundle(bundle.as_str().unwrap()).unwrap();
    assert_eq!(records[0].kind, "container_created");
    assert!(records.iter().any(|r| r.kind == "execution_finished"));
}

#[tokio::test]
async fn a_sqlite_history_replays_identically() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("api-sqlite-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Arc::new(sluice::Store::open(&sluice::Store::sqlite_url(&dir), &common::server_key()).await.unwrap());
    let app = app(AppState::new(Service::with_store(common::sandbox(), ServiceConfig::default(), store)));
    // random() and datetime('now') come from the sandbox's seeded stream and virtual clock.
    let setup = "import sqlite3\ndb = sqlite3.connect(':memory:')\n\
                 db.execute(\"create table t as select random() as r, datetime('now') as at\")";
    let (_, first) = post(&app, "/v1/executions", json!({"code": setup})).await;
    assert_eq!(first["status"], "completed", "{first}");
    let container = first["container"]["id"].as_str().unwrap();
    let (_, second) = post(
        &app,
        "/v1/executions",
        json!({"code": "print(db.execute('select * from t').fetchall())", "container": container}),
    )
    .await;
    assert!(second["result"]["stdout"].as_str().unwrap().starts_with("[("), "{second}");
    let id = second["id"].as_str().unwrap();
    let (status, replayed) = send(&app, "POST", &format!("/v1/executions/{id}/replay"), None, None).await;
    assert_eq!(status, StatusCode::OK, "{replayed}");
    assert_eq!(replayed["result"], "identical", "{replayed}");
}

/// A server that accepts connections and closes them at once.
async fn resetting_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(socket);
        }
    });
    (format!("http://{address}/reset"), accepted)
}

#[tokio::test]
async fn http_tool_faults_reach_the_script_as_typed_exceptions() {
    use axum::routing::post as route_post;
    let hang_hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hang_hits.clone();
    let tools_app = Router::new()
        .route(
            "/hang",
            route_post(move || {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    "too late"
                }
            }),
        )
        .route("/garbage", route_post(|| async { axum::body::Bytes::from_static(b"\xff\xfe{not json") }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, tools_app).await });
    let (reset_url, resets) = resetting_server().await;
    let tool = |name: &str, url: String, side_effects: &str| {
        json!({"name": name, "allowed_callers": ["code_execution_20260120"], "side_effects": side_effects,
               "executor": {"type": "http", "url": url}, "timeout_ms": 200, "requires_approval": false})
    };
    let tools = json!([
        tool("hang_read", format!("{base}/hang"), "read_only"),
        tool("hang_write", format!("{base}/hang"), "write"),
        tool("reset", reset_url.clone(), "idempotent"),
        tool("garbage", format!("{base}/garbage"), "read_only"),
    ]);
    let code = r#"
import json, sluice
out = []
for name, call in [("hang_read", hang_read), ("hang_write", hang_write), ("reset", reset)]:
    try:
        await call({})
    except TimeoutError as e:
        out.append((name, "TimeoutError", type(e).__name__, e.code))
    except sluice.ToolUnavailableError as e:
        out.append((name, "ToolUnavailableError", e.code))
text = await garbage({})
try:
    json.loads(text)
except ValueError:
    out.append(("garbage", "not JSON, as text", "{not json" in text))
print(out)
"#;
    let reset_base = reset_url.trim_end_matches("/reset");
    let policy = EgressPolicy::new([format!("{base}/"), format!("{reset_base}/")]).unwrap();
    let config = ServiceConfig { http: HttpExecutor::new(policy, &[]).unwrap(), ..ServiceConfig::default() };
    let app = router_with(config, &[]);
    let (status, done) = post(&app, "/v1/executions", json!({"code": code, "tools": tools})).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(
        done["result"]["stdout"],
        "[('hang_read', 'TimeoutError', 'ToolTimeoutError', 'timeout'), ('hang_write', 'TimeoutError', 'ToolTimeoutError', 'timeout'), \
         ('reset', 'ToolUnavailableError', 'unavailable'), ('garbage', 'not JSON, as text', True)]\n",
        "{done}"
    );
    assert_eq!(
        hang_hits.load(std::sync::atomic::Ordering::SeqCst),
        3 + 1,
        "read_only retried to 3 attempts, write once"
    );
    assert_eq!(resets.load(std::sync::atomic::Ordering::SeqCst), 3, "idempotent retried");
    let (_, audit) = send(&app, "GET", &format!("/v1/executions/{}", done["id"].as_str().unwrap()), None, None).await;
    let statuses: Vec<(&str, &str, u64)> = audit["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["tool"].as_str().unwrap(), c["status"].as_str().unwrap(), c["attempts"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("hang_read", "timed_out", 3),
            ("hang_write", "timed_out", 1),
            ("reset", "failed", 3),
            ("garbage", "succeeded", 1)
        ]
    );
}

#[tokio::test]
async fn anthropic_shapes_are_taken_and_given() {
    let app = router();
    // Accepted as Anthropic accepts them: a container object, cache_control on a tool result,
    // citations on a text block, eager_input_streaming on a tool.
    let mut tool = client_tool("t");
    tool["eager_input_streaming"] = json!(true);
    let (_, first) = post(&app, "/v1/executions", json!({"code": "x = await t({})\nprint(x)", "tools": [tool]})).await;
    assert_eq!(first["status"], "requires_action", "{first}");
    assert!(first.get("code_execution_tool_result").is_none(), "not finished: {first}");
    let uri = format!("/v1/executions/{}/tool_results", first["id"].as_str().unwrap());
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": first["tool_uses"][0]["id"],
        "cache_control": {"type": "ephemeral"},
        "content": [{"type": "text", "text": "cited", "citations": [{"type": "char_location", "cited_text": "c"}]}]}]});
    let (status, done) = post(&app, &uri, answer).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let block = &done["code_execution_tool_result"];
    assert_eq!(block["type"], "code_execution_tool_result");
    assert_eq!(block["tool_use_id"], done["id"]);
    assert_eq!(
        (&block["content"]["type"], &block["content"]["stdout"]),
        (&json!("code_execution_result"), &json!("cited\n"))
    );
    assert_eq!(done["usage"]["server_tool_use"]["code_execution_requests"], 1);
    let container = json!({"id": done["container"]["id"]});
    let (_, again) = post(&app, "/v1/executions", json!({"code": "print(x * 2)", "container": container})).await;
    assert_eq!(again["result"]["stdout"], "citedcited\n", "{again}");

    // A stop maps to the closest of Anthropic's codes, Sluice's own kept beside it.
    let (_, stopped) =
        post(&app, "/v1/executions", json!({"code": "while True: pass", "limits": {"time_ms": 200}})).await;
    let content = &stopped["code_execution_tool_result"]["content"];
    assert_eq!(content["type"], "code_execution_tool_result_error", "{stopped}");
    assert_eq!(
        (&content["error_code"], &content["sluice_error_code"]),
        (&json!("execution_time_exceeded"), &json!("execution_time_exceeded"))
    );
    let mut spender = client_tool("t");
    spender["executor"] = json!({"type": "client"});
    let (_, too_many) = post(
        &app,
        "/v1/executions",
        json!({"code": "import asyncio\nawait asyncio.gather(*[t({}) for _ in range(5)])", "tools": [spender], "limits": {"max_tool_calls": 2}}),
    )
    .await;
    let content = &too_many["code_execution_tool_result"]["content"];
    assert_eq!(
        (&content["error_code"], &content["sluice_error_code"]),
        (&json!("too_many_requests"), &json!("tool_call_limit_exceeded")),
        "{too_many}"
    );

    // Refused as Anthropic refuses it: strict on a tool code may call.
    let mut strict = client_tool("s");
    strict["strict"] = json!(true);
    let (status, refused) = post(&app, "/v1/executions", json!({"code": "1", "tools": [strict]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(refused["error"]["message"].as_str().unwrap().contains("strict"), "{refused}");
}
