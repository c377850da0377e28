//! The listener loop: connections capped, headers read within a deadline, and a shutdown that
//! ends within a bounded, documented time whatever is in flight.
//!
//! Shutdown: stop accepting; let requests in flight finish for [`SHUTDOWN_DRAIN`]; then stop
//! running scripts (they end `interrupted`, their containers rolled back) and wait up to
//! [`SHUTDOWN_INTERRUPT_GRACE`] more; then save containers for at most
//! [`crate::engine::service::SHUTDOWN_SAVE_BUDGET`]. Whatever is still open after that is
//! dropped: executions cut off are marked `interrupted` at the next start and containers are
//! rebuilt from the audit trail, so nothing recorded is lost.

use super::{AppState, app};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Connections open at once; a new one waits for a place.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 1_024;
/// A client must send its request headers within this: a half-open request is dropped.
pub(crate) const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Requests in flight at shutdown may finish for this long.
pub(crate) const SHUTDOWN_DRAIN: Duration = Duration::from_secs(5);
/// After scripts are stopped, their requests get this long to answer.
pub(crate) const SHUTDOWN_INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// Pause after a failed accept (out of file descriptors, say) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How the listener treats connections.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self { max_connections: DEFAULT_MAX_CONNECTIONS, header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT }
    }
}

/// Serves until `shutdown` resolves, then shuts down as the module says.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let service = state.service.clone();
    let router = app(state);
    let places = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let place = tokio::select! {
            place = places.clone().acquire_owned() => place.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new()).header_read_timeout(options.header_read_timeout);
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _place = place;
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tracing::info!("shutting down: no new connections; finishing requests in flight");
    service.refuse_new_work();
    let closed = graceful.shutdown();
    let mut closed = std::pin::pin!(closed);
    if tokio::time::timeout(SHUTDOWN_DRAIN, &mut closed).await.is_err() {
        tracing::warn!("requests still running after the drain: stopping their scripts");
        service.interrupt_running();
        if tokio::time::timeout(SHUTDOWN_INTERRUPT_GRACE, &mut closed).await.is_err() {
            tracing::warn!("requests still open (waiting on tools): they are cut off");
        }
    }
    service.shutdown().await;
    Ok(())
}
