//! `/ui`: the audit viewer, a static page whose script reads the JSON API with the reader's
//! own key, so each key sees only what it owns. The files are in the binary; no data is in
//! them, so they need no key.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("ui/index.html");
const APP_JS: &str = include_str!("ui/app.js");
const APP_CSS: &str = include_str!("ui/app.css");

/// Only this origin's own files and API: the page runs no inline or foreign script, and no
/// other site may frame it.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn page(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

pub(super) async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX_HTML)
}

pub(super) async fn script() -> Response {
    page("text/javascript; charset=utf-8", APP_JS)
}

pub(super) async fn stylesheet() -> Response {
    page("text/css; charset=utf-8", APP_CSS)
}
