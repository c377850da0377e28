//! A message's blocks as they are decided: kept for the answer, and sent as Anthropic's
//! server-sent events (`message_start`, `content_block_start` / `_delta` / `_stop`,
//! `message_delta`, `message_stop`, `error`) when the client streams.
//!
//! An upstream's text and thinking stream through as they arrive ([`Sink::begin`], `delta`,
//! `end`); a block Sluice makes (an execution's call or result) is sent whole once known, in the
//! events a streamed block of its type has ([`Sink::push`]).

use crate::api::error::ApiError;
use axum::response::sse::Event;
use futures_util::Stream;
use serde_json::{Value, json};
use std::convert::Infallible;
use tokio::sync::mpsc;

type Events = mpsc::UnboundedSender<Result<Event, Infallible>>;

/// Where a turn's blocks go.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    content: Vec<Value>,
    events: Option<Events>,
}

impl Sink {
    /// Blocks kept for one JSON answer.
    pub(crate) fn collecting() -> Self {
        Self::default()
    }

    /// Blocks sent as they come; `message_start` (with `message`, its content empty) first.
    pub(crate) fn streaming(message: &Value) -> (Self, impl Stream<Item = Result<Event, Infallible>> + use<>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let sink = Self { content: Vec::new(), events: Some(sender) };
        sink.send("message_start", json!({"type": "message_start", "message": message}));
        let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|event| (event, receiver))
        });
        (sink, stream)
    }

    fn send(&self, name: &str, data: Value) {
        if let Some(events) = &self.events {
            // A client that went away stops reading; the turn itself runs on and is recorded.
            let _ = events.send(Ok(Event::default().event(name).data(data.to_string())));
        }
    }

    /// Adds a block (and streams it).
    pub(crate) fn push(&mut self, block: Value) {
        if self.events.is_some() {
            let index = self.content.len();
            let (start, deltas) = streamed_parts(&block);
            self.send(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                self.send(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": delta}),
                );
            }
            self.send("content_block_stop", json!({"type": "content_block_stop", "index": index}));
        }
        self.content.push(block);
    }

    /// A streaming client that stopped reading (its connection closed).
    pub(crate) fn client_gone(&self) -> bool {
        self.events.as_ref().is_some_and(mpsc::UnboundedSender::is_closed)
    }

    /// Whether blocks go to a client as they come.
    pub(crate) fn streams(&self) -> bool {
        self.events.is_some()
    }

    /// Opens a block written as it streams in (an upstream's text): its start now, with its
    /// text empty; then [`Self::delta`]s; then [`Self::end`] with the whole block.
    pub(crate) fn begin(&mut self, block: &Value) {
        let (start, _) = streamed_parts(block);
        let index = self.content.len();
        self.send(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
    }

    pub(crate) fn delta(&mut self, delta: Value) {
        let index = self.content.len();
        self.send("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}));
    }

    pub(crate) fn end(&mut self, block: Value) {
        self.send("content_block_stop", json!({"type": "content_block_stop", "index": self.content.len()}));
        self.content.push(block);
    }

    pub(crate) fn into_content(self) -> Vec<Value> {
        self.content
    }

    /// The stream's end: the stop reason, container and usage, then `message_stop`.
    pub(crate) fn finish(self, delta: Value, usage: Value) {
        self.send("message_delta", json!({"type": "message_delta", "delta": delta, "usage": usage}));
        self.send("message_stop", json!({"type": "message_stop"}));
    }

    /// The stream's end when the turn failed part way: Anthropic's `error` event.
    pub(crate) fn fail(self, error: &ApiError) {
        self.send("error", json!({"type": "error", "error": {"type": error.kind(), "message": error.to_string()}}));
    }
}

/// A block's `content_block_start` and the deltas that complete it, as Anthropic streams them.
fn streamed_parts(block: &Value) -> (Value, Vec<Value>) {
    match block["type"].as_str() {
        Some("text") => {
            let mut start = block.clone();
            start["text"] = json!("");
            (start, vec![json!({"type": "text_delta", "text": block["text"]})])
        }
        Some("thinking") => (
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            vec![
                json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                json!({"type": "signature_delta", "signature": block["signature"]}),
            ],
        ),
        Some("tool_use" | "server_tool_use") => {
            let mut start = block.clone();
            start["input"] = json!({});
            (start, vec![json!({"type": "input_json_delta", "partial_json": block["input"].to_string()})])
        }
        _ => (block.clone(), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_stream_as_a_start_deltas_that_rebuild_them_and_a_stop() {
        let call =
            json!({"type": "tool_use", "id": "t", "name": "f", "input": {"a": [1]}, "caller": {"type": "direct"}});
        let (start, deltas) = streamed_parts(&call);
        assert_eq!(start["input"], json!({}));
        assert_eq!(start["caller"], call["caller"]);
        let rebuilt: Value = serde_json::from_str(deltas[0]["partial_json"].as_str().unwrap()).unwrap();
        assert_eq!(rebuilt, call["input"]);
        let (start, deltas) = streamed_parts(&json!({"type": "text", "text": "hi"}));
        assert_eq!((start["text"].clone(), deltas[0]["text"].clone()), (json!(""), json!("hi")));
        let result = json!({"type": "code_execution_tool_result", "tool_use_id": "s", "content": {}});
        assert_eq!(streamed_parts(&result), (result, Vec::new()));
    }
}
