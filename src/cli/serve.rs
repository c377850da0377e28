//! `sluice serve`: its flags, logging, running the HTTP service until a signal stops it.

use super::{ServiceArgs, usage_error};
use crate::api::{self, AppState, ServeOptions, auth::ApiKeys};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SLUICE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// An API key clients must present as a bearer token (repeatable; comma-separated in
    /// the environment). Without keys the service is open.
    #[arg(long = "api-key", env = "SLUICE_API_KEYS", value_delimiter = ',', hide_env_values = true)]
    pub api_keys: Vec<String>,
    /// Connections open at once; more wait for a place.
    #[arg(long, env = "SLUICE_MAX_CONNECTIONS", default_value_t = crate::api::server::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Milliseconds a client has to send its request headers.
    #[arg(long, env = "SLUICE_HEADER_READ_TIMEOUT_MS", default_value_t = crate::api::server::DEFAULT_HEADER_READ_TIMEOUT.as_millis() as u64)]
    pub header_read_timeout_ms: u64,
    /// Serve /metrics without a key even when API keys are set.
    #[arg(long, env = "SLUICE_METRICS_PUBLIC")]
    pub metrics_public: bool,
    /// The only key that may read /metrics (node-wide figures, across API keys); without it,
    /// any API key may.
    #[arg(long, env = "SLUICE_METRICS_KEY", hide_env_values = true)]
    pub metrics_key: Option<String>,
    /// The model `POST /v1/messages` forwards to: `anthropic:URL` (an Anthropic-compatible
    /// Messages API; URL as Anthropic's SDK takes its base URL) or `openai:URL` (an
    /// OpenAI-compatible chat completions API such as vLLM, llama.cpp's server or Ollama; URL
    /// ending in `/v1`, as OpenAI's SDK takes it).
    #[arg(long, env = "SLUICE_UPSTREAM")]
    pub upstream: Option<String>,
    /// The key sent to the upstream. Without it, an open service (no --api-key) passes on the
    /// key the client presented; a service with keys sends none (a Sluice key is not the
    /// upstream's).
    #[arg(long, env = "SLUICE_UPSTREAM_API_KEY", hide_env_values = true)]
    pub upstream_api_key: Option<String>,
    #[command(flatten)]
    pub service: ServiceArgs,
}

pub(super) fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("SLUICE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    if std::env::var("SLUICE_LOG_FORMAT").is_ok_and(|f| f == "json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

pub(super) async fn serve(args: ServeArgs) -> ExitCode {
    init_logging();
    match serve_until_signal(args).await {
        Ok(()) => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&e),
    }
}

async fn serve_until_signal(args: ServeArgs) -> Result<(), String> {
    let service = args.service.build(None).await?;
    let keys = ApiKeys::new(&args.api_keys);
    let metrics = match (&args.metrics_key, args.metrics_public) {
        (_, true) => crate::api::auth::MetricsAccess::Public,
        (Some(key), false) => crate::api::auth::MetricsAccess::only_key(key),
        (None, false) => crate::api::auth::MetricsAccess::AnyKey,
    };
    let upstream = args
        .upstream
        .as_deref()
        .map(|spec| api::Upstream::new(spec, args.upstream_api_key.clone()).map(std::sync::Arc::new))
        .transpose()?;
    if let Some(upstream) = &upstream {
        tracing::info!(endpoint = %upstream.endpoint(), "POST /v1/messages forwards to the upstream model");
    }
    let state = AppState { keys: std::sync::Arc::new(keys), metrics, upstream, ..AppState::new(service) };
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let address = listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| args.listen.clone());
    tracing::info!(listen = %address, auth = state.keys.enabled(), "sluice is serving");
    let options = ServeOptions {
        max_connections: args.max_connections,
        header_read_timeout: std::time::Duration::from_millis(args.header_read_timeout_ms.max(1)),
    };
    api::serve_with(listener, state, options, shutdown_signal()).await.map_err(|e| format!("server failed: {e}"))
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(_) => {
            let _ = interrupt.await;
            return;
        }
    };
    tokio::select! {
        _ = interrupt => {},
        _ = terminate.recv() => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}
