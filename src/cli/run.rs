//! `sluice run`: one script in a fresh container, its tools answered from files or by the
//! MCP servers of `--mcp-config`.

use super::{Assignment, EXIT_LIMIT, RUN_MAX_CONTAINERS, limits_from, read_json, usage_error};
use crate::call::ToolCall;
use crate::engine::{self, Answers, Dispatch, Dispatcher};
use crate::sandbox::{Limits, Sandbox, SandboxConfig};
use crate::tools::http::CallContext;
use crate::tools::mcp::McpServers;
use crate::tools::{Admission, Executor, Tool, ToolDefinition, Toolset};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The files `sluice run` reads besides the script.
#[derive(Debug, Default)]
pub(super) struct RunFiles {
    pub tools: Option<PathBuf>,
    pub answers: Option<PathBuf>,
    pub mcp_config: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    /// Files to place in `/workspace` (`--file`).
    pub inputs: Vec<PathBuf>,
    /// Where the files the script wrote go (`--out`).
    pub out: Option<PathBuf>,
}

/// `--file` paths read as uploads named after each file, within the storage limit.
fn read_inputs(paths: &[PathBuf], storage_bytes: u64) -> Result<Vec<engine::Upload>, String> {
    let mut uploads: Vec<engine::Upload> = Vec::new();
    let mut total = 0u64;
    for path in paths {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("--file {}: the file needs a UTF-8 name", path.display()))?;
        crate::sandbox::check_file_name(name).map_err(|e| format!("--file {}: {e}", path.display()))?;
        if uploads.iter().any(|u| u.record.path == name) {
            return Err(format!("--file {}: two files are named {name:?}", path.display()));
        }
        // Read at most one byte past what may still fit: a device or a pipe is bounded too.
        let room = storage_bytes - total;
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| std::io::Read::read_to_end(&mut std::io::Read::take(file, room + 1), &mut bytes))
            .map_err(|e| format!("--file {}: {e}", path.display()))?;
        total += bytes.len() as u64;
        if total > storage_bytes {
            return Err(format!("--file: the files are more than the storage limit of {storage_bytes} bytes"));
        }
        uploads.push(engine::Upload::new(format!("local:{name}"), name.to_owned(), bytes.into()));
    }
    Ok(uploads)
}

/// Writes the script's output files under `dir`. The script chose every name, so each path
/// is checked to stay inside `dir`, no directory on the way may be a symbolic link (one could
/// point anywhere), and no file already there is replaced.
fn write_outputs(dir: &Path, files: &[crate::sandbox::OutputFile]) -> Result<(), String> {
    let fail = |path: &Path, e: &dyn std::fmt::Display| format!("--out {}: {e}", path.display());
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, &e))?;
    for file in files {
        crate::sandbox::check_relative_path(&file.path).map_err(|e| format!("output file: {e}"))?;
        let mut at = dir.to_path_buf();
        let mut parts: Vec<&str> = file.path.split('/').collect();
        let name = parts.pop().expect("a checked path has a name");
        for part in parts {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_dir() => {}
                Ok(_) => return Err(fail(&at, &"exists and is not a directory (links are not followed)")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir(&at).map_err(|e| fail(&at, &e))?
                }
                Err(e) => return Err(fail(&at, &e)),
            }
        }
        at.push(name);
        let mut out = std::fs::OpenOptions::new().write(true).create_new(true).open(&at).map_err(|e| fail(&at, &e))?;
        std::io::Write::write_all(&mut out, &file.bytes).map_err(|e| fail(&at, &e))?;
    }
    Ok(())
}

/// Tools from `--tools`, then the MCP servers' tools (compiled already), then every tool
/// named in `--answers` that neither defines.
fn load_tools(tools: Option<&Path>, mcp: &McpServers, answers: &Answers) -> Result<Toolset, String> {
    let defined: Vec<ToolDefinition> = match tools {
        None => Vec::new(),
        Some(path) => {
            let mut value = read_json(path, "tools file")?;
            if let Some(inner) = value.get_mut("tools") {
                value = inner.take();
            }
            serde_json::from_value(value).map_err(|e| format!("tools file {}: {e}", path.display()))?
        }
    };
    let mut tools = defined.into_iter().map(Tool::new).collect::<Result<Vec<Arc<Tool>>, _>>()?;
    for tool in mcp.tools(Some(crate::engine::OFFLINE_OWNER)) {
        if !tools.iter().any(|t| t.name() == tool.name()) {
            tools.push(tool);
        }
    }
    for name in answers.tool_names() {
        if !tools.iter().any(|t| t.name() == name) {
            tools.push(Tool::new(ToolDefinition::code_callable(name))?);
        }
    }
    Ok(Toolset::new(tools))
}

/// Canned answers, except for MCP tools, which their servers answer.
struct LocalTools {
    answers: Answers,
    mcp: McpServers,
}

impl Dispatcher for LocalTools {
    async fn dispatch(&self, admission: &Admission, call: &ToolCall, context: &CallContext) -> Dispatch {
        let definition = &admission.tool.definition;
        match &definition.executor {
            Executor::Mcp { server, tool } => {
                let result = self.mcp.call(server, tool, &call.input, &context.owner, definition.timeout()).await;
                Dispatch::Ready { result, attempts: 1 }
            }
            _ => self.answers.dispatch(admission, call, context).await,
        }
    }
}

pub(super) async fn run(file: &Path, files: RunFiles, limits: &[Assignment]) -> ExitCode {
    let prepared = async {
        let code = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let answers = match &files.answers {
            Some(path) => Answers::from_json(read_json(path, "answers file")?)?,
            None => Answers::default(),
        };
        let mcp = super::service_args::start_mcp(files.mcp_config.as_deref()).await?;
        let toolset = load_tools(files.tools.as_deref(), &mcp, &answers)?;
        let limits = limits_from(Limits::default(), limits, &Limits::server_maxima())?;
        let uploads = read_inputs(&files.inputs, limits.storage_bytes)?;
        Ok::<_, String>((code, LocalTools { answers, mcp }, toolset, limits, uploads))
    };
    let (code, tools, toolset, limits, uploads) = match prepared.await {
        Ok(prepared) => prepared,
        Err(message) => return usage_error(&message),
    };
    // One container (and a second while it is rolled back): reserving the service's
    // thousand slots would cost startup time for nothing. No ready pool either: its probe
    // execution and prefaulted spares serve the next container, and this process has none.
    let mut config =
        SandboxConfig { max_containers: RUN_MAX_CONTAINERS, ready_containers: 0, ..SandboxConfig::default() };
    if let Some(dir) = files.cache_dir {
        config.cache_dir = dir;
    }
    let result = async {
        let sandbox = Sandbox::new(config).await.map_err(engine::EngineError::from)?;
        let mut container = sandbox.create_container().await.map_err(engine::EngineError::from)?;
        let run = engine::run_script_with_files(&mut container, &code, toolset, limits, &tools, uploads).await;
        // The process ends next, and its memory with it: resetting the container's instance for
        // a next tenant and unmapping the sandbox's would only delay the exit (0.3 ms of 6).
        std::mem::forget(container);
        std::mem::forget(sandbox);
        run
    }
    .await;
    tools.mcp.shutdown().await;
    let run = match result {
        Ok(run) => run,
        Err(e) => return usage_error(&e.to_string()),
    };
    print!("{}", run.outcome.stdout);
    eprint!("{}", run.outcome.stderr);
    if let Some(dir) = &files.out
        && let Err(message) = write_outputs(dir, &run.outcome.files)
    {
        return usage_error(&message);
    }
    if run.outcome.stop.is_some() {
        return ExitCode::from(EXIT_LIMIT);
    }
    ExitCode::from(u8::try_from(run.outcome.return_code).unwrap_or(1))
}
