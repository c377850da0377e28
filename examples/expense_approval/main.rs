//! An expense audit that acts: the script reads freely, then holds the reimbursements of the
//! people over budget, a write that waits for a person's approval. Run once approved and once
//! denied, through the HTTP API; prints what happened at each step.
//!
//! Run with: cargo run --example expense_approval

#[allow(clippy::duplicate_mod)]
#[path = "../expense_audit/main.rs"]
mod expense_audit;
#[allow(clippy::duplicate_mod)]
#[path = "../support/mod.rs"]
mod support;

use expense_audit::data::Data;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::Handler;

/// The script a model writes: find who is over budget, then hold their reimbursements.
pub const SCRIPT: &str = include_str!("script.py");
/// Who approves, as the audit trail records it.
pub const APPROVER: &str = "finance-lead@example.com";

/// What the walkthrough saw.
pub struct Walkthrough {
    /// The first answer: paused, with one approval request.
    pub paused: Value,
    /// After the approval: completed.
    pub approved: Value,
    /// The approved execution with its ledger.
    pub approved_record: Value,
    /// The same script again, paused and then denied: completed, the denial caught.
    pub denied: Value,
    /// Who is over budget, computed directly from the data.
    pub expected: Vec<String>,
    /// Every call the write tool received.
    pub writes: Vec<Value>,
    /// Replays of both executions from the audit trail.
    pub replays: Vec<Value>,
}

fn tools(base: &str) -> Value {
    let read = |name: &str, schema: Value| {
        json!({"name": name, "input_schema": schema, "allowed_callers": ["code_execution_20260120"],
               "side_effects": "read_only", "executor": {"type": "http", "url": format!("{base}/{name}")}})
    };
    json!([
        read("get_team_members", json!({"type": "object", "properties": {"department": {"type": "string"}}})),
        read("get_expenses", json!({"type": "object", "properties": {"employee_id": {"type": "string"}, "quarter": {"type": "string"}}})),
        read("get_custom_budget", json!({"type": "object", "properties": {"user_id": {"type": "string"}}})),
        // A write the service carries out: it requires approval unless a policy says otherwise.
        {"name": "hold_reimbursements", "description": "Hold the reimbursements of employees for a quarter.",
         "input_schema": {"type": "object", "properties": {"employee_ids": {"type": "array", "items": {"type": "string"}},
                          "quarter": {"type": "string"}, "reason": {"type": "string"}}, "required": ["employee_ids", "quarter"]},
         "allowed_callers": ["code_execution_20260120"], "side_effects": "write",
         "executor": {"type": "http", "url": format!("{base}/hold_reimbursements")}}
    ])
}

async fn call(client: &reqwest::Client, method: reqwest::Method, url: String, body: Option<Value>) -> Value {
    let mut request = client.request(method, url);
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.expect("Sluice answers");
    serde_json::from_str(&response.text().await.expect("a body")).expect("a JSON body")
}

/// Runs the script twice through the HTTP API: approved once, denied once.
pub async fn walkthrough() -> Walkthrough {
    let data = Arc::new(Data::generate());
    let writes = Arc::new(Mutex::new(Vec::new()));
    let recorded = writes.clone();
    let mut handlers: Vec<(&'static str, Handler)> = expense_audit::handlers(data.clone());
    handlers.push((
        "hold_reimbursements",
        Arc::new(move |args: Value| {
            let mut writes = recorded.lock().expect("the write log");
            writes.push(args);
            json!({"hold_id": format!("hold-{}", writes.len())}).to_string()
        }),
    ));
    let base = support::serve_tools(handlers).await;
    let sluice = support::start_sluice_with_store(&base).await;
    let client = reqwest::Client::new();
    let tools = tools(&base);
    let run = || {
        call(
            &client,
            reqwest::Method::POST,
            format!("{sluice}/v1/executions"),
            Some(json!({"code": SCRIPT, "tools": tools})),
        )
    };
    let decide = |id: &str, decision: Value| {
        call(&client, reqwest::Method::POST, format!("{sluice}/v1/executions/{id}/approvals"), Some(decision))
    };
    let request_id =
        |execution: &Value| execution["approval_requests"][0]["id"].as_str().unwrap_or_default().to_owned();

    let paused = run().await;
    let id = paused["id"].as_str().expect("an execution id").to_owned();
    let approved =
        decide(&id, json!({"decisions": [{"id": request_id(&paused), "decision": "approve"}], "by": APPROVER})).await;
    let approved_record = call(&client, reqwest::Method::GET, format!("{sluice}/v1/executions/{id}"), None).await;

    let second = run().await;
    let second_id = second["id"].as_str().expect("an execution id").to_owned();
    let reason = "holds need the CFO this quarter";
    let decision =
        json!({"decisions": [{"id": request_id(&second), "decision": "deny", "reason": reason}], "by": APPROVER});
    let denied = decide(&second_id, decision).await;

    let mut replays = Vec::new();
    for execution in [&id, &second_id] {
        replays.push(
            call(&client, reqwest::Method::POST, format!("{sluice}/v1/executions/{execution}/replay"), None).await,
        );
    }
    let expected = data.over_budget().into_iter().map(|(id, _, _)| id).collect();
    let writes = writes.lock().expect("the write log").clone();
    Walkthrough { paused, approved, approved_record, denied, expected, writes, replays }
}

#[allow(dead_code)]
fn main() {
    let seen = support::block_on(walkthrough());
    let reads = seen.paused["usage"]["tool_calls"].as_u64().unwrap_or(0) - 1;
    let request = &seen.paused["approval_requests"][0];
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    println!(
        "1. POST /v1/executions -> {} after {reads} reads, waiting on one approval:",
        text(&seen.paused["status"])
    );
    println!("     {}({}): {}", text(&request["name"]), request["input"], text(&request["reason"]));
    println!("2. POST .../approvals approve (by {APPROVER}) -> {}", text(&seen.approved["status"]));
    print!("     {}", text(&seen.approved["result"]["stdout"]));
    println!("3. the same script again, denied -> {}", text(&seen.denied["status"]));
    print!("     {}", text(&seen.denied["result"]["stdout"]));
    println!("the tool server received {} write(s): {}", seen.writes.len(), Value::Array(seen.writes.clone()));
    let replayed: Vec<&str> = seen.replays.iter().map(|r| r["result"].as_str().unwrap_or("?")).collect();
    println!("replays from the audit trail: {}", replayed.join(", "));
    if seen.writes.len() != 1 || replayed.iter().any(|r| *r != "identical") {
        std::process::exit(1);
    }
}
