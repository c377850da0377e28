//! Pieces of a workload timed one cell at a time, back to back in one warm container.
//!
//! Run with `cargo bench --bench cells` (the cells of `benches/cells/workload_pieces.cells`) or
//! `cargo bench --bench cells -- FILE`. The peers bench times whole workloads, each after an
//! idle pause and beside other systems, which a noisy hour moves by more than a change to one
//! piece; this one runs each cell many times back to back, so that two builds run after one
//! another can be compared piece by piece (take each cell's fastest run as well as its
//! median: the noise only ever adds). A file holds cells, each after a line `#---- name`; the
//! cells named `setup...` run once, untimed, before the others. A script may await
//! `fetch_rows({})`, answered in place with the peers bench's 1,000 records (workload 6).
//! `SLUICE_CELLS_ROUNDS` sets how many times each timed cell runs (default 100, after 3 more
//! untimed).

#[path = "../examples/support/mod.rs"]
mod support;
#[path = "peers/tool_result_rows.rs"]
mod tool_result_rows;

use sluice::{CallResult, Container, ExecuteRequest, GuestTool, Limits, Sandbox, SandboxConfig, Step};
use std::time::Instant;

const DEFAULT_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/cells/workload_pieces.cells");
const DEFAULT_ROUNDS: usize = 100;
const WARMUP_ROUNDS: usize = 3;
const CELL_MARK: &str = "#---- ";
/// Enough for a cell that awaits in a loop.
const MAX_TOOL_CALLS: u64 = 100_000;

struct Cell {
    name: String,
    code: String,
    samples: Vec<f64>,
}

/// Cells of `text`, in order: each starts at a line `#---- name` (what comes before the first
/// is the file's own comment).
fn cells(text: &str) -> Vec<Cell> {
    text.split(CELL_MARK)
        .skip(1)
        .map(|part| {
            let (name, code) = part.split_once('\n').unwrap_or((part, ""));
            Cell { name: name.trim().to_owned(), code: code.to_owned(), samples: Vec::new() }
        })
        .collect()
}

/// Runs `code` to its end, answering every call with `answer`; panics unless it succeeds.
async fn run(container: &mut Container, code: &str, tools: &[GuestTool], answer: &str) {
    let limits = Limits { max_tool_calls: MAX_TOOL_CALLS, ..Limits::default() };
    let request = ExecuteRequest { code, tools, files: &[], limits, now_ns: None };
    let mut step = container.execute(request).await.expect("execute");
    while let Step::Pending(pending) = step {
        let results: Vec<CallResult> = pending.calls.iter().map(|call| CallResult::ok(call.seq, answer)).collect();
        step = container.resume(&results, &[], None).await.expect("resume");
    }
    match step {
        Step::Finished(outcome) => assert_eq!(outcome.return_code, 0, "{}", outcome.stderr),
        Step::Pending(_) => unreachable!("the loop answers every pause"),
    }
}

fn median_and_min(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], samples[0])
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes `--bench`; the first other argument is the file.
    let file = std::env::args().skip(1).find(|arg| !arg.starts_with("--")).unwrap_or_else(|| DEFAULT_FILE.into());
    let rounds: usize =
        std::env::var("SLUICE_CELLS_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(DEFAULT_ROUNDS);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let mut cells = cells(&text);
    let answer = tool_result_rows::tool_result_rows();
    let tools = [GuestTool { name: "fetch_rows".into(), params: vec![], description: None, answered_in_place: true }];
    let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("a sandbox");
    let mut container = sandbox.create_container().await.expect("a container");
    let (setup, timed): (Vec<&mut Cell>, Vec<&mut Cell>) = cells.iter_mut().partition(|c| c.name.starts_with("setup"));
    for cell in setup {
        run(&mut container, &cell.code, &tools, &answer).await;
    }
    let mut timed = timed;
    for round in 0..WARMUP_ROUNDS + rounds {
        for cell in timed.iter_mut() {
            let started = Instant::now();
            run(&mut container, &cell.code, &tools, &answer).await;
            if round >= WARMUP_ROUNDS {
                cell.samples.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    println!("{file}: {rounds} runs of each cell, back to back in one warm container\n");
    println!("| cell | median | fastest |\n| --- | ---: | ---: |");
    for cell in timed {
        let (median, min) = median_and_min(&mut cell.samples);
        println!("| {} | {median:.3} ms | {min:.3} ms |", cell.name);
    }
}
