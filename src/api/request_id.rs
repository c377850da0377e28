//! Every request's id (`req_...`): in the `request-id` header of every answer, in error
//! bodies (`request_id`, as Anthropic's) and on the request's log lines, so a client's report
//! can be found in the server's log.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub(crate) const HEADER: &str = "request-id";

tokio::task_local! {
    static REQUEST_ID: String;
}

fn new_id() -> String {
    format!("req_{}", uuid::Uuid::new_v4().simple())
}

/// The id of the request being answered (a fresh one outside a request).
pub(crate) fn current() -> String {
    REQUEST_ID.try_with(Clone::clone).unwrap_or_else(|_| new_id())
}

/// Gives the request an id for its whole life, and its answer the header.
pub(crate) async fn assign(request: Request, next: Next) -> Response {
    let id = new_id();
    let span = tracing::info_span!("request", id = %id);
    let mut response = REQUEST_ID.scope(id.clone(), next.run(request)).instrument(span).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, value);
    }
    response
}
