//! One execution's life, and the service that runs executions in containers.
//!
//! The same [`Run`] drives every path; only the [`Dispatcher`] differs: `sluice run
//! --answers` answers from a file, the service POSTs `http` tools and hands `client` tools
//! to its caller, replay answers from the ledger. A run that waits for client tools is a
//! [`WaitingRun`]: the only thing that can be answered.

mod dispatch;
pub mod metrics;
mod offline;
pub mod replay;
mod run;
mod run_state;
pub mod service;
pub mod tokens;
mod waiting;

pub use crate::audit::{CallStatus, LedgerEntry, Usage, unix_ms};
pub use dispatch::{Dispatch, Dispatcher};
pub use offline::{Answers, ScriptRun, run_script};
pub use run::{CALLER_TYPE, ClientCall, EngineError, MAX_RESULT_BYTES_PER_EXECUTION, Moved, Run, RunContext};
pub use run_state::{ClientCallState, HeldResult, RunState};
pub use waiting::{AnswerError, CheckedAnswers, WaitingRun};
