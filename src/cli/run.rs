//! `sluice run`: one script in a fresh container, its tools answered from files.

use super::{Assignment, EXIT_LIMIT, RUN_MAX_CONTAINERS, limits_from, read_json, usage_error};
use crate::engine::{self, Answers};
use crate::sandbox::{Limits, Sandbox, SandboxConfig};
use crate::tools::{ToolDefinition, Toolset};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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

pub(super) async fn run(
    file: &Path,
    tools: Option<&Path>,
    answers: Option<&Path>,
    limits: &[Assignment],
    cache_dir: Option<PathBuf>,
) -> ExitCode {
    let prepared = (|| -> Result<_, String> {
        let code = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let answers = match answers {
            Some(path) => Answers::from_json(read_json(path, "answers file")?)?,
            None => Answers::default(),
        };
        let toolset = load_tools(tools, &answers)?;
        let limits = limits_from(Limits::default(), limits, &Limits::server_maxima())?;
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
