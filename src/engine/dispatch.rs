//! How an admitted call is carried out: the one thing that differs between `sluice run
//! --answers` (canned answers), the service (`http` tools now, `client` tools by the caller)
//! and replay (answers from the ledger).

use crate::call::{ToolCall, ToolFailure};
use crate::tools::Admission;
use crate::tools::approval::ApprovalPolicy;
use crate::tools::http::CallContext;
use std::future::Future;

/// How an admitted call is answered.
#[derive(Debug)]
pub enum Dispatch {
    /// Answered now (or after the executor's own retries).
    Ready { result: Result<String, ToolFailure>, attempts: u32 },
    /// Handed to the API caller as a `tool_use`; the answer comes with `tool_results`.
    Client,
}

/// Carries out the calls the gate admitted.
pub trait Dispatcher: Send + Sync {
    fn dispatch(
        &self,
        admission: &Admission,
        call: &ToolCall,
        context: &CallContext,
    ) -> impl Future<Output = Dispatch> + Send;

    /// The approval policy calls pass before they are dispatched; `None` where nobody could
    /// approve (offline runs, whose operator is the one running them). Replay needs none: it
    /// answers denied calls from the ledger like any other.
    fn approvals(&self) -> Option<&ApprovalPolicy> {
        None
    }
}
