//! Forks: a new container with another's state, its numbering and a pointer into its chain.

use super::*;

impl Service {
    /// A new container with the same state as `id` (and its numbering of executions).
    pub async fn fork_container(&self, owner: &Owner, id: Uuid) -> Result<super::ContainerView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move { this.fork_container_now(&owner, id).await }).await
    }

    pub(super) async fn fork_container_now(
        &self,
        owner: &Owner,
        id: Uuid,
    ) -> Result<super::ContainerView, ServiceError> {
        // The state, its place in the parent's chain and its numbering, all taken together
        // under the parent's lock: nothing the parent runs next belongs to the fork.
        let (snapshot, forked_from, started) = {
            let running = || ServiceError::Conflict(format!("container {id} is running an execution"));
            let (parent, mut slot) = self.held_slot(owner, id, running).await?;
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
        // Saved at once: brought back from its chain instead, it would replay its parent's
        // executions, which may need files their owner has deleted since.
        if self.inner.store.is_some() {
            let mut slot = entry.slot.lock().await;
            if let Err(e) = self.persist(&entry, &mut slot).await {
                tracing::warn!(container = %entry.id, error = %e, "could not save a new fork");
            }
        }
        Ok(self.container_view(&entry, super::ContainerState::Idle, 0))
    }
}
