//! How a sandbox is set up: where its image is cached, the maxima requests may ask for, the
//! number of containers, the snapshot key and the ready pool.

use super::limits::Limits;
use super::profile::GuestProfiler;
use std::path::PathBuf;
use std::sync::Arc;

/// Containers that may be alive in memory at once (each holds one slot of the instance pool).
pub(crate) const DEFAULT_MAX_CONTAINERS: u32 = 1024;
/// Containers kept ready by default: enough for bursts of new sessions on a small machine.
pub(crate) const DEFAULT_READY_CONTAINERS: usize = 2;

/// Settings of a sandbox; limits of single executions come with each request.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Where the compiled base image is cached (`~/.cache/sluice` by default).
    pub cache_dir: PathBuf,
    /// The largest limits any request may ask for.
    pub maxima: Limits,
    /// Containers that may be alive in memory at once.
    pub max_containers: u32,
    /// Seals snapshots (HMAC); a snapshot sealed with another key is refused. Keep it stable
    /// to restore snapshots after a restart, and shared between nodes.
    pub snapshot_key: Vec<u8>,
    /// Samples guest stacks at each epoch tick, for benchmarks' CPU profiles.
    pub profiler: Option<Arc<GuestProfiler>>,
    /// Writes `/tmp/perf-<pid>.map` for the guest's compiled code, so that Linux `perf`
    /// attributes samples to guest functions (named by index: `wasm[0]::function[N]`). The
    /// epoch-tick profiler above can only sample where the guest checks the epoch (function
    /// entries, loop heads), which credits small functions called often with time that is
    /// not theirs; `perf` samples where the time is.
    pub perf_map: bool,
    /// Containers kept instantiated and prefaulted for the next requests (each holds a slot
    /// of `max_containers` until taken); 0 turns the pool off.
    pub ready_containers: usize,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            cache_dir: default_cache_dir(),
            maxima: Limits::server_maxima(),
            max_containers: DEFAULT_MAX_CONTAINERS,
            // Good for this process only; the service passes a key it keeps.
            snapshot_key: crate::keys::ServerKey::random().snapshot_key(),
            profiler: None,
            perf_map: false,
            ready_containers: DEFAULT_READY_CONTAINERS,
        }
    }
}

/// `$SLUICE_CACHE_DIR`, else `$XDG_CACHE_HOME/sluice`, else `~/.cache/sluice`; empty when
/// none is set. Never a shared temporary directory: compiled code is loaded from here.
pub(crate) fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SLUICE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("sluice");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cache").join("sluice"),
        None => PathBuf::new(),
    }
}
