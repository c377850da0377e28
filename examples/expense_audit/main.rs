//! The expense audit two ways: every tool result in the model's context, or through Sluice
//! where only the script's output returns. Prints the token table.
//!
//! Run with: cargo run --example expense_audit

pub(crate) mod data;
#[path = "../support/mod.rs"]
mod support;

use data::Data;
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Comparison, Handler, Traditional};

pub const QUESTION: &str = "Which engineering team members exceeded their Q3 travel budget, counting only \
approved travel, using custom budgets where they exist?";

/// The script a model writes for the question.
pub const SCRIPT: &str = include_str!("script.py");

/// The three read tools over `data` (the approval example adds a write to them).
pub fn handlers(data: Arc<Data>) -> Vec<(&'static str, Handler)> {
    let (a, b, c) = (data.clone(), data.clone(), data);
    vec![
        (
            "get_team_members",
            Arc::new(move |args: Value| a.team(args["department"].as_str().unwrap_or("")).to_string()),
        ),
        (
            "get_expenses",
            Arc::new(move |args: Value| {
                b.expenses(args["employee_id"].as_str().unwrap_or(""), args["quarter"].as_str().unwrap_or(""))
                    .to_string()
            }),
        ),
        (
            "get_custom_budget",
            Arc::new(move |args: Value| c.custom_budget(args["user_id"].as_str().unwrap_or("")).to_string()),
        ),
    ]
}

/// The three tools' names, descriptions and input schemas.
pub fn tool_specs() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "get_team_members",
            "Members of a department: id, name, role, level, email, department.",
            json!({"type": "object", "properties": {"department": {"type": "string"}}, "required": ["department"]}),
        ),
        (
            "get_expenses",
            "Expense line items of an employee in a quarter (Q1..Q4).",
            json!({"type": "object", "properties": {"employee_id": {"type": "string"}, "quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]}},
                   "required": ["employee_id", "quarter"]}),
        ),
        (
            "get_custom_budget",
            "A person's custom quarterly travel budget, or budget null for the standard 5,000 USD.",
            json!({"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}),
        ),
    ]
}

/// Runs both paths and measures them.
pub async fn compare() -> Comparison {
    let data = Arc::new(Data::generate());
    // (a) The traditional loop: the model calls each tool and reads every result.
    let team = data.team("engineering");
    let mut results = vec![team.to_string()];
    for member in team.as_array().expect("a team") {
        let id = member["id"].as_str().expect("an id");
        results.push(data.expenses(id, "Q3").to_string());
        results.push(data.custom_budget(id).to_string());
    }
    let expected = data.over_budget();
    let answer_text = format!(
        "Over their Q3 travel budget: {}",
        expected
            .iter()
            .map(|(id, spent, budget)| format!("{id} ({spent:.2} of {budget:.0})"))
            .collect::<Vec<_>>()
            .join(", ")
    );

    // (b) Through Sluice: the script runs next to the tools; only its output comes back.
    let traditional = Traditional { results, answer: answer_text };
    support::compare_paths(QUESTION, traditional, handlers(data), &tool_specs(), SCRIPT, |got| {
        got.len() == expected.len()
            && got.iter().zip(&expected).all(|(g, (id, spent, budget))| {
                g["id"] == id.as_str()
                    && (g["travel"].as_f64().unwrap_or(f64::NAN) - spent).abs() < 0.005
                    && (g["budget"].as_f64().unwrap_or(f64::NAN) - budget).abs() < 0.005
            })
    })
    .await
}

#[allow(dead_code)]
fn main() {
    support::run_example(compare());
}
