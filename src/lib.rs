//! Sluice: programmatic tool calling in persistent, sandboxed Python interpreters.
//!
//! Layers, top to bottom (arrows point down only): [`cli`] and [`api`] → [`engine`] →
//! [`sandbox`] and [`tools`]. The sandbox knows nothing of tools' semantics; tools know
//! nothing of wasm.

pub mod api;
pub mod audit;
pub mod call;
pub mod cli;
pub mod engine;
pub mod json;
pub mod keys;
pub mod sandbox;
pub mod tools;

pub use engine::service::{Service, ServiceConfig};
pub use engine::{Answers, ScriptRun, run_script};
pub use sandbox::{Container, ExecuteRequest, Limits, Outcome, Sandbox, SandboxConfig, Step, StopReason};
pub use tools::{ToolDefinition, Toolset};
