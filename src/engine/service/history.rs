//! Executions read back from the audit trail: one execution, listings, a container's
//! records for export, a whole history for replay (a fork's begins with its parent's).

use super::*;

impl Service {
    /// An execution: from memory while the node holds it, else from the audit store.
    pub async fn get_execution(&self, owner: &Owner, id: &str) -> Result<ExecutionView, ServiceError> {
        if let Ok(entry) = self.find_execution(owner, id) {
            return Ok(lock(&entry.view).clone());
        }
        let history = self.stored_history(owner, id).await?;
        let execution = history.execution(id).ok_or_else(|| ServiceError::NotFound(format!("execution {id}")))?;
        let mut view = view_from_history(&history, execution);
        if execution.finished.is_none()
            && let Some(run) = self.stored_waiting_run(&history.container_id, id).await
        {
            view.status = ExecutionStatus::RequiresAction;
            view.error = None;
            (view.tool_uses, view.approval_requests) = waiting_on(run.run());
            view.usage = run.run().usage().clone();
        }
        Ok(view)
    }

    /// The container history an execution belongs to, if `owner` may see it.
    pub(super) async fn stored_history(
        &self,
        owner: &Owner,
        execution_id: &str,
    ) -> Result<ContainerHistory, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("execution {execution_id}"));
        let store = self.inner.store.as_ref().ok_or_else(not_found)?;
        let (container_id, stored_owner) = store.container_of(execution_id).await?.ok_or_else(not_found)?;
        if &stored_owner != owner {
            return Err(not_found());
        }
        // The index says who may look; the sealed chain must say the same.
        let history = store
            .verified_history(&container_id)
            .await
            .map_err(|e| ServiceError::Conflict(format!("the audit trail does not verify: {e}")))?
            .ok_or_else(not_found)?;
        match history.execution(execution_id) {
            Some(execution) if &execution.owner == owner && &history.owner == owner => Ok(history),
            _ => Err(not_found()),
        }
    }

    /// Executions in the audit store, newest first.
    pub async fn list_executions(
        &self,
        owner: &Owner,
        mut filter: ExecutionFilter,
    ) -> Result<ExecutionPage, ServiceError> {
        let store = self.store()?;
        if let Some(before) = &filter.before
            && store.container_of(before).await?.is_none_or(|(_, stored_owner)| &stored_owner != owner)
        {
            return Err(ServiceError::InvalidRequest(format!("before: no execution {before}")));
        }
        filter.owner = Some(owner.clone());
        // One row more than asked says whether there is a next page.
        let limit = filter.limit.unwrap_or(crate::audit::MAX_LIST_ROWS).clamp(1, crate::audit::MAX_LIST_ROWS - 1);
        filter.limit = Some(limit + 1);
        let mut data = store.list_executions(&filter).await?;
        let has_more = data.len() as i64 > limit;
        data.truncate(limit as usize);
        Ok(ExecutionPage { data, has_more })
    }

    /// A container's whole chain, for export.
    pub async fn container_records(&self, owner: &Owner, id: Uuid) -> Result<Vec<Record>, ServiceError> {
        let store = self.store()?;
        let id = id.to_string();
        let not_found = || ServiceError::NotFound(format!("container {id}"));
        if store.container_owner(&id).await?.as_ref() != Some(owner) {
            return Err(not_found());
        }
        let records = store.records(&id).await?;
        // Exported as stored (a broken chain is the reader's to see), but only to the owner
        // the sealed chain names.
        let created = records.first().and_then(|r| r.event().ok());
        match created {
            Some(Event::ContainerCreated { owner: sealed_owner, .. })
                if &sealed_owner == owner && crate::audit::record_seal_holds(store.chain_key(), &records[0]) =>
            {
                Ok(records)
            }
            _ => Err(not_found()),
        }
    }

    /// Checks a container's chain (seals, links, the fork point), for its owner only: what
    /// `sluice audit verify` says of it.
    pub async fn verify_container(&self, owner: &Owner, id: Uuid) -> Result<ContainerVerdict, ServiceError> {
        let store = self.store()?;
        let id = id.to_string();
        if store.container_owner(&id).await?.as_ref() != Some(owner) {
            return Err(ServiceError::NotFound(format!("container {id}")));
        }
        let records = store.records(&id).await?.len();
        let (problem, forked_from) = match store.verified_history(&id).await {
            Ok(history) => (None, history.and_then(|h| h.forked_from.map(|f| f.container_id))),
            Err(crate::audit::StoreError::Corrupt(problem)) => (Some(problem), None),
            Err(other) => return Err(other.into()),
        };
        Ok(ContainerVerdict { container_id: id, records, problem, forked_from })
    }

    /// Replays an execution from its container's recorded history.
    pub async fn replay(&self, owner: &Owner, execution_id: &str) -> Result<ReplayReport, ServiceError> {
        let _permit = self.inner.replays.admit(owner, &self.inner.config.quotas)?;
        let history = self.stored_history(owner, execution_id).await?;
        let history = self.full_history(&history.container_id).await?;
        let uploads = self.upload_bytes(owner, &crate::engine::replay::uploads_named(&history, execution_id)).await?;
        replay(&self.inner.sandbox, &history, execution_id, &uploads).await.map_err(|e| match e {
            crate::engine::replay::ReplayError::Sandbox(e) => ServiceError::from(e),
            other => ServiceError::Conflict(other.to_string()),
        })
    }

    pub(super) fn store(&self) -> Result<&Arc<Store>, ServiceError> {
        self.inner
            .store
            .as_ref()
            .ok_or_else(|| ServiceError::InvalidRequest("this service keeps no audit store".into()))
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
    pub(super) async fn stored_waiting_run(&self, container_id: &str, execution_id: &str) -> Option<WaitingRun> {
        let store = self.inner.store.as_ref()?;
        let stored = store.load_container(container_id).await.ok()??;
        let id: Uuid = container_id.parse().ok()?;
        let host = self.inner.sandbox.snapshot_host_data(id, &stored.snapshot).ok()?;
        let state = serde_json::from_value::<SealedState>(host).ok()?.waiting?;
        if state.id != execution_id {
            return None;
        }
        WaitingRun::from_state(state, Arc::new(Discard)).ok()
    }
}

/// What checking one container's chain found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerVerdict {
    pub container_id: String,
    pub records: usize,
    /// Why the chain does not hold; `None` when every seal and link does.
    pub problem: Option<String>,
    pub forked_from: Option<String>,
}

/// One page of an execution listing, newest first.
#[derive(Debug, Clone)]
pub struct ExecutionPage {
    pub data: Vec<ExecutionRow>,
    /// More executions match: ask again with `before` set to the last one's id.
    pub has_more: bool,
}
