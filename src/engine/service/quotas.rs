//! What one API key may hold or start at once, so that no key can use up the service for the
//! others: live containers, executions waiting for tool results, replays, registered tools.

use super::{Owner, ServiceError};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Containers one key may have live on a node: a quarter of what a node keeps in memory by
/// default, so that one key cannot take all of it (past it, with a store, the key's own least
/// recently used idle container is saved and unloaded).
pub(super) const DEFAULT_CONTAINERS_PER_KEY: usize = 64;
/// Requests of one key in flight at once: a quarter of the node's connections by default.
pub(super) const DEFAULT_CONCURRENT_REQUESTS_PER_KEY: usize = 256;
/// Executions of one key waiting for client tool results at once.
pub(super) const DEFAULT_WAITING_PER_KEY: usize = 256;
/// Replays of one key running at once (a replay re-runs a container's whole history).
pub(super) const DEFAULT_CONCURRENT_REPLAYS_PER_KEY: usize = 1;
/// Replays one key may start per minute.
pub(super) const DEFAULT_REPLAYS_PER_MINUTE: usize = 30;
const REPLAY_WINDOW: Duration = Duration::from_secs(60);

/// Per-key quotas, set by the operator (`--quota NAME=VALUE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub containers: usize,
    pub concurrent_requests: usize,
    pub waiting_executions: usize,
    pub concurrent_replays: usize,
    pub replays_per_minute: usize,
    pub tools: usize,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            containers: DEFAULT_CONTAINERS_PER_KEY,
            concurrent_requests: DEFAULT_CONCURRENT_REQUESTS_PER_KEY,
            waiting_executions: DEFAULT_WAITING_PER_KEY,
            concurrent_replays: DEFAULT_CONCURRENT_REPLAYS_PER_KEY,
            replays_per_minute: DEFAULT_REPLAYS_PER_MINUTE,
            tools: crate::tools::registry::DEFAULT_MAX_TOOLS_PER_OWNER,
        }
    }
}

impl Quotas {
    /// The names `--quota` takes.
    pub const NAMES: &'static [&'static str] = &[
        "containers",
        "concurrent_requests",
        "waiting_executions",
        "concurrent_replays",
        "replays_per_minute",
        "tools",
    ];

    /// Sets the quota `name` (the CLI's `--quota NAME=VALUE`).
    pub fn set(&mut self, name: &str, value: usize) -> Result<(), String> {
        let slot = match name {
            "containers" => &mut self.containers,
            "concurrent_requests" => &mut self.concurrent_requests,
            "waiting_executions" => &mut self.waiting_executions,
            "concurrent_replays" => &mut self.concurrent_replays,
            "replays_per_minute" => &mut self.replays_per_minute,
            "tools" => &mut self.tools,
            other => return Err(format!("unknown quota {other:?} (known: {})", Self::NAMES.join(", "))),
        };
        *slot = value;
        Ok(())
    }
}

/// Admits each key's requests up to its number in flight at once.
#[derive(Debug, Default)]
pub(super) struct RequestGate {
    by_owner: Mutex<HashMap<Owner, Arc<tokio::sync::Semaphore>>>,
}

impl RequestGate {
    pub(super) fn admit(
        &self,
        owner: &Owner,
        quotas: &Quotas,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, ServiceError> {
        let places = {
            let mut by_owner = self.by_owner.lock().unwrap_or_else(|p| p.into_inner());
            let places = by_owner.entry(owner.clone());
            places.or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(quotas.concurrent_requests))).clone()
        };
        places.try_acquire_owned().map_err(|_| {
            ServiceError::Quota(format!(
                "this API key has {} requests in flight, the most it may at once",
                quotas.concurrent_requests
            ))
        })
    }
}

/// Admits replays within each key's concurrency and rate.
#[derive(Debug, Default)]
pub(super) struct ReplayGate {
    by_owner: Mutex<HashMap<Owner, ReplayUse>>,
}

#[derive(Debug, Default)]
struct ReplayUse {
    running: usize,
    started: VecDeque<Instant>,
}

/// Held while a replay runs; gives its place back when dropped.
pub(super) struct ReplayPermit {
    gate: Arc<ReplayGate>,
    owner: Owner,
}

impl Drop for ReplayPermit {
    fn drop(&mut self) {
        let mut by_owner = self.gate.by_owner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(usage) = by_owner.get_mut(&self.owner) {
            usage.running = usage.running.saturating_sub(1);
            if usage.running == 0 && usage.started.is_empty() {
                by_owner.remove(&self.owner);
            }
        }
    }
}

impl ReplayGate {
    pub(super) fn admit(self: &Arc<Self>, owner: &Owner, quotas: &Quotas) -> Result<ReplayPermit, ServiceError> {
        let now = Instant::now();
        let mut by_owner = self.by_owner.lock().unwrap_or_else(|p| p.into_inner());
        let usage = by_owner.entry(owner.clone()).or_default();
        while usage.started.front().is_some_and(|&at| now.duration_since(at) >= REPLAY_WINDOW) {
            usage.started.pop_front();
        }
        if usage.running >= quotas.concurrent_replays {
            return Err(ServiceError::Quota(format!(
                "this API key runs {} replays already, the most it may at once",
                usage.running
            )));
        }
        if usage.started.len() >= quotas.replays_per_minute {
            return Err(ServiceError::Quota(format!(
                "this API key started {} replays in the last minute, the most it may",
                usage.started.len()
            )));
        }
        usage.running += 1;
        usage.started.push_back(now);
        Ok(ReplayPermit { gate: self.clone(), owner: owner.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_has_its_own_requests_in_flight() {
        let gate = RequestGate::default();
        let quotas = Quotas { concurrent_requests: 2, ..Quotas::default() };
        let (a, b) = ("a".to_owned(), "b".to_owned());
        let held = [gate.admit(&a, &quotas).unwrap(), gate.admit(&a, &quotas).unwrap()];
        assert!(matches!(gate.admit(&a, &quotas), Err(ServiceError::Quota(_))));
        assert!(gate.admit(&b, &quotas).is_ok(), "another key is not held back");
        drop(held);
        assert!(gate.admit(&a, &quotas).is_ok());
    }

    #[test]
    fn quotas_parse_by_name() {
        let mut quotas = Quotas::default();
        quotas.set("tools", 7).unwrap();
        quotas.set("containers", 3).unwrap();
        assert_eq!((quotas.tools, quotas.containers), (7, 3));
        assert!(quotas.set("cpu", 1).unwrap_err().contains("unknown quota"));
    }

    /// Item 8 of the security review: replays cost seconds each and had no limit.
    #[test]
    fn item08_replays_are_limited_per_key_at_once_and_per_minute() {
        let gate = Arc::new(ReplayGate::default());
        let quotas = Quotas { concurrent_replays: 1, replays_per_minute: 2, ..Quotas::default() };
        let (a, b) = ("a".to_owned(), "b".to_owned());
        let first = gate.admit(&a, &quotas).unwrap();
        assert!(matches!(gate.admit(&a, &quotas), Err(ServiceError::Quota(_))), "one at a time");
        let other = gate.admit(&b, &quotas).unwrap();
        drop(first);
        let second = gate.admit(&a, &quotas).unwrap();
        drop(second);
        assert!(matches!(gate.admit(&a, &quotas), Err(ServiceError::Quota(_))), "two a minute");
        drop(other);
    }
}
