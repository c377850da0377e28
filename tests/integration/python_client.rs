//! The Python client (`clients/python`): its pytest suite against a `sluice serve` it starts
//! from this build, and its types checked by mypy (strict).

use crate::common;
use crate::python_env::PythonParts;
use std::path::Path;
use std::process::Command;

fn run(parts: &PythonParts, args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python");
    let output = Command::new(&parts.python)
        .args(args)
        .current_dir(&root)
        .env("SLUICE_BIN", env!("CARGO_BIN_EXE_sluice"))
        .env("PYTHONPATH", &root)
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "python {args:?} failed:\n{said}");
    said
}

#[test]
fn the_python_client_passes_its_tests_and_its_type_check() {
    let Some(parts) = common::python_parts() else { return };
    let tested = run(&parts, &["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]);
    assert!(tested.contains(" passed") && !tested.contains("failed"), "{tested}");
    let typed = run(&parts, &["-m", "mypy", "--cache-dir", "/dev/null", "sluice_client", "examples/agent.py"]);
    assert!(typed.contains("Success"), "{typed}");
}
