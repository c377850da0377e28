//! What is recorded: the events of a container's life, and the tool calls, counts and endings they carry.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Requested,
    Refused,
    Dispatched,
    Succeeded,
    Failed,
    TimedOut,
    Cancelled,
    /// Held until a person decides (`POST /v1/executions/{id}/approvals`).
    AwaitingApproval,
    /// Not approved (by a person, the policy, or nobody in time): the tool did not run.
    Denied,
}

impl CallStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Requested => "requested",
            Self::Refused => "refused",
            Self::Dispatched => "dispatched",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Denied => "denied",
        }
    }

    pub fn is_final(self) -> bool {
        !matches!(self, Self::Requested | Self::Dispatched | Self::AwaitingApproval)
    }
}

/// One tool call as the engine saw it; the ledger keeps them in the order they were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub id: String,
    pub seq: u64,
    pub tool: String,
    pub caller: String,
    /// The arguments as the tool receives them (after coercion); shared, not copied, by the
    /// ledger, its events and the views of the execution.
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    /// The arguments as the script gave them, when coercion changed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    pub coerced: bool,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<crate::call::FailureCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub error_details: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Arc<str>>,
    pub result_bytes: u64,
    /// SHA-256 of the result, kept instead of the text when the tool's policy says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_sha256: Option<String>,
    pub attempts: u32,
    pub idempotency_key: String,
    /// Unix milliseconds.
    pub requested_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
    /// How the call was approved or denied, when a policy rule or a person decided it (calls
    /// no rule matched and that needed no approval have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRecord>,
}

/// A decision on one call, as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    pub decision: ApprovalDecision,
    /// `policy` (see `rule`), `timeout`, or who answered: the `by` of the request that decided,
    /// else the API key's owner id.
    pub by: String,
    /// The policy rule's index in the policy file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether a person was asked (the call waited for a decision).
    pub asked: bool,
    /// Unix milliseconds.
    pub decided_at: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    Approved,
    Denied,
}

/// Figures returned with every execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub tool_calls: u64,
    /// Bytes of tool results that went into the sandbox (and stayed there).
    pub tool_result_bytes: u64,
    /// Bytes that came back out: stdout, stderr and the trailing expression.
    pub returned_bytes: u64,
    /// Time the script ran, not counting waits for tool results.
    pub time_ms: u64,
}

impl Usage {
    /// Adds another execution's figures (a Messages turn's sum over its executions).
    pub(crate) fn add(&mut self, other: &Usage) {
        self.tool_calls = self.tool_calls.saturating_add(other.tool_calls);
        self.tool_result_bytes = self.tool_result_bytes.saturating_add(other.tool_result_bytes);
        self.returned_bytes = self.returned_bytes.saturating_add(other.returned_bytes);
        self.time_ms = self.time_ms.saturating_add(other.time_ms);
    }
}

/// Counts the engine derives for every execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoCounts {
    /// Calls per tool of the execution's tools (names the script made up are not listed).
    pub calls_per_tool: BTreeMap<String, u64>,
    /// Calls to names that were not tools of the execution.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unknown_tool_calls: u64,
    /// Items in the JSON-array results of each tool, summed.
    pub array_items_per_tool: BTreeMap<String, u64>,
    /// How many times each pause of the script called (a gather of N pauses once with N).
    pub calls_per_pause: Vec<u64>,
    /// Decisions on calls: `approved`, `denied`, and `asked` (a person was asked).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub approvals: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An uncaught exception of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionInfo {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    pub traceback: String,
}

/// What ended an execution, as the record and the executions index name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The script ran to its end.
    Completed,
    /// The script ran to its end with an exception it did not catch.
    PythonError,
    ExecutionTimeExceeded,
    MemoryLimitExceeded,
    StackLimitExceeded,
    ToolCallLimitExceeded,
    /// The script ended the interpreter (`os._exit`).
    GuestExited,
    /// The guest broke the contract or crashed.
    GuestFault,
    /// The host ended it (shutdown, deletion, a crash before it finished).
    Interrupted,
    /// The host could not carry it out.
    InternalError,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::PythonError => "python_error",
            Self::ExecutionTimeExceeded => "execution_time_exceeded",
            Self::MemoryLimitExceeded => "memory_limit_exceeded",
            Self::StackLimitExceeded => "stack_limit_exceeded",
            Self::ToolCallLimitExceeded => "tool_call_limit_exceeded",
            Self::GuestExited => "guest_exited",
            Self::GuestFault => "guest_fault",
            Self::Interrupted => "interrupted",
            Self::InternalError => "internal_error",
        }
    }

    /// The ending of a stop code ([`crate::sandbox::StopReason::code`]).
    pub fn from_code(code: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(code.to_owned())).ok()
    }

    /// Completed (the script ran to its end, its effects kept) or failed (stopped, rolled
    /// back, or never carried out).
    pub fn status(self) -> FinishStatus {
        match self {
            Self::Completed | Self::PythonError => FinishStatus::Completed,
            _ => FinishStatus::Failed,
        }
    }
}

/// Whether an execution completed or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishStatus {
    Completed,
    Failed,
}

impl FinishStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
}

/// One upstream model answer of a Messages turn: who was asked, what it cost, how it
/// stopped, and the executions the code it wrote became. Restore and replay pass over it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// The Messages answer (`msg_...`) the call was part of.
    pub message_id: String,
    /// Where it went (`--upstream`'s endpoint) and the model asked for.
    pub endpoint: String,
    pub model: String,
    pub stop_reason: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub elapsed_ms: u64,
    /// Executions started or resumed for this answer's code calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executions: Vec<String>,
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub execution_id: String,
    pub status: FinishStatus,
    pub outcome: Ending,
    pub return_code: i64,
    pub stdout: String,
    pub stderr: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_repr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<ExceptionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub counts: BTreeMap<String, serde_json::Number>,
    pub auto_counts: AutoCounts,
    pub usage: Usage,
    /// Unix milliseconds.
    pub finished_at: u64,
    /// Files under the working directory the execution created or changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileRecord>,
}

/// A file that went into or came out of a container, as the audit keeps it: not its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub file_id: String,
    /// Under the working directory (an upload's name, or an output's relative path).
    pub path: String,
    pub size_bytes: u64,
    pub sha256: String,
}

/// What happened, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    ContainerCreated {
        owner: String,
        /// The guest's random seed (decimal: it does not fit every database's integers).
        seed: String,
        image_hash: String,
        /// Set for a fork: the parent, and its last record when the fork was made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        forked_from: Option<ForkPoint>,
    },
    ExecutionStarted {
        execution_id: String,
        owner: String,
        /// 1 for the container's first execution.
        number: u64,
        code: String,
        code_sha256: String,
        /// Tool definitions as given.
        tools: serde_json::Value,
        limits: serde_json::Value,
        /// The clock the guest saw at the start, ns since the Unix epoch.
        now_ns: u64,
        started_at: u64,
        /// Files put into the working directory before the code ran (their bytes are in the
        /// Files store; replay takes them from there and checks each hash).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<FileRecord>,
    },
    /// Results went into the guest (in this order) with this clock, and files into its
    /// working directory.
    Step {
        execution_id: String,
        now_ns: u64,
        answered: Vec<u64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<FileRecord>,
    },
    ToolCall {
        execution_id: String,
        call: LedgerEntry,
    },
    ExecutionFinished(Finished),
    /// An answer of the upstream model in a `POST /v1/messages` turn whose code ran here.
    ModelCall(ModelCall),
    /// The container was deleted or expired: its history stays, it is never rebuilt.
    ContainerClosed {
        /// `deleted` or `expired`.
        reason: String,
    },
}

impl Event {
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ContainerCreated { .. } => "container_created",
            Self::ExecutionStarted { .. } => "execution_started",
            Self::Step { .. } => "step",
            Self::ToolCall { .. } => "tool_call",
            Self::ExecutionFinished(_) => "execution_finished",
            Self::ModelCall(_) => "model_call",
            Self::ContainerClosed { .. } => "container_closed",
        }
    }

    pub fn execution_id(&self) -> Option<&str> {
        match self {
            Self::ContainerCreated { .. } | Self::ContainerClosed { .. } | Self::ModelCall(_) => None,
            Self::ExecutionStarted { execution_id, .. }
            | Self::Step { execution_id, .. }
            | Self::ToolCall { execution_id, .. } => Some(execution_id),
            Self::ExecutionFinished(finished) => Some(&finished.execution_id),
        }
    }
}

/// Where a forked container came from: the parent, and its chain's last record (sequence
/// number and seal) when the fork was made, so that the parent's history the fork depends on
/// cannot be changed without the fork's chain showing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPoint {
    pub container_id: String,
    pub seq: i64,
    pub hash: String,
}
