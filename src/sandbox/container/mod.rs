//! One container: a live instance, the journal that can rebuild it, and the execution in flight.
//!
//! An execution is a series of steps. Each step hands the guest a frame and ends when the
//! guest returns (finished, or pending on tool calls) or blocks inside the `wait` import (a
//! nested event loop; the step's future is then parked until results arrive). Inputs of every
//! step are journaled; when a limit stops an execution the instance is discarded and the
//! container is rebuilt from the base image by replaying the journal, so it is exactly as it
//! was before that execution.

mod journal;
mod numbering;
mod outcome;
mod save;

pub use outcome::{ExecuteRequest, Outcome, Pending, Step, StopReason};

pub(crate) use outcome::STOPPED_RETURN_CODE;

use super::abi::{GuestExports, StepError};
use super::files::{PlacedFile, decode_outputs};
use super::frames::{
    CallResult, MAX_ARGUMENT_BYTES_PER_EXECUTION, MAX_FAULT_MESSAGE_BYTES, Request, Response, ToolCall, WireResult,
    answer_frame, cut_text,
};
use super::limits::Limits;
use super::state::{BlockedCall, HostState, MemoryGuard, Output, WaitAnswer, Waiter};
use super::{SandboxError, Shared};
use journal::{Checkpoint, JournalStep, StepInput, digest};
use numbering::Outstanding;
use outcome::classify_trap;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;
use wasmtime::Store;

/// A live instance of the image, in a store of its own.
struct Live {
    store: Store<HostState>,
    exports: GuestExports,
}

/// Steps (pauses and resumes) one execution may take: each keeps its input for rollback, so a
/// script that pauses with nothing to wait for, over and over, must not grow the host without
/// bound.
pub(super) const MAX_STEPS_PER_EXECUTION: usize = 100_000;

type StepFuture = Pin<Box<dyn Future<Output = (Live, Result<Vec<u8>, StepError>)> + Send>>;

/// A step that is waiting inside the guest's blocking `wait` import.
struct Parked {
    future: StepFuture,
    blocked: mpsc::Receiver<BlockedCall>,
    answer: oneshot::Sender<WaitAnswer>,
}

struct Running {
    limits: Limits,
    output: Arc<Mutex<Output>>,
    steps: Vec<JournalStep>,
    run_time: Duration,
    tool_calls: u64,
    /// The host's number for the next call (the guest's own numbers are only tokens).
    next_seq: u64,
    /// Calls handed out and not yet answered or cancelled.
    outstanding: Outstanding,
    /// Argument text the execution may still send (see `MAX_ARGUMENT_BYTES_PER_EXECUTION`).
    argument_budget: u64,
    parked: Option<Parked>,
}

impl Running {
    fn remaining(&self) -> Duration {
        self.limits.time().saturating_sub(self.run_time)
    }

    fn take_output(&self) -> (String, String) {
        self.output.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A persistent Python interpreter keyed by a UUID.
pub struct Container {
    id: Uuid,
    seed: u64,
    shared: Arc<Shared>,
    live: Option<Live>,
    /// Where rebuilding starts (the base image when none).
    checkpoint: Option<Arc<Checkpoint>>,
    /// Inputs of the executions committed since the checkpoint.
    journal: Vec<JournalStep>,
    /// Guest run time of the journaled executions: about what replaying them costs.
    journal_run_time: Duration,
    /// What the last compaction took.
    last_compaction: Duration,
    running: Option<Running>,
    executions: u64,
    /// Set when a rollback failed; the container refuses further work.
    broken: Option<String>,
}

impl Drop for Container {
    fn drop(&mut self) {
        self.give_back_instance();
    }
}

enum Event {
    Returned(Live, Result<Vec<u8>, StepError>),
    Blocked(BlockedCall),
}

fn unix_now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

impl Container {
    pub(crate) async fn new(shared: Arc<Shared>, id: Uuid, seed: u64) -> Result<Self, SandboxError> {
        let (store, exports) = shared.instantiate(seed, Limits::default().memory_bytes).await?;
        Ok(Self::fresh(shared, id, seed, store, exports))
    }

    /// A container for the ready pool: it only takes a slot that is free, never one another
    /// ready container holds. Its id and seed come when it is claimed.
    pub(crate) async fn new_spare(shared: Arc<Shared>) -> Result<Self, SandboxError> {
        let (store, exports) = shared.instantiate_in_free_slot(0, Limits::default().memory_bytes).await?;
        Ok(Self::fresh(shared, Uuid::nil(), 0, store, exports))
    }

    pub(super) fn fresh(
        shared: Arc<Shared>,
        id: Uuid,
        seed: u64,
        store: Store<HostState>,
        exports: GuestExports,
    ) -> Self {
        Self {
            id,
            seed,
            shared,
            live: Some(Live { store, exports }),
            checkpoint: None,
            journal: Vec::new(),
            journal_run_time: Duration::ZERO,
            last_compaction: Duration::ZERO,
            running: None,
            executions: 0,
            broken: None,
        }
    }

    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Pages this fresh container's memory has written so far (for the sandbox's list of the
    /// pages a first execution dirties).
    pub(crate) fn written_pages(&self) -> Vec<u32> {
        let Some(live) = &self.live else { return Vec::new() };
        crate::sandbox::guest_memory::written_page_indices(live.exports.memory(), &live.store).unwrap_or_default()
    }

    /// Copies `pages` from the image ahead of the first execution, which would otherwise
    /// pay a page fault for each (about half of a cold start).
    pub(crate) fn prefault(&mut self, pages: &[u32]) {
        if let Some(live) = &mut self.live {
            crate::sandbox::guest_memory::touch_pages(live.exports.memory(), &mut live.store, pages);
        }
    }

    /// The never-run instance of a ready container, given up to a container being rebuilt
    /// (restored, forked or rolled back).
    pub(crate) fn into_fresh_instance(mut self) -> Option<(Store<HostState>, GuestExports)> {
        debug_assert_eq!(self.executions, 0, "only a never-run container is taken apart");
        self.live.take().map(|live| (live.store, live.exports))
    }

    /// Gives a prepared, never-run container its identity: its id and its random seed (no
    /// guest code has read the seed yet).
    pub(crate) fn claim(&mut self, id: Uuid, seed: u64) {
        debug_assert_eq!(self.executions, 0, "only a never-run container is claimed");
        self.id = id;
        self.seed = seed;
        if let Some(live) = &mut self.live {
            live.store.data_mut().random = crate::sandbox::state::SeededRandom::new(seed);
        }
    }

    /// The seed of the guest's randomness (recorded so replay can reproduce it).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Executions that ran to completion in this container (stopped ones are rolled back).
    pub fn executions(&self) -> u64 {
        self.executions
    }

    /// Whether an execution is in flight (waiting for tool results).
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Bytes of linear memory the container's instance has (it never shrinks).
    pub fn memory_bytes(&self) -> usize {
        self.live.as_ref().map_or(0, |live| crate::sandbox::guest_memory::size(live.exports.memory(), &live.store))
    }

    /// Starts an execution; it finishes or pauses on tool calls.
    pub async fn execute(&mut self, request: ExecuteRequest<'_>) -> Result<Step, SandboxError> {
        if self.running.is_some() {
            return Err(SandboxError::Busy);
        }
        if let Some(why) = &self.broken {
            return Err(SandboxError::RestoreFailed(why.clone()));
        }
        let frame = serde_json::to_vec(&Request::Execute {
            code: request.code,
            tools: request.tools,
            files: request.files,
            storage_bytes: request.limits.storage_bytes,
        })
        .expect("a request of strings serializes");
        self.running = Some(Running {
            limits: request.limits,
            output: Arc::new(Mutex::new(Output::new(request.limits.max_output_bytes as usize))),
            steps: Vec::new(),
            run_time: Duration::ZERO,
            tool_calls: 0,
            next_seq: 0,
            outstanding: Outstanding::default(),
            argument_budget: MAX_ARGUMENT_BYTES_PER_EXECUTION,
            parked: None,
        });
        self.run_step(frame, request.now_ns).await
    }

    /// Answers pending calls by the host's numbers (any subset; numbers of calls that are not
    /// outstanding are dropped) and continues.
    /// `files` go into the working directory before the script sees the results.
    pub async fn resume(
        &mut self,
        results: &[CallResult],
        files: &[PlacedFile],
        now_ns: Option<u64>,
    ) -> Result<Step, SandboxError> {
        let running = self.running.as_mut().ok_or(SandboxError::NotWaiting)?;
        let results: Vec<WireResult> = results
            .iter()
            .filter_map(|result| Some(WireResult { guest_seq: running.outstanding.answer(result.seq)?, result }))
            .collect();
        if let Some(parked) = running.parked.take() {
            let now_ns = now_ns.unwrap_or_else(unix_now_ns);
            let answer: Arc<[u8]> = answer_frame(&results, files).into();
            running.steps.push(JournalStep { input: StepInput::Answer(answer.clone()), now_ns, response: None });
            // If the step was dropped meanwhile the send fails, and driving reports it.
            let _ = parked.answer.send((answer, now_ns));
            return self.drive(parked.future, parked.blocked).await;
        }
        self.run_step(answer_frame(&results, files), now_ns).await
    }

    /// Gives the instance back to the pool: this container is no longer used here (saved and
    /// unloaded, deleted, expired). Everything asked of it afterwards fails.
    pub fn retire(&mut self) {
        self.give_back_instance();
        self.running = None;
        self.checkpoint = None;
        self.journal.clear();
        self.broken = Some("the container is no longer held here".into());
    }

    /// Hands a used instance to the ready pool to be reset for another container (see
    /// `ReadyPool::recycle`); an instance that never ran is only dropped, as the pool's own are
    /// when it gives their slots up.
    fn give_back_instance(&mut self) {
        let Some(live) = self.live.take() else { return };
        if self.executions == 0 && self.running.is_none() {
            return;
        }
        if let Some(pool) = self.shared.ready_slots.upgrade() {
            pool.recycle(&self.shared, live.store, live.exports);
        }
    }

    /// Gives up on the execution in flight and rolls the container back to before it.
    pub async fn abort(&mut self, why: &str) -> Result<Outcome, SandboxError> {
        if self.running.is_none() {
            return Err(SandboxError::NotWaiting);
        }
        self.live = None;
        Ok(self.stop_outcome(StopReason::Interrupted(why.to_owned())).await)
    }

    async fn run_step(&mut self, frame: Vec<u8>, now_ns: Option<u64>) -> Result<Step, SandboxError> {
        let mut live = match self.live.take() {
            Some(live) => live,
            None => self.rebuild().await?,
        };
        let running = self.running.as_mut().expect("a step runs inside an execution");
        let now_ns = now_ns.unwrap_or_else(unix_now_ns);
        let (blocked_tx, blocked_rx) = mpsc::channel(1);
        let state = live.store.data_mut();
        if running.steps.is_empty() {
            state.output = running.output.clone();
            state.memory_guard = MemoryGuard::new(running.limits.memory_bytes);
            state.exit_code = None;
        }
        state.clock.set_at_least(now_ns);
        state.deadline = Instant::now() + running.remaining();
        state.timed_out = false;
        state.interruptible = true;
        state.waiter = Waiter::Live(blocked_tx);
        live.store.set_epoch_deadline(1);
        let frame: Arc<[u8]> = frame.into();
        running.steps.push(JournalStep { input: StepInput::Frame(frame.clone()), now_ns, response: None });
        let future: StepFuture = Box::pin(async move {
            let Live { store, exports } = &mut live;
            let result = exports.step(store, &frame).await;
            (live, result)
        });
        self.drive(future, blocked_rx).await
    }

    /// Runs a step until the guest returns or blocks in `wait`.
    async fn drive(
        &mut self,
        mut future: StepFuture,
        mut blocked: mpsc::Receiver<BlockedCall>,
    ) -> Result<Step, SandboxError> {
        let started = Instant::now();
        let event = tokio::select! {
            biased;
            (live, result) = &mut future => Event::Returned(live, result),
            Some(call) = blocked.recv() => Event::Blocked(call),
        };
        let running = self.running.as_mut().expect("driving inside an execution");
        running.run_time += started.elapsed();
        match event {
            Event::Returned(live, result) => self.after_step(live, result).await,
            Event::Blocked(call) => {
                let pending = match Response::parse(&call.frame) {
                    Ok(Response::Pending(pending)) => pending,
                    Ok(_) => {
                        return Ok(self.stop(StopReason::GuestFault("wait() without a pending frame".into())).await);
                    }
                    Err(e) => return Ok(self.stop(StopReason::GuestFault(e.to_string())).await),
                };
                running.parked = Some(Parked { future, blocked, answer: call.answer });
                self.pending(pending, true).await
            }
        }
    }

    async fn after_step(&mut self, live: Live, result: Result<Vec<u8>, StepError>) -> Result<Step, SandboxError> {
        let bytes = match result {
            Ok(bytes) => bytes,
            Err(StepError::Trap(error)) => {
                let reason = classify_trap(live.store.data(), &error);
                return Ok(self.stop(reason).await);
            }
            Err(StepError::Frame(error)) => return Ok(self.stop(StopReason::GuestFault(error.to_string())).await),
        };
        let running = self.running.as_mut().expect("inside an execution");
        if let Some(last) = running.steps.iter_mut().rev().find(|s| matches!(s.input, StepInput::Frame(_))) {
            last.response = Some(digest(&bytes));
        }
        let response = match Response::parse(&bytes) {
            Ok(response) => response,
            Err(e) => return Ok(self.stop(StopReason::GuestFault(e.to_string())).await),
        };
        match response {
            Response::Done(done) => {
                let out_of_memory = live.store.data().memory_guard.denied
                    && done.error.as_ref().is_some_and(|e| e.kind == "MemoryError");
                if out_of_memory {
                    return Ok(self.stop(StopReason::MemoryLimit).await);
                }
                // Bounded by the most any limit allows, not this execution's: the tree may hold
                // more, written under an earlier execution's higher limit.
                let most = super::limits::OPERATOR_CEILING.storage_bytes;
                let mut done = done;
                let files = match decode_outputs(std::mem::take(&mut done.files), most) {
                    Ok(files) => files,
                    Err(e) => return Ok(self.stop(StopReason::GuestFault(e)).await),
                };
                self.live = Some(live);
                let running = self.running.take().expect("inside an execution");
                let done = done.bounded(running.limits.max_output_bytes as usize);
                let (stdout, stderr) = running.take_output();
                self.commit(running.steps, running.run_time).await;
                Ok(Step::Finished(Outcome {
                    stdout,
                    stderr,
                    return_code: i32::try_from(done.return_code).unwrap_or(STOPPED_RETURN_CODE),
                    value_repr: done.value_repr,
                    error: done.error,
                    counts: done.counts,
                    stop: None,
                    run_time: running.run_time,
                    tool_calls: running.tool_calls,
                    files,
                }))
            }
            Response::Pending(pending) => {
                self.live = Some(live);
                self.pending(pending, false).await
            }
            Response::Fault { message } => {
                Ok(self.stop(StopReason::GuestFault(cut_text(message, MAX_FAULT_MESSAGE_BYTES))).await)
            }
        }
    }

    /// Takes the guest's pending frame: numbers its new calls (the host's numbers, never the
    /// guest's) and translates the calls it cancelled.
    async fn pending(&mut self, mut frame: super::frames::PendingFrame, blocking: bool) -> Result<Step, SandboxError> {
        let wake_after = frame.wake_after_ns.map(Duration::from_nanos);
        let cancelled_by_guest = std::mem::take(&mut frame.cancelled);
        let running = self.running.as_mut().expect("inside an execution");
        if running.steps.len() >= MAX_STEPS_PER_EXECUTION {
            let reason = format!("the script paused more than {MAX_STEPS_PER_EXECUTION} times");
            return Ok(self.stop(StopReason::GuestFault(reason)).await);
        }
        if cancelled_by_guest.len() > running.outstanding.len() {
            let reason = format!(
                "the guest cancelled {} calls with {} outstanding",
                cancelled_by_guest.len(),
                running.outstanding.len()
            );
            return Ok(self.stop(StopReason::GuestFault(reason)).await);
        }
        if running.tool_calls.saturating_add(frame.calls.len() as u64) > running.limits.max_tool_calls {
            return Ok(self.stop(StopReason::ToolCallLimit).await);
        }
        let calls = match frame.into_calls(&mut running.argument_budget) {
            Ok(calls) => calls,
            Err(e) => return Ok(self.stop(StopReason::GuestFault(e.to_string())).await),
        };
        let cancelled = cancelled_by_guest.iter().filter_map(|&guest| running.outstanding.cancel(guest)).collect();
        let mut numbered = Vec::with_capacity(calls.len());
        for call in calls {
            if running.outstanding.has_guest(call.guest_seq) {
                let reason = format!("the guest gave two outstanding calls the number {}", call.guest_seq);
                return Ok(self.stop(StopReason::GuestFault(reason)).await);
            }
            let seq = running.next_seq;
            running.next_seq += 1;
            running.outstanding.insert(call.guest_seq, seq);
            numbered.push(ToolCall { seq, name: call.name, input: call.input, refusal: call.refusal });
        }
        running.tool_calls += numbered.len() as u64;
        Ok(Step::Pending(Pending { calls: numbered, cancelled, wake_after, blocking }))
    }

    /// Ends the execution in flight as `reason` and rolls the container back.
    async fn stop(&mut self, reason: StopReason) -> Step {
        Step::Finished(self.stop_outcome(reason).await)
    }

    async fn stop_outcome(&mut self, reason: StopReason) -> Outcome {
        let running = self.running.take().expect("stopping an execution");
        drop(running.parked); // a parked step owns its store: dropping it ends the guest
        self.live = None;
        let (stdout, mut stderr) = {
            let mut output = running.output.lock().unwrap_or_else(|p| p.into_inner());
            output.take()
        };
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&format!(
            "[sluice: execution stopped: {}: {}]\n",
            reason.code(),
            reason.message(&running.limits)
        ));
        if let Err(e) = self.rebuild().await.map(|live| self.live = Some(live)) {
            self.broken = Some(e.to_string());
        }
        Outcome {
            stdout,
            stderr,
            return_code: STOPPED_RETURN_CODE,
            value_repr: None,
            error: None,
            counts: BTreeMap::new(),
            stop: Some(reason),
            run_time: running.run_time,
            tool_calls: running.tool_calls,
            files: Vec::new(),
        }
    }
}
