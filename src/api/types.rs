//! Request and response bodies of the API (the contract in `docs/design.md`, section 7).

use crate::call::{FailureCode, ToolFailure};
use crate::engine::service::{ContainerView, ExecutionStatus, ExecutionView};
use crate::engine::{CALLER_TYPE, LedgerEntry, Usage};
use crate::sandbox::LimitOverrides;
use crate::tools::ToolDefinition;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::SystemTime;
use utoipa::ToSchema;

pub(crate) fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// `POST /v1/executions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateExecution {
    /// The Python script.
    pub code: String,
    /// An existing container: its id, or `{"id": ...}` as Anthropic's `container` object;
    /// none creates a new container.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub container: Option<ContainerParam>,
    /// Tool definitions for this execution.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub tools: Vec<ToolDefinition>,
    /// Registered tools, by name.
    #[serde(default)]
    pub tool_names: Vec<String>,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub limits: LimitOverrides,
    /// Files to put into the container's working directory (`/workspace`) before the code
    /// runs: file ids, or Anthropic's `container_upload` blocks, naming files of `POST /v1/files`.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub files: Vec<FileParam>,
    /// Content blocks of the turn, as a Messages request carries them: `container_upload`
    /// blocks place files as `files` does.
    #[serde(default)]
    pub content: Vec<ContainerUpload>,
}

/// A file to place: its id, or a `container_upload` block naming it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum FileParam {
    Id(String),
    Block(ContainerUpload),
}

impl FileParam {
    pub(crate) fn file_id(self) -> String {
        match self {
            Self::Id(id) => id,
            Self::Block(block) => block.file_id,
        }
    }
}

/// Anthropic's `container_upload` block.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContainerUpload {
    #[serde(rename = "type")]
    #[expect(dead_code, reason = "read only by serde, which refuses any other type")]
    pub kind: ContainerUploadType,
    pub file_id: String,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    #[expect(dead_code, reason = "accepted for Anthropic's shape, and ignored")]
    pub cache_control: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ContainerUploadType {
    ContainerUpload,
}

impl CreateExecution {
    /// The engine's request. `POST /v1/executions/preview` takes the same body (its limits
    /// do not matter: nothing runs).
    pub(crate) fn into_request(self) -> Result<crate::engine::service::NewExecution, crate::api::error::ApiError> {
        let container = self.container.as_ref().map(|c| crate::api::containers::container_id(c.id())).transpose()?;
        Ok(crate::engine::service::NewExecution {
            code: self.code,
            container,
            tools: self.tools,
            tool_names: self.tool_names,
            server_side_tools: false,
            limits: self.limits,
            files: self
                .files
                .into_iter()
                .map(FileParam::file_id)
                .chain(self.content.into_iter().map(|b| b.file_id))
                .collect(),
            trace_parent: None,
        })
    }
}

/// A container named by id, as a string or as Anthropic's object.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ContainerParam {
    Id(String),
    Object { id: String },
}

impl ContainerParam {
    pub(crate) fn id(&self) -> &str {
        match self {
            Self::Id(id) | Self::Object { id } => id,
        }
    }
}

/// `POST /v1/executions/{id}/approvals`: decisions on some or all of the calls held for
/// approval.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Approvals {
    pub decisions: Vec<ApprovalDecisionBody>,
    /// Who decided, as the ledger records it (a person's name or address); the API key's
    /// owner id when absent.
    #[serde(default)]
    pub by: Option<String>,
}

/// Longest `by` or `reason` of a decision.
pub(crate) const MAX_DECISION_TEXT_BYTES: usize = 1024;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApprovalDecisionBody {
    /// The `id` of an entry of the execution's `approval_requests`.
    pub id: String,
    /// `approve` or `deny`.
    #[schema(value_type = String)]
    pub decision: DecisionWord,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DecisionWord {
    Approve,
    Deny,
}

impl Approvals {
    /// The decisions for the engine, and who made them; over-long text is refused.
    pub(crate) fn into_parts(
        self,
    ) -> Result<(Vec<crate::engine::ApprovalAnswer>, Option<String>), crate::api::error::ApiError> {
        let too_long = |what: &str| {
            crate::api::error::ApiError::InvalidRequest(format!(
                "{what} is longer than {MAX_DECISION_TEXT_BYTES} bytes"
            ))
        };
        if self.by.as_ref().is_some_and(|by| by.len() > MAX_DECISION_TEXT_BYTES) {
            return Err(too_long("by"));
        }
        let decisions = self
            .decisions
            .into_iter()
            .map(|d| {
                if d.reason.as_ref().is_some_and(|r| r.len() > MAX_DECISION_TEXT_BYTES) {
                    return Err(too_long("a decision's reason"));
                }
                Ok(crate::engine::ApprovalAnswer {
                    id: d.id,
                    approve: matches!(d.decision, DecisionWord::Approve),
                    reason: d.reason,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok((decisions, self.by))
    }
}

/// What a script could reach: each tool its code names, with its side effects and whether a
/// call would need approval.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PreviewBody {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[schema(value_type = Vec<Object>)]
    pub tools: Vec<crate::engine::service::PreviewTool>,
    pub complete: bool,
    pub notes: Vec<String>,
}

/// `POST /v1/executions/{id}/tool_results`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolResults {
    pub tool_results: Vec<ToolResultBlock>,
    /// Files to put into `/workspace` before the script resumes: ids or `container_upload`
    /// blocks, as a user turn with tool results may carry them.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub files: Vec<FileParam>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolResultBlock {
    #[serde(rename = "type")]
    #[expect(dead_code, reason = "read only by serde, which refuses any other type")]
    pub kind: ToolResultType,
    pub tool_use_id: String,
    #[serde(default)]
    pub content: ToolResultContent,
    #[serde(default)]
    pub is_error: bool,
    /// Accepted as Anthropic accepts it; prompt caching does not apply here.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    #[expect(dead_code, reason = "accepted for Anthropic's shape, and ignored")]
    pub cache_control: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolResultType {
    ToolResult,
}

/// A string, or a list of text blocks (joined).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum ToolResultContent {
    Text(String),
    Blocks(Vec<TextBlock>),
}

impl Default for ToolResultContent {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TextBlock {
    #[serde(rename = "type")]
    #[expect(dead_code, reason = "read only by serde, which refuses any other type")]
    pub kind: TextType,
    pub text: String,
    /// Accepted as Anthropic accepts them on a text block; the script receives the text.
    #[serde(default)]
    #[schema(value_type = Option<Vec<Object>>)]
    #[expect(dead_code, reason = "accepted for Anthropic's shape, and ignored")]
    pub citations: Option<serde_json::Value>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    #[expect(dead_code, reason = "accepted for Anthropic's shape, and ignored")]
    pub cache_control: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TextType {
    Text,
}

impl ToolResultBlock {
    /// The answer as the engine takes it: text, or an error the script sees as `ToolError`.
    pub(crate) fn into_answer(self) -> (String, Result<String, ToolFailure>) {
        let text = match self.content {
            ToolResultContent::Text(text) => text,
            ToolResultContent::Blocks(blocks) => blocks.into_iter().map(|b| b.text).collect::<Vec<_>>().join(""),
        };
        let result = if self.is_error { Err(ToolFailure::new(FailureCode::ToolError, text)) } else { Ok(text) };
        (self.tool_use_id, result)
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ContainerRef {
    pub id: String,
    pub expires_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CallerBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub tool_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ToolUseBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub input: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
    pub caller: CallerBlock,
}

/// A call held until a person approves or denies it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ApprovalRequestBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Decisions name this id (`apr_...`).
    pub id: String,
    /// The call's id: a client tool's `tool_use` has it once approved; the ledger entry's.
    pub tool_use_id: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub input: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
    pub caller: CallerBlock,
    /// `read_only`, `idempotent` or `write`.
    #[schema(value_type = String)]
    pub side_effects: crate::tools::SideEffects,
    /// `client`, `http` or `mcp`.
    pub executor: &'static str,
    pub reason: Option<String>,
    /// The approval policy's rule that asked (its index), if one did.
    pub rule: Option<usize>,
    /// 1 for the execution's first tool call.
    pub call_number: u64,
    /// Calls the execution made before this one, by tool.
    #[schema(value_type = Object)]
    pub calls_so_far: BTreeMap<String, u64>,
    /// Denied (`approval_timeout`) at this time if nobody decides.
    pub expires_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CodeExecutionResult {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub stdout: String,
    pub stderr: String,
    pub return_code: i32,
    /// Files the execution created or changed in `/workspace`: `code_execution_output` blocks
    /// naming files to download from `GET /v1/files/{id}/content`.
    pub content: Vec<OutputBlock>,
    /// `repr` of a trailing expression, REPL style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_repr: Option<String>,
}

/// Anthropic's `code_execution_output` block.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct OutputBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub file_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorInfo {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct UsageBody {
    pub tool_calls: u64,
    pub tool_result_bytes: u64,
    pub returned_bytes: u64,
    pub time_ms: u64,
    /// Anthropic's counters of server tools, beside Sluice's own.
    pub server_tool_use: ServerToolUse,
}

/// Anthropic's `server_tool_use`: this execution is one code execution request.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ServerToolUse {
    pub code_execution_requests: u64,
    pub web_search_requests: u64,
    pub web_fetch_requests: u64,
}

impl From<&Usage> for UsageBody {
    fn from(u: &Usage) -> Self {
        Self {
            tool_calls: u.tool_calls,
            tool_result_bytes: u.tool_result_bytes,
            returned_bytes: u.returned_bytes,
            time_ms: u.time_ms,
            server_tool_use: ServerToolUse {
                code_execution_requests: 1,
                web_search_requests: 0,
                web_fetch_requests: 0,
            },
        }
    }
}

/// Anthropic's `code_execution_tool_result` block for a finished execution, ready to go into
/// a Messages conversation.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CodeExecutionToolResult {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub tool_use_id: String,
    #[schema(value_type = Object)]
    pub content: serde_json::Value,
}

/// The closest of Anthropic's `code_execution_tool_result_error` codes to a Sluice stop.
pub(crate) fn anthropic_error_code(sluice_code: &str) -> &'static str {
    match sluice_code {
        "execution_time_exceeded" => "execution_time_exceeded",
        "tool_call_limit_exceeded" => "too_many_requests",
        _ => "unavailable",
    }
}

/// An execution, as every endpoint returns it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Execution {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub container: ContainerRef,
    /// `completed`, `requires_action` or `failed`.
    #[schema(value_type = String)]
    pub status: ExecutionStatus,
    pub tool_uses: Vec<ToolUseBlock>,
    /// Calls held for approval (`POST /v1/executions/{id}/approvals`); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub approval_requests: Vec<ApprovalRequestBlock>,
    pub result: Option<CodeExecutionResult>,
    pub error: Option<ErrorInfo>,
    /// Once finished: the result as Anthropic's `code_execution_tool_result` block; for a
    /// failed execution its content is a `code_execution_tool_result_error` with the closest
    /// of Anthropic's codes, and Sluice's own in `sluice_error_code`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_execution_tool_result: Option<CodeExecutionToolResult>,
    #[schema(value_type = Object)]
    pub counts: BTreeMap<String, serde_json::Number>,
    pub usage: UsageBody,
    pub created_at: String,
    /// Only with `GET /v1/executions/{id}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Only with `GET /v1/executions/{id}`: every tool call, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub ledger: Option<Vec<LedgerEntry>>,
}

impl Execution {
    pub(crate) fn from_view(view: ExecutionView, with_audit: bool) -> Self {
        let tool_uses = view
            .tool_uses
            .into_iter()
            .map(|t| ToolUseBlock {
                kind: "tool_use",
                id: t.id,
                name: t.name,
                input: t.input,
                caller: CallerBlock { kind: CALLER_TYPE, tool_id: view.id.clone() },
            })
            .collect();
        let approval_requests = view
            .approval_requests
            .into_iter()
            .map(|r| ApprovalRequestBlock {
                kind: "approval_request",
                id: r.id,
                tool_use_id: r.tool_use_id,
                name: r.name,
                input: r.input,
                caller: CallerBlock { kind: CALLER_TYPE, tool_id: view.id.clone() },
                side_effects: r.side_effects,
                executor: r.executor,
                reason: r.reason,
                rule: r.rule,
                call_number: r.call_number,
                calls_so_far: r.calls_so_far,
                expires_at: rfc3339(r.expires_at),
            })
            .collect();
        let counts = view.outcome.as_ref().map(|o| o.counts.clone()).unwrap_or_default();
        let result = view.outcome.map(|o| CodeExecutionResult {
            kind: "code_execution_result",
            stdout: o.stdout,
            stderr: o.stderr,
            return_code: o.return_code,
            content: view
                .output_files
                .iter()
                .map(|f| OutputBlock { kind: "code_execution_output", file_id: f.file_id.clone() })
                .collect(),
            value_repr: o.value_repr,
        });
        let block_content = match (&view.error, &result) {
            (Some(error), _) => Some(serde_json::json!({
                "type": "code_execution_tool_result_error",
                "error_code": anthropic_error_code(&error.kind),
                "sluice_error_code": error.kind,
            })),
            (None, Some(result)) => serde_json::to_value(result).ok(),
            (None, None) => None,
        };
        let code_execution_tool_result = block_content.map(|content| CodeExecutionToolResult {
            kind: "code_execution_tool_result",
            tool_use_id: view.id.clone(),
            content,
        });
        Self {
            id: view.id,
            kind: "execution",
            container: ContainerRef {
                id: view.container_id.to_string(),
                expires_at: rfc3339(view.container_expires_at),
            },
            status: view.status,
            tool_uses,
            approval_requests,
            result,
            error: view.error.map(|e| ErrorInfo { kind: e.kind, message: e.message }),
            code_execution_tool_result,
            counts,
            usage: UsageBody::from(&view.usage),
            created_at: rfc3339(view.created_at),
            code: with_audit.then_some(view.code),
            ledger: with_audit.then_some(view.ledger),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Container {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub created_at: String,
    pub expires_at: String,
    /// `idle`, `running` or `waiting_for_tools`.
    pub state: String,
    pub executions: u64,
}

impl From<ContainerView> for Container {
    fn from(view: ContainerView) -> Self {
        Self {
            id: view.id.to_string(),
            kind: "container",
            created_at: rfc3339(view.created_at),
            expires_at: rfc3339(view.expires_at),
            state: serde_json::to_value(view.state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            executions: view.executions,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ToolList {
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<ToolDefinition>,
}

/// Filters of `GET /v1/executions`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecutionQuery {
    pub container: Option<String>,
    /// RFC 3339 time or Unix milliseconds: started at or after.
    pub since: Option<String>,
    /// RFC 3339 time or Unix milliseconds: started at or before.
    pub until: Option<String>,
    /// `completed`, `python_error`, a limit's code, `interrupted`.
    pub outcome: Option<String>,
    /// `completed` (an uncaught exception included), `failed` (stopped by a limit or the
    /// host) or `running`.
    pub status: Option<String>,
    /// Executions that called this tool.
    pub tool: Option<String>,
    /// Executions with a call `approved`, `denied`, or `asked` about (a person was asked).
    pub approval: Option<String>,
    /// The next page: executions listed after this one (the last id of the previous page).
    pub before: Option<String>,
    /// Rows per page, 1 to 999 (999 when absent).
    pub limit: Option<i64>,
}

fn parse_time(field: &str, text: &str) -> Result<i64, crate::api::error::ApiError> {
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    humantime::parse_rfc3339_weak(text).map(|t| crate::audit::unix_ms(t) as i64).map_err(|_| {
        crate::api::error::ApiError::InvalidRequest(format!("{field} must be an RFC 3339 time or Unix milliseconds"))
    })
}

impl ExecutionQuery {
    pub(crate) fn into_filter(self) -> Result<crate::audit::ExecutionFilter, crate::api::error::ApiError> {
        Ok(crate::audit::ExecutionFilter {
            owner: None,
            container_id: self.container,
            since: self.since.as_deref().map(|t| parse_time("since", t)).transpose()?,
            until: self.until.as_deref().map(|t| parse_time("until", t)).transpose()?,
            outcome: self.outcome,
            status: self.status,
            tool: self.tool,
            approval: match self.approval.as_deref() {
                None => None,
                Some(word @ ("approved" | "denied" | "asked")) => Some(word.to_owned()),
                Some(_) => {
                    return Err(crate::api::error::ApiError::InvalidRequest(
                        "approval must be approved, denied or asked".into(),
                    ));
                }
            },
            before: self.before,
            limit: self.limit,
        })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ExecutionList {
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<crate::audit::ExecutionRow>,
    /// More match: ask again with `before` set to the last row's id.
    pub has_more: bool,
}

/// `GET /v1/containers/{id}/verify`: what checking the container's chain found.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ContainerVerification {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub container_id: String,
    pub records: usize,
    /// Every record's seal and link holds (and the fork point, for a fork).
    pub verified: bool,
    /// What does not hold, when something does not.
    pub problem: Option<String>,
    pub forked_from: Option<String>,
}

impl From<crate::engine::service::ContainerVerdict> for ContainerVerification {
    fn from(verdict: crate::engine::service::ContainerVerdict) -> Self {
        Self {
            kind: "container_verification",
            container_id: verdict.container_id,
            records: verdict.records,
            verified: verdict.problem.is_none(),
            problem: verdict.problem,
            forked_from: verdict.forked_from,
        }
    }
}

/// The result of a replay.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Replay {
    pub execution_id: String,
    /// `identical` or `diverged`.
    pub result: &'static str,
    pub divergence: Option<String>,
    pub executions_replayed: usize,
    pub elapsed_ms: f64,
}

impl From<crate::engine::replay::ReplayReport> for Replay {
    fn from(report: crate::engine::replay::ReplayReport) -> Self {
        Self {
            execution_id: report.execution_id,
            result: if report.divergence.is_none() { "identical" } else { "diverged" },
            divergence: report.divergence,
            executions_replayed: report.executions_replayed,
            elapsed_ms: report.elapsed.as_secs_f64() * 1e3,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    pub status: &'static str,
    pub image: String,
}
