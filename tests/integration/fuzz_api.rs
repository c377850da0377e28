//! Property tests of the HTTP API: whatever arrives, the answer is a 2xx or a 4xx in the
//! error shape, never a 5xx, a panic or a hang.

use crate::common;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use sluice::{AppState, app};
use sluice::{Service, ServiceConfig};
use std::time::Duration;
use tower::ServiceExt;

/// No request may take longer than this to be answered.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

const PATHS: &[&str] = &[
    "/v1/executions",
    "/v1/executions/exec_00000000000000000000000000000000",
    "/v1/executions/exec_x/tool_results",
    "/v1/executions/%00/replay",
    "/v1/containers",
    "/v1/containers/7f1c3a52-0000-4000-8000-000000000000",
    "/v1/containers/not-a-uuid/export",
    "/v1/tools",
    "/v1/tools/some_tool",
    "/v1/tools/../../etc/passwd",
    "/healthz",
    "/metrics",
    "/openapi.json",
    "/nope",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[ -~]{0,24}".prop_map(Value::String),
        prop::sample::select(vec!["print(1)", "1/0", "x = 1", "while False: pass", "import os", "tool_result"])
            .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        let key = prop::sample::select(vec![
            "code",
            "container",
            "tools",
            "tool_names",
            "limits",
            "tool_results",
            "type",
            "tool_use_id",
            "content",
            "is_error",
            "name",
            "input_schema",
            "allowed_callers",
            "executor",
            "time_ms",
            "memory_bytes",
            "x",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        json_value().prop_map(|v| v.to_string().into_bytes()),
        prop::collection::vec(any::<u8>(), 0..64),
        Just(Vec::new()),
    ]
}

fn router() -> Router {
    app(AppState::new(Service::new(common::sandbox(), ServiceConfig::default())))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_request_gets_a_typed_answer(
        method in prop::sample::select(vec!["GET", "POST", "DELETE", "PUT", "PATCH"]),
        path in prop::sample::select(PATHS.to_vec()),
        body in body(),
        json_content_type in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (status, text) = runtime.block_on(async {
            let app = router();
            let mut request = Request::builder().method(method).uri(path);
            if json_content_type {
                request = request.header("content-type", "application/json");
            }
            let response = tokio::time::timeout(ANSWER_WITHIN, app.oneshot(request.body(Body::from(body)).unwrap()))
                .await
                .expect("answered in time")
                .unwrap();
            let status = response.status();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&bytes).into_owned())
        });
        prop_assert!(status.as_u16() < 500, "{method} {path} -> {status}: {text}");
        if status.is_client_error() {
            let error: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            prop_assert!(error["error"]["type"].is_string(), "{method} {path} -> {status}: {text}");
        }
    }
}

#[tokio::test]
async fn deep_nesting_and_many_tools_are_refused_cleanly() {
    let app = router();
    let deep = format!(r#"{{"code": "1", "limits": {}{}}}"#, "[".repeat(10_000), "]".repeat(10_000));
    let many_tools: Vec<Value> = (0..300).map(|i| json!({"name": format!("t{i}")})).collect();
    for body in [deep, json!({"code": "1", "tools": many_tools}).to_string()] {
        let request = Request::builder()
            .method("POST")
            .uri("/v1/executions")
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 400);
    }
}
