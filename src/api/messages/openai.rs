//! Anthropic's Messages shapes to OpenAI's chat completions and back, for upstreams that speak
//! only the latter (vLLM, llama.cpp's server, Ollama).
//!
//! Text, tool calls and tool results translate; thinking blocks are dropped (chat completions
//! has no place for them); images and documents are refused, since a text-only translation
//! would silently lose them.

use super::stream::Sink;
use super::upstream::{Tokens, UpstreamEvents, UpstreamReply, UpstreamRequest, upstream_error};
use crate::api::error::ApiError;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The chat completions body for `request`.
pub(crate) fn request_body(request: &UpstreamRequest<'_>) -> Result<Value, ApiError> {
    let mut messages = Vec::new();
    if let Some(system) = request.system {
        messages.push(json!({"role": "system", "content": text_of(system)?}));
    }
    for message in request.messages {
        match message["role"].as_str() {
            Some("user") => user_messages(&message["content"], &mut messages)?,
            Some("assistant") => messages.push(assistant_message(&message["content"])?),
            _ => return Err(ApiError::InvalidRequest("a message's role must be user or assistant".into())),
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    body.insert("messages".into(), Value::Array(messages));
    for (ours, theirs) in [("temperature", "temperature"), ("top_p", "top_p"), ("stop_sequences", "stop")] {
        if let Some(value) = request.sampling.get(ours) {
            body.insert(theirs.into(), value.clone());
        }
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool["name"],
                    "description": tool.get("description").cloned().unwrap_or(json!("")),
                    "parameters": tool.get("input_schema").cloned().unwrap_or(json!({"type": "object"})),
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = request.tool_choice {
            let (choice, parallel) = tool_choice(choice);
            body.insert("tool_choice".into(), choice);
            if !parallel {
                body.insert("parallel_tool_calls".into(), json!(false));
            }
        }
    }
    Ok(Value::Object(body))
}

/// Anthropic's `tool_choice` as OpenAI's, and whether parallel calls stay allowed.
fn tool_choice(choice: &Value) -> (Value, bool) {
    let parallel = !choice["disable_parallel_tool_use"].as_bool().unwrap_or(false);
    let choice = match choice["type"].as_str() {
        Some("any") => json!("required"),
        Some("none") => json!("none"),
        Some("tool") => json!({"type": "function", "function": {"name": choice["name"]}}),
        _ => json!("auto"),
    };
    (choice, parallel)
}

/// A string, or the text of a list of text blocks.
fn text_of(content: &Value) -> Result<String, ApiError> {
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Array(blocks) => {
            let mut text = String::new();
            for block in blocks {
                match block["type"].as_str() {
                    Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
                    other => return Err(unsupported(other)),
                }
            }
            Ok(text)
        }
        _ => Ok(String::new()),
    }
}

fn unsupported(kind: Option<&str>) -> ApiError {
    ApiError::InvalidRequest(format!(
        "the openai upstream takes text, tool_use and tool_result blocks only, not {}",
        kind.unwrap_or("a block without a type")
    ))
}

/// A user turn: its tool results first (each a `tool` message, which must follow the
/// assistant's calls at once), then its text.
fn user_messages(content: &Value, out: &mut Vec<Value>) -> Result<(), ApiError> {
    let Value::Array(blocks) = content else {
        out.push(json!({"role": "user", "content": text_of(content)?}));
        return Ok(());
    };
    let mut text = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("tool_result") => {
                let mut result = text_of(&block["content"])?;
                if block["is_error"].as_bool() == Some(true) {
                    result.insert_str(0, "error: ");
                }
                out.push(json!({"role": "tool", "tool_call_id": block["tool_use_id"], "content": result}));
            }
            Some("text") => text.push(block["text"].as_str().unwrap_or_default()),
            other => return Err(unsupported(other)),
        }
    }
    if !text.is_empty() {
        out.push(json!({"role": "user", "content": text.concat()}));
    }
    Ok(())
}

fn assistant_message(content: &Value) -> Result<Value, ApiError> {
    let Value::Array(blocks) = content else {
        return Ok(json!({"role": "assistant", "content": text_of(content)?}));
    };
    let (mut text, mut calls) = (String::new(), Vec::new());
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => calls.push(json!({
                "id": block["id"],
                "type": "function",
                "function": {"name": block["name"], "arguments": block["input"].to_string()},
            })),
            Some("thinking" | "redacted_thinking") => {}
            other => return Err(unsupported(other)),
        }
    }
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    Ok(message)
}

/// The first choice of a chat completion as Anthropic's content, stop reason and usage.
pub(crate) fn reply(parsed: Value) -> Result<UpstreamReply, ApiError> {
    let Some(choice) = parsed["choices"].get(0) else {
        return Err(upstream_error(StatusCode::BAD_GATEWAY, "api_error", "the chat completion has no choices"));
    };
    let message = &choice["message"];
    let calls = message["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|call| Call {
            id: call["id"].as_str().unwrap_or_default().to_owned(),
            name: call["function"]["name"].as_str().unwrap_or_default().to_owned(),
            // A string of JSON, as OpenAI sends it; some servers send the object itself.
            arguments: match &call["function"]["arguments"] {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                object => object.to_string(),
            },
        })
        .collect();
    let text = message["content"].as_str().unwrap_or_default().to_owned();
    Ok(assemble(text, false, calls, choice["finish_reason"].as_str(), &parsed["usage"]))
}

/// A streamed chat completion, its text sent on as it comes.
pub(crate) async fn stream(events: &mut UpstreamEvents, sink: &mut Sink) -> Result<UpstreamReply, ApiError> {
    let (mut text, mut open) = (String::new(), false);
    let mut calls: BTreeMap<u64, Call> = BTreeMap::new();
    let (mut finish, mut usage, mut done) = (None, Value::Null, false);
    while let Some(data) = events.next().await? {
        if data.trim() == "[DONE]" {
            done = true;
            break;
        }
        let chunk: Value = serde_json::from_str(&data)
            .map_err(|_| upstream_error(StatusCode::BAD_GATEWAY, "api_error", "an upstream chunk is not JSON"))?;
        if let Some(message) = chunk["error"]["message"].as_str() {
            return Err(upstream_error(StatusCode::BAD_GATEWAY, "api_error", message));
        }
        if chunk["usage"].is_object() {
            usage = chunk["usage"].clone();
        }
        let Some(choice) = chunk["choices"].get(0) else { continue };
        if let Some(piece) = choice["delta"]["content"].as_str().filter(|p| !p.is_empty()) {
            if !open {
                sink.begin(&json!({"type": "text", "text": ""}));
                open = true;
            }
            sink.delta(json!({"type": "text_delta", "text": piece}));
            text.push_str(piece);
        }
        for part in choice["delta"]["tool_calls"].as_array().into_iter().flatten() {
            let call = calls.entry(part["index"].as_u64().unwrap_or(0)).or_default();
            if let Some(id) = part["id"].as_str() {
                call.id = id.to_owned();
            }
            call.name.push_str(part["function"]["name"].as_str().unwrap_or_default());
            call.arguments.push_str(part["function"]["arguments"].as_str().unwrap_or_default());
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            finish = Some(reason.to_owned());
        }
    }
    if !done && finish.is_none() {
        return Err(upstream_error(StatusCode::BAD_GATEWAY, "api_error", "the upstream's stream ended part way"));
    }
    if open {
        sink.end(json!({"type": "text", "text": text}));
    }
    Ok(assemble(text, open, calls.into_values().collect(), finish.as_deref(), &usage))
}

/// A tool call as chat completions writes it.
#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// The reply in Anthropic's shapes: the text (already sent to the client if `streamed`), then
/// the calls.
fn assemble(text: String, streamed: bool, calls: Vec<Call>, finish: Option<&str>, usage: &Value) -> UpstreamReply {
    let mut reply = UpstreamReply::default();
    if !text.is_empty() {
        reply.content.push(json!({"type": "text", "text": text}));
        reply.streamed.push(streamed);
    }
    let any_calls = !calls.is_empty();
    for call in calls {
        // A model that writes arguments that are not a JSON object gets them back as an
        // object with the raw text: the tool's input check then says what is wrong.
        let arguments = if call.arguments.trim().is_empty() { "{}" } else { &call.arguments };
        let input = match serde_json::from_str::<Value>(arguments) {
            Ok(object @ Value::Object(_)) => object,
            _ => json!({"arguments": call.arguments}),
        };
        let id = if call.id.is_empty() { format!("call_{}", uuid::Uuid::new_v4().simple()) } else { call.id };
        reply.content.push(json!({"type": "tool_use", "id": id, "name": call.name, "input": input}));
        reply.streamed.push(false);
    }
    reply.stop_reason = if any_calls {
        "tool_use"
    } else {
        match finish {
            Some("length") => "max_tokens",
            Some("content_filter") => "refusal",
            _ => "end_turn",
        }
    }
    .to_owned();
    reply.usage = Tokens {
        input: usage["prompt_tokens"].as_u64().unwrap_or(0),
        output: usage["completion_tokens"].as_u64().unwrap_or(0),
        cache_creation: 0,
        cache_read: usage["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
    };
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_with_tool_calls_translates_both_ways() {
        let messages = vec![
            json!({"role": "user", "content": "How many?"}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Let me count."},
                {"type": "tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "print(2)"}},
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "srvtoolu_1", "content": "2\n"},
                {"type": "text", "text": "and?"},
            ]}),
        ];
        let tools =
            vec![json!({"name": "code_execution", "description": "Run Python.", "input_schema": {"type": "object"}})];
        let sampling = Map::from_iter([("temperature".to_owned(), json!(0.2))]);
        let system = json!([{"type": "text", "text": "Be brief."}]);
        let choice = json!({"type": "auto", "disable_parallel_tool_use": true});
        let request = UpstreamRequest {
            model: "m",
            max_tokens: 100,
            system: Some(&system),
            messages: &messages,
            tools: &tools,
            tool_choice: Some(&choice),
            sampling: &sampling,
        };
        let body = request_body(&request).unwrap();
        let sent = &body["messages"];
        assert_eq!(sent[0], json!({"role": "system", "content": "Be brief."}));
        assert_eq!(sent[2]["tool_calls"][0]["function"]["arguments"], "{\"code\":\"print(2)\"}");
        assert_eq!(sent[2]["content"], "Let me count.");
        assert_eq!(sent[3], json!({"role": "tool", "tool_call_id": "srvtoolu_1", "content": "2\n"}));
        assert_eq!(sent[4], json!({"role": "user", "content": "and?"}));
        assert_eq!((body["temperature"].clone(), body["parallel_tool_calls"].clone()), (json!(0.2), json!(false)));
        assert_eq!(body["tools"][0]["function"]["name"], "code_execution");

        let answer = json!({"choices": [{"finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "code_execution", "arguments": "{\"code\": \"1\"}"}},
            {"id": "call_10", "type": "function", "function": {"name": "f", "arguments": "not json"}},
        ]}}], "usage": {"prompt_tokens": 12, "completion_tokens": 5}});
        let reply = reply(answer).unwrap();
        assert_eq!(reply.stop_reason, "tool_use");
        assert_eq!(reply.content[0]["input"], json!({"code": "1"}));
        assert_eq!(reply.content[1]["input"], json!({"arguments": "not json"}));
        assert_eq!((reply.usage.input, reply.usage.output), (12, 5));
    }

    #[test]
    fn images_are_refused_rather_than_dropped() {
        let messages = vec![json!({"role": "user", "content": [{"type": "image", "source": {}}]})];
        let request = UpstreamRequest {
            model: "m",
            max_tokens: 1,
            system: None,
            messages: &messages,
            tools: &[],
            tool_choice: None,
            sampling: &Map::new(),
        };
        let error = request_body(&request).unwrap_err();
        assert!(error.to_string().contains("image"), "{error}");
    }
}
