//! The host side of one container's store: clock, randomness, output capture, memory guard.
//!
//! Everything the guest can observe of the outside world comes from here, so that the same
//! code with the same inputs (tool results, step times, seed) gives the same output.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use wasmtime::ResourceLimiter;

/// Each clock read moves the clock on by this much, so loops that poll the time end.
pub(super) const CLOCK_READ_STEP_NS: u64 = 1_000;

/// Store data of a container.
pub(crate) struct HostState {
    pub memory_guard: MemoryGuard,
    pub clock: VirtualClock,
    pub random: SeededRandom,
    /// Shared with the container, so output survives a step that never returns.
    pub output: Arc<Mutex<Output>>,
    /// The running step must end by then (the epoch callback checks it).
    pub deadline: Instant,
    pub timed_out: bool,
    /// Time spent inside the blocking `wait` import during this step, not counted as run time.
    pub waited: Duration,
    pub waiter: Waiter,
    /// The answer of the last blocking `wait`, until the guest copies it with `take`: the
    /// journal's own bytes, shared, where a copy of a large tool result cost a memmove.
    pub answer: Option<Arc<[u8]>>,
    /// Only during pre-initialization: the runtime modules handed to the guest.
    pub bootstrap: Option<Vec<u8>>,
    /// Set when the guest called `proc_exit`.
    pub exit_code: Option<u32>,
    /// Set when the sandbox profiles its guests.
    pub profiler: Option<Arc<super::profile::GuestProfiler>>,
    /// Raised by the host to stop every running script (shutdown); shared by all containers.
    pub halt: Arc<std::sync::atomic::AtomicBool>,
    /// Whether the step running now is a script's (a replay that rebuilds a container is not
    /// stopped by `halt`: the rollback must finish).
    pub interruptible: bool,
    /// Set when `halt` stopped the step.
    pub halted: bool,
    /// The instance's exported memory, found by name once (see `guest_memory::exported`).
    pub memory: Option<wasmtime::Memory>,
}

impl HostState {
    pub(crate) fn new(seed: u64, memory_bytes: u64, now_ns: u64) -> Self {
        Self {
            memory_guard: MemoryGuard::new(memory_bytes),
            clock: VirtualClock { now_ns },
            random: SeededRandom::new(seed),
            output: Arc::new(Mutex::new(Output::discarded())),
            deadline: Instant::now(),
            timed_out: false,
            waited: Duration::ZERO,
            waiter: Waiter::Closed,
            answer: None,
            bootstrap: None,
            exit_code: None,
            profiler: None,
            halt: Arc::default(),
            interruptible: false,
            halted: false,
            memory: None,
        }
    }
}

/// How the blocking `wait` import gets its answer.
pub(crate) enum Waiter {
    /// Not expected (pre-initialization, or no execution running).
    Closed,
    /// A live execution: the container receives the pending frame and answers it.
    Live(mpsc::Sender<BlockedCall>),
    /// Rebuilding a container: answers come from its journal, in order.
    Replay(VecDeque<WaitAnswer>),
}

/// An answer to a blocking `wait`: the results frame and the host time that comes with it.
pub(super) type WaitAnswer = (Arc<[u8]>, u64);

/// The guest blocked inside `wait` with these pending calls.
pub(crate) struct BlockedCall {
    pub frame: Vec<u8>,
    pub answer: oneshot::Sender<WaitAnswer>,
}

/// The two output streams of an execution.
pub(crate) struct Output {
    pub stdout: OutputCapture,
    pub stderr: OutputCapture,
}

impl Output {
    pub(crate) fn new(limit: usize) -> Self {
        Self { stdout: OutputCapture::new(limit), stderr: OutputCapture::new(limit) }
    }

    /// Keeps nothing: replays and idle containers.
    pub(crate) fn discarded() -> Self {
        Self::new(0)
    }

    pub(crate) fn push(&mut self, fd: u32, bytes: &[u8]) {
        match fd {
            1 => self.stdout.push(bytes),
            _ => self.stderr.push(bytes),
        }
    }

    /// (stdout, stderr) as text with truncation markers; the captures are left empty.
    pub(crate) fn take(&mut self) -> (String, String) {
        let limit = self.stdout.limit;
        let stdout = std::mem::replace(&mut self.stdout, OutputCapture::new(limit)).finish("stdout");
        let stderr = std::mem::replace(&mut self.stderr, OutputCapture::new(limit)).finish("stderr");
        (stdout, stderr)
    }
}

/// Caps linear memory and remembers whether a grow was refused (to name the limit later).
pub(crate) struct MemoryGuard {
    pub max_bytes: u64,
    pub denied: bool,
}

impl MemoryGuard {
    pub(crate) fn new(max_bytes: u64) -> Self {
        Self { max_bytes, denied: false }
    }
}

impl ResourceLimiter for MemoryGuard {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let allowed = desired as u64 <= self.max_bytes;
        self.denied |= !allowed;
        Ok(allowed)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= super::MAX_TABLE_ELEMENTS)
    }
}

/// The only clock the guest sees: set by the host at each step, moved by reads and sleeps.
pub(crate) struct VirtualClock {
    pub now_ns: u64,
}

impl VirtualClock {
    pub(crate) fn read(&mut self) -> u64 {
        let now = self.now_ns;
        self.now_ns = self.now_ns.saturating_add(CLOCK_READ_STEP_NS);
        now
    }

    /// The host's time for a new step; the clock never runs backwards.
    pub(crate) fn set_at_least(&mut self, now_ns: u64) {
        self.now_ns = self.now_ns.max(now_ns);
    }

    #[cfg(test)]
    fn advance(&mut self, ns: u64) {
        self.now_ns = self.now_ns.saturating_add(ns);
    }
}

/// The guest's randomness: a SplitMix64 stream from the container's seed.
///
/// Deterministic on purpose (replay must reproduce it); not for secrets the host keeps.
pub(crate) struct SeededRandom {
    state: u64,
}

impl SeededRandom {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Where the stream stands (saved in checkpoints).
    pub(crate) fn state(&self) -> u64 {
        self.state
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

/// One output stream of an execution, kept up to a limit; the rest is counted, not kept.
pub(crate) struct OutputCapture {
    bytes: Vec<u8>,
    limit: usize,
    dropped: u64,
}

impl OutputCapture {
    pub(crate) fn new(limit: usize) -> Self {
        Self { bytes: Vec::new(), limit, dropped: 0 }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        let room = self.limit.saturating_sub(self.bytes.len());
        let kept = data.len().min(room);
        self.bytes.extend_from_slice(&data[..kept]);
        self.dropped += (data.len() - kept) as u64;
    }

    /// What was kept so far, as text (snapshots carry it).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The text, cut at a character boundary, with a marker line when something was dropped.
    pub(crate) fn finish(self, stream: &str) -> String {
        let mut dropped = self.dropped;
        let mut bytes = self.bytes;
        if dropped > 0 {
            // Do not end inside a UTF-8 sequence that was cut by the limit.
            if let Err(err) = std::str::from_utf8(&bytes)
                && err.error_len().is_none()
            {
                dropped += (bytes.len() - err.valid_up_to()) as u64;
                bytes.truncate(err.valid_up_to());
            }
        }
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if dropped > 0 {
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[sluice: {stream} truncated, {dropped} more bytes not shown]\n"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_the_limit_and_marks_the_cut() {
        let mut capture = OutputCapture::new(5);
        capture.push(b"abc");
        capture.push(b"defgh");
        assert_eq!(capture.finish("stdout"), "abcde\n[sluice: stdout truncated, 3 more bytes not shown]\n");

        let mut untouched = OutputCapture::new(5);
        untouched.push(b"abc\n");
        assert_eq!(untouched.finish("stdout"), "abc\n");
    }

    #[test]
    fn capture_never_ends_inside_a_character() {
        let mut capture = OutputCapture::new(4);
        capture.push("aé€".as_bytes()); // 1 + 2 + 3 bytes; the cut falls inside '€'
        let text = capture.finish("stderr");
        assert!(text.starts_with("aé\n[sluice: stderr truncated, 3 more bytes"), "{text}");
    }

    #[test]
    fn seeded_random_is_deterministic_per_seed() {
        let (mut a, mut b, mut c) = (SeededRandom::new(7), SeededRandom::new(7), SeededRandom::new(8));
        let (mut x, mut y, mut z) = ([0u8; 13], [0u8; 13], [0u8; 13]);
        a.fill(&mut x);
        b.fill(&mut y);
        c.fill(&mut z);
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn clock_moves_forward_on_reads_and_never_back() {
        let mut clock = VirtualClock { now_ns: 1_000_000 };
        let first = clock.read();
        assert!(clock.read() > first);
        clock.set_at_least(5);
        assert!(clock.read() > first);
        clock.advance(1_000_000_000);
        assert!(clock.read() >= first + 1_000_000_000);
    }
}
