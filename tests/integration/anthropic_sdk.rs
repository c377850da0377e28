//! The official `anthropic` Python SDK's models validate Sluice's bodies, against a live
//! `sluice serve` (the script is `tests/anthropic/sdk_check.py`; the SDK comes from
//! `tests/python/setup.sh`).

use crate::common;
use serde_json::{Value, json};
use std::path::Path;

#[test]
fn the_anthropic_sdk_validates_every_body() {
    let Some(parts) = common::python_parts() else { return };
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sdk-{}", uuid::Uuid::new_v4()));
    let data = dir.join("data");
    let args = ["--data-dir", data.to_str().unwrap(), "--api-key", "k1", "--max-containers", "2"];
    let server = crate::server::start(&args, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/anthropic/sdk_check.py");
    let output = std::process::Command::new(&parts.python).arg(script).args([&server.base, "k1"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("not JSON: {stdout}"));
    let validated: Vec<&str> = seen["validated"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for model in [
        "ToolUseBlock",
        "Container",
        "CodeExecutionResultBlock",
        "CodeExecutionToolResultBlock",
        "ServerToolUsage",
        "ErrorResponse",
        "ToolParam",
        "ToolSearchToolSearchResultBlock",
        "BetaFileMetadata",
        "BetaDeletedFile",
    ] {
        assert!(validated.contains(&model), "{model} was not validated: {seen}");
    }
    assert_eq!(seen["container_object"], "foundfound\n");
    assert_eq!(seen["output_files"], json!(["2"]), "the script's output file, downloaded by the SDK: {seen}");
    assert_eq!(seen["files_listed"], json!(["count.txt", "sales.csv"]), "{seen}");
    assert_eq!(seen["stop_error_code"], "execution_time_exceeded");
    assert_eq!(
        seen["errors"],
        json!({
            "400": ["invalid_request_error", "invalid_request"],
            "401": ["authentication_error", "authentication"],
            "404": ["not_found_error", "not_found"],
            "409": ["invalid_request_error", "conflict"],
            "529": ["overloaded_error", "overloaded"],
        }),
        "{seen}"
    );
    assert_eq!(seen["request_id_matches"], true);
    assert_eq!(seen["tool_search"], json!(["rotate_signing_keys"]), "a deferred tool is found: {seen}");
    assert_eq!(seen["tool_search_error"], json!(["invalid_request_error", "invalid_tool_input"]));
}
