//! A waiting run as data, kept with its container's snapshot so that the execution survives a
//! restart or moves to another node.

use super::run::{ApprovalCall, ClientCall, Run, RunContext};
use super::waiting::WaitingRun;
use crate::audit::{LedgerEntry, Recorder, Usage};
use crate::call::{CallResult, ToolFailure};
use crate::sandbox::Limits;
use crate::tools::Toolset;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A `Run` waiting for client tool results, as data: kept with its container's snapshot so
/// the execution survives a restart or moves to another node.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunState {
    pub id: String,
    pub container_id: String,
    pub owner: String,
    pub number: u64,
    pub code: String,
    pub tools: Vec<crate::tools::ToolDefinition>,
    /// Calls each tool has had, for `max_calls_per_execution`.
    pub calls_per_tool: BTreeMap<String, u64>,
    pub limits: Limits,
    pub ledger: Vec<LedgerEntry>,
    pub client_calls: Vec<ClientCallState>,
    /// Calls held for approval (absent in states saved before approvals existed).
    #[serde(default)]
    pub approval_calls: Vec<ApprovalCallState>,
    pub pauses: Vec<usize>,
    pub wake_after_ms: Option<u64>,
    pub usage: Usage,
    pub held: Vec<HeldResult>,
    /// For its trace (absent in states saved before traces existed).
    #[serde(default)]
    pub trace_parent: Option<super::trace::TraceParent>,
    #[serde(default)]
    pub pauses_on_caller: Vec<super::trace::Pause>,
    #[serde(default)]
    pub paused_since: Option<super::trace::Pause>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClientCallState {
    pub id: String,
    pub seq: u64,
    pub name: String,
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    /// Time left before the call times out.
    pub remaining_ms: u64,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ApprovalCallState {
    pub id: String,
    pub call_id: String,
    pub seq: u64,
    pub name: String,
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub rule: Option<usize>,
    /// Time left before the call is denied for want of a decision.
    pub remaining_ms: u64,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct HeldResult {
    pub seq: u64,
    pub content: Option<Arc<str>>,
    pub error: Option<ToolFailure>,
}

impl WaitingRun {
    /// This run as data.
    pub fn state(&self) -> RunState {
        let run = &self.0;
        let now = Instant::now();
        let remaining = |at: Instant| at.saturating_duration_since(now).as_millis() as u64;
        RunState {
            id: run.id.clone(),
            container_id: run.container_id.clone(),
            owner: run.owner.clone(),
            number: run.number,
            code: run.code.clone(),
            tools: run.toolset.tools().map(|t| t.definition.clone()).collect(),
            calls_per_tool: run.toolset.calls().clone(),
            limits: run.limits,
            ledger: run.ledger.clone(),
            client_calls: run
                .client_calls
                .iter()
                .map(|c| ClientCallState {
                    id: c.id.clone(),
                    seq: c.seq,
                    name: c.name.clone(),
                    input: c.input.clone(),
                    remaining_ms: remaining(c.deadline),
                })
                .collect(),
            approval_calls: run
                .approval_calls
                .iter()
                .map(|c| ApprovalCallState {
                    id: c.id.clone(),
                    call_id: c.call_id.clone(),
                    seq: c.seq,
                    name: c.name.clone(),
                    input: c.input.clone(),
                    reason: c.reason.clone(),
                    rule: c.rule,
                    remaining_ms: remaining(c.deadline),
                })
                .collect(),
            pauses: run.pauses.clone(),
            wake_after_ms: run.wake_at.map(remaining),
            usage: run.usage.clone(),
            held: run
                .held
                .iter()
                .map(|r| HeldResult { seq: r.seq, content: r.content.clone(), error: r.error.clone() })
                .collect(),
            trace_parent: run.trace_parent,
            pauses_on_caller: run.pauses_on_caller.clone(),
            paused_since: run.paused_since.clone(),
        }
    }

    /// A run brought back from its state; deadlines count on from now.
    pub fn from_state(state: RunState, recorder: Arc<dyn Recorder>) -> Result<Self, String> {
        let now = Instant::now();
        let context = RunContext {
            execution_id: state.id,
            container_id: state.container_id,
            owner: state.owner,
            number: state.number,
        };
        let toolset = Toolset::from_definitions(state.tools)?.with_calls(state.calls_per_tool);
        let mut run = Run::new(context, toolset, state.limits, recorder);
        run.code = state.code;
        run.ledger = state.ledger;
        run.client_calls = state
            .client_calls
            .into_iter()
            .map(|c| ClientCall {
                id: c.id,
                seq: c.seq,
                name: c.name,
                input: c.input,
                deadline: now + Duration::from_millis(c.remaining_ms),
            })
            .collect();
        run.approval_calls = state
            .approval_calls
            .into_iter()
            .map(|c| ApprovalCall {
                id: c.id,
                call_id: c.call_id,
                seq: c.seq,
                name: c.name,
                input: c.input,
                reason: c.reason,
                rule: c.rule,
                deadline: now + Duration::from_millis(c.remaining_ms),
            })
            .collect();
        run.pauses = state.pauses;
        run.wake_at = state.wake_after_ms.map(|ms| now + Duration::from_millis(ms));
        run.usage = state.usage;
        run.held =
            state.held.into_iter().map(|r| CallResult { seq: r.seq, content: r.content, error: r.error }).collect();
        run.trace_parent = state.trace_parent;
        run.pauses_on_caller = state.pauses_on_caller;
        run.paused_since = state.paused_since;
        Ok(WaitingRun(run))
    }
}
