//! OpenTelemetry traces of executions, sent over OTLP/HTTP as JSON (`--otlp-endpoint`): a span
//! per execution, a child per tool call and per pause on the caller, named and attributed after
//! the GenAI semantic conventions, in the caller's trace when the request carried `traceparent`.
//!
//! Spans are built from what the execution recorded (the ledger's times, the pauses), once it
//! has finished, and handed to one background sender through a bounded queue: tracing never
//! holds up or fails an execution; a collector that is down costs dropped traces, counted.

use crate::audit::{ApprovalDecision, LedgerEntry, Usage};
use crate::call::hex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Executions' traces waiting to be sent; past it, new ones are dropped (and counted).
const MAX_QUEUED_TRACES: usize = 1_024;
/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest `traceparent` header read.
const MAX_TRACEPARENT_BYTES: usize = 128;

/// The W3C trace context of the request that started an execution: its spans join that trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
}

impl TraceParent {
    /// Reads a `traceparent` header (`00-<trace id>-<parent id>-<flags>`); anything else,
    /// including the all-zero ids the specification forbids, is no parent.
    pub fn parse(header: &str) -> Option<Self> {
        if header.len() > MAX_TRACEPARENT_BYTES {
            return None;
        }
        let mut parts = header.trim().split('-');
        let (version, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if version.len() != 2 || version == "ff" || flags.len() != 2 || (version == "00" && parts.next().is_some()) {
            return None;
        }
        let trace_id: [u8; 16] = unhex(trace)?.try_into().ok()?;
        let span_id: [u8; 8] = unhex(span)?.try_into().ok()?;
        (trace_id != [0; 16] && span_id != [0; 8]).then_some(Self { trace_id, span_id })
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok()).collect()
}

fn random_id<const N: usize>() -> [u8; N] {
    let mut id = [0u8; N];
    while id == [0u8; N] {
        getrandom::fill(&mut id).expect("the OS random source");
    }
    id
}

/// A time the engine recorded (Unix milliseconds), as OTLP's nanoseconds.
fn nanos(ms: u64) -> String {
    (u128::from(ms) * 1_000_000).to_string()
}

fn attribute(key: &str, value: impl Into<Value>) -> Value {
    let value = match value.into() {
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_u64() || n.is_i64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n}),
        other => json!({"stringValue": other.as_str().map_or_else(|| other.to_string(), str::to_owned)}),
    };
    json!({"key": key, "value": value})
}

/// OTLP's span kinds and status codes, as the JSON encoding writes enums.
const SPAN_KIND_INTERNAL: u8 = 1;
const SPAN_KIND_SERVER: u8 = 2;
const SPAN_KIND_CLIENT: u8 = 3;
const STATUS_OK: u8 = 1;
const STATUS_ERROR: u8 = 2;

/// A pause of the script on the API caller: client tool results or approvals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    /// Unix milliseconds.
    pub from_ms: u64,
    pub until_ms: u64,
    /// Calls it waited on.
    pub calls: usize,
    pub approvals: usize,
}

/// What one finished execution's trace is made of.
pub(crate) struct ExecutionTrace<'a> {
    pub parent: Option<TraceParent>,
    pub execution_id: &'a str,
    pub container_id: &'a str,
    pub started_ms: u64,
    pub finished_ms: u64,
    /// `completed`, `python_error`, a limit's code, ...
    pub outcome: &'a str,
    pub return_code: i32,
    pub ledger: &'a [LedgerEntry],
    pub pauses: &'a [Pause],
    pub usage: &'a Usage,
    /// Tokens that stayed inside and that were returned, and whether they are estimates.
    pub tokens: (u64, u64, bool),
    /// The tool's executor kind, by tool name (`client`, `http`, `mcp`).
    pub executor_of: &'a dyn Fn(&str) -> &'static str,
}

impl ExecutionTrace<'_> {
    /// The OTLP `ExportTraceServiceRequest` (JSON encoding) of this execution.
    pub(crate) fn request(&self) -> Value {
        let trace_id = self.parent.map_or_else(random_id::<16>, |p| p.trace_id);
        let root_id: [u8; 8] = random_id();
        let failed = self.outcome != "completed";
        let mut root = json!({
            "traceId": hex(&trace_id),
            "spanId": hex(&root_id),
            "name": "execute_tool code_execution",
            "kind": SPAN_KIND_SERVER,
            "startTimeUnixNano": nanos(self.started_ms),
            "endTimeUnixNano": nanos(self.finished_ms.max(self.started_ms)),
            "attributes": [
                attribute("gen_ai.operation.name", "execute_tool"),
                attribute("gen_ai.tool.name", "code_execution"),
                attribute("gen_ai.tool.type", "extension"),
                attribute("gen_ai.tool.call.id", self.execution_id),
                attribute("sluice.container.id", self.container_id),
                attribute("sluice.execution.outcome", self.outcome),
                attribute("sluice.execution.return_code", self.return_code),
                attribute("sluice.tool_calls", self.usage.tool_calls),
                attribute("sluice.bytes.kept", self.usage.tool_result_bytes),
                attribute("sluice.bytes.returned", self.usage.returned_bytes),
                attribute("sluice.tokens.kept", self.tokens.0),
                attribute("sluice.tokens.returned", self.tokens.1),
                attribute("sluice.tokens.estimated", self.tokens.2),
            ],
            "status": if failed { json!({"code": STATUS_ERROR, "message": self.outcome}) } else { json!({"code": STATUS_OK}) },
        });
        if let Some(parent) = self.parent {
            root["parentSpanId"] = json!(hex(&parent.span_id));
        }
        if failed {
            root["attributes"].as_array_mut().expect("attributes").push(attribute("error.type", self.outcome));
        }
        let child = |name: String, kind: u8, from: u64, until: u64, attributes: Vec<Value>, error: Option<String>| {
            json!({
                "traceId": hex(&trace_id),
                "spanId": hex(&random_id::<8>()),
                "parentSpanId": hex(&root_id),
                "name": name,
                "kind": kind,
                "startTimeUnixNano": nanos(from),
                "endTimeUnixNano": nanos(until.max(from)),
                "attributes": attributes,
                "status": match error {
                    Some(message) => json!({"code": STATUS_ERROR, "message": message}),
                    None => json!({"code": STATUS_OK}),
                },
            })
        };
        let mut spans = vec![root];
        for call in self.ledger {
            let executor = (self.executor_of)(&call.tool);
            let mut attributes = vec![
                attribute("gen_ai.operation.name", "execute_tool"),
                attribute("gen_ai.tool.name", call.tool.as_str()),
                attribute("gen_ai.tool.type", if executor == "client" { "function" } else { "extension" }),
                attribute("gen_ai.tool.call.id", call.id.as_str()),
                attribute("sluice.call.status", call.status.name()),
                attribute("sluice.call.executor", executor),
                attribute("sluice.call.attempts", call.attempts),
                attribute("sluice.call.result_bytes", call.result_bytes),
            ];
            if let Some(approval) = &call.approval {
                let decision = if approval.decision == ApprovalDecision::Approved { "approved" } else { "denied" };
                attributes.push(attribute("sluice.approval.decision", decision));
                attributes.push(attribute("sluice.approval.by", approval.by.as_str()));
            }
            let error = call.error_code.map(|code| {
                attributes.push(attribute("error.type", code.as_str()));
                call.error_message.clone().unwrap_or_else(|| code.as_str().to_owned())
            });
            let until = call.finished_at.unwrap_or(self.finished_ms);
            let kind = if executor == "client" { SPAN_KIND_INTERNAL } else { SPAN_KIND_CLIENT };
            spans.push(child(format!("execute_tool {}", call.tool), kind, call.requested_at, until, attributes, error));
        }
        for pause in self.pauses {
            let attributes = vec![
                attribute("sluice.pause.calls", pause.calls as u64),
                attribute("sluice.pause.approvals", pause.approvals as u64),
            ];
            spans.push(child(
                "sluice.pause".into(),
                SPAN_KIND_INTERNAL,
                pause.from_ms,
                pause.until_ms,
                attributes,
                None,
            ));
        }
        json!({"resourceSpans": [{
            "resource": {"attributes": [
                attribute("service.name", "sluice"),
                attribute("service.version", env!("CARGO_PKG_VERSION")),
            ]},
            "scopeSpans": [{"scope": {"name": "sluice", "version": env!("CARGO_PKG_VERSION")}, "spans": spans}],
        }]})
    }
}

/// Sends traces to an OTLP/HTTP collector from one background task.
#[derive(Debug)]
pub struct OtlpExporter {
    queue: tokio::sync::mpsc::Sender<Value>,
    dropped: Arc<AtomicU64>,
}

impl OtlpExporter {
    /// An exporter to `endpoint` (the collector's base URL, `http://host:4318`, or its full
    /// `/v1/traces` URL). Must be called inside the runtime: it starts the sending task.
    pub fn start(endpoint: &str) -> Result<Self, String> {
        let url = url::Url::parse(endpoint).map_err(|e| format!("--otlp-endpoint {endpoint:?}: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("--otlp-endpoint {endpoint:?}: must be an http:// or https:// URL"));
        }
        let url = if url.path().ends_with("/v1/traces") {
            url
        } else {
            url.join(&format!("{}/v1/traces", url.path().trim_end_matches('/')))
                .map_err(|e| format!("--otlp-endpoint {endpoint:?}: {e}"))?
        };
        let client = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let (queue, mut receiver) = tokio::sync::mpsc::channel::<Value>(MAX_QUEUED_TRACES);
        let dropped = Arc::new(AtomicU64::new(0));
        let lost = dropped.clone();
        tokio::spawn(async move {
            while let Some(request) = receiver.recv().await {
                let sent = client
                    .post(url.clone())
                    .header("content-type", "application/json")
                    .body(request.to_string())
                    .send()
                    .await
                    .and_then(reqwest::Response::error_for_status);
                if let Err(e) = sent {
                    let total = lost.fetch_add(1, Ordering::Relaxed) + 1;
                    // One line per power of two: a collector that is down does not flood the log.
                    if total.is_power_of_two() {
                        tracing::warn!(error = %e, dropped = total, "could not export a trace over OTLP");
                    }
                }
            }
        });
        Ok(Self { queue, dropped })
    }

    /// Queues one execution's trace; a full queue drops it.
    pub(crate) fn export(&self, request: Value) {
        if self.queue.try_send(request).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Traces not delivered: dropped from a full queue or refused by the collector.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_read_as_the_w3c_format_says() {
        let parent = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(hex(&parent.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&parent.span_id), "00f067aa0ba902b7");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn attributes_take_otlps_value_shapes() {
        assert_eq!(attribute("a", 5u64)["value"], json!({"intValue": "5"}));
        assert_eq!(attribute("a", true)["value"], json!({"boolValue": true}));
        assert_eq!(attribute("a", "x")["value"], json!({"stringValue": "x"}));
        assert_eq!(nanos(1_700_000_000_123), "1700000000123000000");
    }
}
