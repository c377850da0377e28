//! One execution's life, and the service that runs executions in containers.
//!
//! The same [`Run`] drives every path; only the [`Dispatcher`] differs: `sluice run
//! --answers` answers from a file, the service POSTs `http` tools and hands `client` tools
//! to its caller, replay answers from the ledger. A run that waits for client tools is a
//! [`WaitingRun`]: the only thing that can be answered.

mod dispatch;
pub(crate) mod files;
pub(crate) mod metrics;
mod offline;
pub(crate) mod replay;
mod run;
mod run_state;
pub(crate) mod service;
pub(crate) mod tokens;
pub(crate) mod trace;
mod waiting;

pub use dispatch::{Dispatch, Dispatcher};
pub use files::{Upload, UploadBytes};
pub(crate) use offline::OFFLINE_OWNER;
pub use offline::{Answers, ScriptRun, run_script, run_script_with_files};
pub use run::{ApprovalAnswer, ApprovalCall, Moved, Run, RunContext};
pub use waiting::WaitingRun;

pub(crate) use crate::audit::{CallStatus, LedgerEntry, Usage};
pub(crate) use metrics::CONTENT_TYPE as METRICS_CONTENT_TYPE;
pub(crate) use run::{CALLER_TYPE, ClientCall, EngineError};
pub(crate) use run_state::{ClientCallState, RunState};
