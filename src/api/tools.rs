//! `/v1/tools`: register, list, read and delete the calling key's tools.

use super::AppState;
use super::auth::Authenticated;
use super::error::{ApiError, ApiJson, ErrorBody};
use super::types::ToolList;
use crate::tools::ToolDefinition;
use crate::tools::search::SearchRequest;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};

/// Register a tool (Anthropic's fields plus executor, side_effects, timeout_ms, quota); it
/// belongs to the calling key.
#[utoipa::path(post, path = "/v1/tools", request_body = Object,
    responses((status = 201, body = Object), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub(super) async fn create_tool(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    ApiJson(definition): ApiJson<ToolDefinition>,
) -> Result<impl IntoResponse, ApiError> {
    let tool = state.service.create_tool(&owner, definition)?;
    Ok((StatusCode::CREATED, Json(tool.definition.clone())))
}

/// The calling key's tools.
#[utoipa::path(get, path = "/v1/tools", responses((status = 200, body = ToolList)))]
pub(super) async fn list_tools(State(state): State<AppState>, Authenticated(owner): Authenticated) -> Json<ToolList> {
    Json(ToolList { data: state.service.list_tools(&owner).iter().map(|t| t.definition.clone()).collect() })
}

#[utoipa::path(get, path = "/v1/tools/{name}", responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
pub(super) async fn get_tool(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<ToolDefinition>, ApiError> {
    Ok(Json(state.service.get_tool(&owner, &name)?.definition.clone()))
}

#[utoipa::path(delete, path = "/v1/tools/{name}", responses((status = 204), (status = 404, body = ErrorBody)))]
pub(super) async fn delete_tool(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.service.delete_tool(&owner, &name)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Finds the calling key's tools (registered and MCP, `defer_loading` ones included) by
/// `query` (words) or `pattern` (a case-insensitive regular expression). The answer is
/// Anthropic's `tool_search_tool_search_result`, its `tool_references` best first, plus each
/// tool's Python signature, description and score in `tools`.
#[utoipa::path(post, path = "/v1/tools/search", request_body = SearchRequest,
    responses((status = 200, body = Object), (status = 400, body = ErrorBody)))]
pub(super) async fn search_tools(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    ApiJson(request): ApiJson<SearchRequest>,
) -> Result<Json<Value>, ApiError> {
    let hits = state.service.search_tools(&owner, &request)?;
    let references: Vec<Value> =
        hits.iter().map(|hit| json!({"type": "tool_reference", "tool_name": hit.tool.name()})).collect();
    let tools: Vec<Value> = hits
        .iter()
        .map(|hit| {
            let mut described = hit.describe();
            described["score"] = json!(hit.score);
            described["defer_loading"] = json!(hit.tool.definition.defer_loading);
            described["callable_from_code"] = json!(hit.tool.definition.callable_from_code());
            described
        })
        .collect();
    Ok(Json(json!({"type": "tool_search_tool_search_result", "tool_references": references, "tools": tools})))
}
