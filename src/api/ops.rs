//! Operations routes: `/healthz`, `/metrics` and `/openapi.json` (the [`ApiDoc`] it serves).

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::types::{
    Approvals, Container, ContainerVerification, CreateExecution, Execution, ExecutionList, Health, PreviewBody,
    Replay, ToolList, ToolResults,
};
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use utoipa::OpenApi;

// `paths(...)` names the handlers unqualified, as before the split: a module path there
// (`executions::create_execution`) would tag each operation with the module's name.
use super::containers::*;
use super::executions::*;
use super::files::*;
use super::messages::*;
use super::tools::*;

#[derive(OpenApi)]
#[openapi(
    info(title = "Sluice", description = "Programmatic tool calling in persistent Python sandboxes"),
    paths(
        create_execution,
        get_execution,
        submit_tool_results,
        decide_approvals,
        preview_execution,
        list_executions,
        replay_execution,
        create_container,
        get_container,
        delete_container,
        fork_container,
        export_container,
        verify_container,
        upload_file,
        list_files,
        get_file,
        file_content,
        delete_file,
        create_message,
        create_tool,
        list_tools,
        get_tool,
        delete_tool,
        search_tools,
        healthz,
        metrics
    ),
    components(schemas(
        ErrorBody,
        Execution,
        Container,
        CreateExecution,
        MessagesRequest,
        ToolResults,
        Approvals,
        PreviewBody,
        ToolList,
        crate::tools::search::SearchRequest,
        Health,
        ExecutionList,
        ContainerVerification,
        Replay
    ))
)]
pub(crate) struct ApiDoc;

#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health)))]
pub(super) async fn healthz(State(state): State<AppState>) -> Json<Health> {
    Json(Health { status: "ok", image: state.image_hash.to_string() })
}

/// OpenMetrics text: executions, durations, tool calls, containers, limit hits. Needs a key
/// when keys are configured (unless the operator made it public).
#[utoipa::path(get, path = "/metrics", responses((status = 200, content_type = "application/openmetrics-text"), (status = 401, body = ErrorBody)))]
pub(super) async fn metrics(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    if !state.metrics.allows(&state.keys, &headers) {
        return Err(ApiError::Unauthenticated);
    }
    Ok(([(header::CONTENT_TYPE, crate::engine::METRICS_CONTENT_TYPE)], state.service.metrics_text()))
}

pub(super) async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
