//! The sandbox's Rust API: pauses and results, rollback, isolation and determinism.

use crate::common;

use sluice::{CallResult, GuestTool, Pending, ToolFailure};
use sluice::{Container, ExecuteRequest, Limits, Outcome, Step};
use std::time::{Duration, Instant};

fn tool(name: &str) -> GuestTool {
    GuestTool { name: name.into(), params: vec![], description: None, answered_in_place: false }
}

async fn container() -> Container {
    common::sandbox().create_container().await.expect("container")
}

async fn run(container: &mut Container, code: &str) -> Outcome {
    run_with(container, code, Limits::default()).await
}

async fn run_with(container: &mut Container, code: &str, limits: Limits) -> Outcome {
    let request = ExecuteRequest { code, tools: &[], files: &[], limits, now_ns: None };
    finished(container.execute(request).await.expect("execute"))
}

fn finished(step: Step) -> Outcome {
    match step {
        Step::Finished(outcome) => outcome,
        Step::Pending(p) => panic!("unexpected pause: {p:?}"),
    }
}

/// Starts `code` with the given tools and expects it to pause on tool calls.
async fn pause(container: &mut Container, code: &str, tools: &[GuestTool], limits: Limits) -> Pending {
    let request = ExecuteRequest { code, tools, files: &[], limits, now_ns: None };
    match container.execute(request).await.expect("execute") {
        Step::Pending(pending) => pending,
        Step::Finished(outcome) => panic!("expected a pause, got {outcome:?}"),
    }
}

async fn resume(container: &mut Container, results: &[CallResult]) -> Outcome {
    finished(container.resume(results, &[], None).await.expect("resume"))
}

#[tokio::test]
async fn state_persists_and_trailing_expression_is_returned() {
    let mut c = container().await;
    let first = run(&mut c, "x = 1 + 1\ndef double(v):\n    return v * 2\nimport math").await;
    assert_eq!((first.return_code, first.value_repr.as_deref()), (0, None));
    let second = run(&mut c, "double(x) + math.floor(2.5)").await;
    assert_eq!(second.value_repr.as_deref(), Some("6"));
    let none = run(&mut c, "None").await;
    assert_eq!(none.value_repr, None);
    assert_eq!(c.executions(), 3);
}

/// A cell is compiled whole (its trailing expression returned by the code): a trailing
/// definition or block gives no value, an error in the trailing expression names its own
/// line, and a cell that does not parse runs none of its statements.
#[tokio::test]
async fn only_a_trailing_expression_gives_a_value() {
    let mut c = container().await;
    assert_eq!(run(&mut c, "y = 3\ndef f():\n    return y").await.value_repr, None);
    assert_eq!(run(&mut c, "class K:\n    pass").await.value_repr, None);
    assert_eq!(run(&mut c, "if y:\n    z = y * 2").await.value_repr, None);
    assert_eq!(run(&mut c, "w = f()\nw + z").await.value_repr.as_deref(), Some("9"));
    let failed = run(&mut c, "a = 1\nb = 2\n\n1 / (a - 1)").await;
    assert_eq!(failed.return_code, 1);
    assert!(failed.stderr.contains("line 4") && failed.stderr.contains("ZeroDivisionError"), "{}", failed.stderr);
    let broken = run(&mut c, "ran = True\n(1 +").await;
    assert!(broken.stderr.contains("SyntaxError"), "{}", broken.stderr);
    assert_eq!(run(&mut c, "'ran' in globals()").await.value_repr.as_deref(), Some("False"));
    // What only a module's compilation sets up still is: a docstring, annotations at module
    // level (in a block or not), a `__future__` import; each with a trailing expression.
    assert_eq!(run(&mut c, "'the doc'\nq = 1\nq").await.value_repr.as_deref(), Some("1"));
    assert_eq!(run(&mut c, "__doc__").await.value_repr.as_deref(), Some("'the doc'"));
    assert_eq!(run(&mut c, "n: int = 5\nif n:\n    m: int = n + 1\nm").await.value_repr.as_deref(), Some("6"));
    let future = run(&mut c, "from __future__ import annotations\nk: Undefined = 2\nk").await;
    assert_eq!((future.value_repr.as_deref(), future.stderr.as_str()), (Some("2"), ""));
}

#[tokio::test]
async fn gather_pauses_once_with_every_call_and_resumes_with_results() {
    let mut c = container().await;
    let tools = [tool("fetch")];
    let code = "import asyncio\nr = await asyncio.gather(*(fetch({'i': i}) for i in range(5)))\nprint(r)";
    let pending = pause(&mut c, code, &tools, Limits::default()).await;
    assert_eq!(pending.calls.len(), 5);
    assert!(!pending.blocking, "top-level await returns to the host");
    assert_eq!(pending.calls[3].input["i"], 3);
    assert!(c.is_running());
    // A second execution while one is in flight is refused.
    let busy =
        c.execute(ExecuteRequest { code: "1", tools: &[], files: &[], limits: Limits::default(), now_ns: None }).await;
    assert!(matches!(busy, Err(sluice::SandboxError::Busy)));
    // Answer in reverse order; results are matched by seq.
    let results: Vec<CallResult> =
        pending.calls.iter().rev().map(|c| CallResult::ok(c.seq, format!("r{}", c.input["i"]))).collect();
    let outcome = resume(&mut c, &results).await;
    assert_eq!(outcome.stdout, "['r0', 'r1', 'r2', 'r3', 'r4']\n");
    assert_eq!(outcome.tool_calls, 5);
    assert!(!c.is_running());
}

#[tokio::test]
async fn error_results_raise_typed_exceptions_with_code_and_details() {
    let mut c = container().await;
    let tools = [tool("charge")];
    let code = "import sluice\ntry:\n    await charge({})\nexcept sluice.ToolInputError as e:\n    print(type(e).__name__, e.code, e.details['pointer'], e)";
    let p = pause(&mut c, code, &tools, Limits::default()).await;
    let mut failure = ToolFailure::new(sluice::FailureCode::InvalidInput, "amount must be a number");
    failure.details = serde_json::json!({"pointer": "/amount"});
    let outcome = resume(&mut c, &[CallResult::failed(p.calls[0].seq, failure)]).await;
    assert_eq!(outcome.stdout, "ToolInputError invalid_input /amount amount must be a number\n");
}

#[tokio::test]
async fn pending_timeout_surfaces_as_timeout_error_in_the_script() {
    let mut c = container().await;
    let tools = [tool("slow")];
    let code = "try:\n    await slow({})\nexcept TimeoutError as e:\n    print('TimeoutError', type(e).__name__)";
    let p = pause(&mut c, code, &tools, Limits::default()).await;
    let late = CallResult::failed(
        p.calls[0].seq,
        ToolFailure::new(sluice::FailureCode::Timeout, "no answer within 270000 ms"),
    );
    let outcome = resume(&mut c, &[late]).await;
    assert_eq!(outcome.stdout, "TimeoutError ToolTimeoutError\n");
}

#[tokio::test]
async fn time_waiting_for_tools_does_not_count_against_the_time_limit() {
    let mut c = container().await;
    let tools = [tool("slow")];
    let limits = Limits { time_ms: 300, ..Limits::default() };
    let code = "print(await slow({}))";
    let p = pause(&mut c, code, &tools, limits).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let outcome = resume(&mut c, &[CallResult::ok(p.calls[0].seq, "done")]).await;
    assert_eq!((outcome.stdout.as_str(), outcome.stop.as_ref()), ("done\n", None));
    assert!(outcome.run_time < Duration::from_millis(300), "{:?}", outcome.run_time);
}

#[tokio::test]
async fn blocking_path_reports_pending_calls_and_resumes() {
    let mut c = container().await;
    let tools = [tool("fetch")];
    let code = "import asyncio\ndef helper():\n    return asyncio.run(fetch({}))\nprint(helper())";
    let p = pause(&mut c, code, &tools, Limits::default()).await;
    assert!(p.blocking, "a loop inside a function call waits in the host");
    let outcome = resume(&mut c, &[CallResult::ok(p.calls[0].seq, "blocked-ok")]).await;
    assert_eq!(outcome.stdout, "blocked-ok\n");
    // The container is usable afterwards and kept the function.
    assert_eq!(run(&mut c, "helper.__name__").await.value_repr.as_deref(), Some("'helper'"));
}

/// Awaits `code`'s calls one pause at a time, answering each with `answer`; the outcome and
/// whether each pause waited inside the guest's call (`blocking`).
async fn answer_each(
    container: &mut Container,
    code: &str,
    tools: &[GuestTool],
    answer: impl Fn(&sluice::ToolCall) -> CallResult,
) -> (Outcome, Vec<bool>) {
    let request = ExecuteRequest { code, tools, files: &[], limits: Limits::default(), now_ns: None };
    let mut step = container.execute(request).await.expect("execute");
    let mut blocking = Vec::new();
    loop {
        match step {
            Step::Finished(outcome) => return (outcome, blocking),
            Step::Pending(pending) => {
                blocking.push(pending.blocking);
                let results: Vec<CallResult> = pending.calls.iter().map(&answer).collect();
                step = container.resume(&results, &[], None).await.expect("resume");
            }
        }
    }
}

#[tokio::test]
async fn a_lone_awaited_call_to_a_tool_answered_in_place_waits_in_the_host() {
    let mut c = container().await;
    let lookup = GuestTool { answered_in_place: true, ..tool("lookup") };
    let tools = [lookup, tool("fetch")];
    let by_input = |call: &sluice::ToolCall| match call.input.get("i").and_then(|i| i.as_i64()) {
        Some(i) => CallResult::ok(call.seq, (i * 10).to_string()),
        None => CallResult::failed(call.seq, ToolFailure::new(sluice::FailureCode::InvalidInput, "no i")),
    };
    let sequential = "total = 0\nfor i in range(3):\n    total += int(await lookup({'i': i}))\nprint(total)";
    let (outcome, blocking) = answer_each(&mut c, sequential, &tools, by_input).await;
    assert_eq!((outcome.stdout.as_str(), outcome.tool_calls), ("30\n", 3));
    assert_eq!(blocking, [true, true, true], "each call is asked for from inside the guest");

    // Failures arrive as the same typed exceptions; a tool the caller answers still pauses
    // with the guest returned to the host, so the container could be saved meanwhile.
    let mixed = "import sluice\ntry:\n    await lookup({})\nexcept sluice.ToolInputError as e:\n    print(e.code, e)\nprint(await fetch({'i': 4}))";
    let (outcome, blocking) = answer_each(&mut c, mixed, &tools, by_input).await;
    assert_eq!(outcome.stdout, "invalid_input no i\n40\n");
    assert_eq!(blocking, [true, false]);

    // With another task ready to run, the call waits its turn in the loop: both calls go out
    // in one pause.
    let concurrent = "import asyncio\nt = asyncio.create_task(lookup({'i': 1}))\nmine = await lookup({'i': 2})\nprint(mine, await t)";
    let (outcome, blocking) = answer_each(&mut c, concurrent, &tools, by_input).await;
    assert_eq!(outcome.stdout, "20 10\n");
    assert_eq!(blocking, [false]);
    assert!(c.snapshot(serde_json::Value::Null).await.is_ok(), "nothing is left waiting in the guest");
}

#[tokio::test]
async fn a_call_awaited_natively_keeps_the_manners_of_a_coroutine() {
    // A lone call in place is awaited by the native `ToolCall.__await__`: the object must
    // still read as a coroutine, refuse a second await, carry its argument error to the
    // await, take weak references, and go through `create_task` as before.
    let mut c = container().await;
    let tools = [GuestTool { answered_in_place: true, ..tool("lookup") }];
    let by_input =
        |call: &sluice::ToolCall| CallResult::ok(call.seq, (call.input["i"].as_i64().unwrap() * 10).to_string());
    let script = "import asyncio, inspect, weakref
call = lookup({'i': 1})
print(asyncio.iscoroutine(call), repr(call), weakref.ref(call)() is call, inspect.iscoroutinefunction(lookup))
print(await call)
try:
    await call
except RuntimeError as e:
    print('RuntimeError', e)
try:
    await lookup({'i': {1, 2}})
except TypeError as e:
    print('TypeError', 'JSON' in str(e))
task = asyncio.create_task(lookup({'i': 3}))
print(await task, await lookup(i=4))";
    let (outcome, blocking) = answer_each(&mut c, script, &tools, by_input).await;
    assert_eq!(outcome.return_code, 0, "{}", outcome.stderr);
    assert_eq!(
        outcome.stdout,
        "True <tool call lookup> True True\n10\nRuntimeError cannot reuse already awaited coroutine\nTypeError True\n30 40\n"
    );
    assert_eq!(outcome.tool_calls, 3, "the bad arguments never left the guest");
    assert_eq!(blocking.len(), 3);
}

#[tokio::test]
async fn a_native_tool_reads_as_an_async_function_and_binds_every_way_of_calling() {
    // A tool's global is `_sluice_abi.Tool` (one dict in: the call is made natively): it must
    // still look like the async function it replaced, and every other way of calling must
    // bind as before, a dict that is not JSON data and unknown arguments included.
    let mut c = container().await;
    let spec = GuestTool { answered_in_place: true, params: vec!["i".into(), "j".into()], ..tool("lookup") };
    let tools = [GuestTool { description: Some("Looks it up.".into()), ..spec }];
    let echo = |call: &sluice::ToolCall| CallResult::ok(call.seq, serde_json::to_string(&call.input).unwrap());
    let script = "import asyncio, collections, inspect
print(lookup.__name__, lookup.__qualname__, lookup.__doc__, repr(lookup))
print(inspect.iscoroutinefunction(lookup), asyncio.iscoroutinefunction(lookup), callable(lookup))
print(inspect.signature(lookup))
print(await lookup({'i': 1}), await lookup(2, 3), await lookup(i=4), await lookup(5, j=6))
print(await lookup(collections.OrderedDict(i=7)), await lookup({}))
for bad in (lambda: lookup({'i': {1}}), lambda: lookup(1, 2, 3), lambda: lookup(1, i=2), lambda: lookup(i={1})):
    try:
        await bad()
    except TypeError as e:
        print('TypeError', str(e).split(':')[0])";
    let (outcome, _) = answer_each(&mut c, script, &tools, echo).await;
    assert_eq!(outcome.return_code, 0, "{}", outcome.stderr);
    assert_eq!(
        outcome.stdout,
        "lookup lookup Looks it up. <tool lookup>\nTrue True True\n(*args, **kwargs)\n\
         {\"i\":1} {\"i\":2,\"j\":3} {\"i\":4} {\"i\":5,\"j\":6}\n{\"i\":7} {}\n\
         TypeError lookup() arguments must be JSON data\n\
         TypeError lookup() takes one dict or up to 2 positional arguments\n\
         TypeError lookup() got multiple values for argument 'i'\n\
         TypeError lookup() arguments must be JSON data\n"
    );
    assert_eq!(outcome.tool_calls, 6, "calls whose arguments did not bind never left the guest");
}

#[tokio::test]
async fn each_cell_sees_the_tools_its_request_sends_and_only_those() {
    // A cell binds what its request names: a tool the next request drops is gone, one the
    // script overwrote is bound again, and a cell without tools after one without tools
    // (the step skipped when nothing is bound) still sees none.
    let mut c = container().await;
    let probe = "print(sorted(n for n in ('lookup', 'fetch') if callable(globals().get(n))))";
    let mut cell = async |code: &str, tools: &[GuestTool]| {
        let request = ExecuteRequest { code, tools, files: &[], limits: Limits::default(), now_ns: None };
        let outcome = finished(c.execute(request).await.expect("execute"));
        assert_eq!(outcome.return_code, 0, "{}", outcome.stderr);
        outcome.stdout
    };
    assert_eq!(cell(probe, &[]).await, "[]\n");
    assert_eq!(cell(probe, &[tool("lookup"), tool("fetch")]).await, "['fetch', 'lookup']\n");
    assert_eq!(cell(&format!("lookup = 5\n{probe}"), &[tool("lookup"), tool("fetch")]).await, "['fetch']\n");
    assert_eq!(cell(probe, &[tool("lookup"), tool("fetch")]).await, "['fetch', 'lookup']\n");
    assert_eq!(cell(probe, &[tool("fetch")]).await, "['fetch']\n");
    assert_eq!(cell(probe, &[]).await, "[]\n");
    assert_eq!(cell(probe, &[]).await, "[]\n");
    assert_eq!(cell(probe, &[tool("lookup")]).await, "['lookup']\n");
}

#[tokio::test]
async fn result_texts_reach_the_script_unchanged_in_place_and_through_a_resume() {
    // Results travel as raw text after the frame's JSON: nothing in a text may read as frame,
    // and a failure among texts must not shift the texts after it.
    let big = "{\"k\": \"v\\\"\"}\n".repeat(20_000);
    let texts = ["", "a\nb", "{\"k\": \"é\"}", "😀\u{0}\"\\\n", big.as_str()];
    let mut c = container().await;
    let tools = [GuestTool { answered_in_place: true, ..tool("lookup") }, tool("fetch")];
    let by_input = |call: &sluice::ToolCall| match texts.get(call.input["i"].as_u64().unwrap() as usize) {
        Some(text) => CallResult::ok(call.seq, *text),
        None => CallResult::failed(call.seq, ToolFailure::new(sluice::FailureCode::Timeout, "late")),
    };
    // Each text's length and a checksum that changes with any character or its place.
    let checksum = |text: &str| -> u64 { text.chars().enumerate().map(|(k, c)| c as u64 * (k as u64 + 1)).sum() };
    let script = "import asyncio
def checksum(text):
    return sum(ord(c) * (k + 1) for k, c in enumerate(text))
def show(text):
    print(type(text).__name__ if not isinstance(text, str) else (len(text), checksum(text)))
for i in range(5):
    show(await lookup({'i': i}))
show(await fetch({'i': 1}))
for text in await asyncio.gather(*(fetch({'i': i}) for i in [4, 3, 9, 2, 1, 0]), return_exceptions=True):
    show(text)";
    let (outcome, blocking) = answer_each(&mut c, script, &tools, by_input).await;
    assert_eq!(outcome.return_code, 0, "{}", outcome.stderr);
    assert_eq!(blocking, [true, true, true, true, true, false, false]);
    let show = |i: usize| format!("({}, {})\n", texts[i].chars().count(), checksum(texts[i]));
    let mut expected: String = (0..5).map(show).collect();
    expected += &show(1);
    expected += &[show(4), show(3), "ToolTimeoutError\n".into(), show(2), show(1), show(0)].concat();
    assert_eq!(outcome.stdout, expected);
}

#[tokio::test]
async fn a_stopped_execution_rolls_back_even_after_earlier_tool_calls() {
    let mut c = container().await;
    let tools = [tool("fetch")];
    let setup = "import random\nrows = [await fetch({})]\nstate = {'n': 1}\nr = random.random()";
    let p = pause(&mut c, setup, &tools, Limits::default()).await;
    let done = resume(&mut c, &[CallResult::ok(p.calls[0].seq, "row")]).await;
    assert_eq!(done.return_code, 0);
    let before = run(&mut c, "(rows, state, r)").await.value_repr;

    let limits = Limits { time_ms: 200, ..Limits::default() };
    let stopped = run_with(&mut c, "state['n'] = 2\nrows.append('x')\nwhile True:\n    pass", limits).await;
    assert_eq!(stopped.stop.as_ref().map(|s| s.code()), Some("execution_time_exceeded"));
    assert_ne!(stopped.return_code, 0);
    assert!(stopped.stderr.contains("execution_time_exceeded"));

    let after = run(&mut c, "(rows, state, r)").await.value_repr;
    assert_eq!(after, before, "the container is exactly as before the stopped execution");
    // Randomness continues as it would have: the rebuilt container replayed the same draws.
    let next = run(&mut c, "random.random()").await.value_repr;
    assert!(next.is_some());
}

#[tokio::test]
async fn a_memory_bomb_is_stopped_and_memory_comes_back() {
    let mut c = container().await;
    run(&mut c, "keep = 'still here'").await;
    let baseline = c.memory_bytes();
    let limits = Limits { memory_bytes: 128 << 20, ..Limits::default() };
    let bomb = run_with(&mut c, "x = []\nwhile True:\n    x.append(bytearray(4 << 20))", limits).await;
    assert_eq!(bomb.stop.as_ref().map(|s| s.code()), Some("memory_limit_exceeded"));
    assert_eq!(run(&mut c, "keep").await.value_repr.as_deref(), Some("'still here'"));
    assert!(c.memory_bytes() <= baseline + (8 << 20), "rebuilt instance starts small again");
}

#[tokio::test]
async fn a_runaway_container_does_not_hold_up_another() {
    let sandbox = common::sandbox();
    let mut spinner = sandbox.create_container().await.unwrap();
    let mut worker = sandbox.create_container().await.unwrap();
    let limits = Limits { time_ms: 1_500, ..Limits::default() };
    let spin = tokio::spawn(async move { run_with(&mut spinner, "while True:\n    pass", limits).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let answer = run(&mut worker, "sum(i * i for i in range(1000))").await;
    assert_eq!(answer.value_repr.as_deref(), Some("332833500"));
    assert!(started.elapsed() < Duration::from_millis(1_000), "worker waited {:?}", started.elapsed());
    assert_eq!(spin.await.unwrap().stop.map(|s| s.code()), Some("execution_time_exceeded"));
}

#[tokio::test]
async fn the_shared_generator_is_seeded_per_container_however_it_is_first_reached() {
    // Every container draws its own numbers, from the shared generator and from a new
    // `Random()` alike (both were seeded from a generator whose state was in the image: every
    // container drew the same). The shared one is seeded on its first draw, not at every first
    // execution: a function imported by name must seed it too, an explicit seed must still
    // win, and after the first draw the module's functions are the generator's own again.
    let sandbox = common::sandbox();
    let code = "from random import choice\nimport random\nx = 1\n";
    let draw = "first = choice(range(10**9)), random.Random().random()\nrandom.seed(5)\n\
                print(first, random.random(), random.randint.__self__ is random._inst)";
    let mut outputs = Vec::new();
    for seed in [7, 7, 8] {
        let mut c = sandbox.create_container_with(uuid::Uuid::new_v4(), seed).await.unwrap();
        run(&mut c, code).await;
        outputs.push(run(&mut c, draw).await.stdout);
    }
    assert_eq!(outputs[0], outputs[1], "the same container seed draws the same");
    // `(shared draw, new Random's draw) ...`: each differs between the two container seeds.
    let draws = |out: &str| out[1..out.find(')').unwrap()].split(", ").map(str::to_owned).collect::<Vec<_>>();
    let (seven, eight) = (draws(&outputs[0]), draws(&outputs[2]));
    assert_eq!(seven.len(), 2, "{outputs:?}");
    assert!(seven.iter().zip(&eight).all(|(a, b)| a != b), "other seeds draw otherwise: {outputs:?}");
    assert!(outputs[0].ends_with(" 0.6229016948897019 True\n"), "{}", outputs[0]);
}

#[tokio::test]
async fn records_replaced_each_execution_cost_no_collection_but_cycles_are_still_collected() {
    // The image raises the young generation's threshold: 1,000 decoded records replaced per
    // execution used to cost a collection every other execution. Garbage cycles must still
    // be found once enough pile up.
    let sandbox = common::sandbox();
    let mut c = sandbox.create_container().await.unwrap();
    run(&mut c, "import gc, json\ntext = json.dumps([{'id': i} for i in range(1000)])").await;
    run(&mut c, "before = gc.get_stats()[0]['collections']").await;
    for _ in 0..6 {
        run(&mut c, "rows = json.loads(text)").await;
    }
    assert_eq!(run(&mut c, "print(gc.get_stats()[0]['collections'] - before)").await.stdout, "0\n");
    let cycles = "for i in range(30000):\n    a = []\n    a.append(a)\ndel a\n\
                  print(gc.get_stats()[0]['collections'] - before > 0)";
    assert_eq!(run(&mut c, cycles).await.stdout, "True\n");
}

#[tokio::test]
async fn freed_small_objects_serve_new_ones_and_go_back_to_malloc_for_a_large_buffer() {
    // The guest keeps freed small blocks on free lists by size (small_blocks.rs). They must
    // serve the next small objects; and when malloc runs out, chunks whose blocks are all free
    // must go back to it: under a 128 MiB limit, after some 60 MiB of dicts are dropped, a
    // 40 MiB buffer fits only if they do.
    let mut c = container().await;
    let limits = Limits { memory_bytes: 128 << 20, ..Limits::default() };
    // 200,000 rows: about 63 MiB of small blocks (a record dict is smaller since its index
    // slots are 4 bytes, patch change 21; 150,000 were 57 MiB before, 49 after).
    let build = "rows = [{'id': i, 'name': str(i)} for i in range(200000)]\nheap = _sluice_abi.heap_stats()";
    let first = format!("import _sluice_abi\n{build}\nfirst = heap['chunk_bytes']\nprint(first > 50 << 20)\ndel rows");
    assert_eq!(run_with(&mut c, &first, limits).await.stdout, "True\n");
    let again = format!("{build}\nprint(heap['chunk_bytes'] - first < 1 << 20, heap['released_chunks'])\ndel rows");
    assert_eq!(run_with(&mut c, &again, limits).await.stdout, "True 0\n");
    let buffer =
        "big = bytearray(40 << 20)\nprint(len(big), _sluice_abi.heap_stats()['released_chunks'] > 100)\ndel big";
    assert_eq!(run_with(&mut c, buffer, limits).await.stdout, format!("{} True\n", 40 << 20));
    let rebuilt = "rows = [{'id': i} for i in range(100000)]\nprint(sum(row['id'] for row in rows))";
    assert_eq!(run_with(&mut c, rebuilt, limits).await.stdout, "4999950000\n");
}

#[tokio::test]
async fn decoded_keys_the_program_names_are_the_programs_own_strings() {
    // fast_json hands back the interned string for a key the code already names, so that
    // `row["status"]` matches the key by identity instead of comparing its bytes.
    let mut c = container().await;
    let code = "import json\nrow = json.loads('{\"status\": \"paid\", \"other\": 1}')\n\
                status = list(row)[0]\nprint(status is 'status', row['status'], row['other'])";
    assert_eq!(run(&mut c, code).await.stdout, "True paid 1\n");
}

#[tokio::test]
async fn same_seed_and_clock_give_the_same_output_and_other_seeds_differ() {
    let sandbox = common::sandbox();
    let code = "import random, uuid, time\nprint(random.random(), uuid.uuid4(), time.time())";
    let now = Some(1_780_000_000_000_000_000);
    let mut outputs = Vec::new();
    for seed in [7, 7, 8] {
        let mut c = sandbox.create_container_with(uuid::Uuid::new_v4(), seed).await.unwrap();
        let request = ExecuteRequest { code, tools: &[], files: &[], limits: Limits::default(), now_ns: now };
        outputs.push(finished(c.execute(request).await.unwrap()).stdout);
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_ne!(outputs[0], outputs[2]);
    assert!(outputs[0].trim_end().ends_with("1780000000.0"), "{}", outputs[0]);
}

#[tokio::test]
async fn guest_faults_are_contained() {
    let mut c = container().await;
    run(&mut c, "value = 41").await;
    let exit = run(&mut c, "import os\nos._exit(7)").await;
    assert_eq!(exit.stop.as_ref().map(|s| s.code()), Some("guest_exited"));
    assert_eq!(run(&mut c, "value + 1").await.value_repr.as_deref(), Some("42"));
}

#[tokio::test]
async fn a_snapshot_restores_state_and_the_random_stream() {
    let sandbox = common::sandbox();
    let mut original = sandbox.create_container().await.unwrap();
    run(&mut original, "import random\nclass Acc:\n    def __init__(self): self.items = []\nacc = Acc()\nacc.items.append(random.random())\ndef double(x): return 2 * x").await;
    let snapshot = original.snapshot(serde_json::json!({"kept": "with it"})).await.unwrap();
    assert!(snapshot.len() < 1 << 20, "a small session snapshots under 1 MB: {} bytes", snapshot.len());
    let (mut copy, host) = sandbox.restore_container(uuid::Uuid::new_v4(), original.id(), &snapshot).await.unwrap();
    assert_eq!(host["kept"], "with it", "the host's data comes back sealed with the state");
    let probe = "(len(acc.items), double(21), random.random())";
    assert_eq!(run(&mut copy, probe).await.value_repr, run(&mut original, probe).await.value_repr);
    // The copy rolls back to its restored state after a limit, like any container.
    let limits = Limits { time_ms: 150, ..Limits::default() };
    let stopped = run_with(&mut copy, "acc.items.clear()\nwhile True: pass", limits).await;
    assert_eq!(stopped.stop.map(|s| s.code()), Some("execution_time_exceeded"));
    assert_eq!(run(&mut copy, "len(acc.items)").await.value_repr.as_deref(), Some("1"));
}

#[tokio::test]
async fn an_open_database_survives_a_snapshot_and_rolls_back_with_its_container() {
    let sandbox = common::sandbox();
    let mut original = sandbox.create_container().await.unwrap();
    let setup = "import sqlite3\ndb = sqlite3.connect(':memory:')\ndb.execute('create table t (n integer, r integer)')\n\
                 db.executemany('insert into t values (?, random())', [(i,) for i in range(100)])\ndb.commit()";
    assert_eq!(run(&mut original, setup).await.return_code, 0);
    let snapshot = original.snapshot(serde_json::Value::Null).await.unwrap();
    let (mut copy, _) = sandbox.restore_container(uuid::Uuid::new_v4(), original.id(), &snapshot).await.unwrap();
    let probe = "db.execute('select count(*), sum(n), sum(r % 1000) from t').fetchone()";
    let in_copy = run(&mut copy, probe).await.value_repr;
    assert!(in_copy.as_deref().is_some_and(|v| v.starts_with("(100, 4950, ")), "{in_copy:?}");
    assert_eq!(in_copy, run(&mut original, probe).await.value_repr, "the same rows, random values included");
    let limits = Limits { time_ms: 150, ..Limits::default() };
    let stopped = run_with(&mut copy, "db.execute('delete from t')\ndb.commit()\nwhile True: pass", limits).await;
    assert_eq!(stopped.stop.map(|s| s.code()), Some("execution_time_exceeded"));
    assert_eq!(run(&mut copy, probe).await.value_repr, in_copy, "the delete rolled back with the container");
}

#[tokio::test]
async fn an_execution_waiting_for_tools_survives_a_snapshot() {
    let sandbox = common::sandbox();
    let mut c = sandbox.create_container().await.unwrap();
    let tools = [tool("fetch")];
    run(&mut c, "base = 40").await;
    let code = "import asyncio\nprint('before')\nparts = await asyncio.gather(fetch({'a': 1}), fetch({'a': 2}))\nprint(base + sum(int(p) for p in parts))";
    let pending = pause(&mut c, code, &tools, Limits::default()).await;
    let snapshot = c.snapshot(serde_json::Value::Null).await.unwrap();
    let id = c.id();
    drop(c);
    let (mut restored, _) = sandbox.restore_container(id, id, &snapshot).await.unwrap();
    assert!(restored.is_running());
    let results: Vec<CallResult> = pending.calls.iter().map(|call| CallResult::ok(call.seq, "1")).collect();
    let outcome = resume(&mut restored, &results).await;
    assert_eq!(outcome.stdout, "before\n42\n");
}

#[tokio::test]
async fn tampered_or_foreign_snapshots_are_refused() {
    let sandbox = common::sandbox();
    let mut c = sandbox.create_container().await.unwrap();
    run(&mut c, "secret = 1").await;
    let mut snapshot = c.snapshot(serde_json::Value::Null).await.unwrap();
    let other = uuid::Uuid::new_v4();
    let refused = sandbox.restore_container(other, other, &snapshot).await;
    assert!(
        matches!(refused, Err(sluice::SandboxError::Snapshot(_))),
        "a snapshot is never passed off as another container's"
    );
    let middle = snapshot.len() / 2;
    snapshot[middle] ^= 0x40;
    let refused = sandbox.restore_container(c.id(), c.id(), &snapshot).await;
    assert!(matches!(refused, Err(sluice::SandboxError::Snapshot(_))));
    assert!(sandbox.restore_container(c.id(), c.id(), b"not a snapshot").await.is_err());
}

#[tokio::test]
async fn a_script_inside_a_nested_loop_cannot_be_snapshotted() {
    let mut c = container().await;
    let tools = [tool("fetch")];
    let code = "import asyncio\ndef helper():\n    return asyncio.run(fetch({}))\nhelper()";
    let pending = pause(&mut c, code, &tools, Limits::default()).await;
    assert!(pending.blocking);
    assert!(matches!(c.snapshot(serde_json::Value::Null).await, Err(sluice::SandboxError::NotSnapshottable(_))));
}

#[tokio::test]
async fn a_profiling_sandbox_samples_named_guest_frames_only_while_started() {
    let profiler = sluice::GuestProfiler::new();
    let config = sluice::SandboxConfig { profiler: Some(profiler.clone()), max_containers: 2, ..Default::default() };
    let sandbox = sluice::Sandbox::new(config).await.expect("a profiling sandbox");
    let mut container = sandbox.create_container().await.expect("container");
    let busy = "total = 0\nfor i in range(300000):\n    total += i * i";
    run(&mut container, busy).await;
    assert!(profiler.stop().is_empty(), "nothing is sampled before start");

    profiler.start();
    let outcome = run(&mut container, &format!("{busy}\nprint(total)")).await;
    let stacks = profiler.stop();
    assert_eq!(outcome.stdout, "8999955000050000\n");
    let samples: u64 = stacks.iter().map(|(_, n)| n).sum();
    assert!(samples >= 5, "a busy loop of tens of milliseconds is sampled: {samples}");
    let named =
        stacks.iter().flat_map(|(stack, _)| stack).any(|f| f.contains("rustpython_vm") && f.contains("ExecutingFrame"));
    assert!(named, "frames carry the interpreter's function names");
    assert!(profiler.stop().is_empty(), "stop hands the samples over once");
}

/// The shared test sandbox runs as production does: its pool refills in the background, so
/// the other tests take ready containers.
#[tokio::test]
async fn the_shared_sandbox_keeps_its_pool_filled() {
    let sandbox = common::sandbox();
    let deadline = Instant::now() + Duration::from_secs(30);
    while sandbox.ready_now() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(sandbox.ready_now() > 0, "the pool refills while the tests run");
    let mut taken = Vec::new();
    while sandbox.ready_now() > 0 && taken.len() < 8 {
        taken.push(sandbox.create_container().await.expect("a container"));
    }
    assert_eq!(sandbox.ready_now(), 0, "taking containers empties the pool");
    let deadline = Instant::now() + Duration::from_secs(30);
    while sandbox.ready_now() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(sandbox.ready_now() > 0, "and refills after containers are taken");
}

/// A sandbox whose pool of two ready containers has filled, and one without a pool.
async fn pooled_and_unpooled() -> (sluice::Sandbox, sluice::Sandbox) {
    let config = |ready| sluice::SandboxConfig { ready_containers: ready, max_containers: 4, ..Default::default() };
    let pooled = sluice::Sandbox::new(config(2)).await.expect("a sandbox with a pool");
    let unpooled = sluice::Sandbox::new(config(0)).await.expect("a sandbox without a pool");
    let filled = Instant::now() + Duration::from_secs(10);
    while pooled.ready_now() < 2 && Instant::now() < filled {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(pooled.ready_now(), 2, "the pool fills in the background");
    assert_eq!(unpooled.ready_now(), 0);
    (pooled, unpooled)
}

#[tokio::test]
async fn a_ready_container_is_indistinguishable_from_a_fresh_one() {
    let (pooled, unpooled) = pooled_and_unpooled().await;

    let script =
        "import random\nprint(random.random(), 'x' in globals(), len([k for k in globals() if not k.startswith('_')]))";
    let id = uuid::Uuid::new_v4();
    let mut outputs = Vec::new();
    for sandbox in [&pooled, &unpooled] {
        let before = sandbox.ready_now();
        let mut container = sandbox.create_container_with(id, 42).await.expect("container");
        assert_eq!(sandbox.ready_now(), before.saturating_sub(1), "taken from the pool when it has one");
        assert_eq!((container.id(), container.seed()), (id, 42));
        outputs.push(run(&mut container, script).await.stdout);
    }
    assert_eq!(outputs[0], outputs[1], "the same seed gives the same stream and state, pooled or not");
    assert!(outputs[0].contains(" False "), "nothing of the probe's execution shows: {}", outputs[0]);
}

#[tokio::test]
async fn a_used_container_goes_back_to_the_pool_as_the_image_again() {
    let (pooled, unpooled) = pooled_and_unpooled().await;
    let mut used = pooled.create_container().await.expect("container");
    assert_eq!(pooled.ready_now(), 1);
    let secret =
        "import json, random\nsecret = 'hunter2' * 500\nrows = json.loads(json.dumps([{'n': i} for i in range(300)]))";
    assert_eq!(run(&mut used, secret).await.return_code, 0);
    drop(used);
    assert_eq!(pooled.ready_now(), 2, "the used instance went back to the pool (too quick for a refill)");

    // The pool hands out the instance it took last: the used one, reset.
    let id = uuid::Uuid::new_v4();
    let mut recycled = pooled.create_container_with(id, 42).await.expect("container");
    let mut fresh = unpooled.create_container_with(id, 42).await.expect("container");
    let (recycled_snapshot, fresh_snapshot) = (
        recycled.snapshot(serde_json::Value::Null).await.expect("snapshot"),
        fresh.snapshot(serde_json::Value::Null).await.expect("snapshot"),
    );
    assert_eq!(
        recycled_snapshot.len(),
        fresh_snapshot.len(),
        "a snapshot holds the pages that differ from the image: none in either"
    );
    let script = "import random\nprint(random.random(), 'secret' in globals(), 'rows' in globals(), \
        len([k for k in globals() if not k.startswith('_')]))";
    let (a, b) = (run(&mut recycled, script).await.stdout, run(&mut fresh, script).await.stdout);
    assert_eq!(a, b, "the same seed gives the same stream and state, recycled or new");
    assert!(a.contains(" False False "), "nothing of the last tenant shows: {a}");
}

#[tokio::test]
async fn ready_containers_give_their_slots_up_to_containers_that_need_them() {
    let config = sluice::SandboxConfig { ready_containers: 2, max_containers: 2, ..Default::default() };
    let sandbox = sluice::Sandbox::new(config).await.expect("a sandbox with a pool");
    let wait_for_ready = |n: usize| {
        let sandbox = sandbox.clone();
        async move {
            let until = Instant::now() + Duration::from_secs(10);
            while sandbox.ready_now() < n && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            sandbox.ready_now()
        }
    };
    wait_for_ready(2).await;
    // Fill every slot with live containers; the last ones take the ready containers' slots.
    let mut live = Vec::new();
    loop {
        match sandbox.create_container().await {
            Ok(container) => live.push(container),
            Err(sluice::SandboxError::Capacity(_)) => break,
            Err(other) => panic!("{other}"),
        }
    }
    assert!(live.len() >= 2, "at least max_containers live containers fit");
    assert_eq!(sandbox.ready_now(), 0, "nothing left for the pool");
    run(&mut live[0], "kept = 7").await;
    let snapshot = live[0].snapshot(serde_json::Value::Null).await.expect("snapshot");
    let taken_of = live[0].id();
    // One slot comes free and the pool takes it in a quiet moment.
    live.pop();
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(wait_for_ready(1).await, 1, "the pool refills the free slot");
    // A restore needs that slot: the pool gives it up rather than have the restore refused.
    let (mut restored, _) =
        sandbox.restore_container(uuid::Uuid::new_v4(), taken_of, &snapshot).await.expect("a slot is found");
    assert_eq!(run(&mut restored, "print(kept)").await.stdout, "7\n");
    assert_eq!(sandbox.ready_now(), 0, "the pool gave its slot up");
}
