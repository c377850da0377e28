//! Request limits: body size, body read time, and each key's requests in flight.

use super::AppState;
use super::error::ApiError;
use axum::extract::State;
use axum::response::IntoResponse;

/// Largest request body (code is limited separately, to 1 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 4 << 20;
/// A request body must arrive within this (a body sent a byte a minute is dropped).
pub(crate) const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Holds a place among the calling key's requests in flight for the request's life: one key
/// cannot take every connection the node has. Requests without a valid key pass on, to be
/// refused by their handler.
pub(super) async fn per_key_requests(
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
