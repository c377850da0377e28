//! The service layer's errors, each with a stable kind the API maps to a status.

use super::*;

/// Errors of the service layer, each with a stable type the API maps to a status.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    InvalidRequest(String),
    /// A tool search given a query, pattern or limit it cannot take.
    #[error(transparent)]
    ToolSearch(#[from] crate::tools::search::SearchError),
    #[error("{0} not found")]
    NotFound(String),
    #[error("container {0} has expired")]
    Expired(String),
    #[error("{0}")]
    Conflict(String),
    /// The container's saved state was refused (tampered, or for another image or format).
    #[error("container {0} cannot be restored: {1}")]
    Unrestorable(String, String),
    #[error("the service is at capacity: {0}")]
    Capacity(String),
    /// A per-key quota is used up (see [`Quotas`]); it frees as the key's work ends.
    #[error("{0}")]
    Quota(String),
    #[error("the service is shutting down")]
    ShuttingDown,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<crate::audit::StoreError> for ServiceError {
    fn from(error: crate::audit::StoreError) -> Self {
        ServiceError::Internal(format!("audit store: {error}"))
    }
}

impl From<EngineError> for ServiceError {
    fn from(error: EngineError) -> Self {
        match error {
            EngineError::Sandbox(SandboxError::Capacity(why)) => ServiceError::Capacity(why),
            EngineError::Sandbox(SandboxError::Busy) => ServiceError::Conflict("the container is busy".into()),
            other => ServiceError::Internal(other.to_string()),
        }
    }
}

impl From<SandboxError> for ServiceError {
    fn from(error: SandboxError) -> Self {
        EngineError::from(error).into()
    }
}
