//! One execution's life: run the script, pass each tool call through the gate, dispatch it,
//! feed the results back, until the script ends or waits on the API caller.

use super::dispatch::{Dispatch, Dispatcher};
use super::waiting::WaitingRun;
use crate::audit::{
    ApprovalDecision, ApprovalRecord, AutoCounts, CallStatus, Ending, Event, ExceptionInfo, Finished, LedgerEntry,
    Recorder, StoreError, Usage, unix_ms,
};
use crate::call::{CallResult, FailureCode, ToolCall, ToolFailure};
use crate::sandbox::{Container, ExecuteRequest, Limits, Outcome, SandboxError, Step};
use crate::tools::approval::{RuleDecision, Verdict};
use crate::tools::http::CallContext;
use crate::tools::search::{SEARCH_CALL, SearchRequest};
use crate::tools::{Admission, Toolset};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `caller.type` of every tool call from code, whatever code version the tool allows.
pub(crate) const CALLER_TYPE: &str = "code_execution_20260120";
/// Tool result text one execution may take in, all calls together; a result past it is
/// replaced by a `result_too_large` error the script can catch.
pub(crate) const MAX_RESULT_BYTES_PER_EXECUTION: u64 = 64 << 20;

/// A call waiting on the API caller.
#[derive(Debug, Clone)]
pub struct ClientCall {
    pub id: String,
    pub seq: u64,
    pub name: String,
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    /// Past this, the script gets `TimeoutError` from the call.
    pub deadline: Instant,
}

/// A call held until a person approves or denies it.
#[derive(Debug, Clone)]
pub struct ApprovalCall {
    /// The approval's id (`apr_...`), which decisions name.
    pub id: String,
    /// The call's id: its `tool_use` id once approved, and its ledger entry's.
    pub call_id: String,
    pub seq: u64,
    pub name: String,
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
    /// Why it waits: the policy rule's reason, or that the tool requires approval.
    pub reason: Option<String>,
    /// The policy rule that asked, if one did.
    pub rule: Option<usize>,
    /// Past this, the call is denied (`approval_timeout`).
    pub deadline: Instant,
}

/// A person's decision on one held call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalAnswer {
    /// The approval's id (`apr_...`).
    pub id: String,
    pub approve: bool,
    pub reason: Option<String>,
}

/// A call the gate admitted, with what carrying it out needs.
type Admitted = (Admission, ToolCall, CallContext);

/// Where an execution stands after a step, inside the engine.
#[derive(Debug)]
pub(super) enum Progress {
    Finished(Box<Outcome>),
    /// Calls in `Run::client_calls` wait for the API caller.
    Waiting,
}

/// Where an execution stands after the engine moved it on, as the type that says what may be
/// done with it next: only a [`WaitingRun`] can be answered.
#[derive(Debug)]
pub enum Moved {
    /// The script ended (or a limit or the host ended it); the run holds its record.
    Finished { run: Run, outcome: Box<Outcome> },
    /// The script waits for client tool results.
    Waiting(WaitingRun),
    /// The engine could not go on; the execution is on record as failed where the record
    /// could be written.
    Failed { run: Run, error: EngineError },
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("recording the audit trail failed: {0}")]
    Audit(#[from] StoreError),
}

pub(super) fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}

pub(super) fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Who an execution runs for and where it stands in its container.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub execution_id: String,
    pub container_id: String,
    pub owner: String,
    /// 1 for the container's first execution.
    pub number: u64,
}

/// The engine's side of one execution: tools, ledger, usage, and calls in flight.
pub struct Run {
    pub(super) id: String,
    pub(super) container_id: String,
    pub(super) owner: String,
    pub(super) number: u64,
    pub(super) code: String,
    pub(super) toolset: Toolset,
    pub(super) limits: Limits,
    pub(super) ledger: Vec<LedgerEntry>,
    /// Calls handed to the API caller and not answered yet.
    pub(super) client_calls: Vec<ClientCall>,
    /// Calls held for a person's approval.
    pub(super) approval_calls: Vec<ApprovalCall>,
    /// New calls per pause of the script (a gather of N pauses once with N).
    pub(super) pauses: Vec<usize>,
    /// A timer of the script falls due then: move it on even without answers.
    pub(super) wake_at: Option<Instant>,
    pub(super) usage: Usage,
    /// Results ready before the client's; they go in together.
    pub(super) held: Vec<CallResult>,
    pub(super) recorder: Arc<dyn Recorder>,
    /// Events not yet handed to the recorder.
    pub(super) events: Vec<Event>,
    /// The trace of the request that started it, for its spans.
    pub(super) trace_parent: Option<super::trace::TraceParent>,
    /// Its pauses on the API caller so far, for its trace.
    pub(super) pauses_on_caller: Vec<super::trace::Pause>,
    /// The pause in progress: since when, and on how many calls and approvals.
    pub(super) paused_since: Option<super::trace::Pause>,
    /// Files to place before the code runs, or before it resumes (taken when it does).
    pub(super) uploads: Vec<super::files::Upload>,
    /// What the finished execution's output files were recorded as.
    pub(super) output_files: Vec<crate::audit::FileRecord>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run").field("id", &self.id).field("client_calls", &self.client_calls).finish_non_exhaustive()
    }
}

impl Run {
    pub fn new(context: RunContext, toolset: Toolset, limits: Limits, recorder: Arc<dyn Recorder>) -> Self {
        Self {
            id: context.execution_id,
            container_id: context.container_id,
            owner: context.owner,
            number: context.number,
            code: String::new(),
            toolset,
            limits,
            ledger: Vec::new(),
            client_calls: Vec::new(),
            approval_calls: Vec::new(),
            pauses: Vec::new(),
            wake_at: None,
            usage: Usage::default(),
            held: Vec::new(),
            recorder,
            events: Vec::new(),
            trace_parent: None,
            pauses_on_caller: Vec::new(),
            paused_since: None,
            uploads: Vec::new(),
            output_files: Vec::new(),
        }
    }

    /// The same run, with files to place in the working directory before its code runs.
    pub fn with_uploads(mut self, uploads: Vec<super::files::Upload>) -> Self {
        self.uploads = uploads;
        self
    }

    /// The output files of the finished execution, as recorded (their ids name them in the
    /// Files store once the service has kept their bytes).
    pub fn output_files(&self) -> &[crate::audit::FileRecord] {
        &self.output_files
    }

    /// Forgets the output files whose bytes could not be kept: the result names only files
    /// that can be downloaded (the audit record still lists every file the script wrote).
    pub(crate) fn keep_only_outputs(&mut self, kept: &[String]) {
        self.output_files.retain(|f| kept.contains(&f.file_id));
    }

    /// The same run, its spans part of the trace `parent` names.
    pub fn with_trace_parent(mut self, parent: Option<super::trace::TraceParent>) -> Self {
        self.trace_parent = parent;
        self
    }

    pub fn trace_parent(&self) -> Option<super::trace::TraceParent> {
        self.trace_parent
    }

    /// The pauses on the API caller, in order.
    pub fn pauses_on_caller(&self) -> &[super::trace::Pause] {
        &self.pauses_on_caller
    }

    /// Ends the pause in progress, if any: the caller answered or time ran out.
    pub(super) fn end_pause(&mut self) {
        if let Some(mut pause) = self.paused_since.take() {
            pause.until_ms = now_ms();
            self.pauses_on_caller.push(pause);
        }
    }

    /// Starts `code`; returns when it finished, failed, or waits on the API caller.
    pub async fn start(mut self, container: &mut Container, code: &str, dispatcher: &impl Dispatcher) -> Moved {
        let progress = self.start_now(container, code, dispatcher).await;
        self.into_moved(progress)
    }

    async fn start_now(
        &mut self,
        container: &mut Container,
        code: &str,
        dispatcher: &impl Dispatcher,
    ) -> Result<Progress, EngineError> {
        let guest_tools = self.toolset.guest_tools(dispatcher.approvals(), &self.owner);
        let now_ns = now_ns();
        let tools: Vec<_> = self.toolset.tools().map(|t| &t.definition).collect();
        let uploads = std::mem::take(&mut self.uploads);
        self.events.push(Event::ExecutionStarted {
            execution_id: self.id.clone(),
            owner: self.owner.clone(),
            number: self.number,
            code: code.to_owned(),
            code_sha256: crate::call::hex(&Sha256::digest(code.as_bytes())),
            tools: serde_json::to_value(tools).expect("tool definitions serialize"),
            limits: serde_json::to_value(self.limits).expect("limits serialize"),
            now_ns,
            started_at: now_ms(),
            files: uploads.iter().map(|u| u.record.clone()).collect(),
        });
        // On record before the code runs: a crash during it leaves an execution to mark
        // interrupted, not one that never was.
        self.flush().await?;
        self.code = code.to_owned();
        let placed: Vec<_> = uploads.iter().map(super::files::Upload::placed).collect();
        drop(uploads);
        let request =
            ExecuteRequest { code, tools: &guest_tools, files: &placed, limits: self.limits, now_ns: Some(now_ns) };
        let step = container.execute(request).await;
        let progress = match step {
            Ok(step) => self.advance(container, step, dispatcher).await,
            Err(e) => Err(e.into()),
        };
        self.conclude(container, progress).await
    }

    /// Where the run stands, as the type that says what may be done with it next.
    pub(super) fn into_moved(mut self, progress: Result<Progress, EngineError>) -> Moved {
        match progress {
            Ok(Progress::Finished(outcome)) => Moved::Finished { run: self, outcome },
            Ok(Progress::Waiting) => {
                let now = now_ms();
                self.paused_since = Some(super::trace::Pause {
                    from_ms: now,
                    until_ms: now,
                    calls: self.client_calls.len(),
                    approvals: self.approval_calls.len(),
                });
                Moved::Waiting(WaitingRun(self))
            }
            Err(error) => Moved::Failed { run: self, error },
        }
    }

    /// Records what the engine could not finish as such: an execution that failed in the
    /// host gets a finish record too, so that none stays `running` on record, and its
    /// container is rolled back to before it rather than left mid-execution.
    pub(super) async fn conclude(
        &mut self,
        container: &mut Container,
        progress: Result<Progress, EngineError>,
    ) -> Result<Progress, EngineError> {
        if let Err(error) = &progress {
            if container.is_running() && !matches!(error, EngineError::Sandbox(SandboxError::Busy)) {
                let _ = container.abort("the host could not go on with the execution").await;
            }
            if matches!(error, EngineError::Audit(_)) {
                return progress;
            }
            let outcome = Outcome {
                stdout: String::new(),
                stderr: String::new(),
                return_code: crate::sandbox::STOPPED_RETURN_CODE,
                value_repr: None,
                error: None,
                counts: BTreeMap::new(),
                stop: None,
                run_time: Duration::ZERO,
                tool_calls: self.usage.tool_calls,
                files: Vec::new(),
            };
            self.cancel_pending();
            self.finish(&outcome, Ending::InternalError, Some(error.to_string()));
        }
        self.flush().await?;
        progress
    }

    /// Hands recorded events to the recorder; the engine reports nothing it has not recorded.
    pub(super) async fn flush(&mut self) -> Result<(), EngineError> {
        if !self.events.is_empty() {
            let events = std::mem::take(&mut self.events);
            self.recorder.record(&self.container_id, events).await?;
        }
        Ok(())
    }

    /// Resumes the guest with `results`, recording their order and the clock it sees.
    pub(super) async fn resume(
        &mut self,
        container: &mut Container,
        results: Vec<CallResult>,
    ) -> Result<Step, EngineError> {
        let now_ns = now_ns();
        let uploads = std::mem::take(&mut self.uploads);
        self.events.push(Event::Step {
            execution_id: self.id.clone(),
            now_ns,
            answered: results.iter().map(|r| r.seq).collect(),
            files: uploads.iter().map(|u| u.record.clone()).collect(),
        });
        let placed: Vec<_> = uploads.iter().map(super::files::Upload::placed).collect();
        Ok(container.resume(&results, &placed, Some(now_ns)).await?)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Every tool call, in order.
    pub fn ledger(&self) -> &[LedgerEntry] {
        &self.ledger
    }

    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// New calls per pause of the script.
    pub fn pauses(&self) -> &[usize] {
        &self.pauses
    }

    /// Calls handed to the API caller and not answered yet.
    pub fn client_calls(&self) -> &[ClientCall] {
        &self.client_calls
    }

    /// Calls held for a person's approval.
    pub fn approval_calls(&self) -> &[ApprovalCall] {
        &self.approval_calls
    }

    /// Whether the script waits on the API caller: a client call or an approval.
    pub fn is_waiting(&self) -> bool {
        !self.client_calls.is_empty() || !self.approval_calls.is_empty()
    }

    /// The earliest moment the engine must move this execution on by itself.
    pub fn next_deadline(&self) -> Option<Instant> {
        let approvals = self.approval_calls.iter().map(|c| c.deadline);
        self.client_calls.iter().map(|c| c.deadline).chain(approvals).chain(self.wake_at).min()
    }

    /// Cancels every call that waits on the API caller (the execution ends without them).
    pub(super) fn cancel_pending(&mut self) {
        let client = self.client_calls.drain(..).map(|c| c.seq);
        let pending: Vec<u64> = client.chain(self.approval_calls.drain(..).map(|c| c.seq)).collect();
        for seq in pending {
            self.set_status(seq, CallStatus::Cancelled);
        }
    }

    pub(super) async fn advance(
        &mut self,
        container: &mut Container,
        mut step: Step,
        dispatcher: &impl Dispatcher,
    ) -> Result<Progress, EngineError> {
        loop {
            let pending = match step {
                Step::Finished(outcome) => {
                    let kind = match (&outcome.stop, &outcome.error) {
                        (Some(stop), _) => Ending::from_code(stop.code()).unwrap_or(Ending::GuestFault),
                        (None, Some(_)) => Ending::PythonError,
                        (None, None) => Ending::Completed,
                    };
                    self.finish(&outcome, kind, outcome.stop.as_ref().map(|s| s.message(&self.limits)));
                    return Ok(Progress::Finished(Box::new(outcome)));
                }
                Step::Pending(pending) => pending,
            };
            self.pauses.push(pending.calls.len());
            self.cancel(&pending.cancelled);
            self.wake_at = pending.wake_after.map(|after| Instant::now() + after);
            let ready = self.dispatch_all(container.id().to_string(), pending.calls, dispatcher).await?;
            self.held.extend(ready);
            if self.is_waiting() {
                return Ok(Progress::Waiting);
            }
            let results = std::mem::take(&mut self.held);
            step = self.resume(container, results).await?;
        }
    }

    /// Resumes the script with the results held so far once nothing waits on the API caller;
    /// otherwise it keeps waiting.
    pub(super) async fn go_on(
        &mut self,
        container: &mut Container,
        dispatcher: &impl Dispatcher,
    ) -> Result<Progress, EngineError> {
        if self.is_waiting() {
            return Ok(Progress::Waiting);
        }
        let results = std::mem::take(&mut self.held);
        let step = self.resume(container, results).await?;
        self.advance(container, step, dispatcher).await
    }

    /// Gates every new call, dispatches the admitted ones concurrently, and returns the
    /// results that are ready (refusals included); client calls join `client_calls`.
    async fn dispatch_all(
        &mut self,
        container_id: String,
        calls: Vec<ToolCall>,
        dispatcher: &impl Dispatcher,
    ) -> Result<Vec<CallResult>, EngineError> {
        let mut ready = Vec::new();
        let mut admitted = Vec::new();
        for mut call in calls {
            self.usage.tool_calls += 1;
            let context = self.call_context(&container_id, format!("call_{}", uuid::Uuid::new_v4().simple()), call.seq);
            let raw_input = call.input.clone();
            // A script's tool search is answered here, with no gate or executor: it reads the
            // execution's own tools and changes nothing. `None` is that search.
            let searching = call.name == SEARCH_CALL && call.refusal.is_none();
            let admission = match call.refusal.take() {
                _ if searching => None,
                Some(refusal) => Some(Err(refusal)),
                None => Some(self.toolset.admit(&call.name, &mut call.input)),
            };
            let coerced = admission.as_ref().is_some_and(|a| a.as_ref().is_ok_and(|a| a.coerced));
            self.ledger.push(LedgerEntry {
                id: context.call_id.clone(),
                seq: call.seq,
                tool: call.name.clone(),
                caller: CALLER_TYPE.into(),
                input: Arc::new(call.input.clone()),
                raw_input: coerced.then(|| Arc::new(raw_input)),
                coerced,
                status: CallStatus::Requested,
                error_code: None,
                error_message: None,
                error_details: serde_json::Value::Null,
                result: None,
                result_bytes: 0,
                result_sha256: None,
                attempts: 0,
                idempotency_key: context.idempotency_key(),
                requested_at: now_ms(),
                finished_at: None,
                approval: None,
            });
            match admission {
                None => {
                    let result = self.search_tools(&call.input);
                    ready.push(self.settle(call.seq, result, 1));
                }
                Some(Err(refusal)) => ready.push(self.settle(call.seq, Err(refusal), 0)),
                Some(Ok(admission)) => {
                    let verdict = dispatcher.approvals().map(|policy| {
                        let calls = self.toolset.calls_of(&call.name);
                        policy.decide(&admission.tool.definition, &call.input, &self.owner, calls)
                    });
                    match verdict {
                        Some(verdict) if verdict.decision == RuleDecision::Ask => {
                            self.hold_for_approval(&context, &call, verdict)
                        }
                        Some(verdict) if verdict.decision == RuleDecision::Deny => {
                            let failure = self.decide(call.seq, Decided::Policy(&verdict), false);
                            ready.push(self.settle(call.seq, Err(failure), 0));
                        }
                        verdict => {
                            if let Some(verdict) = verdict.filter(|v| v.rule.is_some()) {
                                self.decide(call.seq, Decided::Policy(&verdict), true);
                            }
                            self.set_status(call.seq, CallStatus::Dispatched);
                            admitted.push((admission, call, context));
                        }
                    }
                }
            }
        }
        ready.extend(self.carry_out(admitted, dispatcher).await?);
        Ok(ready)
    }

    fn call_context(&self, container_id: &str, call_id: String, seq: u64) -> CallContext {
        CallContext {
            owner: self.owner.clone(),
            container_id: container_id.to_owned(),
            execution_id: self.id.clone(),
            call_id,
            seq,
        }
    }

    /// Holds a call until a person decides on it.
    fn hold_for_approval(&mut self, context: &CallContext, call: &ToolCall, verdict: Verdict) {
        self.set_status(call.seq, CallStatus::AwaitingApproval);
        let input = self.find_entry(call.seq).map(|e| e.input.clone()).unwrap_or_default();
        let suffix = context.call_id.strip_prefix("call_").unwrap_or(&context.call_id);
        self.approval_calls.push(ApprovalCall {
            id: format!("apr_{suffix}"),
            call_id: context.call_id.clone(),
            seq: call.seq,
            name: call.name.clone(),
            input,
            reason: verdict.reason,
            rule: verdict.rule,
            deadline: Instant::now() + Duration::from_millis(self.limits.pending_timeout_ms),
        });
    }

    /// Records a decision on a call in its ledger entry; for a denial, returns the failure the
    /// script gets.
    pub(super) fn decide(&mut self, seq: u64, decided: Decided<'_>, approve: bool) -> ToolFailure {
        let (by, rule, reason, asked) = match decided {
            Decided::Policy(verdict) => ("policy".to_owned(), verdict.rule, verdict.reason.clone(), false),
            Decided::Person { by, reason } => (by.to_owned(), None, reason.map(str::to_owned), true),
            Decided::Timeout => ("timeout".to_owned(), None, None, true),
        };
        let timed_out = matches!(decided, Decided::Timeout);
        let record = ApprovalRecord {
            decision: if approve { ApprovalDecision::Approved } else { ApprovalDecision::Denied },
            by,
            rule,
            reason,
            asked,
            decided_at: now_ms(),
        };
        let details = serde_json::json!({"by": record.by, "rule": record.rule, "reason": record.reason});
        let tool = self.entry_mut(seq).tool.clone();
        let (code, message) = match (timed_out, record.reason.as_deref()) {
            (true, _) => (
                FailureCode::ApprovalTimeout,
                format!(
                    "nobody approved the call to {tool} within pending_timeout_ms={}",
                    self.limits.pending_timeout_ms
                ),
            ),
            (false, Some(reason)) => (FailureCode::Denied, format!("the call to {tool} was denied: {reason}")),
            (false, None) => (FailureCode::Denied, format!("the call to {tool} was denied")),
        };
        self.entry_mut(seq).approval = Some(record);
        let mut failure = ToolFailure::new(code, message);
        failure.details = details;
        failure
    }

    /// Carries out the calls a person approved, then goes on when nothing else waits.
    pub(super) async fn approve_now(
        &mut self,
        container: &mut Container,
        answers: Vec<ApprovalAnswer>,
        by: &str,
        dispatcher: &impl Dispatcher,
    ) -> Result<Progress, EngineError> {
        let container_id = container.id().to_string();
        let mut admitted = Vec::new();
        // The decided calls leave the held ones in one pass, in call order.
        let mut answers: std::collections::HashMap<String, ApprovalAnswer> =
            answers.into_iter().map(|answer| (answer.id.clone(), answer)).collect();
        let (decided, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.approval_calls).into_iter().partition(|c| answers.contains_key(&c.id));
        self.approval_calls = kept;
        for held in decided {
            let Some(answer) = answers.remove(&held.id) else { continue };
            let decided = Decided::Person { by, reason: answer.reason.as_deref() };
            let failure = self.decide(held.seq, decided, answer.approve);
            let tool = self.toolset.get(&held.name).cloned();
            match tool.filter(|_| answer.approve) {
                Some(tool) => {
                    self.set_status(held.seq, CallStatus::Dispatched);
                    let coerced = self.find_entry(held.seq).is_some_and(|e| e.coerced);
                    let call = ToolCall { seq: held.seq, name: held.name, input: (*held.input).clone(), refusal: None };
                    let context = self.call_context(&container_id, held.call_id, held.seq);
                    admitted.push((Admission { tool, coerced }, call, context));
                }
                None => {
                    let result = self.settle(held.seq, Err(failure), 0);
                    self.held.push(result);
                }
            }
        }
        let ready = self.carry_out(admitted, dispatcher).await?;
        self.held.extend(ready);
        self.go_on(container, dispatcher).await
    }

    /// Dispatches admitted calls concurrently; returns the results that are ready, and client
    /// calls join `client_calls`.
    async fn carry_out(
        &mut self,
        admitted: Vec<Admitted>,
        dispatcher: &impl Dispatcher,
    ) -> Result<Vec<CallResult>, EngineError> {
        let mut ready = Vec::new();
        // A call that may change something is on record as dispatched before it can act; the
        // others are recorded with their results, in one write.
        if admitted.iter().any(|(admission, _, _)| admission.tool.may_act()) {
            self.flush().await?;
        }
        // In call order, a bounded number at a time: a gather of thousands of `http` calls
        // neither opens thousands of connections nor buffers thousands of replies.
        let dispatched = {
            let calls: Vec<_> = admitted
                .iter()
                .map(|(admission, call, context)| dispatcher.dispatch(admission, call, context))
                .collect();
            let mut calls = calls.into_iter();
            let mut in_flight = futures_util::stream::FuturesOrdered::new();
            in_flight.extend(calls.by_ref().take(crate::tools::http::MAX_CONCURRENT_CALLS_PER_EXECUTION));
            let mut dispatched = Vec::with_capacity(admitted.len());
            let mut taken = self.usage.tool_result_bytes;
            while let Some(done) = in_flight.next().await {
                // The execution's result budget applies as replies arrive: a reply past it is
                // dropped at once, not held until every call of the frame has answered.
                let done = match done {
                    Dispatch::Ready { result: Ok(text), attempts } => {
                        taken = taken.saturating_add(text.len() as u64);
                        let result =
                            if taken > MAX_RESULT_BYTES_PER_EXECUTION { Err(too_large(&text)) } else { Ok(text) };
                        Dispatch::Ready { result, attempts }
                    }
                    other => other,
                };
                dispatched.push(done);
                in_flight.extend(calls.next());
            }
            dispatched
        };
        let pending_timeout = Duration::from_millis(self.limits.pending_timeout_ms);
        for ((_, call, context), dispatch) in admitted.into_iter().zip(dispatched) {
            match dispatch {
                Dispatch::Ready { result, attempts } => ready.push(self.settle(call.seq, result, attempts)),
                Dispatch::Client => {
                    // The ledger holds the same arguments: share them rather than copy.
                    let input = self.find_entry(call.seq).map(|e| e.input.clone()).unwrap_or_default();
                    self.client_calls.push(ClientCall {
                        id: context.call_id,
                        seq: call.seq,
                        name: call.name,
                        input,
                        deadline: Instant::now() + pending_timeout,
                    })
                }
            }
        }
        Ok(ready)
    }

    /// `sluice.search_tools` from the script: the execution's tools that code may call, found
    /// by words or pattern, as a JSON list of `{name, signature, description}`.
    fn search_tools(&self, input: &serde_json::Map<String, serde_json::Value>) -> Result<String, ToolFailure> {
        let invalid = |e: crate::tools::search::SearchError| ToolFailure::new(FailureCode::InvalidInput, e.to_string());
        let request = SearchRequest::from_arguments(input).map_err(invalid)?;
        let callable: Vec<_> = self.toolset.tools().filter(|t| t.definition.callable_from_code()).cloned().collect();
        let hits = crate::tools::search::search(&callable, &request).map_err(invalid)?;
        let described: Vec<serde_json::Value> = hits.iter().map(|hit| hit.describe()).collect();
        Ok(serde_json::Value::Array(described).to_string())
    }

    /// Moves a call to `status` and records the change.
    pub(super) fn set_status(&mut self, seq: u64, status: CallStatus) {
        let Some(entry) = self.find_entry(seq) else { return };
        entry.status = status;
        if status.is_final() {
            entry.finished_at = Some(now_ms());
        }
        let call = entry.clone();
        self.events.push(Event::ToolCall { execution_id: self.id.clone(), call });
    }

    /// Records a call's answer in the ledger and turns it into the guest's result.
    /// `attempts` is 0 for a call the gate refused (nothing was attempted).
    pub(super) fn settle(&mut self, seq: u64, result: Result<String, ToolFailure>, attempts: u32) -> CallResult {
        let refused = attempts == 0;
        let result = result.and_then(|text| {
            let total = self.usage.tool_result_bytes.saturating_add(text.len() as u64);
            if total > MAX_RESULT_BYTES_PER_EXECUTION { Err(too_large(&text)) } else { Ok(text) }
        });
        let hash_only = self
            .position(seq)
            .and_then(|at| self.toolset.get(&self.ledger[at].tool))
            .is_some_and(|tool| tool.definition.result_storage == crate::tools::ResultStorage::Hash);
        let entry = self.entry_mut(seq);
        entry.attempts = attempts;
        let (status, result) = match result {
            Ok(text) => {
                let len = text.len() as u64;
                let text: Arc<str> = text.into();
                entry.result_bytes = len;
                if hash_only {
                    entry.result_sha256 = Some(crate::call::hex(&Sha256::digest(text.as_bytes())));
                } else {
                    entry.result = Some(text.clone());
                }
                self.usage.tool_result_bytes += len;
                (CallStatus::Succeeded, CallResult::ok(seq, text))
            }
            Err(failure) => {
                entry.error_code = Some(failure.code);
                entry.error_message = Some(failure.message.clone());
                entry.error_details = failure.details.clone();
                let status = match () {
                    () if matches!(failure.code, FailureCode::Denied | FailureCode::ApprovalTimeout) => {
                        CallStatus::Denied
                    }
                    () if refused => CallStatus::Refused,
                    () if failure.code == FailureCode::Timeout => CallStatus::TimedOut,
                    () => CallStatus::Failed,
                };
                (status, CallResult::failed(seq, failure))
            }
        };
        self.set_status(seq, status);
        result
    }

    /// Cancels the calls the script no longer waits for (the container only passes calls
    /// that were outstanding, so this is bounded by what the script made).
    pub(super) fn cancel(&mut self, seqs: &[u64]) {
        if seqs.is_empty() {
            return;
        }
        let cancelled: HashSet<u64> = seqs.iter().copied().collect();
        self.client_calls.retain(|c| !cancelled.contains(&c.seq));
        self.approval_calls.retain(|c| !cancelled.contains(&c.seq));
        self.held.retain(|r| !cancelled.contains(&r.seq));
        for &seq in seqs {
            if self.find_entry(seq).is_some_and(|entry| !entry.status.is_final()) {
                self.set_status(seq, CallStatus::Cancelled);
            }
        }
    }

    /// Where a call is in the ledger; `None` for a seq this execution never made.
    pub(super) fn position(&self, seq: u64) -> Option<usize> {
        // The host numbers calls in the order it records them: the ledger is in seq order.
        let at = self.ledger.partition_point(|e| e.seq < seq);
        self.ledger.get(at).is_some_and(|e| e.seq == seq).then_some(at)
    }

    pub(super) fn find_entry(&mut self, seq: u64) -> Option<&mut LedgerEntry> {
        self.position(seq).map(|at| &mut self.ledger[at])
    }

    pub(super) fn entry_mut(&mut self, seq: u64) -> &mut LedgerEntry {
        self.find_entry(seq).expect("the engine only settles calls it recorded")
    }

    pub(super) fn finish(&mut self, outcome: &Outcome, kind: Ending, error_message: Option<String>) {
        self.client_calls.clear();
        self.approval_calls.clear();
        self.held.clear();
        self.wake_at = None;
        self.usage.time_ms = outcome.run_time.as_millis() as u64;
        self.usage.returned_bytes =
            (outcome.stdout.len() + outcome.stderr.len() + outcome.value_repr.as_ref().map_or(0, String::len)) as u64;
        self.output_files = outcome.files.iter().map(|f| super::files::output_record(&self.id, f)).collect();

        self.events.push(Event::ExecutionFinished(Finished {
            execution_id: self.id.clone(),
            status: kind.status(),
            outcome: kind,
            return_code: i64::from(outcome.return_code),
            stdout: outcome.stdout.clone(),
            stderr: outcome.stderr.clone(),
            value_repr: outcome.value_repr.clone(),
            exception: outcome.error.as_ref().map(|e| ExceptionInfo {
                kind: e.kind.clone(),
                message: e.message.clone(),
                traceback: e.traceback.clone(),
            }),
            error_message,
            counts: outcome.counts.clone(),
            auto_counts: self.auto_counts(),
            usage: self.usage.clone(),
            finished_at: now_ms(),
            files: self.output_files.clone(),
        }));
    }

    /// Calls per tool, items in JSON-array results, calls per pause.
    pub fn auto_counts(&self) -> AutoCounts {
        let mut counts =
            AutoCounts { calls_per_pause: self.pauses.iter().map(|&n| n as u64).collect(), ..AutoCounts::default() };
        for call in &self.ledger {
            if self.toolset.get(&call.tool).is_none() && call.tool != SEARCH_CALL {
                counts.unknown_tool_calls += 1;
                continue;
            }
            *counts.calls_per_tool.entry(call.tool.clone()).or_default() += 1;
            if let Some(approval) = &call.approval {
                let decision = match approval.decision {
                    ApprovalDecision::Approved => "approved",
                    ApprovalDecision::Denied => "denied",
                };
                *counts.approvals.entry(decision.into()).or_default() += 1;
                if approval.asked {
                    *counts.approvals.entry("asked".into()).or_default() += 1;
                }
            }
            if let Some(result) = call.result.as_deref().filter(|r| r.trim_start().starts_with('['))
                && let Ok(items) = serde_json::from_str::<Vec<serde::de::IgnoredAny>>(result)
            {
                *counts.array_items_per_tool.entry(call.tool.clone()).or_default() += items.len() as u64;
            }
        }
        counts
    }
}

/// Who decided a call.
pub(super) enum Decided<'a> {
    Policy(&'a Verdict),
    Person { by: &'a str, reason: Option<&'a str> },
    Timeout,
}

/// The failure that replaces a result past [`MAX_RESULT_BYTES_PER_EXECUTION`].
fn too_large(text: &str) -> ToolFailure {
    ToolFailure::new(
        FailureCode::ResultTooLarge,
        format!(
            "a result of {} bytes would take this execution's tool results past {MAX_RESULT_BYTES_PER_EXECUTION} bytes",
            text.len()
        ),
    )
}
