//! `/v1/executions`: run code, read and list executions, answer their tool calls, replay them.

use super::AppState;
use super::auth::Authenticated;
use super::containers::container_id;
use super::error::{ApiError, ApiJson, ErrorBody};
use super::types::{self, CreateExecution, Execution, ExecutionList, ExecutionQuery, Replay, ToolResults};
use crate::engine::service::NewExecution;
use axum::Json;
use axum::extract::{Path, Query, State};

/// Run code; answers when it completed, failed, or needs client tool results.
#[utoipa::path(post, path = "/v1/executions", request_body = CreateExecution,
    responses((status = 200, body = Execution), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 410, body = ErrorBody), (status = 529, body = ErrorBody)))]
pub(super) async fn create_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    ApiJson(body): ApiJson<CreateExecution>,
) -> Result<Json<Execution>, ApiError> {
    let container = body.container.as_ref().map(|c| container_id(c.id())).transpose()?;
    let request = NewExecution {
        code: body.code,
        container,
        tools: body.tools,
        tool_names: body.tool_names,
        server_side_tools: false,
        limits: body.limits,
    };
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
    let view = state.service.submit_tool_results(&owner, &id, answers).await?;
    Ok(Json(Execution::from_view(view, false)))
}

/// Executions on record, newest first; filter by container, start time, outcome or tool.
#[utoipa::path(get, path = "/v1/executions", params(ExecutionQuery),
    responses((status = 200, body = ExecutionList), (status = 400, body = ErrorBody)))]
pub(super) async fn list_executions(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Query(query): Query<ExecutionQuery>,
) -> Result<Json<ExecutionList>, ApiError> {
    let filter = query.into_filter()?;
    let data = state.service.list_executions(&owner, filter).await?;
    Ok(Json(ExecutionList { data }))
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
