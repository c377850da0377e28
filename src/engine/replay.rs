//! Replay: rebuild a container from its audit trail in a fresh container and run an execution
//! again, answering every tool call from the ledger and feeding the recorded clock and seed.
//!
//! The guest is deterministic, so the same inputs give the same output byte for byte. Inputs
//! are fed exactly as recorded (the same results in the same resumes), which is why replay
//! drives the sandbox directly rather than through a `Run`: no tool is ever called.

use super::files::{UploadBytes, recorded_uploads};
use crate::audit::{CallStatus, ContainerHistory, ExecutionHistory, FinishStatus, LedgerEntry};
use crate::sandbox::{CallResult, Container, ExecuteRequest, Limits, Sandbox, SandboxError, Step, ToolFailure};
use crate::tools::{ToolDefinition, Toolset};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReplayReport {
    pub execution_id: String,
    /// Executions run to rebuild the container, the target included.
    pub executions_replayed: usize,
    /// `None`: identical. Otherwise the first divergence.
    pub divergence: Option<String>,
    #[serde(skip)]
    pub elapsed: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("execution {0} is not in this history")]
    UnknownExecution(String),
    #[error("execution {0} has not finished; there is nothing to compare with")]
    Unfinished(String),
    #[error("the recording cannot be replayed: {0}")]
    Unreplayable(String),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// Replays `target` after the executions before it in its container; `uploads` holds the
/// bytes of the files those executions were given (see [`uploads_named`]).
pub async fn replay(
    sandbox: &Sandbox,
    history: &ContainerHistory,
    target: &str,
    uploads: &UploadBytes,
) -> Result<ReplayReport, ReplayError> {
    let started = Instant::now();
    let position = history
        .executions
        .iter()
        .position(|e| e.execution_id == target)
        .ok_or_else(|| ReplayError::UnknownExecution(target.to_owned()))?;
    if history.executions[position].finished.is_none() {
        return Err(ReplayError::Unfinished(target.to_owned()));
    }
    let mut container = sandbox.create_container_with(uuid::Uuid::new_v4(), history.seed).await?;
    let mut replayed = 0;
    for execution in &history.executions[..=position] {
        let is_target = execution.execution_id == target;
        // Executions that a limit stopped, or that never finished, were rolled back.
        let kept = execution.finished.as_ref().is_some_and(|f| f.status == FinishStatus::Completed);
        if !kept && !is_target {
            continue;
        }
        replayed += 1;
        if let Some(divergence) = replay_one(&mut container, execution, uploads).await? {
            let divergence = format!("execution {} (#{}): {divergence}", execution.execution_id, execution.number);
            return Ok(ReplayReport {
                execution_id: target.to_owned(),
                executions_replayed: replayed,
                divergence: Some(divergence),
                elapsed: started.elapsed(),
            });
        }
    }
    Ok(ReplayReport {
        execution_id: target.to_owned(),
        executions_replayed: replayed,
        divergence: None,
        elapsed: started.elapsed(),
    })
}

/// The ids of every file the executions of `history` up to `target` were given: what a replay
/// of `target` must fetch.
pub(crate) fn uploads_named(history: &ContainerHistory, target: &str) -> Vec<String> {
    let end = history.executions.iter().position(|e| e.execution_id == target).map_or(0, |i| i + 1);
    let ids: std::collections::BTreeSet<_> = history.executions[..end].iter().flat_map(execution_uploads).collect();
    ids.into_iter().collect()
}

/// The ids of the files an execution was given, at its start and with its tool results.
pub(crate) fn execution_uploads(execution: &ExecutionHistory) -> impl Iterator<Item = String> + '_ {
    let at_steps = execution.steps.iter().flat_map(|(_, _, files)| files);
    execution.files.iter().chain(at_steps).map(|f| f.file_id.clone())
}

/// The result the guest got for a recorded call.
fn recorded_result(call: &LedgerEntry) -> Result<CallResult, ReplayError> {
    match call.status {
        CallStatus::Succeeded => {
            let text = call.result.clone().ok_or_else(|| {
                ReplayError::Unreplayable(format!("the result of call {} was stored as a hash only", call.id))
            })?;
            Ok(CallResult::ok(call.seq, text))
        }
        // A denied call got the same failure, whoever denied it: the decision is not asked again.
        CallStatus::Refused | CallStatus::Failed | CallStatus::TimedOut | CallStatus::Denied => {
            let mut failure = ToolFailure::new(
                call.error_code.unwrap_or(crate::call::FailureCode::ToolError),
                call.error_message.clone().unwrap_or_default(),
            );
            failure.details = call.error_details.clone();
            Ok(CallResult::failed(call.seq, failure))
        }
        other => {
            Err(ReplayError::Unreplayable(format!("call {} was answered but is recorded as {}", call.id, other.name())))
        }
    }
}

fn describe(tool: &str, input: &serde_json::Map<String, serde_json::Value>) -> String {
    format!("{tool}({})", serde_json::Value::Object(input.clone()))
}

/// Runs one recorded execution; the first divergence from the recording, if any.
pub(crate) async fn replay_one(
    container: &mut Container,
    execution: &ExecutionHistory,
    uploads: &UploadBytes,
) -> Result<Option<String>, ReplayError> {
    let definitions: Vec<ToolDefinition> = serde_json::from_value(execution.tools.clone())
        .map_err(|e| ReplayError::Unreplayable(format!("recorded tools: {e}")))?;
    let toolset = Toolset::from_definitions(definitions).map_err(ReplayError::Unreplayable)?;
    let limits: Limits = serde_json::from_value(execution.limits.clone())
        .map_err(|e| ReplayError::Unreplayable(format!("recorded limits: {e}")))?;
    let finished =
        execution.finished.as_ref().ok_or_else(|| ReplayError::Unfinished(execution.execution_id.clone()))?;
    let ledger: HashMap<u64, &LedgerEntry> = execution.ledger.iter().map(|c| (c.seq, c)).collect();
    // Every answer comes from the ledger at once.
    let guest_tools = toolset.guest_tools(None, &execution.owner);
    let files = recorded_uploads(&execution.files, uploads).map_err(ReplayError::Unreplayable)?;
    let request = ExecuteRequest {
        code: &execution.code,
        tools: &guest_tools,
        files: &files,
        limits,
        now_ns: Some(execution.now_ns),
    };
    let mut step = container.execute(request).await?;
    let mut steps = execution.steps.iter();
    let mut calls_seen = 0;
    loop {
        let pending = match step {
            Step::Finished(outcome) => {
                if steps.next().is_some() {
                    return Ok(Some("the script finished while the recording has more tool results".into()));
                }
                let stop = outcome.stop.as_ref().map(|s| s.code().to_owned());
                if stop.is_some() || finished.status == FinishStatus::Failed {
                    let recorded =
                        (finished.status == FinishStatus::Failed).then(|| finished.outcome.as_str().to_owned());
                    if stop != recorded {
                        return Ok(Some(format!("stopped by {stop:?}, the recording by {recorded:?}")));
                    }
                    return Ok(None);
                }
                let comparisons = [
                    ("stdout", outcome.stdout.as_str(), finished.stdout.as_str()),
                    ("stderr", outcome.stderr.as_str(), finished.stderr.as_str()),
                ];
                for (stream, actual, expected) in comparisons {
                    if actual != expected {
                        return Ok(Some(first_difference(stream, expected, actual)));
                    }
                }
                if i64::from(outcome.return_code) != finished.return_code {
                    return Ok(Some(format!("return code {}, recorded {}", outcome.return_code, finished.return_code)));
                }
                if outcome.value_repr != finished.value_repr {
                    return Ok(Some(format!("value {:?}, recorded {:?}", outcome.value_repr, finished.value_repr)));
                }
                let files: Vec<_> =
                    outcome.files.iter().map(|f| super::files::output_record(&execution.execution_id, f)).collect();
                if files != finished.files {
                    let names = |records: &[crate::audit::FileRecord]| {
                        records.iter().map(|f| format!("{} ({} bytes)", f.path, f.size_bytes)).collect::<Vec<_>>()
                    };
                    return Ok(Some(format!(
                        "output files {:?}, recorded {:?}",
                        names(&files),
                        names(&finished.files)
                    )));
                }
                return Ok(None);
            }
            Step::Pending(pending) => pending,
        };
        for call in &pending.calls {
            calls_seen += 1;
            let actual = describe(&call.name, &call.input);
            let Some(expected) = ledger.get(&call.seq) else {
                return Ok(Some(format!(
                    "call {calls_seen}: the script called {actual}, the recording has no such call"
                )));
            };
            let expected_input = expected.raw_input.as_ref().unwrap_or(&expected.input);
            if expected.tool != call.name || **expected_input != call.input {
                return Ok(Some(format!(
                    "call {calls_seen}: expected {}, the script called {actual}",
                    describe(&expected.tool, expected_input)
                )));
            }
        }
        let Some((now_ns, answered, step_files)) = steps.next() else {
            return Ok(Some("the script waits for tool results the recording does not have".into()));
        };
        let results = answered
            .iter()
            .map(|seq| {
                let call = ledger.get(seq).ok_or_else(|| {
                    ReplayError::Unreplayable(format!("a step answers call {seq}, which is not recorded"))
                })?;
                recorded_result(call)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let files = recorded_uploads(step_files, uploads).map_err(ReplayError::Unreplayable)?;
        step = container.resume(&results, &files, Some(*now_ns)).await?;
    }
}

/// "stdout differs at line N: recorded ..., replayed ..."
fn first_difference(stream: &str, expected: &str, actual: &str) -> String {
    let (mut expected_lines, mut actual_lines) = (expected.lines(), actual.lines());
    for line in 1.. {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(e), Some(a)) if e == a => continue,
            (e, a) => {
                return format!(
                    "{stream} differs at line {line}: recorded {:?}, replayed {:?}",
                    e.unwrap_or("<end>"),
                    a.unwrap_or("<end>")
                );
            }
        }
    }
    unreachable!("the loop returns at the first difference")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_line() {
        assert_eq!(
            first_difference("stdout", "a\nb\nc\n", "a\nx\nc\n"),
            "stdout differs at line 2: recorded \"b\", replayed \"x\""
        );
        assert!(first_difference("stdout", "a\n", "a\nmore\n").contains("recorded \"<end>\""));
    }
}
