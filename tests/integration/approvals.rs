//! Approvals through the HTTP API: writes held for a person, decisions that resume or raise,
//! the operator's policy deciding without a person, timeouts, restarts, previews, replay.

use crate::api::send;
use crate::common;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use sluice::{ApiKeys, AppState, ApprovalPolicy, EgressPolicy, HttpExecutor, Service, ServiceConfig, Store, app};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A tool server that records every call: `/write` answers `done <n>`, `/read` echoes.
async fn tool_server() -> (String, Arc<Mutex<Vec<Value>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let app = Router::new()
        .route(
            "/write",
            axum::routing::post(move |body: String| {
                let seen = seen.clone();
                async move {
                    let mut calls = seen.lock().unwrap();
                    calls.push(serde_json::from_str(&body).unwrap_or(Value::Null));
                    format!("done {}", calls.len())
                }
            }),
        )
        .route("/read", axum::routing::post(|body: String| async move { body }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), calls)
}

fn config(base: &str, policy: ApprovalPolicy) -> ServiceConfig {
    let egress = EgressPolicy::new([format!("{base}/")]).unwrap();
    ServiceConfig { http: HttpExecutor::new(egress, &[]).unwrap(), approvals: policy, ..ServiceConfig::default() }
}

fn router(service: Service, keys: &[&str]) -> Router {
    app(AppState { keys: Arc::new(ApiKeys::new(keys)), ..AppState::new(service) })
}

fn tools(base: &str) -> Value {
    json!([
        {"name": "refund", "allowed_callers": ["code_execution_20260120"], "side_effects": "write",
         "input_schema": {"type": "object", "properties": {"amount": {"type": "number"}}},
         "executor": {"type": "http", "url": format!("{base}/write")}},
        {"name": "lookup", "allowed_callers": ["code_execution_20260120"], "side_effects": "read_only",
         "executor": {"type": "http", "url": format!("{base}/read")}}
    ])
}

async fn post(app: &Router, uri: &str, body: Value) -> (StatusCode, Value) {
    send(app, "POST", uri, Some(body), None).await
}

fn decision(request: &Value, word: &str) -> Value {
    json!({"id": request["id"], "decision": word})
}

#[tokio::test]
async fn a_gather_of_writes_waits_for_each_decision_and_denials_raise_in_the_script() {
    let (base, calls) = tool_server().await;
    let app = router(Service::new(common::sandbox(), config(&base, ApprovalPolicy::default())), &[]);
    let code = r#"
import asyncio, sluice
print(await lookup({"q": 1}))
results = await asyncio.gather(refund({"amount": "12.5"}), refund({"amount": 99}), return_exceptions=True)
for r in results:
    print(type(r).__name__, getattr(r, "code", r))
"#;
    let (status, paused) = post(&app, "/v1/executions", json!({"code": code, "tools": tools(&base)})).await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["status"], "requires_action", "{paused}");
    assert_eq!(paused["tool_uses"], json!([]), "nothing for the caller to run");
    let requests = paused["approval_requests"].as_array().unwrap().clone();
    assert_eq!(requests.len(), 2, "both writes of the gather wait: {paused}");
    let first = &requests[0];
    assert_eq!(
        (&first["type"], &first["name"], &first["executor"]),
        (&json!("approval_request"), &json!("refund"), &json!("http"))
    );
    assert_eq!(first["input"], json!({"amount": 12.5}), "the arguments as the tool would get them");
    assert_eq!((&first["call_number"], &first["calls_so_far"]), (&json!(2), &json!({"lookup": 1})));
    assert!(
        first["id"].as_str().unwrap().starts_with("apr_")
            && first["tool_use_id"].as_str().unwrap().starts_with("call_")
    );
    assert_eq!(first["reason"], "refund requires approval");
    assert!(calls.lock().unwrap().is_empty(), "no write ran before its approval");

    let id = paused["id"].as_str().unwrap();
    let uri = format!("/v1/executions/{id}/approvals");
    // Tool results are not what it waits for.
    let (status, refused) = post(&app, &format!("/v1/executions/{id}/tool_results"), json!({"tool_results": []})).await;
    assert_eq!((status, &refused["error"]["type"]), (StatusCode::BAD_REQUEST, &json!("invalid_request_error")));

    let body = json!({"decisions": [decision(first, "approve")], "by": "ana@example.com"});
    let (status, half) = post(&app, &uri, body).await;
    assert_eq!(status, StatusCode::OK, "{half}");
    assert_eq!(half["status"], "requires_action", "the second write still waits: {half}");
    assert_eq!(half["approval_requests"].as_array().unwrap().len(), 1);
    assert_eq!(calls.lock().unwrap().len(), 1, "the approved write ran at once");

    let body = json!({"decisions": [{"id": requests[1]["id"], "decision": "deny", "reason": "too much"}]});
    let (status, done) = post(&app, &uri, body).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["stdout"], "{\"q\":1}\nstr done 1\nToolDeniedError denied\n");
    assert_eq!(calls.lock().unwrap().len(), 1, "the denied write never ran");

    let (_, record) = send(&app, "GET", &format!("/v1/executions/{id}"), None, None).await;
    let ledger = record["ledger"].as_array().unwrap();
    assert_eq!(ledger[0].get("approval"), None, "a read no rule decided has no decision");
    assert_eq!((&ledger[1]["status"], &ledger[1]["approval"]["decision"]), (&json!("succeeded"), &json!("approved")));
    assert_eq!(
        (&ledger[1]["approval"]["by"], &ledger[1]["approval"]["asked"]),
        (&json!("ana@example.com"), &json!(true))
    );
    assert_eq!((&ledger[2]["status"], &ledger[2]["error_code"]), (&json!("denied"), &json!("denied")));
    assert_eq!(
        (&ledger[2]["approval"]["by"], &ledger[2]["approval"]["reason"]),
        (&json!("anonymous"), &json!("too much"))
    );
}

#[tokio::test]
async fn bad_decisions_change_nothing_and_other_keys_see_nothing() {
    let (base, calls) = tool_server().await;
    let app = router(Service::new(common::sandbox(), config(&base, ApprovalPolicy::default())), &["k1", "k2"]);
    let code = "print(await refund({'amount': 1}))";
    let (_, paused) =
        send(&app, "POST", "/v1/executions", Some(json!({"code": code, "tools": tools(&base)})), Some("k1")).await;
    let id = paused["id"].as_str().unwrap();
    let request = &paused["approval_requests"][0];
    let uri = format!("/v1/executions/{id}/approvals");
    for (body, status, needle) in [
        (json!({"decisions": []}), StatusCode::BAD_REQUEST, "no decisions"),
        (json!({"decisions": [{"id": "apr_nope", "decision": "approve"}]}), StatusCode::BAD_REQUEST, "apr_nope"),
        (
            json!({"decisions": [decision(request, "approve"), decision(request, "deny")]}),
            StatusCode::BAD_REQUEST,
            "twice",
        ),
        (json!({"decisions": [decision(request, "maybe")]}), StatusCode::BAD_REQUEST, "maybe"),
        (
            json!({"decisions": [{"id": request["tool_use_id"], "decision": "approve"}]}),
            StatusCode::BAD_REQUEST,
            "call_",
        ),
        (json!({"decisions": [decision(request, "approve")], "by": "x".repeat(2000)}), StatusCode::BAD_REQUEST, "by"),
    ] {
        let (got, error) = send(&app, "POST", &uri, Some(body.clone()), Some("k1")).await;
        assert_eq!(got, status, "{body}: {error}");
        assert!(error["error"]["message"].as_str().unwrap().contains(needle), "{body}: {error}");
    }
    let (status, _) =
        send(&app, "POST", &uri, Some(json!({"decisions": [decision(request, "approve")]})), Some("k2")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another key cannot decide");
    assert!(calls.lock().unwrap().is_empty());
    let (status, done) =
        send(&app, "POST", &uri, Some(json!({"decisions": [decision(request, "approve")]})), Some("k1")).await;
    assert_eq!((status, &done["result"]["stdout"]), (StatusCode::OK, &json!("done 1\n")), "{done}");
    let (status, late) =
        send(&app, "POST", &uri, Some(json!({"decisions": [decision(request, "approve")]})), Some("k1")).await;
    assert_eq!((status, &late["error"]["code"]), (StatusCode::CONFLICT, &json!("conflict")), "{late}");
    assert_eq!(calls.lock().unwrap().len(), 1, "approved once, run once");
}

#[tokio::test]
async fn the_operators_policy_decides_by_argument_count_and_key() {
    let (base, calls) = tool_server().await;
    let blocked = ApiKeys::new(["blocked"]);
    let blocked_owner = {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert("x-api-key", "blocked".parse().unwrap());
        blocked.owner_for(&headers).unwrap()
    };
    let policy = ApprovalPolicy::from_json(
        &json!({"rules": [
            {"tool": "refund", "keys": [blocked_owner], "decision": "deny", "reason": "refunds are off for this key"},
            {"tool": "refund", "when": [{"path": "$.amount", "lte": 100}], "max_per_execution": 2, "decision": "allow"},
            {"tool": "look*", "decision": "ask", "reason": "reads of customer data are reviewed"}
        ]})
        .to_string(),
    )
    .unwrap();
    let app = router(Service::new(common::sandbox(), config(&base, policy)), &["open", "blocked"]);
    let code = r#"
import sluice
for amount in (50, 60, 70):
    try:
        print(await refund({"amount": amount}))
    except sluice.ToolDeniedError as e:
        print("denied", e.code, e.details.get("by"))
"#;
    let body = json!({"code": code, "tools": tools(&base)});
    let (_, paused) = send(&app, "POST", "/v1/executions", Some(body.clone()), Some("open")).await;
    assert_eq!(paused["status"], "requires_action", "the third refund is past the rule's count: {paused}");
    assert_eq!(calls.lock().unwrap().len(), 2, "the first two ran without a person");
    let request = &paused["approval_requests"][0];
    assert_eq!((&request["input"]["amount"], &request["rule"]), (&json!(70), &Value::Null));
    let id = paused["id"].as_str().unwrap();
    let deny = json!({"decisions": [decision(request, "deny")], "by": "ops"});
    let (_, done) = send(&app, "POST", &format!("/v1/executions/{id}/approvals"), Some(deny), Some("open")).await;
    assert_eq!(done["result"]["stdout"], "done 1\ndone 2\ndenied denied ops\n", "{done}");
    let (_, record) = send(&app, "GET", &format!("/v1/executions/{id}"), None, Some("open")).await;
    let first = &record["ledger"][0]["approval"];
    assert_eq!((&first["by"], &first["rule"], &first["asked"]), (&json!("policy"), &json!(1), &json!(false)));

    // The blocked key's refunds are denied by the policy: no pause, the script gets the error.
    let (_, denied) = send(&app, "POST", "/v1/executions", Some(body), Some("blocked")).await;
    assert_eq!(denied["status"], "completed", "{denied}");
    assert_eq!(denied["result"]["stdout"], "denied denied policy\n".repeat(3));
    assert_eq!(calls.lock().unwrap().len(), 2);

    // A rule can hold a read too; an uncaught denial is the script's exception.
    let code = "print(await lookup({'customer': 7}))";
    let (_, paused) =
        send(&app, "POST", "/v1/executions", Some(json!({"code": code, "tools": tools(&base)})), Some("open")).await;
    let request = &paused["approval_requests"][0];
    assert_eq!((&request["rule"], &request["reason"]), (&json!(2), &json!("reads of customer data are reviewed")));
    let id = paused["id"].as_str().unwrap();
    let deny = json!({"decisions": [{"id": request["id"], "decision": "deny", "reason": "not this one"}]});
    let (_, done) = send(&app, "POST", &format!("/v1/executions/{id}/approvals"), Some(deny), Some("open")).await;
    assert_eq!(done["result"]["return_code"], 1, "{done}");
    let stderr = done["result"]["stderr"].as_str().unwrap();
    assert!(stderr.contains("ToolDeniedError: the call to lookup was denied: not this one"), "{stderr}");
}

#[tokio::test]
async fn a_client_tool_that_requires_approval_goes_to_the_caller_once_approved() {
    let app = router(Service::new(common::sandbox(), ServiceConfig::default()), &[]);
    let tool = json!({"name": "send_email", "allowed_callers": ["code_execution_20260120"], "requires_approval": true});
    let code = "print(await send_email({'to': 'a@example.com'}))";
    let (_, paused) = post(&app, "/v1/executions", json!({"code": code, "tools": [tool]})).await;
    assert_eq!((&paused["status"], &paused["tool_uses"]), (&json!("requires_action"), &json!([])), "{paused}");
    let request = paused["approval_requests"][0].clone();
    assert_eq!(request["executor"], "client");
    let id = paused["id"].as_str().unwrap();
    let (_, approved) =
        post(&app, &format!("/v1/executions/{id}/approvals"), json!({"decisions": [decision(&request, "approve")]}))
            .await;
    assert_eq!(approved["status"], "requires_action", "{approved}");
    assert_eq!(approved["tool_uses"][0]["id"], request["tool_use_id"], "the same call, now the caller's");
    assert!(approved.get("approval_requests").is_none());
    let answer =
        json!({"tool_results": [{"type": "tool_result", "tool_use_id": request["tool_use_id"], "content": "sent"}]});
    let (_, done) = post(&app, &format!("/v1/executions/{id}/tool_results"), answer).await;
    assert_eq!(done["result"]["stdout"], "sent\n", "{done}");
}

#[tokio::test]
async fn an_approval_nobody_gives_times_out_as_a_denial() {
    let (base, calls) = tool_server().await;
    let app = router(Service::new(common::sandbox(), config(&base, ApprovalPolicy::default())), &[]);
    let code =
        "import sluice\ntry:\n    await refund({'amount': 1})\nexcept sluice.ToolDeniedError as e:\n    print(e.code)";
    let body = json!({"code": code, "tools": tools(&base), "limits": {"pending_timeout_ms": 200}});
    let (_, paused) = post(&app, "/v1/executions", body).await;
    assert_eq!(paused["status"], "requires_action");
    let uri = format!("/v1/executions/{}", paused["id"].as_str().unwrap());
    let mut view = Value::Null;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        view = send(&app, "GET", &uri, None, None).await.1;
        if view["status"] == "completed" {
            break;
        }
    }
    assert_eq!(view["result"]["stdout"], "approval_timeout\n", "{view}");
    assert_eq!(
        (&view["ledger"][0]["status"], &view["ledger"][0]["approval"]["by"]),
        (&json!("denied"), &json!("timeout"))
    );
    assert!(calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_held_call_survives_a_restart_and_the_decision_is_on_record() {
    let (base, calls) = tool_server().await;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("approvals-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = Store::sqlite_url(&dir);
    let sandbox = common::sandbox();
    let open = || async { Arc::new(Store::open(&url, &common::server_key()).await.unwrap()) };
    let first = Service::with_store(sandbox.clone(), config(&base, ApprovalPolicy::default()), open().await);
    let app = router(first.clone(), &[]);
    let (_, paused) =
        post(&app, "/v1/executions", json!({"code": "print(await refund({'amount': 5}))", "tools": tools(&base)}))
            .await;
    let id = paused["id"].as_str().unwrap().to_owned();
    first.shutdown().await;

    let second = Service::with_store(sandbox, config(&base, ApprovalPolicy::default()), open().await);
    let app = router(second, &[]);
    let (_, waiting) = send(&app, "GET", &format!("/v1/executions/{id}"), None, None).await;
    assert_eq!(waiting["status"], "requires_action", "{waiting}");
    assert_eq!(waiting["approval_requests"][0]["id"], paused["approval_requests"][0]["id"]);
    let approve = json!({"decisions": [decision(&paused["approval_requests"][0], "approve")], "by": "lee"});
    let (status, done) = post(&app, &format!("/v1/executions/{id}/approvals"), approve).await;
    assert_eq!((status, &done["result"]["stdout"]), (StatusCode::OK, &json!("done 1\n")), "{done}");
    assert_eq!(calls.lock().unwrap().len(), 1);

    let (_, approved) = send(&app, "GET", "/v1/executions?approval=approved", None, None).await;
    assert_eq!(approved["data"].as_array().unwrap().len(), 1, "{approved}");
    let (_, asked) = send(&app, "GET", "/v1/executions?approval=asked", None, None).await;
    assert_eq!(asked["data"][0]["id"], json!(id));
    let (_, denied) = send(&app, "GET", "/v1/executions?approval=denied", None, None).await;
    assert_eq!(denied["data"], json!([]));
    let (status, _) = send(&app, "GET", "/v1/executions?approval=maybe", None, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, replay) = post(&app, &format!("/v1/executions/{id}/replay"), json!({})).await;
    assert_eq!(replay["result"], "identical", "{replay}");
}

#[tokio::test]
async fn a_preview_names_the_reachable_tools_and_runs_nothing() {
    let (base, calls) = tool_server().await;
    let policy = ApprovalPolicy::from_json(
        r#"{"rules": [{"tool": "refund", "when": [{"path": "$.amount", "gt": 10}], "decision": "deny"}]}"#,
    )
    .unwrap();
    let app = router(Service::new(common::sandbox(), config(&base, policy)), &[]);
    let code = "# refund() is only mentioned here\nx = await lookup({})\n\nprint('refund')\n";
    let (status, preview) = post(&app, "/v1/executions/preview", json!({"code": code, "tools": tools(&base)})).await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["type"], "execution_preview");
    assert_eq!(
        preview["tools"],
        json!([{"name": "lookup", "executor": "http", "side_effects": "read_only",
        "callable_from_code": true, "approval": "not_required", "lines": [2]}])
    );
    assert_eq!((&preview["complete"], &preview["notes"]), (&json!(true), &json!([])));

    let code = "await refund({'amount': 1})\nname = 'lookup'\nawait sluice.call_tool(name, {})\n";
    let (_, preview) = post(&app, "/v1/executions/preview", json!({"code": code, "tools": tools(&base)})).await;
    assert_eq!((&preview["tools"][0]["name"], &preview["tools"][0]["approval"]), (&json!("refund"), &json!("depends")));
    assert_eq!(preview["complete"], false);
    assert!(preview["notes"][0].as_str().unwrap().contains("call_tool"), "{preview}");
    let (status, error) = post(&app, "/v1/executions/preview", json!({"tools": tools(&base)})).await;
    assert_eq!((status, &error["error"]["type"]), (StatusCode::BAD_REQUEST, &json!("invalid_request_error")));
    assert!(calls.lock().unwrap().is_empty(), "a preview runs nothing");
}
