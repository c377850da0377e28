//! The `sluice` command line: parse, call the library, shape the answer.

mod audit;
mod image;
mod mcp;
mod replay;
mod run;
mod serve;
mod service_args;
mod store_args;

pub(crate) use audit::AuditCommand;
pub(crate) use mcp::McpArgs;
pub(crate) use serve::ServeArgs;
pub(crate) use service_args::ServiceArgs;
pub(crate) use store_args::StoreArgs;

use crate::sandbox::{LimitOverrides, Limits};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

/// Exit status of `sluice run` when a limit stopped the script.
pub(crate) const EXIT_LIMIT: u8 = 3;
/// Exit status when Sluice itself could not run the script (bad files, no image).
pub(crate) const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(name = "sluice", version, about = "Programmatic tool calling in persistent Python sandboxes")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the HTTP service (and MCP over streamable HTTP at /mcp).
    Serve(Box<ServeArgs>),
    /// Serve MCP over stdio (`execute_python`, `search_tools`) for a host that launches Sluice.
    Mcp(Box<McpArgs>),
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
    /// The base image every container starts from.
    Image {
        #[command(subcommand)]
        command: image::ImageCommand,
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
        #[arg(long = "limit", value_name = "KEY=VALUE", value_parser = limit_assignment)]
        limits: Vec<Assignment>,
        /// Where the compiled base image is cached.
        #[arg(long, env = "SLUICE_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
        /// MCP servers whose tools the script may call (see `serve --mcp-config`).
        #[arg(long, env = "SLUICE_MCP_CONFIG", value_name = "FILE")]
        mcp_config: Option<PathBuf>,
        /// A file to put into the container's working directory (`/workspace`) under its own
        /// name before the script runs (repeatable).
        #[arg(long = "file", value_name = "PATH")]
        inputs: Vec<PathBuf>,
        /// Where to write the files the script created or changed in `/workspace`.
        #[arg(long = "out", value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// Containers `sluice run` may hold: its one, and a fresh one while that is rolled back.
const RUN_MAX_CONTAINERS: u32 = 2;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // `sluice run` drives one container: a runtime on this thread starts and stops faster
    // than a pool of workers would, and nothing in it blocks the thread.
    let runtime = match &cli.command {
        Command::Run { .. } => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => return usage_error(&format!("cannot start the async runtime: {e}")),
    };
    let code = match cli.command {
        Command::Serve(args) => runtime.block_on(serve::serve(*args)),
        Command::Mcp(args) => runtime.block_on(mcp::mcp(*args)),
        Command::Replay { execution_id, bundle, store, cache_dir } => {
            runtime.block_on(replay::replay_command(execution_id, bundle, store, cache_dir))
        }
        Command::Audit { command } => runtime.block_on(audit::audit_command(command)),
        Command::Image { command } => runtime.block_on(image::image_command(command)),
        Command::Run { file, tools, answers, limits, cache_dir, mcp_config, inputs, out } => {
            let files = run::RunFiles { tools, answers, mcp_config, cache_dir, inputs, out };
            runtime.block_on(run::run(&file, files, &limits))
        }
    };
    // Background work (token counts) gets a moment to end; the process does not wait longer.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    code
}

/// What the runtime's background work gets at exit (a graceful shutdown ends within 12 s, all phases together).
const RUNTIME_SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// One `KEY=VALUE` flag (`--limit`, `--max-limit`, `--quota`), split and its value parsed by
/// clap, so that a malformed one is a usage error before anything runs. Whether the key names
/// a limit or quota, and whether the value is allowed, is checked where it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment<V = u64> {
    pub key: String,
    pub value: V,
}

/// Splits `KEY=VALUE` at its first `=`, both sides trimmed; `what` names the key in errors.
fn split_assignment<V: FromStr>(text: &str, form: &str, what: &str) -> Result<Assignment<V>, String> {
    let (key, value) = text.split_once('=').ok_or_else(|| format!("expected {form}"))?;
    let key = key.trim().to_owned();
    let value = value.trim().parse().map_err(|_| format!("{what} {key} needs a non-negative integer"))?;
    Ok(Assignment { key, value })
}

/// Clap's value parser for `--limit` and `--max-limit`.
fn limit_assignment(text: &str) -> Result<Assignment, String> {
    split_assignment(text, "KEY=VALUE", "limit")
}

/// Clap's value parser for `--quota`.
fn quota_assignment(text: &str) -> Result<Assignment<usize>, String> {
    split_assignment(text, "NAME=VALUE", "quota")
}

/// Applies `KEY=VALUE` assignments to `base` (limits of the CLI's `--limit` and `--max-limit`).
fn limits_from(base: Limits, assignments: &[Assignment], maxima: &Limits) -> Result<Limits, String> {
    let mut overrides = LimitOverrides::default();
    for assignment in assignments {
        overrides.set(&assignment.key, assignment.value)?;
    }
    base.with_overrides(&overrides, maxima).map_err(|e| e.to_string())
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("sluice: {message}");
    ExitCode::from(EXIT_USAGE)
}

fn read_json(path: &Path, what: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{what} {} is not valid JSON: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn key_value_flags_are_split_and_typed_by_clap() {
        let cli = Cli::try_parse_from(["sluice", "run", "x.py", "--limit", " time_ms = 5000 ", "--limit", "cpu=1"]);
        let Command::Run { limits, .. } = cli.unwrap().command else { panic!("not run") };
        let expected = [("time_ms", 5000), ("cpu", 1)].map(|(key, value)| Assignment { key: key.to_owned(), value });
        assert_eq!(limits, expected);

        for malformed in ["time_ms", "time_ms=", "time_ms=-1", "time_ms=5s"] {
            let err = Cli::try_parse_from(["sluice", "run", "x.py", "--limit", malformed]).unwrap_err();
            assert_eq!((err.kind(), err.exit_code()), (clap::error::ErrorKind::ValueValidation, 2), "{malformed}");
        }
        let err = Cli::try_parse_from(["sluice", "serve", "--quota", "containers"]).unwrap_err();
        assert!(err.to_string().contains("expected NAME=VALUE"), "{err}");
    }

    #[test]
    fn unknown_names_and_values_past_the_maxima_are_refused_after_parsing() {
        let assignment = |text| limit_assignment(text).unwrap();
        let maxima = Limits::server_maxima();
        let err = limits_from(Limits::default(), &[assignment("cpu=1")], &maxima).unwrap_err();
        assert!(err.starts_with("unknown limit \"cpu\""), "{err}");
        let err = limits_from(Limits::default(), &[assignment("time_ms=999999999")], &maxima).unwrap_err();
        assert!(err.contains("outside the allowed range"), "{err}");
        let limits = limits_from(Limits::default(), &[assignment("time_ms=5"), assignment("time_ms=7")], &maxima);
        assert_eq!(limits.unwrap().time_ms, 7, "the last one wins");
    }
}
