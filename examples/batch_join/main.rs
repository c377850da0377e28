//! A batch join two ways: 5,000 orders and 2,000 customers, fetched in pages and joined into
//! revenue by region and tier. Prints the token table.
//!
//! Run with: cargo run --example batch_join

mod data;
#[path = "../support/mod.rs"]
mod support;

use data::Data;
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Comparison, Handler, Traditional};

pub const QUESTION: &str = "Which five (region, customer tier) pairs brought the most revenue from completed \
orders this quarter, and from how many orders?";

/// The script a model writes for the question.
pub const SCRIPT: &str = r#"
import asyncio, json
from collections import defaultdict

async def fetch_all(tool):
    first = json.loads(await tool({"page": 1}))
    rest = await asyncio.gather(*[tool({"page": p}) for p in range(2, first["total_pages"] + 1)])
    return first["items"] + [item for page in rest for item in json.loads(page)["items"]]

orders, customers = await asyncio.gather(fetch_all(list_orders), fetch_all(list_customers))
segment = {c["customer_id"]: (c["region"], c["tier"]) for c in customers}
revenue = defaultdict(float)
count = defaultdict(int)
for order in orders:
    if order["status"] == "completed":
        key = segment[order["customer_id"]]
        revenue[key] += order["amount"]
        count[key] += 1
top = sorted(revenue, key=revenue.get, reverse=True)[:5]
print(json.dumps([{"region": r, "tier": t, "revenue": round(revenue[(r, t)], 2), "orders": count[(r, t)]} for r, t in top]))
"#;

fn handlers(data: Arc<Data>) -> Vec<(&'static str, Handler)> {
    let (a, b) = (data.clone(), data);
    vec![
        (
            "list_orders",
            Arc::new(move |args: Value| Data::page(&a.orders, args["page"].as_u64().unwrap_or(1)).to_string()),
        ),
        (
            "list_customers",
            Arc::new(move |args: Value| Data::page(&b.customers, args["page"].as_u64().unwrap_or(1)).to_string()),
        ),
    ]
}

fn tool_specs() -> Vec<(&'static str, &'static str, Value)> {
    let paged =
        json!({"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}}, "required": ["page"]});
    vec![
        ("list_orders", "One page of this quarter's orders (500 per page) and total_pages.", paged.clone()),
        ("list_customers", "One page of customers (500 per page) and total_pages.", paged),
    ]
}

/// Runs both paths and measures them.
pub async fn compare() -> Comparison {
    let data = Arc::new(Data::generate());
    // (a) The traditional loop: the model reads every page of both listings.
    let pages = |rows: &[Value]| rows.len().div_ceil(data::PAGE_SIZE) as u64;
    let results: Vec<String> = (1..=pages(&data.orders))
        .map(|p| Data::page(&data.orders, p).to_string())
        .chain((1..=pages(&data.customers)).map(|p| Data::page(&data.customers, p).to_string()))
        .collect();
    let expected = data.top_revenue();
    let answer_text = expected
        .iter()
        .map(|(region, tier, revenue, orders)| format!("{region}/{tier}: {revenue:.2} USD from {orders} orders"))
        .collect::<Vec<_>>()
        .join("; ");

    // (b) Through Sluice: pages are fetched and joined inside the sandbox.
    let traditional = Traditional { results, answer: answer_text };
    support::compare_paths(QUESTION, traditional, handlers(data), &tool_specs(), SCRIPT, |got| {
        got.len() == expected.len()
            && got.iter().zip(&expected).all(|(g, (region, tier, revenue, orders))| {
                g["region"] == region.as_str()
                    && g["tier"] == tier.as_str()
                    && (g["revenue"].as_f64().unwrap_or(f64::NAN) - revenue).abs() < 0.011
                    && g["orders"] == json!(orders)
            })
    })
    .await
}

#[allow(dead_code)]
fn main() {
    support::run_example(compare());
}
