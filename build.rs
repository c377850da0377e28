//! Builds the Python guest (`sandbox-images/python`) for wasm32-wasip1, always in release mode.
//!
//! The guest has its own workspace and lockfile; this script only drives `cargo build` on it
//! and hands the host the path of the `.wasm` as `SLUICE_GUEST_WASM`. Set `SLUICE_GUEST_WASM`
//! yourself to use a prebuilt guest.

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
        println!("cargo:rustc-env=SLUICE_GUEST_WASM={prebuilt}");
        export_digest(Path::new(&prebuilt));
        return;
    }
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let guest = root.join(GUEST_DIR);
    for watched in ["src", "Cargo.toml", "Cargo.lock", "build.rs"] {
        println!("cargo:rerun-if-changed={}", guest.join(watched).display());
    }
    ensure_target_installed();
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target")).join("guest");
    build_guest(&guest, &target_dir);
    let wasm = target_dir.join(GUEST_TARGET).join("release").join(GUEST_ARTIFACT);
    assert!(wasm.exists(), "guest build produced no {}", wasm.display());
    println!("cargo:rustc-env=SLUICE_GUEST_WASM={}", wasm.display());
    export_digest(&wasm);
}

/// SHA-256 of the guest, for the image's content hash (`SLUICE_GUEST_SHA256`).
fn export_digest(wasm: &Path) {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(wasm).unwrap_or_else(|e| panic!("reading {}: {e}", wasm.display()));
    let digest: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=SLUICE_GUEST_SHA256={digest}");
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
