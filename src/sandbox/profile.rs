//! A sampling profiler for guest code: the guest's call stack, by function name, at each epoch tick.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime::{AsContext, WasmBacktrace};

/// Frames kept per sample, innermost first: enough for the interpreter's nesting under the
/// guest's exports, while runaway recursion does not make each sample unbounded.
pub(super) const MAX_PROFILE_FRAMES: usize = 512;

/// Guest call stacks counted at epoch ticks (about one per millisecond of guest run time) in
/// every container of a sandbox configured with it. Off unless a [`SandboxConfig`] carries
/// one: a sample walks the guest stack, which costs microseconds.
///
/// Samples hold function indices; [`GuestProfiler::stop`] names them from the guest's own
/// name section, which the compiled image leaves out (see `image::without_names`).
///
/// [`SandboxConfig`]: super::SandboxConfig
#[derive(Debug, Default)]
pub struct GuestProfiler {
    enabled: std::sync::atomic::AtomicBool,
    stacks: Mutex<HashMap<Vec<u32>, u64>>,
}

impl GuestProfiler {
    /// A profiler that samples once [`GuestProfiler::start`] is called.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Starts sampling, forgetting earlier samples.
    pub fn start(&self) {
        self.stacks.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.resume();
    }

    /// Stops sampling for a while, keeping the samples so far: what runs until
    /// [`GuestProfiler::resume`] (a bench's cleanup between measured runs, say) is not counted.
    pub fn pause(&self) {
        self.enabled.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Samples again after [`GuestProfiler::pause`], adding to the samples so far.
    pub fn resume(&self) {
        self.enabled.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Stops sampling and returns the stacks seen (innermost frame first, each function by
    /// its name) with their counts.
    pub fn stop(&self) -> Vec<(Vec<Arc<str>>, u64)> {
        self.pause();
        let stacks = std::mem::take(&mut *self.stacks.lock().unwrap_or_else(|p| p.into_inner()));
        let names = function_names();
        let mut unnamed: HashMap<u32, Arc<str>> = HashMap::new();
        let mut name = |index: u32| match names.get(&index) {
            Some(name) => name.clone(),
            None => unnamed.entry(index).or_insert_with(|| format!("<function {index}>").into()).clone(),
        };
        stacks.into_iter().map(|(stack, count)| (stack.into_iter().map(&mut name).collect(), count)).collect()
    }

    /// Records the stack of the guest running in `store` (called from the epoch callback).
    pub(crate) fn sample(&self, store: impl AsContext) {
        if !self.enabled.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let trace = WasmBacktrace::capture(&store);
        let stack: Vec<u32> = trace.frames().iter().take(MAX_PROFILE_FRAMES).map(|frame| frame.func_index()).collect();
        *self.stacks.lock().unwrap_or_else(|p| p.into_inner()).entry(stack).or_default() += 1;
    }
}

/// The guest's function names by function index, read once from the embedded guest's name
/// section (pre-initialization keeps every function where it was).
fn function_names() -> &'static HashMap<u32, Arc<str>> {
    static NAMES: OnceLock<HashMap<u32, Arc<str>>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let Ok(guest) = lz4_flex::decompress_size_prepended(sluice_python_wasm::WASM_LZ4) else {
            return HashMap::new();
        };
        names_in(&guest)
    })
}

/// The function names of `wasm`'s name section (none when it has none or it is malformed).
fn names_in(wasm: &[u8]) -> HashMap<u32, Arc<str>> {
    let mut names = HashMap::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let Ok(wasmparser::Payload::CustomSection(section)) = payload else { continue };
        let wasmparser::KnownCustom::Name(reader) = section.as_known() else { continue };
        for subsection in reader {
            let Ok(wasmparser::Name::Function(map)) = subsection else { continue };
            for naming in map.into_iter().flatten() {
                names.insert(naming.index, Arc::from(naming.name));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_named_from_the_guest_by_index() {
        let names = function_names();
        assert!(names.len() > 10_000, "the guest names its functions: {}", names.len());
        let guest = lz4_flex::decompress_size_prepended(sluice_python_wasm::WASM_LZ4).unwrap();
        let exported = wasmparser::Parser::new(0)
            .parse_all(&guest)
            .find_map(|payload| match payload.unwrap() {
                wasmparser::Payload::ExportSection(reader) => {
                    reader.into_iter().map(Result::unwrap).find(|export| export.name == "sluice_step").map(|e| e.index)
                }
                _ => None,
            })
            .expect("the guest exports sluice_step");
        // wasm-ld wraps each export of a command module: `sluice_step.command_export`.
        let name = names.get(&exported).expect("the export is named");
        assert!(name.starts_with("sluice_step"), "{name}");
        assert!(names_in(b"\0asm\x01\0\0\0").is_empty(), "a module without names has none");
    }
}
