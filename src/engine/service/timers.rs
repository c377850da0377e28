//! What moves on by itself: the reaper (expiry, idle saves, lease renewal) and the timers that
//! move a waiting execution on when a client call times out or a script's timer falls due.

use super::*;

impl Service {
    pub(super) fn spawn_reaper(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            // Often enough that a lease is renewed well before it lapses.
            let period = match weak.upgrade() {
                Some(inner) => REAP_INTERVAL.min(inner.config.lease_ttl / 4),
                None => return,
            };
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                Service { inner }.reap().await;
            }
        });
    }

    /// Removes containers past their idle time or maximum age (not while a script runs),
    /// saves idle ones that changed, and renews leases.
    pub(super) async fn reap(&self) {
        let now = SystemTime::now();
        let due: Vec<Arc<ContainerEntry>> =
            lock(&self.inner.containers).values().filter(|e| self.expires_at(e) <= now).cloned().collect();
        for entry in due {
            let Some(mut slot) = entry.try_lock_for_housekeeping() else { continue };
            if entry.is_retired() {
                continue;
            }
            self.interrupt_waiting(&mut slot, "the container expired").await;
            self.forget_container(entry.id, Gone::Expired);
            self.retire(&entry, &mut slot);
            if let Err(e) = self.close(entry.id, "expired").await {
                tracing::warn!(container = %entry.id, error = %e, "could not record an expired container");
            }
            self.inner.metrics.container_expired();
        }
        // Renewed before the saves, which may be slow: a lease must not lapse behind them.
        self.renew_leases().await;
        self.save_idle().await;
    }

    /// Moves a waiting execution on at `deadline`. The timer holds neither the service nor
    /// the container: one deleted or unloaded meanwhile is let go, not kept for the timer.
    pub(super) fn arm_timer(&self, entry: Arc<ContainerEntry>, execution_id: String, deadline: Instant) {
        let (service, entry) = (Arc::downgrade(&self.inner), Arc::downgrade(&entry));
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline.into()).await;
            let (Some(inner), Some(entry)) = (service.upgrade(), entry.upgrade()) else { return };
            Service { inner }.on_timer(entry, &execution_id).await;
        });
    }

    /// A client call ran past `pending_timeout_ms`, or a timer of the script fell due.
    pub(super) async fn on_timer(&self, entry: Arc<ContainerEntry>, execution_id: &str) {
        let mut slot = entry.slot.lock().await;
        if entry.is_retired() {
            return;
        }
        let waiting = match slot.waiting.take() {
            Some(waiting) if waiting.run().id() == execution_id => waiting,
            other => {
                slot.waiting = other;
                return;
            }
        };
        let now = Instant::now();
        let next = waiting.run().next_deadline();
        if next.is_none_or(|deadline| deadline > now) {
            if let Some(deadline) = next {
                self.arm_timer(entry.clone(), execution_id.to_owned(), deadline);
            }
            slot.waiting = Some(waiting);
            return;
        }
        let Some(execution) = lock(&self.inner.live_executions).get(execution_id).cloned() else {
            slot.waiting = Some(waiting);
            return;
        };
        let dispatcher = ServiceDispatcher::new(&self.inner.config);
        let mut moved = waiting.expire(&mut slot.container, now, &dispatcher).await;
        self.keep_run_outputs(&entry, &mut moved).await;
        self.after_progress(&entry, &mut slot, &execution, moved);
        self.save_after_execution(&entry, &mut slot, false).await;
    }
}
