//! Durable containers: snapshots in the store, restore on use, eviction under memory
//! pressure, fork, and leases so that one node at a time runs a container when several share
//! a PostgreSQL store.

use super::{
    ContainerEntry, ExecutionEntry, ExecutionStatus, ExecutionView, Gone, Owner, Service, ServiceError, Slot, ToolUse,
    lock,
};
use crate::audit::{ContainerHistory, StoredContainer};
use crate::engine::{Run, RunState, Usage};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};
use uuid::Uuid;

/// How often a node asks again for a lease another node holds.
const LEASE_POLL: Duration = Duration::from_millis(50);

fn ms(time: SystemTime) -> i64 {
    crate::audit::unix_ms(time) as i64
}

fn at(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

impl Service {
    /// Saves a container's snapshot (with the execution waiting in it, if any) to the store.
    pub(super) async fn persist(&self, entry: &ContainerEntry, slot: &mut Slot) -> Result<(), ServiceError> {
        let Some(store) = &self.inner.store else { return Ok(()) };
        let snapshot = slot.container.snapshot().await?;
        let run_state = match &slot.waiting {
            Some(run) => Some(serde_json::to_string(&run.state()).map_err(|e| ServiceError::Internal(e.to_string()))?),
            None => None,
        };
        let stored = StoredContainer {
            container_id: entry.id.to_string(),
            owner: entry.owner.clone(),
            created_at: ms(entry.created_at),
            last_used: ms(*lock(&entry.last_used)),
            started: entry.started.load(Ordering::Relaxed) as i64,
            snapshot,
            run_state,
        };
        store.save_container(&stored).await?;
        entry.dirty.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Persists and drops a container from memory (it comes back on use), releasing its lease.
    pub(super) async fn unload(&self, entry: &Arc<ContainerEntry>, slot: &mut Slot) -> Result<(), ServiceError> {
        self.persist(entry, slot).await?;
        lock(&self.inner.containers).remove(&entry.id);
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
                let Ok(mut slot) = entry.slot.try_lock() else { continue };
                if self.unload(&entry, &mut slot).await.is_ok() {
                    self.inner.metrics.container_evicted();
                    unloaded = true;
                    break;
                }
            }
            if !unloaded {
                return Err(ServiceError::Capacity("every live container is busy".into()));
            }
        }
    }

    /// A container that is not in memory, brought back from its snapshot.
    pub(super) async fn restore(&self, owner: &Owner, id: Uuid) -> Result<Arc<ContainerEntry>, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("container {id}"));
        let Some(store) = self.inner.store.clone() else {
            return Err(match lock(&self.inner.gone).get(&id) {
                Some(Gone::Expired) => ServiceError::Expired(id.to_string()),
                _ => not_found(),
            });
        };
        let turn = lock(&self.inner.restoring).entry(id).or_default().clone();
        let _one_at_a_time = turn.lock().await;
        let result = self.restore_in_turn(owner, id, store).await;
        let mut restoring = lock(&self.inner.restoring);
        // The map holds one reference and this call another: no one else is waiting.
        if restoring.get(&id).is_some_and(|t| Arc::strong_count(t) <= 2) {
            restoring.remove(&id);
        }
        result
    }

    async fn restore_in_turn(
        &self,
        owner: &Owner,
        id: Uuid,
        store: Arc<crate::audit::Store>,
    ) -> Result<Arc<ContainerEntry>, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("container {id}"));
        if let Some(entry) = lock(&self.inner.containers).get(&id).filter(|e| &e.owner == owner) {
            return Ok(entry.clone());
        }
        let key = id.to_string();
        // Peek first: unknown, foreign and expired containers need no lease.
        let stored = store.load_container(&key).await?.ok_or_else(|| match lock(&self.inner.gone).get(&id) {
            Some(Gone::Expired) => ServiceError::Expired(key.clone()),
            _ => not_found(),
        })?;
        if &stored.owner != owner {
            return Err(not_found());
        }
        let now = SystemTime::now();
        let config = &self.inner.config;
        if at(stored.last_used) + config.idle_timeout <= now || at(stored.created_at) + config.max_age <= now {
            store.delete_container(&key).await?;
            lock(&self.inner.gone).insert(id, Gone::Expired);
            return Err(ServiceError::Expired(key));
        }
        self.acquire_lease_waiting(&key).await?;
        // Load again under the lease: the node that held it may have saved a newer snapshot.
        let stored = store.load_container(&key).await?.ok_or_else(not_found)?;
        store.forget_head(&key);
        let run_state: Option<RunState> = match &stored.run_state {
            Some(json) => Some(serde_json::from_str(json).map_err(|e| ServiceError::Internal(e.to_string()))?),
            None => None,
        };
        // Executions another process started in it and never finished were cut off.
        for execution in store.unfinished_in(&key).await? {
            if run_state.as_ref().is_none_or(|r| r.id != execution) {
                Service::recover_execution(&store, &key, &execution).await?;
            }
        }
        self.make_room().await?;
        let container = self.inner.sandbox.restore_container(id, &stored.snapshot).await.map_err(|e| match e {
            crate::sandbox::SandboxError::Snapshot(why) | crate::sandbox::SandboxError::NotSnapshottable(why) => {
                tracing::warn!(container = %id, reason = %why, "refused a stored snapshot");
                ServiceError::Unrestorable(key.clone(), why)
            }
            other => other.into(),
        })?;
        let waiting = run_state
            .map(|state| Run::from_state(state, self.inner.recorder.clone()))
            .transpose()
            .map_err(ServiceError::Internal)?;
        let times = (at(stored.created_at), at(stored.last_used));
        let entry = self.held_entry(container, stored.owner.clone(), times, stored.started as u64, false);
        if let Some(run) = waiting {
            self.publish_waiting(&entry, &run);
            if let Some(deadline) = run.next_deadline() {
                self.arm_timer(entry.clone(), run.id.clone(), deadline);
            }
            entry.slot.lock().await.waiting = Some(run);
        }
        lock(&self.inner.containers).insert(id, entry.clone());
        self.inner.metrics.container_restored();
        Ok(entry)
    }

    /// Shows a restored waiting execution to readers, as it was when it was saved.
    fn publish_waiting(&self, entry: &ContainerEntry, run: &Run) {
        let view = ExecutionView {
            id: run.id.clone(),
            container_id: entry.id,
            container_expires_at: self.expires_at(entry),
            code: String::new(),
            status: ExecutionStatus::RequiresAction,
            tool_uses: run.client_calls.iter().map(ToolUse::from).collect(),
            outcome: None,
            error: None,
            usage: run.usage.clone(),
            ledger: run.ledger.clone(),
            created_at: SystemTime::now(),
        };
        let execution = Arc::new(ExecutionEntry { owner: entry.owner.clone(), view: std::sync::Mutex::new(view) });
        self.remember_execution(run.id.clone(), execution);
    }

    /// Takes the lease on a container, waiting while another node holds it (it hands
    /// containers back when they go idle, and a dead node's lease expires).
    pub(super) async fn acquire_lease_waiting(&self, key: &str) -> Result<(), ServiceError> {
        let Some(store) = &self.inner.store else { return Ok(()) };
        let config = &self.inner.config;
        let give_up = Instant::now() + config.lease_wait();
        loop {
            let until = ms(SystemTime::now() + config.lease_ttl);
            if store.acquire_lease(key, &config.node, until).await? {
                return Ok(());
            }
            if Instant::now() >= give_up {
                return Err(ServiceError::Conflict(format!("container {key} is held by another node; try again")));
            }
            tokio::time::sleep(LEASE_POLL).await;
        }
    }

    /// Renews this node's leases; a container whose lease was lost is dropped from memory
    /// (its state is whatever the store has), never run on two nodes.
    pub(super) async fn renew_leases(&self) {
        let Some(store) = &self.inner.store else { return };
        let config = &self.inner.config;
        let due = Instant::now() + config.lease_ttl / 2;
        let entries: Vec<Arc<ContainerEntry>> = lock(&self.inner.containers).values().cloned().collect();
        for entry in entries.into_iter().filter(|e| *lock(&e.lease_until) <= due) {
            let until = SystemTime::now() + config.lease_ttl;
            match store.acquire_lease(&entry.id.to_string(), &config.node, ms(until)).await {
                Ok(true) => *lock(&entry.lease_until) = Instant::now() + config.lease_ttl,
                Ok(false) => {
                    tracing::warn!(container = %entry.id, "lost the lease on a container; dropping it from memory");
                    lock(&self.inner.containers).remove(&entry.id);
                }
                Err(e) => tracing::warn!(container = %entry.id, error = %e, "could not renew a lease"),
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
            let Ok(mut slot) = entry.slot.try_lock() else { continue };
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

    /// A new container with the same state as `id` (and its numbering of executions).
    pub async fn fork_container(&self, owner: &Owner, id: Uuid) -> Result<super::ContainerView, ServiceError> {
        let parent = self.container(owner, id).await?;
        let snapshot = {
            let mut slot = parent
                .slot
                .try_lock()
                .map_err(|_| ServiceError::Conflict(format!("container {id} is running an execution")))?;
            if slot.waiting.is_some() {
                return Err(ServiceError::Conflict(format!(
                    "container {id} has an execution waiting for tool results"
                )));
            }
            slot.container.snapshot().await?
        };
        self.make_room().await?;
        let child_id = Uuid::new_v4();
        let container = self.inner.sandbox.restore_container(child_id, &snapshot).await?;
        let forked_from = match &self.inner.store {
            Some(store) => store
                .chain_head(&id.to_string())
                .await?
                .map(|seq| crate::audit::ForkPoint { container_id: id.to_string(), seq }),
            None => None,
        };
        let entry = self.adopt_new(owner, container, forked_from, parent.started.load(Ordering::Relaxed)).await?;
        Ok(self.container_view(&entry, super::ContainerState::Idle, 0))
    }

    /// A container's history as replay needs it: a fork's begins with its parent's, up to
    /// the point it was forked.
    pub(super) async fn full_history(&self, container_id: &str) -> Result<ContainerHistory, ServiceError> {
        let store = self.store()?;
        let records = store.records(container_id).await?;
        let mut history = ContainerHistory::from_records(container_id, &records).map_err(ServiceError::Internal)?;
        let mut fork = history.forked_from.clone();
        while let Some(point) = fork {
            let parent_records: Vec<_> =
                store.records(&point.container_id).await?.into_iter().filter(|r| r.seq <= point.seq).collect();
            let parent =
                ContainerHistory::from_records(&point.container_id, &parent_records).map_err(ServiceError::Internal)?;
            let mut executions = parent.executions;
            executions.append(&mut history.executions);
            history.executions = executions;
            history.seed = parent.seed;
            fork = parent.forked_from;
        }
        Ok(history)
    }

    /// A stored execution waiting in a container that is not in memory, as readers see it.
    pub(super) async fn stored_waiting_view(
        &self,
        container_id: &str,
        execution_id: &str,
    ) -> Option<(Vec<ToolUse>, Usage)> {
        let store = self.inner.store.as_ref()?;
        let stored = store.load_container(container_id).await.ok()??;
        let state: RunState = serde_json::from_str(stored.run_state.as_deref()?).ok()?;
        (state.id == execution_id).then(|| {
            let uses = state.client_calls.iter().map(ToolUse::from).collect();
            (uses, state.usage)
        })
    }
}
