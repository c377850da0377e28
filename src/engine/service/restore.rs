//! Bringing a container back: from its latest snapshot, then forward over the executions
//! recorded after it (the audit trail is the write-ahead log), or from its whole chain when it
//! was never saved. Closed and expired containers are not brought back.

use super::*;

pub(super) fn unrestorable(id: &str, why: impl std::fmt::Display) -> ServiceError {
    tracing::warn!(container = %id, reason = %why, "refused to restore a container");
    ServiceError::Unrestorable(id.to_owned(), why.to_string())
}

impl Service {
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

    pub(super) async fn restore_in_turn(
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
        let leased_at = self.acquire_lease_waiting(&key).await?;
        // Decided under the lease (another node may be running it right now) and on what was
        // written last: the node that held it may have saved a newer snapshot.
        let stored = store.load_container(&key).await?;
        let saved = stored.as_ref().map_or(row.created_at, |stored| stored.last_used);
        let last_used = saved.max(last_used);
        // A snapshot made by another build (an upgrade changed the image or the format) is not
        // read: the container is rebuilt from its audit trail, and an execution the snapshot
        // held waiting is cut off like any other unfinished one.
        let stored = stored.filter(|stored| {
            let outdated = self.inner.sandbox.snapshot_is_outdated(&stored.snapshot);
            if outdated {
                tracing::warn!(container = %key, "its snapshot is from another build: rebuilding it from the audit trail");
            }
            !outdated
        });
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
                        SandboxError::Snapshot(why)
                        | SandboxError::SnapshotOutdated(why)
                        | SandboxError::NotSnapshottable(why) => unrestorable(&key, why),
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
        // The head the copy is brought up to, kept as this node's: a lease that lapses later is
        // taken again only if no other node has written past it.
        store.refresh_head(&key).await?;
        let (container, waiting, started, replayed) = self.catch_up(&store, &key, container, sealed).await?;
        let waiting = waiting
            .map(|state| WaitingRun::from_state(state, self.inner.recorder.clone()))
            .transpose()
            .map_err(ServiceError::Internal)?;
        let entry = self.held_entry(
            container,
            owner.clone(),
            (at(row.created_at), at(last_used)),
            (started, leased_at),
            replayed,
        );
        // A long catch-up may outlast the lease taken before it: the copy is kept only if the
        // lease still holds (renewed, or taken again with the chain where this node left it).
        if !self.lease_holds(&entry).await? {
            entry.retired.store(true, Ordering::Release);
            return Err(ServiceError::Conflict(format!(
                "the lease on container {key} lapsed while it was restored; try again"
            )));
        }
        if let Some(waiting) = waiting {
            self.publish_waiting(&entry, waiting.run());
            if let Some(deadline) = waiting.run().next_deadline() {
                self.arm_timer(entry.clone(), waiting.run().id().to_owned(), deadline);
            }
            entry.slot.lock().await.waiting = Some(waiting);
        }
        lock(&self.inner.containers).insert(id, entry.clone());
        self.inner.metrics.container_restored();
        Ok(entry)
    }

    /// A container that was never saved, as it was created (a fork: as its parent was when it
    /// was forked); the catch-up then replays its whole chain.
    pub(super) async fn fresh_from_chain(
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
            container = self.replay_kept(key, owner, container, inherited).await?;
        }
        let sealed = SealedState { owner: owner.clone(), created_at, started, audit_head: None, waiting: None };
        Ok((container, sealed))
    }

    /// Replays the executions that completed (those a limit stopped were rolled back) into
    /// `container`, each checked against its record.
    pub(super) async fn replay_kept(
        &self,
        key: &str,
        owner: &Owner,
        mut container: Container,
        executions: &[ExecutionHistory],
    ) -> Result<Container, ServiceError> {
        for execution in executions {
            if execution.finished.as_ref().is_none_or(|f| f.status != crate::audit::FinishStatus::Completed) {
                continue;
            }
            // Each execution's files, fetched for it alone: never a container's every upload at once.
            let ids: Vec<String> = crate::engine::replay::execution_uploads(execution).collect();
            let uploads = self.upload_bytes(owner, &ids).await?;
            let divergence =
                crate::engine::replay::replay_one(&mut container, execution, &uploads).await.map_err(|e| match e {
                    crate::engine::replay::ReplayError::Sandbox(e) => ServiceError::from(e),
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
    pub(super) async fn catch_up(
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
        let sealed_owner = sealed.owner.clone();
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
        let container = self.replay_kept(key, &sealed_owner, container, &history.executions).await?;
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
    pub(super) fn publish_waiting(&self, entry: &ContainerEntry, run: &Run) {
        let (tool_uses, approval_requests) = waiting_on(run);
        let view = ExecutionView {
            id: run.id().to_owned(),
            container_id: entry.id,
            container_expires_at: self.expires_at(entry),
            code: run.code().to_owned(),
            status: ExecutionStatus::RequiresAction,
            tool_uses,
            approval_requests,
            outcome: None,
            error: None,
            usage: run.usage().clone(),
            ledger: run.ledger().to_vec(),
            created_at: SystemTime::now(),
            output_files: Vec::new(),
        };
        let execution = Arc::new(ExecutionEntry { owner: entry.owner.clone(), view: std::sync::Mutex::new(view) });
        self.remember_execution(run.id().to_owned(), execution);
    }
}
