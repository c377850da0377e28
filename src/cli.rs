//! The `sluice` command line: parse, call the library, shape the answer.

use crate::api::{self, AppState, auth::ApiKeys};
use crate::engine::service::{Service, ServiceConfig};
use crate::engine::{self, Answers};
use crate::sandbox::{LimitOverrides, Limits, Sandbox, SandboxConfig};
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
    Serve(ServeArgs),
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

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SLUICE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Directory for the embedded store and other state.
    #[arg(long, env = "SLUICE_DATA_DIR", default_value = "./sluice-data")]
    pub data_dir: PathBuf,
    /// Store URL (sqlite:// or postgres://); default: SQLite in the data directory.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
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
    /// Where the compiled base image is cached.
    #[arg(long, env = "SLUICE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return usage_error(&format!("cannot start the async runtime: {e}")),
    };
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve(args)),
        Command::Run { file, tools, answers, limits, cache_dir } => {
            runtime.block_on(run(&file, tools.as_deref(), answers.as_deref(), &limits, cache_dir))
        }
    }
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
    let mut overrides = LimitOverrides::default();
    for assignment in &args.limits {
        if let Err(e) = Limits::parse_assignment(&mut overrides, assignment) {
            return usage_error(&e);
        }
    }
    let maxima = Limits::server_maxima();
    let defaults = match Limits::default().with_overrides(&overrides, &maxima) {
        Ok(limits) => limits,
        Err(e) => return usage_error(&e.to_string()),
    };
    if let Err(e) = std::fs::create_dir_all(&args.data_dir) {
        return usage_error(&format!("cannot create data directory {}: {e}", args.data_dir.display()));
    }
    let mut sandbox_config = SandboxConfig { max_containers: args.max_containers, ..SandboxConfig::default() };
    if let Some(dir) = args.cache_dir {
        sandbox_config.cache_dir = dir;
    }
    tracing::info!(cache = %sandbox_config.cache_dir.display(), "loading the sandbox image (built once per machine)");
    let sandbox = match Sandbox::new(sandbox_config).await {
        Ok(sandbox) => sandbox,
        Err(e) => return usage_error(&e.to_string()),
    };
    let config = ServiceConfig {
        idle_timeout: std::time::Duration::from_secs(args.idle_timeout_secs),
        max_age: std::time::Duration::from_secs(args.max_age_secs),
        defaults,
        maxima,
    };
    let image_hash: std::sync::Arc<str> = sandbox.image_hash().into();
    let keys = ApiKeys::new(&args.api_keys);
    let state = AppState { service: Service::new(sandbox, config), keys: std::sync::Arc::new(keys), image_hash };
    let listener = match tokio::net::TcpListener::bind(&args.listen).await {
        Ok(listener) => listener,
        Err(e) => return usage_error(&format!("cannot listen on {}: {e}", args.listen)),
    };
    tracing::info!(listen = %args.listen, auth = state.keys.enabled(), "sluice is serving");
    match api::serve(listener, state, shutdown_signal()).await {
        Ok(()) => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&format!("server failed: {e}")),
    }
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
    let mut config = SandboxConfig::default();
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
