//! The `sluice_v1` contract between host and guest (written down in `sandbox-images/README.md`):
//! the imports the host provides, the exports it calls, and the JSON frames they carry.

use super::guest_memory::{self, GuestMemoryError};
use super::state::{BlockedCall, HostState, Waiter};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;
use tokio::sync::oneshot;
use wasmtime::{AsContextMut, Caller, Extern, Instance, Linker, Memory, TypedFunc};

pub const ABI_MODULE: &str = "sluice_v1";
/// Largest frame the host reads from the guest.
pub const MAX_GUEST_FRAME_BYTES: usize = 64 << 20;
/// Largest number of tool calls one pending frame may carry.
pub const MAX_CALLS_PER_FRAME: usize = 10_000;
pub const MAX_TOOL_NAME_BYTES: usize = 128;
/// Largest JSON text of one tool call's arguments.
pub const MAX_TOOL_INPUT_BYTES: usize = 1 << 20;

/// A tool as the guest sees it: an `async def` global of that name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestTool {
    pub name: String,
    /// Property names in `input_schema` order, for positional arguments.
    #[serde(default)]
    pub params: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Host to guest.
#[derive(Debug, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request<'a> {
    Execute { code: &'a str, tools: &'a [GuestTool] },
    Resume { results: &'a [CallResult] },
}

/// The answer to one tool call: its text, or the failure the script sees as an exception.
/// On the wire it is `[seq, text]` or `[seq, null, failure]` (arrays are cheaper than
/// objects for the guest to take apart, and a gather may bring thousands).
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    pub seq: u64,
    pub content: Option<String>,
    pub error: Option<ToolFailure>,
}

impl Serialize for CallResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.error {
            Some(failure) => (self.seq, (), failure).serialize(serializer),
            None => (self.seq, self.content.as_deref().unwrap_or("")).serialize(serializer),
        }
    }
}

impl CallResult {
    pub fn ok(seq: u64, content: impl Into<String>) -> Self {
        Self { seq, content: Some(content.into()), error: None }
    }

    pub fn failed(seq: u64, failure: ToolFailure) -> Self {
        Self { seq, content: None, error: Some(failure) }
    }
}

/// Raised in the script as the `sluice` exception that `code` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFailure {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub details: serde_json::Value,
}

impl ToolFailure {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self { code: code.into(), message: message.into(), details: serde_json::Value::Null }
    }
}

/// Guest to host, as parsed; checked by [`Response::validate`] before anyone uses it.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Response {
    Done(DoneFrame),
    Pending(PendingFrame),
    Fault { message: String },
}

#[derive(Debug, Clone, Deserialize)]
pub struct DoneFrame {
    pub return_code: i64,
    #[serde(default)]
    pub value_repr: Option<String>,
    #[serde(default)]
    pub error: Option<PythonError>,
    #[serde(default)]
    pub counts: BTreeMap<String, serde_json::Number>,
}

/// An uncaught exception of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonError {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    pub traceback: String,
}

#[derive(Debug, Deserialize)]
pub struct PendingFrame {
    pub calls: Vec<RawCall>,
    #[serde(default)]
    pub cancelled: Vec<u64>,
    #[serde(default)]
    pub wake_after_ns: Option<u64>,
}

/// `[seq, name, input]`, where input is the arguments' JSON text, encoded by the guest when
/// the call was made.
#[derive(Debug, Deserialize)]
pub struct RawCall(pub u64, pub String, pub String);

/// A tool call the script made, checked and parsed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub seq: u64,
    pub name: String,
    pub input: serde_json::Map<String, serde_json::Value>,
    /// Set when the call itself is malformed (arguments too large, not a JSON object): the
    /// engine answers it with this failure instead of passing it on.
    #[serde(skip)]
    pub refusal: Option<ToolFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("guest frame is not valid: {0}")]
    Malformed(String),
    #[error("guest frame carries {0} calls, more than {MAX_CALLS_PER_FRAME}")]
    TooManyCalls(usize),
    #[error(transparent)]
    Memory(#[from] GuestMemoryError),
}

impl Response {
    pub fn parse(bytes: &[u8]) -> Result<Self, FrameError> {
        serde_json::from_slice(bytes).map_err(|e| FrameError::Malformed(e.to_string()))
    }
}

impl PendingFrame {
    /// Checks every guest-given size, then parses each call's arguments.
    pub fn into_calls(self) -> Result<Vec<ToolCall>, FrameError> {
        if self.calls.len() > MAX_CALLS_PER_FRAME {
            return Err(FrameError::TooManyCalls(self.calls.len()));
        }
        self.calls
            .into_iter()
            .map(|RawCall(seq, mut name, input)| {
                // A malformed call is the script's mistake, answered as an error it can catch;
                // the rest of the frame stands.
                let refuse = |message: String| Some(ToolFailure::new("invalid_input", message));
                let (input, refusal) = if name.len() > MAX_TOOL_NAME_BYTES {
                    let refusal =
                        refuse(format!("a tool name of {} bytes is longer than {MAX_TOOL_NAME_BYTES}", name.len()));
                    name.truncate(name.floor_char_boundary(MAX_TOOL_NAME_BYTES));
                    (serde_json::Map::new(), refusal)
                } else if input.len() > MAX_TOOL_INPUT_BYTES {
                    let message =
                        format!("arguments of {name} are {} bytes, more than {MAX_TOOL_INPUT_BYTES}", input.len());
                    (serde_json::Map::new(), refuse(message))
                } else {
                    match serde_json::from_str(&input) {
                        Ok(input) => (input, None),
                        Err(e) => {
                            (serde_json::Map::new(), refuse(format!("arguments of {name} are not a JSON object: {e}")))
                        }
                    }
                };
                Ok(ToolCall { seq, name, input, refusal })
            })
            .collect()
    }
}

/// The guest's exports, looked up once per instance.
#[derive(Clone)]
pub struct GuestExports {
    memory: Memory,
    input: TypedFunc<u32, u32>,
    step: TypedFunc<u32, u64>,
}

impl GuestExports {
    pub fn new(instance: &Instance, mut store: impl AsContextMut) -> wasmtime::Result<Self> {
        let memory =
            instance.get_memory(&mut store, "memory").ok_or_else(|| wasmtime::Error::msg("guest exports no memory"))?;
        Ok(Self {
            memory,
            input: instance.get_typed_func(&mut store, "sluice_input")?,
            step: instance.get_typed_func(&mut store, "sluice_step")?,
        })
    }

    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// Hands one request frame to the guest and returns its response frame.
    pub async fn step(
        &self,
        mut store: impl AsContextMut<Data = HostState>,
        frame: &[u8],
    ) -> Result<Vec<u8>, StepError> {
        let len = u32::try_from(frame.len())
            .map_err(|_| StepError::Frame(FrameError::Malformed("request too large".into())))?;
        let ptr = self.input.call_async(&mut store, len).await.map_err(StepError::Trap)?;
        guest_memory::write(&self.memory, &mut store, ptr, frame).map_err(|e| StepError::Frame(e.into()))?;
        let packed = self.step.call_async(&mut store, len).await.map_err(StepError::Trap)?;
        let (out_ptr, out_len) = ((packed >> 32) as u32, packed as u32);
        guest_memory::read(&self.memory, &store, out_ptr, out_len, MAX_GUEST_FRAME_BYTES)
            .map_err(|e| StepError::Frame(e.into()))
    }
}

/// Why a step produced no response frame.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("guest trapped: {0}")]
    Trap(wasmtime::Error),
    #[error(transparent)]
    Frame(FrameError),
}

/// Defines the `sluice_v1` imports.
pub fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.func_wrap(ABI_MODULE, "bootstrap_len", |caller: Caller<'_, HostState>| -> i32 {
        caller.data().bootstrap.as_ref().map_or(-1, |b| b.len() as i32)
    })?;
    linker.func_wrap(ABI_MODULE, "bootstrap_read", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| -> i32 {
        let Some(boot) = caller.data_mut().bootstrap.take() else {
            return -1;
        };
        hand_over(&mut caller, ptr, len, &boot)
    })?;
    linker.func_wrap(ABI_MODULE, "take", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| -> i32 {
        let Some(answer) = caller.data_mut().answer.take() else {
            return -1;
        };
        hand_over(&mut caller, ptr, len, &answer)
    })?;
    linker.func_wrap_async(ABI_MODULE, "wait", |mut caller: Caller<'_, HostState>, (ptr, len): (u32, u32)| {
        Box::new(async move { wait_for_answer(&mut caller, ptr, len).await })
    })?;
    Ok(())
}

fn memory_of(caller: &mut Caller<'_, HostState>) -> Option<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory),
        _ => None,
    }
}

/// Copies `bytes` to the guest if it asked for exactly their length.
fn hand_over(caller: &mut Caller<'_, HostState>, ptr: u32, len: u32, bytes: &[u8]) -> i32 {
    let Some(memory) = memory_of(caller) else { return -1 };
    if len as usize != bytes.len() || guest_memory::write(&memory, caller, ptr, bytes).is_err() {
        return -1;
    }
    len as i32
}

/// The blocking path: the guest waits inside this import until the host answers.
async fn wait_for_answer(caller: &mut Caller<'_, HostState>, ptr: u32, len: u32) -> i32 {
    let Some(memory) = memory_of(caller) else { return -1 };
    let Ok(frame) = guest_memory::read(&memory, &*caller, ptr, len, MAX_GUEST_FRAME_BYTES) else {
        return -1;
    };
    let started = Instant::now();
    let answer: Option<super::state::Answer> = match &mut caller.data_mut().waiter {
        Waiter::Closed => None,
        Waiter::Replay(answers) => answers.pop_front(),
        Waiter::Live(sender) => {
            let sender = sender.clone();
            let (answer, receive) = oneshot::channel();
            if sender.send(BlockedCall { frame, answer }).await.is_err() { None } else { receive.await.ok() }
        }
    };
    let state = caller.data_mut();
    let waited = started.elapsed();
    state.deadline += waited;
    state.waited += waited;
    match answer {
        Some((answer, now_ns)) if answer.len() <= i32::MAX as usize => {
            state.clock.set_at_least(now_ns);
            let len = answer.len() as i32;
            state.answer = Some(answer.to_vec());
            len
        }
        _ => -1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_frames_are_checked_before_use() {
        let frame = r#"{"kind":"pending","calls":[[0,"t","{\"a\":1}"]],"cancelled":[],"wake_after_ns":null}"#;
        let Response::Pending(pending) = Response::parse(frame.as_bytes()).unwrap() else { panic!("not pending") };
        let calls = pending.into_calls().unwrap();
        assert_eq!(calls[0].input["a"], 1);

        let not_object = r#"{"kind":"pending","calls":[[0,"t","[1]"]]}"#;
        let Response::Pending(pending) = Response::parse(not_object.as_bytes()).unwrap() else { panic!() };
        assert_eq!(pending.into_calls().unwrap()[0].refusal.as_ref().unwrap().code, "invalid_input");

        let long_name = format!(r#"{{"kind":"pending","calls":[[0,"{}","{{}}"]]}}"#, "x".repeat(500));
        let Response::Pending(pending) = Response::parse(long_name.as_bytes()).unwrap() else { panic!() };
        let call = &pending.into_calls().unwrap()[0];
        assert_eq!((call.name.len(), call.refusal.is_some()), (MAX_TOOL_NAME_BYTES, true));

        assert!(matches!(Response::parse(b"{\"kind\":\"boom\"}"), Err(FrameError::Malformed(_))));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2_000, failure_persistence: None, ..Default::default() })]

        /// Whatever bytes the guest hands over, parsing them never panics.
        #[test]
        fn any_guest_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            if let Ok(Response::Pending(pending)) = Response::parse(&bytes) {
                let _ = pending.into_calls();
            }
        }

        /// Pending frames of any shape (sizes, names, arguments) parse or fail cleanly.
        #[test]
        fn any_pending_frame_is_checked_without_panicking(
            calls in proptest::collection::vec((proptest::prelude::any::<u64>(), "[ -~]{0,200}", "[ -~]{0,64}"), 0..20),
            cancelled in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..5),
        ) {
            let frame = serde_json::json!({"kind": "pending", "calls": calls, "cancelled": cancelled, "wake_after_ns": null});
            let Ok(Response::Pending(pending)) = Response::parse(frame.to_string().as_bytes()) else {
                return Err(proptest::test_runner::TestCaseError::fail("a well-formed pending frame must parse"));
            };
            let parsed = pending.into_calls().unwrap();
            proptest::prop_assert_eq!(parsed.len(), calls.len());
            for call in parsed {
                proptest::prop_assert!(call.name.len() <= MAX_TOOL_NAME_BYTES);
            }
        }
    }

    #[test]
    fn requests_serialize_with_an_op_tag() {
        let results = [CallResult::ok(3, "x"), CallResult::failed(4, ToolFailure::new("timeout", "late"))];
        let json = serde_json::to_value(Request::Resume { results: &results }).unwrap();
        assert_eq!(json["op"], "resume");
        assert_eq!(json["results"][0], serde_json::json!([3, "x"]));
        assert_eq!(json["results"][1][1], serde_json::Value::Null);
        assert_eq!(json["results"][1][2]["code"], "timeout");
    }
}
