//! One execution's life: run the script, pass each tool call through the gate, hand it to a
//! runner, feed the results back, until the script ends.
//!
//! `sluice run --answers` and tests use [`Answers`]; the HTTP service adds runners that reach
//! real tools. Same loop, different runner.

use crate::sandbox::{
    CallResult, Container, ExecuteRequest, Limits, Outcome, SandboxError, Step, ToolCall, ToolFailure,
};
use crate::tools::{ToolDefinition, Toolset};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::sync::Mutex;

/// Carries out a call the gate admitted.
pub trait ToolRunner: Send + Sync {
    fn call(&self, tool: &ToolDefinition, call: &ToolCall) -> impl Future<Output = Result<String, ToolFailure>> + Send;
}

/// What happened to one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Succeeded,
    Failed,
    Refused,
}

/// A tool call as the engine saw it, in the order the script made them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub seq: u64,
    pub tool: String,
    pub input: serde_json::Map<String, serde_json::Value>,
    pub status: CallStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    pub result_bytes: usize,
}

/// An execution run to its end.
#[derive(Debug, Clone)]
pub struct ScriptRun {
    pub outcome: Outcome,
    pub calls: Vec<CallRecord>,
    /// How many new calls each pause of the script carried (a gather of N pauses once with N).
    pub pauses: Vec<usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// Runs `code` in `container` until it ends, answering every tool call through `runner`.
pub async fn run_script(
    container: &mut Container,
    code: &str,
    tools: &mut Toolset,
    limits: Limits,
    runner: &impl ToolRunner,
) -> Result<ScriptRun, EngineError> {
    let guest_tools = tools.guest_tools();
    let request = ExecuteRequest { code, tools: &guest_tools, limits, now_ns: None };
    let mut step = container.execute(request).await?;
    let (mut calls, mut pauses) = (Vec::new(), Vec::new());
    loop {
        let pending = match step {
            Step::Finished(outcome) => return Ok(ScriptRun { outcome, calls, pauses }),
            Step::Pending(pending) => pending,
        };
        pauses.push(pending.calls.len());
        let mut results = Vec::with_capacity(pending.calls.len());
        for call in pending.calls {
            let (result, status) = match tools.admit(&call.name) {
                Err(refusal) => (Err(refusal), CallStatus::Refused),
                Ok(tool) => match runner.call(tool, &call).await {
                    Ok(text) => (Ok(text), CallStatus::Succeeded),
                    Err(failure) => (Err(failure), CallStatus::Failed),
                },
            };
            calls.push(CallRecord {
                seq: call.seq,
                tool: call.name,
                input: call.input,
                status,
                error_code: result.as_ref().err().map(|f| f.code.clone()),
                result_bytes: result.as_ref().map_or(0, String::len),
            });
            results.push(match result {
                Ok(text) => CallResult::ok(call.seq, text),
                Err(failure) => CallResult::failed(call.seq, failure),
            });
        }
        step = container.resume(&results, None).await?;
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
            Canned::Error(message) => Err(ToolFailure::new("tool_error", message)),
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
}

impl ToolRunner for Answers {
    async fn call(&self, tool: &ToolDefinition, _call: &ToolCall) -> Result<String, ToolFailure> {
        let mut by_tool = self.by_tool.lock().expect("not poisoned");
        match by_tool.get_mut(&tool.name) {
            Some(Answer::Always(canned)) => canned.clone().into_result(),
            Some(Answer::InOrder(queue)) => queue
                .pop_front()
                .ok_or_else(|| ToolFailure::new("no_answer", format!("the answers for {} ran out", tool.name)))?
                .into_result(),
            None => Err(ToolFailure::new("no_answer", format!("no answer was given for {}", tool.name))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> ToolCall {
        ToolCall { seq: 0, name: "t".into(), input: Default::default() }
    }

    #[tokio::test]
    async fn answers_repeat_or_run_out_in_order() {
        let answers = Answers::from_json(
            serde_json::json!({"t": ["a", {"b": 1}, {"is_error": true, "content": "no"}], "u": "same"}),
        )
        .unwrap();
        let t = ToolDefinition::code_callable("t");
        let u = ToolDefinition::code_callable("u");
        assert_eq!(answers.call(&t, &call()).await.unwrap(), "a");
        assert_eq!(answers.call(&t, &call()).await.unwrap(), r#"{"b":1}"#);
        assert_eq!(answers.call(&t, &call()).await.unwrap_err().message, "no");
        assert_eq!(answers.call(&t, &call()).await.unwrap_err().code, "no_answer");
        assert_eq!(answers.call(&u, &call()).await.unwrap(), "same");
        assert_eq!(answers.call(&u, &call()).await.unwrap(), "same");
        let v = ToolDefinition::code_callable("v");
        assert_eq!(answers.call(&v, &call()).await.unwrap_err().code, "no_answer");
        assert!(Answers::from_json(serde_json::json!(["x"])).is_err());
    }
}
