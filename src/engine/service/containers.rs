//! Containers: created, found (in memory or restored), viewed, deleted, and retired when this
//! node stops running them; a key's quota of live containers.

use super::*;

impl Service {
    pub async fn create_container(&self, owner: &Owner) -> Result<ContainerView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move {
            let entry = this.new_container(&owner).await?;
            Ok(this.container_view(&entry, ContainerState::Idle, 0))
        })
        .await
    }

    pub async fn get_container(&self, owner: &Owner, id: Uuid) -> Result<ContainerView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move { this.get_container_now(&owner, id).await }).await
    }

    pub(super) async fn get_container_now(&self, owner: &Owner, id: Uuid) -> Result<ContainerView, ServiceError> {
        let entry = self.container(owner, id).await?;
        if entry.is_retired() {
            return Err(moved(id));
        }
        let (state, executions) = match entry.slot.try_lock() {
            Ok(slot) if slot.waiting.is_some() => (ContainerState::WaitingForTools, slot.container.executions()),
            Ok(slot) => (ContainerState::Idle, slot.container.executions()),
            Err(_) => (ContainerState::Running, 0),
        };
        Ok(self.container_view(&entry, state, executions))
    }

    /// Removes a container; an execution waiting for client tools in it is ended as
    /// interrupted. A container whose script is running is busy (409).
    pub async fn delete_container(&self, owner: &Owner, id: Uuid) -> Result<(), ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move {
            let running = || ServiceError::Conflict(format!("container {id} is running an execution"));
            let (entry, mut slot) = this.held_slot(&owner, id, running).await?;
            this.interrupt_waiting(&mut slot, "the container was deleted").await;
            this.forget_container(id, Gone::Deleted);
            this.retire(&entry, &mut slot);
            this.close(id, "deleted").await
        })
        .await
    }

    /// This node no longer runs the container: its instance goes back to the pool, and
    /// anyone still holding the entry finds it retired.
    pub(super) fn retire(&self, entry: &ContainerEntry, slot: &mut Slot) {
        entry.retired.store(true, Ordering::Release);
        slot.waiting = None;
        slot.container.retire();
    }

    /// Records that a container was closed (`deleted`, `expired`) and drops its snapshot: its
    /// history stays in the audit trail, and it is never rebuilt from it.
    pub(super) async fn close(&self, id: Uuid, reason: &str) -> Result<(), ServiceError> {
        match &self.inner.store {
            Some(store) => self.close_stored(store, &id.to_string(), reason).await,
            None => {
                let closed = Event::ContainerClosed { reason: reason.to_owned() };
                Ok(self.inner.recorder.record(&id.to_string(), vec![closed]).await?)
            }
        }
    }

    /// Adds a Messages turn's model calls to the chain of the container its code ran in (the
    /// key's own: another's is not found), after the records of those executions.
    pub async fn record_model_calls(
        &self,
        owner: &Owner,
        id: Uuid,
        calls: Vec<crate::audit::ModelCall>,
    ) -> Result<(), ServiceError> {
        if calls.is_empty() {
            return Ok(());
        }
        let entry = self.container(owner, id).await?;
        let events = calls.into_iter().map(Event::ModelCall).collect();
        Ok(self.inner.recorder.record(&entry.id.to_string(), events).await?)
    }

    pub(super) async fn new_container(&self, owner: &Owner) -> Result<Arc<ContainerEntry>, ServiceError> {
        if self.inner.shutting_down.load(Ordering::Relaxed) {
            return Err(ServiceError::ShuttingDown);
        }
        self.check_container_quota(owner).await?;
        self.make_room().await?;
        let container = self.inner.sandbox.create_container().await?;
        self.adopt_new(owner, container, None, 0).await
    }

    /// Takes a container just made (new or forked) into service: records its creation,
    /// leases it and lists it, dirty so that it is saved.
    pub(super) async fn adopt_new(
        &self,
        owner: &Owner,
        container: Container,
        forked_from: Option<crate::audit::ForkPoint>,
        started: u64,
    ) -> Result<Arc<ContainerEntry>, ServiceError> {
        let id = container.id();
        let created = Event::ContainerCreated {
            owner: owner.clone(),
            seed: container.seed().to_string(),
            image_hash: self.inner.sandbox.image_hash().to_owned(),
            forked_from,
        };
        self.inner.recorder.record(&id.to_string(), vec![created]).await?;
        let leased_at = self.acquire_lease_waiting(&id.to_string()).await?;
        let now = SystemTime::now();
        let entry = self.held_entry(container, owner.clone(), (now, now), (started, leased_at), true);
        lock(&self.inner.containers).insert(id, entry.clone());
        self.inner.metrics.container_created();
        Ok(entry)
    }

    /// A container as this node holds it: leased for the configured time from `leased_at`
    /// (when the lease was asked for, not when the container was ready).
    pub(super) fn held_entry(
        &self,
        container: Container,
        owner: Owner,
        (created_at, last_used): (SystemTime, SystemTime),
        (started, leased_at): (u64, Instant),
        dirty: bool,
    ) -> Arc<ContainerEntry> {
        Arc::new(ContainerEntry {
            id: container.id(),
            owner,
            created_at,
            started: started.into(),
            lease_until: Mutex::new(leased_at + self.inner.config.lease_ttl),
            dirty: dirty.into(),
            last_used: Mutex::new(last_used),
            retired: AtomicBool::new(false),
            saving: AtomicBool::new(false),
            slot: Arc::new(tokio::sync::Mutex::new(Slot { container, waiting: None })),
        })
    }

    /// A container of `owner`: in memory while this node's lease on it holds, else restored
    /// from the store. Another owner's container is as unknown as a missing one.
    pub(super) async fn container(&self, owner: &Owner, id: Uuid) -> Result<Arc<ContainerEntry>, ServiceError> {
        let found = lock(&self.inner.containers).get(&id).cloned();
        match found {
            Some(entry) if &entry.owner == owner => {
                if self.lease_holds(&entry).await? {
                    return Ok(entry);
                }
                self.drop_lost(&entry);
                self.restore(owner, id).await
            }
            Some(_) => Err(ServiceError::NotFound(format!("container {id}"))),
            None => self.restore(owner, id).await,
        }
    }

    /// A container of `owner` with its slot held for a request. Housekeeping that holds the
    /// slot (a save, an unload) is waited for; a running script makes it `busy`. A container
    /// unloaded meanwhile is looked up again, where it is now.
    pub(super) async fn held_slot(
        &self,
        owner: &Owner,
        id: Uuid,
        busy: impl Fn() -> ServiceError,
    ) -> Result<(Arc<ContainerEntry>, tokio::sync::OwnedMutexGuard<Slot>), ServiceError> {
        for _ in 0..MAX_LOOKUPS {
            let entry = self.container(owner, id).await?;
            let slot = match entry.slot.clone().try_lock_owned() {
                Ok(slot) => slot,
                Err(_) if entry.saving.load(Ordering::Acquire) => entry.slot.clone().lock_owned().await,
                Err(_) => return Err(busy()),
            };
            if !entry.is_retired() {
                return Ok((entry, slot));
            }
        }
        Err(moved(id))
    }

    /// Makes room for a new container of `owner` within its quota: with a store, by saving
    /// and unloading the key's own least recently used idle container; else refused.
    pub(super) async fn check_container_quota(&self, owner: &Owner) -> Result<(), ServiceError> {
        let quota = self.inner.config.quotas.containers;
        loop {
            let mut own: Vec<Arc<ContainerEntry>> =
                lock(&self.inner.containers).values().filter(|e| &e.owner == owner).cloned().collect();
            if own.len() < quota {
                return Ok(());
            }
            let live = own.len();
            let refused = || {
                ServiceError::Quota(format!(
                    "this API key has {live} live containers, the most it may (delete or let some expire)"
                ))
            };
            if self.inner.store.is_none() {
                return Err(refused());
            }
            own.sort_by_key(|e| *lock(&e.last_used));
            let mut unloaded = false;
            for entry in &own {
                let Some(mut slot) = entry.lock_for_housekeeping().await else { continue };
                if entry.is_retired() || slot.waiting.is_some() {
                    continue;
                }
                if self.unload(entry, &mut slot).await.is_ok() {
                    self.inner.metrics.container_evicted();
                    unloaded = true;
                    break;
                }
            }
            // Housekeeping that was waited for may have unloaded one of them itself.
            let still = lock(&self.inner.containers).values().filter(|e| &e.owner == owner).count();
            if !unloaded && still >= quota {
                return Err(refused());
            }
        }
    }

    pub(super) fn expires_at(&self, entry: &ContainerEntry) -> SystemTime {
        let idle_end = *lock(&entry.last_used) + self.inner.config.idle_timeout;
        idle_end.min(entry.created_at + self.inner.config.max_age)
    }

    pub(super) fn container_view(
        &self,
        entry: &ContainerEntry,
        state: ContainerState,
        executions: u64,
    ) -> ContainerView {
        ContainerView {
            id: entry.id,
            created_at: entry.created_at,
            expires_at: self.expires_at(entry),
            state,
            executions,
        }
    }

    pub(super) fn touch(&self, entry: &ContainerEntry) {
        *lock(&entry.last_used) = SystemTime::now();
    }

    pub(super) fn forget_container(&self, id: Uuid, why: Gone) {
        lock(&self.inner.containers).remove(&id);
        lock(&self.inner.gone).insert(id, why, 0);
    }
}
