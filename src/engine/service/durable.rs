//! Durable containers: snapshots in the store, restore on use, eviction under memory
//! pressure, fork, and leases so that one node at a time runs a container when several share
//! a PostgreSQL store.
//!
//! The audit chain is the write-ahead log. A snapshot seals the chain position it includes;
//! a container is restored from its latest snapshot (or, if it never had one, from a fresh
//! container with its recorded seed) and then brought forward by replaying the executions
//! recorded after that position, tool results answered from the ledger. So every execution
//! whose completion was recorded survives a crash, whenever the last snapshot was taken.

use super::{
    ContainerEntry, ExecutionEntry, ExecutionStatus, ExecutionView, Gone, Owner, Service, ServiceError, Slot, ToolUse,
    lock,
};
use crate::audit::{ContainerHistory, Event, ExecutionHistory, Store, StoredContainer};
use crate::engine::{Run, RunState, Usage};
use crate::sandbox::{Container, SandboxError};
use serde::{Deserialize, Serialize};
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

/// What the service seals into a container's snapshot besides the sandbox's state: a store
/// writer without the server key can change none of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SealedState {
    owner: String,
    created_at: i64,
    /// Executions started in the container (numbers the next one).
    started: u64,
    /// The chain's last record (seq, seal) when the snapshot was taken: what it includes.
    audit_head: Option<(i64, String)>,
    /// The execution waiting for client tool results in it, if any.
    waiting: Option<RunState>,
}

fn unrestorable(id: &str, why: impl std::fmt::Display) -> ServiceError {
    tracing::warn!(container = %id, reason = %why, "refused to restore a container");
    ServiceError::Unrestorable(id.to_owned(), why.to_string())
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
            waiting: slot.waiting.as_ref().map(Run::state),
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
            waiting_execution: slot.waiting.as_ref().map(|run| run.id.clone()),
        };
        store.save_container(&stored).await?;
        entry.dirty.store(false, Ordering::Relaxed);
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
                let Ok(mut slot) = entry.slot.try_lock() else { continue };
                if entry.is_retired() {
                    continue;
                }
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
        store: Arc<Store>,
    ) -> Result<Arc<ContainerEntry>, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("container {id}"));
        if let Some(entry) = lock(&self.inner.containers).get(&id).filter(|e| &e.owner == owner) {
            return Ok(entry.clone());
        }
        let key = id.to_string();
        // Peek first: unknown, foreign, closed and expired containers need no lease.
        let row = store.container_row(&key).await?.ok_or_else(|| match lock(&self.inner.gone).get(&id) {
            Some(Gone::Expired) => ServiceError::Expired(key.clone()),
            _ => not_found(),
        })?;
        if &row.owner != owner {
            return Err(not_found());
        }
        match row.closed_reason.as_deref() {
            Some("expired") => return Err(ServiceError::Expired(key)),
            Some(_) => return Err(not_found()),
            None => {}
        }
        // Its last use: the later of its last save and its last record (executions after the
        // last save are on record, and count as use, even if the process then died).
        let saved = store.load_container(&key).await?.map_or(row.created_at, |stored| stored.last_used);
        let last_used = saved.max(store.last_activity(&key).await?.unwrap_or(row.created_at));
        self.acquire_lease_waiting(&key).await?;
        // Decided under the lease (another node may be running it right now) and on what was
        // written last: the node that held it may have saved a newer snapshot.
        let stored = store.load_container(&key).await?;
        let saved = stored.as_ref().map_or(row.created_at, |stored| stored.last_used);
        let last_used = saved.max(last_used);
        let now = SystemTime::now();
        let config = &self.inner.config;
        if at(last_used) + config.idle_timeout <= now || at(row.created_at) + config.max_age <= now {
            self.close_stored(&store, &key, "expired").await?;
            store.release_lease(&key, &config.node).await?;
            lock(&self.inner.gone).insert(id, Gone::Expired, 0);
            return Err(ServiceError::Expired(key));
        }
        store.forget_head(&key);
        // Executions another process started in it and never finished were cut off.
        let waiting_hint = stored.as_ref().and_then(|s| s.waiting_execution.clone());
        for execution in store.unfinished_in(&key).await? {
            if waiting_hint.as_deref() != Some(execution.as_str()) {
                Service::recover_execution(&store, &key, &execution).await?;
            }
        }
        self.make_room().await?;
        let (container, sealed) = match &stored {
            Some(stored) => {
                let (container, host) =
                    self.inner.sandbox.restore_container(id, id, &stored.snapshot).await.map_err(|e| match e {
                        SandboxError::Snapshot(why) | SandboxError::NotSnapshottable(why) => unrestorable(&key, why),
                        other => other.into(),
                    })?;
                let sealed: SealedState = serde_json::from_value(host).map_err(|e| unrestorable(&key, e))?;
                if &sealed.owner != owner {
                    return Err(unrestorable(&key, "the sealed owner is not the one the index names"));
                }
                (container, sealed)
            }
            None => self.fresh_from_chain(&store, &key, owner, row.created_at).await?,
        };
        let (container, waiting, started, replayed) = self.catch_up(&store, &key, container, sealed).await?;
        let waiting = waiting
            .map(|state| Run::from_state(state, self.inner.recorder.clone()))
            .transpose()
            .map_err(ServiceError::Internal)?;
        let entry = self.held_entry(container, owner.clone(), (at(row.created_at), at(last_used)), started, replayed);
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

    /// A container that was never saved, as it was created (a fork: as its parent was when it
    /// was forked); the catch-up then replays its whole chain.
    async fn fresh_from_chain(
        &self,
        store: &Store,
        key: &str,
        owner: &Owner,
        created_at: i64,
    ) -> Result<(Container, SealedState), ServiceError> {
        let history = store.verified_history(key).await.map_err(|e| unrestorable(key, e))?;
        let history = history.ok_or_else(|| ServiceError::NotFound(format!("container {key}")))?;
        if &history.owner != owner {
            return Err(unrestorable(key, "the chain's owner is not the one the index names"));
        }
        let id: Uuid = key.parse().map_err(|_| ServiceError::Internal("a container id is not a UUID".into()))?;
        let (mut container, mut started) = (self.inner.sandbox.create_container_with(id, history.seed).await?, 0);
        if history.forked_from.is_some() {
            let parent = self.full_history(key).await?;
            let own = history.executions.len();
            let inherited = &parent.executions[..parent.executions.len() - own];
            started = inherited.iter().map(|e| e.number).max().unwrap_or(0);
            container = Self::replay_kept(key, container, inherited).await?;
        }
        let sealed = SealedState { owner: owner.clone(), created_at, started, audit_head: None, waiting: None };
        Ok((container, sealed))
    }

    /// Replays the executions that completed (those a limit stopped were rolled back) into
    /// `container`, each checked against its record.
    async fn replay_kept(
        key: &str,
        mut container: Container,
        executions: &[ExecutionHistory],
    ) -> Result<Container, ServiceError> {
        for execution in executions {
            if execution.finished.as_ref().is_none_or(|f| f.status != crate::audit::FinishStatus::Completed) {
                continue;
            }
            let divergence =
                super::super::replay::replay_one(&mut container, execution).await.map_err(|e| match e {
                    super::super::replay::ReplayError::Sandbox(e) => ServiceError::from(e),
                    other => unrestorable(key, other),
                })?;
            if let Some(divergence) = divergence {
                return Err(unrestorable(key, format!("replaying its history diverged: {divergence}")));
            }
        }
        Ok(container)
    }

    /// Brings a restored container forward over the records written after its snapshot: an
    /// execution that completed is replayed; a waiting execution that moved on is rolled back
    /// and replayed whole. Returns the container, the execution still waiting, the number of
    /// executions started, and whether anything was replayed.
    async fn catch_up(
        &self,
        store: &Store,
        key: &str,
        mut container: Container,
        sealed: SealedState,
    ) -> Result<(Container, Option<RunState>, u64, bool), ServiceError> {
        let (head_seq, head_hash) = sealed.audit_head.clone().unwrap_or((-1, crate::audit::GENESIS_HASH.to_owned()));
        if head_seq >= 0 {
            let record = store.record_at(key, head_seq).await?;
            if record.is_none_or(|r| r.hash != head_hash) {
                return Err(unrestorable(key, "the snapshot does not belong to this container's audit chain"));
            }
        }
        let after = store.records_after(key, head_seq).await?;
        if after.is_empty() {
            return Ok((container, sealed.waiting, sealed.started, false));
        }
        crate::audit::verify_chain_from(store.chain_key(), key, (head_seq, &head_hash), &after)
            .map_err(|e| unrestorable(key, e))?;
        let mut history = ContainerHistory {
            container_id: key.to_owned(),
            owner: sealed.owner.clone(),
            seed: 0,
            image_hash: String::new(),
            forked_from: None,
            executions: Vec::new(),
            closed: None,
        };
        let mut waiting = sealed.waiting;
        if head_seq < 0 {
            // No snapshot: the chain from its first record, the container's creation.
            history = ContainerHistory::from_records(key, &after).map_err(|e| unrestorable(key, e))?;
        } else {
            if let Some(run) = &waiting
                && after.iter().any(|r| r.execution_id.as_deref() == Some(run.id.as_str()))
            {
                // It moved on after the snapshot: replay it whole, from its first record.
                let earlier = store.execution_records(key, &run.id, head_seq).await?;
                if earlier.iter().any(|r| !crate::audit::record_seal_holds(store.chain_key(), r)) {
                    return Err(unrestorable(key, "a record of its waiting execution does not match its seal"));
                }
                history.continue_with(&earlier).map_err(|e| unrestorable(key, e))?;
                container.abort("rebuilt from the audit trail").await?;
                waiting = None;
            }
            history.continue_with(&after).map_err(|e| unrestorable(key, e))?;
        }
        let mut started = sealed.started;
        for execution in &history.executions {
            started = started.max(execution.number);
            if execution.finished.is_none() && waiting.as_ref().is_none_or(|r| r.id != execution.execution_id) {
                // Cut off by the crash: on record as interrupted, its state rolled back.
                Service::recover_execution(store, key, &execution.execution_id).await?;
            }
        }
        let container = Self::replay_kept(key, container, &history.executions).await?;
        tracing::info!(container = %key, executions = history.executions.len(), "rebuilt from the audit trail");
        Ok((container, waiting, started, true))
    }

    /// Records that a stored container was closed and drops its snapshot.
    pub(super) async fn close_stored(&self, store: &Store, key: &str, reason: &str) -> Result<(), ServiceError> {
        store.append(key, &[Event::ContainerClosed { reason: reason.to_owned() }]).await?;
        store.delete_container(key).await?;
        Ok(())
    }

    /// Shows a restored waiting execution to readers, as it was when it was saved.
    fn publish_waiting(&self, entry: &ContainerEntry, run: &Run) {
        let view = ExecutionView {
            id: run.id.clone(),
            container_id: entry.id,
            container_expires_at: self.expires_at(entry),
            code: run.code.clone(),
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
                    // Never saved from here again; its instance goes once no request holds it.
                    entry.retired.store(true, Ordering::Release);
                    if let Ok(mut slot) = entry.slot.try_lock() {
                        self.retire(&entry, &mut slot);
                    }
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

    /// A new container with the same state as `id` (and its numbering of executions).
    pub async fn fork_container(&self, owner: &Owner, id: Uuid) -> Result<super::ContainerView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move { this.fork_container_now(&owner, id).await }).await
    }

    async fn fork_container_now(&self, owner: &Owner, id: Uuid) -> Result<super::ContainerView, ServiceError> {
        let parent = self.container(owner, id).await?;
        // The state, its place in the parent's chain and its numbering, all taken together
        // under the parent's lock: nothing the parent runs next belongs to the fork.
        let (snapshot, forked_from, started) = {
            let mut slot = parent
                .slot
                .try_lock()
                .map_err(|_| ServiceError::Conflict(format!("container {id} is running an execution")))?;
            if parent.is_retired() {
                return Err(super::moved(id));
            }
            if slot.waiting.is_some() {
                return Err(ServiceError::Conflict(format!(
                    "container {id} has an execution waiting for tool results"
                )));
            }
            let forked_from = match &self.inner.store {
                Some(store) => store.chain_head(&id.to_string()).await?.map(|(seq, hash)| crate::audit::ForkPoint {
                    container_id: id.to_string(),
                    seq,
                    hash,
                }),
                None => None,
            };
            let snapshot = slot.container.snapshot(serde_json::Value::Null).await?;
            (snapshot, forked_from, parent.started.load(Ordering::Relaxed))
        };
        self.check_container_quota(owner).await?;
        self.make_room().await?;
        let child_id = Uuid::new_v4();
        let (container, _) = self.inner.sandbox.restore_container(child_id, id, &snapshot).await?;
        let entry = self.adopt_new(owner, container, forked_from, started).await?;
        Ok(self.container_view(&entry, super::ContainerState::Idle, 0))
    }

    /// A container's history as replay needs it, every chain checked: a fork's begins with its
    /// parent's, up to the point it was forked.
    pub(super) async fn full_history(&self, container_id: &str) -> Result<ContainerHistory, ServiceError> {
        let store = self.store()?;
        let unreadable = |e: crate::audit::StoreError| ServiceError::Conflict(format!("the audit trail: {e}"));
        let mut history = store
            .verified_history(container_id)
            .await
            .map_err(unreadable)?
            .ok_or_else(|| ServiceError::NotFound(format!("container {container_id}")))?;
        let mut fork = history.forked_from.clone();
        while let Some(point) = fork {
            let parent =
                store.verified_history(&point.container_id).await.map_err(unreadable)?.ok_or_else(|| {
                    ServiceError::Conflict(format!("the parent {} has no history", point.container_id))
                })?;
            let parent_records: Vec<_> =
                store.records(&point.container_id).await?.into_iter().filter(|r| r.seq <= point.seq).collect();
            let parent_then =
                ContainerHistory::from_records(&point.container_id, &parent_records).map_err(ServiceError::Internal)?;
            let mut executions = parent_then.executions;
            executions.append(&mut history.executions);
            history.executions = executions;
            history.seed = parent.seed;
            fork = parent.forked_from;
        }
        Ok(history)
    }

    /// A stored execution waiting in a container that is not in memory, as readers see it
    /// (from the sealed snapshot, checked).
    pub(super) async fn stored_waiting_view(
        &self,
        container_id: &str,
        execution_id: &str,
    ) -> Option<(Vec<ToolUse>, Usage)> {
        let store = self.inner.store.as_ref()?;
        let stored = store.load_container(container_id).await.ok()??;
        let id: Uuid = container_id.parse().ok()?;
        let host = self.inner.sandbox.snapshot_host_data(id, &stored.snapshot).ok()?;
        let state = serde_json::from_value::<SealedState>(host).ok()?.waiting?;
        (state.id == execution_id).then(|| {
            let uses = state.client_calls.iter().map(ToolUse::from).collect();
            (uses, state.usage)
        })
    }
}
