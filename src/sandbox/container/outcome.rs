//! How a step of an execution ends: the request that starts it, the step it reaches, the
//! outcome of a finished execution and why a stopped one stopped.

use super::super::limits::Limits;
use super::super::state::HostState;
use crate::call::ToolCall;
use std::collections::BTreeMap;
use std::time::Duration;
use wasmtime::Trap;

use crate::call::GuestTool;
use crate::sandbox::files::{OutputFile, PlacedFile};
use crate::sandbox::frames::PythonError;
/// Exit status reported for an execution that a limit or a guest failure stopped.
pub(crate) const STOPPED_RETURN_CODE: i32 = 1;

/// What to run, with which tools, under which limits.
#[derive(Debug, Clone)]
pub struct ExecuteRequest<'a> {
    pub code: &'a str,
    pub tools: &'a [GuestTool],
    /// Put into the working directory (replacing files of the same name) before the code runs.
    pub files: &'a [PlacedFile],
    pub limits: Limits,
    /// Host time in ns since the Unix epoch for this step; `None` means now. Replay passes
    /// the recorded time so that the guest sees the same clock.
    pub now_ns: Option<u64>,
}

/// Where an execution stands after a step.
#[derive(Debug)]
pub enum Step {
    /// Every task waits on these tool calls; answer them with [`Container::resume`].
    Pending(Pending),
    Finished(Outcome),
}

#[derive(Debug, Clone)]
pub struct Pending {
    /// New calls, in the order the script made them.
    pub calls: Vec<ToolCall>,
    /// Calls handed out earlier that the script no longer waits for (e.g. `wait_for` timed out).
    pub cancelled: Vec<u64>,
    /// A timer of the script falls due then: resume by that time, with whatever results exist.
    pub wake_after: Option<Duration>,
    /// The guest waits inside a host call (a nested event loop) rather than having returned.
    pub blocking: bool,
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    /// 0; 1 for an uncaught exception (traceback in stderr); the code of `sys.exit`.
    pub return_code: i32,
    /// `repr` of a trailing expression that was not None, REPL style.
    pub value_repr: Option<String>,
    pub error: Option<PythonError>,
    /// Named counts from `sluice.count`.
    pub counts: BTreeMap<String, serde_json::Number>,
    /// Set when a limit or a guest failure stopped the script; the container was rolled back.
    pub stop: Option<StopReason>,
    /// Time the script ran, not counting waits for tool results.
    pub run_time: Duration,
    pub tool_calls: u64,
    /// Files under the working directory the execution created or changed (none when stopped).
    pub files: Vec<OutputFile>,
}

/// Why an execution was stopped before the script finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    TimeLimit,
    MemoryLimit,
    StackLimit,
    ToolCallLimit,
    /// The guest ended its own process (`os._exit`).
    GuestExit(u32),
    /// The guest broke the contract or crashed; the message says how.
    GuestFault(String),
    /// The host gave up on the execution (shutdown, deletion).
    Interrupted(String),
}

impl StopReason {
    /// The stable code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TimeLimit => "execution_time_exceeded",
            Self::MemoryLimit => "memory_limit_exceeded",
            Self::StackLimit => "stack_limit_exceeded",
            Self::ToolCallLimit => "tool_call_limit_exceeded",
            Self::GuestExit(_) => "guest_exited",
            Self::GuestFault(_) => "guest_fault",
            Self::Interrupted(_) => "interrupted",
        }
    }

    pub fn message(&self, limits: &Limits) -> String {
        match self {
            Self::TimeLimit => format!("the script ran longer than time_ms={}", limits.time_ms),
            Self::MemoryLimit => format!("the script needed more memory than memory_bytes={}", limits.memory_bytes),
            Self::StackLimit => "the script recursed deeper than the sandbox stack allows".into(),
            Self::ToolCallLimit => {
                format!("the script made more than max_tool_calls={} tool calls", limits.max_tool_calls)
            }
            Self::GuestExit(code) => format!("the script ended the interpreter with os._exit({code})"),
            Self::GuestFault(why) => format!("the sandbox guest failed: {why}"),
            Self::Interrupted(why) => format!("the execution was interrupted: {why}"),
        }
    }
}

/// Names the limit behind a trap from what the host saw, never from the error text.
pub(super) fn classify_trap(state: &HostState, error: &wasmtime::Error) -> StopReason {
    if state.timed_out {
        return StopReason::TimeLimit;
    }
    if state.halted {
        return StopReason::Interrupted("the service is shutting down".into());
    }
    if let Some(code) = state.exit_code {
        return StopReason::GuestExit(code);
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => StopReason::StackLimit,
        _ if state.memory_guard.denied => StopReason::MemoryLimit,
        Some(trap) => StopReason::GuestFault(format!("wasm trap: {trap}")),
        None => StopReason::GuestFault(format!("{error:#}")),
    }
}
