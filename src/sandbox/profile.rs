//! A sampling profiler for guest code: the guest's call stack, by function name, at each epoch tick.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use wasmtime::{AsContext, WasmBacktrace};

/// Frames kept per sample, innermost first: enough for the interpreter's nesting under the
/// guest's exports, while runaway recursion does not make each sample unbounded.
pub(super) const MAX_PROFILE_FRAMES: usize = 512;

/// Guest call stacks counted at epoch ticks (about one per millisecond of guest run time) in
/// every container of a sandbox configured with it. Off unless a [`SandboxConfig`] carries
/// one: a sample walks the guest stack, which costs microseconds.
///
/// [`SandboxConfig`]: super::SandboxConfig
#[derive(Debug, Default)]
pub struct GuestProfiler {
    enabled: std::sync::atomic::AtomicBool,
    stacks: Mutex<HashMap<Vec<Arc<str>>, u64>>,
    names: Mutex<HashMap<String, Arc<str>>>,
}

impl GuestProfiler {
    /// A profiler that samples once [`GuestProfiler::start`] is called.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Starts sampling, forgetting earlier samples.
    pub fn start(&self) {
        self.stacks.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.enabled.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Stops sampling and returns the stacks seen (innermost frame first) with their counts.
    pub fn stop(&self) -> Vec<(Vec<Arc<str>>, u64)> {
        self.enabled.store(false, std::sync::atomic::Ordering::Relaxed);
        let stacks = std::mem::take(&mut *self.stacks.lock().unwrap_or_else(|p| p.into_inner()));
        stacks.into_iter().collect()
    }

    /// Records the stack of the guest running in `store` (called from the epoch callback).
    pub(crate) fn sample(&self, store: impl AsContext) {
        if !self.enabled.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let trace = WasmBacktrace::capture(&store);
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let stack: Vec<Arc<str>> = trace
            .frames()
            .iter()
            .take(MAX_PROFILE_FRAMES)
            .map(|frame| {
                let name =
                    frame.func_name().map_or_else(|| format!("<function {}>", frame.func_index()), str::to_owned);
                names.entry(name.clone()).or_insert_with(|| name.into()).clone()
            })
            .collect();
        drop(names);
        *self.stacks.lock().unwrap_or_else(|p| p.into_inner()).entry(stack).or_default() += 1;
    }
}
