//! The journal: every input a container's guest consumed since its last checkpoint, replayed
//! into a fresh instance to roll the container back after a stopped execution, to restore it
//! from a snapshot, or to fork it. Compacted into a checkpoint (the memory pages that differ
//! from the image) when replaying it would cost too much.

use super::super::SandboxError;
use super::super::abi::GuestExports;
use super::super::limits::Limits;
use super::super::page_diff::PageDiff;
use super::super::state::{HostState, Waiter};
use super::{Container, Live};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::Store;

/// An input the guest consumed, kept so the container can be rebuilt by replay.
#[derive(Clone)]
pub(super) struct JournalStep {
    pub(super) input: StepInput,
    pub(super) now_ns: u64,
    /// Digest of the response frame, checked when the step is replayed.
    pub(super) response: Option<u64>,
}

#[derive(Clone)]
pub(super) enum StepInput {
    /// A request frame given to `sluice_step`.
    Frame(Arc<[u8]>),
    /// The answer to a blocking `wait` inside the preceding frame's step.
    Answer(Arc<[u8]>),
}

impl StepInput {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Self::Frame(bytes) | Self::Answer(bytes) => bytes,
        }
    }
}

/// A container's state at a committed point: memory pages that differ from the image (as XOR
/// runs against it), and the host state the guest sees. Rollback, restore and fork all start
/// from one, then replay the journal after it.
pub(super) struct Checkpoint {
    pub(super) memory_size: u64,
    pub(super) pages: PageDiff,
    pub(super) clock_now_ns: u64,
    pub(super) random_state: u64,
}

/// Compact the journal into a checkpoint once replaying it would take this many steps.
pub(super) const COMPACT_AFTER_STEPS: usize = 256;
/// ... or this many bytes of inputs.
pub(super) const COMPACT_AFTER_BYTES: usize = 16 << 20;
/// ... or this much guest run time (or four times what the last compaction took, if more): a
/// rollback replays the journal, and what it costs the host must stay bounded whatever the
/// executions before it computed, while compacting (a page diff of the whole memory) must
/// not cost every heavy execution its own few milliseconds.
pub(super) const COMPACT_AFTER_RUN_TIME: Duration = Duration::from_millis(500);
/// How many times its own cost the journal's run time must reach before compacting again.
const COMPACT_COST_RATIO: u32 = 4;

/// FNV-1a: a digest that stays the same across builds, so snapshots can check replays.
pub(super) fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl Container {
    /// Journals a completed execution's inputs, compacting when replaying the journal would
    /// cost too much.
    pub(super) async fn commit(&mut self, steps: Vec<JournalStep>, run_time: Duration) {
        self.journal.extend(steps);
        self.journal_run_time += run_time;
        self.executions += 1;
        let journal_bytes: usize = self.journal.iter().map(|s| s.input.bytes().len()).sum();
        let run_time_due = COMPACT_AFTER_RUN_TIME.max(self.last_compaction * COMPACT_COST_RATIO);
        if self.journal.len() >= COMPACT_AFTER_STEPS
            || journal_bytes >= COMPACT_AFTER_BYTES
            || self.journal_run_time >= run_time_due
        {
            self.compact().await;
        }
    }

    /// A fresh instance of the base image brought to this container's state by replaying the
    /// journal of completed executions; a diverging response means the guest was not
    /// deterministic, and the container is given up rather than silently changed.
    pub(super) async fn rebuild(&mut self) -> Result<Live, SandboxError> {
        let (mut store, exports) = self.shared.instantiate(self.seed, self.shared.maxima().memory_bytes).await?;
        if let Some(checkpoint) = &self.checkpoint {
            crate::sandbox::guest_memory::apply_pages(
                exports.memory(),
                &mut store,
                checkpoint.memory_size,
                &checkpoint.pages,
            )
            .map_err(|e| SandboxError::RestoreFailed(format!("writing the checkpoint: {e}")))?;
            let state = store.data_mut();
            state.clock.now_ns = checkpoint.clock_now_ns;
            state.random = crate::sandbox::state::SeededRandom::new(checkpoint.random_state);
        }
        let maxima = *self.shared.maxima();
        replay_steps(&mut store, &exports, &self.journal, &maxima).await?;
        Ok(Live { store, exports })
    }

    /// Folds the committed journal into a new checkpoint taken from the live memory (only
    /// between executions); rollback and snapshots then start from here.
    pub(super) async fn compact(&mut self) {
        if self.running.is_some() {
            return;
        }
        let Some(live) = &self.live else { return };
        let started = Instant::now();
        let pages = {
            // Without it (no slot to make it in) the journal waits for the next compaction.
            let Ok(pristine) = self.shared.pristine().await else { return };
            let pristine = pristine.lock().await;
            let base = crate::sandbox::guest_memory::contents(pristine.1.memory(), &pristine.0);
            crate::sandbox::guest_memory::changed_pages(live.exports.memory(), &live.store, base)
        };
        let state = live.store.data();
        self.checkpoint = Some(Arc::new(Checkpoint {
            memory_size: crate::sandbox::guest_memory::size(live.exports.memory(), &live.store) as u64,
            pages,
            clock_now_ns: state.clock.now_ns,
            random_state: state.random.state(),
        }));
        self.journal.clear();
        self.journal_run_time = Duration::ZERO;
        self.last_compaction = started.elapsed();
    }
}

/// Feeds journaled inputs to a guest again, checking each response against the one recorded;
/// a different response means the guest was not deterministic, and is an error.
pub(super) async fn replay_steps(
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
