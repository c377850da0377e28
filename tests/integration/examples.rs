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
