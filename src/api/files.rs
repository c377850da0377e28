//! `/v1/files`: Anthropic's Files API. Upload a file (multipart, field `file`), list, read,
//! download and delete a key's files; executions place them with `container_upload` blocks and
//! hand back the files they write as `code_execution_output` blocks naming these ids.

use super::AppState;
use super::auth::Authenticated;
use super::error::{ApiError, ErrorBody};
use super::types::rfc3339;
use crate::audit::FileRow;
use axum::Json;
use axum::extract::{Multipart, Path, Query, State};
// Other query parameters (Anthropic's SDKs send `?beta=true`) are ignored.
use axum::http::header;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Largest upload request: the largest file, and room for the multipart framing around it.
pub(crate) const MAX_UPLOAD_BODY_BYTES: usize = crate::engine::service::MAX_FILE_BYTES + (64 << 10);
/// Files per page when the request does not say, and at most.
const DEFAULT_PAGE: usize = 20;
const MAX_PAGE: usize = 1_000;

/// A file's metadata, in Anthropic's shape.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FileMetadata {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub filename: String,
    pub mime_type: String,
    pub size_bytes: i64,
    pub created_at: String,
    pub downloadable: bool,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
    /// `upload`, or `output` for a file an execution wrote.
    pub source: String,
}

impl From<FileRow> for FileMetadata {
    fn from(row: FileRow) -> Self {
        Self {
            id: row.id,
            kind: "file",
            filename: row.filename,
            mime_type: row.mime_type,
            size_bytes: row.size_bytes,
            created_at: rfc3339(crate::engine::service::at_ms(row.created_at)),
            downloadable: true,
            sha256: row.sha256,
            source: row.source,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FileList {
    pub data: Vec<FileMetadata>,
    pub first_id: Option<String>,
    pub last_id: Option<String>,
    pub has_more: bool,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub(crate) struct FileQuery {
    /// The page after this file (older files).
    pub after_id: Option<String>,
    /// The page before this file (newer files).
    pub before_id: Option<String>,
    /// Files per page, 1 to 1000 (20 when absent).
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FileDeleted {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// Upload a file (multipart form, its field `file`); the name is the part's file name.
#[utoipa::path(post, path = "/v1/files", responses((status = 200, body = FileMetadata), (status = 400, body = ErrorBody),
    (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub(super) async fn upload_file(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    mut form: Multipart,
) -> Result<Json<FileMetadata>, ApiError> {
    let malformed = |e: axum::extract::multipart::MultipartError| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(format!("an upload is at most {} bytes", crate::engine::service::MAX_FILE_BYTES))
        } else {
            ApiError::InvalidRequest(format!("the multipart body is not valid: {}", e.body_text()))
        }
    };
    while let Some(field) = form.next_field().await.map_err(malformed)? {
        if field.name() != Some("file") {
            continue;
        }
        let filename = field
            .file_name()
            .map(str::to_owned)
            .ok_or_else(|| ApiError::InvalidRequest("the part `file` has no file name".into()))?;
        let bytes = field.bytes().await.map_err(malformed)?;
        let row = state.service.upload_file(&owner, &filename, &bytes).await?;
        return Ok(Json(row.into()));
    }
    Err(ApiError::InvalidRequest("the multipart body has no part named `file`".into()))
}

/// The key's files, newest first.
#[utoipa::path(get, path = "/v1/files", params(FileQuery), responses((status = 200, body = FileList), (status = 400, body = ErrorBody)))]
pub(super) async fn list_files(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Query(query): Query<FileQuery>,
) -> Result<Json<FileList>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::InvalidRequest(format!("limit must be 1 to {MAX_PAGE}")));
    }
    if query.after_id.is_some() && query.before_id.is_some() {
        return Err(ApiError::InvalidRequest("give after_id or before_id, not both".into()));
    }
    let (rows, has_more) =
        state.service.list_files(&owner, query.after_id.as_deref(), query.before_id.as_deref(), limit).await?;
    let data: Vec<FileMetadata> = rows.into_iter().map(FileMetadata::from).collect();
    Ok(Json(FileList {
        first_id: data.first().map(|f| f.id.clone()),
        last_id: data.last().map(|f| f.id.clone()),
        has_more,
        data,
    }))
}

/// A file's metadata.
#[utoipa::path(get, path = "/v1/files/{id}", responses((status = 200, body = FileMetadata), (status = 404, body = ErrorBody)))]
pub(super) async fn get_file(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<FileMetadata>, ApiError> {
    Ok(Json(state.service.file(&owner, &id).await?.into()))
}

/// A file's bytes.
#[utoipa::path(get, path = "/v1/files/{id}/content", responses((status = 200, content_type = "application/octet-stream"), (status = 404, body = ErrorBody)))]
pub(super) async fn file_content(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let (row, content) = state.service.file_content(&owner, &id).await?;
    // The name as a header parameter: only its plain characters (RFC 6266's quoted string).
    let plain: String =
        row.filename.chars().filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\' || *c == ' ').collect();
    let disposition = format!("attachment; filename=\"{plain}\"");
    let headers = [(header::CONTENT_TYPE, row.mime_type), (header::CONTENT_DISPOSITION, disposition)];
    Ok((headers, content.to_vec()))
}

/// Deletes a file. Containers it was placed in keep their copy.
#[utoipa::path(delete, path = "/v1/files/{id}", responses((status = 200, body = FileDeleted), (status = 404, body = ErrorBody)))]
pub(super) async fn delete_file(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<FileDeleted>, ApiError> {
    state.service.delete_file(&owner, &id).await?;
    Ok(Json(FileDeleted { id, kind: "file_deleted" }))
}
