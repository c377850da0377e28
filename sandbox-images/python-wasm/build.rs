//! Finds or builds the Python guest and hands it to the host, lz4-compressed, with its digest.
//!
//! Where the guest comes from, in order:
//! 1. `SLUICE_GUEST_WASM=/path/to/guest.wasm`: that file, as it is.
//! 2. The prebuilt guest beside this crate (`sluice_guest_python.wasm`), when the digest of
//!    `sandbox-images/python`'s sources equals the one its manifest records and the file's
//!    SHA-256 equals the manifest's. A file that does not match its manifest stops the build.
//! 3. Otherwise, or with `SLUICE_GUEST_FROM_SOURCE=1`, a build from source in release mode
//!    (fat LTO) into `target/guest/`, with a manifest beside it that `refresh.sh` copies here.
//!    `SLUICE_GUEST_FROM_SOURCE=verify` builds from source and fails unless the result is the
//!    prebuilt guest byte for byte: CI's proof that the committed file is what the sources make.
//!    (Four things made builds differ. Three are fixed here: Cargo's home in panic locations,
//!    RustPython's macros emitting code in HashMap order (see `fixed_random.c`), and RustPython's
//!    build script writing into `sys.version` the git commit it is built in, which from
//!    `patched/` (below) would be Sluice's. The fourth, the build time it writes there too, is
//!    left out of the comparison.)
//!
//! A build from source first runs `sandbox-images/python/patches/apply.sh`, which makes
//! `sandbox-images/python/patched/`, the crates the guest's `[patch.crates-io]` names: each
//! published crate (checked against its crates.io checksum) with our diff from `patches/`
//! applied. The diffs are among the sources the manifest's digest covers; `patched/` is made
//! from them, so it is not.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-wasip1";
const GUEST_ARTIFACT: &str = "sluice_guest_python.wasm";
const MANIFEST: &str = "sluice_guest_python.manifest";
/// What in `sandbox-images/python` shapes the wasm (its `runtime/` is handed in by the host at
/// pre-initialization, so it is not here). Directories are walked.
const GUEST_SOURCES: &[&str] = &["Cargo.toml", "Cargo.lock", "build.rs", ".cargo/config.toml", "src", "patches"];

/// Variables of the outer build that must not leak into the guest's (clippy's wrapper, flags
/// meant for the host, a target directory the outer cargo holds a lock on, a git repository
/// named outright, which `GIT_CEILING_DIRECTORIES` would not stop: see `build_guest`).
const SCRUBBED_ENV: &[&str] = &[
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_PROFILE_RELEASE_DEBUG",
    "GIT_DIR",
];

/// What the manifest records of one guest.
#[derive(Debug)]
struct Manifest {
    /// SHA-256 over `GUEST_SOURCES` (see `sources_digest`).
    sources: String,
    /// SHA-256 of the wasm.
    wasm: String,
    /// The compilers that made it, for a person comparing builds (not checked).
    rustc: String,
    clang: String,
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let guest_dir = here.join("../python");
    for variable in ["SLUICE_GUEST_WASM", "SLUICE_GUEST_FROM_SOURCE", "WASI_SYSROOT", "CARGO_HOME"] {
        println!("cargo:rerun-if-env-changed={variable}");
    }
    if let Ok(file) = std::env::var("SLUICE_GUEST_WASM") {
        println!("cargo:rerun-if-changed={file}");
        export_guest(&read(Path::new(&file)), "SLUICE_GUEST_WASM");
        return;
    }
    for watched in GUEST_SOURCES {
        println!("cargo:rerun-if-changed={}", guest_dir.join(watched).display());
    }
    let (prebuilt, manifest_path) = (here.join(GUEST_ARTIFACT), here.join(MANIFEST));
    println!("cargo:rerun-if-changed={}", prebuilt.display());
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    let sources = sources_digest(&guest_dir);
    let recorded = std::fs::read_to_string(&manifest_path).ok().map(|text| parse_manifest(&text, &manifest_path));
    let mode = std::env::var("SLUICE_GUEST_FROM_SOURCE").unwrap_or_default();
    if mode.is_empty() || mode == "0" {
        if let Some(manifest) = recorded.as_ref().filter(|m| m.sources == sources) {
            let wasm = read(&prebuilt);
            let digest = sha256_hex(&wasm);
            assert!(
                digest == manifest.wasm,
                "{} has SHA-256 {digest}, but {} records {}: the file is damaged or was replaced; \
                 restore it from git, or run sandbox-images/python-wasm/refresh.sh to rebuild it from source",
                prebuilt.display(),
                manifest_path.display(),
                manifest.wasm
            );
            export_guest(&wasm, "prebuilt");
            return;
        }
        println!(
            "cargo:warning=the guest's sources changed since the prebuilt guest was made: building it from \
             source (minutes); sandbox-images/python-wasm/refresh.sh records a new prebuilt guest"
        );
    }
    let target_dir = outer_target_dir().unwrap_or_else(|| here.join("../../target")).join("guest");
    let built = build_guest(&guest_dir, &target_dir);
    let wasm = read(&built);
    let made =
        Manifest { sources, wasm: sha256_hex(&wasm), rustc: tool_version("rustc"), clang: tool_version("clang") };
    let made_path = target_dir.join(MANIFEST);
    std::fs::write(&made_path, render_manifest(&made))
        .unwrap_or_else(|e| panic!("writing {}: {e}", made_path.display()));
    if mode == "verify" {
        let Some(manifest) = recorded else { panic!("no {} to verify against", manifest_path.display()) };
        let same_wasm = manifest.wasm == made.wasm
            || std::fs::read(&prebuilt).is_ok_and(|committed| same_but_build_time(&committed, &wasm));
        assert!(
            manifest.sources == made.sources && same_wasm,
            "the guest built from source is not the prebuilt one:\n  prebuilt: sources {} wasm {} ({}; {})\n  \
             built:    sources {} wasm {} ({}; {})\nrun sandbox-images/python-wasm/refresh.sh and commit the result",
            manifest.sources,
            manifest.wasm,
            manifest.rustc,
            manifest.clang,
            made.sources,
            made.wasm,
            made.rustc,
            made.clang
        );
    }
    export_guest(&wasm, "source");
}

/// The outer build's target directory, found from `OUT_DIR` inside it (cargo marks its root
/// with `CACHEDIR.TAG`): `CARGO_TARGET_DIR` may be relative to a directory this script does
/// not know, and the guest's build runs elsewhere.
fn outer_target_dir() -> Option<PathBuf> {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR")?);
    out_dir.ancestors().find(|dir| dir.join("CACHEDIR.TAG").is_file()).map(Path::to_path_buf)
}

/// RustPython's build script writes the time it ran into `sys.version` ("..., Dec  2 2026,
/// 01:37:04)"): it reads the clock and ignores `SOURCE_DATE_EPOCH`. The one part of the guest
/// that differs between builds of the same sources, so two guests are compared without it.
fn same_but_build_time(a: &[u8], b: &[u8]) -> bool {
    const BEFORE: &[u8] = b"unknown-branch:0000000, ";
    const DATE_AND_TIME: usize = "Dec  2 2026, 01:37:04".len();
    let stamp = |wasm: &[u8]| {
        let at = wasm.windows(BEFORE.len()).position(|window| window == BEFORE)? + BEFORE.len();
        Some(at..(at + DATE_AND_TIME).min(wasm.len()))
    };
    match (stamp(a), stamp(b)) {
        (Some(x), Some(y)) => x == y && a.len() == b.len() && a[..x.start] == b[..x.start] && a[x.end..] == b[x.end..],
        _ => a == b,
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 over each source file's path (relative, `/`-separated) and contents, in path order,
/// each length-prefixed so no two trees hash alike.
fn sources_digest(guest_dir: &Path) -> String {
    let mut files = Vec::new();
    for source in GUEST_SOURCES {
        collect_files(guest_dir, Path::new(source), &mut files);
    }
    files.sort();
    let mut hasher = Sha256::new();
    for relative in files {
        let name = relative.to_string_lossy().replace('\\', "/");
        let contents = read(&guest_dir.join(&relative));
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((contents.len() as u64).to_le_bytes());
        hasher.update(&contents);
    }
    hex(&hasher.finalize())
}

fn collect_files(root: &Path, relative: &Path, files: &mut Vec<PathBuf>) {
    let path = root.join(relative);
    if path.is_dir() {
        let entries = std::fs::read_dir(&path).unwrap_or_else(|e| panic!("listing {}: {e}", path.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("listing {}: {e}", path.display()));
            collect_files(root, &relative.join(entry.file_name()), files);
        }
    } else if path.is_file() {
        files.push(relative.to_owned());
    }
}

fn parse_manifest(text: &str, path: &Path) -> Manifest {
    let field = |key: &str| {
        text.lines()
            .filter(|line| !line.starts_with('#'))
            .find_map(|line| line.strip_prefix(key).and_then(|rest| rest.strip_prefix(' ')))
            .map(|value| value.trim().to_owned())
            .unwrap_or_else(|| panic!("{} has no `{key}` line", path.display()))
    };
    Manifest { sources: field("sources"), wasm: field("wasm"), rustc: field("rustc"), clang: field("clang") }
}

fn render_manifest(manifest: &Manifest) -> String {
    format!(
        "# The prebuilt Python guest beside this file: the digest of the sandbox-images/python sources it\n\
         # was built from, its own SHA-256, and the compilers that built it. Written by refresh.sh;\n\
         # checked by build.rs at every build and, from source, by CI.\n\
         sources {}\nwasm {}\nrustc {}\nclang {}\n",
        manifest.sources, manifest.wasm, manifest.rustc, manifest.clang
    )
}

fn tool_version(tool: &str) -> String {
    let program = if tool == "rustc" { std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()) } else { tool.into() };
    Command::new(program)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

/// Hands the guest to the crate: compressed (29 MB of wasm become about 16) as
/// `SLUICE_GUEST_WASM_LZ4`, its SHA-256 as `SLUICE_GUEST_SHA256`, and where it came from.
fn export_guest(wasm: &[u8], origin: &str) {
    println!("cargo:rustc-env=SLUICE_GUEST_SHA256={}", sha256_hex(wasm));
    println!("cargo:rustc-env=SLUICE_GUEST_ORIGIN={origin}");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("guest.wasm.lz4");
    std::fs::write(&out, lz4_flex::compress_prepend_size(wasm))
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
    println!("cargo:rustc-env=SLUICE_GUEST_WASM_LZ4={}", out.display());
}

/// Builds the guest from source and returns the path of the wasm.
fn build_guest(guest_dir: &Path, target_dir: &Path) -> PathBuf {
    ensure_target_installed();
    ensure_wasm_c_compiler();
    apply_patches(guest_dir);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(guest_dir)
        .args(["build", "--release", "--locked", "--target", GUEST_TARGET])
        // RustPython's parser crates declare a newer rust-version than they need.
        .arg("--ignore-rust-version")
        .arg("--target-dir")
        .arg(target_dir);
    for name in SCRUBBED_ENV {
        command.env_remove(name);
    }
    // Panic locations name dependencies' files by absolute path: write Cargo's home as
    // `/cargo`, so the same sources make the same wasm whoever's home they were built under.
    // (The patched crates are inside the guest's directory, so cargo names their files
    // relatively, `patched/...`, the same in every clone.)
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    // As configuration, not `CARGO_ENCODED_RUSTFLAGS`, which would replace the guest's own
    // `rustflags` (`python/.cargo/config.toml`) where configuration merges with them.
    if let Some(cargo_home) = cargo_home {
        let home = cargo_home.display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
        command.arg("--config").arg(format!("target.{GUEST_TARGET}.rustflags=[\"--remap-path-prefix={home}=/cargo\"]"));
    }
    // RustPython's build script asks git for the commit it is built in and writes it into
    // `sys.version`. From Cargo's registry git finds no repository ("unknown-branch:0000000");
    // from `patched/` it would find Sluice's, and a guest is refreshed before the commit that
    // records it, so CI's build would never match. Git's search for a repository stops at
    // `patched/`, so it answers as it does in the registry.
    command.env("GIT_CEILING_DIRECTORIES", patched_dir(guest_dir));
    // Hash seeds fixed, so RustPython's macros emit code in the same order every build.
    command.env("LD_PRELOAD", fixed_random_library(target_dir));
    let status = command.status().expect("cargo can be run from a build script");
    assert!(status.success(), "building the Python guest failed (see the output above)");
    let wasm = target_dir.join(GUEST_TARGET).join("release").join(GUEST_ARTIFACT);
    assert!(wasm.exists(), "the guest build produced no {}", wasm.display());
    wasm
}

/// Makes `patched/` (see `sandbox-images/python/patches/apply.sh`); quick when it is up to date.
fn apply_patches(guest_dir: &Path) {
    let script = guest_dir.join("patches").join("apply.sh");
    // Everything the script says goes to stderr: a build script's stdout is read by cargo.
    let status = Command::new("bash").arg(&script).stdout(std::io::stderr()).status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => panic!(
            "{} failed ({status}; see its output above): the guest needs the patched crates it makes",
            script.display()
        ),
        Err(e) => panic!("running {} with bash: {e}", script.display()),
    }
}

/// `sandbox-images/python/patched` without `..` or symbolic links, as git compares it with the
/// directories it searches.
fn patched_dir(guest_dir: &Path) -> PathBuf {
    let guest_dir = guest_dir.canonicalize().unwrap_or_else(|e| panic!("resolving {}: {e}", guest_dir.display()));
    guest_dir.join("patched")
}

/// Compiles `fixed_random.c` (see there) for the host, into `target_dir`.
fn fixed_random_library(target_dir: &Path) -> PathBuf {
    let source = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("fixed_random.c");
    println!("cargo:rerun-if-changed={}", source.display());
    std::fs::create_dir_all(target_dir).unwrap_or_else(|e| panic!("creating {}: {e}", target_dir.display()));
    let library = target_dir.join("libsluice_fixed_random.so");
    let status = Command::new("clang")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("clang can be run (checked above)");
    assert!(status.success(), "compiling {} failed", source.display());
    library
}

/// The guest's SQLite needs clang and a WASI libc: checked first, so a machine without them
/// gets one clear line instead of a C compiler's error.
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
            "building the guest from source compiles SQLite for wasm32, which needs clang and a WASI libc: \
             on Debian or Ubuntu, `apt-get install clang llvm wasi-libc`; elsewhere set WASI_SYSROOT to a \
             wasi-sdk sysroot (or set SLUICE_GUEST_WASM to a guest built elsewhere)"
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
            "building the guest from source needs the {GUEST_TARGET} target, and `rustup target add \
             {GUEST_TARGET}` failed; install it by hand, or set SLUICE_GUEST_WASM to a guest built elsewhere"
        );
    }
}
