//! The `http` executor: POST the arguments to the tool's URL (only under the operator's
//! allowed prefixes, see [`super::egress`]), with its timeout and a bounded number of retries
//! for tools whose side effects allow them. No redirects are followed and no proxy is used.

use super::egress::{EgressError, EgressPolicy, PublicResolver};
use super::{SideEffects, ToolDefinition};
use crate::call::{FailureCode, ToolFailure};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Used when a tool definition gives no `timeout_ms`.
pub(crate) const DEFAULT_TOOL_TIMEOUT_MS: u64 = 30_000;
/// Attempts for a `read_only` or `idempotent` tool that fails transiently (`write`: one).
pub(crate) const MAX_ATTEMPTS: u32 = 3;
/// Wait before the first retry; doubled for each further one.
pub(crate) const RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// Largest response body read from a tool.
pub(crate) const MAX_RESULT_BYTES: usize = 8 << 20;
/// Calls of one execution in flight at once (a gather of thousands goes this many at a time),
/// which also bounds the reply bytes one execution has buffered.
pub(crate) const MAX_CONCURRENT_CALLS_PER_EXECUTION: usize = 16;
/// Time to set up a connection, TLS included.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub(crate) const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// Where a call comes from; names the idempotency key so that it is the same on every
/// attempt and never chosen by the script.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The API key the execution belongs to (an MCP server's sessions are per key).
    pub owner: String,
    pub container_id: String,
    pub execution_id: String,
    pub call_id: String,
    pub seq: u64,
}

impl CallContext {
    pub fn idempotency_key(&self) -> String {
        let mut hasher = Sha256::new();
        for part in [self.container_id.as_str(), self.execution_id.as_str(), &self.seq.to_string()] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        crate::call::hex(&hasher.finalize()[..16])
    }
}

/// The answer of one call and how many attempts it took.
#[derive(Debug, Clone)]
pub struct HttpOutcome {
    pub result: Result<String, ToolFailure>,
    pub attempts: u32,
}

/// One HTTP client (connection pool) for every `http` tool, and where it may go.
#[derive(Debug, Clone)]
pub struct HttpExecutor {
    client: reqwest::Client,
    policy: EgressPolicy,
}

impl Default for HttpExecutor {
    /// An executor that may call nothing (no prefix is allowed).
    fn default() -> Self {
        Self::new(EgressPolicy::default(), &[]).expect("a client without extra roots builds")
    }
}

enum Attempt {
    Done(Result<String, ToolFailure>),
    /// Worth another try if the tool allows it; the failure to report if not.
    Transient(ToolFailure),
}

impl HttpExecutor {
    /// An executor for `policy`'s destinations; `extra_roots_pem` are certificates (PEM) of
    /// authorities trusted besides the public ones, for tools behind a private CA.
    pub fn new(policy: EgressPolicy, extra_roots_pem: &[u8]) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(std::sync::Arc::new(PublicResolver))
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("sluice/", env!("CARGO_PKG_VERSION")));
        if !extra_roots_pem.is_empty() {
            let roots = reqwest::Certificate::from_pem_bundle(extra_roots_pem)
                .map_err(|e| format!("the CA certificates are not valid PEM: {e}"))?;
            for root in roots {
                builder = builder.add_root_certificate(root);
            }
        }
        let client = builder.build().map_err(|e| format!("building the HTTP client: {e}"))?;
        Ok(Self { client, policy })
    }

    /// Refuses a tool URL the operator does not allow.
    pub fn check_url(&self, url: &str) -> Result<(), EgressError> {
        self.policy.check(url).map(|_| ())
    }

    pub async fn call(
        &self,
        tool: &ToolDefinition,
        url: &str,
        input: &Map<String, Value>,
        context: &CallContext,
    ) -> HttpOutcome {
        // Checked when the tool was defined; again here, since a paused execution may have
        // been saved under another configuration.
        if let Err(refused) = self.policy.check(url) {
            return HttpOutcome {
                result: Err(ToolFailure::new(FailureCode::NotAllowed, refused.to_string())),
                attempts: 0,
            };
        }
        let body = serde_json::to_vec(input).expect("a JSON map serializes");
        let timeout = tool.timeout().unwrap_or(Duration::from_millis(DEFAULT_TOOL_TIMEOUT_MS));
        let attempts_allowed = match tool.side_effects {
            SideEffects::ReadOnly | SideEffects::Idempotent => MAX_ATTEMPTS,
            SideEffects::Write => 1,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.attempt(url, &body, timeout, context).await {
                Attempt::Done(result) => return HttpOutcome { result, attempts: attempt },
                Attempt::Transient(failure) if attempt >= attempts_allowed => {
                    return HttpOutcome { result: Err(failure), attempts: attempt };
                }
                Attempt::Transient(_) => tokio::time::sleep(RETRY_BACKOFF * 2u32.pow(attempt - 1)).await,
            }
        }
    }

    async fn attempt(&self, url: &str, body: &[u8], timeout: Duration, context: &CallContext) -> Attempt {
        let request = self
            .client
            .post(url)
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(IDEMPOTENCY_HEADER, context.idempotency_key())
            .header("Sluice-Execution", &context.execution_id)
            .header("Sluice-Call", &context.call_id)
            .body(body.to_vec());
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(e) if e.is_timeout() => {
                return Attempt::Transient(ToolFailure::new(
                    FailureCode::Timeout,
                    format!("no answer within {} ms", timeout.as_millis()),
                ));
            }
            Err(e) => {
                let why = describe(e);
                return Attempt::Transient(ToolFailure::new(
                    FailureCode::Unavailable,
                    format!("could not reach the tool: {why}"),
                ));
            }
        };
        let status = response.status();
        let mut text = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if text.len() + chunk.len() > MAX_RESULT_BYTES => {
                    return Attempt::Done(Err(ToolFailure::new(
                        FailureCode::ToolError,
                        format!("the tool answered more than {MAX_RESULT_BYTES} bytes"),
                    )));
                }
                Ok(Some(chunk)) => text.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) if e.is_timeout() => {
                    return Attempt::Transient(ToolFailure::new(
                        FailureCode::Timeout,
                        format!("no answer within {} ms", timeout.as_millis()),
                    ));
                }
                Err(e) => {
                    let why = describe(e);
                    return Attempt::Transient(ToolFailure::new(
                        FailureCode::Unavailable,
                        format!("the answer broke off: {why}"),
                    ));
                }
            }
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        if status.is_success() {
            return Attempt::Done(Ok(text));
        }
        let failure = ToolFailure::new(
            FailureCode::ToolError,
            format!("the tool answered HTTP {}: {}", status.as_u16(), snippet(&text)),
        );
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            let mut unavailable = failure;
            unavailable.code = FailureCode::Unavailable;
            return Attempt::Transient(unavailable);
        }
        Attempt::Done(Err(failure))
    }
}

/// What went wrong, with its causes (a TLS or DNS refusal is only in the innermost), but not
/// the URL: the tool's owner knows it, and nothing else needs repeating.
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn snippet(text: &str) -> &str {
    const SNIPPET_CHARS: usize = 200;
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_stable_per_call_and_differ_between_calls() {
        let context = |seq| CallContext {
            owner: "o".into(),
            container_id: "c".into(),
            execution_id: "e".into(),
            call_id: "x".into(),
            seq,
        };
        assert_eq!(context(1).idempotency_key(), context(1).idempotency_key());
        assert_ne!(context(1).idempotency_key(), context(2).idempotency_key());
        assert_eq!(context(1).idempotency_key().len(), 32);
    }
}
