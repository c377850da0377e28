//! A tool call on both sides of the sandbox: the call the script made, its result, and the
//! failures the script sees as `sluice` exceptions. No wasm here: the sandbox carries these
//! across the boundary, the tools and the engine produce and record them.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Why a call failed, as the script sees it: each code raises the `sluice` exception the guest
/// runtime maps it to (`invalid_input`: `ToolInputError`; `not_allowed`, `unknown_tool`,
/// `quota_exceeded`: `ToolNotAllowedError`; `timeout`: `ToolTimeoutError`; `unavailable`:
/// `ToolUnavailableError`; `denied`, `approval_timeout`: `ToolDeniedError`; the rest:
/// `ToolError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// The arguments are malformed or do not match the tool's schema.
    InvalidInput,
    /// The tool may not be called from code (or not here).
    NotAllowed,
    /// No tool of that name.
    UnknownTool,
    /// The tool's `max_calls_per_execution` is used up.
    QuotaExceeded,
    /// No answer in time; the tool may still have acted.
    Timeout,
    /// The tool could not be reached, after the retries the host made.
    Unavailable,
    /// The tool answered with an error.
    ToolError,
    /// `sluice run` was given no answer for the call.
    NoAnswer,
    /// The result would take the execution past its tool result budget.
    ResultTooLarge,
    /// The process running the execution stopped; the call's outcome is unknown.
    Interrupted,
    /// A person or the operator's policy refused the call; the tool did not run.
    Denied,
    /// Nobody approved the call within `pending_timeout_ms`; the tool did not run.
    ApprovalTimeout,
}

impl FailureCode {
    /// The stable name clients and scripts see.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid_input",
            Self::NotAllowed => "not_allowed",
            Self::UnknownTool => "unknown_tool",
            Self::QuotaExceeded => "quota_exceeded",
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::ToolError => "tool_error",
            Self::NoAnswer => "no_answer",
            Self::ResultTooLarge => "result_too_large",
            Self::Interrupted => "interrupted",
            Self::Denied => "denied",
            Self::ApprovalTimeout => "approval_timeout",
        }
    }
}

impl std::fmt::Display for FailureCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Raised in the script as the `sluice` exception that `code` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFailure {
    pub code: FailureCode,
    pub message: String,
    #[serde(default)]
    pub details: serde_json::Value,
}

impl ToolFailure {
    pub fn new(code: FailureCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), details: serde_json::Value::Null }
    }
}

/// A tool as the guest sees it: an `async def` global of that name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestTool {
    pub name: String,
    /// Property names in `input_schema` order, for positional arguments.
    #[serde(default)]
    pub params: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The host answers this tool's calls at once, never pausing the execution for someone
    /// else's answer (a client's result or a person's approval). The guest may then make a
    /// lone awaited call without returning to its event loop (2.4x cheaper, peers bench 5a); a pause
    /// that may outlive the process must not be waited for that way, as a container waiting
    /// inside a call cannot be saved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answered_in_place: bool,
}

/// The answer to one tool call (by the host's number): its text, or the failure the script
/// sees as an exception.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    pub seq: u64,
    /// Shared with the ledger that records it: results can be megabytes.
    pub content: Option<Arc<str>>,
    pub error: Option<ToolFailure>,
}

impl CallResult {
    pub fn ok(seq: u64, content: impl Into<Arc<str>>) -> Self {
        Self { seq, content: Some(content.into()), error: None }
    }

    pub fn failed(seq: u64, failure: ToolFailure) -> Self {
        Self { seq, content: None, error: Some(failure) }
    }
}

/// A tool call the script made, numbered by the host (0 for an execution's first call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub seq: u64,
    pub name: String,
    pub input: serde_json::Map<String, serde_json::Value>,
    /// Set when the call itself is malformed (arguments too large or too deep, not a JSON
    /// object): the engine answers it with this failure instead of passing it on.
    #[serde(skip)]
    pub refusal: Option<ToolFailure>,
}

/// Lower-case hex of `bytes` (digests, ids).
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_codes_have_their_wire_names() {
        for code in [FailureCode::InvalidInput, FailureCode::ResultTooLarge, FailureCode::Timeout] {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        assert_eq!(hex(&[0, 0xab, 0x10]), "00ab10");
    }
}
