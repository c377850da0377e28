//! Every integration test in one binary (one link of wasmtime, sqlx, axum and the guest):
//! run `cargo test --test integration`, or filter by module, e.g. `-- python_cases::asyncio`.
//! The attack suite stays apart (`tests/attacks.rs`): it prints a table rather than results.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/compat.rs"]
mod compat;
#[path = "../common/python_env.rs"]
mod python_env;
#[path = "../common/server.rs"]
mod server;

mod anthropic_sdk;
mod api;
mod approvals;
mod audit;
mod cli;
mod corpus;
mod crash;
mod docs;
mod durable;
mod examples;
mod files;
mod fuzz_api;
mod mcp;
mod messages;
mod otlp;
mod python_cases;
mod python_client;
mod sandbox;
mod tool_search;
mod ui;
