//! The `sluice` command line: parse, call the library, shape the answer.

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

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return usage_error(&format!("cannot start the async runtime: {e}")),
    };
    match cli.command {
        Command::Run { file, tools, answers, limits, cache_dir } => {
            runtime.block_on(run(&file, tools.as_deref(), answers.as_deref(), &limits, cache_dir))
        }
    }
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
    for definition in &definitions {
        definition.validate()?;
    }
    for name in answers.tool_names() {
        if !definitions.iter().any(|d| d.name == name) {
            definitions.push(ToolDefinition::code_callable(name));
        }
    }
    Ok(Toolset::new(definitions))
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
    let (code, answers, mut toolset, limits) = match prepared {
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
        engine::run_script(&mut container, &code, &mut toolset, limits, &answers).await
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
