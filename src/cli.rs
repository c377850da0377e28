//! The `sluice` command line: parse, call the library, shape the answer.

use crate::api::{self, AppState, ServeOptions, auth::ApiKeys};
use crate::audit::{ContainerHistory, ExecutionFilter, Store, read_bundle, verify_chain, write_bundle};
use crate::engine::service::{Quotas, Service, ServiceConfig};
use crate::engine::{self, Answers};
use crate::keys::ServerKey;
use crate::sandbox::{LimitOverrides, Limits, Sandbox, SandboxConfig};
use crate::tools::egress::EgressPolicy;
use crate::tools::http::HttpExecutor;
use crate::tools::{ToolDefinition, Toolset};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status of `sluice run` when a limit stopped the script.
pub const EXIT_LIMIT: u8 = 3;
/// Exit status when Sluice itself could not run the script (bad files, no image).
pub const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(name = "sluice", version, about = "Programmatic tool calling in persistent Python sandboxes")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service.
    Serve(Box<ServeArgs>),
    /// Re-run an execution from the audit trail: prints `identical` (exit 0) or the first
    /// divergence (exit 1). Never calls a tool.
    Replay {
        /// The execution; with --bundle, defaults to the bundle's last execution.
        execution_id: Option<String>,
        /// Replay offline from an exported bundle instead of the store.
        #[arg(long)]
        bundle: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long, env = "SLUICE_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Read and check the audit trail.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Run one script in a fresh container; exit with its return code (3: a limit stopped it).
    Run {
        /// The Python script.
        file: PathBuf,
        /// Anthropic-style tool definitions (a JSON array, or {"tools": [...]}).
        #[arg(long)]
        tools: Option<PathBuf>,
        /// Canned results: {"tool": "text" | ["first", "second", ...]}.
        #[arg(long)]
        answers: Option<PathBuf>,
        /// A limit for this run, e.g. --limit time_ms=5000 (repeatable).
        #[arg(long = "limit", value_name = "KEY=VALUE")]
        limits: Vec<String>,
        /// Where the compiled base image is cached.
        #[arg(long, env = "SLUICE_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
}

/// Where the audit store is (SQLite in the data directory unless a URL says otherwise), and
/// the server key that seals it.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Directory for the embedded store and the server key (created private, 0700).
    #[arg(long, env = "SLUICE_DATA_DIR", default_value = "./sluice-data")]
    pub data_dir: PathBuf,
    /// Store URL (sqlite:// or postgres://); default: SQLite in the data directory.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Secret (at least 16 bytes) that seals snapshots and the audit chain; nodes sharing a
    /// store must share it. Default: a key created once in the data directory.
    #[arg(long, alias = "snapshot-key", env = "SLUICE_SERVER_KEY", hide_env_values = true)]
    pub server_key: Option<String>,
}

/// The environment variable that named the key before it also sealed the audit chain.
const LEGACY_KEY_ENV: &str = "SLUICE_SNAPSHOT_KEY";

impl StoreArgs {
    /// The server key: given, or kept in the data directory (created there when `create`).
    fn key(&self, create: bool) -> Result<ServerKey, String> {
        let given = self.server_key.clone().or_else(|| std::env::var(LEGACY_KEY_ENV).ok());
        if let Some(secret) = given {
            return ServerKey::new(secret.into_bytes()).map_err(|e| format!("--server-key: {e}"));
        }
        if create {
            return ServerKey::load_or_create(&self.data_dir);
        }
        ServerKey::load(&self.data_dir)?.ok_or_else(|| {
            format!(
                "no server key: give --server-key, or the --data-dir the server used ({} has none)",
                self.data_dir.display()
            )
        })
    }

    /// Opens the store; `create` makes the data directory (private) and the key if missing.
    async fn open(&self, create: bool) -> Result<(Store, ServerKey), String> {
        let url = match &self.database_url {
            Some(url) => {
                if create && self.server_key.is_none() {
                    prepare_private_dir(&self.data_dir)?;
                }
                url.clone()
            }
            None if create || self.data_dir.exists() => {
                Store::prepare_data_dir(&self.data_dir).map_err(|e| e.to_string())?
            }
            None => return Err(format!("no data directory {}", self.data_dir.display())),
        };
        let key = self.key(create)?;
        let store = Store::open(&url, &key).await.map_err(|e| e.to_string())?;
        Ok((store, key))
    }
}

/// Creates `dir` private to this user (0700), or makes it so.
fn prepare_private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)))
        .map_err(|e| format!("cannot prepare data directory {}: {e}", dir.display()))
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check every hash chain; exit 0 when all hold, 1 naming the first broken record.
    Verify {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write a container's history as a bundle (JSON lines) to stdout or a file.
    Export {
        container_id: String,
        #[arg(long, short)]
        output: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List executions on record, newest first.
    List {
        #[arg(long)]
        container: Option<String>,
        #[arg(long)]
        outcome: Option<String>,
        #[arg(long)]
        tool: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete the whole history of containers idle for longer than the given age.
    Prune {
        #[arg(long)]
        older_than_days: u64,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
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
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    pub limits: Vec<String>,
    /// The largest value a request may ask for a limit, e.g. --max-limit memory_bytes=1073741824
    /// (repeatable; defaults: time_ms 600000, memory_bytes 4 GiB, max_output_bytes 64 MiB,
    /// max_tool_calls 100000, pending_timeout_ms 3600000).
    #[arg(long = "max-limit", value_name = "KEY=VALUE")]
    pub max_limits: Vec<String>,
    /// What one API key may hold at once, e.g. --quota containers=50 (repeatable; names:
    /// containers, waiting_executions, concurrent_replays, replays_per_minute, tools).
    #[arg(long = "quota", value_name = "NAME=VALUE")]
    pub quotas: Vec<String>,
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

/// Containers `sluice run` may hold: its one, and a fresh one while that is rolled back.
const RUN_MAX_CONTAINERS: u32 = 2;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return usage_error(&format!("cannot start the async runtime: {e}")),
    };
    let code = match cli.command {
        Command::Serve(args) => runtime.block_on(serve(*args)),
        Command::Replay { execution_id, bundle, store, cache_dir } => {
            runtime.block_on(replay_command(execution_id, bundle, store, cache_dir))
        }
        Command::Audit { command } => runtime.block_on(audit_command(command)),
        Command::Run { file, tools, answers, limits, cache_dir } => {
            runtime.block_on(run(&file, tools.as_deref(), answers.as_deref(), &limits, cache_dir))
        }
    };
    // Background work (token counts) gets a moment to end; the process does not wait longer.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    code
}

/// What the runtime's background work gets at exit (part of `SHUTDOWN_BOUND`).
const RUNTIME_SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// Applies `KEY=VALUE` assignments to `base` (limits of the CLI's `--limit` and `--max-limit`).
fn limits_from(base: Limits, assignments: &[String], maxima: &Limits) -> Result<Limits, String> {
    let mut overrides = LimitOverrides::default();
    for assignment in assignments {
        Limits::parse_assignment(&mut overrides, assignment)?;
    }
    base.with_overrides(&overrides, maxima).map_err(|e| e.to_string())
}

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

async fn serve(args: ServeArgs) -> ExitCode {
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
        quotas.set(assignment).map_err(|e| format!("--quota: {e}"))?;
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
    let image_hash: std::sync::Arc<str> = sandbox.image_hash().into();
    let keys = ApiKeys::new(&args.api_keys);
    let service = Service::with_store(sandbox, config, store);
    let metrics = match (&args.metrics_key, args.metrics_public) {
        (_, true) => crate::api::auth::MetricsAccess::Public,
        (Some(key), false) => crate::api::auth::MetricsAccess::only_key(key),
        (None, false) => crate::api::auth::MetricsAccess::AnyKey,
    };
    let state = AppState { service, keys: std::sync::Arc::new(keys), image_hash, metrics };
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

async fn replay_command(
    execution_id: Option<String>,
    bundle: Option<PathBuf>,
    store: StoreArgs,
    cache_dir: Option<PathBuf>,
) -> ExitCode {
    let loaded = async {
        let (container_id, records, key) = match &bundle {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let (container_id, records) = read_bundle(&text)?;
                // A bundle read away from its server can be replayed; its seals only checked
                // with the key that made them.
                (container_id, records, store.key(false).ok())
            }
            None => {
                let id = execution_id.as_deref().ok_or("give an execution id, or --bundle FILE")?;
                let (store, key) = store.open(false).await?;
                let (container_id, _) = store
                    .container_of(id)
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or(format!("no execution {id} on record"))?;
                let records = store.records(&container_id).await.map_err(|e| e.to_string())?;
                (container_id, records, Some(key))
            }
        };
        let chain = key.as_ref().map(|key| verify_chain(&key.chain_key(), &container_id, &records));
        let history = ContainerHistory::from_records(&container_id, &records)?;
        let target = match execution_id.clone() {
            Some(id) => id,
            None => history.executions.last().map(|e| e.execution_id.clone()).ok_or("the bundle has no executions")?,
        };
        Ok::<_, String>((chain, history, target))
    }
    .await;
    let (chain, history, target) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => return usage_error(&e),
    };
    // One container (and a second while it is rolled back): reserving the service's
    // thousand slots would cost startup time for nothing.
    let mut config =
        SandboxConfig { max_containers: RUN_MAX_CONTAINERS, ready_containers: 0, ..SandboxConfig::default() };
    if let Some(dir) = cache_dir {
        config.cache_dir = dir;
    }
    let sandbox = match Sandbox::new(config).await {
        Ok(sandbox) => sandbox,
        Err(e) => return usage_error(&e.to_string()),
    };
    let report = match crate::engine::replay::replay(&sandbox, &history, &target).await {
        Ok(report) => report,
        Err(e) => return usage_error(&e.to_string()),
    };
    let mut identical = true;
    match chain {
        Some(Err(broken)) => {
            println!("chain broken: {broken}");
            identical = false;
        }
        Some(Ok(())) => {}
        None => println!("seals not checked: no server key (give --server-key or --data-dir)"),
    }
    match &report.divergence {
        None => println!(
            "identical ({} executions replayed in {:.1} ms)",
            report.executions_replayed,
            report.elapsed.as_secs_f64() * 1e3
        ),
        Some(divergence) => {
            println!("diverged: {divergence}");
            identical = false;
        }
    }
    if identical { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

async fn audit_command(command: AuditCommand) -> ExitCode {
    let result: Result<ExitCode, String> = async {
        match command {
            AuditCommand::Verify { store } => {
                let report = store.open(false).await?.0.verify().await.map_err(|e| e.to_string())?;
                match report.broken {
                    None => {
                        println!(
                            "ok: {} records in {} containers, every chain holds",
                            report.records, report.containers
                        );
                        Ok(ExitCode::SUCCESS)
                    }
                    Some(broken) => {
                        println!("broken: {broken}");
                        Ok(ExitCode::from(1))
                    }
                }
            }
            AuditCommand::Export { container_id, output, store } => {
                let records = store.open(false).await?.0.records(&container_id).await.map_err(|e| e.to_string())?;
                if records.is_empty() {
                    return Err(format!("no records for container {container_id}"));
                }
                let mut bundle = Vec::new();
                write_bundle(&container_id, &records, &mut bundle).map_err(|e| e.to_string())?;
                match output {
                    Some(path) => {
                        std::fs::write(&path, bundle).map_err(|e| format!("cannot write {}: {e}", path.display()))?
                    }
                    None => std::io::Write::write_all(&mut std::io::stdout(), &bundle).map_err(|e| e.to_string())?,
                }
                Ok(ExitCode::SUCCESS)
            }
            AuditCommand::List { container, outcome, tool, limit, store } => {
                let filter = ExecutionFilter {
                    container_id: container,
                    outcome,
                    tool,
                    limit: Some(limit),
                    ..Default::default()
                };
                for row in store.open(false).await?.0.list_executions(&filter).await.map_err(|e| e.to_string())? {
                    println!("{}", serde_json::to_string(&row).map_err(|e| e.to_string())?);
                }
                Ok(ExitCode::SUCCESS)
            }
            AuditCommand::Prune { older_than_days, store } => {
                let cutoff = std::time::SystemTime::now() - std::time::Duration::from_secs(older_than_days * 86_400);
                let removed = store.open(false).await?.0.prune(cutoff).await.map_err(|e| e.to_string())?;
                println!("removed the history of {removed} containers idle for more than {older_than_days} days");
                Ok(ExitCode::SUCCESS)
            }
        }
    }
    .await;
    result.unwrap_or_else(|e| usage_error(&e))
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("sluice: {message}");
    ExitCode::from(EXIT_USAGE)
}

fn read_json(path: &Path, what: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{what} {} is not valid JSON: {e}", path.display()))
}

/// Tools from `--tools`, plus every tool named in `--answers` that `--tools` does not define.
fn load_tools(tools: Option<&Path>, answers: &Answers) -> Result<Toolset, String> {
    let mut definitions: Vec<ToolDefinition> = match tools {
        None => Vec::new(),
        Some(path) => {
            let mut value = read_json(path, "tools file")?;
            if let Some(inner) = value.get_mut("tools") {
                value = inner.take();
            }
            serde_json::from_value(value).map_err(|e| format!("tools file {}: {e}", path.display()))?
        }
    };
    for name in answers.tool_names() {
        if !definitions.iter().any(|d| d.name == name) {
            definitions.push(ToolDefinition::code_callable(name));
        }
    }
    Toolset::from_definitions(definitions)
}

async fn run(
    file: &Path,
    tools: Option<&Path>,
    answers: Option<&Path>,
    limits: &[String],
    cache_dir: Option<PathBuf>,
) -> ExitCode {
    let prepared = (|| -> Result<_, String> {
        let code = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let answers = match answers {
            Some(path) => Answers::from_json(read_json(path, "answers file")?)?,
            None => Answers::default(),
        };
        let toolset = load_tools(tools, &answers)?;
        let mut overrides = LimitOverrides::default();
        for assignment in limits {
            Limits::parse_assignment(&mut overrides, assignment)?;
        }
        let limits =
            Limits::default().with_overrides(&overrides, &Limits::server_maxima()).map_err(|e| e.to_string())?;
        Ok((code, answers, toolset, limits))
    })();
    let (code, answers, toolset, limits) = match prepared {
        Ok(prepared) => prepared,
        Err(message) => return usage_error(&message),
    };
    // One container (and a second while it is rolled back): reserving the service's
    // thousand slots would cost startup time for nothing.
    let mut config = SandboxConfig { max_containers: RUN_MAX_CONTAINERS, ..SandboxConfig::default() };
    if let Some(dir) = cache_dir {
        config.cache_dir = dir;
    }
    let result = async {
        let sandbox = Sandbox::new(config).await.map_err(engine::EngineError::from)?;
        let mut container = sandbox.create_container().await.map_err(engine::EngineError::from)?;
        engine::run_script(&mut container, &code, toolset, limits, &answers).await
    }
    .await;
    let run = match result {
        Ok(run) => run,
        Err(e) => return usage_error(&e.to_string()),
    };
    print!("{}", run.outcome.stdout);
    eprint!("{}", run.outcome.stderr);
    if run.outcome.stop.is_some() {
        return ExitCode::from(EXIT_LIMIT);
    }
    ExitCode::from(u8::try_from(run.outcome.return_code).unwrap_or(1))
}
