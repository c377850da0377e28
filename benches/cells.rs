//! Pieces of a workload timed one cell at a time, back to back in one warm container.
//!
//! Run with `cargo bench --bench cells` (the cells of `benches/cells/workload_pieces.cells`) or
//! `cargo bench --bench cells -- FILE`. The peers bench times whole workloads, each after an
//! idle pause and beside other systems, which a noisy hour moves by more than a change to one
//! piece; this one runs each cell many times back to back, so that two builds run after one
//! another can be compared piece by piece (take each cell's fastest run as well as its
//! median: the noise only ever adds). A file holds cells, each after a line `#---- name`; the
//! cells named `setup...` run once, untimed, before the others. A script may await
//! `fetch_rows({})`, answered in place with the peers bench's 1,000 records (workload 6), and
//! `get({...})`, answered in place with `"1"` (workload 5a's tool). After each timed run, an
//! untimed cell deletes the names the cell made, so that no run frees the last one's values
//! inside its timing (`orders2 = ...` would otherwise drop 10,000 records as it stores).
//!
//! `SLUICE_CELLS_ROUNDS` sets how many times each timed cell runs (default 100, after 3 more
//! untimed). With `SLUICE_CELLS_PEERS=1` each run of a cell is followed by the same cell in
//! CPython and in Monty (the peers bench's `driver.py` and venv; each in a fresh scope or
//! session after the setup cells, as the peers bench runs them), the table gains their medians
//! and per-run ratios (above 1: slower than Sluice), and every system must print the same.
//! With `SLUICE_CELLS_PROFILE=1` the sandbox samples the guest's stack (once a millisecond of
//! guest time) and each cell's table is followed by the functions most often on top. Those
//! samples fall only where the guest checks the epoch (function entries, loop heads); for
//! where the time really goes, `SLUICE_CELLS_PERF_MAP=1` has wasmtime write
//! `/tmp/perf-<pid>.map`, and `perf record -e cpu-clock` of this bench then names guest
//! functions by index (`wasm[0]::function[N]`; `wasm-objdump -x -j name` of the guest wasm
//! gives their names).

// Its memory figures are the other benches'.
#[allow(dead_code)]
mod common;
use common::median;
// Shared with the peers bench, which also uses what this one does not.
#[allow(dead_code)]
#[path = "peers/driver.rs"]
mod driver;
#[path = "../examples/support/mod.rs"]
mod support;
#[path = "peers/tool_result_rows.rs"]
mod tool_result_rows;

use driver::{Driver, python_with_monty};
use serde_json::{Value, json};
use sluice::{CallResult, Container, ExecuteRequest, GuestTool, Limits, Sandbox, SandboxConfig, Step};
use std::collections::HashMap;
use std::time::Instant;

const DEFAULT_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/cells/workload_pieces.cells");
const DEFAULT_ROUNDS: usize = 100;
const WARMUP_ROUNDS: usize = 3;
const CELL_MARK: &str = "#---- ";
/// Functions listed per cell when profiling.
const PROFILE_TOP: usize = 12;
/// Enough for a cell that awaits in a loop.
const MAX_TOOL_CALLS: u64 = 100_000;
/// What `get` answers, as workload 5a's tool does.
const GET_ANSWER: &str = "1";
/// Run once after the setup cells: the names a timed cell may not delete.
const REMEMBER_SETUP_NAMES: &str = "_cells_setup_names = set(globals()) | {\"_cells_setup_names\"}";
/// Run, untimed, after each timed cell: deletes what the cell made.
const FORGET_CELL_NAMES: &str =
    "for _name in [n for n in globals() if n not in _cells_setup_names]:\n    del globals()[_name]\n";
/// The peers, in the order they run after Sluice.
const PEERS: [&str; 2] = ["cpython", "monty"];

struct Cell {
    name: String,
    code: String,
    samples: Vec<f64>,
    /// Per peer: its times, and each divided by Sluice's time in the same round.
    peers: HashMap<&'static str, (Vec<f64>, Vec<f64>)>,
    /// Why a peer has no figures for this cell (skipped, failed, or printed otherwise).
    peer_problems: HashMap<&'static str, String>,
    /// Self samples per guest function, when profiling.
    leaves: HashMap<String, u64>,
}

/// Cells of `text`, in order: each starts at a line `#---- name` (what comes before the first
/// is a comment).
fn cells(text: &str) -> Vec<Cell> {
    text.split(CELL_MARK)
        .skip(1)
        .map(|part| {
            let (name, code) = part.split_once('\n').unwrap_or((part, ""));
            Cell {
                name: name.trim().to_owned(),
                code: code.to_owned(),
                samples: Vec::new(),
                peers: HashMap::new(),
                peer_problems: HashMap::new(),
                leaves: HashMap::new(),
            }
        })
        .collect()
}

/// Runs `code` to its end, answering `get` with [`GET_ANSWER`] and every other call with
/// `answer`; its output. Panics unless it succeeds.
async fn run(container: &mut Container, code: &str, tools: &[GuestTool], answer: &str) -> String {
    let limits = Limits { max_tool_calls: MAX_TOOL_CALLS, ..Limits::default() };
    let request = ExecuteRequest { code, tools, files: &[], limits, now_ns: None };
    let mut step = container.execute(request).await.expect("execute");
    while let Step::Pending(pending) = step {
        let results: Vec<CallResult> = pending
            .calls
            .iter()
            .map(|call| CallResult::ok(call.seq, if call.name == "get" { GET_ANSWER } else { answer }))
            .collect();
        step = container.resume(&results, &[], None).await.expect("resume");
    }
    match step {
        Step::Finished(outcome) => {
            assert_eq!(outcome.return_code, 0, "{}", outcome.stderr);
            outcome.stdout
        }
        Step::Pending(_) => unreachable!("the loop answers every pause"),
    }
}

fn fastest(samples: &[f64]) -> f64 {
    samples.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Runs `code` in `peer` after the setup cells, in a fresh scope or session; its time.
fn run_in_peer(
    driver: &mut Driver,
    peer: &str,
    setup: &[String],
    code: &str,
    tools: &Value,
    sluice_output: &str,
) -> Result<f64, String> {
    let request = json!({"system": peer, "setup": setup, "cells": [code], "tools": tools});
    let reply = driver.ask(&request)?;
    let output = reply["output"].as_str().unwrap_or_default();
    if output != sluice_output {
        return Err(format!("printed {output:?}, Sluice {sluice_output:?}"));
    }
    Ok(reply["ms"].as_f64().unwrap_or(f64::NAN))
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
    let tools = ["fetch_rows", "get"].map(|name| GuestTool {
        name: name.into(),
        params: vec![],
        description: None,
        answered_in_place: true,
    });
    let peer_tools = json!({
        "fetch_rows": {"kind": "const", "value": answer},
        "get": {"kind": "const", "value": GET_ANSWER},
    });
    let mut driver = std::env::var_os("SLUICE_CELLS_PEERS").map(|_| {
        let (python, problem) = python_with_monty();
        if let Some(problem) = problem {
            eprintln!("Monty skipped: {problem}");
        }
        Driver::start(&python)
    });
    let profiler = std::env::var_os("SLUICE_CELLS_PROFILE").map(|_| sluice::GuestProfiler::new());
    let perf_map = std::env::var_os("SLUICE_CELLS_PERF_MAP").is_some();
    let config = SandboxConfig { profiler: profiler.clone(), perf_map, ..SandboxConfig::default() };
    let sandbox = Sandbox::new(config).await.expect("a sandbox");
    let mut container = sandbox.create_container().await.expect("a container");
    let (setup, mut timed): (Vec<&mut Cell>, Vec<&mut Cell>) =
        cells.iter_mut().partition(|c| c.name.starts_with("setup"));
    let setup_code: Vec<String> = setup.iter().map(|cell| cell.code.clone()).collect();
    for code in setup_code.iter().map(String::as_str).chain([REMEMBER_SETUP_NAMES]) {
        run(&mut container, code, &tools, &answer).await;
    }
    if let Some(driver) = &driver
        && let Some(problem) = driver.monty_problem()
    {
        for cell in timed.iter_mut() {
            cell.peer_problems.insert("monty", format!("skipped: {problem}"));
        }
    }
    for round in 0..WARMUP_ROUNDS + rounds {
        for cell in timed.iter_mut() {
            if let Some(profiler) = &profiler {
                profiler.start();
            }
            let started = Instant::now();
            let output = run(&mut container, &cell.code, &tools, &answer).await;
            let ms = started.elapsed().as_secs_f64() * 1e3;
            if let Some(profiler) = &profiler {
                for (stack, count) in profiler.stop() {
                    let leaf = stack.first().map(|f| format!("{:#}", rustc_demangle::demangle(f))).unwrap_or_default();
                    *cell.leaves.entry(leaf).or_default() += count;
                }
            }
            run(&mut container, FORGET_CELL_NAMES, &tools, &answer).await;
            if round >= WARMUP_ROUNDS {
                cell.samples.push(ms);
            }
            let Some(driver) = driver.as_mut() else { continue };
            for peer in PEERS {
                if cell.peer_problems.contains_key(peer) {
                    continue;
                }
                match run_in_peer(driver, peer, &setup_code, &cell.code, &peer_tools, &output) {
                    Ok(peer_ms) if round >= WARMUP_ROUNDS => {
                        let (times, ratios) = cell.peers.entry(peer).or_default();
                        times.push(peer_ms);
                        ratios.push(peer_ms / ms);
                    }
                    Ok(_) => {}
                    Err(problem) => {
                        cell.peer_problems.insert(peer, problem);
                    }
                }
            }
        }
    }
    print_table(&file, rounds, &timed, driver.as_ref());
    if profiler.is_some() {
        for cell in timed {
            print_profile(cell);
        }
    }
}

fn print_table(file: &str, rounds: usize, cells: &[&mut Cell], driver: Option<&Driver>) {
    println!("{file}: {rounds} runs of each cell, back to back in one warm container\n");
    let Some(driver) = driver else {
        println!("| cell | median | fastest |\n| --- | ---: | ---: |");
        for cell in cells {
            println!("| {} | {:.3} ms | {:.3} ms |", cell.name, median(&cell.samples), fastest(&cell.samples));
        }
        return;
    };
    let python = driver.hello["python"].as_str().unwrap_or("?");
    let monty = driver.hello["monty"].as_str().unwrap_or("?");
    println!("Each cell median (fastest); ×: the median of per-run ratios to Sluice (above 1: slower than Sluice).\n");
    println!("| cell | Sluice | CPython {python} | Monty {monty} |\n| --- | ---: | ---: | ---: |");
    for cell in cells {
        let mut row = format!("| {} | {:.3} ms ({:.3}) |", cell.name, median(&cell.samples), fastest(&cell.samples));
        for peer in PEERS {
            row += &match (cell.peer_problems.get(peer), cell.peers.get(peer)) {
                (Some(problem), _) => format!(" {} |", problem.replace('|', "/").chars().take(80).collect::<String>()),
                (None, Some((times, ratios))) => {
                    format!(" {:.3} ms ({:.3}) ×{:.2} |", median(times), fastest(times), median(ratios))
                }
                (None, None) => " n/a |".into(),
            };
        }
        println!("{row}");
    }
}

/// The functions most often on top of the guest's stack while `cell` ran, with their shares.
fn print_profile(cell: &Cell) {
    let total: u64 = cell.leaves.values().sum();
    let mut leaves: Vec<(&String, &u64)> = cell.leaves.iter().collect();
    leaves.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    println!("\n{}: {total} samples\n", cell.name);
    for (name, count) in leaves.into_iter().take(PROFILE_TOP) {
        let name: String = name.chars().take(120).collect();
        println!("{:5.1}%  {name}", 100.0 * *count as f64 / total.max(1) as f64);
    }
}
