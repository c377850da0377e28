#!/usr/bin/env bash
# Rebuilds the Python guest from sandbox-images/python and records it as the prebuilt guest:
# run after changing the guest's Rust sources, Cargo.toml or Cargo.lock, and commit both files.
# (The runtime's Python, sandbox-images/python/runtime, is not in the wasm: no refresh needed.)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="$(cd "$root" && mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)"
SLUICE_GUEST_FROM_SOURCE=1 cargo build --locked --manifest-path "$root/Cargo.toml" -p sluice-python-wasm
cp "$target/guest/wasm32-wasip1/release/sluice_guest_python.wasm" "$root/sandbox-images/python-wasm/"
cp "$target/guest/sluice_guest_python.manifest" "$root/sandbox-images/python-wasm/"
grep -v '^#' "$root/sandbox-images/python-wasm/sluice_guest_python.manifest"
