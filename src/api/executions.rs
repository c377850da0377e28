//! `/v1/executions`: run code, read and list executions, answer their tool calls, replay them.

use super::AppState;
use super::auth::Authenticated;
use super::error::{ApiError, ApiJson, ErrorBody};
use super::types::{
    self, Approvals, CreateExecution, Execution, ExecutionList, ExecutionQuery, PreviewBody, Replay, ToolResults,
};
use axum::Json;
use axum::extract::{Path, Query, State};

/// Run code; answers when it completed, failed, or needs client tool results.
#[utoipa::path(post, path = "/v1/executions", request_body = CreateExecution,
    responses((status = 200, body = Execution), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 410, body = ErrorBody), (status = 529, body = ErrorBody)))]
pub(super) async fn create_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    headers: axum::http::HeaderMap,
    ApiJson(body): ApiJson<CreateExecution>,
) -> Result<Json<Execution>, ApiError> {
    let mut request = body.into_request()?;
    // The caller's W3C trace context: the execution's spans join its trace.
    request.trace_parent = headers
        .get("traceparent")
        .and_then(|value| value.to_str().ok())
        .and_then(crate::engine::trace::TraceParent::parse);
    let view = state.service.create_execution(&owner, request).await?;
    Ok(Json(Execution::from_view(view, false)))
}

/// An execution with its code and ledger.
#[utoipa::path(get, path = "/v1/executions/{id}", responses((status = 200, body = Execution), (status = 404, body = ErrorBody)))]
pub(super) async fn get_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Execution>, ApiError> {
    Ok(Json(Execution::from_view(state.service.get_execution(&owner, &id).await?, true)))
}

/// Answer every pending tool call of an execution; it runs on.
#[utoipa::path(post, path = "/v1/executions/{id}/tool_results", request_body = ToolResults,
    responses((status = 200, body = Execution), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub(super) async fn submit_tool_results(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ToolResults>,
) -> Result<Json<Execution>, ApiError> {
    let answers = body.tool_results.into_iter().map(types::ToolResultBlock::into_answer).collect();
    let files = body.files.into_iter().map(types::FileParam::file_id).collect();
    let view = state.service.submit_tool_results_with_files(&owner, &id, answers, files).await?;
    Ok(Json(Execution::from_view(view, false)))
}

/// Approve or deny calls held for approval (some or all); approved calls run, denied ones
/// raise `sluice.ToolDeniedError` in the script, which runs on once nothing else waits.
#[utoipa::path(post, path = "/v1/executions/{id}/approvals", request_body = Approvals,
    responses((status = 200, body = Execution), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub(super) async fn decide_approvals(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Approvals>,
) -> Result<Json<Execution>, ApiError> {
    let (decisions, by) = body.into_parts()?;
    let view = state.service.decide_approvals(&owner, &id, decisions, by).await?;
    Ok(Json(Execution::from_view(view, false)))
}

/// The tools a script's code names, with their side effects and whether calls would need
/// approval; nothing runs.
#[utoipa::path(post, path = "/v1/executions/preview", request_body = CreateExecution,
    responses((status = 200, body = PreviewBody), (status = 400, body = ErrorBody)))]
pub(super) async fn preview_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    ApiJson(body): ApiJson<CreateExecution>,
) -> Result<Json<PreviewBody>, ApiError> {
    let preview = state.service.preview_execution(&owner, &body.into_request()?)?;
    Ok(Json(PreviewBody {
        kind: "execution_preview",
        tools: preview.tools,
        complete: preview.complete,
        notes: preview.notes,
    }))
}

/// Executions on record, newest first, a page at a time; filter by container, start time,
/// outcome, tool or approval decision.
#[utoipa::path(get, path = "/v1/executions", params(ExecutionQuery),
    responses((status = 200, body = ExecutionList), (status = 400, body = ErrorBody)))]
pub(super) async fn list_executions(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Query(query): Query<ExecutionQuery>,
) -> Result<Json<ExecutionList>, ApiError> {
    let filter = query.into_filter()?;
    let page = state.service.list_executions(&owner, filter).await?;
    Ok(Json(ExecutionList { data: page.data, has_more: page.has_more }))
}

/// Re-run an execution from its container's audit trail; reports `identical` or the first divergence.
#[utoipa::path(post, path = "/v1/executions/{id}/replay",
    responses((status = 200, body = Replay), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub(super) async fn replay_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Replay>, ApiError> {
    let report = state.service.replay(&owner, &id).await?;
    Ok(Json(Replay::from(report)))
}
