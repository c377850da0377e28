//! Leases: with several nodes on one store, one node at a time runs a container; a request
//! for a container another node holds waits for it to be handed back or to expire.

use super::*;

/// How often a node asks again for a lease another node holds.
pub(super) const LEASE_POLL: Duration = Duration::from_millis(50);

impl Service {
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
}
