//! The HTTP API (axum): routes, auth and errors, a thin shell over the engine's [`Service`].
//!
//! [`app`] builds the router (tests drive it directly); [`serve`] runs it on a listener
//! until the shutdown future resolves, then shuts down within a bounded time (see [`server`]).
//!
//! Handlers live by resource, named after the route: `/v1/executions` in `executions`,
//! `/v1/containers` in `containers`, `/v1/files` in `files`, `/v1/tools` in `tools`, `/v1/messages` (the Messages endpoint over an upstream model) in `messages`; `/healthz`, `/metrics` and
//! `/openapi.json` (with the [`ApiDoc`]) in `ops`; the audit viewer at `/ui` in `ui`. Body limits and the per-key cap on
//! requests in flight are in `limits`. `/mcp` (Sluice as an MCP server) is in `mcp`.

pub(crate) mod auth;
mod containers;
pub(crate) mod error;
mod executions;
mod files;
mod limits;
pub(crate) mod mcp;
pub(crate) mod messages;
mod ops;
mod request_id;
pub(crate) mod server;
mod tools;
pub(crate) mod types;
mod ui;

pub use messages::Upstream;
pub use server::{ServeOptions, serve_with};

pub(crate) use limits::{BODY_READ_TIMEOUT, MAX_BODY_BYTES};

use crate::engine::service::Service;
use auth::ApiKeys;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use containers::{
    create_container, delete_container, export_container, fork_container, get_container, verify_container,
};
use error::ApiError;
use executions::{
    create_execution, decide_approvals, get_execution, list_executions, preview_execution, replay_execution,
    submit_tool_results,
};
use limits::per_key_requests;
use ops::{healthz, metrics, openapi};
use std::future::Future;
use std::sync::Arc;
use tools::{create_tool, delete_tool, get_tool, list_tools, search_tools};
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};

#[derive(Clone)]
pub struct AppState {
    pub service: Service,
    pub keys: Arc<ApiKeys>,
    pub image_hash: Arc<str>,
    /// Who may read `/metrics`.
    pub metrics: auth::MetricsAccess,
    /// The model `POST /v1/messages` forwards to; without one that route answers 404.
    pub upstream: Option<Arc<Upstream>>,
}

impl AppState {
    /// `service` with no API keys and the default `/metrics` access; set the other fields with
    /// struct update syntax (`AppState { keys, ..AppState::new(service) }`).
    pub fn new(service: Service) -> Self {
        let image_hash = service.image_hash().into();
        Self {
            service,
            keys: Arc::new(ApiKeys::default()),
            image_hash,
            metrics: auth::MetricsAccess::default(),
            upstream: None,
        }
    }
}

/// The router with every route, auth, limits and request logs.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/v1/executions", post(create_execution).get(list_executions))
        .route("/v1/executions/{id}", get(get_execution))
        .route("/v1/executions/preview", post(preview_execution))
        .route("/v1/executions/{id}/tool_results", post(submit_tool_results))
        .route("/v1/executions/{id}/approvals", post(decide_approvals))
        .route("/v1/executions/{id}/replay", post(replay_execution))
        .route("/v1/containers", post(create_container))
        .route("/v1/containers/{id}", get(get_container).delete(delete_container))
        .route("/v1/containers/{id}/export", get(export_container))
        .route("/v1/containers/{id}/fork", post(fork_container))
        .route("/v1/containers/{id}/verify", get(verify_container))
        .route(
            "/v1/files",
            post(files::upload_file).layer(DefaultBodyLimit::max(files::MAX_UPLOAD_BODY_BYTES)).get(files::list_files),
        )
        .route("/v1/files/{id}", get(files::get_file).delete(files::delete_file))
        .route("/v1/files/{id}/content", get(files::file_content))
        .route("/v1/messages", post(messages::create_message))
        .route("/v1/tools", post(create_tool).get(list_tools))
        .route("/v1/tools/search", post(search_tools))
        .route("/v1/tools/{name}", get(get_tool).delete(delete_tool))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route("/ui", get(ui::index))
        .route("/ui/", get(ui::index))
        .route("/ui/app.js", get(ui::script))
        .route("/ui/app.css", get(ui::stylesheet))
        .merge(mcp_routes(&state))
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
        .layer(axum::middleware::from_fn(request_id::assign))
        .with_state(state)
}

/// `/mcp` for every key; without keys, only for loopback `Host`s (a web page that rebinds a
/// name to 127.0.0.1 must not reach an open service).
fn mcp_routes(state: &AppState) -> Router<AppState> {
    let allowed_hosts =
        if state.keys.enabled() { Vec::new() } else { ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec() };
    let service = mcp::http_service(state.service.clone(), allowed_hosts);
    Router::new()
        .route_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_key))
}

/// Serves until `shutdown` resolves, with the default [`ServeOptions`].
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, state, ServeOptions::default(), shutdown).await
}
