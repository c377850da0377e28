//! The examples end to end: right answers, far fewer tokens back to the model, and a write
//! that waits for a person.

// Each example is a self-contained binary that includes `examples/support`; loading both
// here includes it twice, as two separate modules.
#[allow(clippy::duplicate_mod)]
#[path = "../../examples/batch_join/main.rs"]
mod batch_join;
#[allow(clippy::duplicate_mod)]
#[path = "../../examples/expense_approval/main.rs"]
mod expense_approval;
#[allow(clippy::duplicate_mod)]
#[path = "../../examples/expense_audit/main.rs"]
mod expense_audit;

use serde_json::{Value, json};

/// The published PTC demo measured 85.6% fewer tokens on its data.
const REQUIRED_REDUCTION: f64 = 0.85;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expense_audit_answers_right_with_far_fewer_tokens() {
    let comparison = expense_audit::compare().await;
    assert!(comparison.answer_matches, "answer: {}", comparison.answer);
    assert!(comparison.answer.contains("ENG"), "someone is over budget: {}", comparison.answer);
    assert_eq!(comparison.traditional_calls, 17);
    assert_eq!(comparison.ptc_calls, 17, "the script makes the same calls");
    assert!(comparison.reduction() >= REQUIRED_REDUCTION, "only {:.1}% fewer", comparison.reduction() * 100.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_join_answers_right_with_far_fewer_tokens() {
    let comparison = batch_join::compare().await;
    assert!(comparison.answer_matches, "answer: {}", comparison.answer);
    assert_eq!(comparison.traditional_calls, 14, "10 pages of orders and 4 of customers");
    assert!(comparison.traditional_tokens > 100_000, "{}", comparison.traditional_tokens);
    assert!(comparison.reduction() >= REQUIRED_REDUCTION, "only {:.1}% fewer", comparison.reduction() * 100.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expense_approval_pauses_once_for_its_write_and_completes_after_it() {
    let seen = expense_approval::walkthrough().await;
    let paused = &seen.paused;
    assert_eq!(paused["status"], "requires_action", "{paused}");
    assert_eq!(paused["usage"]["tool_calls"], 18, "17 reads ran before the write: {paused}");
    let requests = paused["approval_requests"].as_array().expect("approval requests");
    assert_eq!(requests.len(), 1, "one pause, for the single write");
    assert_eq!(requests[0]["name"], "hold_reimbursements");
    assert_eq!(requests[0]["input"]["employee_ids"], serde_json::json!(seen.expected), "who is over budget");
    assert!(!seen.expected.is_empty());

    assert_eq!(seen.approved["status"], "completed", "{}", seen.approved);
    let stdout = seen.approved["result"]["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("held the Q3 reimbursements of ") && stdout.ends_with(": hold-1\n"), "{stdout}");
    let write = seen.approved_record["ledger"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(write["approval"]["by"], expense_approval::APPROVER);
    assert_eq!(write["status"], "succeeded");

    assert_eq!(seen.denied["status"], "completed", "{}", seen.denied);
    let stdout = seen.denied["result"]["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("nothing held (denied): ") && stdout.contains("CFO"), "{stdout}");
    assert_eq!(seen.writes.len(), 1, "only the approved write reached the tool: {:?}", seen.writes);
    assert!(seen.replays.iter().all(|r| r["result"] == "identical"), "{:?}", seen.replays);
}

/// Tokens of what one upstream request puts into the model's context: its messages, system
/// prompt and tools, as JSON text (o200k_base, an approximation of any model's tokenizer).
fn request_tokens(body: &Value) -> u64 {
    let mut counter = sluice::TokenCounter::default();
    for part in ["system", "messages", "tools"] {
        counter.add(&body[part].to_string());
    }
    counter.total().tokens
}

/// The expense audit end to end through `POST /v1/messages`, the official SDK as the client and
/// a scripted model upstream: (b) the model writes the script, the tools' results stay in the
/// sandbox; (a) the model calls every tool itself and reads every result. The token table
/// counts what the upstream model was sent, over all its calls.
#[test]
fn expense_audit_through_the_messages_endpoint_with_its_token_table() {
    use crate::messages::{ScriptedUpstream, client_check};
    let Some(parts) = crate::common::python_parts() else { return };
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("audit-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = expense_audit::data::Data::generate();
    let team = data.team("engineering");
    let ids: Vec<&str> = team.as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    let expenses: serde_json::Map<String, Value> =
        ids.iter().map(|id| (id.to_string(), data.expenses(id, "Q3"))).collect();
    let budgets: serde_json::Map<String, Value> =
        ids.iter().map(|id| (id.to_string(), data.custom_budget(id))).collect();
    let answers = json!({"question": expense_audit::QUESTION, "team": {"engineering": team},
        "expenses": expenses, "budgets": budgets});
    let specs: Vec<Value> = expense_audit::tool_specs()
        .into_iter()
        .map(|(name, description, schema)| json!({"name": name, "description": description, "input_schema": schema}))
        .collect();
    let (answers_path, tools_path) = (dir.join("answers.json"), dir.join("tools.json"));
    std::fs::write(&answers_path, answers.to_string()).unwrap();
    std::fs::write(&tools_path, Value::from(specs).to_string()).unwrap();

    let upstream = ScriptedUpstream::start(&parts.python, "anthropic", "expense_audit", &dir);
    let store = dir.join("data");
    let spec = upstream.spec("anthropic");
    let server = crate::server::start(&["--data-dir", store.to_str().unwrap(), "--upstream", &spec], &[]);
    let seen = client_check(
        &parts.python,
        &server.base,
        "any",
        &["audit", answers_path.to_str().unwrap(), tools_path.to_str().unwrap()],
    );
    server.stop();

    let expected = data.over_budget();
    for path in ["ptc", "direct"] {
        let answer: Vec<Value> = serde_json::from_str(seen[path]["final_text"].as_str().unwrap())
            .unwrap_or_else(|_| panic!("{path}: {seen}"));
        assert_eq!(answer.len(), expected.len(), "{path}: {answer:?}");
        for (got, (id, spent, budget)) in answer.iter().zip(&expected) {
            assert_eq!(got["id"], id.as_str(), "{path}");
            assert!((got["travel"].as_f64().unwrap() - spent).abs() < 0.005, "{path}: {got}");
            assert!((got["budget"].as_f64().unwrap() - budget).abs() < 0.005, "{path}: {got}");
        }
        assert_eq!(seen[path]["tool_calls"], 17, "{path}: the same 17 calls either way");
    }
    let requests = upstream.requests();
    let offers_code = |r: &&Value| r["body"]["tools"].to_string().contains("\"code_execution\"");
    let (ptc, direct): (Vec<&Value>, Vec<&Value>) = requests.iter().partition(offers_code);
    let ptc_tokens: u64 = ptc.iter().map(|r| request_tokens(&r["body"])).sum();
    let direct_tokens: u64 = direct.iter().map(|r| request_tokens(&r["body"])).sum();
    let reduction = 1.0 - ptc_tokens as f64 / direct_tokens as f64;
    println!("expense audit through POST /v1/messages (scripted upstream, tokens: o200k_base)");
    println!("| path | upstream calls | tool calls | tokens sent to the model |");
    println!("| --- | ---: | ---: | ---: |");
    println!("| (a) model calls every tool | {} | 17 | {direct_tokens} |", direct.len());
    println!("| (b) code execution through Sluice | {} | 17 | {ptc_tokens} |", ptc.len());
    println!("reduction: {:.2}% fewer tokens", reduction * 100.0);
    assert_eq!((ptc.len(), direct.len()), (2, 3), "upstream calls per path");
    assert!(reduction >= REQUIRED_REDUCTION, "only {:.1}% fewer", reduction * 100.0);
    let usage = seen["ptc"]["usage"].as_array().unwrap().last().unwrap();
    assert_eq!(usage["sluice"]["tool_calls"], 17, "{usage}");
    assert!(
        usage["sluice"]["tool_result_bytes"].as_u64().unwrap() > 50_000,
        "the results stayed in the sandbox: {usage}"
    );
}
