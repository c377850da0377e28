//! Sluice beside CPython and Monty on identical workloads, interleaved in one run.
//!
//! Run with `cargo bench --bench peers`. It makes a virtual environment under
//! `target/peers-venv` with pydantic-monty (Monty is skipped, with the reason, if that fails),
//! then runs each workload round by round: Sluice through its Rust API, Sluice over loopback
//! HTTP, then CPython and Monty through `benches/peers/driver.py`, so every round of every
//! system sees the same machine state. It prints a table of medians (with min and max) and
//! ratios to Sluice (medians of the per-round ratios), checks that every system printed the
//! same output, and writes the table to `docs/benchmarks.md`, with peak and idle memory and,
//! last, the time `sluice image build` takes into an empty cache. `SLUICE_PEERS_ROUNDS` sets the
//! measured rounds (default 9, after 2 warm-up rounds). `SLUICE_PEERS_ONLY=3,5a` runs only those
//! workloads (by key) and prints their table without writing the document: for comparing two
//! builds run after one another.

#[path = "../examples/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../examples/expense_audit/data.rs"]
mod expense_data;

mod common;
use common::{median, status_bytes};
#[path = "peers/driver.rs"]
mod driver;
#[path = "peers/tool_result_rows.rs"]
mod tool_result_rows;
use driver::{Driver, driver_path, python_with_monty};
use serde_json::{Value, json};
use sluice::{CallResult, GuestTool};
use sluice::{Container, ExecuteRequest, Limits, Sandbox, SandboxConfig, Step};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use tool_result_rows::tool_result_rows;

const DEFAULT_ROUNDS: usize = 9;
/// Idle time before each system's sample: sessions arrive apart, as agents' do, and every
/// system may use the pause (Sluice refills its ready containers, Monty's pool its workers).
/// Before each system, not once a round: a machine woken from idle runs slower for a while
/// (caches taken by the VM's neighbours), and a gap only before the round charged that to
/// whichever system came first, Sluice, while the others ran on a machine already busy.
const SAMPLE_GAP: std::time::Duration = std::time::Duration::from_millis(25);
const WARMUP_ROUNDS: usize = 2;
/// Run, untimed, after each sample in Sluice's warm container. CPython runs each sample in a
/// fresh scope and Monty in a fresh session, both dropped once the timing stops; the warm
/// container keeps its variables (its point), so without this every workload ran amid the
/// heap of all the others (workload 6 took 3.5 ms after 4's 20,000 records, 3.0 ms alone).
const FORGET_VARIABLES: &str =
    "for _name in [n for n in globals() if not n.startswith('_')]:\n    del globals()[_name]\n";
const IDLE_CONTAINERS: usize = 100;
/// Enough for the sequential workload's 10,000 calls.
const MAX_TOOL_CALLS: u64 = 20_000;

const CPU: &str = include_str!("peers/scripts/cpu.py");
const DATA_JOIN: &str = include_str!("peers/scripts/data_join.py");
const AGENT_RUN: &str = include_str!("peers/scripts/agent_run.py");
const SEQUENTIAL_CALLS: &str = include_str!("peers/scripts/tool_calls_sequential.py");
const GATHER_CALLS: &str = include_str!("peers/scripts/tool_calls_gather.py");
const TOOL_RESULT: &str = include_str!("peers/scripts/tool_result.py");
const SNAPSHOT_STATE: &str = include_str!("peers/scripts/snapshot_state.py");
const SNAPSHOT_CHECK: &str = include_str!("peers/scripts/snapshot_check.py");
const EXPENSE_AUDIT: &str = include_str!("../examples/expense_audit/script.py");
const COLD: &str = "x = 1 + 1\nprint(x)";

/// How a tool answers, the same way in every system (the driver implements it in Python).
#[derive(Clone)]
enum Answer {
    /// The argument `i`, as text.
    Index,
    Constant(String),
    /// Looked up by the arguments as compact JSON with sorted keys.
    Table(BTreeMap<String, String>),
}

impl Answer {
    fn answer(&self, args: &serde_json::Map<String, Value>) -> String {
        match self {
            Answer::Index => args["i"].to_string(),
            Answer::Constant(text) => text.clone(),
            Answer::Table(table) => table.get(&canonical(args)).cloned().unwrap_or_default(),
        }
    }

    fn to_driver(&self) -> Value {
        match self {
            Answer::Index => json!({"kind": "index"}),
            Answer::Constant(text) => json!({"kind": "const", "value": text}),
            Answer::Table(table) => json!({"kind": "map", "values": table}),
        }
    }
}

/// Compact JSON with sorted keys, as Python's `json.dumps(sort_keys=True, separators=(",", ":"))`.
fn canonical(args: &serde_json::Map<String, Value>) -> String {
    let sorted: BTreeMap<&String, &Value> = args.iter().collect();
    serde_json::to_string(&sorted).expect("JSON")
}

#[derive(Clone, Copy, PartialEq)]
enum Session {
    /// A new sandbox in a running host: Sluice's new container, a Monty session from a
    /// started pool (CPython has no sandbox to start).
    NewInHost,
    /// A new process: `sluice run`, `python3 -c`, a new Monty pool (which starts its worker).
    NewProcess,
    /// A new session, timed with the work.
    New,
    /// A session made before the clock starts.
    Warm,
    /// Save a session with state and restore it elsewhere.
    Snapshot,
}

struct Workload {
    key: &'static str,
    title: &'static str,
    session: Session,
    setup: Vec<&'static str>,
    cells: Vec<&'static str>,
    tools: Vec<(&'static str, Answer)>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum System {
    SluiceApi,
    SluiceHttp,
    CPython,
    Monty,
}

const SYSTEMS: [System; 4] = [System::SluiceApi, System::SluiceHttp, System::CPython, System::Monty];

struct Sample {
    ms: f64,
    output: String,
    /// Snapshot figures: bytes, save ms, restore ms.
    snapshot: Option<(f64, f64, f64)>,
}

type Outcome = Result<Sample, String>;

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}

fn workloads(rows: String, expense_answers: Vec<(&'static str, Answer)>) -> Vec<Workload> {
    let cells = |text: &'static str| text.split("# ---\n").collect::<Vec<_>>();
    let get = || vec![("get", Answer::Index)];
    vec![
        Workload {
            key: "1a",
            title: "cold start: new sandbox in a running host, `x = 1 + 1`",
            session: Session::NewInHost,
            setup: vec![],
            cells: vec![COLD],
            tools: vec![],
        },
        Workload {
            key: "1b",
            title: "cold start: new process, `x = 1 + 1`",
            session: Session::NewProcess,
            setup: vec![],
            cells: vec![COLD],
            tools: vec![],
        },
        Workload {
            key: "2",
            title: "agent run: new session, ten dependent REPL commands",
            session: Session::New,
            setup: vec![],
            cells: cells(AGENT_RUN),
            tools: vec![],
        },
        Workload {
            key: "3",
            title: "CPU: sum of squares to 1,000,000",
            session: Session::Warm,
            setup: vec![],
            cells: vec![CPU],
            tools: vec![],
        },
        Workload {
            key: "4",
            title: "data join: 10,000 records grouped, joined, JSON dump and load",
            session: Session::Warm,
            setup: vec![],
            cells: vec![DATA_JOIN],
            tools: vec![],
        },
        Workload {
            key: "5a",
            title: "tool calls: 10,000 sequential",
            session: Session::Warm,
            setup: vec![],
            cells: vec![SEQUENTIAL_CALLS],
            tools: get(),
        },
        Workload {
            key: "5b",
            title: "tool calls: gather of 100",
            session: Session::Warm,
            setup: vec![],
            cells: vec![GATHER_CALLS],
            tools: get(),
        },
        Workload {
            key: "6",
            title: "one tool result of 1,000 JSON records, parsed and aggregated",
            session: Session::Warm,
            setup: vec![],
            cells: vec![TOOL_RESULT],
            tools: vec![("fetch_rows", Answer::Constant(rows))],
        },
        Workload {
            key: "7",
            title: "snapshot: save a session with state, restore it elsewhere",
            session: Session::Snapshot,
            setup: vec![SNAPSHOT_STATE],
            cells: vec![SNAPSHOT_CHECK],
            tools: vec![],
        },
        Workload {
            key: "8",
            title: "expense audit end to end (new session, 17 tool calls)",
            session: Session::New,
            setup: vec![],
            cells: vec![EXPENSE_AUDIT],
            tools: expense_answers,
        },
    ]
}

/// The expense example's tools, answered from its generated data.
fn expense_answers() -> Vec<(&'static str, Answer)> {
    let data = expense_data::Data::generate();
    let key = |args: Value| canonical(args.as_object().expect("an object"));
    let team = data.team("engineering");
    let mut expenses = BTreeMap::new();
    let mut budgets = BTreeMap::new();
    for member in team.as_array().expect("a list") {
        let id = member["id"].as_str().expect("an id");
        expenses.insert(key(json!({"employee_id": id, "quarter": "Q3"})), data.expenses(id, "Q3").to_string());
        budgets.insert(key(json!({"user_id": id})), data.custom_budget(id).to_string());
    }
    let members = BTreeMap::from([(key(json!({"department": "engineering"})), team.to_string())]);
    vec![
        ("get_team_members", Answer::Table(members)),
        ("get_expenses", Answer::Table(expenses)),
        ("get_custom_budget", Answer::Table(budgets)),
    ]
}

/// Sluice through its Rust API.
struct SluiceApi {
    sandbox: Sandbox,
    warm: Container,
}

/// Runs one script in a container, answering its tool calls as the workload says.
async fn run_script(container: &mut Container, code: &str, workload: &Workload) -> Result<String, String> {
    let tools: Vec<GuestTool> = workload
        .tools
        .iter()
        .map(|(name, _)| GuestTool { name: (*name).into(), params: vec![], description: None, answered_in_place: true })
        .collect();
    let limits = Limits { max_tool_calls: MAX_TOOL_CALLS, ..Limits::default() };
    let request = ExecuteRequest { code, tools: &tools, files: &[], limits, now_ns: None };
    let mut step = container.execute(request).await.map_err(|e| e.to_string())?;
    while let Step::Pending(pending) = step {
        let results: Vec<CallResult> = pending
            .calls
            .iter()
            .map(|call| {
                let answer = workload.tools.iter().find(|(name, _)| *name == call.name).map(|(_, a)| a);
                CallResult::ok(call.seq, answer.map(|a| a.answer(&call.input)).unwrap_or_default())
            })
            .collect();
        step = container.resume(&results, &[], None).await.map_err(|e| e.to_string())?;
    }
    match step {
        Step::Finished(outcome) if outcome.return_code == 0 => Ok(outcome.stdout),
        Step::Finished(outcome) => Err(outcome.stderr),
        Step::Pending(_) => unreachable!("the loop answers every pause"),
    }
}

async fn run_cells(container: &mut Container, cells: &[&str], workload: &Workload) -> Result<String, String> {
    let mut output = String::new();
    for cell in cells {
        output += &run_script(container, cell, workload).await?;
    }
    Ok(output)
}

impl SluiceApi {
    async fn sample(&mut self, workload: &Workload) -> Outcome {
        match workload.session {
            Session::NewProcess => sluice_run_process(workload.cells[0]),
            Session::NewInHost | Session::New => {
                let started = Instant::now();
                let mut container = self.sandbox.create_container().await.map_err(|e| e.to_string())?;
                let output = run_cells(&mut container, &workload.cells, workload).await?;
                Ok(Sample { ms: elapsed_ms(started), output, snapshot: None })
            }
            Session::Warm => {
                run_cells(&mut self.warm, &workload.setup, workload).await?;
                let started = Instant::now();
                let output = run_cells(&mut self.warm, &workload.cells, workload).await?;
                let ms = elapsed_ms(started);
                run_cells(&mut self.warm, &[FORGET_VARIABLES], workload).await?;
                Ok(Sample { ms, output, snapshot: None })
            }
            Session::Snapshot => {
                let mut container = self.sandbox.create_container().await.map_err(|e| e.to_string())?;
                run_cells(&mut container, &workload.setup, workload).await?;
                let started = Instant::now();
                let bytes = container.snapshot(serde_json::Value::Null).await.map_err(|e| e.to_string())?;
                let saved = Instant::now();
                let (mut elsewhere, _) = self
                    .sandbox
                    .restore_container(uuid::Uuid::new_v4(), container.id(), &bytes)
                    .await
                    .map_err(|e| e.to_string())?;
                let restored = Instant::now();
                let output = run_cells(&mut elsewhere, &workload.cells, workload).await?;
                let save = (saved - started).as_secs_f64() * 1e3;
                let restore = (restored - saved).as_secs_f64() * 1e3;
                Ok(Sample { ms: save + restore, output, snapshot: Some((bytes.len() as f64, save, restore)) })
            }
        }
    }
}

/// `sluice run` in a fresh process (the image is already compiled and cached).
fn sluice_run_process(code: &str) -> Outcome {
    let path = std::env::temp_dir().join(format!("sluice-peers-{}.py", std::process::id()));
    std::fs::write(&path, code).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let output =
        Command::new(env!("CARGO_BIN_EXE_sluice")).arg("run").arg(&path).output().map_err(|e| e.to_string())?;
    let ms = elapsed_ms(started);
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(Sample { ms, output: String::from_utf8_lossy(&output.stdout).into_owned(), snapshot: None })
}

/// Sluice over loopback HTTP, with `http` tools served by this process.
struct SluiceHttp {
    client: reqwest::Client,
    base: String,
    tools_base: String,
    warm: String,
}

impl SluiceHttp {
    async fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        serde_json::from_str(&response.text().await.map_err(|e| e.to_string())?).map_err(|e| e.to_string())
    }

    async fn delete(&self, container: &str) {
        let _ = self.client.delete(format!("{}/v1/containers/{container}", self.base)).send().await;
    }

    async fn execute(
        &self,
        container: Option<&str>,
        code: &str,
        workload: &Workload,
    ) -> Result<(String, String), String> {
        let specs: Vec<(&str, &str, Value)> =
            workload.tools.iter().map(|(name, _)| (*name, "", json!({"type": "object"}))).collect();
        let mut body = json!({"code": code, "tools": support::http_tools(&self.tools_base, &specs),
                              "limits": {"max_tool_calls": MAX_TOOL_CALLS}});
        if let Some(id) = container {
            body["container"] = json!(id);
        }
        let execution = self.post("/v1/executions", &body).await?;
        if execution["status"] != "completed" || execution["result"]["return_code"] != 0 {
            return Err(format!("{execution}"));
        }
        let container = execution["container"]["id"].as_str().unwrap_or_default().to_owned();
        Ok((container, execution["result"]["stdout"].as_str().unwrap_or_default().to_owned()))
    }

    async fn sample(&self, workload: &Workload) -> Outcome {
        match workload.session {
            Session::NewProcess => Err("n/a: the service is already running".into()),
            Session::NewInHost | Session::New => {
                let started = Instant::now();
                let mut container: Option<String> = None;
                let mut output = String::new();
                for cell in &workload.cells {
                    let (id, out) = self.execute(container.as_deref(), cell, workload).await?;
                    container = Some(id);
                    output += &out;
                }
                let ms = elapsed_ms(started);
                self.delete(container.as_deref().unwrap_or_default()).await;
                Ok(Sample { ms, output, snapshot: None })
            }
            Session::Warm => {
                for cell in &workload.setup {
                    self.execute(Some(&self.warm), cell, workload).await?;
                }
                let started = Instant::now();
                let mut output = String::new();
                for cell in &workload.cells {
                    output += &self.execute(Some(&self.warm), cell, workload).await?.1;
                }
                let ms = elapsed_ms(started);
                self.execute(Some(&self.warm), FORGET_VARIABLES, workload).await?;
                Ok(Sample { ms, output, snapshot: None })
            }
            Session::Snapshot => {
                let (parent, _) = self.execute(None, workload.setup[0], workload).await?;
                let started = Instant::now();
                let fork = self.post(&format!("/v1/containers/{parent}/fork"), &json!({})).await?;
                let ms = elapsed_ms(started);
                let child = fork["id"].as_str().ok_or_else(|| format!("{fork}"))?.to_owned();
                let (_, output) = self.execute(Some(&child), workload.cells[0], workload).await?;
                self.delete(&parent).await;
                self.delete(&child).await;
                Ok(Sample { ms, output, snapshot: None })
            }
        }
    }
}

/// Samples of CPython and Monty from the driver.
impl Driver {
    fn sample(&mut self, system: System, workload: &Workload) -> Outcome {
        let name = if system == System::Monty { "monty" } else { "cpython" };
        if system == System::Monty
            && let Some(problem) = self.monty_problem()
        {
            return Err(format!("skipped: {problem}"));
        }
        let tools: serde_json::Map<String, Value> =
            workload.tools.iter().map(|(n, answer)| ((*n).to_owned(), answer.to_driver())).collect();
        let mut request = json!({"system": name, "cells": workload.cells, "setup": workload.setup, "tools": tools});
        match (workload.session, system) {
            (Session::NewInHost, System::CPython) => return Err("n/a: no sandbox; a new process is 1b".into()),
            (Session::NewProcess, System::CPython) => return python_process(&self.python, workload.cells[0]),
            (Session::NewProcess, _) => request["fresh_pool"] = json!(true),
            (Session::Snapshot, System::CPython) => {
                return Err("n/a: CPython cannot save an interpreter's state (pickle saves data, not code)".into());
            }
            (Session::Snapshot, _) => request["snapshot"] = json!(true),
            _ => {}
        }
        let reply = self.ask(&request)?;
        let snapshot = reply.get("bytes").map(|bytes| {
            (
                bytes.as_f64().unwrap_or(0.0),
                reply["save_ms"].as_f64().unwrap_or(0.0),
                reply["restore_ms"].as_f64().unwrap_or(0.0),
            )
        });
        Ok(Sample {
            ms: reply["ms"].as_f64().unwrap_or(f64::NAN),
            output: reply["output"].as_str().unwrap_or_default().to_owned(),
            snapshot,
        })
    }
}

/// A fresh `python3 -c` process.
fn python_process(python: &Path, code: &str) -> Outcome {
    let started = Instant::now();
    let output = Command::new(python).arg("-c").arg(code).output().map_err(|e| e.to_string())?;
    let ms = elapsed_ms(started);
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(Sample { ms, output: String::from_utf8_lossy(&output.stdout).into_owned(), snapshot: None })
}

struct Cell {
    samples: Vec<f64>,
    ratios: Vec<f64>,
    snapshot: Vec<(f64, f64, f64)>,
    problem: Option<String>,
}

fn format_ms(ms: f64) -> String {
    match ms {
        ms if ms >= 100.0 => format!("{ms:.0}"),
        ms if ms >= 10.0 => format!("{ms:.1}"),
        ms if ms >= 1.0 => format!("{ms:.2}"),
        ms => format!("{ms:.3}"),
    }
}

impl Cell {
    fn render(&self, system: System) -> String {
        if let Some(problem) = &self.problem {
            return problem.clone();
        }
        let min = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.samples.iter().copied().fold(0.0, f64::max);
        let mut text = format!("{} ms [{}–{}]", format_ms(median(&self.samples)), format_ms(min), format_ms(max));
        if system != System::SluiceApi && !self.ratios.is_empty() {
            text += &format!(" ×{:.2}", median(&self.ratios));
        }
        if !self.snapshot.is_empty() {
            let column = |i: usize| median(&self.snapshot.iter().map(|s| [s.0, s.1, s.2][i]).collect::<Vec<_>>());
            text += &format!(
                "; {:.0} KiB, save {} ms, restore {} ms",
                column(0) / 1024.0,
                format_ms(column(1)),
                format_ms(column(2))
            );
        }
        text
    }
}

/// Peak resident memory of workload 4 in a fresh process per system, in MiB.
fn peak_memory(python: &Path, monty: bool) -> Vec<(String, String)> {
    let script = std::env::temp_dir().join(format!("sluice-peers-join-{}.py", std::process::id()));
    std::fs::write(&script, DATA_JOIN).expect("a temporary script");
    let measure = |args: &[&std::ffi::OsStr]| -> String {
        let output = Command::new(python).arg(driver_path()).args(args).output();
        match output {
            Ok(o) if o.status.success() => {
                let kib: f64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap_or(f64::NAN);
                format!("{:.1} MiB", kib / 1024.0)
            }
            Ok(o) => format!("failed: {}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or_default()),
            Err(e) => format!("failed: {e}"),
        }
    };
    let sluice = Path::new(env!("CARGO_BIN_EXE_sluice"));
    // A process that finds no cached image builds one (compiling 30 MB of wasm): that is not
    // the peak of running the script, so the image is built first.
    let built = Command::new(sluice).args(["image", "build"]).output().expect("sluice image build runs");
    assert!(built.status.success(), "sluice image build failed");
    // A just-written image sits in the page cache as the write left it (in large folios), and
    // mapping it then brings in more per fault: 5-6 MiB more peak than the same image read
    // back from disk. Dropping its cached pages (`dd iflag=nocache`, as `posix_fadvise`'s
    // DONTNEED) measures what every process after the first sees.
    let image = built_image_path(&built.stdout).expect("sluice image build names the image");
    // Written back first: the kernel drops only clean pages, and an image compiled by this
    // very run is still dirty (its peak came out at 69.5 MiB that way, 45.4 MiB after a sync).
    let synced = std::fs::File::open(&image).and_then(|file| file.sync_all());
    assert!(synced.is_ok(), "writing the image back failed: {synced:?}");
    let dropped = Command::new("dd").args([&format!("if={image}"), "iflag=nocache", "count=0", "status=none"]).status();
    assert!(dropped.is_ok_and(|s| s.success()), "dropping the image's cached pages failed");
    let mut rows = vec![
        (
            "Sluice (`sluice run`)".to_owned(),
            measure(&["--peak-rss".as_ref(), sluice.as_os_str(), "run".as_ref(), script.as_os_str()]),
        ),
        ("CPython (`python3`)".to_owned(), measure(&["--peak-rss".as_ref(), python.as_os_str(), script.as_os_str()])),
    ];
    if monty {
        rows.push(("Monty (client + worker)".to_owned(), measure(&["--peak-rss-monty".as_ref(), script.as_os_str()])));
    }
    rows
}

/// The image file `sluice image build` names on its `image` line.
fn built_image_path(stdout: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|line| line.strip_prefix("image").map(|path| path.trim().to_owned()))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// What making the image costs, measured once per run after everything else: `sluice image
/// build` into an empty cache directory (pre-initializing the guest, then compiling it with
/// Cranelift), as a service's first start or an install step pays it. Rows of what and figure.
fn image_build() -> Vec<(String, String)> {
    let cache = std::env::temp_dir().join(format!("sluice-peers-image-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let sluice = Path::new(env!("CARGO_BIN_EXE_sluice"));
    let started = Instant::now();
    let built = Command::new(sluice).args(["image", "build", "--cache-dir"]).arg(&cache).output();
    let seconds = started.elapsed().as_secs_f64();
    let rows = match built {
        Ok(output) if output.status.success() => {
            let image_mib = built_image_path(&output.stdout)
                .and_then(|path| std::fs::metadata(path).ok())
                .map_or_else(|| "?".to_owned(), |meta| format!("{:.1} MiB", mib(meta.len())));
            vec![
                (
                    "build, empty cache (`sluice image build`: pre-initialize the guest, compile it)".to_owned(),
                    format!("{seconds:.1} s ({} cores)", std::thread::available_parallelism().map_or(1, |n| n.get())),
                ),
                ("compiled image (mapped by every process)".to_owned(), image_mib),
            ]
        }
        Ok(output) => vec![("build".to_owned(), format!("failed: {}", String::from_utf8_lossy(&output.stderr).trim()))],
        Err(e) => vec![("build".to_owned(), format!("failed: {e}"))],
    };
    let _ = std::fs::remove_dir_all(&cache);
    rows
}

/// Stack-sample categories, first match wins, tested against every frame of a sample from
/// the innermost out: a sample inside JSON code counts as JSON even when the interpreter
/// called it.
const PROFILE_CATEGORIES: [(&str, &[&str]); 4] = [
    // `fast_dumps` is the guest's encoder: without its own needle it fell to the host boundary.
    ("JSON (the json module's encoder and decoder)", &["json", "fast_dumps"]),
    ("memory allocation", &["small_blocks", "dlmalloc", "malloc", "realloc", "__rust_alloc", "__rdl_", "free"]),
    // The guest crate's own functions that frame, pass and wait, by name: the crate's name
    // would also take in its interpreter fast paths (`fast_sum` put 89% of workload 3 here).
    (
        "host boundary (guest side: frames to and from the host, output)",
        &[
            "_sluice_abi",
            "tool_call",
            "read_frame",
            "read_host_frame",
            "to_json",
            "from_json",
            "wait_in_host",
            "lone_call_frame",
            "lone_result_text",
            "write_json_str",
            "split_frame",
            "wasi",
        ],
    ),
    ("big integers", &["bigint", "malachite"]),
];
/// Profiled runs at least, and more until this much guest time is sampled: the sampler ticks
/// once a millisecond, so a 5 ms workload needs hundreds of runs for a readable profile.
const PROFILE_RUNS: usize = 5;
const PROFILE_MIN_MS: f64 = 2_000.0;
/// Profiled runs at most, whatever a (near-empty) workload's time.
const MAX_PROFILE_RUNS: usize = 1_000;
/// Warm `pass` executions timed for the host's fixed cost per execution.
const EMPTY_RUNS: usize = 21;
const TOP_FUNCTIONS: usize = 10;
/// Demangled generic names run long; the table keeps their start.
const MAX_FUNCTION_NAME_CHARS: usize = 110;
/// Workloads profiled: the CPU-bound ones, sequential tool calls for the boundary, and the
/// two that parse a tool result and run an agent's script end to end.
const PROFILED: [&str; 5] = ["3", "4", "5a", "6", "8"];

/// Where Sluice's time goes on a workload: guest stack samples by category and the functions
/// that were on top most often, plus the host side's fixed cost per execution.
async fn profile(workload: &Workload, sandbox: &Sandbox, profiler: &sluice::GuestProfiler) -> String {
    let mut container = sandbox.create_container().await.expect("container");
    run_cells(&mut container, &workload.cells, workload).await.expect("a warm-up run");
    let mut empty = Vec::new();
    for _ in 0..EMPTY_RUNS {
        let started = Instant::now();
        run_script(&mut container, "pass", workload).await.expect("an empty execution");
        empty.push(elapsed_ms(started));
    }
    let started = Instant::now();
    run_cells(&mut container, &workload.cells, workload).await.expect("a timed run");
    let runs = ((PROFILE_MIN_MS / elapsed_ms(started)).ceil() as usize).clamp(PROFILE_RUNS, MAX_PROFILE_RUNS);
    // As in the timed samples, each run starts without the previous run's variables, and
    // forgetting them (freeing its objects) is neither sampled nor timed.
    profiler.start();
    let mut wall = 0.0;
    for _ in 0..runs {
        profiler.pause();
        run_script(&mut container, FORGET_VARIABLES, workload).await.expect("forgetting the last run");
        profiler.resume();
        let started = Instant::now();
        run_cells(&mut container, &workload.cells, workload).await.expect("a profiled run");
        wall += elapsed_ms(started);
    }
    let wall = wall / runs as f64;
    let stacks = profiler.stop();
    let total: u64 = stacks.iter().map(|(_, n)| n).sum();
    let mut categories = vec![0u64; PROFILE_CATEGORIES.len() + 1];
    let mut leaves: BTreeMap<String, u64> = BTreeMap::new();
    for (stack, count) in &stacks {
        let names: Vec<String> = stack.iter().map(|f| format!("{:#}", rustc_demangle::demangle(f))).collect();
        *leaves.entry(names.first().cloned().unwrap_or_default()).or_default() += count;

        let category = stack
            .iter()
            .find_map(|frame| {
                let frame = frame.to_ascii_lowercase();
                PROFILE_CATEGORIES.iter().position(|(_, needles)| needles.iter().any(|n| frame.contains(n)))
            })
            .unwrap_or(PROFILE_CATEGORIES.len());
        categories[category] += count;
    }
    let share = |n: u64| 100.0 * n as f64 / total.max(1) as f64;
    let mut text = format!(
        "### {} {}\n\n{total} samples over {runs} runs ({} ms each, about one sample per millisecond of guest time). \
         The host's side of an execution (entering the guest, passing the code in and the outcome out) \
         costs {} ms, the median of a warm `pass` execution.\n\n| where | share of samples |\n| --- | ---: |\n",
        workload.key,
        workload.title,
        format_ms(wall),
        format_ms(median(&empty)),
    );
    let names = PROFILE_CATEGORIES
        .iter()
        .map(|(name, _)| *name)
        .chain(["interpreter (bytecode loop, objects, everything else)"]);
    for (name, count) in names.zip(&categories) {
        text += &format!("| {name} | {:.1}% |\n", share(*count));
    }
    let mut top: Vec<(String, u64)> = leaves.into_iter().collect();
    top.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    text += "\nFunctions on top of the stack most often (self time):\n\n| function | share |\n| --- | ---: |\n";
    for (name, count) in top.into_iter().take(TOP_FUNCTIONS) {
        let name: String = name.chars().take(MAX_FUNCTION_NAME_CHARS).collect();
        text += &format!("| `{}` | {:.1}% |\n", name.replace('|', "\\|"), share(count));
    }
    text
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned()))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("MemTotal:").map(|v| v.trim().to_owned())))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} cores, {memory} memory")
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn locked_version(lockfile: &str, package: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(lockfile)).unwrap_or_default();
    let needle = format!("name = \"{package}\"\nversion = \"");
    text.split(&needle).nth(1).and_then(|rest| rest.split('"').next()).unwrap_or("unknown").to_owned()
}

fn main() {
    let rounds =
        std::env::var("SLUICE_PEERS_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_ROUNDS).max(1);
    let only: Option<Vec<String>> =
        std::env::var("SLUICE_PEERS_ONLY").ok().map(|keys| keys.split(',').map(|k| k.trim().to_owned()).collect());
    let selected = |key: &str| only.as_ref().is_none_or(|keys| keys.iter().any(|k| k == key));
    let (python, monty_problem) = python_with_monty();
    let mut driver = Driver::start(&python);
    if let Some(problem) = &monty_problem {
        eprintln!("Monty skipped: {problem}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let report = runtime.block_on(async {
        let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("the sandbox image");
        // Memory first, before the workloads grow this process.
        let before = (status_bytes("VmRSS"), status_bytes("RssAnon"));
        let mut idle = Vec::with_capacity(IDLE_CONTAINERS);
        for _ in 0..IDLE_CONTAINERS {
            let mut container = sandbox.create_container().await.expect("container");
            let request = ExecuteRequest {
                code: "x = [i * i for i in range(100)]",
                tools: &[],
                files: &[],
                limits: Limits::default(),
                now_ns: None,
            };
            container.execute(request).await.expect("execute");
            idle.push(container);
        }
        let after = (status_bytes("VmRSS"), status_bytes("RssAnon"));
        drop(idle);

        let expense = expense_answers();
        let workloads = workloads(tool_result_rows(), expense);
        let all_tools: Vec<(&'static str, support::Handler)> = workloads
            .iter()
            .flat_map(|w| w.tools.iter().cloned())
            .map(|(name, answer)| {
                let handler: support::Handler =
                    Arc::new(move |args: Value| answer.answer(args.as_object().unwrap_or(&serde_json::Map::new())));
                (name, handler)
            })
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let tools_base = support::serve_tools(all_tools).await;
        let base = support::start_sluice(&tools_base).await;
        let mut api = SluiceApi { warm: sandbox.create_container().await.expect("container"), sandbox };
        let mut http = SluiceHttp { client: reqwest::Client::new(), base, tools_base, warm: String::new() };
        http.warm = http.execute(None, "pass", &workloads[0]).await.expect("a warm container").0;

        let mut table: Vec<(String, BTreeMap<System, Cell>, Option<String>)> = Vec::new();
        for workload in workloads.iter().filter(|w| selected(w.key)) {
            eprintln!("workload {}: {}", workload.key, workload.title);
            let mut cells: BTreeMap<System, Cell> = SYSTEMS
                .iter()
                .map(|s| (*s, Cell { samples: vec![], ratios: vec![], snapshot: vec![], problem: None }))
                .collect();
            let mut reference: Option<String> = None;
            let mut mismatch = None;
            for round in 0..WARMUP_ROUNDS + rounds {
                let mut sluice_ms = None;
                for system in SYSTEMS {
                    if cells[&system].problem.is_some() {
                        continue;
                    }
                    tokio::time::sleep(SAMPLE_GAP).await;
                    let outcome = match system {
                        System::SluiceApi => api.sample(workload).await,
                        System::SluiceHttp => http.sample(workload).await,
                        _ => driver.sample(system, workload),
                    };
                    let cell = cells.get_mut(&system).expect("a cell per system");
                    match outcome {
                        Err(why) => cell.problem = Some(why.lines().last().unwrap_or_default().to_owned()),
                        Ok(sample) => {
                            let expected = reference.get_or_insert_with(|| sample.output.clone());
                            if *expected != sample.output {
                                mismatch = Some(format!("expected {expected:?}, got {:?}", sample.output));
                                cell.problem = Some("different output (see notes)".into());
                                continue;
                            }
                            if round < WARMUP_ROUNDS {
                                continue;
                            }
                            if system == System::SluiceApi {
                                sluice_ms = Some(sample.ms);
                            } else if let Some(base) = sluice_ms {
                                cell.ratios.push(sample.ms / base);
                            }
                            cell.samples.push(sample.ms);
                            cell.snapshot.extend(sample.snapshot);
                        }
                    }
                }
            }
            table.push((format!("{} {}", workload.key, workload.title), cells, mismatch));
        }
        let profiler = sluice::GuestProfiler::new();
        let config = SandboxConfig { profiler: Some(profiler.clone()), max_containers: 4, ..SandboxConfig::default() };
        let profiled = Sandbox::new(config).await.expect("a profiling sandbox");
        let mut profiles = Vec::new();
        for workload in workloads.iter().filter(|w| PROFILED.contains(&w.key) && selected(w.key)) {
            eprintln!("profiling workload {}", workload.key);
            profiles.push(profile(workload, &profiled, &profiler).await);
        }
        (table, before, after, profiles)
    });
    let (table, before, after, profiles) = report;
    // Its background work (refilling a sandbox's ready containers) keeps the image mapped,
    // and the peak measured below drops the image's cached pages, which a mapping pins.
    drop(runtime);
    let monty_version = driver.hello["monty"].as_str().map(|v| format!("Monty {v}")).unwrap_or_else(|| "Monty".into());
    let python_version = driver.hello["python"].as_str().unwrap_or("?").to_owned();
    let monty_installed = driver.hello.get("monty").is_some();
    drop(driver);
    let memory = if only.is_none() { peak_memory(&python, monty_installed) } else { Vec::new() };
    let image = if only.is_none() { image_build() } else { Vec::new() };

    let mut out = String::new();
    out += "# Sluice beside its peers\n\n";
    out += &format!(
        "Measured {} by `cargo bench --bench peers` ({rounds} rounds after {WARMUP_ROUNDS} warm-up rounds, every system in \
         each round, interleaved, each sample after {} ms idle).\n\n",
        command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        SAMPLE_GAP.as_millis()
    );
    out += &format!("- Machine: {}\n", machine());
    out += &format!(
        "- Sluice {} (wasmtime {}, RustPython {}), {}\n- CPython {python_version}; {monty_version} (pydantic-monty from PyPI)\n\n",
        command_line("git", &["describe", "--always", "--dirty"]),
        locked_version("Cargo.lock", "wasmtime"),
        locked_version("sandbox-images/python/Cargo.lock", "rustpython-vm"),
        command_line("rustc", &["--version"]),
    );
    out += "Cells: median [min–max] wall time; ×: the median of per-round ratios to Sluice's Rust API (above 1: slower than Sluice).\n\n";
    out += &format!("| workload | Sluice (Rust API) | Sluice (HTTP) | CPython {python_version} | {monty_version} |\n");
    out += "| --- | --- | --- | --- | --- |\n";
    let mut notes = Vec::new();
    for (title, cells, mismatch) in &table {
        let row: Vec<String> = SYSTEMS.iter().map(|s| cells[s].render(*s)).collect();
        out += &format!("| {title} | {} |\n", row.join(" | "));
        if let Some(m) = mismatch {
            notes.push(format!("- {title}: {m}"));
        }
    }
    out += "\nMemory:\n\n| what | resident |\n| --- | --- |\n";
    for (what, figure) in &memory {
        out += &format!("| peak, workload 4 in a fresh process: {what} | {figure} |\n");
    }
    let per_container = |i: usize| {
        let (b, a) = if i == 0 { (before.0, after.0) } else { (before.1, after.1) };
        mib(a.saturating_sub(b)) / IDLE_CONTAINERS as f64
    };
    out += &format!(
        "| Sluice process with {IDLE_CONTAINERS} idle containers (after a small execution each): all resident pages | \
         {:.1} MiB ({:.1} MiB before them; {:.2} MiB per container, counting the image pages each one maps) |\n",
        mib(after.0),
        mib(before.0),
        per_container(0)
    );
    out += &format!(
        "| the same, private pages only (what the containers wrote) | {:.1} MiB ({:.1} MiB before them; {:.2} MiB per container) |\n",
        mib(after.1),
        mib(before.1),
        per_container(1)
    );
    if !image.is_empty() {
        out += "\nImage:\n\n| what | figure |\n| --- | --- |\n";
        for (what, figure) in &image {
            out += &format!("| {what} | {figure} |\n");
        }
    }
    out += "\n## Where Sluice's time goes\n\nGuest call stacks sampled at each epoch tick by \
            `sluice::GuestProfiler` (a sandbox built with a profiler; function names from the guest wasm's name section).\n\n";
    out += &profiles.join("\n");
    if !notes.is_empty() {
        out += "\nNotes:\n\n";
        out += &notes.join("\n");
        out += "\n";
    }
    println!("{out}");
    if only.is_some() {
        return;
    }
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks.md");
    let _ = std::fs::create_dir_all(docs.parent().expect("docs"));
    let existing = std::fs::read_to_string(&docs).unwrap_or_default();
    // Hand-written analysis below the marker survives a new run.
    let analysis = existing.split_once(ANALYSIS_MARKER).map(|(_, rest)| rest.to_owned()).unwrap_or_default();
    std::fs::write(&docs, format!("{out}\n{ANALYSIS_MARKER}{analysis}")).expect("docs/benchmarks.md is written");
    eprintln!("written to {}", docs.display());
}

const ANALYSIS_MARKER: &str = "<!-- analysis: kept across runs -->\n";
