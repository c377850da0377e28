//! The HTTP API (axum): routes, auth and errors, a thin shell over the engine's [`Service`].
//!
//! [`app`] builds the router (tests drive it directly); [`serve`] runs it on a listener
//! until the shutdown future resolves, then shuts down within a bounded time (see [`server`]).

pub mod auth;
pub mod error;
pub mod server;
pub mod types;

pub use server::{ServeOptions, serve_with};

use crate::engine::service::{NewExecution, Service};
use crate::tools::ToolDefinition;
use auth::{ApiKeys, Authenticated};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use error::{ApiError, ApiJson, ErrorBody};
use std::future::Future;
use std::sync::Arc;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use types::{
    Container, CreateExecution, Execution, ExecutionList, ExecutionQuery, Health, Replay, ToolList, ToolResults,
};
use utoipa::OpenApi;
use uuid::Uuid;

/// Largest request body (code is limited separately, to 1 MiB).
pub const MAX_BODY_BYTES: usize = 4 << 20;
/// A request body must arrive within this (a body sent a byte a minute is dropped).
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Clone)]
pub struct AppState {
    pub service: Service,
    pub keys: Arc<ApiKeys>,
    pub image_hash: Arc<str>,
    /// Who may read `/metrics`.
    pub metrics: auth::MetricsAccess,
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Sluice", description = "Programmatic tool calling in persistent Python sandboxes"),
    paths(
        create_execution,
        get_execution,
        submit_tool_results,
        list_executions,
        replay_execution,
        create_container,
        get_container,
        delete_container,
        fork_container,
        export_container,
        create_tool,
        list_tools,
        get_tool,
        delete_tool,
        healthz,
        metrics
    ),
    components(schemas(
        ErrorBody,
        Execution,
        Container,
        CreateExecution,
        ToolResults,
        ToolList,
        Health,
        ExecutionList,
        Replay
    ))
)]
pub struct ApiDoc;

/// The router with every route, auth, limits and request logs.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/v1/executions", post(create_execution).get(list_executions))
        .route("/v1/executions/{id}", get(get_execution))
        .route("/v1/executions/{id}/tool_results", post(submit_tool_results))
        .route("/v1/executions/{id}/replay", post(replay_execution))
        .route("/v1/containers", post(create_container))
        .route("/v1/containers/{id}", get(get_container).delete(delete_container))
        .route("/v1/containers/{id}/export", get(export_container))
        .route("/v1/containers/{id}/fork", post(fork_container))
        .route("/v1/tools", post(create_tool).get(list_tools))
        .route("/v1/tools/{name}", get(get_tool).delete(delete_tool))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .fallback(|| async { ApiError::NotFound("route".into()) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(axum::middleware::from_fn_with_state(state.clone(), per_key_requests))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(BODY_READ_TIMEOUT))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(tracing::Level::INFO))
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .with_state(state)
}

/// Serves until `shutdown` resolves, with the default [`ServeOptions`].
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, state, ServeOptions::default(), shutdown).await
}

fn container_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(format!("container {raw}")))
}

/// Run code; answers when it completed, failed, or needs client tool results.
#[utoipa::path(post, path = "/v1/executions", request_body = CreateExecution,
    responses((status = 200, body = Execution), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 410, body = ErrorBody), (status = 503, body = ErrorBody)))]
async fn create_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    ApiJson(body): ApiJson<CreateExecution>,
) -> Result<Json<Execution>, ApiError> {
    let container = body.container.as_deref().map(container_id).transpose()?;
    let request = NewExecution {
        code: body.code,
        container,
        tools: body.tools,
        tool_names: body.tool_names,
        limits: body.limits,
    };
    let view = state.service.create_execution(&owner, request).await?;
    Ok(Json(Execution::from_view(view, false)))
}

/// An execution with its code and ledger.
#[utoipa::path(get, path = "/v1/executions/{id}", responses((status = 200, body = Execution), (status = 404, body = ErrorBody)))]
async fn get_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Execution>, ApiError> {
    Ok(Json(Execution::from_view(state.service.get_execution(&owner, &id).await?, true)))
}

/// Answer every pending tool call of an execution; it runs on.
#[utoipa::path(post, path = "/v1/executions/{id}/tool_results", request_body = ToolResults,
    responses((status = 200, body = Execution), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
async fn submit_tool_results(
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
async fn list_executions(
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
async fn replay_execution(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Replay>, ApiError> {
    let report = state.service.replay(&owner, &id).await?;
    Ok(Json(Replay::from(report)))
}

/// A container's audit chain as a bundle: a header line, then one record per line.
#[utoipa::path(get, path = "/v1/containers/{id}/export",
    responses((status = 200, content_type = "application/x-ndjson"), (status = 404, body = ErrorBody)))]
async fn export_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let id = container_id(&id)?;
    let records = state.service.container_records(&owner, id).await?;
    let mut bundle = Vec::new();
    crate::audit::write_bundle(&id.to_string(), &records, &mut bundle)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], bundle))
}

/// A new, empty container.
#[utoipa::path(post, path = "/v1/containers", responses((status = 200, body = Container), (status = 503, body = ErrorBody)))]
async fn create_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
) -> Result<Json<Container>, ApiError> {
    Ok(Json(state.service.create_container(&owner).await?.into()))
}

#[utoipa::path(get, path = "/v1/containers/{id}",
    responses((status = 200, body = Container), (status = 404, body = ErrorBody), (status = 410, body = ErrorBody)))]
async fn get_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Container>, ApiError> {
    Ok(Json(state.service.get_container(&owner, container_id(&id)?).await?.into()))
}

#[utoipa::path(delete, path = "/v1/containers/{id}",
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
async fn delete_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.service.delete_container(&owner, container_id(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A new container with the same state as `id` (its variables, imports and execution
/// numbering); the two are independent from then on. The source must not be mid-execution.
#[utoipa::path(post, path = "/v1/containers/{id}/fork",
    responses((status = 200, body = Container), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 410, body = ErrorBody), (status = 503, body = ErrorBody)))]
async fn fork_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Container>, ApiError> {
    Ok(Json(state.service.fork_container(&owner, container_id(&id)?).await?.into()))
}

/// Register a tool (Anthropic's fields plus executor, side_effects, timeout_ms, quota); it
/// belongs to the calling key.
#[utoipa::path(post, path = "/v1/tools", request_body = Object,
    responses((status = 201, body = Object), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 429, body = ErrorBody)))]
async fn create_tool(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    ApiJson(definition): ApiJson<ToolDefinition>,
) -> Result<impl IntoResponse, ApiError> {
    let tool = state.service.create_tool(&owner, definition)?;
    Ok((StatusCode::CREATED, Json(tool.definition.clone())))
}

/// The calling key's tools.
#[utoipa::path(get, path = "/v1/tools", responses((status = 200, body = ToolList)))]
async fn list_tools(State(state): State<AppState>, Authenticated(owner): Authenticated) -> Json<ToolList> {
    Json(ToolList { data: state.service.list_tools(&owner).iter().map(|t| t.definition.clone()).collect() })
}

#[utoipa::path(get, path = "/v1/tools/{name}", responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
async fn get_tool(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<ToolDefinition>, ApiError> {
    Ok(Json(state.service.get_tool(&owner, &name)?.definition.clone()))
}

#[utoipa::path(delete, path = "/v1/tools/{name}", responses((status = 204), (status = 404, body = ErrorBody)))]
async fn delete_tool(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.service.delete_tool(&owner, &name)?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health)))]
async fn healthz(State(state): State<AppState>) -> Json<Health> {
    Json(Health { status: "ok", image: state.image_hash.to_string() })
}

/// Prometheus text: executions, durations, tool calls, containers, limit hits. Needs a key
/// when keys are configured (unless the operator made it public).
#[utoipa::path(get, path = "/metrics", responses((status = 200, content_type = "text/plain"), (status = 401, body = ErrorBody)))]
async fn metrics(State(state): State<AppState>, headers: axum::http::HeaderMap) -> Result<impl IntoResponse, ApiError> {
    if !state.metrics.allows(&state.keys, &headers) {
        return Err(ApiError::Unauthenticated);
    }
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.service.metrics_text()))
}

/// Holds a place among the calling key's requests in flight for the request's life: one key
/// cannot take every connection the node has. Requests without a valid key pass on, to be
/// refused by their handler.
async fn per_key_requests(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let Ok(owner) = state.keys.owner_for(request.headers()) else { return next.run(request).await };
    match state.service.request_place(&owner) {
        Ok(_place) => next.run(request).await,
        Err(e) => ApiError::from(e).into_response(),
    }
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
