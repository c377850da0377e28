//! The model a Messages request is forwarded to: an Anthropic-compatible Messages API, or an
//! OpenAI-compatible chat completions API (vLLM, llama.cpp's server, Ollama) through `openai`.
//!
//! The conversation is kept in Anthropic's shapes throughout; only the OpenAI dialect
//! translates, at the wire. When the client streams, the upstream is asked to stream too and
//! its text goes on to the client as it arrives ([`UpstreamEvents`] reads its events).

use super::openai;
use super::stream::Sink;
use crate::api::error::ApiError;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// One upstream answer may take this long (a large model on a small machine is slow).
pub(crate) const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(600);
/// Connecting to the upstream.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest upstream answer read; a longer one is an upstream error.
pub(crate) const MAX_UPSTREAM_RESPONSE_BYTES: usize = 16 << 20;
/// Longest upstream error message passed on to the client, in characters.
const MAX_UPSTREAM_ERROR_CHARS: usize = 2_000;
/// The `anthropic-version` sent when the client sent none.
const DEFAULT_ANTHROPIC_VERSION: &str = "2023-06-01";

/// Which wire protocol the upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `POST {url}/v1/messages`, as Anthropic's SDK takes its `base_url`.
    Anthropic,
    /// `POST {url}/chat/completions`, as OpenAI's SDK takes its `base_url` (`.../v1`).
    OpenAi,
}

/// An upstream model service, from `--upstream anthropic:URL | openai:URL`.
#[derive(Debug, Clone)]
pub struct Upstream {
    dialect: Dialect,
    /// Where requests go, query and all.
    url: String,
    /// `url` without its query, for logs and records.
    endpoint: String,
    /// Sent to the upstream instead of anything the client presented.
    api_key: Option<String>,
    client: reqwest::Client,
}

/// What one request to the upstream asks: the conversation in Anthropic's shapes.
#[derive(Debug)]
pub(crate) struct UpstreamRequest<'a> {
    pub model: &'a str,
    pub max_tokens: u64,
    pub system: Option<&'a Value>,
    pub messages: &'a [Value],
    pub tools: &'a [Value],
    pub tool_choice: Option<&'a Value>,
    /// Sampling fields passed on as given (`temperature`, `top_p`, `stop_sequences`, ...).
    pub sampling: &'a Map<String, Value>,
}

/// What the upstream answered, in Anthropic's shapes.
#[derive(Debug, Default)]
pub(crate) struct UpstreamReply {
    pub content: Vec<Value>,
    /// Which blocks of `content` already went to the client as they streamed in (text and
    /// thinking); the others (tool calls) are the turn's to handle.
    pub streamed: Vec<bool>,
    pub stop_reason: String,
    pub stop_sequence: Option<String>,
    pub usage: Tokens,
}

/// The upstream's token counts, summed over a request's upstream calls.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Tokens {
    /// The counts of Anthropic's `usage` object (absent fields are 0).
    fn of_usage(usage: &Value) -> Self {
        let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
        Self {
            input: count("input_tokens"),
            output: count("output_tokens"),
            cache_creation: count("cache_creation_input_tokens"),
            cache_read: count("cache_read_input_tokens"),
        }
    }

    pub(crate) fn add(&mut self, other: Tokens) {
        // Figures the upstream reports: added without trusting them to stay small.
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_creation = self.cache_creation.saturating_add(other.cache_creation);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
    }
}

/// Who the upstream is told the caller is.
#[derive(Debug, Default)]
pub(crate) struct Credentials {
    /// The client's own key, passed on when the service has no key of its own to send.
    pub client_key: Option<String>,
    pub anthropic_version: Option<String>,
}

impl std::str::FromStr for Dialect {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "anthropic" => Ok(Self::Anthropic),
            "openai" => Ok(Self::OpenAi),
            other => Err(format!("unknown upstream kind {other:?}: anthropic or openai")),
        }
    }
}

impl Upstream {
    /// `spec` is `anthropic:URL` or `openai:URL`; `api_key`, when given, is sent upstream in
    /// place of whatever the client presented.
    pub fn new(spec: &str, api_key: Option<String>) -> Result<Self, String> {
        let (kind, base) = spec.split_once(':').ok_or_else(|| format!("--upstream {spec:?}: KIND:URL"))?;
        let dialect: Dialect = kind.parse()?;
        let mut url = url::Url::parse(base).map_err(|e| format!("--upstream {spec:?}: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("--upstream {spec:?}: the URL must be http or https"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("--upstream: credentials go in --upstream-api-key, not in the URL".into());
        }
        let path: &[&str] = match dialect {
            Dialect::Anthropic => &["v1", "messages"],
            Dialect::OpenAi => &["chat", "completions"],
        };
        url.path_segments_mut()
            .map_err(|()| format!("--upstream {spec:?}: not a base URL"))?
            .pop_if_empty()
            .extend(path);
        // What logs and audit records name: without the query, which may hold a secret.
        let mut shown = url.clone();
        shown.set_query(None);
        let client = reqwest::Client::builder()
            // A redirect would carry the key (x-api-key survives one) and the conversation elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(UPSTREAM_TIMEOUT)
            .user_agent(concat!("sluice/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("building the upstream's HTTP client: {e}"))?;
        Ok(Self {
            dialect,
            url: url.to_string(),
            endpoint: shown.to_string(),
            api_key: api_key.filter(|k| !k.is_empty()),
            client,
        })
    }

    /// Where requests go, without the URL's query (which may hold a secret): what logs and
    /// audit records name.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Asks the upstream for the assistant's next turn; with `live`, streamed, its text sent
    /// into `live` as it comes.
    pub(crate) async fn complete(
        &self,
        request: &UpstreamRequest<'_>,
        credentials: &Credentials,
        live: Option<&mut Sink>,
    ) -> Result<UpstreamReply, ApiError> {
        let key = self.api_key.as_deref().or(credentials.client_key.as_deref());
        let mut http = self.client.post(&self.url).header("content-type", "application/json");
        let streams = live.is_some();
        let body = match self.dialect {
            Dialect::Anthropic => {
                http = http.header(
                    "anthropic-version",
                    credentials.anthropic_version.as_deref().unwrap_or(DEFAULT_ANTHROPIC_VERSION),
                );
                if let Some(key) = key {
                    http = http.header("x-api-key", key);
                }
                serde_json::to_string(&AnthropicBody { request, stream: streams })
            }
            Dialect::OpenAi => {
                if let Some(key) = key {
                    http = http.bearer_auth(key);
                }
                let mut body = openai::request_body(request)?;
                if streams {
                    body["stream"] = json!(true);
                    body["stream_options"] = json!({"include_usage": true});
                }
                serde_json::to_string(&body)
            }
        }
        .map_err(|e| ApiError::Internal(format!("encoding the upstream request: {e}")))?;
        let started = std::time::Instant::now();
        let response = http.body(body).send().await.map_err(|e| unreachable_upstream(&e))?;
        let status = response.status();
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if let Some(sink) = live.filter(|_| status.is_success() && is_stream) {
            let mut events = UpstreamEvents::new(response);
            let reply = match self.dialect {
                Dialect::Anthropic => anthropic_stream(&mut events, sink).await,
                Dialect::OpenAi => openai::stream(&mut events, sink).await,
            };
            tracing::info!(endpoint = %self.endpoint, ms = started.elapsed().as_millis() as u64, ok = reply.is_ok(),
                "upstream streamed");
            return reply;
        }
        let text = read_bounded(response).await?;
        tracing::info!(endpoint = %self.endpoint, status = status.as_u16(), ms = started.elapsed().as_millis() as u64,
            "upstream answered");
        let parsed: Value = serde_json::from_str(&text)
            .map_err(|_| upstream_error(StatusCode::BAD_GATEWAY, "api_error", "the upstream's answer is not JSON"))?;
        if !status.is_success() {
            return Err(refused_by_upstream(status, &parsed));
        }
        match self.dialect {
            Dialect::Anthropic => anthropic_reply(parsed),
            Dialect::OpenAi => openai::reply(parsed),
        }
    }
}

/// Anthropic's request body: the conversation as it is, tools and sampling fields beside it,
/// written from the request's own parts (a long conversation is not copied for each call).
struct AnthropicBody<'a> {
    request: &'a UpstreamRequest<'a>,
    stream: bool,
}

impl serde::Serialize for AnthropicBody<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let request = self.request;
        let mut body = serializer.serialize_map(None)?;
        for (field, value) in request.sampling {
            body.serialize_entry(field, value)?;
        }
        body.serialize_entry("model", request.model)?;
        body.serialize_entry("max_tokens", &request.max_tokens)?;
        body.serialize_entry("messages", request.messages)?;
        if let Some(system) = request.system {
            body.serialize_entry("system", system)?;
        }
        if !request.tools.is_empty() {
            body.serialize_entry("tools", request.tools)?;
        }
        if let Some(choice) = request.tool_choice {
            body.serialize_entry("tool_choice", choice)?;
        }
        if self.stream {
            body.serialize_entry("stream", &true)?;
        }
        body.end()
    }
}

fn anthropic_reply(mut parsed: Value) -> Result<UpstreamReply, ApiError> {
    let Some(Value::Array(content)) = parsed.get_mut("content").map(Value::take) else {
        return Err(upstream_error(StatusCode::BAD_GATEWAY, "api_error", "the upstream's answer has no content"));
    };
    Ok(UpstreamReply {
        streamed: Vec::new(),
        content,
        stop_reason: parsed["stop_reason"].as_str().unwrap_or("end_turn").to_owned(),
        stop_sequence: parsed["stop_sequence"].as_str().map(str::to_owned),
        usage: Tokens::of_usage(&parsed["usage"]),
    })
}

/// An upstream's server-sent events, read as they arrive, at most
/// [`MAX_UPSTREAM_RESPONSE_BYTES`] in all.
pub(crate) struct UpstreamEvents {
    response: reqwest::Response,
    buffer: Vec<u8>,
    /// How far `buffer` is known to hold no event's end.
    searched: usize,
    read: usize,
    ended: bool,
}

impl UpstreamEvents {
    fn new(response: reqwest::Response) -> Self {
        Self { response, buffer: Vec::new(), searched: 0, read: 0, ended: false }
    }

    /// The next event's data (its `data:` lines joined), or `None` at the end of the stream.
    pub(crate) async fn next(&mut self) -> Result<Option<String>, ApiError> {
        loop {
            let from = self.searched.saturating_sub(1);
            let end = self.buffer[from..].windows(2).position(|w| w == b"\n\n").map(|at| from + at);
            self.searched = self.buffer.len();
            if end.is_none() && !self.ended {
                match self.response.chunk().await.map_err(|e| unreachable_upstream(&e))? {
                    Some(chunk) => {
                        self.read += chunk.len();
                        if self.read > MAX_UPSTREAM_RESPONSE_BYTES {
                            return Err(upstream_error(
                                StatusCode::BAD_GATEWAY,
                                "api_error",
                                &format!("the upstream's stream is longer than {MAX_UPSTREAM_RESPONSE_BYTES} bytes"),
                            ));
                        }
                        self.buffer.extend(chunk.iter().filter(|&&b| b != b'\r'));
                    }
                    None => self.ended = true,
                }
                continue;
            }
            if self.buffer.is_empty() {
                return Ok(None);
            }
            let take = end.map_or(self.buffer.len(), |end| end + 2);
            let event: Vec<u8> = self.buffer.drain(..take).collect();
            self.searched = 0;
            let event = String::from_utf8_lossy(&event);
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if !data.is_empty() {
                return Ok(Some(data.join("\n")));
            }
        }
    }
}

/// An Anthropic stream rebuilt into the message, its text and thinking sent on as they come.
async fn anthropic_stream(events: &mut UpstreamEvents, sink: &mut Sink) -> Result<UpstreamReply, ApiError> {
    let mut reply = UpstreamReply::default();
    // Per block: the text, thinking or partial JSON input written so far.
    let mut written: Vec<String> = Vec::new();
    let mut stopped = false;
    while let Some(data) = events.next().await? {
        let event: Value = serde_json::from_str(&data)
            .map_err(|_| upstream_error(StatusCode::BAD_GATEWAY, "api_error", "an upstream event is not JSON"))?;
        let count = |usage: &Value, field: &str| usage.get(field).and_then(Value::as_u64);
        match event["type"].as_str() {
            // Its output count is a placeholder; `message_delta` has the real one.
            Some("message_start") => reply.usage = Tokens::of_usage(&event["message"]["usage"]),
            Some("content_block_start") => {
                let block = event["content_block"].clone();
                let live = matches!(block["type"].as_str(), Some("text" | "thinking"));
                if live {
                    sink.begin(&block);
                }
                reply.content.push(block);
                reply.streamed.push(live);
                written.push(String::new());
            }
            Some("content_block_delta") => {
                let (Some(block), Some(text)) = (reply.content.last_mut(), written.last_mut()) else { continue };
                let delta = &event["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => text.push_str(delta["text"].as_str().unwrap_or_default()),
                    Some("thinking_delta") => text.push_str(delta["thinking"].as_str().unwrap_or_default()),
                    Some("input_json_delta") => text.push_str(delta["partial_json"].as_str().unwrap_or_default()),
                    Some("signature_delta") => block["signature"] = delta["signature"].clone(),
                    _ => {}
                }
                if reply.streamed.last() == Some(&true) {
                    sink.delta(delta.clone());
                }
            }
            Some("content_block_stop") => {
                let (Some(block), Some(text)) = (reply.content.last_mut(), written.last_mut()) else { continue };
                let text = std::mem::take(text);
                match block["type"].as_str() {
                    Some("text") => block["text"] = json!(text),
                    Some("thinking") => block["thinking"] = json!(text),
                    _ if !text.is_empty() => {
                        block["input"] = match serde_json::from_str::<Value>(&text) {
                            Ok(input @ Value::Object(_)) => input,
                            _ => json!({"arguments": text}),
                        }
                    }
                    _ => {}
                }
                if reply.streamed.last() == Some(&true) {
                    sink.end(block.clone());
                }
            }
            Some("message_delta") => {
                stopped = true;
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    reply.stop_reason = reason.to_owned();
                }
                reply.stop_sequence = event["delta"]["stop_sequence"].as_str().map(str::to_owned);
                reply.usage.output = count(&event["usage"], "output_tokens").unwrap_or(reply.usage.output);
                reply.usage.input = count(&event["usage"], "input_tokens").unwrap_or(reply.usage.input);
            }
            Some("error") => {
                let status = match event["error"]["type"].as_str() {
                    Some("overloaded_error") => crate::api::error::OVERLOADED,
                    Some("rate_limit_error") => StatusCode::TOO_MANY_REQUESTS,
                    _ => StatusCode::BAD_GATEWAY,
                };
                return Err(refused_by_upstream(status, &event));
            }
            _ => {}
        }
    }
    if !stopped {
        return Err(upstream_error(StatusCode::BAD_GATEWAY, "api_error", "the upstream's stream ended part way"));
    }
    if reply.stop_reason.is_empty() {
        reply.stop_reason = "end_turn".into();
    }
    Ok(reply)
}

/// The body, at most [`MAX_UPSTREAM_RESPONSE_BYTES`] of it.
async fn read_bounded(mut response: reqwest::Response) -> Result<String, ApiError> {
    let too_large = || {
        upstream_error(
            StatusCode::BAD_GATEWAY,
            "api_error",
            &format!("the upstream's answer is longer than {MAX_UPSTREAM_RESPONSE_BYTES} bytes"),
        )
    };
    if response.content_length().is_some_and(|n| n > MAX_UPSTREAM_RESPONSE_BYTES as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| unreachable_upstream(&e))? {
        if body.len() + chunk.len() > MAX_UPSTREAM_RESPONSE_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body)
        .map_err(|_| upstream_error(StatusCode::BAD_GATEWAY, "api_error", "the upstream's answer is not UTF-8"))
}

pub(crate) fn upstream_error(status: StatusCode, kind: &'static str, message: &str) -> ApiError {
    ApiError::Upstream { status, kind, message: format!("upstream: {message}") }
}

pub(crate) fn unreachable_upstream(error: &reqwest::Error) -> ApiError {
    let what = if error.is_timeout() { "did not answer in time" } else { "could not be reached" };
    tracing::warn!(%error, "the upstream {what}");
    upstream_error(StatusCode::BAD_GATEWAY, "api_error", &format!("the upstream model {what}"))
}

/// The upstream's own refusal, with its status where the client can act on it (a bad key, a
/// bad request, a rate limit), else 502.
fn refused_by_upstream(status: StatusCode, body: &Value) -> ApiError {
    let message = body["error"]["message"]
        .as_str()
        .or_else(|| body["error"].as_str())
        .or_else(|| body["message"].as_str())
        .unwrap_or("the upstream refused the request");
    let message: String = message.chars().take(MAX_UPSTREAM_ERROR_CHARS).collect();
    let (status, kind) = match status.as_u16() {
        400 | 404 | 422 => (StatusCode::BAD_REQUEST, "invalid_request_error"),
        401 => (StatusCode::UNAUTHORIZED, "authentication_error"),
        403 => (StatusCode::FORBIDDEN, "permission_error"),
        413 => (StatusCode::PAYLOAD_TOO_LARGE, "request_too_large"),
        429 => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error"),
        529 => (crate::api::error::OVERLOADED, "overloaded_error"),
        _ => (StatusCode::BAD_GATEWAY, "api_error"),
    };
    upstream_error(status, kind, &message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_specs_name_a_dialect_and_an_http_url() {
        let anthropic = Upstream::new("anthropic:http://127.0.0.1:9/", None).unwrap();
        assert_eq!((anthropic.dialect, anthropic.endpoint()), (Dialect::Anthropic, "http://127.0.0.1:9/v1/messages"));
        let openai = Upstream::new("openai:http://localhost:11434/v1", Some(String::new())).unwrap();
        assert_eq!(openai.endpoint(), "http://localhost:11434/v1/chat/completions");
        assert!(openai.api_key.is_none(), "an empty key is no key");
        let azure = Upstream::new("openai:https://x.example/openai/v1?api-version=1&key=secret", None).unwrap();
        assert_eq!(azure.url, "https://x.example/openai/v1/chat/completions?api-version=1&key=secret");
        assert_eq!(azure.endpoint(), "https://x.example/openai/v1/chat/completions", "no query in logs and records");
        for bad in [
            "http://x",
            "gemini:http://x",
            "openai:file:///etc/passwd",
            "anthropic:not a url",
            "anthropic:https://user:pass@x.example",
        ] {
            assert!(Upstream::new(bad, None).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn the_anthropic_body_is_the_conversation_with_its_tools_and_sampling() {
        let messages = [json!({"role": "user", "content": "hi"})];
        let tools = [json!({"name": "code_execution"})];
        let sampling = Map::from_iter([("temperature".to_owned(), json!(0.1))]);
        let request = UpstreamRequest {
            model: "m",
            max_tokens: 9,
            system: None,
            messages: &messages,
            tools: &tools,
            tool_choice: None,
            sampling: &sampling,
        };
        let body = serde_json::to_value(AnthropicBody { request: &request, stream: true }).unwrap();
        assert_eq!(
            body,
            json!({"temperature": 0.1, "model": "m", "max_tokens": 9, "messages": messages, "tools": tools, "stream": true})
        );
        let whole = serde_json::to_value(AnthropicBody { request: &request, stream: false }).unwrap();
        assert!(whole.get("stream").is_none() && whole.get("system").is_none(), "{whole}");
    }

    #[test]
    fn upstream_refusals_keep_the_status_a_client_can_act_on() {
        let body = json!({"error": {"type": "authentication_error", "message": "bad key"}});
        let error = refused_by_upstream(StatusCode::UNAUTHORIZED, &body);
        assert_eq!((error.status().as_u16(), error.kind()), (401, "authentication_error"));
        assert!(error.to_string().contains("bad key"));
        let error = refused_by_upstream(StatusCode::INTERNAL_SERVER_ERROR, &json!({"detail": "boom"}));
        assert_eq!((error.status().as_u16(), error.kind(), error.code()), (502, "api_error", "upstream_error"));
    }
}
