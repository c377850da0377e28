//! One assistant turn: ask the upstream, run the code it writes in the container, hand it the
//! result, and again, until the model ends its turn, calls a tool directly, or the code
//! awaits client tools (then the client answers and the next request resumes it).

use super::history::{self, server_tool_id};
use super::stream::Sink;
use super::upstream::{Credentials, Tokens, Upstream, UpstreamRequest};
use crate::api::error::ApiError;
use crate::api::types::Execution;
use crate::engine::service::{ExecutionStatus, ExecutionView, NewExecution, Owner, Service, ServiceError};
use crate::tools::ToolDefinition;
use serde_json::{Map, Value, json};

/// Upstream calls one request may make; past them the turn stops with `pause_turn` and the
/// client sends the conversation again to go on (as Anthropic does with long server tool use).
pub(crate) const MAX_UPSTREAM_CALLS_PER_REQUEST: usize = 10;
/// The name the model calls code by, as Anthropic's server tool is named.
pub(crate) const CODE_TOOL_NAME: &str = "code_execution";

/// The code execution tool of a request, and the tools its code may call.
#[derive(Debug)]
pub(crate) struct CodeTool {
    /// The tool's `type` (`code_execution_20260120`), which callers name.
    pub caller_type: String,
    pub tools: Vec<ToolDefinition>,
}

/// A request, checked and ready: what the upstream is offered and what code may call.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub model: String,
    pub max_tokens: u64,
    pub system: Option<Value>,
    /// The client's conversation, as sent.
    pub messages: Vec<Value>,
    /// Tools offered to the upstream model: those it may call directly, and the code tool.
    pub upstream_tools: Vec<Value>,
    pub tool_choice: Option<Value>,
    pub sampling: Map<String, Value>,
    pub code: Option<CodeTool>,
    pub container: Option<uuid::Uuid>,
}

/// How a turn ended.
#[derive(Debug, Default)]
pub(crate) struct Ending {
    pub stop_reason: String,
    pub stop_sequence: Option<String>,
    pub tokens: Tokens,
    /// Executions run or resumed in this request.
    pub code_runs: u64,
    pub sluice: crate::engine::Usage,
    /// The container's id, once known (named by the request, or made for the code).
    pub container_id: Option<uuid::Uuid>,
    /// Its expiry as the last execution left it.
    pub container_expires_at: Option<std::time::SystemTime>,
    /// Every upstream answer, for the container's audit trail.
    pub calls: Vec<crate::audit::ModelCall>,
}

/// What one execution came to.
enum Settled {
    /// Waiting for these client calls (`tool_use` blocks with their caller).
    Paused(Vec<Value>),
    /// Its `code_execution_tool_result` block, and the tool result the model reads.
    Finished { block: Value, for_model: Value },
}

/// Runs the turn of message `message_id`, streaming blocks into `sink` as they are decided;
/// `ending` says how far it got, also when it fails part way.
pub(crate) async fn run(
    service: &Service,
    owner: &Owner,
    upstream: &Upstream,
    credentials: &Credentials,
    (prepared, message_id): (Prepared, &str),
    sink: &mut Sink,
    ending: &mut Ending,
) -> Result<(), ApiError> {
    ending.container_id = prepared.container;
    let mut uploads = history::uploads_of(&prepared.messages);
    let mut conversation = history::for_upstream(&prepared.messages, CODE_TOOL_NAME)?;
    if let Some(resume) = history::resume_of(&prepared.messages)? {
        let code = prepared.code.as_ref().ok_or_else(|| {
            ApiError::InvalidRequest("the tool results answer code, but no code execution tool is offered".into())
        })?;
        let files = std::mem::take(&mut uploads);
        let answered: Vec<String> = resume.answers.iter().map(|(id, _)| id.clone()).collect();
        let view =
            match service.submit_tool_results_with_files(owner, &resume.execution_id, resume.answers, files).await {
                Ok(view) => view,
                // The same request again (a retry after a lost answer): the script went on with
                // these answers then, and where it is now is the answer.
                Err(e @ (ServiceError::Conflict(_) | ServiceError::InvalidRequest(_))) => {
                    match service.get_execution(owner, &resume.execution_id).await {
                        Ok(view) if went_on_from(&view, &answered) => view,
                        _ => return Err(e.into()),
                    }
                }
                Err(e) => return Err(e.into()),
            };
        ending.code_runs += 1;
        match settle(view, &resume.server_tool_id, &code.caller_type, ending)? {
            Settled::Paused(calls) => {
                paused(sink, calls, ending);
                return Ok(());
            }
            Settled::Finished { block, for_model } => {
                sink.push(block);
                history::append(&mut conversation, "user", for_model);
            }
        }
    }
    for _ in 0..MAX_UPSTREAM_CALLS_PER_REQUEST {
        if sink.client_gone() {
            // Nobody reads on: no more of the operator's upstream calls for this turn.
            tracing::info!(message_id, "the client left a streamed turn; it stops here");
            ending.stop_reason = "pause_turn".into();
            return Ok(());
        }
        let request = UpstreamRequest {
            model: &prepared.model,
            max_tokens: prepared.max_tokens,
            system: prepared.system.as_ref(),
            messages: &conversation,
            tools: &prepared.upstream_tools,
            tool_choice: prepared.tool_choice.as_ref(),
            sampling: &prepared.sampling,
        };
        let started = std::time::Instant::now();
        let live = if sink.streams() { Some(&mut *sink) } else { None };
        let reply = upstream.complete(&request, credentials, live).await?;
        ending.tokens.add(reply.usage);
        ending.calls.push(crate::audit::ModelCall {
            message_id: message_id.to_owned(),
            endpoint: upstream.endpoint().to_owned(),
            model: prepared.model.clone(),
            stop_reason: reply.stop_reason.clone(),
            input_tokens: reply.usage.input,
            output_tokens: reply.usage.output,
            elapsed_ms: started.elapsed().as_millis() as u64,
            executions: Vec::new(),
        });
        let (mut said, mut results, mut direct, mut waiting) = (Vec::new(), Vec::new(), false, None);
        let streamed = reply.streamed;
        let mut blocks = reply.content.into_iter().enumerate();
        for (n, block) in blocks.by_ref() {
            if streamed.get(n) == Some(&true) {
                // Already with the client, sent as it streamed in.
                said.push(block);
                continue;
            }
            let is_call = block["type"] == "tool_use";
            match &prepared.code {
                Some(code) if is_call && block["name"] == CODE_TOOL_NAME => {
                    let input = block["input"].clone();
                    let model_id = block["id"].as_str().unwrap_or_default().to_owned();
                    let (id, settled) = match input["code"].as_str() {
                        None => (
                            model_id.clone(),
                            refused(&model_id, "the input must have the Python to run as a string `code`"),
                        ),
                        Some(source) => {
                            let placing_files = !uploads.is_empty();
                            let new = NewExecution {
                                code: source.to_owned(),
                                container: ending.container_id,
                                tools: code.tools.clone(),
                                server_side_tools: true,
                                files: std::mem::take(&mut uploads),
                                ..NewExecution::default()
                            };
                            match service.create_execution(owner, new).await {
                                Ok(view) => {
                                    ending.code_runs += 1;
                                    if let Some(call) = ending.calls.last_mut() {
                                        call.executions.push(view.id.clone());
                                    }
                                    let id = server_tool_id(&view.id);
                                    let settled = settle(view, &id, &code.caller_type, ending)?;
                                    (id, settled)
                                }
                                // The model's code was refused (too long, say): the model hears why.
                                // Files the client named that cannot be placed are the client's to hear.
                                Err(ServiceError::InvalidRequest(why)) if !placing_files => {
                                    (model_id.clone(), refused(&model_id, &why))
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                    };
                    sink.push(json!({"type": "server_tool_use", "id": id, "name": CODE_TOOL_NAME, "input": input}));
                    said.push(json!({"type": "tool_use", "id": id, "name": CODE_TOOL_NAME, "input": input}));
                    match settled {
                        Settled::Paused(calls) => {
                            waiting = Some(calls);
                            break;
                        }
                        Settled::Finished { block: result, for_model } => {
                            sink.push(result);
                            results.push(for_model);
                        }
                    }
                }
                _ if is_call => {
                    direct = true;
                    let mut call = block.clone();
                    call["caller"] = json!({"type": "direct"});
                    sink.push(call);
                    said.push(block);
                }
                _ => {
                    sink.push(block.clone());
                    said.push(block);
                }
            }
        }
        if let Some(calls) = waiting {
            // The script waits for the client: what the model said after the call still goes
            // out; a further call cannot run before this one ends (one code call at a time is
            // what the upstream is asked for), so it is dropped, and said so.
            for (n, block) in blocks {
                match block["type"].as_str() {
                    _ if streamed.get(n) == Some(&true) => {}
                    Some("text" | "thinking") => sink.push(block),
                    _ => tracing::warn!(message_id, call = %block["name"], "a call after a paused script is dropped"),
                }
            }
            paused(sink, calls, ending);
            return Ok(());
        }
        if results.is_empty() || direct {
            ending.stop_reason = if direct { "tool_use".into() } else { reply.stop_reason };
            ending.stop_sequence = reply.stop_sequence;
            return Ok(());
        }
        for block in said {
            history::append(&mut conversation, "assistant", block);
        }
        for block in results {
            history::append(&mut conversation, "user", block);
        }
    }
    ending.stop_reason = "pause_turn".into();
    Ok(())
}

/// A code call refused before it ran: an error result the model reads.
fn refused(id: &str, why: &str) -> Settled {
    Settled::Finished {
        block: json!({"type": "code_execution_tool_result", "tool_use_id": id,
            "content": {"type": "code_execution_tool_result_error", "error_code": "invalid_tool_input"}}),
        for_model: json!({"type": "tool_result", "tool_use_id": id, "content": format!("invalid code input: {why}"), "is_error": true}),
    }
}

fn paused(sink: &mut Sink, calls: Vec<Value>, ending: &mut Ending) {
    for call in calls {
        sink.push(call);
    }
    ending.stop_reason = "tool_use".into();
}

/// Whether the execution already went on from these answers: it finished, or it waits on
/// other calls.
fn went_on_from(view: &ExecutionView, answered: &[String]) -> bool {
    match view.status {
        ExecutionStatus::Completed | ExecutionStatus::Failed => true,
        ExecutionStatus::RequiresAction => {
            !view.tool_uses.is_empty() && view.tool_uses.iter().all(|t| !answered.contains(&t.id))
        }
        ExecutionStatus::Running => false,
    }
}

impl Ending {
    /// The container's `{id, expires_at}` for the answer: as the last execution left it, else
    /// looked up (a container the request named where no code ran).
    pub(crate) async fn container(&self, service: &Service, owner: &Owner) -> Option<crate::api::types::ContainerRef> {
        let id = self.container_id?;
        let expires_at = match self.container_expires_at {
            Some(at) => at,
            None => service.get_container(owner, id).await.ok()?.expires_at,
        };
        Some(crate::api::types::ContainerRef { id: id.to_string(), expires_at: crate::api::types::rfc3339(expires_at) })
    }
}

/// An execution's state as blocks: the calls it waits on, or its result.
fn settle(view: ExecutionView, server_id: &str, caller_type: &str, ending: &mut Ending) -> Result<Settled, ApiError> {
    ending.container_id = Some(view.container_id);
    ending.container_expires_at = Some(view.container_expires_at);
    let caller = json!({"type": caller_type, "tool_id": server_id});
    match view.status {
        ExecutionStatus::RequiresAction if view.tool_uses.is_empty() => Err(ApiError::Conflict(format!(
            "execution {} waits for a person to approve a call: decide at POST /v1/executions/{}/approvals, \
             then send this request again",
            view.id, view.id
        ))),
        ExecutionStatus::RequiresAction | ExecutionStatus::Running => Ok(Settled::Paused(
            view.tool_uses
                .iter()
                .map(|t| json!({"type": "tool_use", "id": t.id, "name": t.name, "input": t.input, "caller": caller}))
                .collect(),
        )),
        ExecutionStatus::Completed | ExecutionStatus::Failed => {
            ending.sluice.add(&view.usage);
            let execution = Execution::from_view(view, false);
            let Some(result) = execution.code_execution_tool_result else {
                return Err(ApiError::Internal(format!("finished execution {} has no result", execution.id)));
            };
            let mut block = serde_json::to_value(&result).map_err(|e| ApiError::Internal(e.to_string()))?;
            block["tool_use_id"] = json!(server_id);
            let (text, is_error) = history::result_for_model(&block["content"]);
            Ok(Settled::Finished {
                block,
                for_model: json!({"type": "tool_result", "tool_use_id": server_id, "content": text, "is_error": is_error}),
            })
        }
    }
}
