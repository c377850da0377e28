//! One error shape for the whole API: `{"error": {"type", "message"}}` with the right status.

use crate::engine::service::ServiceError;
use axum::Json;
use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// Errors the API answers with; each variant names its status and stable type.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `invalid_request_error`: malformed body, wrong type, unknown field or value.
    #[error("{0}")]
    InvalidRequest(String),
    /// 401 `authentication_error`.
    #[error("a valid API key is required (Authorization: Bearer <key>)")]
    Unauthenticated,
    /// 404 `not_found_error`.
    #[error("{0} not found")]
    NotFound(String),
    /// 405 `method_not_allowed_error`.
    #[error("this route does not take that method")]
    MethodNotAllowed,
    /// 409 `conflict_error`: the container or execution is busy or not in that state.
    #[error("{0}")]
    Conflict(String),
    /// 410 `container_expired_error`.
    #[error("container {0} has expired")]
    Expired(String),
    /// 410 `container_unrestorable_error`: its saved state was refused (tampered, or saved
    /// by another image or format); the state is gone, as with an expired container.
    #[error("{0}")]
    Unrestorable(String),
    /// 413 `request_too_large_error`.
    #[error("{0}")]
    TooLarge(String),
    /// 429 `rate_limit_error`: a quota of the calling key is used up; retry when its work ends.
    #[error("{0}")]
    RateLimited(String),
    /// 503 `overloaded_error`: no room for another container, or shutting down.
    #[error("{0}")]
    Unavailable(String),
    /// 500 `api_error`: the cause is logged, not returned.
    #[error("internal error")]
    Internal(String),
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Expired(_) | Self::Unrestorable(_) => StatusCode::GONE,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request_error",
            Self::Unauthenticated => "authentication_error",
            Self::NotFound(_) => "not_found_error",
            Self::MethodNotAllowed => "method_not_allowed_error",
            Self::Conflict(_) => "conflict_error",
            Self::Expired(_) => "container_expired_error",
            Self::Unrestorable(_) => "container_unrestorable_error",
            Self::TooLarge(_) => "request_too_large_error",
            Self::RateLimited(_) => "rate_limit_error",
            Self::Unavailable(_) => "overloaded_error",
            Self::Internal(_) => "api_error",
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::InvalidRequest(m) => Self::InvalidRequest(m),
            ServiceError::NotFound(what) => Self::NotFound(what),
            ServiceError::Expired(id) => Self::Expired(id),
            ServiceError::Conflict(m) => Self::Conflict(m),
            error @ ServiceError::Unrestorable(..) => Self::Unrestorable(error.to_string()),
            ServiceError::Capacity(m) => Self::Unavailable(format!("the service is at capacity: {m}")),
            ServiceError::Quota(m) => Self::RateLimited(m),
            ServiceError::ShuttingDown => Self::Unavailable("the service is shutting down".into()),
            ServiceError::Internal(m) => Self::Internal(m),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Self::Internal(cause) = &self {
            tracing::error!(%cause, "internal error");
        }
        let body = ErrorBody { error: ErrorDetail { kind: self.kind(), message: self.to_string() } };
        (self.status(), Json(body)).into_response()
    }
}

/// `Json<T>` whose rejections (bad JSON, wrong types, unknown fields, too large) answer in
/// the API's error shape.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let Json(value) = Json::<T>::from_request(request, state).await?;
        Ok(ApiJson(value))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => Self::TooLarge(rejection.body_text()),
            _ => Self::InvalidRequest(rejection.body_text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_status_and_a_stable_type() {
        let cases = [
            (ApiError::InvalidRequest("x".into()), 400, "invalid_request_error"),
            (ApiError::Unauthenticated, 401, "authentication_error"),
            (ApiError::NotFound("x".into()), 404, "not_found_error"),
            (ApiError::MethodNotAllowed, 405, "method_not_allowed_error"),
            (ApiError::Conflict("x".into()), 409, "conflict_error"),
            (ApiError::Expired("x".into()), 410, "container_expired_error"),
            (ApiError::Unrestorable("x".into()), 410, "container_unrestorable_error"),
            (ApiError::TooLarge("x".into()), 413, "request_too_large_error"),
            (ApiError::RateLimited("x".into()), 429, "rate_limit_error"),
            (ApiError::Unavailable("x".into()), 503, "overloaded_error"),
            (ApiError::Internal("secret detail".into()), 500, "api_error"),
        ];
        for (error, status, kind) in cases {
            assert_eq!((error.status().as_u16(), error.kind()), (status, kind));
        }
        assert!(!ApiError::Internal("secret detail".into()).to_string().contains("secret"));
    }
}
