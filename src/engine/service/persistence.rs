//! Saving containers: a snapshot sealed with what the service keeps with it (owner, waiting
//! execution, the chain position it includes); unloading; making room under memory pressure;
//! saving idle ones.

use super::*;

/// What the service seals into a container's snapshot besides the sandbox's state: a store
/// writer without the server key can change none of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SealedState {
    pub(super) owner: String,
    pub(super) created_at: i64,
    /// Executions started in the container (numbers the next one).
    pub(super) started: u64,
    /// The chain's last record (seq, seal) when the snapshot was taken: what it includes.
    pub(super) audit_head: Option<(i64, String)>,
    /// The execution waiting for client tool results in it, if any.
    pub(super) waiting: Option<RunState>,
}

/// Fenced saves tried before a container whose lease keeps lapsing is dropped.
const PERSIST_ATTEMPTS: usize = 2;

pub(super) fn ms(time: SystemTime) -> i64 {
    crate::audit::unix_ms(time) as i64
}

pub(super) fn at(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

impl Service {
    /// Saves a container's snapshot (with the execution waiting in it, if any, and the chain
    /// position it includes) to the store.
    pub(super) async fn persist(&self, entry: &ContainerEntry, slot: &mut Slot) -> Result<(), ServiceError> {
        let Some(store) = &self.inner.store else { return Ok(()) };
        if entry.is_retired() {
            // Unloaded, or its lease lost: what is in the store is newer than this copy.
            return Ok(());
        }
        let key = entry.id.to_string();
        let sealed = SealedState {
            owner: entry.owner.clone(),
            created_at: ms(entry.created_at),
            started: entry.started.load(Ordering::Relaxed),
            audit_head: store.chain_head(&key).await?,
            waiting: slot.waiting.as_ref().map(WaitingRun::state),
        };
        let host = serde_json::to_value(&sealed).map_err(|e| ServiceError::Internal(e.to_string()))?;
        let snapshot = slot.container.snapshot(host).await?;
        let stored = StoredContainer {
            container_id: key,
            owner: entry.owner.clone(),
            created_at: sealed.created_at,
            last_used: ms(*lock(&entry.last_used)),
            started: sealed.started as i64,
            snapshot,
            waiting_execution: slot.waiting.as_ref().map(|waiting| waiting.run().id().to_owned()),
        };
        // The lease is renewed first when it runs short, so that the fenced save finds it
        // held; one that lapsed during the save is taken again if no other node used the
        // container meanwhile (a slow store must not lose an execution waiting in it).
        for _ in 0..PERSIST_ATTEMPTS {
            if !self.lease_holds(entry).await? {
                break;
            }
            if store.save_container(&stored, &self.inner.config.node).await? {
                entry.dirty.store(false, Ordering::Relaxed);
                return Ok(());
            }
            *lock(&entry.lease_until) = Instant::now();
        }
        // Another node may have run the container since, and saved it: this copy is older
        // than the store's, so it is dropped, never saved.
        self.drop_lost(entry);
        self.retire(entry, slot);
        Ok(())
    }

    /// Persists and drops a container from memory (it comes back on use), releasing its lease.
    pub(super) async fn unload(&self, entry: &Arc<ContainerEntry>, slot: &mut Slot) -> Result<(), ServiceError> {
        self.persist(entry, slot).await?;
        lock(&self.inner.containers).remove(&entry.id);
        self.retire(entry, slot);
        if let Some(store) = &self.inner.store {
            store.release_lease(&entry.id.to_string(), &self.inner.config.node).await?;
        }
        Ok(())
    }

    /// Makes room for one more live container by unloading the least recently used idle one.
    pub(super) async fn make_room(&self) -> Result<(), ServiceError> {
        loop {
            let mut live: Vec<Arc<ContainerEntry>> = lock(&self.inner.containers).values().cloned().collect();
            if live.len() < self.inner.config.max_live_containers {
                return Ok(());
            }
            if self.inner.store.is_none() {
                return Err(ServiceError::Capacity(format!("{} containers are alive", live.len())));
            }
            live.sort_by_key(|e| *lock(&e.last_used));
            let mut unloaded = false;
            for entry in live {
                let Some(mut slot) = entry.lock_for_housekeeping().await else { continue };
                if entry.is_retired() {
                    continue;
                }
                if self.unload(&entry, &mut slot).await.is_ok() {
                    self.inner.metrics.container_evicted();
                    unloaded = true;
                    break;
                }
            }
            // Housekeeping that was waited for may have unloaded a container itself.
            if !unloaded && lock(&self.inner.containers).len() >= self.inner.config.max_live_containers {
                return Err(ServiceError::Capacity("every live container is busy".into()));
            }
        }
    }

    /// Saves idle containers that changed; with several nodes, hands idle ones back.
    pub(super) async fn save_idle(&self) {
        if self.inner.store.is_none() {
            return;
        }
        let config = &self.inner.config;
        let now = SystemTime::now();
        let entries: Vec<Arc<ContainerEntry>> = lock(&self.inner.containers).values().cloned().collect();
        for entry in entries {
            let idle = now.duration_since(*lock(&entry.last_used)).unwrap_or_default();
            let Some(mut slot) = entry.try_lock_for_housekeeping() else { continue };
            if entry.is_retired() {
                continue;
            }
            let result = match config.handoff_idle {
                Some(handoff) if idle >= handoff => self.unload(&entry, &mut slot).await,
                _ if idle >= config.snapshot_idle && entry.dirty.load(Ordering::Relaxed) => {
                    self.persist(&entry, &mut slot).await
                }
                _ => Ok(()),
            };
            if let Err(e) = result {
                tracing::warn!(container = %entry.id, error = %e, "could not save a container");
            }
        }
    }
}
