//! Sluice: programmatic tool calling in persistent, sandboxed Python interpreters.
//!
//! Layers, top to bottom (arrows point down only): the command line and the HTTP API → the
//! engine (one execution's life, and the multi-tenant service) → the sandbox (wasm), tools
//! (gate and executors) and the audit trail. The sandbox knows nothing of tools' semantics;
//! tools know nothing of wasm. `docs/design.md` maps every file.
//!
//! The modules are private: what a library user needs is re-exported below, by layer.

// Whatever is `pub` inside is on this list; anything else says `pub(crate)`.
#![warn(unreachable_pub)]

mod api;
mod audit;
mod call;
mod cli;
mod engine;
mod json;
mod keys;
mod sandbox;
mod tools;

// The sandbox: one RustPython interpreter per container, suspended between tool calls.
pub use sandbox::{
    Container, ExecuteRequest, GuestProfiler, LimitError, LimitOverrides, Limits, Outcome, OutputFile, Pending,
    PlacedFile, PythonError, Sandbox, SandboxConfig, SandboxError, Step, StopReason,
};

// What crosses between a script and its tools.
pub use call::{CallResult, FailureCode, GuestTool, ToolCall, ToolFailure};

// Tools: definitions, the gate every call passes, the http and mcp executors and where they may go.
pub use tools::approval::{ApprovalPolicy, RuleDecision, StaticVerdict, Verdict};
pub use tools::egress::EgressPolicy;
pub use tools::http::{CallContext, HttpExecutor};
pub use tools::mcp::{McpConfig, McpServerConfig, McpServers, SessionIsolation};
pub use tools::search::{
    Embedder, ModelError, SearchError, SearchHit, SearchRequest, ToolIndex, search as search_tools, use_model,
};
pub use tools::{Admission, Tool, ToolDefinition, Toolset};

// The engine: one execution's life, offline runs, replay, and token counts.
pub use engine::replay::{ReplayError, ReplayReport, replay};
pub use engine::tokens::{Counter as TokenCounter, TOKENIZER};
pub use engine::trace::{OtlpExporter, Pause, TraceParent};
pub use engine::{
    Answers, ApprovalAnswer, ApprovalCall, Dispatch, Dispatcher, Moved, Run, RunContext, ScriptRun, Upload,
    UploadBytes, WaitingRun, run_script, run_script_with_files,
};

// The service: containers, executions and quotas per API key.
pub use engine::service::{
    ApprovalRequest, ContainerVerdict, ContainerView, ExecutionPage, ExecutionStatus, ExecutionView, NewExecution,
    Preview, PreviewTool, Quotas, Service, ServiceConfig, ServiceError,
};

// The audit trail: events, the sealed chain, the store, bundles.
pub use audit::{
    ChainBreak, ContainerHistory, Event, ExecutionFilter, FileRecord, FileRow, MemoryRecorder, ModelCall, NewFile,
    Record, Recorder, Store, StoreError, StoredContainer, read_bundle, verify_chain, write_bundle,
};
pub use keys::ServerKey;

// The HTTP API and the command line.
pub use api::auth::{ApiKeys, MetricsAccess};
pub use api::{AppState, ServeOptions, Upstream, app, serve, serve_with};
pub use cli::main as run_command_line;
