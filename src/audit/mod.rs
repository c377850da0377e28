//! The audit trail: what every execution did, as one append-only sealed chain per container.
//!
//! The engine hands [`Event`]s to a [`Recorder`]; the [`Store`] writes them through sqlx to
//! SQLite (the default, a file in the data directory) or PostgreSQL, each record chained to
//! the previous one of its container by an HMAC-SHA256 under a key kept outside the database
//! (see [`crate::keys`]), so `verify` notices an edited, deleted or reordered record even when
//! whoever edited it could write the database and recompute hashes. This module knows nothing
//! of wasm, tools or HTTP: tool definitions and limits travel as plain JSON.

mod bundle;
mod chain;
mod events;
mod history;
mod recorder;
mod store;

pub use bundle::{read_bundle, write_bundle};
pub use chain::{ChainBreak, Record, verify_chain};
pub use events::Event;
pub use history::ContainerHistory;
pub use recorder::{MemoryRecorder, Recorder};
pub use store::{ExecutionFilter, FileRow, NewFile, Store, StoreError};

pub(crate) use chain::{GENESIS_HASH, record_hash, record_seal_holds, verify_chain_from};
pub(crate) use events::{
    ApprovalDecision, ApprovalRecord, AutoCounts, CallStatus, Ending, ExceptionInfo, FinishStatus, Finished, ForkPoint,
    LedgerEntry, Usage,
};
pub use events::{FileRecord, ModelCall};
pub(crate) use history::ExecutionHistory;
pub(crate) use recorder::Discard;
pub use store::StoredContainer;
pub(crate) use store::{ExecutionRow, MAX_LIST_ROWS};

/// Milliseconds since the Unix epoch.
pub(crate) fn unix_ms(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
