//! `sluice serve`: its flags, logging, running the HTTP service until a signal stops it.

use super::{Assignment, StoreArgs, limit_assignment, limits_from, quota_assignment, usage_error};
use crate::api::{self, AppState, ServeOptions, auth::ApiKeys};
use crate::engine::service::{Quotas, Service, ServiceConfig};
use crate::sandbox::{Limits, Sandbox, SandboxConfig};
use crate::tools::egress::EgressPolicy;
use crate::tools::http::HttpExecutor;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SLUICE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    #[command(flatten)]
    pub store: StoreArgs,
    /// An API key clients must present as a bearer token (repeatable; comma-separated in
    /// the environment). Without keys the service is open.
    #[arg(long = "api-key", env = "SLUICE_API_KEYS", value_delimiter = ',', hide_env_values = true)]
    pub api_keys: Vec<String>,
    /// Seconds a container may stay idle before it expires.
    #[arg(long, env = "SLUICE_IDLE_TIMEOUT_SECS", default_value_t = 300)]
    pub idle_timeout_secs: u64,
    /// Seconds a container may live at most.
    #[arg(long, env = "SLUICE_MAX_AGE_SECS", default_value_t = 4 * 3600)]
    pub max_age_secs: u64,
    /// Containers alive in memory at once.
    #[arg(long, env = "SLUICE_MAX_CONTAINERS", default_value_t = crate::sandbox::DEFAULT_MAX_CONTAINERS)]
    pub max_containers: u32,
    /// Default limit for executions that ask for none, e.g. --limit time_ms=30000 (repeatable).
    #[arg(long = "limit", value_name = "KEY=VALUE", value_parser = limit_assignment)]
    pub limits: Vec<Assignment>,
    /// The largest value a request may ask for a limit, e.g. --max-limit memory_bytes=1073741824
    /// (repeatable; defaults: time_ms 600000, memory_bytes 4 GiB, max_output_bytes 64 MiB,
    /// max_tool_calls 100000, pending_timeout_ms 3600000).
    #[arg(long = "max-limit", value_name = "KEY=VALUE", value_parser = limit_assignment)]
    pub max_limits: Vec<Assignment>,
    /// What one API key may hold at once, e.g. --quota containers=50 (repeatable; names:
    /// containers, waiting_executions, concurrent_replays, replays_per_minute, tools).
    #[arg(long = "quota", value_name = "NAME=VALUE", value_parser = quota_assignment)]
    pub quotas: Vec<Assignment<usize>>,
    /// A URL prefix `http` tools may call (repeatable; comma-separated in the environment).
    /// Without one, no `http` tool can be defined. A prefix naming an IP address or
    /// `localhost` allows that address; hostnames may only resolve to public addresses.
    #[arg(long = "http-tool-allow", value_name = "PREFIX", env = "SLUICE_HTTP_TOOL_ALLOW", value_delimiter = ',')]
    pub http_tool_allow: Vec<String>,
    /// PEM certificates of authorities to trust for https tools, besides the public ones.
    #[arg(long, env = "SLUICE_HTTP_TOOL_CA", value_name = "FILE")]
    pub http_tool_ca: Option<PathBuf>,
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
    /// Where the compiled base image is cached.
    #[arg(long, env = "SLUICE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Containers kept in memory; beyond this the least recently used idle one is saved to
    /// the store and comes back on its next use.
    #[arg(long, env = "SLUICE_MAX_LIVE_CONTAINERS", default_value_t = crate::engine::service::DEFAULT_MAX_LIVE_CONTAINERS)]
    pub max_live_containers: usize,
    /// Milliseconds a changed container stays idle before it is saved to the store.
    #[arg(long, env = "SLUICE_SNAPSHOT_IDLE_MS", default_value_t = crate::engine::service::DEFAULT_SNAPSHOT_IDLE.as_millis() as u64)]
    pub snapshot_idle_ms: u64,
    /// Save a container after every execution (default: on with a PostgreSQL store, where a
    /// killed node must not lose state another node will need).
    #[arg(long, env = "SLUICE_SNAPSHOT_EVERY_EXECUTION", num_args = 0..=1, default_missing_value = "true")]
    pub snapshot_every_execution: Option<bool>,
    /// Milliseconds a node's lease on a container lasts unrenewed: how long a container held
    /// by a node that died stays out of reach. Requests for a held container wait up to one
    /// and a half times this.
    #[arg(long, env = "SLUICE_LEASE_TTL_MS", default_value_t = crate::engine::service::DEFAULT_LEASE_TTL.as_millis() as u64)]
    pub lease_ttl_ms: u64,
    /// This node's name in container leases (default: a random one).
    #[arg(long, env = "SLUICE_NODE")]
    pub node: Option<String>,
}

/// Shorter leases would lapse between renewals on a busy node.
const MIN_LEASE_TTL_MS: u64 = 1000;

fn init_logging() {
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
    // The operator's maxima may go past the built-in ones; nothing else may.
    let maxima = limits_from(Limits::server_maxima(), &args.max_limits, &Limits::operator_ceiling())
        .map_err(|e| format!("--max-limit: {e}"))?;
    let defaults = limits_from(Limits::default().clamped_to(&maxima), &args.limits, &maxima)
        .map_err(|e| format!("--limit: {e}"))?;
    let mut quotas = Quotas::default();
    for assignment in &args.quotas {
        quotas.set(&assignment.key, assignment.value).map_err(|e| format!("--quota: {e}"))?;
    }
    let policy = EgressPolicy::new(&args.http_tool_allow)?;
    let ca = match &args.http_tool_ca {
        Some(path) => std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        None => Vec::new(),
    };
    let http = HttpExecutor::new(policy, &ca)?;
    let (store, key) = args.store.open(true).await?;
    let store = std::sync::Arc::new(store);
    store.claim_key(&key).await.map_err(|e| e.to_string())?;
    let shared_store = store.is_postgres();
    let node = args.node.clone().unwrap_or_else(|| ServiceConfig::default().node);
    let lease_ttl = std::time::Duration::from_millis(args.lease_ttl_ms.max(MIN_LEASE_TTL_MS));
    match Service::recover_interrupted(&store, shared_store.then_some(node.as_str()), lease_ttl).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(executions = n, "marked executions cut off by the last stop as interrupted"),
        Err(e) => return Err(format!("recovering interrupted executions: {e}")),
    }
    let mut sandbox_config = SandboxConfig {
        max_containers: args.max_containers,
        snapshot_key: key.snapshot_key(),
        maxima,
        ..SandboxConfig::default()
    };
    if let Some(dir) = args.cache_dir {
        sandbox_config.cache_dir = dir;
    }
    tracing::info!(cache = %sandbox_config.cache_dir.display(), "loading the sandbox image (built once per machine)");
    let sandbox = Sandbox::new(sandbox_config).await.map_err(|e| e.to_string())?;
    let config = ServiceConfig {
        idle_timeout: std::time::Duration::from_secs(args.idle_timeout_secs),
        max_age: std::time::Duration::from_secs(args.max_age_secs),
        defaults,
        maxima,
        max_live_containers: args.max_live_containers.max(1),
        snapshot_idle: std::time::Duration::from_millis(args.snapshot_idle_ms),
        snapshot_every_execution: args.snapshot_every_execution.unwrap_or(shared_store),
        lease_ttl,
        handoff_idle: shared_store.then_some(crate::engine::service::DEFAULT_HANDOFF_IDLE),
        node,
        quotas,
        http,
    };
    let keys = ApiKeys::new(&args.api_keys);
    let service = Service::with_store(sandbox, config, store);
    let metrics = match (&args.metrics_key, args.metrics_public) {
        (_, true) => crate::api::auth::MetricsAccess::Public,
        (Some(key), false) => crate::api::auth::MetricsAccess::only_key(key),
        (None, false) => crate::api::auth::MetricsAccess::AnyKey,
    };
    let state = AppState { keys: std::sync::Arc::new(keys), metrics, ..AppState::new(service) };
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
