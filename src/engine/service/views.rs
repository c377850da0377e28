//! What readers see of executions and containers: views replaced after every step, and
//! views rebuilt from the audit trail for executions no longer in memory.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    Running,
    RequiresAction,
    Completed,
    Failed,
}

/// A call handed to the API caller, as a `tool_use` block shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
}

impl From<&crate::engine::ClientCall> for ToolUse {
    fn from(call: &crate::engine::ClientCall) -> Self {
        Self { id: call.id.clone(), name: call.name.clone(), input: call.input.clone() }
    }
}

/// A call of an execution saved while waiting, as it was handed out.
impl From<&crate::engine::ClientCallState> for ToolUse {
    fn from(call: &crate::engine::ClientCallState) -> Self {
        Self { id: call.id.clone(), name: call.name.clone(), input: call.input.clone() }
    }
}

/// A call held for a person's approval, with what they need to decide.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    /// The approval's id, which decisions name.
    pub id: String,
    /// The call's id: its `tool_use` id once approved (a client tool), its ledger entry's.
    pub tool_use_id: String,
    pub name: String,
    /// The arguments as the tool would receive them (after coercion).
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    pub side_effects: crate::tools::SideEffects,
    /// `client`, `http` or `mcp`.
    pub executor: &'static str,
    /// Why it waits: the policy rule's reason, or that the tool requires approval.
    pub reason: Option<String>,
    /// The policy rule that asked (its index in the policy file), if one did.
    pub rule: Option<usize>,
    /// Its place in the script: 1 for the execution's first tool call.
    pub call_number: u64,
    /// Calls the execution made before this one, by tool.
    pub calls_so_far: BTreeMap<String, u64>,
    /// When it is denied (`approval_timeout`) if nobody decides.
    pub expires_at: SystemTime,
}

/// What a waiting run waits on: client calls and calls held for approval.
pub(crate) fn waiting_on(run: &Run) -> (Vec<ToolUse>, Vec<ApprovalRequest>) {
    let now = (Instant::now(), SystemTime::now());
    // Held calls and the ledger are both in call order: one walk of the ledger counts the
    // calls before each held call (a gather of thousands of writes stays linear).
    let (mut ledger, mut calls_so_far) = (run.ledger().iter().peekable(), BTreeMap::<String, u64>::new());
    let requests = run
        .approval_calls()
        .iter()
        .map(|call| {
            while let Some(earlier) = ledger.next_if(|e| e.seq < call.seq) {
                *calls_so_far.entry(earlier.tool.clone()).or_default() += 1;
            }
            let definition = run.toolset.get(&call.name).map(|t| &t.definition);
            ApprovalRequest {
                id: call.id.clone(),
                tool_use_id: call.call_id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                side_effects: definition.map(|d| d.side_effects).unwrap_or_default(),
                executor: definition.map_or("client", |d| d.executor.kind()),
                reason: call.reason.clone(),
                rule: call.rule,
                call_number: call.seq + 1,
                calls_so_far: calls_so_far.clone(),
                expires_at: now.1 + call.deadline.saturating_duration_since(now.0),
            }
        })
        .collect();
    (run.client_calls().iter().map(ToolUse::from).collect(), requests)
}

/// Why an execution failed, beyond the script's own exceptions.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionError {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

/// What readers of an execution see; replaced after every step.
#[derive(Debug, Clone)]
pub struct ExecutionView {
    pub id: String,
    pub container_id: Uuid,
    pub container_expires_at: SystemTime,
    pub code: String,
    pub status: ExecutionStatus,
    pub tool_uses: Vec<ToolUse>,
    pub approval_requests: Vec<ApprovalRequest>,
    pub outcome: Option<Outcome>,
    pub error: Option<ExecutionError>,
    pub usage: Usage,
    pub ledger: Vec<LedgerEntry>,
    pub created_at: SystemTime,
    /// Files the finished execution created or changed, kept under these ids.
    pub output_files: Vec<crate::audit::FileRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerState {
    Idle,
    Running,
    WaitingForTools,
}

#[derive(Debug, Clone)]
pub struct ContainerView {
    pub id: Uuid,
    pub created_at: SystemTime,
    pub expires_at: SystemTime,
    pub state: ContainerState,
    pub executions: u64,
}

/// What a new execution asks for.
#[derive(Debug, Clone, Default)]
pub struct NewExecution {
    pub code: String,
    pub container: Option<Uuid>,
    pub tools: Vec<ToolDefinition>,
    pub tool_names: Vec<String>,
    /// Every tool the service calls itself (the MCP servers', the key's `http` ones) besides
    /// those named: what an execution through MCP, with no caller to answer `client` tools,
    /// may use. Not counted against the per-request cap on tools.
    pub server_side_tools: bool,
    pub limits: LimitOverrides,
    /// Files (by id) to put into the container's working directory before the code runs.
    pub files: Vec<String>,
    /// The caller's trace (`traceparent`), which the execution's spans join.
    pub trace_parent: Option<crate::engine::trace::TraceParent>,
}

/// About what a view holds in memory: its texts, and the ledger's arguments and results.
pub(super) fn view_bytes(view: &ExecutionView) -> usize {
    let outcome = view
        .outcome
        .as_ref()
        .map_or(0, |o| o.stdout.len() + o.stderr.len() + o.value_repr.as_ref().map_or(0, String::len));
    let ledger: usize = view
        .ledger
        .iter()
        .map(|c| c.result.as_ref().map_or(0, |r| r.len()) + serde_json::to_string(&*c.input).map_or(0, |t| t.len()))
        .sum();
    view.code.len() + outcome + ledger
}

/// An execution's view rebuilt from the audit trail (after a restart, or once evicted).
pub(super) fn view_from_history(
    history: &ContainerHistory,
    execution: &crate::audit::ExecutionHistory,
) -> ExecutionView {
    let at = |ms: u64| SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
    let finished = execution.finished.as_ref();
    let outcome = finished.map(|f| Outcome {
        stdout: f.stdout.clone(),
        stderr: f.stderr.clone(),
        return_code: i32::try_from(f.return_code).unwrap_or(1),
        value_repr: f.value_repr.clone(),
        error: f.exception.as_ref().map(|e| crate::sandbox::PythonError {
            kind: e.kind.clone(),
            message: e.message.clone(),
            traceback: e.traceback.clone(),
        }),
        counts: f.counts.clone(),
        stop: None,
        run_time: Duration::from_millis(f.usage.time_ms),
        tool_calls: f.usage.tool_calls,
        files: Vec::new(),
    });
    let status = match finished {
        Some(f) if f.status == crate::audit::FinishStatus::Completed => ExecutionStatus::Completed,
        Some(_) => ExecutionStatus::Failed,
        // Started but never finished on record: the node holding it stopped.
        None => ExecutionStatus::Failed,
    };
    let error = match finished {
        Some(f) if f.status != crate::audit::FinishStatus::Completed => Some(ExecutionError {
            kind: f.outcome.as_str().into(),
            message: f.error_message.clone().unwrap_or_default(),
        }),
        None => Some(ExecutionError {
            kind: crate::audit::Ending::Interrupted.as_str().into(),
            message: "the execution did not finish on record (the node running it stopped)".into(),
        }),
        _ => None,
    };
    ExecutionView {
        id: execution.execution_id.clone(),
        container_id: history.container_id.parse().unwrap_or_default(),
        container_expires_at: at(finished.map_or(execution.started_at, |f| f.finished_at)),
        code: execution.code.clone(),
        status,
        tool_uses: Vec::new(),
        approval_requests: Vec::new(),
        outcome,
        error,
        usage: finished.map(|f| f.usage.clone()).unwrap_or_default(),
        ledger: execution.ledger.clone(),
        created_at: at(execution.started_at),
        output_files: finished.map(|f| f.files.clone()).unwrap_or_default(),
    }
}
