//! Executions with nobody to answer client tools: `sluice run`, with canned answers from a
//! file, and tests.

use super::dispatch::{Dispatch, Dispatcher};
use super::run::{EngineError, Moved, Run, RunContext};
use crate::call::{FailureCode, ToolCall, ToolFailure};
use crate::sandbox::{Container, Limits, Outcome};
use crate::tools::http::CallContext;
use crate::tools::{Admission, Toolset};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// An execution run to its end offline (the CLI, tests).
#[derive(Debug)]
pub struct ScriptRun {
    pub outcome: Outcome,
    pub run: Run,
}

/// Who an offline run (`sluice run`) acts as: what its MCP sessions are keyed by.
pub(crate) const OFFLINE_OWNER: &str = "local";

/// Runs `code` in `container` until it ends, answering every tool call through `dispatcher`
/// (which must not hand calls to a client: there is none).
pub async fn run_script(
    container: &mut Container,
    code: &str,
    toolset: Toolset,
    limits: Limits,
    dispatcher: &impl Dispatcher,
) -> Result<ScriptRun, EngineError> {
    run_script_with_files(container, code, toolset, limits, dispatcher, Vec::new()).await
}

/// [`run_script`], with files placed in the working directory before the code runs; the
/// outcome's `files` are those it created or changed there.
pub async fn run_script_with_files(
    container: &mut Container,
    code: &str,
    toolset: Toolset,
    limits: Limits,
    dispatcher: &impl Dispatcher,
    uploads: Vec<super::files::Upload>,
) -> Result<ScriptRun, EngineError> {
    let context = RunContext {
        execution_id: format!("exec_{}", uuid::Uuid::new_v4().simple()),
        container_id: container.id().to_string(),
        owner: OFFLINE_OWNER.into(),
        number: container.executions() + 1,
    };
    let run = Run::new(context, toolset, limits, Arc::new(crate::audit::Discard)).with_uploads(uploads);
    let mut moved = run.start(container, code, dispatcher).await;
    loop {
        match moved {
            Moved::Finished { run, outcome } => return Ok(ScriptRun { outcome: *outcome, run }),
            Moved::Failed { error, .. } => return Err(error),
            // Nothing answers client calls offline: they time out at once.
            Moved::Waiting(mut waiting) => {
                for call in &mut waiting.0.client_calls {
                    call.deadline = Instant::now();
                }
                moved = waiting.expire(container, Instant::now(), dispatcher).await;
            }
        }
    }
}

/// Canned tool results: per tool one text for every call, or a list used in call order.
#[derive(Debug, Default)]
pub struct Answers {
    by_tool: Mutex<BTreeMap<String, Answer>>,
}

#[derive(Debug)]
enum Answer {
    Always(Canned),
    InOrder(VecDeque<Canned>),
}

#[derive(Debug, Clone)]
enum Canned {
    Text(String),
    Error(String),
}

impl Canned {
    fn from_json(value: serde_json::Value) -> Self {
        match value {
            serde_json::Value::String(text) => Canned::Text(text),
            serde_json::Value::Object(map) if map.get("is_error") == Some(&serde_json::Value::Bool(true)) => {
                Canned::Error(match map.get("content") {
                    Some(serde_json::Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => "tool error".into(),
                })
            }
            other => Canned::Text(other.to_string()),
        }
    }

    fn into_result(self) -> Result<String, ToolFailure> {
        match self {
            Canned::Text(text) => Ok(text),
            Canned::Error(message) => Err(ToolFailure::new(FailureCode::ToolError, message)),
        }
    }
}

impl Answers {
    /// From JSON: `{"tool": "text" | {...} | ["first", "second", ...]}`. Non-string values
    /// are given to the script as their JSON text, except `{"is_error": true, "content": ..}`,
    /// which is an error result (the script gets `sluice.ToolError`).
    pub fn from_json(value: serde_json::Value) -> Result<Self, String> {
        let serde_json::Value::Object(map) = value else {
            return Err("answers must be a JSON object of tool name to result".into());
        };
        let by_tool = map
            .into_iter()
            .map(|(tool, value)| {
                let answer = match value {
                    serde_json::Value::Array(items) => {
                        Answer::InOrder(items.into_iter().map(Canned::from_json).collect())
                    }
                    other => Answer::Always(Canned::from_json(other)),
                };
                (tool, answer)
            })
            .collect();
        Ok(Self { by_tool: Mutex::new(by_tool) })
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.by_tool.lock().expect("not poisoned").keys().cloned().collect()
    }

    fn next(&self, tool: &str) -> Result<String, ToolFailure> {
        let mut by_tool = self.by_tool.lock().expect("not poisoned");
        match by_tool.get_mut(tool) {
            Some(Answer::Always(canned)) => canned.clone().into_result(),
            Some(Answer::InOrder(queue)) => queue
                .pop_front()
                .ok_or_else(|| ToolFailure::new(FailureCode::NoAnswer, format!("the answers for {tool} ran out")))?
                .into_result(),
            None => Err(ToolFailure::new(FailureCode::NoAnswer, format!("no answer was given for {tool}"))),
        }
    }
}

impl Dispatcher for Answers {
    async fn dispatch(&self, admission: &Admission, _call: &ToolCall, _context: &CallContext) -> Dispatch {
        Dispatch::Ready { result: self.next(admission.tool.name()), attempts: 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_repeat_or_run_out_in_order() {
        let answers = Answers::from_json(serde_json::json!({
            "t": ["a", {"b": 1}, {"is_error": true, "content": "no"}],
            "u": "same"
        }))
        .unwrap();
        assert_eq!(answers.next("t").unwrap(), "a");
        assert_eq!(answers.next("t").unwrap(), r#"{"b":1}"#);
        assert_eq!(answers.next("t").unwrap_err().message, "no");
        assert_eq!(answers.next("t").unwrap_err().code, crate::call::FailureCode::NoAnswer);
        assert_eq!(answers.next("u").unwrap(), "same");
        assert_eq!(answers.next("u").unwrap(), "same");
        assert_eq!(answers.next("v").unwrap_err().code, crate::call::FailureCode::NoAnswer);
        assert!(Answers::from_json(serde_json::json!(["x"])).is_err());
    }
}
