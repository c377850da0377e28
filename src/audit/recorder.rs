//! Where the engine hands its events: the [`Recorder`] trait, and the recorders that keep nothing or keep them in memory.

use super::{Event, StoreError};
use std::future::Future;
use std::pin::Pin;

/// Takes events for the audit trail; the engine waits for it before it reports a step.
pub trait Recorder: Send + Sync {
    fn record<'a>(
        &'a self,
        container_id: &'a str,
        events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;
}

/// Keeps nothing (offline runs).
#[derive(Debug, Default)]
pub(crate) struct Discard;

impl Recorder for Discard {
    fn record<'a>(
        &'a self,
        _container_id: &'a str,
        _events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        Box::pin(async { Ok(()) })
    }
}

/// Keeps events in memory (tests, and the benchmark's baseline).
#[derive(Debug, Default)]
pub struct MemoryRecorder {
    pub events: std::sync::Mutex<Vec<(String, Event)>>,
}

impl Recorder for MemoryRecorder {
    fn record<'a>(
        &'a self,
        container_id: &'a str,
        events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        let mut kept = self.events.lock().unwrap_or_else(|p| p.into_inner());
        kept.extend(events.into_iter().map(|e| (container_id.to_owned(), e)));
        Box::pin(async { Ok(()) })
    }
}
