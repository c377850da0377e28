//! The Rust side of `benches/peers/driver.py`, which runs CPython and Monty for the benches.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The Monty the benches compare with, installed into `target/peers-venv`.
pub const MONTY_PACKAGE: &str = "pydantic-monty==1.4.0";

/// `benches/peers/driver.py`, running CPython and Monty: one JSON request a line, one JSON
/// answer a line.
pub struct Driver {
    pub python: PathBuf,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The driver's first line: the Python version, and Monty's version or why it is missing.
    pub hello: Value,
}

impl Driver {
    pub fn start(python: &Path) -> Driver {
        let mut child = Command::new(python)
            .arg(driver_path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the Python driver starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the driver says hello");
        let hello = serde_json::from_str(&line).expect("the driver's hello is JSON");
        Driver { python: python.to_owned(), child, stdin, stdout, hello }
    }

    /// Whether Monty runs here; the reason it does not, otherwise.
    pub fn monty_problem(&self) -> Option<String> {
        match self.hello.get("monty") {
            Some(_) => None,
            None => Some(self.hello["monty_error"].as_str().unwrap_or("not installed").to_owned()),
        }
    }

    /// Sends `request` and waits for its answer; the driver's error, if it reports one.
    pub fn ask(&mut self, request: &Value) -> Result<Value, String> {
        writeln!(self.stdin, "{request}").map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let reply: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        match reply["error"].as_str() {
            Some(error) => Err(error.to_owned()),
            None => Ok(reply),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn driver_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/driver.py")
}

/// A virtual environment with pydantic-monty; on failure, the system Python and the reason.
pub fn python_with_monty() -> (PathBuf, Option<String>) {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers-venv");
    let python = venv.join("bin/python3");
    let installed = || {
        Command::new(&python)
            .args(["-c", "import pydantic_monty"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if installed() {
        return (python, None);
    }
    eprintln!("installing {MONTY_PACKAGE} into {}", venv.display());
    let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).status().is_ok_and(|s| s.success());
    let pip = made
        && Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", MONTY_PACKAGE])
            .status()
            .is_ok_and(|s| s.success());
    match (made, pip && installed()) {
        (_, true) => (python, None),
        (true, false) => (python, Some(format!("pip could not install {MONTY_PACKAGE}"))),
        (false, _) => (PathBuf::from("python3"), Some("python3 -m venv failed".into())),
    }
}
