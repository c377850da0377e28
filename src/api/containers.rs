//! `/v1/containers`: create, read, delete, fork and export containers.

use super::AppState;
use super::auth::Authenticated;
use super::error::{ApiError, ErrorBody};
use super::types::{Container, ContainerVerification};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use uuid::Uuid;

/// A container id from the path; one that does not parse is a container not found.
pub(super) fn container_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(format!("container {raw}")))
}

/// A container's audit chain as a bundle: a header line, then one record per line.
#[utoipa::path(get, path = "/v1/containers/{id}/export",
    responses((status = 200, content_type = "application/x-ndjson"), (status = 404, body = ErrorBody)))]
pub(super) async fn export_container(
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

/// Checks the container's audit chain (every seal and link, and the fork point of a fork), as
/// `sluice audit verify` does; works after the container is deleted, while its history is kept.
#[utoipa::path(get, path = "/v1/containers/{id}/verify",
    responses((status = 200, body = ContainerVerification), (status = 404, body = ErrorBody)))]
pub(super) async fn verify_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<ContainerVerification>, ApiError> {
    let id = container_id(&id)?;
    Ok(Json(state.service.verify_container(&owner, id).await?.into()))
}

/// A new, empty container.
#[utoipa::path(post, path = "/v1/containers", responses((status = 200, body = Container), (status = 529, body = ErrorBody)))]
pub(super) async fn create_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
) -> Result<Json<Container>, ApiError> {
    Ok(Json(state.service.create_container(&owner).await?.into()))
}

#[utoipa::path(get, path = "/v1/containers/{id}",
    responses((status = 200, body = Container), (status = 404, body = ErrorBody), (status = 410, body = ErrorBody)))]
pub(super) async fn get_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Container>, ApiError> {
    Ok(Json(state.service.get_container(&owner, container_id(&id)?).await?.into()))
}

#[utoipa::path(delete, path = "/v1/containers/{id}",
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub(super) async fn delete_container(
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
        (status = 410, body = ErrorBody), (status = 529, body = ErrorBody)))]
pub(super) async fn fork_container(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Container>, ApiError> {
    Ok(Json(state.service.fork_container(&owner, container_id(&id)?).await?.into()))
}
