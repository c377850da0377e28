//! The JSON frames host and guest exchange (`sandbox-images/README.md` documents them): what
//! the host sends, what the guest answers, and every bound the host holds a guest's frame to
//! before it keeps anything from it.

use super::files::{MAX_OUTPUT_FILES, PlacedFile, RawOutputFile};
use super::guest_memory::GuestMemoryError;
pub(crate) use crate::call::{CallResult, FailureCode, GuestTool, ToolCall, ToolFailure};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest frame the host reads from the guest.
pub(crate) const MAX_GUEST_FRAME_BYTES: usize = 64 << 20;
/// Largest number of tool calls one pending frame may carry.
pub(crate) const MAX_CALLS_PER_FRAME: usize = 10_000;
pub(crate) const MAX_TOOL_NAME_BYTES: usize = 128;
/// Largest JSON text of one tool call's arguments.
pub(crate) const MAX_TOOL_INPUT_BYTES: usize = 1 << 20;
/// Most JSON values one call's arguments may hold: parsed, each costs the host tens of
/// bytes, so this (not the text's length) bounds what a call's arguments occupy.
pub(crate) const MAX_TOOL_INPUT_VALUES: usize = 65_536;
/// Argument text all the calls of one execution may carry together.
pub(crate) const MAX_ARGUMENT_BYTES_PER_EXECUTION: u64 = 16 << 20;

/// Host to guest.
#[derive(Debug, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Request<'a> {
    Execute {
        code: &'a str,
        tools: &'a [GuestTool],
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        files: &'a [PlacedFile],
        storage_bytes: u64,
    },
    Resume {
        results: &'a [WireResult<'a>],
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        files: &'a [PlacedFile],
    },
}

/// A result on its way to the guest, under the guest's own number for the call.
#[derive(Debug)]
pub(crate) struct WireResult<'a> {
    pub guest_seq: u64,
    pub result: &'a CallResult,
}

impl WireResult<'_> {
    /// The text that travels beside the frame's JSON (empty for a failure).
    fn text(&self) -> &str {
        match &self.result.error {
            Some(_) => "",
            None => self.result.content.as_deref().unwrap_or(""),
        }
    }
}

/// In the JSON, a text result is `[seq, its length in bytes, its length in characters]`; the
/// text itself follows the JSON (see [`answer_frame`]). A failure is `[seq, null, failure]`.
///
/// The character count is the host's word on the text, which is a Rust `str` and so valid
/// UTF-8: the guest makes its `str` from it without scanning the text (equal counts mean
/// ASCII). In the guest a scan is a loop over four bytes at a time, about 20 µs for a 76 KB
/// result (a quarter of awaiting it); here it is vectorized and an ASCII text is counted by
/// its length.
impl Serialize for WireResult<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.result.error {
            Some(failure) => (self.guest_seq, (), failure).serialize(serializer),
            None => {
                let text = self.text();
                let chars = if text.is_ascii() { text.len() } else { text.chars().count() };
                (self.guest_seq, text.len(), chars).serialize(serializer)
            }
        }
    }
}

/// A frame that answers calls (a `resume`, or the answer to a blocking `wait`): the JSON of
/// the `resume` request, a newline (compact JSON holds none), then the texts of `results` in their
/// order. Tool results are often JSON text themselves: inside the frame's JSON they would be
/// escaped here and unescaped in the guest before the script parses them again.
pub(crate) fn answer_frame(results: &[WireResult], files: &[PlacedFile]) -> Vec<u8> {
    let mut frame = serde_json::to_vec(&Request::Resume { results, files }).expect("requests serialize");
    frame.reserve(1 + results.iter().map(|result| result.text().len()).sum::<usize>());
    frame.push(b'\n');
    for result in results {
        frame.extend_from_slice(result.text().as_bytes());
    }
    frame
}

/// Guest to host, as parsed; checked by [`Response::validate`] before anyone uses it.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Response {
    Done(DoneFrame),
    Pending(PendingFrame),
    Fault { message: String },
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DoneFrame {
    pub return_code: i64,
    #[serde(default)]
    pub value_repr: Option<String>,
    #[serde(default)]
    pub error: Option<PythonError>,
    /// At most [`MAX_COUNTS`], with names of at most [`MAX_COUNT_NAME_BYTES`]: the rest are
    /// skipped while parsing, so a frame of a million counts never becomes a million entries.
    #[serde(default, deserialize_with = "bounded_counts")]
    pub counts: BTreeMap<String, serde_json::Number>,
    /// Files the execution created or changed; refused past [`MAX_OUTPUT_FILES`] while
    /// parsing, decoded and checked by [`super::files::decode_outputs`].
    #[serde(default, deserialize_with = "bounded_files")]
    pub files: Vec<RawOutputFile>,
}

/// Most named counts an execution may return.
pub(crate) const MAX_COUNTS: usize = 1_024;
/// Longest count name kept; longer ones are dropped.
pub(crate) const MAX_COUNT_NAME_BYTES: usize = 128;
/// Longest exception type name kept.
pub(crate) const MAX_EXCEPTION_KIND_BYTES: usize = 256;
/// Longest trailing-expression repr kept (the guest cuts at 100,000 characters).
pub(crate) const MAX_VALUE_REPR_BYTES: usize = 400_000;
/// Longest fault message kept from the guest.
pub(crate) const MAX_FAULT_MESSAGE_BYTES: usize = 4_096;

impl DoneFrame {
    /// The frame held to the output limits on the host's side: the guest's own cuts are not
    /// trusted. Every text is cut at `max_text` bytes (the execution's `max_output_bytes`).
    pub(crate) fn bounded(mut self, max_text: usize) -> Self {
        self.value_repr = self.value_repr.map(|repr| cut_text(repr, max_text.min(MAX_VALUE_REPR_BYTES)));
        self.error = self.error.map(|e| PythonError {
            kind: cut_text(e.kind, MAX_EXCEPTION_KIND_BYTES),
            message: cut_text(e.message, max_text),
            traceback: cut_text(e.traceback, max_text),
        });
        // Counts were bounded as they were parsed.
        self
    }
}

/// `text` cut to at most `max` bytes at a character boundary, with a marker saying how much
/// was left out (the marker may take the text a little past `max`).
pub(crate) fn cut_text(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let dropped = text.len() - text.floor_char_boundary(max);
    text.truncate(text.floor_char_boundary(max));
    text.push_str(&format!("...[sluice: cut, {dropped} more bytes]"));
    text
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
pub(crate) struct PendingFrame {
    /// Refused past [`MAX_CALLS_PER_FRAME`] while parsing, before the host keeps them all.
    #[serde(deserialize_with = "bounded_calls")]
    pub calls: Vec<RawCall>,
    /// The guest's numbers of calls it no longer waits for.
    #[serde(default)]
    pub cancelled: Vec<u64>,
    #[serde(default)]
    pub wake_after_ns: Option<u64>,
}

/// `[seq, name, input]`, where seq is the guest's own number for the call (only a token to
/// match results with: the host numbers calls itself) and input is the arguments' JSON text,
/// encoded by the guest when the call was made.
#[derive(Debug, Deserialize)]
pub(crate) struct RawCall(pub u64, pub String, pub String);

/// A call as the guest made it, checked and parsed; the container gives it the host's number.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GuestCall {
    pub guest_seq: u64,
    pub name: String,
    pub input: serde_json::Map<String, serde_json::Value>,
    pub refusal: Option<ToolFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrameError {
    #[error("guest frame is not valid: {0}")]
    Malformed(String),
    #[error("guest frame carries {0} calls, more than {MAX_CALLS_PER_FRAME}")]
    TooManyCalls(usize),
    #[error(transparent)]
    Memory(#[from] GuestMemoryError),
}

fn bounded_calls<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<RawCall>, D::Error> {
    bounded_seq::<RawCall, MAX_CALLS_PER_FRAME, D>(deserializer, "calls")
}

fn bounded_files<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<RawOutputFile>, D::Error> {
    bounded_seq::<RawOutputFile, MAX_OUTPUT_FILES, D>(deserializer, "output files")
}

/// A list refused as soon as it passes `MAX` items, before the host holds them all.
fn bounded_seq<'de, T: Deserialize<'de>, const MAX: usize, D: serde::Deserializer<'de>>(
    deserializer: D,
    what: &'static str,
) -> Result<Vec<T>, D::Error> {
    struct Bounded<T, const MAX: usize>(&'static str, std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const MAX: usize> serde::de::Visitor<'de> for Bounded<T, MAX> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "at most {MAX} {}", self.0)
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                if items.len() == MAX {
                    return Err(serde::de::Error::custom(format!("more than {MAX} {}", self.0)));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Bounded::<T, MAX>(what, std::marker::PhantomData))
}

fn bounded_counts<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, serde_json::Number>, D::Error> {
    struct Counts;
    impl<'de> serde::de::Visitor<'de> for Counts {
        type Value = BTreeMap<String, serde_json::Number>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a map of counts")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut counts = BTreeMap::new();
            while let Some(name) = map.next_key::<String>()? {
                if counts.len() < MAX_COUNTS && name.len() <= MAX_COUNT_NAME_BYTES {
                    counts.insert(name, map.next_value()?);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(counts)
        }
    }
    deserializer.deserialize_map(Counts)
}

impl Response {
    /// Reads the frame's `kind` first, then the frame as that kind: serde's internally tagged
    /// enums buffer the whole frame into an intermediate tree to find the tag, which cost more
    /// than reading a small frame twice (every tool call hands the host one).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, FrameError> {
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        let malformed = |e: serde_json::Error| FrameError::Malformed(e.to_string());
        let Kind { kind } = serde_json::from_slice(bytes).map_err(malformed)?;
        match &*kind {
            "pending" => serde_json::from_slice(bytes).map(Self::Pending).map_err(malformed),
            "done" => serde_json::from_slice(bytes).map(Self::Done).map_err(malformed),
            // Rare: a fault, or a kind no guest should send (the tagged enum names it).
            _ => serde_json::from_slice(bytes).map_err(malformed),
        }
    }
}

impl PendingFrame {
    /// Checks every guest-given size, then parses each call's arguments. `argument_budget`
    /// is the argument text the execution may still send; accepted calls spend it.
    pub(crate) fn into_calls(self, argument_budget: &mut u64) -> Result<Vec<GuestCall>, FrameError> {
        if self.calls.len() > MAX_CALLS_PER_FRAME {
            return Err(FrameError::TooManyCalls(self.calls.len()));
        }
        let calls = self
            .calls
            .into_iter()
            .map(|RawCall(guest_seq, mut name, input)| {
                if name.len() > MAX_TOOL_NAME_BYTES {
                    let message = format!("a tool name of {} bytes is longer than {MAX_TOOL_NAME_BYTES}", name.len());
                    name.truncate(name.floor_char_boundary(MAX_TOOL_NAME_BYTES));
                    return GuestCall::refused(guest_seq, name, message);
                }
                match parse_arguments(&name, &input, *argument_budget) {
                    Ok(parsed) => {
                        *argument_budget -= input.len() as u64;
                        GuestCall { guest_seq, name, input: parsed, refusal: None }
                    }
                    // A malformed call is the script's mistake, answered as an error it can
                    // catch; the rest of the frame stands.
                    Err(message) => GuestCall::refused(guest_seq, name, message),
                }
            })
            .collect();
        Ok(calls)
    }
}

impl GuestCall {
    fn refused(guest_seq: u64, name: String, message: String) -> Self {
        let refusal = Some(ToolFailure::new(FailureCode::InvalidInput, message));
        Self { guest_seq, name, input: serde_json::Map::new(), refusal }
    }
}

/// One call's arguments, checked against every bound before and after parsing.
fn parse_arguments(name: &str, input: &str, budget: u64) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    if input.len() > MAX_TOOL_INPUT_BYTES {
        return Err(format!("arguments of {name} are {} bytes, more than {MAX_TOOL_INPUT_BYTES}", input.len()));
    }
    if input.len() as u64 > budget {
        return Err(format!(
            "arguments of {name} ({} bytes) would take this execution's arguments past \
             {MAX_ARGUMENT_BYTES_PER_EXECUTION} bytes",
            input.len()
        ));
    }
    let value: serde_json::Value =
        serde_json::from_str(input).map_err(|e| format!("arguments of {name} are not valid JSON: {e}"))?;
    let shape = crate::json::shape(&value);
    if shape.depth > crate::json::MAX_DEPTH {
        return Err(format!(
            "arguments of {name} nest {} levels deep, more than {}",
            shape.depth,
            crate::json::MAX_DEPTH
        ));
    }
    if shape.values > MAX_TOOL_INPUT_VALUES {
        return Err(format!("arguments of {name} hold {} values, more than {MAX_TOOL_INPUT_VALUES}", shape.values));
    }
    match value {
        serde_json::Value::Object(map) => Ok(map),
        _ => Err(format!("arguments of {name} are not a JSON object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_frames_are_checked_before_use() {
        let frame = r#"{"kind":"pending","calls":[[0,"t","{\"a\":1}"]],"cancelled":[],"wake_after_ns":null}"#;
        let Response::Pending(pending) = Response::parse(frame.as_bytes()).unwrap() else { panic!("not pending") };
        let mut budget = MAX_ARGUMENT_BYTES_PER_EXECUTION;
        let calls = pending.into_calls(&mut budget).unwrap();
        assert_eq!(calls[0].input["a"], 1);
        assert_eq!(budget, MAX_ARGUMENT_BYTES_PER_EXECUTION - 7, "accepted arguments spend the budget");

        let not_object = r#"{"kind":"pending","calls":[[0,"t","[1]"]]}"#;
        let Response::Pending(pending) = Response::parse(not_object.as_bytes()).unwrap() else { panic!() };
        assert_eq!(
            pending.into_calls(&mut budget).unwrap()[0].refusal.as_ref().unwrap().code,
            crate::call::FailureCode::InvalidInput
        );

        let long_name = format!(r#"{{"kind":"pending","calls":[[0,"{}","{{}}"]]}}"#, "x".repeat(500));
        let Response::Pending(pending) = Response::parse(long_name.as_bytes()).unwrap() else { panic!() };
        let call = &pending.into_calls(&mut budget).unwrap()[0];
        assert_eq!((call.name.len(), call.refusal.is_some()), (MAX_TOOL_NAME_BYTES, true));

        assert!(matches!(Response::parse(b"{\"kind\":\"boom\"}"), Err(FrameError::Malformed(_))));
    }

    fn one_call(input: &str, budget: &mut u64) -> GuestCall {
        let frame = serde_json::json!({"kind": "pending", "calls": [[u64::MAX, "t", input]]});
        let Response::Pending(pending) = Response::parse(frame.to_string().as_bytes()).unwrap() else { panic!() };
        pending.into_calls(budget).unwrap().remove(0)
    }

    /// Item 3 of the security review: arguments nested 127 levels deep were accepted, stored
    /// inside an event, and could then never be read back.
    #[test]
    fn item03_over_deep_arguments_are_refused_in_the_frame_parser() {
        let deep = |levels: usize| format!("{{\"v\": {}1{}}}", "[".repeat(levels - 2), "]".repeat(levels - 2));
        let mut budget = MAX_ARGUMENT_BYTES_PER_EXECUTION;
        let refused = one_call(&deep(127), &mut budget);
        let refusal = refused.refusal.expect("refused");
        assert_eq!(refusal.code, crate::call::FailureCode::InvalidInput);
        assert!(refusal.message.contains("nest 127 levels"), "{}", refusal.message);
        assert_eq!(budget, MAX_ARGUMENT_BYTES_PER_EXECUTION, "a refused call spends nothing");
        assert!(one_call(&deep(crate::json::MAX_DEPTH), &mut budget).refusal.is_none());
    }

    /// Item 10: arguments are bounded per call (values) and per execution (bytes) before the
    /// host keeps them.
    #[test]
    fn item10_arguments_are_bounded_per_call_and_per_execution() {
        let many = format!("{{\"v\": [{}0]}}", "0,".repeat(MAX_TOOL_INPUT_VALUES));
        let mut budget = MAX_ARGUMENT_BYTES_PER_EXECUTION;
        assert!(one_call(&many, &mut budget).refusal.unwrap().message.contains("values"));
        let mut nearly_spent = 10;
        let refusal = one_call(r#"{"text": "more than ten bytes"}"#, &mut nearly_spent).refusal.unwrap();
        assert!(refusal.message.contains("past"), "{}", refusal.message);
        assert_eq!(nearly_spent, 10);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2_000, failure_persistence: None, ..Default::default() })]

        /// Whatever bytes the guest hands over, parsing them never panics.
        #[test]
        fn any_guest_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            if let Ok(Response::Pending(pending)) = Response::parse(&bytes) {
                let _ = pending.into_calls(&mut MAX_ARGUMENT_BYTES_PER_EXECUTION.clone());
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
            let parsed = pending.into_calls(&mut MAX_ARGUMENT_BYTES_PER_EXECUTION.clone()).unwrap();
            proptest::prop_assert_eq!(parsed.len(), calls.len());
            for call in parsed {
                proptest::prop_assert!(call.name.len() <= MAX_TOOL_NAME_BYTES);
            }
        }
    }

    /// Item 9: the host enforces every output cap on the guest's final frame itself.
    #[test]
    fn item09_final_frames_are_cut_to_the_output_limit_by_the_host() {
        let frame = serde_json::json!({
            "kind": "done", "return_code": 1, "value_repr": "v".repeat(15 << 20),
            "error": {"type": "E".repeat(10_000), "message": "m".repeat(30 << 20), "traceback": "t".repeat(1000)},
            "counts": (0..5000).map(|i| (format!("c{i}"), serde_json::json!(i))).collect::<serde_json::Map<_, _>>(),
        });
        let Response::Done(done) = Response::parse(frame.to_string().as_bytes()).unwrap() else { panic!() };
        let done = done.bounded(1024);
        assert!(done.value_repr.unwrap().len() < 1100);
        let error = done.error.unwrap();
        assert!(error.message.len() < 1100 && error.message.ends_with("more bytes]"));
        assert!(error.kind.len() < MAX_EXCEPTION_KIND_BYTES + 50);
        assert_eq!(error.traceback.len(), 1000, "what fits is kept whole");
        assert_eq!(done.counts.len(), MAX_COUNTS);
        assert_eq!(cut_text("aé".into(), 2), "a...[sluice: cut, 2 more bytes]");
    }

    #[test]
    fn answer_frames_carry_texts_beside_the_json() {
        let answered = [
            CallResult::ok(3, "{\"a\": \"é\"}\n"),
            CallResult::failed(4, ToolFailure::new(FailureCode::Timeout, "late")),
            CallResult::ok(5, "x"),
        ];
        let results: Vec<WireResult> =
            answered.iter().map(|result| WireResult { guest_seq: result.seq, result }).collect();
        let frame = answer_frame(&results, &[]);
        let newline = frame.iter().position(|&b| b == b'\n').unwrap();
        let json: serde_json::Value = serde_json::from_slice(&frame[..newline]).unwrap();
        assert_eq!(json["op"], "resume");
        assert_eq!(json["results"][0], serde_json::json!([3, 12, 11]), "bytes, then characters");
        assert_eq!(json["results"][1][1], serde_json::Value::Null);
        assert_eq!(json["results"][1][2]["code"], "timeout");
        assert_eq!(json["results"][2], serde_json::json!([5, 1, 1]));
        assert_eq!(&frame[newline + 1..], "{\"a\": \"é\"}\nx".as_bytes());
    }

    /// The guest reads a lone call's answer without a JSON parser when it is exactly this
    /// (`lone_result_text` in the guest crate); any other shape still works, the slow way.
    #[test]
    fn a_lone_answer_has_the_shape_the_guest_matches() {
        let answered = CallResult::ok(17, "42");
        let frame = answer_frame(&[WireResult { guest_seq: 9, result: &answered }], &[]);
        assert_eq!(
            frame,
            br#"{"op":"resume","results":[[9,2,2]]}
42"#
        );
    }

    #[test]
    fn frames_parse_by_kind_and_refuse_unknown_kinds() {
        let pending = br#"{"kind":"pending","calls":[[0,"get","{}"]],"cancelled":[],"wake_after_ns":null}"#;
        let Response::Pending(frame) = Response::parse(pending).unwrap() else { panic!("a pending frame") };
        assert_eq!(frame.calls.len(), 1);
        let Response::Fault { message } = Response::parse(br#"{"message":"m","kind":"fault"}"#).unwrap() else {
            panic!("a fault")
        };
        assert_eq!(message, "m");
        assert!(matches!(Response::parse(br#"{"kind":"other"}"#), Err(FrameError::Malformed(_))));
        assert!(matches!(Response::parse(br#"{"calls":[]}"#), Err(FrameError::Malformed(_))));
        assert!(matches!(Response::parse(br#"{"kind":"done"}"#), Err(FrameError::Malformed(_))));
    }
}
