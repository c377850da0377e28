//! Leases: with several nodes on one store, one node at a time runs a container; a request
//! for a container another node holds waits for it to be handed back or to expire.
//!
//! A node trusts its copy of a container only while its lease has held without a gap: a
//! lease that lapsed (a stalled reaper, a slow machine) may have been taken, used and handed
//! back by another node meanwhile, so the copy is dropped and the container restored from the
//! store. A lease counts from just before the request that took it, never later than the
//! store's own expiry.

use super::*;

/// How often a node asks again for a lease another node holds.
pub(super) const LEASE_POLL: Duration = Duration::from_millis(50);
/// How far the nodes' clocks may disagree: a lease with less than this left is treated as
/// already lapsed, since another node may read it so.
pub(super) const LEASE_CLOCK_SKEW: Duration = Duration::from_millis(100);

impl Service {
    /// Takes the lease on a container, waiting while another node holds it (it hands
    /// containers back when they go idle, and a dead node's lease expires). Returns when the
    /// lease started, by this node's clock.
    pub(super) async fn acquire_lease_waiting(&self, key: &str) -> Result<Instant, ServiceError> {
        let Some(store) = &self.inner.store else { return Ok(Instant::now()) };
        let config = &self.inner.config;
        let give_up = Instant::now() + config.lease_wait();
        loop {
            let asked = Instant::now();
            let until = ms(SystemTime::now() + config.lease_ttl);
            if store.acquire_lease(key, &config.node, until).await? {
                return Ok(asked);
            }
            if Instant::now() >= give_up {
                return Err(ServiceError::Conflict(format!("container {key} is held by another node; try again")));
            }
            tokio::time::sleep(LEASE_POLL).await;
        }
    }

    /// Whether this node still holds, without a gap, the lease on a container it has in
    /// memory: renewed now when less than half of it is left, refused when it lapsed.
    pub(super) async fn lease_holds(&self, entry: &ContainerEntry) -> Result<bool, ServiceError> {
        let Some(store) = &self.inner.store else { return Ok(true) };
        if entry.is_retired() {
            // Unloaded meanwhile: its lease was handed back and must not be taken again.
            return Ok(false);
        }
        let config = &self.inner.config;
        let left = lock(&entry.lease_until).saturating_duration_since(Instant::now());
        if left <= LEASE_CLOCK_SKEW {
            return self.retake_lapsed_lease(store, entry).await;
        }
        if left >= config.lease_ttl / 2 {
            return Ok(true);
        }
        // Only extends a lease the store still has unexpired for this node: a renewal never
        // bridges a gap in which another node could have taken and handed back the container.
        let asked = Instant::now();
        let until = ms(SystemTime::now() + config.lease_ttl);
        let renewed = store.renew_lease(&entry.id.to_string(), &config.node, until).await?;
        if renewed {
            *lock(&entry.lease_until) = asked + config.lease_ttl;
        }
        Ok(renewed)
    }

    /// Takes a lapsed lease again if no other node took the container meanwhile: the lease is
    /// free and the container's audit chain still ends where this node last wrote it (every
    /// change to a container is recorded there first, so the chain's head is its version).
    /// Otherwise this node's copy may be older than the store's.
    async fn retake_lapsed_lease(&self, store: &Store, entry: &ContainerEntry) -> Result<bool, ServiceError> {
        let key = entry.id.to_string();
        let Some(written_before) = store.cached_head(&key) else { return Ok(false) };
        let config = &self.inner.config;
        let asked = Instant::now();
        let until = ms(SystemTime::now() + config.lease_ttl);
        if !store.acquire_lease(&key, &config.node, until).await? {
            return Ok(false);
        }
        let head = store.chain_head(&key).await?;
        // Read again after the store's head: a script of this node may have appended
        // meanwhile, which moves both.
        let written_after = store.cached_head(&key);
        if head.is_none() || (head.as_ref() != Some(&written_before) && head != written_after) {
            // Not this node's to keep: the copy is dropped and restored where it is used.
            if !entry.is_retired() {
                store.release_lease(&key, &config.node).await?;
            }
            return Ok(false);
        }
        *lock(&entry.lease_until) = asked + config.lease_ttl;
        tracing::info!(container = %entry.id, "took a lapsed lease again: no other node used the container");
        Ok(true)
    }

    /// Renews this node's leases; a container whose lease was lost is dropped from memory
    /// (its state is whatever the store has), never run on two nodes.
    pub(super) async fn renew_leases(&self) {
        if self.inner.store.is_none() {
            return;
        }
        let entries: Vec<Arc<ContainerEntry>> = lock(&self.inner.containers).values().cloned().collect();
        for entry in entries.into_iter().filter(|entry| !entry.is_retired()) {
            match self.lease_holds(&entry).await {
                Ok(true) => {}
                Ok(false) => self.drop_lost(&entry),
                Err(e) => tracing::warn!(container = %entry.id, error = %e, "could not renew a lease"),
            }
        }
    }

    /// Drops a container whose lease this node lost from memory: it is never saved from here
    /// again, and its instance goes once no request holds it.
    pub(super) fn drop_lost(&self, entry: &ContainerEntry) {
        tracing::warn!(container = %entry.id, "lost the lease on a container; dropping it from memory");
        let mut containers = lock(&self.inner.containers);
        // Only this entry: a restore may have put a newer one in its place.
        if containers.get(&entry.id).is_some_and(|held| std::ptr::eq(Arc::as_ptr(held), entry)) {
            containers.remove(&entry.id);
        }
        drop(containers);
        entry.retired.store(true, Ordering::Release);
        if let Ok(mut slot) = entry.slot.try_lock() {
            self.retire(entry, &mut slot);
        }
    }
}
