//! One error shape for the whole API, Anthropic's: `{"type": "error", "error": {"type",
//! "message", "code"}, "request_id"}` with the right status. `type` is one of Anthropic's
//! error types (what its SDK's `ErrorResponse` accepts); `code` is Sluice's own, finer one.

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
    /// 400 `invalid_request_error` (`invalid_request`): malformed body, wrong type, unknown field or value.
    #[error("{0}")]
    InvalidRequest(String),
    /// 400 `invalid_request_error` (`invalid_tool_input`, Anthropic's tool search code): a
    /// query or pattern a tool search cannot take.
    #[error("{0}")]
    InvalidToolInput(String),
    /// 401 `authentication_error` (`authentication`).
    #[error("a valid API key is required (Authorization: Bearer <key>)")]
    Unauthenticated,
    /// 404 `not_found_error` (`not_found`).
    #[error("{0} not found")]
    NotFound(String),
    /// 405 `invalid_request_error` (`method_not_allowed`).
    #[error("this route does not take that method")]
    MethodNotAllowed,
    /// 409 `invalid_request_error` (`conflict`): the container or execution is busy or not in that state.
    #[error("{0}")]
    Conflict(String),
    /// 410 `invalid_request_error` (`container_expired`).
    #[error("container {0} has expired")]
    Expired(String),
    /// 410 `invalid_request_error` (`container_unrestorable`): its saved state was refused (tampered, or saved
    /// by another image or format); the state is gone, as with an expired container.
    #[error("{0}")]
    Unrestorable(String),
    /// 413 `invalid_request_error` (`request_too_large`).
    #[error("{0}")]
    TooLarge(String),
    /// 429 `rate_limit_error` (`rate_limit`): a quota of the calling key is used up; retry when its work ends.
    #[error("{0}")]
    RateLimited(String),
    /// 529 `overloaded_error` (`overloaded`): no room for another container, or shutting down.
    #[error("{0}")]
    Unavailable(String),
    /// 404 `not_found_error` (`no_upstream`): `POST /v1/messages` on a service started without `--upstream`.
    #[error("no upstream model is configured: start the service with --upstream anthropic:URL or openai:URL")]
    NoUpstream,
    /// The upstream model refused or failed (`upstream_error`): its status where the client can
    /// act on it (400, 401, 403, 413, 429, 529) with Anthropic's type for it, else 502 `api_error`.
    #[error("{message}")]
    Upstream { status: StatusCode, kind: &'static str, message: String },
    /// 500 `api_error` (`internal`): the cause is logged, not returned.
    #[error("internal error")]
    Internal(String),
}

/// Anthropic's overloaded status: the node has no room now; retry later.
pub(crate) const OVERLOADED: StatusCode = match StatusCode::from_u16(529) {
    Ok(status) => status,
    Err(_) => panic!("529 is a status code"),
};

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    /// Always `error`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub error: ErrorDetail,
    /// The request's id, also in the `request-id` header (and the server's log).
    pub request_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail {
    /// One of Anthropic's error types.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub message: String,
    /// Sluice's finer, stable code (`conflict`, `container_expired`, ...).
    pub code: &'static str,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::InvalidRequest(_) | Self::InvalidToolInput(_) => StatusCode::BAD_REQUEST,
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Expired(_) | Self::Unrestorable(_) => StatusCode::GONE,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => OVERLOADED,
            Self::NoUpstream => StatusCode::NOT_FOUND,
            Self::Upstream { status, .. } => *status,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Anthropic's type: the 4xx Anthropic has no type of its own for are
    /// `invalid_request_error`, as they are there.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_)
            | Self::InvalidToolInput(_)
            | Self::MethodNotAllowed
            | Self::Conflict(_)
            | Self::Expired(_)
            | Self::Unrestorable(_)
            | Self::TooLarge(_) => "invalid_request_error",
            Self::Unauthenticated => "authentication_error",
            Self::NotFound(_) | Self::NoUpstream => "not_found_error",
            Self::Upstream { kind, .. } => kind,
            Self::RateLimited(_) => "rate_limit_error",
            Self::Unavailable(_) => "overloaded_error",
            Self::Internal(_) => "api_error",
        }
    }

    /// Sluice's own code, finer than the type.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidToolInput(_) => "invalid_tool_input",
            Self::Unauthenticated => "authentication",
            Self::NotFound(_) => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Conflict(_) => "conflict",
            Self::Expired(_) => "container_expired",
            Self::Unrestorable(_) => "container_unrestorable",
            Self::TooLarge(_) => "request_too_large",
            Self::RateLimited(_) => "rate_limit",
            Self::Unavailable(_) => "overloaded",
            Self::NoUpstream => "no_upstream",
            Self::Upstream { .. } => "upstream_error",
            Self::Internal(_) => "internal",
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::InvalidRequest(m) => Self::InvalidRequest(m),
            ServiceError::ToolSearch(e) => Self::InvalidToolInput(e.to_string()),
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
        let request_id = super::request_id::current();
        let error = ErrorDetail { kind: self.kind(), message: self.to_string(), code: self.code() };
        let body = ErrorBody { kind: "error", error, request_id: request_id.clone() };
        let mut response = (self.status(), Json(body)).into_response();
        if let Ok(value) = axum::http::HeaderValue::from_str(&request_id) {
            response.headers_mut().insert(super::request_id::HEADER, value);
        }
        response
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
            (ApiError::InvalidRequest("x".into()), 400, "invalid_request_error", "invalid_request"),
            (ApiError::InvalidToolInput("x".into()), 400, "invalid_request_error", "invalid_tool_input"),
            (ApiError::Unauthenticated, 401, "authentication_error", "authentication"),
            (ApiError::NotFound("x".into()), 404, "not_found_error", "not_found"),
            (ApiError::MethodNotAllowed, 405, "invalid_request_error", "method_not_allowed"),
            (ApiError::Conflict("x".into()), 409, "invalid_request_error", "conflict"),
            (ApiError::Expired("x".into()), 410, "invalid_request_error", "container_expired"),
            (ApiError::Unrestorable("x".into()), 410, "invalid_request_error", "container_unrestorable"),
            (ApiError::TooLarge("x".into()), 413, "invalid_request_error", "request_too_large"),
            (ApiError::RateLimited("x".into()), 429, "rate_limit_error", "rate_limit"),
            (ApiError::Unavailable("x".into()), 529, "overloaded_error", "overloaded"),
            (ApiError::NoUpstream, 404, "not_found_error", "no_upstream"),
            (
                ApiError::Upstream { status: StatusCode::BAD_GATEWAY, kind: "api_error", message: "x".into() },
                502,
                "api_error",
                "upstream_error",
            ),
            (ApiError::Internal("secret detail".into()), 500, "api_error", "internal"),
        ];
        for (error, status, kind, code) in cases {
            assert_eq!((error.status().as_u16(), error.kind(), error.code()), (status, kind, code));
        }
        assert!(!ApiError::Internal("secret detail".into()).to_string().contains("secret"));
    }
}
