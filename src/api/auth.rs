//! API keys: bearer tokens when configured; each key sees only what it created.

use super::AppState;
use super::error::ApiError;
use crate::engine::service::Owner;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The owner of requests when no keys are configured.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// Configured keys, stored as SHA-256 digests; the owner id is derived from the digest.
#[derive(Debug, Clone, Default)]
pub struct ApiKeys {
    owners: HashMap<[u8; 32], Owner>,
}

impl ApiKeys {
    pub fn new<S: AsRef<str>>(keys: impl IntoIterator<Item = S>) -> Self {
        let owners = keys
            .into_iter()
            .map(|key| key.as_ref().trim().to_owned())
            .filter(|key| !key.is_empty())
            .map(|key| {
                let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
                let owner = format!("key_{}", crate::call::hex(&digest[..8]));
                (digest, owner)
            })
            .collect();
        Self { owners }
    }

    pub fn enabled(&self) -> bool {
        !self.owners.is_empty()
    }

    fn owner_of(&self, presented: &str) -> Option<&Owner> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.owners.get(&digest)
    }

    /// The owner a request acts for: its key's, or [`ANONYMOUS`] when keys are off.
    pub fn owner_for(&self, headers: &axum::http::HeaderMap) -> Result<Owner, ApiError> {
        if !self.enabled() {
            return Ok(ANONYMOUS.into());
        }
        let presented = presented_key(headers).ok_or(ApiError::Unauthenticated)?;
        self.owner_of(presented).cloned().ok_or(ApiError::Unauthenticated)
    }
}

/// The key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`.
pub(crate) fn presented_key(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))
        .map(str::trim)
}

/// Who may read `/metrics` (node-wide figures, across keys).
#[derive(Debug, Clone, Default)]
pub enum MetricsAccess {
    /// Any valid API key (anyone, when keys are off).
    #[default]
    AnyKey,
    /// Only this key (its SHA-256), for a scraper; API keys are refused.
    Key([u8; 32]),
    /// No key needed.
    Public,
}

impl MetricsAccess {
    pub fn only_key(key: &str) -> Self {
        Self::Key(Sha256::digest(key.trim().as_bytes()).into())
    }

    pub fn allows(&self, keys: &ApiKeys, headers: &axum::http::HeaderMap) -> bool {
        match self {
            Self::Public => true,
            Self::AnyKey => keys.owner_for(headers).is_ok(),
            Self::Key(digest) => presented_key(headers).is_some_and(|key| {
                let presented: [u8; 32] = Sha256::digest(key.as_bytes()).into();
                presented == *digest
            }),
        }
    }
}

/// The owner a request acts for.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated(pub Owner);

impl FromRequestParts<AppState> for Authenticated {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        state.keys.owner_for(&parts.headers).map(Authenticated)
    }
}

/// Refuses a request without a valid key and tells what follows who it acts for (routes that
/// are not axum handlers, such as `/mcp`, read it from the request's extensions).
pub(crate) async fn require_key(
    axum::extract::State(state): axum::extract::State<AppState>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match state.keys.owner_for(request.headers()) {
        Ok(owner) => {
            request.extensions_mut().insert(Authenticated(owner));
            next.run(request).await
        }
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_distinct_stable_owners() {
        let keys = ApiKeys::new(["alpha", " beta ", ""]);
        assert!(keys.enabled());
        let (a, b) = (keys.owner_of("alpha").unwrap(), keys.owner_of("beta").unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with("key_"));
        assert!(keys.owner_of("gamma").is_none());
        assert!(!ApiKeys::new(Vec::<String>::new()).enabled());
    }
}
