//! Data-driven Python cases: `tests/cases/**/*.py`, each with its expected stdout beside it.
//!
//! A case is one or more cells (split by a `# --- cell ---` line) run in order in one fresh
//! container. Lines `# sluice: key = <json>` in a cell set its tools, answers and limits and
//! what it must produce (see `Directives`). Cases marked `cpython = true` also run under the
//! machine's `python3`, which proves the expected output is right Python.

use crate::common;

use serde::Deserialize;
use sluice::LimitOverrides;
use sluice::{Answers, Limits, ToolDefinition, Toolset};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CELL_SEPARATOR: &str = "# --- cell ---";
const DIRECTIVE: &str = "# sluice:";
/// Cases run this many at a time (each may spin until its time limit).
const PARALLEL_CASES: usize = 4;
/// A canary container computes this while the cases run; hostile ones must not disturb it.
const CANARY_CODE: &str = "sum(i * i for i in range(2000))";
const CANARY_ANSWER: &str = "2664667000";
/// Longest a canary execution may take while the cases run.
const CANARY_MAX: std::time::Duration = std::time::Duration::from_secs(3);

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Directives {
    /// Tool definitions; tools named only in `answers` are added as code-callable.
    tools: Option<Vec<ToolDefinition>>,
    answers: Option<serde_json::Value>,
    limits: Option<LimitOverrides>,
    #[serde(default)]
    return_code: i32,
    /// The stable code of the limit that must stop the cell.
    stop: Option<String>,
    /// Any of these stop codes will do ("" for none); for outcomes that depend on timing.
    stop_any: Option<Vec<String>>,
    #[serde(default)]
    stderr_contains: Vec<String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    /// Tool names in call order.
    calls: Option<Vec<String>>,
    /// New calls per pause, in order.
    pending: Option<Vec<usize>>,
    value_repr: Option<String>,
    #[serde(default)]
    value_repr_contains: Vec<String>,
    counts: Option<serde_json::Value>,
    #[serde(default)]
    cpython: bool,
}

struct Cell {
    code: String,
    directives: Directives,
}

fn parse_cells(path: &Path) -> Vec<Cell> {
    let source = std::fs::read_to_string(path).expect("case is readable");
    source
        .split(&format!("{CELL_SEPARATOR}\n"))
        .map(|code| {
            let mut fields = serde_json::Map::new();
            for line in code.lines().filter_map(|l| l.strip_prefix(DIRECTIVE)) {
                let (key, value) =
                    line.split_once('=').unwrap_or_else(|| panic!("{}: bad directive {line}", path.display()));
                let value = serde_json::from_str(value.trim())
                    .unwrap_or_else(|e| panic!("{}: directive {key} is not JSON: {e}", path.display()));
                fields.insert(key.trim().to_owned(), value);
            }
            let directives = serde_json::from_value(serde_json::Value::Object(fields))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Cell { code: code.to_owned(), directives }
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("cases dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

/// Runs one case; returns what went wrong, if anything.
async fn run_case(path: PathBuf) -> Result<(), String> {
    let cells = parse_cells(&path);
    let sandbox = common::sandbox();
    let mut container = sandbox.create_container().await.map_err(|e| e.to_string())?;
    let mut stdout = String::new();
    let mut problems = Vec::new();
    let (mut tools, mut answers_json) = (None, None);
    for (index, cell) in cells.iter().enumerate() {
        let d = &cell.directives;
        tools = d.tools.clone().or(tools);
        answers_json = d.answers.clone().or(answers_json);
        let answers = Answers::from_json(answers_json.clone().unwrap_or(serde_json::json!({})))?;
        let mut definitions = tools.clone().unwrap_or_default();
        for name in answers.tool_names() {
            if !definitions.iter().any(|t| t.name == name) {
                definitions.push(ToolDefinition::code_callable(name));
            }
        }
        let limits = Limits::default()
            .with_overrides(&d.limits.clone().unwrap_or_default(), &Limits::server_maxima())
            .map_err(|e| e.to_string())?;
        let toolset = Toolset::from_definitions(definitions)?;
        let run = sluice::run_script(&mut container, &cell.code, toolset, limits, &answers)
            .await
            .map_err(|e| format!("cell {index}: {e}"))?;
        let outcome = &run.outcome;
        stdout.push_str(&outcome.stdout);
        let mut check = |ok: bool, what: String| {
            if !ok {
                problems.push(format!("cell {index}: {what}\n--- stderr ---\n{}", outcome.stderr));
            }
        };
        let stop = outcome.stop.as_ref().map(|s| s.code().to_owned());
        match &d.stop_any {
            Some(any) => {
                let code = stop.clone().unwrap_or_default();
                check(any.contains(&code), format!("stop {stop:?}, expected one of {any:?}"));
            }
            None => check(stop == d.stop, format!("stop {stop:?}, expected {:?}", d.stop)),
        }
        if d.stop.is_none() && d.stop_any.is_none() {
            check(
                outcome.return_code == d.return_code,
                format!("return code {}, expected {}", outcome.return_code, d.return_code),
            );
        }
        for needle in &d.stderr_contains {
            check(outcome.stderr.contains(needle.as_str()), format!("stderr lacks {needle:?}"));
        }
        for needle in &d.stdout_contains {
            check(outcome.stdout.contains(needle.as_str()), format!("stdout lacks {needle:?}"));
        }
        if let Some(calls) = &d.calls {
            let made: Vec<&str> = run.run.ledger().iter().map(|c| c.tool.as_str()).collect();
            check(made == *calls, format!("calls {made:?}, expected {calls:?}"));
        }
        if let Some(pending) = &d.pending {
            check(run.run.pauses() == *pending, format!("pauses {:?}, expected {pending:?}", run.run.pauses()));
        }
        if d.value_repr.is_some() {
            check(
                outcome.value_repr == d.value_repr,
                format!("value {:?}, expected {:?}", outcome.value_repr, d.value_repr),
            );
        }
        for needle in &d.value_repr_contains {
            let repr = outcome.value_repr.as_deref().unwrap_or("");
            check(repr.contains(needle.as_str()), format!("value lacks {needle:?}"));
        }
        if let Some(counts) = &d.counts {
            let got = serde_json::to_value(&outcome.counts).expect("counts serialize");
            check(got == *counts, format!("counts {got}, expected {counts}"));
        }
    }
    let expected_path = path.with_extension("stdout");
    if let Ok(expected) = std::fs::read_to_string(&expected_path)
        && stdout != expected
    {
        problems.push(format!("stdout differs\n--- expected ---\n{expected}--- got ---\n{stdout}"));
    }
    if cells[0].directives.cpython
        && let Some(problem) = check_under_cpython(&path, &expected_path)
    {
        problems.push(problem);
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

/// The expected output must also be what CPython prints (skipped, saying so, where python3
/// is missing).
fn check_under_cpython(path: &Path, expected_path: &Path) -> Option<String> {
    let output = std::process::Command::new("python3").arg(path).output();
    if !common::subject_present("python3 (CPython)", output.is_ok()) {
        return None;
    }
    let output = output.ok()?;
    let expected = std::fs::read_to_string(expected_path).ok()?;
    let got = String::from_utf8_lossy(&output.stdout);
    (got != expected).then(|| format!("CPython prints something else:\n{got}"))
}

/// One named test per case: `cargo test --test integration python_cases::asyncio` runs an area.
macro_rules! cases {
    ($($area:ident: [$($case:ident),* $(,)?],)*) => {
        $(mod $area {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::check(concat!(stringify!($area), "/", stringify!($case))).await;
                }
            )*
        })*
        /// Every case above, as `area/name`.
        const LISTED: &[&str] = &[$($(concat!(stringify!($area), "/", stringify!($case)),)*)*];
    };
}

cases! {
    asyncio: [
        create_task_and_semaphore, deadlock_is_reported, exit_from_async_cell, gather_many, loop_per_cell, main_guard_run,
        nested_run_blocking_path, run_inside_loop_fails, sleep_and_wait_for, spec_example, task_group,
        top_level_await, trailing_await_value,
    ],
    escapes: [
        clock_and_random_from_host, environment, filesystem, network_and_processes,
    ],
    files: [
        across_executions, hostile_paths, read_and_write,
    ],
    hostile: [
        abi_wait_flood, bad_unicode_output, cell_runner_games, clock_games, coroutine_leak, deep_ast, delete_builtins_and_tools,
        env_persistence, exception_chain_bomb, exception_storm, exit_tricks, factorial_grind, file_descriptors,
        files_more, forged_call_ids, forged_frames, frames_and_runtime, fstring_length_overflow, gc_referrers, huge_output, huge_source,
        huge_tool_arguments, huge_value_repr, import_tricks, input_and_stdin, int_digits, json_deep_nesting,
        keyboard_interrupt, loop_builtin_sum, loop_catch_everything, loop_in_del, loop_in_finally, loop_in_repr,
        loop_sorted_slow_key, memory_bytes_multiply, memory_dict_bomb, memory_nested_bomb, memory_string_bomb,
        network_more, patched_event_loop, pending_tasks_thousands, pending_tool_calls_thousands, pickle_bomb,
        processes_and_threads, random_seed_games, recursion_async, recursion_generators, recursion_limit_bypass,
        recursion_mutual, regex_huge_pattern, settrace_loop, signals, sluice_module_replaced, stdout_hijack,
        subclasses_walk, sys_path_import, task_fork_bomb, tasks_left_running, weakref_storm, zlib_bomb,
    ],
    language: [
        builtin_sum, builtin_sum_floats, byte_order_compare, classes, comprehensions, dict_entries, dict_get_and_literals, dict_tables,
        escape_warnings, exceptions, free_lists, fstrings, gc_lazily_tracked_dicts, generators, int_edges, int_text_and_joins,
        literals_and_remainders, match_statement, module_builtins_cached, module_names_cached, names_and_str_keys, numbers_freed, sequence_repeat, sum_generator_drain, sum_generator_monitoring,
        syntax_error, sys_exit, uncaught_exception,
    ],
    limits: [
        deep_data_nesting, infinite_loop, memory_error_caught, memory_list_bomb, output_flood, recursion_error,
        recursion_everywhere, recursion_raised_limit, slow_builtin, tool_call_limit,
    ],
    state: [
        across_executions, error_keeps_earlier_state, limit_rolls_back,
    ],
    sqlite: [
        across_executions, api, limit_rolls_back, memory_counts, no_files,
    ],
    stdlib: [
        data_modules, json_dumps, json_loads, time_and_numbers, time_zones_and_strptime,
    ],
    tools: [
        answers_run_out, closed_await_cancels_call, counts_and_arguments, error_result_raises,
        not_callable_from_code, timeout_error_reads_as_its_message,
    ],
}

fn case_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases").join(name).with_extension("py")
}

async fn check(name: &str) {
    if let Err(problem) = run_case(case_path(name)).await {
        panic!("case {name} failed:\n{problem}");
    }
}

#[test]
fn every_case_file_is_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    let mut found: Vec<String> = paths
        .iter()
        .map(|p| p.strip_prefix(&root).unwrap().with_extension("").to_string_lossy().replace('\\', "/"))
        .collect();
    found.sort();
    let mut listed: Vec<String> = LISTED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "each tests/cases/AREA/NAME.py needs a line in the cases! list, and only those");
}

/// The hostile cases all at once, while a neighbour container runs a known computation:
/// whatever they do, the neighbour keeps getting the right answer, promptly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_cases_leave_a_neighbour_alone() {
    let gate = Arc::new(tokio::sync::Semaphore::new(PARALLEL_CASES));
    let mut tasks = tokio::task::JoinSet::new();
    for name in LISTED.iter().filter(|name| name.starts_with("hostile/")) {
        let gate = gate.clone();
        tasks.spawn(async move {
            let _permit = gate.acquire_owned().await.expect("semaphore open");
            (name, run_case(case_path(name)).await)
        });
    }
    let stop_canary = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let canary = tokio::spawn(run_canary(stop_canary.clone()));
    let mut failures = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let (name, Err(problem)) = joined.expect("case task does not panic") {
            failures.push(format!("== {name}\n{problem}"));
        }
    }
    stop_canary.store(true, std::sync::atomic::Ordering::Relaxed);
    let (runs, slowest, wrong) = canary.await.expect("the canary does not panic");
    assert!(failures.is_empty(), "cases failed:\n{}", failures.join("\n\n"));
    assert!(wrong.is_empty(), "the canary got wrong answers while the cases ran: {wrong:?}");
    assert!(runs > 0 && slowest < CANARY_MAX, "canary: {runs} runs, slowest {slowest:?}");
}

/// Runs a known computation in a container of its own until told to stop; returns how many
/// runs, the slowest, and any wrong answers.
async fn run_canary(stop: Arc<std::sync::atomic::AtomicBool>) -> (usize, std::time::Duration, Vec<String>) {
    let mut container = common::sandbox().create_container().await.expect("canary container");
    let (mut runs, mut slowest, mut wrong) = (0, std::time::Duration::ZERO, Vec::new());
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let started = std::time::Instant::now();
        let request = sluice::ExecuteRequest {
            code: CANARY_CODE,
            tools: &[],
            files: &[],
            limits: Limits::default(),
            now_ns: None,
        };
        match container.execute(request).await {
            Ok(sluice::Step::Finished(outcome)) if outcome.value_repr.as_deref() == Some(CANARY_ANSWER) => {}
            other => wrong.push(format!("{other:?}")),
        }
        slowest = slowest.max(started.elapsed());
        runs += 1;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    (runs, slowest, wrong)
}
