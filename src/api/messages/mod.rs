//! `POST /v1/messages`: Anthropic's Messages API with programmatic tool calling, for any model.
//!
//! An unchanged Anthropic SDK app points its `base_url` at Sluice. The conversation goes to the
//! upstream model (`upstream`: Anthropic-compatible, or OpenAI-compatible through `openai`);
//! when the request offers the code execution tool, the upstream is offered a regular tool
//! whose description lists the code-callable tools as Python signatures, and the code it
//! writes runs in the request's container (`turn`). Toward the client everything is in
//! Anthropic's shapes (`history` reads them back), streamed as Anthropic streams (`stream`).

mod history;
mod openai;
mod stream;
mod turn;
pub(crate) mod upstream;

pub use upstream::Upstream;

use super::AppState;
use super::auth::Authenticated;
use super::error::{ApiError, ApiJson};
use crate::tools::{AllowedCaller, Tool, ToolDefinition};
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use stream::Sink;
use turn::{CODE_TOOL_NAME, CodeTool, Ending, Prepared};
use upstream::Credentials;

/// Messages in one request.
pub(crate) const MAX_MESSAGES: usize = 10_000;
/// Sampling fields passed on to the upstream as given; any other unknown field is refused.
const SAMPLING_FIELDS: &[&str] =
    &["temperature", "top_p", "top_k", "stop_sequences", "metadata", "thinking", "service_tier"];

/// `POST /v1/messages`, as Anthropic's.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct MessagesRequest {
    pub model: String,
    pub max_tokens: u64,
    #[schema(value_type = Vec<Object>)]
    pub messages: Vec<Value>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub system: Option<Value>,
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub tools: Vec<Value>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub tool_choice: Option<Value>,
    /// The container to run code in: its id, or `{"id": ...}`; none makes one.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub container: Option<super::types::ContainerParam>,
    #[serde(default)]
    pub stream: bool,
    /// `temperature`, `top_p`, `top_k`, `stop_sequences`, `metadata`, `thinking`, `service_tier`.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub sampling: Map<String, Value>,
}

/// Run a Messages turn through the upstream model, with code execution in a container.
#[utoipa::path(post, path = "/v1/messages", request_body = MessagesRequest,
    responses((status = 200, body = Object), (status = 400, body = super::error::ErrorBody),
        (status = 404, body = super::error::ErrorBody), (status = 502, body = super::error::ErrorBody)))]
pub(super) async fn create_message(
    State(state): State<AppState>,
    Authenticated(owner): Authenticated,
    headers: axum::http::HeaderMap,
    ApiJson(body): ApiJson<MessagesRequest>,
) -> Result<Response, ApiError> {
    let upstream = state.upstream.clone().ok_or(ApiError::NoUpstream)?;
    let credentials = Credentials {
        // A key for Sluice is not a key for the upstream: passed on only by an open service.
        client_key: (!state.keys.enabled()).then(|| super::auth::presented_key(&headers).map(str::to_owned)).flatten(),
        anthropic_version: headers.get("anthropic-version").and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    let streamed = body.stream;
    let prepared = prepare(body, &state.service.server_side_tools(&owner))?;
    let id = format!("msg_{}", uuid::Uuid::new_v4().simple());
    let model = prepared.model.clone();
    if streamed {
        let start = json!({
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "container": null,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        });
        // The turn outlives this handler: it holds a place among the key's requests in flight
        // until it ends, as an answered request would.
        let place = state.service.request_place(&owner)?;
        let (mut sink, events) = Sink::streaming(&start);
        tokio::spawn(async move {
            let _place = place;
            match run_and_record(&state, &owner, &upstream, &credentials, (prepared, &id), &mut sink).await {
                Ok(ending) => {
                    let container = ending.container(&state.service, &owner).await;
                    let delta = json!({"stop_reason": ending.stop_reason, "stop_sequence": ending.stop_sequence,
                        "container": container});
                    sink.finish(delta, usage(&ending));
                }
                Err(error) => sink.fail(&error),
            }
        });
        let sse = axum::response::Sse::new(events).keep_alive(axum::response::sse::KeepAlive::default());
        return Ok(sse.into_response());
    }
    let mut sink = Sink::collecting();
    let ending = run_and_record(&state, &owner, &upstream, &credentials, (prepared, &id), &mut sink).await?;
    let container = ending.container(&state.service, &owner).await;
    Ok(Json(json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": sink.into_content(),
        "stop_reason": ending.stop_reason,
        "stop_sequence": ending.stop_sequence,
        "container": container,
        "usage": usage(&ending),
    }))
    .into_response())
}

/// Runs the turn, then adds its model calls to the audit trail of the container its code ran
/// in (also when the turn failed part way: what happened is recorded).
async fn run_and_record(
    state: &AppState,
    owner: &crate::engine::service::Owner,
    upstream: &upstream::Upstream,
    credentials: &Credentials,
    request: (Prepared, &str),
    sink: &mut Sink,
) -> Result<Ending, ApiError> {
    let mut ending = Ending::default();
    let result = turn::run(&state.service, owner, upstream, credentials, request, sink, &mut ending).await;
    // Only where code ran: that container is live here, so recording restores nothing.
    if let Some(container) = ending.container_id.filter(|_| ending.code_runs > 0) {
        let calls = std::mem::take(&mut ending.calls);
        if let Err(e) = state.service.record_model_calls(owner, container, calls).await {
            tracing::warn!(%container, error = %e, "could not record a Messages turn's model calls");
        }
    }
    result.map(|()| ending)
}

/// Anthropic's usage (the upstream's tokens, summed over its calls), with Sluice's counts.
fn usage(ending: &Ending) -> Value {
    json!({
        "input_tokens": ending.tokens.input,
        "output_tokens": ending.tokens.output,
        "cache_creation_input_tokens": ending.tokens.cache_creation,
        "cache_read_input_tokens": ending.tokens.cache_read,
        "server_tool_use": {"code_execution_requests": ending.code_runs, "web_search_requests": 0, "web_fetch_requests": 0},
        "sluice": ending.sluice,
    })
}

/// Checks the request and splits its tools: the code tool, tools the model calls directly,
/// tools code calls (the request's, and `server_side` ones, the key's own that the service
/// calls itself, which executions from here may call too).
fn prepare(body: MessagesRequest, server_side: &[Arc<Tool>]) -> Result<Prepared, ApiError> {
    if let Some(field) = body.sampling.keys().find(|k| !SAMPLING_FIELDS.contains(&k.as_str())) {
        return Err(ApiError::InvalidRequest(format!("{field}: extra inputs are not permitted")));
    }
    if body.messages.is_empty() || body.messages.len() > MAX_MESSAGES {
        return Err(ApiError::InvalidRequest(format!("messages: between 1 and {MAX_MESSAGES} are required")));
    }
    if body.max_tokens == 0 {
        return Err(ApiError::InvalidRequest("max_tokens: must be at least 1".into()));
    }
    let mut caller_type = None;
    let (mut direct, mut from_code) = (Vec::new(), Vec::new());
    for tool in body.tools {
        let kind = tool["type"].as_str().unwrap_or("custom");
        if kind.starts_with("code_execution_") {
            caller_type = Some(kind.to_owned());
            continue;
        }
        if kind != "custom" {
            return Err(ApiError::InvalidRequest(format!("tools: server tool {kind} is not available here")));
        }
        let definition: ToolDefinition =
            serde_json::from_value(tool).map_err(|e| ApiError::InvalidRequest(format!("tools: {e}")))?;
        if definition.name == CODE_TOOL_NAME {
            return Err(ApiError::InvalidRequest(format!("tools: the name {CODE_TOOL_NAME} is the code tool's")));
        }
        if definition.allowed_callers.contains(&AllowedCaller::Direct) {
            direct.push(json!({
                "name": definition.name,
                "description": definition.description.clone().unwrap_or_default(),
                "input_schema": definition.input_schema,
            }));
        }
        if definition.callable_from_code() {
            from_code.push(definition);
        }
    }
    let code = match caller_type {
        Some(caller_type) => Some(CodeTool { caller_type, tools: from_code }),
        None if !from_code.iter().all(|t| t.allowed_callers.contains(&AllowedCaller::Direct)) => {
            return Err(ApiError::InvalidRequest(
                "tools: a tool only code may call needs the code execution tool in the request".into(),
            ));
        }
        None => None,
    };
    let mut upstream_tools = direct;
    if let Some(code) = &code {
        upstream_tools.push(code_tool_for_upstream(&code.tools, server_side)?);
    }
    // One call at a time when code may run: a script that pauses for the client ends the turn
    // there, and a call after it could not run before it ends.
    let tool_choice = match (body.tool_choice, &code) {
        (None, Some(_)) => Some(json!({"type": "auto", "disable_parallel_tool_use": true})),
        (Some(mut choice), Some(_)) if choice["type"] != "none" => {
            choice["disable_parallel_tool_use"] = json!(true);
            Some(choice)
        }
        (choice, _) => choice,
    };
    let container = body.container.as_ref().map(|c| super::containers::container_id(c.id())).transpose()?;
    Ok(Prepared {
        model: body.model,
        max_tokens: body.max_tokens,
        system: body.system,
        messages: body.messages,
        upstream_tools,
        tool_choice,
        sampling: body.sampling,
        code,
        container,
    })
}

/// The code tool as a regular tool: what it does, and each tool code can call as the Python
/// signature a script awaits it by (a request's tool hides a server-side one of its name, as
/// in the execution's toolset).
fn code_tool_for_upstream(tools: &[ToolDefinition], server_side: &[Arc<Tool>]) -> Result<Value, ApiError> {
    let mut description = String::from(
        "Run Python in a persistent sandbox: variables, imports and files in /workspace stay from one \
         call to the next in this conversation. Top-level `await` works. Only what the code prints comes \
         back to you; tool results stay inside the sandbox, so filter, join and aggregate there and print \
         just the answer. asyncio.gather runs tool calls concurrently.",
    );
    let mut callable =
        tools.iter().map(|d| Tool::new(d.clone()).map_err(ApiError::InvalidRequest)).collect::<Result<Vec<_>, _>>()?;
    callable.extend(server_side.iter().filter(|s| tools.iter().all(|t| t.name != s.name())).cloned());
    if !callable.is_empty() {
        description.push_str(
            "\n\nTools the code can await, by keyword argument; each returns the tool's result as a string \
             (often JSON: use json.loads):\n",
        );
        for tool in &callable {
            description.push('\n');
            description.push_str(&crate::tools::search::python_signature(tool));
            description.push('\n');
        }
    }
    Ok(json!({
        "name": CODE_TOOL_NAME,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The Python to run."}},
            "required": ["code"],
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tools: Value) -> MessagesRequest {
        serde_json::from_value(json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "tools": tools, "temperature": 0.5}))
        .unwrap()
    }

    #[test]
    fn tools_split_into_direct_ones_and_signatures_in_the_code_tools_description() {
        let server_side = |name: &str| {
            let definition = json!({"name": name, "allowed_callers": ["code_execution_20260120"],
                "executor": {"type": "http", "url": "https://tools.example/x"}});
            Tool::new(serde_json::from_value(definition).unwrap()).unwrap()
        };
        let server_side = [server_side("rotate_keys"), server_side("get_expenses")];
        let prepared = prepare(
            request(json!([
            {"type": "code_execution_20260120", "name": "code_execution"},
            {"name": "get_expenses", "description": "Expense items.", "allowed_callers": ["code_execution_20260120"],
             "input_schema": {"type": "object", "properties": {"employee_id": {"type": "string"}}, "required": ["employee_id"]}},
            {"name": "lookup", "input_schema": {"type": "object"}, "allowed_callers": ["direct", "code_execution_20260120"]},
            ])),
            &server_side,
        )
        .unwrap();
        let names: Vec<&str> = prepared.upstream_tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["lookup", "code_execution"]);
        let description = prepared.upstream_tools[1]["description"].as_str().unwrap();
        assert!(description.contains("async def get_expenses(*, employee_id: str) -> str"), "{description}");
        assert!(description.contains("async def lookup() -> str"), "{description}");
        assert!(description.contains("async def rotate_keys() -> str"), "the key's server-side tools: {description}");
        assert_eq!(description.matches("async def get_expenses").count(), 1, "the request's hides its namesake");
        let code = prepared.code.unwrap();
        assert_eq!((code.caller_type.as_str(), code.tools.len()), ("code_execution_20260120", 2));
        assert_eq!(prepared.tool_choice.unwrap()["disable_parallel_tool_use"], true);
        assert_eq!(prepared.sampling["temperature"], 0.5);
    }

    #[test]
    fn requests_this_endpoint_cannot_serve_are_refused_with_the_reason() {
        let code_only = json!([{"name": "f", "allowed_callers": ["code_execution_20260120"]}]);
        assert!(prepare(request(code_only), &[]).unwrap_err().to_string().contains("code execution tool"));
        let web = json!([{"type": "web_search_20250305", "name": "web_search"}]);
        assert!(prepare(request(web), &[]).unwrap_err().to_string().contains("web_search_20250305"));
        let clash = json!([{"type": "code_execution_20260120", "name": "code_execution"}, {"name": "code_execution"}]);
        assert!(prepare(request(clash), &[]).is_err());
        let mut unknown = request(json!([]));
        unknown.sampling.insert("mcp_servers".into(), json!([]));
        assert!(prepare(unknown, &[]).unwrap_err().to_string().contains("mcp_servers"));
    }
}
