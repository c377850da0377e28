//! The ready pool: containers prefaulted ahead of demand, so that a new container starts
//! without the page faults of its first execution: used instances reset to the image when
//! their containers end, and new ones topped up in quiet moments.

use super::abi::GuestExports;
use super::container::Container;
use super::guest_memory::{contents, reset_to_image};
use super::state::HostState;
use super::{ExecuteRequest, Limits, Sandbox, Shared};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use uuid::Uuid;
use wasmtime::Store;

/// The shortest wait between two checks of a pool it could not top up (every slot taken).
const READY_POLL: Duration = Duration::from_millis(2);
/// The pool is topped up only after this long without a request for a container: under a
/// stream of new containers, preparing more in the background only slows the foreground.
const READY_QUIET: Duration = Duration::from_millis(20);
/// The first execution whose written pages a ready container prefaults: what most first
/// executions touch (compiling, running, printing, the seeded random state).
const HOT_PAGES_PROBE: &str = "x = [i * 2 for i in range(10)]\nprint(x)";
/// Most pages a used instance may have written and still be reset for the pool rather than
/// dropped (4 MiB). They stay private copies across tenants: every checkpoint compares them
/// and every reset copies them, so past this the next tenant starts from the image again.
/// Varied small sessions level off at about 560 pages.
const MAX_RECYCLED_PAGES: usize = 1024;

/// Containers instantiated and prefaulted ahead of demand: a new container then starts
/// without the page faults of its first execution. Held by the handles, not by [`Shared`]
/// (containers point to it), so that dropping the last handle frees everything.
pub(super) struct ReadyPool {
    containers: std::sync::Mutex<Vec<Container>>,
    /// When the last container was asked for, in microseconds since `epoch`.
    last_demand_us: std::sync::atomic::AtomicU64,
    epoch: Instant,
}

impl Default for ReadyPool {
    fn default() -> Self {
        Self { containers: Default::default(), last_demand_us: 0.into(), epoch: Instant::now() }
    }
}

impl ReadyPool {
    /// A ready container, if one waits; asking counts as demand either way.
    pub(super) fn take(&self) -> Option<Container> {
        self.last_demand_us.store(self.epoch.elapsed().as_micros() as u64, Ordering::Relaxed);
        self.lock().pop()
    }

    /// Whether containers were asked for lately: refilling then would compete with them
    /// for the cores and the address space lock, so it waits for a quiet moment.
    pub(super) fn busy(&self) -> bool {
        !self.quiet_in().is_zero()
    }

    /// How long until the quiet moment after the last demand (zero once it has come).
    fn quiet_in(&self) -> Duration {
        let last = Duration::from_micros(self.last_demand_us.load(Ordering::Relaxed));
        READY_QUIET.saturating_sub(self.epoch.elapsed().saturating_sub(last))
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Container>> {
        self.containers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a used container's instance into the pool when it has room, reset to the image:
    /// the pages it wrote copied back from the pristine instance, its globals set to the
    /// pristine's, a new host state. Its written pages stay private copies, so the next
    /// container starts without their page faults; dropping it instead would have wasmtime
    /// reset part of the slot and unmap the rest (a TLB shootdown), for the next tenant to
    /// fault back in. Anything that cannot be reset exactly is dropped.
    pub(super) fn recycle(&self, shared: &Arc<Shared>, mut store: Store<HostState>, exports: GuestExports) {
        if self.lock().len() >= shared.config.ready_containers {
            return;
        }
        // Held only for a compaction's page comparison: skip rather than wait. (Made when the
        // sandbox started, as it keeps a ready pool.)
        let Some(Ok(mut pristine)) = shared.pristine.get().map(tokio::sync::Mutex::try_lock) else { return };
        let (pristine_store, pristine_exports) = &mut *pristine;
        let base = contents(pristine_exports.memory(), pristine_store);
        if !reset_to_image(exports.memory(), &mut store, base, MAX_RECYCLED_PAGES)
            || !exports.copy_globals_from(&mut store, pristine_exports, pristine_store)
        {
            return;
        }
        drop(pristine);
        *store.data_mut() = shared.host_state(0, Limits::default().memory_bytes);
        let container = Container::fresh(shared.clone(), Uuid::nil(), 0, store, exports);
        let mut ready = self.lock();
        if ready.len() < shared.config.ready_containers {
            ready.push(container);
        }
    }

    /// Frees the slots the ready containers hold; how many there were.
    pub(super) fn drain(&self) -> usize {
        let taken = std::mem::take(&mut *self.lock());
        taken.len() // dropped here, outside the lock: each drop resets a slot
    }
}

impl Sandbox {
    /// Runs a small first execution in a probe container and notes the pages it wrote.
    pub(super) async fn find_hot_pages(&self) {
        let Ok(mut probe) = Container::new(self.shared.clone(), Uuid::nil(), 0).await else { return };
        let request = ExecuteRequest {
            code: HOT_PAGES_PROBE,
            tools: &[],
            files: &[],
            limits: Limits::default(),
            now_ns: Some(0),
        };
        if probe.execute(request).await.is_ok() {
            let _ = self.shared.hot_pages.set(probe.written_pages());
        }
    }

    /// Keeps the ready pool topped up, in quiet moments, from a background task that checks
    /// it: waking a parked worker from the request path would cost that request more (up to
    /// half a millisecond on a small VM) than the pool saves. A full pool is checked every
    /// `READY_QUIET` (a container taken meanwhile could not be replaced sooner), one short of
    /// containers at the quiet moment after its last demand: an idle service wakes for it 50
    /// times a second, not the 500 of a fixed 2 ms poll. The task holds weak references and
    /// ends with the sandbox. Outside a tokio runtime there is no pool.
    pub(super) fn start_refilling(&self) {
        let target = self.shared.config.ready_containers;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (shared, ready) = (Arc::downgrade(&self.shared), Arc::downgrade(&self.ready));
        runtime.spawn(async move {
            loop {
                let wait = {
                    let (Some(shared), Some(ready)) = (shared.upgrade(), ready.upgrade()) else { return };
                    while ready.lock().len() < target && !ready.busy() {
                        let Ok(mut container) = Container::new_spare(shared.clone()).await else { break };
                        container.prefault(shared.hot_pages.get().map_or(&[], Vec::as_slice));
                        ready.lock().push(container);
                    }
                    if ready.lock().len() >= target { READY_QUIET } else { ready.quiet_in().max(READY_POLL) }
                };
                tokio::time::sleep(wait).await;
            }
        });
    }
}
