//! The Python guest (`sandbox-images/python`, wasm32-wasip1) as bytes the host embeds.
//!
//! `build.rs` decides where they come from: the prebuilt guest committed beside this crate when
//! its recorded source digest matches `sandbox-images/python` (the usual case: no RustPython
//! build at all), the guest built from source when the sources have changed or
//! `SLUICE_GUEST_FROM_SOURCE` asks for it, or `SLUICE_GUEST_WASM` naming a file.

/// The guest, lz4-compressed with its length prepended: the host reads it only when its image
/// cache misses, where decompressing costs milliseconds beside seconds of compiling. A
/// `static`: as a `const` it would be copied into the binary at every use.
pub static WASM_LZ4: &[u8] = include_bytes!(env!("SLUICE_GUEST_WASM_LZ4"));

/// SHA-256 of the guest (uncompressed), hex: part of the base image's content hash.
pub const SHA256: &str = env!("SLUICE_GUEST_SHA256");

/// Where the guest came from: `prebuilt`, `source` or `SLUICE_GUEST_WASM`.
pub const ORIGIN: &str = env!("SLUICE_GUEST_ORIGIN");
