//! Link settings for the wasm guest.

/// Shadow stack for RustPython's native recursion; Python's recursion limit is sized to fit it.
const GUEST_STACK_BYTES: u32 = 8 << 20;

fn main() {
    if std::env::var("TARGET").is_ok_and(|t| t.starts_with("wasm32")) {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size={GUEST_STACK_BYTES}");
    }
}
