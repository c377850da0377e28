//! The flags that shape the service itself (store, limits, quotas, where tools may go, MCP
//! servers), shared by `sluice serve` and `sluice mcp`, and the service they build.

use super::{Assignment, StoreArgs, limit_assignment, limits_from, quota_assignment};
use crate::engine::service::{Quotas, Service, ServiceConfig};
use crate::sandbox::{Limits, Sandbox, SandboxConfig};
use crate::tools::egress::EgressPolicy;
use crate::tools::http::HttpExecutor;
use crate::tools::mcp::{McpConfig, McpServers};
use std::path::PathBuf;

/// Shorter leases would lapse between renewals on a busy node.
const MIN_LEASE_TTL_MS: u64 = 1000;

#[derive(Debug, clap::Args)]
pub(crate) struct ServiceArgs {
    #[command(flatten)]
    pub store: StoreArgs,
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
    /// MCP servers whose tools code may call, in Claude Desktop's `{"mcpServers": {...}}`
    /// shape (see README). Clients cannot add servers; only this file names them.
    #[arg(long, env = "SLUICE_MCP_CONFIG", value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
    /// A static embedding model for tool search, fused with the ranking by words: a directory
    /// with `tokenizer.json` (BPE) and `embeddings.safetensors` (see README). Read at start;
    /// nothing is downloaded.
    #[arg(long, env = "SLUICE_SEARCH_MODEL", value_name = "DIR")]
    pub search_model: Option<PathBuf>,
    /// Rules that allow, deny or hold for a person's approval the calls code makes, by tool,
    /// key, arguments and count (a JSON file, see README). Without it, calls to tools that
    /// require approval wait for a person and the others run.
    #[arg(long, env = "SLUICE_APPROVAL_POLICY", value_name = "FILE")]
    pub approval_policy: Option<PathBuf>,
    /// An OpenTelemetry collector (OTLP over HTTP, `http://host:4318`): each execution is sent
    /// as a trace, a span per tool call and per pause, joining the caller's `traceparent`.
    #[arg(long, env = "SLUICE_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// The operator's MCP servers, started (an empty set without a file).
pub(super) async fn start_mcp(path: Option<&std::path::Path>) -> Result<McpServers, String> {
    match path {
        Some(path) => {
            Ok(McpServers::start(McpConfig::from_file(path).map_err(|e| format!("--mcp-config: {e}"))?).await)
        }
        None => Ok(McpServers::default()),
    }
}

impl ServiceArgs {
    /// Opens the store, recovers what the last stop cut off, loads the sandbox image and
    /// starts the MCP servers: the service, ready to serve.
    /// The service these flags describe; `nobody_to_ask` is set where no person can approve a
    /// held call (it is then denied with that reason).
    pub(super) async fn build(&self, nobody_to_ask: Option<&str>) -> Result<Service, String> {
        if let Some(dir) = &self.search_model {
            let model = crate::tools::search::Embedder::load(dir).map_err(|e| format!("--search-model: {e}"))?;
            crate::tools::search::use_model(std::sync::Arc::new(model));
        }
        // The operator's maxima may go past the built-in ones; nothing else may.
        let maxima = limits_from(Limits::server_maxima(), &self.max_limits, &Limits::operator_ceiling())
            .map_err(|e| format!("--max-limit: {e}"))?;
        let defaults = limits_from(Limits::default().clamped_to(&maxima), &self.limits, &maxima)
            .map_err(|e| format!("--limit: {e}"))?;
        let mut quotas = Quotas::default();
        for assignment in &self.quotas {
            quotas.set(&assignment.key, assignment.value).map_err(|e| format!("--quota: {e}"))?;
        }
        let mut approvals = match &self.approval_policy {
            Some(path) => crate::tools::approval::ApprovalPolicy::load(path)?,
            None => Default::default(),
        };
        if let Some(why) = nobody_to_ask {
            approvals = approvals.with_nobody_to_ask(why);
        }
        let policy = EgressPolicy::new(&self.http_tool_allow)?;
        let ca = match &self.http_tool_ca {
            Some(path) => std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            None => Vec::new(),
        };
        let http = HttpExecutor::new(policy, &ca)?;
        let (store, key) = self.store.open(true).await?;
        let store = std::sync::Arc::new(store);
        store.claim_key(&key).await.map_err(|e| e.to_string())?;
        let shared_store = store.is_postgres();
        let node = self.node.clone().unwrap_or_else(|| ServiceConfig::default().node);
        let lease_ttl = std::time::Duration::from_millis(self.lease_ttl_ms.max(MIN_LEASE_TTL_MS));
        match Service::recover_interrupted(&store, shared_store.then_some(node.as_str()), lease_ttl).await {
            Ok(0) => {}
            Ok(n) => tracing::warn!(executions = n, "marked executions cut off by the last stop as interrupted"),
            Err(e) => return Err(format!("recovering interrupted executions: {e}")),
        }
        let mut sandbox_config = SandboxConfig {
            max_containers: self.max_containers,
            snapshot_key: key.snapshot_key(),
            maxima,
            ..SandboxConfig::default()
        };
        if let Some(dir) = self.cache_dir.clone() {
            sandbox_config.cache_dir = dir;
        }
        tracing::info!(cache = %sandbox_config.cache_dir.display(), "loading the sandbox image (built once per machine)");
        let sandbox = Sandbox::new(sandbox_config).await.map_err(|e| e.to_string())?;
        let config = ServiceConfig {
            idle_timeout: std::time::Duration::from_secs(self.idle_timeout_secs),
            max_age: std::time::Duration::from_secs(self.max_age_secs),
            defaults,
            maxima,
            max_live_containers: self.max_live_containers.max(1),
            snapshot_idle: std::time::Duration::from_millis(self.snapshot_idle_ms),
            snapshot_every_execution: self.snapshot_every_execution.unwrap_or(shared_store),
            lease_ttl,
            handoff_idle: shared_store.then_some(crate::engine::service::DEFAULT_HANDOFF_IDLE),
            node,
            quotas,
            http,
            mcp: start_mcp(self.mcp_config.as_deref()).await?,
            approvals,
            otlp: match &self.otlp_endpoint {
                Some(endpoint) => Some(std::sync::Arc::new(crate::engine::trace::OtlpExporter::start(endpoint)?)),
                None => None,
            },
        };
        Ok(Service::with_store(sandbox, config, store))
    }
}
