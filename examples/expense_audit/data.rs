//! The team expense API: 19 employees, Q1-Q4 expense line items and custom travel budgets,
//! all generated from one seed, and the direct computation the example checks against.

use super::support::Rng;
use serde_json::{Value, json};

pub const SEED: u64 = 20_250_930;
/// The standard quarterly travel budget, in USD.
pub const STANDARD_TRAVEL_BUDGET: f64 = 5_000.0;
const DEPARTMENTS: [(&str, &str, usize); 3] = [("engineering", "ENG", 8), ("sales", "SAL", 6), ("marketing", "MKT", 5)];
const CATEGORIES: [&str; 8] =
    ["travel", "lodging", "meals", "software", "equipment", "conference", "office", "internet"];
const STATUSES: [&str; 3] = ["approved", "pending", "rejected"];
/// Weights of `STATUSES`, in thousandths.
const STATUS_WEIGHTS: [u64; 3] = [850, 100, 50];
const FIRST_NAMES: [&str; 19] = [
    "Ada",
    "Grace",
    "Linus",
    "Margaret",
    "Ken",
    "Barbara",
    "Dennis",
    "Frances",
    "Edsger",
    "Radia",
    "Guido",
    "Hedy",
    "Alan",
    "Katherine",
    "Donald",
    "Sophie",
    "Tim",
    "Annie",
    "Niklaus",
];
const LAST_NAMES: [&str; 8] = ["Lovelace", "Hopper", "Torvalds", "Hamilton", "Thompson", "Liskov", "Ritchie", "Allen"];
const STORES: [(&str, &str); 6] = [
    ("Delta Air Lines", "Atlanta, GA"),
    ("Marriott", "Chicago, IL"),
    ("Blue Bottle Coffee", "Oakland, CA"),
    ("JetBrains", "Prague, CZ"),
    ("B&H Photo", "New York, NY"),
    ("Amtrak", "Washington, DC"),
];
const PAYMENT_METHODS: [&str; 3] = ["corporate_card", "personal_card", "invoice"];
/// A few people have budgets of their own (user, USD, why).
const CUSTOM_BUDGETS: [(&str, f64, &str); 4] = [
    ("ENG002", 8_000.0, "leads the customer onboarding trips"),
    ("ENG005", 3_000.0, "remote-first, rarely travels"),
    ("ENG007", 12_000.0, "conference speaker this year"),
    ("SAL003", 15_000.0, "field sales, west region"),
];

pub struct Employee {
    pub id: String,
    pub name: String,
    pub role: &'static str,
    pub level: String,
    pub email: String,
    pub department: &'static str,
}

pub struct Data {
    pub employees: Vec<Employee>,
}

impl Data {
    pub fn generate() -> Self {
        let mut rng = Rng::new(SEED);
        let mut employees = Vec::new();
        let mut n = 0;
        for (department, prefix, count) in DEPARTMENTS {
            for i in 1..=count {
                let first = FIRST_NAMES[n];
                let last = rng.pick(&LAST_NAMES);
                let role = match department {
                    "engineering" => *rng.pick(&["Software Engineer", "Staff Engineer", "Engineering Manager"]),
                    "sales" => *rng.pick(&["Account Executive", "Sales Engineer"]),
                    _ => *rng.pick(&["Marketing Manager", "Content Lead"]),
                };
                employees.push(Employee {
                    id: format!("{prefix}{i:03}"),
                    name: format!("{first} {last}"),
                    role,
                    level: format!("L{}", rng.range(2, 7)),
                    email: format!("{}.{}@example.com", first.to_lowercase(), last.to_lowercase()),
                    department,
                });
                n += 1;
            }
        }
        Self { employees }
    }

    pub fn team(&self, department: &str) -> Value {
        Value::Array(
            self.employees
                .iter()
                .filter(|e| e.department == department)
                .map(|e| {
                    json!({"id": e.id, "name": e.name, "role": e.role, "level": e.level, "email": e.email,
                           "department": e.department})
                })
                .collect(),
        )
    }

    /// The line items of one employee and quarter, generated from the seed, the employee
    /// and the quarter (so every call answers the same).
    pub fn expenses(&self, employee_id: &str, quarter: &str) -> Value {
        let Some(q) = ["Q1", "Q2", "Q3", "Q4"].iter().position(|x| *x == quarter) else { return json!([]) };
        let salt = employee_id.bytes().fold(q as u64 + 1, |acc, b| acc.wrapping_mul(131).wrapping_add(u64::from(b)));
        let mut rng = Rng::new(SEED ^ salt);
        let count = rng.range(20, 50);
        let items = (0..count)
            .map(|i| {
                let category = *rng.pick(&CATEGORIES);
                let amount = match category {
                    "travel" => rng.amount(150, 1_600),
                    "lodging" => rng.amount(90, 600),
                    "equipment" | "conference" => rng.amount(50, 1_200),
                    _ => rng.amount(5, 180),
                };
                let status = STATUSES[rng.weighted(&STATUS_WEIGHTS)];
                let month = q * 3 + rng.range(1, 3) as usize;
                let day = rng.range(1, 28);
                let (store, location) = *rng.pick(&STORES);
                json!({
                    "expense_id": format!("EXP-{employee_id}-{quarter}-{i:03}"),
                    "date": format!("2025-{month:02}-{day:02}"),
                    "category": category,
                    "description": format!("{category} expense at {store}"),
                    "amount": amount,
                    "currency": "USD",
                    "status": status,
                    "receipt_url": format!("https://receipts.example.com/{employee_id}/{quarter}/{i:03}.pdf"),
                    "approved_by": if status == "approved" { json!("Margaret Hamilton") } else { Value::Null },
                    "store_name": store,
                    "store_location": location,
                    "reimbursement_date": if status == "approved" { json!(format!("2025-{month:02}-28")) } else { Value::Null },
                    "payment_method": rng.pick(&PAYMENT_METHODS),
                    "project_code": format!("PRJ-{}", rng.range(100, 120)),
                    "notes": if rng.range(0, 4) == 0 { json!("client meeting") } else { json!("") },
                })
            })
            .collect();
        Value::Array(items)
    }

    pub fn custom_budget(&self, user_id: &str) -> Value {
        match CUSTOM_BUDGETS.iter().find(|(id, _, _)| *id == user_id) {
            Some((id, budget, reason)) => json!({"user_id": id, "budget": budget, "currency": "USD", "reason": reason}),
            None => json!({"user_id": user_id, "budget": null}),
        }
    }

    /// The answer computed directly: engineers over their Q3 travel budget (approved travel
    /// only, custom budgets where they exist), as (id, approved travel, budget).
    pub fn over_budget(&self) -> Vec<(String, f64, f64)> {
        self.employees
            .iter()
            .filter(|e| e.department == "engineering")
            .filter_map(|e| {
                let spent: f64 = self
                    .expenses(&e.id, "Q3")
                    .as_array()
                    .expect("a list")
                    .iter()
                    .filter(|x| x["category"] == "travel" && x["status"] == "approved")
                    .map(|x| x["amount"].as_f64().expect("an amount"))
                    .sum();
                let budget = self.custom_budget(&e.id)["budget"].as_f64().unwrap_or(STANDARD_TRAVEL_BUDGET);
                (spent > budget).then(|| (e.id.clone(), (spent * 100.0).round() / 100.0, budget))
            })
            .collect()
    }
}
