//! Builds the Python guest (`sandbox-images/python`) for wasm32-wasip1, always in release mode.
//!
//! The guest has its own workspace and lockfile; this script only drives `cargo build` on it
//! and hands the host the guest, lz4-compressed (`SLUICE_GUEST_WASM_LZ4`: it is embedded in the
//! binary and needed only when the image cache misses), and its digest. Set
//! `SLUICE_GUEST_WASM` yourself to use a prebuilt guest.

use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-wasip1";
const GUEST_DIR: &str = "sandbox-images/python";
const GUEST_ARTIFACT: &str = "sluice_guest_python.wasm";

/// Variables of the outer build that must not leak into the guest's (clippy's wrapper, flags
/// meant for the host, a target directory the outer cargo holds a lock on).
const SCRUBBED_ENV: &[&str] = &[
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_PROFILE_RELEASE_DEBUG",
];

fn main() {
    println!("cargo:rerun-if-env-changed=SLUICE_GUEST_WASM");
    if let Ok(prebuilt) = std::env::var("SLUICE_GUEST_WASM") {
        println!("cargo:rerun-if-changed={prebuilt}");
        export_guest(Path::new(&prebuilt));
        return;
    }
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let guest = root.join(GUEST_DIR);
    for watched in ["src", "Cargo.toml", "Cargo.lock", "build.rs", ".cargo/config.toml"] {
        println!("cargo:rerun-if-changed={}", guest.join(watched).display());
    }
    ensure_target_installed();
    ensure_wasm_c_compiler();
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target")).join("guest");
    build_guest(&guest, &target_dir);
    let wasm = target_dir.join(GUEST_TARGET).join("release").join(GUEST_ARTIFACT);
    assert!(wasm.exists(), "guest build produced no {}", wasm.display());
    export_guest(&wasm);
}

/// Hands the guest to the host crate: compressed (27 MB of wasm become about 16) as
/// `SLUICE_GUEST_WASM_LZ4`, and its SHA-256, for the image's content hash, as
/// `SLUICE_GUEST_SHA256`.
fn export_guest(wasm: &Path) {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(wasm).unwrap_or_else(|e| panic!("reading {}: {e}", wasm.display()));
    let digest: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=SLUICE_GUEST_SHA256={digest}");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("guest.wasm.lz4");
    std::fs::write(&out, lz4_flex::compress_prepend_size(&bytes))
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
    println!("cargo:rustc-env=SLUICE_GUEST_WASM_LZ4={}", out.display());
}

/// The guest compiles SQLite's C for wasm: clang and a WASI libc must be here. Checked first,
/// so a machine without them gets one clear line instead of a C compiler's error.
fn ensure_wasm_c_compiler() {
    use std::io::Write;
    let mut sysroot = Vec::new();
    if let Ok(path) = std::env::var("WASI_SYSROOT") {
        sysroot.push(format!("--sysroot={path}"));
    }
    let probe = Command::new("clang")
        .args(["--target=wasm32-wasi", "-fsyntax-only", "-x", "c", "-"])
        .args(&sysroot)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().expect("piped").write_all(b"#include <stdio.h>\nint main(void) { return 0; }\n")?;
            child.wait()
        });
    if !matches!(probe, Ok(status) if status.success()) {
        panic!(
            "the guest's SQLite needs clang and a WASI libc to compile for wasm32: on Debian or Ubuntu, \
             `apt-get install clang llvm wasi-libc`; elsewhere set WASI_SYSROOT to a wasi-sdk sysroot \
             (or set SLUICE_GUEST_WASM to a prebuilt guest)"
        );
    }
}

fn ensure_target_installed() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let installed = sysroot.map(|s| Path::new(&s).join("lib/rustlib").join(GUEST_TARGET).exists()).unwrap_or(false);
    if installed {
        return;
    }
    let status = Command::new("rustup").args(["target", "add", GUEST_TARGET]).status();
    if !matches!(status, Ok(s) if s.success()) {
        panic!(
            "the {GUEST_TARGET} target is missing and `rustup target add {GUEST_TARGET}` failed; \
             install it by hand, or set SLUICE_GUEST_WASM to a prebuilt guest"
        );
    }
}

fn build_guest(guest: &Path, target_dir: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(guest)
        .args(["build", "--release", "--locked", "--target", GUEST_TARGET])
        // RustPython's parser crates declare a newer rust-version than they need.
        .arg("--ignore-rust-version")
        .arg("--target-dir")
        .arg(target_dir);
    for name in SCRUBBED_ENV {
        command.env_remove(name);
    }
    let status = command.status().expect("cargo can be run from a build script");
    assert!(status.success(), "building the Python guest failed (see the output above)");
}
