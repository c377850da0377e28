//! An orders service and a customers service, paged, generated from one seed, and the
//! direct computation the example checks against.

use super::support::Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub const SEED: u64 = 7_000_001;
pub const ORDERS: usize = 5_000;
pub const CUSTOMERS: usize = 2_000;
pub const PAGE_SIZE: usize = 500;
const REGIONS: [&str; 6] = ["north-america", "south-america", "europe", "africa", "asia", "oceania"];
const TIERS: [&str; 3] = ["standard", "plus", "enterprise"];
const ORDER_STATUSES: [&str; 4] = ["completed", "refunded", "cancelled", "pending"];
const ORDER_STATUS_WEIGHTS: [u64; 4] = [780, 80, 60, 80];
const CHANNELS: [&str; 3] = ["web", "mobile", "partner"];

pub struct Data {
    pub customers: Vec<Value>,
    pub orders: Vec<Value>,
}

impl Data {
    pub fn generate() -> Self {
        let mut rng = Rng::new(SEED);
        let customers = (1..=CUSTOMERS)
            .map(|i| {
                json!({
                    "customer_id": format!("C{i:05}"),
                    "name": format!("Customer {i}"),
                    "email": format!("customer{i}@example.com"),
                    "region": rng.pick(&REGIONS),
                    "tier": TIERS[rng.weighted(&[700, 220, 80])],
                    "signup_date": format!("20{:02}-{:02}-{:02}", rng.range(18, 25), rng.range(1, 12), rng.range(1, 28)),
                    "marketing_opt_in": rng.range(0, 1) == 1,
                })
            })
            .collect();
        let orders = (1..=ORDERS)
            .map(|i| {
                let items = rng.range(1, 6);
                json!({
                    "order_id": format!("O{i:06}"),
                    "customer_id": format!("C{:05}", rng.range(1, CUSTOMERS as u64)),
                    "date": format!("2025-{:02}-{:02}", rng.range(7, 9), rng.range(1, 28)),
                    "status": ORDER_STATUSES[rng.weighted(&ORDER_STATUS_WEIGHTS)],
                    "channel": rng.pick(&CHANNELS),
                    "items": items,
                    "amount": rng.amount(8 * items, 140 * items),
                    "currency": "USD",
                    "coupon": if rng.range(0, 9) == 0 { json!("SUMMER10") } else { Value::Null },
                })
            })
            .collect();
        Self { customers, orders }
    }

    /// One page of a listing: `{"page", "total_pages", "items": [...]}`.
    pub fn page(rows: &[Value], page: u64) -> Value {
        let total_pages = rows.len().div_ceil(PAGE_SIZE);
        let start = (page.saturating_sub(1) as usize) * PAGE_SIZE;
        let items: Vec<Value> = rows.iter().skip(start).take(PAGE_SIZE).cloned().collect();
        json!({"page": page, "total_pages": total_pages, "items": items})
    }

    /// Revenue of completed orders per (region, tier), the five largest, rounded to cents.
    pub fn top_revenue(&self) -> Vec<(String, String, f64, u64)> {
        let customers: BTreeMap<&str, (&str, &str)> = self
            .customers
            .iter()
            .map(|c| (c["customer_id"].as_str().unwrap(), (c["region"].as_str().unwrap(), c["tier"].as_str().unwrap())))
            .collect();
        let mut totals: BTreeMap<(String, String), (f64, u64)> = BTreeMap::new();
        for order in self.orders.iter().filter(|o| o["status"] == "completed") {
            let (region, tier) = customers[order["customer_id"].as_str().unwrap()];
            let entry = totals.entry((region.to_owned(), tier.to_owned())).or_default();
            entry.0 += order["amount"].as_f64().unwrap();
            entry.1 += 1;
        }
        let mut rows: Vec<_> =
            totals.into_iter().map(|((r, t), (sum, n))| (r, t, (sum * 100.0).round() / 100.0, n)).collect();
        rows.sort_by(|a, b| b.2.total_cmp(&a.2));
        rows.truncate(5);
        rows
    }
}
