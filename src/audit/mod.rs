//! The audit trail: what every execution did, as one append-only sealed chain per container.
//!
//! The engine hands [`Event`]s to a [`Recorder`]; the [`Store`] writes them through sqlx to
//! SQLite (the default, a file in the data directory) or PostgreSQL, each record chained to
//! the previous one of its container by an HMAC-SHA256 under a key kept outside the database
//! (see [`crate::keys`]), so `verify` notices an edited, deleted or reordered record even when
//! whoever edited it could write the database and recompute hashes. This module knows nothing
//! of wasm, tools or HTTP: tool definitions and limits travel as plain JSON.

mod store;

pub use store::{ContainerRow, ExecutionFilter, ExecutionRow, Store, StoreError, StoredContainer};

use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Milliseconds since the Unix epoch.
pub fn unix_ms(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `prev_hash` of the first record of a chain.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// First line of an exported bundle.
pub const BUNDLE_FORMAT: &str = "sluice-audit-bundle/1";

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Requested,
    Refused,
    Dispatched,
    Succeeded,
    Failed,
    TimedOut,
    Cancelled,
}

impl CallStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Requested => "requested",
            Self::Refused => "refused",
            Self::Dispatched => "dispatched",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn is_final(self) -> bool {
        !matches!(self, Self::Requested | Self::Dispatched)
    }
}

/// One tool call as the engine saw it; the ledger keeps them in the order they were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub id: String,
    pub seq: u64,
    pub tool: String,
    pub caller: String,
    /// The arguments as the tool receives them (after coercion); shared, not copied, by the
    /// ledger, its events and the views of the execution.
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    /// The arguments as the script gave them, when coercion changed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    pub coerced: bool,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<crate::call::FailureCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub error_details: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Arc<str>>,
    pub result_bytes: u64,
    /// SHA-256 of the result, kept instead of the text when the tool's policy says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_sha256: Option<String>,
    pub attempts: u32,
    pub idempotency_key: String,
    /// Unix milliseconds.
    pub requested_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
}

/// Figures returned with every execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub tool_calls: u64,
    /// Bytes of tool results that went into the sandbox (and stayed there).
    pub tool_result_bytes: u64,
    /// Bytes that came back out: stdout, stderr and the trailing expression.
    pub returned_bytes: u64,
    /// Time the script ran, not counting waits for tool results.
    pub time_ms: u64,
}

/// Counts the engine derives for every execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoCounts {
    /// Calls per tool of the execution's tools (names the script made up are not listed).
    pub calls_per_tool: BTreeMap<String, u64>,
    /// Calls to names that were not tools of the execution.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unknown_tool_calls: u64,
    /// Items in the JSON-array results of each tool, summed.
    pub array_items_per_tool: BTreeMap<String, u64>,
    /// How many times each pause of the script called (a gather of N pauses once with N).
    pub calls_per_pause: Vec<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An uncaught exception of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionInfo {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    pub traceback: String,
}

/// What ended an execution, as the record and the executions index name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The script ran to its end.
    Completed,
    /// The script ran to its end with an exception it did not catch.
    PythonError,
    ExecutionTimeExceeded,
    MemoryLimitExceeded,
    StackLimitExceeded,
    ToolCallLimitExceeded,
    /// The script ended the interpreter (`os._exit`).
    GuestExited,
    /// The guest broke the contract or crashed.
    GuestFault,
    /// The host ended it (shutdown, deletion, a crash before it finished).
    Interrupted,
    /// The host could not carry it out.
    InternalError,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::PythonError => "python_error",
            Self::ExecutionTimeExceeded => "execution_time_exceeded",
            Self::MemoryLimitExceeded => "memory_limit_exceeded",
            Self::StackLimitExceeded => "stack_limit_exceeded",
            Self::ToolCallLimitExceeded => "tool_call_limit_exceeded",
            Self::GuestExited => "guest_exited",
            Self::GuestFault => "guest_fault",
            Self::Interrupted => "interrupted",
            Self::InternalError => "internal_error",
        }
    }

    /// The ending of a stop code ([`crate::sandbox::StopReason::code`]).
    pub fn from_code(code: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(code.to_owned())).ok()
    }

    /// Completed (the script ran to its end, its effects kept) or failed (stopped, rolled
    /// back, or never carried out).
    pub fn status(self) -> FinishStatus {
        match self {
            Self::Completed | Self::PythonError => FinishStatus::Completed,
            _ => FinishStatus::Failed,
        }
    }
}

/// Whether an execution completed or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishStatus {
    Completed,
    Failed,
}

impl FinishStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub execution_id: String,
    pub status: FinishStatus,
    pub outcome: Ending,
    pub return_code: i64,
    pub stdout: String,
    pub stderr: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_repr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<ExceptionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub counts: BTreeMap<String, serde_json::Number>,
    pub auto_counts: AutoCounts,
    pub usage: Usage,
    /// Unix milliseconds.
    pub finished_at: u64,
}

/// What happened, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    ContainerCreated {
        owner: String,
        /// The guest's random seed (decimal: it does not fit every database's integers).
        seed: String,
        image_hash: String,
        /// Set for a fork: the parent, and its last record when the fork was made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        forked_from: Option<ForkPoint>,
    },
    ExecutionStarted {
        execution_id: String,
        owner: String,
        /// 1 for the container's first execution.
        number: u64,
        code: String,
        code_sha256: String,
        /// Tool definitions as given.
        tools: serde_json::Value,
        limits: serde_json::Value,
        /// The clock the guest saw at the start, ns since the Unix epoch.
        now_ns: u64,
        started_at: u64,
    },
    /// Results went into the guest (in this order) with this clock.
    Step {
        execution_id: String,
        now_ns: u64,
        answered: Vec<u64>,
    },
    ToolCall {
        execution_id: String,
        call: LedgerEntry,
    },
    ExecutionFinished(Finished),
    /// The container was deleted or expired: its history stays, it is never rebuilt.
    ContainerClosed {
        /// `deleted` or `expired`.
        reason: String,
    },
}

impl Event {
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ContainerCreated { .. } => "container_created",
            Self::ExecutionStarted { .. } => "execution_started",
            Self::Step { .. } => "step",
            Self::ToolCall { .. } => "tool_call",
            Self::ExecutionFinished(_) => "execution_finished",
            Self::ContainerClosed { .. } => "container_closed",
        }
    }

    pub fn execution_id(&self) -> Option<&str> {
        match self {
            Self::ContainerCreated { .. } | Self::ContainerClosed { .. } => None,
            Self::ExecutionStarted { execution_id, .. }
            | Self::Step { execution_id, .. }
            | Self::ToolCall { execution_id, .. } => Some(execution_id),
            Self::ExecutionFinished(finished) => Some(&finished.execution_id),
        }
    }
}

/// Where a forked container came from: the parent, and its chain's last record (sequence
/// number and seal) when the fork was made, so that the parent's history the fork depends on
/// cannot be changed without the fork's chain showing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPoint {
    pub container_id: String,
    pub seq: i64,
    pub hash: String,
}

/// A stored record of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub container_id: String,
    pub seq: i64,
    pub kind: String,
    pub execution_id: Option<String>,
    pub recorded_at: i64,
    /// The event as JSON text: hashed as stored.
    pub body: String,
    pub prev_hash: String,
    pub hash: String,
}

impl Record {
    pub fn event(&self) -> Result<Event, serde_json::Error> {
        serde_json::from_str(&self.body)
    }
}

/// The seal of a record: HMAC-SHA256 under the chain key over its chain position and content.
pub fn record_hash(
    key: &[u8],
    prev_hash: &str,
    container_id: &str,
    seq: i64,
    kind: &str,
    recorded_at: i64,
    body: &str,
) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    for part in [prev_hash, container_id, &seq.to_string(), kind, &recorded_at.to_string(), body] {
        mac.update(&(part.len() as u64).to_le_bytes());
        mac.update(part.as_bytes());
    }
    crate::call::hex(&mac.finalize().into_bytes())
}

/// Whether one record's seal matches its content (its link to the record before is not
/// checked: for records read apart from their chain).
pub fn record_seal_holds(key: &[u8], record: &Record) -> bool {
    let hash = record_hash(
        key,
        &record.prev_hash,
        &record.container_id,
        record.seq,
        &record.kind,
        record.recorded_at,
        &record.body,
    );
    hash == record.hash
}

/// Where a chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("container {container_id}, record {seq}: {problem}")]
pub struct ChainBreak {
    pub container_id: String,
    pub seq: i64,
    pub problem: String,
}

/// Checks one container's records (in seq order): contiguous from 0, each linked to the
/// one before, each sealed by `key` over its content.
pub fn verify_chain(key: &[u8], container_id: &str, records: &[Record]) -> Result<(), ChainBreak> {
    verify_chain_from(key, container_id, (-1, GENESIS_HASH), records)
}

/// Checks records that continue a chain after `(seq, hash)`, its last record known good.
pub fn verify_chain_from(
    key: &[u8],
    container_id: &str,
    (after_seq, after_hash): (i64, &str),
    records: &[Record],
) -> Result<(), ChainBreak> {
    let mut prev_hash = after_hash.to_owned();
    for (offset, record) in records.iter().enumerate() {
        let expected_seq = after_seq + 1 + offset as i64;
        let broken = |problem: String| ChainBreak { container_id: container_id.to_owned(), seq: record.seq, problem };
        if record.seq != expected_seq {
            return Err(ChainBreak {
                container_id: container_id.to_owned(),
                seq: expected_seq,
                problem: format!("missing (the next record is {}): deleted", record.seq),
            });
        }
        if record.container_id != container_id {
            return Err(broken(format!("belongs to container {}: moved", record.container_id)));
        }
        if record.prev_hash != prev_hash {
            return Err(broken("does not follow the record before it: reordered or a record was replaced".into()));
        }
        if !record_seal_holds(key, record) {
            return Err(broken("content does not match its seal: edited, or sealed with another key".into()));
        }
        prev_hash.clone_from(&record.hash);
    }
    Ok(())
}

/// Takes events for the audit trail; the engine waits for it before it reports a step.
pub trait Recorder: Send + Sync {
    fn record<'a>(
        &'a self,
        container_id: &'a str,
        events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;
}

/// Keeps nothing (offline runs).
#[derive(Debug, Default)]
pub struct Discard;

impl Recorder for Discard {
    fn record<'a>(
        &'a self,
        _container_id: &'a str,
        _events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        Box::pin(async { Ok(()) })
    }
}

/// Keeps events in memory (tests, and the benchmark's baseline).
#[derive(Debug, Default)]
pub struct MemoryRecorder {
    pub events: std::sync::Mutex<Vec<(String, Event)>>,
}

impl Recorder for MemoryRecorder {
    fn record<'a>(
        &'a self,
        container_id: &'a str,
        events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        let mut kept = self.events.lock().unwrap_or_else(|p| p.into_inner());
        kept.extend(events.into_iter().map(|e| (container_id.to_owned(), e)));
        Box::pin(async { Ok(()) })
    }
}

/// One execution put back together from its records.
#[derive(Debug, Clone)]
pub struct ExecutionHistory {
    pub execution_id: String,
    pub owner: String,
    pub number: u64,
    pub code: String,
    pub code_sha256: String,
    pub tools: serde_json::Value,
    pub limits: serde_json::Value,
    pub now_ns: u64,
    pub started_at: u64,
    /// (clock, seqs answered) of each resume, in order.
    pub steps: Vec<(u64, Vec<u64>)>,
    /// The last state of each call, by seq.
    pub ledger: Vec<LedgerEntry>,
    pub finished: Option<Finished>,
}

impl ExecutionHistory {
    /// Names of the tools the execution was given.
    pub fn tool_names(&self) -> std::collections::BTreeSet<String> {
        let tools = self.tools.as_array().map(Vec::as_slice).unwrap_or_default();
        tools.iter().filter_map(|t| t.get("name")?.as_str().map(str::to_owned)).collect()
    }
}

/// A container's history put back together from its chain.
#[derive(Debug, Clone)]
pub struct ContainerHistory {
    pub container_id: String,
    pub owner: String,
    pub seed: u64,
    pub image_hash: String,
    pub forked_from: Option<ForkPoint>,
    pub executions: Vec<ExecutionHistory>,
    /// Why the container was closed (deleted, expired), if it was.
    pub closed: Option<String>,
}

impl ContainerHistory {
    /// Rebuilds the history from a chain's records (which should be verified first).
    pub fn from_records(container_id: &str, records: &[Record]) -> Result<Self, String> {
        let mut history: Option<ContainerHistory> = None;
        for record in records {
            let event = record.event().map_err(|e| format!("record {}: {e}", record.seq))?;
            match event {
                Event::ContainerCreated { owner, seed, image_hash, forked_from } => {
                    let seed = seed.parse().map_err(|_| format!("record {}: bad seed", record.seq))?;
                    history = Some(ContainerHistory {
                        container_id: container_id.to_owned(),
                        owner,
                        seed,
                        image_hash,
                        forked_from,
                        executions: Vec::new(),
                        closed: None,
                    });
                }
                other => {
                    let history = history.as_mut().ok_or("the chain does not start with container_created")?;
                    history.apply(other, record.seq)?;
                }
            }
        }
        history.ok_or_else(|| format!("no records for container {container_id}"))
    }

    /// Applies `records` that continue the chain this history was built from (for example
    /// those written after a snapshot was taken).
    pub fn continue_with(&mut self, records: &[Record]) -> Result<(), String> {
        for record in records {
            let event = record.event().map_err(|e| format!("record {}: {e}", record.seq))?;
            self.apply(event, record.seq)?;
        }
        Ok(())
    }

    fn apply(&mut self, event: Event, seq: i64) -> Result<(), String> {
        let missing = |id: &str| format!("record {seq}: execution {id} was not started");
        match event {
            Event::ExecutionStarted {
                execution_id,
                owner,
                number,
                code,
                code_sha256,
                tools,
                limits,
                now_ns,
                started_at,
            } => {
                self.executions.push(ExecutionHistory {
                    execution_id,
                    owner,
                    number,
                    code,
                    code_sha256,
                    tools,
                    limits,
                    now_ns,
                    started_at,
                    steps: Vec::new(),
                    ledger: Vec::new(),
                    finished: None,
                });
            }
            Event::Step { execution_id, now_ns, answered } => {
                let execution = self.execution_mut(&execution_id).ok_or_else(|| missing(&execution_id))?;
                execution.steps.push((now_ns, answered));
            }
            Event::ToolCall { execution_id, call } => {
                let execution = self.execution_mut(&execution_id).ok_or_else(|| missing(&execution_id))?;
                // Calls are recorded in seq order: a binary search finds an update's entry.
                let at = execution.ledger.partition_point(|c| c.seq < call.seq);
                match execution.ledger.get_mut(at) {
                    Some(existing) if existing.seq == call.seq => *existing = call,
                    _ => execution.ledger.insert(at, call),
                }
            }
            Event::ExecutionFinished(finished) => {
                let id = finished.execution_id.clone();
                let execution = self.execution_mut(&id).ok_or_else(|| missing(&id))?;
                execution.finished = Some(finished);
            }
            Event::ContainerClosed { reason } => self.closed = Some(reason),
            Event::ContainerCreated { .. } => return Err(format!("record {seq}: a second container_created")),
        }
        Ok(())
    }

    fn execution_mut(&mut self, id: &str) -> Option<&mut ExecutionHistory> {
        self.executions.iter_mut().rev().find(|e| e.execution_id == id)
    }

    pub fn execution(&self, id: &str) -> Option<&ExecutionHistory> {
        self.executions.iter().find(|e| e.execution_id == id)
    }
}

/// An exported container history: a header line, then one record per line.
pub fn write_bundle(container_id: &str, records: &[Record], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let header = serde_json::json!({
        "format": BUNDLE_FORMAT,
        "container_id": container_id,
        "records": records.len(),
        "exported_at": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    });
    writeln!(out, "{header}")?;
    for record in records {
        writeln!(out, "{}", serde_json::to_string(record).expect("records serialize"))?;
    }
    Ok(())
}

/// Reads a bundle written by [`write_bundle`].
pub fn read_bundle(text: &str) -> Result<(String, Vec<Record>), String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: serde_json::Value =
        serde_json::from_str(lines.next().ok_or("the bundle is empty")?).map_err(|e| format!("bundle header: {e}"))?;
    if header["format"] != BUNDLE_FORMAT {
        return Err(format!("not a {BUNDLE_FORMAT} bundle"));
    }
    let container_id = header["container_id"].as_str().ok_or("bundle header lacks container_id")?.to_owned();
    let records = lines
        .enumerate()
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| format!("bundle line {}: {e}", i + 2)))
        .collect::<Result<Vec<Record>, _>>()?;
    Ok((container_id, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"a test chain key";

    fn chain(events: &[Event]) -> Vec<Record> {
        let mut prev = GENESIS_HASH.to_owned();
        events
            .iter()
            .enumerate()
            .map(|(seq, event)| {
                let body = serde_json::to_string(event).unwrap();
                let hash = record_hash(KEY, &prev, "c", seq as i64, event.kind(), 7, &body);
                let record = Record {
                    container_id: "c".into(),
                    seq: seq as i64,
                    kind: event.kind().into(),
                    execution_id: event.execution_id().map(str::to_owned),
                    recorded_at: 7,
                    body,
                    prev_hash: prev.clone(),
                    hash: hash.clone(),
                };
                prev = hash;
                record
            })
            .collect()
    }

    fn events() -> Vec<Event> {
        vec![
            Event::ContainerCreated { owner: "o".into(), seed: "42".into(), image_hash: "i".into(), forked_from: None },
            Event::ExecutionStarted {
                execution_id: "e".into(),
                owner: "o".into(),
                number: 1,
                code: "print(1)".into(),
                code_sha256: "x".into(),
                tools: serde_json::json!([]),
                limits: serde_json::json!({}),
                now_ns: 5,
                started_at: 6,
            },
            Event::Step { execution_id: "e".into(), now_ns: 9, answered: vec![0] },
        ]
    }

    #[test]
    fn verify_finds_edits_deletions_and_reordering() {
        let records = chain(&events());
        assert_eq!(verify_chain(KEY, "c", &records), Ok(()));

        let mut edited = records.clone();
        edited[1].body = edited[1].body.replace("print(1)", "print(2)");
        assert!(verify_chain(KEY, "c", &edited).unwrap_err().problem.contains("edited"));

        let mut deleted = records.clone();
        deleted.remove(1);
        assert!(verify_chain(KEY, "c", &deleted).unwrap_err().problem.contains("deleted"));

        let mut reordered = records.clone();
        reordered.swap(1, 2);
        (reordered[1].seq, reordered[2].seq) = (1, 2);
        assert!(verify_chain(KEY, "c", &reordered).is_err());
    }

    /// Item 13 of the security review: the chain was plain SHA-256, so whoever could write the
    /// database could edit a record and recompute every hash after it.
    #[test]
    fn item13_a_chain_rehashed_without_the_key_does_not_verify() {
        let records = chain(&events());
        let mut forged = records.clone();
        forged[1].body = forged[1].body.replace("print(1)", "print(2)");
        let mut prev = GENESIS_HASH.to_owned();
        for record in &mut forged {
            record.prev_hash = prev.clone();
            record.hash = record_hash(b"the forger's guess", &prev, "c", record.seq, &record.kind, 7, &record.body);
            prev = record.hash.clone();
        }
        assert!(verify_chain(KEY, "c", &forged).unwrap_err().problem.contains("seal"));
        assert!(verify_chain_from(KEY, "c", (0, &records[0].hash), &records[1..]).is_ok());
        assert!(record_seal_holds(KEY, &records[2]) && !record_seal_holds(KEY, &forged[2]));
    }

    #[test]
    fn history_and_bundles_round_trip() {
        let records = chain(&events());
        let history = ContainerHistory::from_records("c", &records).unwrap();
        assert_eq!(history.seed, 42);
        assert_eq!(history.executions[0].steps, vec![(9, vec![0])]);
        let mut bundle = Vec::new();
        write_bundle("c", &records, &mut bundle).unwrap();
        let (id, read) = read_bundle(std::str::from_utf8(&bundle).unwrap()).unwrap();
        assert_eq!((id.as_str(), read), ("c", records));
        assert!(read_bundle("{\"format\": \"other\"}").is_err());
    }
}
