//! The two examples end to end: right answers, and far fewer tokens back to the model.

// Each example is a self-contained binary that includes `examples/support`; loading both
// here includes it twice, as two separate modules.
#[allow(clippy::duplicate_mod)]
#[path = "../../examples/batch_join/main.rs"]
mod batch_join;
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
