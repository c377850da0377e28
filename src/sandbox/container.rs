//! One container: a live instance, the journal that can rebuild it, and the execution in flight.
//!
//! An execution is a series of steps. Each step hands the guest a frame and ends when the
//! guest returns (finished, or pending on tool calls) or blocks inside the `wait` import (a
//! nested event loop; the step's future is then parked until results arrive). Inputs of every
//! step are journaled; when a limit stops an execution the instance is discarded and the
//! container is rebuilt from the base image by replaying the journal, so it is exactly as it
//! was before that execution.

use super::abi::{
    CallResult, GuestExports, GuestTool, MAX_ARGUMENT_BYTES_PER_EXECUTION, MAX_FAULT_MESSAGE_BYTES, PythonError,
    Request, Response, StepError, ToolCall, WireResult, cut_text,
};
use super::limits::Limits;
use super::snapshot::{CheckpointHeader, Header, RunningHeader, SNAPSHOT_FORMAT, StepHeader, decode, encode};
use super::state::{BlockedCall, HostState, MemoryGuard, Output, WaitAnswer, Waiter};
use super::{SandboxError, Shared};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;
use wasmtime::{Store, Trap};

/// Exit status reported for an execution that a limit or a guest failure stopped.
pub const STOPPED_RETURN_CODE: i32 = 1;

/// What to run, with which tools, under which limits.
#[derive(Debug, Clone)]
pub struct ExecuteRequest<'a> {
    pub code: &'a str,
    pub tools: &'a [GuestTool],
    pub limits: Limits,
    /// Host time in ns since the Unix epoch for this step; `None` means now. Replay passes
    /// the recorded time so that the guest sees the same clock.
    pub now_ns: Option<u64>,
}

/// Where an execution stands after a step.
#[derive(Debug)]
pub enum Step {
    /// Every task waits on these tool calls; answer them with [`Container::resume`].
    Pending(Pending),
    Finished(Outcome),
}

#[derive(Debug, Clone)]
pub struct Pending {
    /// New calls, in the order the script made them.
    pub calls: Vec<ToolCall>,
    /// Calls handed out earlier that the script no longer waits for (e.g. `wait_for` timed out).
    pub cancelled: Vec<u64>,
    /// A timer of the script falls due then: resume by that time, with whatever results exist.
    pub wake_after: Option<Duration>,
    /// The guest waits inside a host call (a nested event loop) rather than having returned.
    pub blocking: bool,
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    /// 0; 1 for an uncaught exception (traceback in stderr); the code of `sys.exit`.
    pub return_code: i32,
    /// `repr` of a trailing expression that was not None, REPL style.
    pub value_repr: Option<String>,
    pub error: Option<PythonError>,
    /// Named counts from `sluice.count`.
    pub counts: BTreeMap<String, serde_json::Number>,
    /// Set when a limit or a guest failure stopped the script; the container was rolled back.
    pub stop: Option<StopReason>,
    /// Time the script ran, not counting waits for tool results.
    pub run_time: Duration,
    pub tool_calls: u64,
}

/// Why an execution was stopped before the script finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    TimeLimit,
    MemoryLimit,
    StackLimit,
    ToolCallLimit,
    /// The guest ended its own process (`os._exit`).
    GuestExit(u32),
    /// The guest broke the contract or crashed; the message says how.
    GuestFault(String),
    /// The host gave up on the execution (shutdown, deletion).
    Interrupted(String),
}

impl StopReason {
    /// The stable code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TimeLimit => "execution_time_exceeded",
            Self::MemoryLimit => "memory_limit_exceeded",
            Self::StackLimit => "stack_limit_exceeded",
            Self::ToolCallLimit => "tool_call_limit_exceeded",
            Self::GuestExit(_) => "guest_exited",
            Self::GuestFault(_) => "guest_fault",
            Self::Interrupted(_) => "interrupted",
        }
    }

    pub fn message(&self, limits: &Limits) -> String {
        match self {
            Self::TimeLimit => format!("the script ran longer than time_ms={}", limits.time_ms),
            Self::MemoryLimit => format!("the script needed more memory than memory_bytes={}", limits.memory_bytes),
            Self::StackLimit => "the script recursed deeper than the sandbox stack allows".into(),
            Self::ToolCallLimit => {
                format!("the script made more than max_tool_calls={} tool calls", limits.max_tool_calls)
            }
            Self::GuestExit(code) => format!("the script ended the interpreter with os._exit({code})"),
            Self::GuestFault(why) => format!("the sandbox guest failed: {why}"),
            Self::Interrupted(why) => format!("the execution was interrupted: {why}"),
        }
    }
}

/// An input the guest consumed, kept so the container can be rebuilt by replay.
#[derive(Clone)]
struct JournalStep {
    input: StepInput,
    now_ns: u64,
    /// Digest of the response frame, checked when the step is replayed.
    response: Option<u64>,
}

#[derive(Clone)]
enum StepInput {
    /// A request frame given to `sluice_step`.
    Frame(Arc<[u8]>),
    /// The answer to a blocking `wait` inside the preceding frame's step.
    Answer(Arc<[u8]>),
}

impl StepInput {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Frame(bytes) | Self::Answer(bytes) => bytes,
        }
    }
}

struct Live {
    store: Store<HostState>,
    exports: GuestExports,
}

/// A container's state at a committed point: memory pages that differ from the image, and
/// the host state the guest sees. Rollback, restore and fork all start from one, then replay
/// the journal after it.
pub(crate) struct Checkpoint {
    memory_size: u64,
    pages: Vec<(u32, Vec<u8>)>,
    clock_now_ns: u64,
    random_state: u64,
}

/// Steps (pauses and resumes) one execution may take: each keeps its input for rollback, so a
/// script that pauses with nothing to wait for, over and over, must not grow the host without
/// bound.
pub const MAX_STEPS_PER_EXECUTION: usize = 100_000;
/// Compact the journal into a checkpoint once replaying it would take this many steps.
pub const COMPACT_AFTER_STEPS: usize = 256;
/// ... or this many bytes of inputs.
pub const COMPACT_AFTER_BYTES: usize = 16 << 20;
/// ... or this much guest run time (or four times what the last compaction took, if more): a
/// rollback replays the journal, and what it costs the host must stay bounded whatever the
/// executions before it computed, while compacting (a page diff of the whole memory) must
/// not cost every heavy execution its own few milliseconds.
pub const COMPACT_AFTER_RUN_TIME: Duration = Duration::from_millis(500);
/// How many times its own cost the journal's run time must reach before compacting again.
const COMPACT_COST_RATIO: u32 = 4;

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

/// The calls of an execution the guest waits on, by the host's number and by the guest's.
/// Results go back under the guest's number; nothing the guest numbers reaches the ledger.
#[derive(Default)]
struct Outstanding {
    guest_of: HashMap<u64, u64>,
    host_of: HashMap<u64, u64>,
}

impl Outstanding {
    fn insert(&mut self, guest: u64, host: u64) {
        self.guest_of.insert(host, guest);
        self.host_of.insert(guest, host);
    }

    /// The guest's number of an answered call; the call is no longer outstanding.
    fn answer(&mut self, host: u64) -> Option<u64> {
        let guest = self.guest_of.remove(&host)?;
        self.host_of.remove(&guest);
        Some(guest)
    }

    /// The host's number of a call the guest cancelled; `None` for one it does not have.
    fn cancel(&mut self, guest: u64) -> Option<u64> {
        let host = self.host_of.remove(&guest)?;
        self.guest_of.remove(&host);
        Some(host)
    }

    fn len(&self) -> usize {
        self.guest_of.len()
    }

    /// (guest, host) pairs, in host order (snapshots keep them).
    fn pairs(&self) -> Vec<(u64, u64)> {
        let mut pairs: Vec<(u64, u64)> = self.host_of.iter().map(|(&g, &h)| (g, h)).collect();
        pairs.sort_by_key(|&(_, host)| host);
        pairs
    }
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

enum Event {
    Returned(Live, Result<Vec<u8>, StepError>),
    Blocked(BlockedCall),
}

fn unix_now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// FNV-1a: a digest that stays the same across builds, so snapshots can check replays.
fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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

    fn fresh(shared: Arc<Shared>, id: Uuid, seed: u64, store: Store<HostState>, exports: GuestExports) -> Self {
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
        super::guest_memory::written_page_indices(live.exports.memory(), &live.store).unwrap_or_default()
    }

    /// Copies `pages` from the image ahead of the first execution, which would otherwise
    /// pay a page fault for each (about half of a cold start).
    pub(crate) fn prefault(&mut self, pages: &[u32]) {
        if let Some(live) = &mut self.live {
            super::guest_memory::touch_pages(live.exports.memory(), &mut live.store, pages);
        }
    }

    /// Gives a prepared, never-run container its identity: its id and its random seed (no
    /// guest code has read the seed yet).
    pub(crate) fn claim(&mut self, id: Uuid, seed: u64) {
        debug_assert_eq!(self.executions, 0, "only a never-run container is claimed");
        self.id = id;
        self.seed = seed;
        if let Some(live) = &mut self.live {
            live.store.data_mut().random = super::state::SeededRandom::new(seed);
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
        self.live.as_ref().map_or(0, |live| super::guest_memory::size(live.exports.memory(), &live.store))
    }

    /// Starts an execution; it finishes or pauses on tool calls.
    pub async fn execute(&mut self, request: ExecuteRequest<'_>) -> Result<Step, SandboxError> {
        if self.running.is_some() {
            return Err(SandboxError::Busy);
        }
        if let Some(why) = &self.broken {
            return Err(SandboxError::RestoreFailed(why.clone()));
        }
        let frame = serde_json::to_vec(&Request::Execute { code: request.code, tools: request.tools })
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
    pub async fn resume(&mut self, results: &[CallResult], now_ns: Option<u64>) -> Result<Step, SandboxError> {
        let running = self.running.as_mut().ok_or(SandboxError::NotWaiting)?;
        let results: Vec<WireResult> = results
            .iter()
            .filter_map(|result| Some(WireResult { guest_seq: running.outstanding.answer(result.seq)?, result }))
            .collect();
        if let Some(parked) = running.parked.take() {
            let now_ns = now_ns.unwrap_or_else(unix_now_ns);
            let answer: Arc<[u8]> =
                serde_json::to_vec(&serde_json::json!({ "results": results })).expect("results serialize").into();
            running.steps.push(JournalStep { input: StepInput::Answer(answer.clone()), now_ns, response: None });
            // If the step was dropped meanwhile the send fails, and driving reports it.
            let _ = parked.answer.send((answer, now_ns));
            return self.drive(parked.future, parked.blocked).await;
        }
        let frame = serde_json::to_vec(&Request::Resume { results: &results }).expect("results serialize");
        self.run_step(frame, now_ns).await
    }

    /// Gives the instance back to the pool: this container is no longer used here (saved and
    /// unloaded, deleted, expired). Everything asked of it afterwards fails.
    pub fn retire(&mut self) {
        self.running = None;
        self.live = None;
        self.checkpoint = None;
        self.journal.clear();
        self.broken = Some("the container is no longer held here".into());
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
            let exports = live.exports.clone();
            let result = exports.step(&mut live.store, &frame).await;
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
                self.live = Some(live);
                let running = self.running.take().expect("inside an execution");
                let done = done.bounded(running.limits.max_output_bytes as usize);
                let (stdout, stderr) = running.take_output();
                self.journal.extend(running.steps);
                self.journal_run_time += running.run_time;
                self.executions += 1;
                let journal_bytes: usize = self.journal.iter().map(|s| s.input.bytes().len()).sum();
                let run_time_due = COMPACT_AFTER_RUN_TIME.max(self.last_compaction * COMPACT_COST_RATIO);
                if self.journal.len() >= COMPACT_AFTER_STEPS
                    || journal_bytes >= COMPACT_AFTER_BYTES
                    || self.journal_run_time >= run_time_due
                {
                    self.compact().await;
                }
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
    async fn pending(&mut self, mut frame: super::abi::PendingFrame, blocking: bool) -> Result<Step, SandboxError> {
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
            if running.outstanding.host_of.contains_key(&call.guest_seq) {
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
        }
    }

    /// A fresh instance of the base image brought to this container's state by replaying the
    /// journal of completed executions; a diverging response means the guest was not
    /// deterministic, and the container is given up rather than silently changed.
    async fn rebuild(&mut self) -> Result<Live, SandboxError> {
        let (mut store, exports) = self.shared.instantiate(self.seed, self.shared.maxima().memory_bytes).await?;
        if let Some(checkpoint) = &self.checkpoint {
            super::guest_memory::write_pages(exports.memory(), &mut store, checkpoint.memory_size, &checkpoint.pages)
                .map_err(|e| SandboxError::RestoreFailed(format!("writing the checkpoint: {e}")))?;
            let state = store.data_mut();
            state.clock.now_ns = checkpoint.clock_now_ns;
            state.random = super::state::SeededRandom::new(checkpoint.random_state);
        }
        let maxima = *self.shared.maxima();
        replay_steps(&mut store, &exports, &self.journal, &maxima).await?;
        Ok(Live { store, exports })
    }

    /// Folds the committed journal into a new checkpoint taken from the live memory (only
    /// between executions); rollback and snapshots then start from here.
    async fn compact(&mut self) {
        if self.running.is_some() {
            return;
        }
        let Some(live) = &self.live else { return };
        let started = Instant::now();
        let pages = {
            let pristine = self.shared.pristine.lock().await;
            let base = super::guest_memory::contents(pristine.1.memory(), &pristine.0);
            super::guest_memory::changed_pages(live.exports.memory(), &live.store, base)
        };
        let state = live.store.data();
        self.checkpoint = Some(Arc::new(Checkpoint {
            memory_size: super::guest_memory::size(live.exports.memory(), &live.store) as u64,
            pages,
            clock_now_ns: state.clock.now_ns,
            random_state: state.random.state(),
        }));
        self.journal.clear();
        self.journal_run_time = Duration::ZERO;
        self.last_compaction = started.elapsed();
    }

    /// The container as bytes: a checkpoint, the inputs since, and the execution in flight
    /// if one waits for tool results, sealed together with `host` (what the caller keeps
    /// with the container). Not possible while a script waits inside a nested event loop (a
    /// native frame would be lost).
    pub async fn snapshot(&mut self, host: serde_json::Value) -> Result<Vec<u8>, SandboxError> {
        if self.running.as_ref().is_some_and(|r| r.parked.is_some()) {
            return Err(SandboxError::NotSnapshottable("the script waits inside a nested event loop".into()));
        }
        if let Some(why) = &self.broken {
            return Err(SandboxError::RestoreFailed(why.clone()));
        }
        self.compact().await;
        let mut payload = Vec::new();
        let checkpoint = self.checkpoint.as_ref().map(|c| {
            for (_, page) in &c.pages {
                payload.extend_from_slice(page);
            }
            CheckpointHeader {
                memory_size: c.memory_size,
                clock_now_ns: c.clock_now_ns,
                random_state: c.random_state,
                pages: c.pages.iter().map(|(index, _)| *index).collect(),
            }
        });
        let step_headers = |steps: &[JournalStep], payload: &mut Vec<u8>| -> Vec<StepHeader> {
            steps
                .iter()
                .map(|step| {
                    payload.extend_from_slice(step.input.bytes());
                    StepHeader {
                        frame: matches!(step.input, StepInput::Frame(_)),
                        now_ns: step.now_ns,
                        response: step.response,
                        len: step.input.bytes().len() as u64,
                    }
                })
                .collect()
        };
        let journal = step_headers(&self.journal, &mut payload);
        let running = self.running.as_ref().map(|r| {
            let output = r.output.lock().unwrap_or_else(|p| p.into_inner());
            RunningHeader {
                limits: r.limits,
                run_time_us: r.run_time.as_micros() as u64,
                tool_calls: r.tool_calls,
                next_seq: r.next_seq,
                outstanding: r.outstanding.pairs(),
                argument_budget: r.argument_budget,
                steps: step_headers(&r.steps, &mut payload),
                stdout: output.stdout.text(),
                stderr: output.stderr.text(),
            }
        });
        let header = Header {
            format: SNAPSHOT_FORMAT,
            image_hash: self.shared.image_hash.clone(),
            container_id: self.id.to_string(),
            host,
            seed: self.seed,
            executions: self.executions,
            checkpoint,
            journal,
            running,
        };
        Ok(encode(&header, &payload, &self.shared.config.snapshot_key))
    }

    /// A container rebuilt from a snapshot of container `taken_of`, under `id` (the same, or
    /// a new one for a fork); with the host data sealed in it.
    pub(crate) async fn restore(
        shared: Arc<Shared>,
        id: Uuid,
        taken_of: Uuid,
        bytes: &[u8],
    ) -> Result<(Self, serde_json::Value), SandboxError> {
        let (header, payload) = decode(bytes, &shared.config.snapshot_key, &shared.image_hash)
            .map_err(|e| SandboxError::Snapshot(e.to_string()))?;
        if header.container_id != taken_of.to_string() {
            return Err(SandboxError::Snapshot(format!(
                "the snapshot was taken of container {}, not {taken_of}",
                header.container_id
            )));
        }
        let damaged = |what: &str| SandboxError::Snapshot(format!("the snapshot is damaged: {what}"));
        let mut at = 0usize;
        let mut take = |len: usize| -> Result<Vec<u8>, SandboxError> {
            let bytes = payload.get(at..at + len).ok_or_else(|| damaged("payload too short"))?.to_vec();
            at += len;
            Ok(bytes)
        };
        let checkpoint = match &header.checkpoint {
            None => None,
            Some(c) => {
                let pages = c
                    .pages
                    .iter()
                    .map(|index| Ok((*index, take(super::guest_memory::PAGE_BYTES)?)))
                    .collect::<Result<Vec<_>, SandboxError>>()?;
                Some(Arc::new(Checkpoint {
                    memory_size: c.memory_size,
                    pages,
                    clock_now_ns: c.clock_now_ns,
                    random_state: c.random_state,
                }))
            }
        };
        let mut steps = |headers: &[StepHeader]| -> Result<Vec<JournalStep>, SandboxError> {
            headers
                .iter()
                .map(|h| {
                    let bytes: Arc<[u8]> = take(usize::try_from(h.len).map_err(|_| damaged("step length"))?)?.into();
                    let input = if h.frame { StepInput::Frame(bytes) } else { StepInput::Answer(bytes) };
                    Ok(JournalStep { input, now_ns: h.now_ns, response: h.response })
                })
                .collect()
        };
        let journal = steps(&header.journal)?;
        let running_steps = header.running.as_ref().map(|r| steps(&r.steps)).transpose()?;
        let mut container = Self {
            id,
            seed: header.seed,
            shared,
            live: None,
            checkpoint,
            journal,
            journal_run_time: Duration::ZERO,
            last_compaction: Duration::ZERO,
            running: None,
            executions: header.executions,
            broken: None,
        };
        let mut live = container.rebuild().await?;
        if let (Some(r), Some(steps)) = (header.running, running_steps) {
            let maxima = *container.shared.maxima();
            replay_steps(&mut live.store, &live.exports, &steps, &maxima).await?;
            let mut output = Output::new(r.limits.max_output_bytes as usize);
            output.stdout.push(r.stdout.as_bytes());
            output.stderr.push(r.stderr.as_bytes());
            let output = Arc::new(Mutex::new(output));
            live.store.data_mut().output = output.clone();
            live.store.data_mut().memory_guard = MemoryGuard::new(r.limits.memory_bytes);
            container.running = Some(Running {
                limits: r.limits,
                output,
                steps,
                run_time: Duration::from_micros(r.run_time_us),
                tool_calls: r.tool_calls,
                next_seq: r.next_seq,
                outstanding: {
                    let mut outstanding = Outstanding::default();
                    for (guest, host) in r.outstanding {
                        outstanding.insert(guest, host);
                    }
                    outstanding
                },
                argument_budget: r.argument_budget.min(MAX_ARGUMENT_BYTES_PER_EXECUTION),
                parked: None,
            });
        }
        container.live = Some(live);
        Ok((container, header.host))
    }
}

/// Feeds journaled inputs to a guest again, checking each response against the one recorded;
/// a different response means the guest was not deterministic, and is an error.
async fn replay_steps(
    store: &mut Store<HostState>,
    exports: &GuestExports,
    steps: &[JournalStep],
    maxima: &Limits,
) -> Result<(), SandboxError> {
    let mut steps = steps.iter().peekable();
    let mut index = 0;
    while let Some(step) = steps.next() {
        let StepInput::Frame(frame) = &step.input else {
            return Err(SandboxError::RestoreFailed(format!("journal step {index} is an answer without a request")));
        };
        let mut answers = VecDeque::new();
        while let Some(next) = steps.next_if(|s| matches!(s.input, StepInput::Answer(_))) {
            answers.push_back((Arc::from(next.input.bytes()), next.now_ns));
        }
        let state = store.data_mut();
        state.clock.set_at_least(step.now_ns);
        state.deadline = Instant::now() + maxima.time();
        state.interruptible = false;
        state.waiter = Waiter::Replay(answers);
        store.set_epoch_deadline(1);
        let response = exports
            .step(&mut *store, frame)
            .await
            .map_err(|e| SandboxError::RestoreFailed(format!("replaying step {index}: {e}")))?;
        if step.response.is_some_and(|expected| expected != digest(&response)) {
            return Err(SandboxError::RestoreFailed(format!("replaying step {index} gave a different response")));
        }
        index += 1;
    }
    store.data_mut().waiter = Waiter::Closed;
    Ok(())
}

/// Names the limit behind a trap from what the host saw, never from the error text.
fn classify_trap(state: &HostState, error: &wasmtime::Error) -> StopReason {
    if state.timed_out {
        return StopReason::TimeLimit;
    }
    if state.halted {
        return StopReason::Interrupted("the service is shutting down".into());
    }
    if let Some(code) = state.exit_code {
        return StopReason::GuestExit(code);
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => StopReason::StackLimit,
        _ if state.memory_guard.denied => StopReason::MemoryLimit,
        Some(trap) => StopReason::GuestFault(format!("wasm trap: {trap}")),
        None => StopReason::GuestFault(format!("{error:#}")),
    }
}
