//! The client's conversation as the upstream model reads it, and the answers it carries for a
//! paused script.
//!
//! The client keeps Anthropic's blocks: `server_tool_use` for code, `tool_use` blocks with a
//! `caller` for the calls the code made, their `tool_result`s, and `code_execution_tool_result`.
//! The upstream has no server tool, so the code becomes a call of the regular code tool and its
//! result that call's `tool_result`; the code's own calls and their raw results are left out
//! entirely: they stay with the sandbox, which is the point of programmatic tool calling.

use crate::api::error::ApiError;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The prefix of a `server_tool_use` id; the rest is the execution's.
pub(crate) const SERVER_TOOL_ID_PREFIX: &str = "srvtoolu_";
/// The prefix of an execution id.
const EXECUTION_ID_PREFIX: &str = "exec_";

/// The `server_tool_use` id of an execution (`exec_X` is `srvtoolu_X`): the client's
/// conversation then names the execution to resume with no state kept here.
pub(crate) fn server_tool_id(execution_id: &str) -> String {
    format!("{SERVER_TOOL_ID_PREFIX}{}", execution_id.strip_prefix(EXECUTION_ID_PREFIX).unwrap_or(execution_id))
}

fn execution_id(server_tool_id: &str) -> Option<String> {
    let rest = server_tool_id.strip_prefix(SERVER_TOOL_ID_PREFIX)?;
    (!rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit())).then(|| format!("{EXECUTION_ID_PREFIX}{rest}"))
}

/// A call the code made, as a `tool_use` block shows it: a caller that is code execution.
fn code_caller(block: &Value) -> Option<&str> {
    let caller = block.get("caller")?;
    caller["type"].as_str().is_some_and(|t| t.starts_with("code_execution")).then(|| caller["tool_id"].as_str())?
}

/// The messages for the upstream: the code tool named `code_tool`, the code's own calls left out.
pub(crate) fn for_upstream(messages: &[Value], code_tool: &str) -> Result<Vec<Value>, ApiError> {
    let code_calls = code_called_ids(messages);
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        let role = match message["role"].as_str() {
            Some(role @ ("user" | "assistant")) => role,
            _ => return Err(ApiError::InvalidRequest("each message's role must be user or assistant".into())),
        };
        let blocks = match &message["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => {
                return Err(ApiError::InvalidRequest(
                    "a message's content must be a string or a list of blocks".into(),
                ));
            }
        };
        for block in blocks {
            let (role, block) = match (role, block["type"].as_str()) {
                ("assistant", Some("server_tool_use")) => {
                    if block["name"] != "code_execution" {
                        return Err(ApiError::InvalidRequest(format!(
                            "server tool {} is not one this endpoint runs",
                            block["name"]
                        )));
                    }
                    (
                        "assistant",
                        json!({"type": "tool_use", "id": block["id"], "name": code_tool, "input": block["input"]}),
                    )
                }
                ("assistant", Some("tool_use")) if code_caller(&block).is_some() => continue,
                ("assistant", Some("tool_use")) => {
                    let mut block = block;
                    if let Some(fields) = block.as_object_mut() {
                        fields.remove("caller");
                    }
                    ("assistant", block)
                }
                (_, Some("code_execution_tool_result")) => {
                    let (text, is_error) = result_for_model(&block["content"]);
                    (
                        "user",
                        json!({"type": "tool_result", "tool_use_id": block["tool_use_id"], "content": text, "is_error": is_error}),
                    )
                }
                ("user", Some("tool_result"))
                    if block["tool_use_id"].as_str().is_some_and(|id| code_calls.contains_key(id)) =>
                {
                    continue;
                }
                // Files for the container, not words for the model.
                ("user", Some("container_upload")) => continue,
                (role, _) => (role, block),
            };
            append(&mut out, role, block);
        }
    }
    Ok(out)
}

/// Adds a block to the conversation: to the last message if it has `role`, else in a new one.
/// A user turn's `tool_result`s stay ahead of its other blocks, as Anthropic requires.
pub(crate) fn append(conversation: &mut Vec<Value>, role: &str, block: Value) {
    if let Some(content) =
        conversation.last_mut().filter(|last| last["role"] == role).and_then(|last| last["content"].as_array_mut())
    {
        let at = if block["type"] == "tool_result" {
            content.iter().position(|b| b["type"] != "tool_result").unwrap_or(content.len())
        } else {
            content.len()
        };
        content.insert(at, block);
        return;
    }
    conversation.push(json!({"role": role, "content": [block]}));
}

/// Every call the code made in the conversation: its `tool_use` id, and the `server_tool_use`
/// id of the code that made it.
fn code_called_ids(messages: &[Value]) -> HashMap<&str, &str> {
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| Some((b["id"].as_str()?, code_caller(b)?)))
        .collect()
}

/// The answers a conversation's last user turn gives a paused script.
#[derive(Debug)]
pub(crate) struct Resume {
    pub execution_id: String,
    pub server_tool_id: String,
    pub answers: Vec<(String, Result<String, crate::ToolFailure>)>,
}

/// The answers for a paused script in the last message, if it is a user turn with some. The
/// calls a script waits on must all be answered in the turn after them (the script takes its
/// answers at once, and the upstream could not read a code call with no result).
pub(crate) fn resume_of(messages: &[Value]) -> Result<Option<Resume>, ApiError> {
    if let Some(at) = messages.iter().rposition(|m| m["role"] == "assistant") {
        let answered: Vec<&str> = messages
            .get(at + 1)
            .filter(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_array())
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        let unanswered: Vec<&str> = messages[at]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use" && code_caller(b).is_some())
            .filter_map(|b| b["id"].as_str())
            .filter(|id| !answered.contains(id))
            .collect();
        if !unanswered.is_empty() {
            return Err(ApiError::InvalidRequest(format!(
                "tool_use ids {unanswered:?} were made by code that waits for them: the next user turn \
                 must hold a tool_result for each"
            )));
        }
    }
    let Some(last) = messages.last().filter(|m| m["role"] == "user") else { return Ok(None) };
    let code_calls = code_called_ids(messages);
    let mut resume: Option<Resume> = None;
    for block in last["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_result") {
        let Some(server_id) = block["tool_use_id"].as_str().and_then(|id| code_calls.get(id)) else { continue };
        let execution_id = execution_id(server_id)
            .ok_or_else(|| ApiError::InvalidRequest(format!("caller tool_id {server_id:?} names no execution")))?;
        let resume = resume.get_or_insert_with(|| Resume {
            execution_id: execution_id.clone(),
            server_tool_id: (*server_id).to_owned(),
            answers: Vec::new(),
        });
        if resume.execution_id != execution_id {
            return Err(ApiError::InvalidRequest("tool results answer calls of two code executions at once".into()));
        }
        resume.answers.push(answer_of(block)?);
    }
    Ok(resume)
}

/// A `tool_result` block as the engine takes it, read as `POST /v1/executions/{id}/tool_results`
/// reads one (the same shapes accepted, the same refused).
fn answer_of(block: &Value) -> Result<(String, Result<String, crate::ToolFailure>), ApiError> {
    let block = <crate::api::types::ToolResultBlock as serde::Deserialize>::deserialize(block)
        .map_err(|e| ApiError::InvalidRequest(format!("a tool_result for code: {e}")))?;
    Ok(block.into_answer())
}

/// Files the last user turn hands the container (`container_upload` blocks).
pub(crate) fn uploads_of(messages: &[Value]) -> Vec<String> {
    let Some(last) = messages.last().filter(|m| m["role"] == "user") else { return Vec::new() };
    last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "container_upload")
        .filter_map(|b| b["file_id"].as_str().map(str::to_owned))
        .collect()
}

/// A `code_execution_tool_result`'s content as the model reads it, and whether it failed.
pub(crate) fn result_for_model(content: &Value) -> (String, bool) {
    match content["type"].as_str() {
        Some("code_execution_result") => {
            let mut text = content["stdout"].as_str().unwrap_or_default().to_owned();
            if let Some(stderr) = content["stderr"].as_str().filter(|s| !s.is_empty()) {
                text.push_str(&format!("\n[stderr]\n{stderr}"));
            }
            let code = content["return_code"].as_i64().unwrap_or(0);
            if code != 0 {
                text.push_str(&format!("\n[return code {code}]"));
            }
            let files: Vec<&str> =
                content["content"].as_array().into_iter().flatten().filter_map(|f| f["file_id"].as_str()).collect();
            if !files.is_empty() {
                text.push_str(&format!("\n[files written: {}]", files.join(", ")));
            }
            if text.is_empty() {
                text.push_str("(no output: print what you need to see)");
            }
            (text, code != 0)
        }
        _ => {
            let code = content["error_code"].as_str().unwrap_or("unavailable");
            let detail = content["sluice_error_code"].as_str().map(|c| format!(" ({c})")).unwrap_or_default();
            (format!("the code execution failed: {code}{detail}"), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused_twice_then_done() -> Vec<Value> {
        vec![
            json!({"role": "user", "content": "Who is over budget?"}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "I'll check."},
                {"type": "server_tool_use", "id": "srvtoolu_ab12", "name": "code_execution", "input": {"code": "x"}},
                {"type": "tool_use", "id": "toolu_1", "name": "team", "input": {}, "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_ab12"}},
            ]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "[raw rows]"}]}),
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_2", "name": "team", "input": {}, "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_ab12"}},
            ]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "more"}], "is_error": true}]}),
        ]
    }

    #[test]
    fn the_codes_own_calls_never_reach_the_upstream() {
        let mut messages = paused_twice_then_done();
        messages.push(json!({"role": "assistant", "content": [
            {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_ab12",
             "content": {"type": "code_execution_result", "stdout": "ENG003\n", "stderr": "", "return_code": 0, "content": []}},
            {"type": "text", "text": "ENG003 is."},
        ]}));
        let sent = for_upstream(&messages, "code_execution").unwrap();
        let text = serde_json::to_string(&sent).unwrap();
        assert!(!text.contains("raw rows") && !text.contains("\"toolu_"), "{text}");
        assert_eq!(sent.len(), 4, "{sent:#?}");
        assert_eq!(
            sent[1]["content"][1],
            json!({"type": "tool_use", "id": "srvtoolu_ab12", "name": "code_execution", "input": {"code": "x"}})
        );
        assert_eq!(sent[2]["content"][0]["content"], "ENG003\n");
        assert_eq!(sent[3], json!({"role": "assistant", "content": [{"type": "text", "text": "ENG003 is."}]}));
    }

    #[test]
    fn the_last_turns_answers_resume_the_execution_they_name() {
        let resume = resume_of(&paused_twice_then_done()).unwrap().expect("answers");
        assert_eq!((resume.execution_id.as_str(), resume.server_tool_id.as_str()), ("exec_ab12", "srvtoolu_ab12"));
        assert_eq!(resume.answers.len(), 1);
        assert_eq!(resume.answers[0].0, "toolu_2");
        assert_eq!(resume.answers[0].1.as_ref().unwrap_err().message, "more");
        let unanswered = resume_of(&paused_twice_then_done()[..2]).unwrap_err();
        assert!(unanswered.to_string().contains("toolu_1"), "a waiting call must be answered: {unanswered}");
        let mut moved_on = paused_twice_then_done();
        moved_on[4] = json!({"role": "user", "content": "never mind"});
        assert!(resume_of(&moved_on).is_err(), "new words while the script waits are refused");
        assert!(resume_of(&paused_twice_then_done()[..1]).unwrap().is_none(), "no answers, nothing to resume");
        assert_eq!(server_tool_id("exec_ab12"), "srvtoolu_ab12");
        assert_eq!(execution_id("srvtoolu_../x"), None);
    }

    #[test]
    fn tool_results_stay_ahead_of_text_in_a_user_turn() {
        let mut conversation = vec![json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "1"}, {"type": "text", "text": "and?"}]})];
        append(&mut conversation, "user", json!({"type": "tool_result", "tool_use_id": "b", "content": "2"}));
        let order: Vec<&Value> = conversation[0]["content"].as_array().unwrap().iter().map(|b| &b["type"]).collect();
        assert_eq!(order, [&json!("tool_result"), &json!("tool_result"), &json!("text")]);
        append(&mut conversation, "assistant", json!({"type": "text", "text": "ok"}));
        assert_eq!(conversation.len(), 2);
    }

    #[test]
    fn results_read_as_text_with_their_failure() {
        let failed = json!({"type": "code_execution_result", "stdout": "", "stderr": "Traceback", "return_code": 1, "content": []});
        assert_eq!(result_for_model(&failed), ("\n[stderr]\nTraceback\n[return code 1]".to_owned(), true));
        let stopped = json!({"type": "code_execution_tool_result_error", "error_code": "execution_time_exceeded"});
        assert!(result_for_model(&stopped).1);
    }
}
