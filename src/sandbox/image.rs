//! The base image: guest wasm plus Python runtime, pre-initialized once and cached compiled.
//!
//! Starting the interpreter costs about 75 ms inside wasm, so it runs once, under wizer, and
//! the initialized memory becomes the data of a new module. That module is compiled (seconds)
//! and cached as a `.cwasm` named by the content hash of everything that went into it; later
//! starts map the file in about a millisecond, and every container is a copy-on-write view.

use super::state::HostState;
use super::{SandboxError, build_store, new_linker};
use sluice_python_wasm::{SHA256 as GUEST_SHA256, WASM_LZ4 as GUEST_WASM_LZ4};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use wasmtime::{CacheStore, Engine, Instance, Module, Store};
use wasmtime_wizer::{InstanceState, SnapshotVal, ValType as WizerValType, Wizer};

/// The Python half of the guest, handed in at pre-initialization (name, source), in import
/// order: each module may import the ones before it.
pub(crate) const RUNTIME_MODULES: &[(&str, &str)] = &[
    ("_sluice_preload", include_str!("../../sandbox-images/python/runtime/_sluice_preload.py")),
    ("sluice", include_str!("../../sandbox-images/python/runtime/sluice.py")),
    ("_sluice_fs", include_str!("../../sandbox-images/python/runtime/_sluice_fs.py")),
    ("_sluice_output", include_str!("../../sandbox-images/python/runtime/_sluice_output.py")),
    ("_sluice_calls", include_str!("../../sandbox-images/python/runtime/_sluice_calls.py")),
    ("_sluice_loop", include_str!("../../sandbox-images/python/runtime/_sluice_loop.py")),
    ("_sluice_tools", include_str!("../../sandbox-images/python/runtime/_sluice_tools.py")),
    ("_sluice_cells", include_str!("../../sandbox-images/python/runtime/_sluice_cells.py")),
    ("_sluice_imports", include_str!("../../sandbox-images/python/runtime/_sluice_imports.py")),
    ("_sluice_runtime", include_str!("../../sandbox-images/python/runtime/_sluice_runtime.py")),
];
const RUNTIME_ENTRY: &str = "_sluice_runtime";
/// Modules compiled into the image but run only when a script imports them (name, source).
pub(crate) const LAZY_MODULES: &[(&str, &str)] =
    &[("_sqlite3", include_str!("../../sandbox-images/python/runtime/_sqlite3.py"))];

/// Host code the guest runs against during pre-initialization; it shapes the image too.
const HOST_SOURCES: &[&str] = &[include_str!("wasi.rs"), include_str!("abi.rs"), include_str!("state.rs")];

/// Bump when the way an image is made changes without its inputs changing.
const IMAGE_FORMAT: &str = "sluice-python-image/2";
/// What pre-initialization sees as time and seed: fixed, so the image is reproducible.
const PREINIT_CLOCK_NS: u64 = 1_767_225_600_000_000_000; // 2026-01-01T00:00:00Z
const PREINIT_SEED: u64 = 0;
const PREINIT_MEMORY_BYTES: u64 = 1 << 30;
const PREINIT_FUNC: &str = "sluice_preinit";
/// `\0asm` and the version: where the first section starts.
const WASM_HEADER_BYTES: usize = 8;
const EXPORT_SECTION_ID: u8 = 7;
const NAME_SECTION: &str = "name";

/// A compiled base image and the hash that names it.
pub(crate) struct Image {
    pub module: Module,
    pub hash: String,
}

/// BLAKE3 over everything that shapes the image, and the engine's compatibility (hex). Every
/// process start computes it over some 130 KB of sources: 0.13 ms as SHA-256, a fraction of
/// that as BLAKE3, of a `sluice run` that takes 6 ms in all.
pub(crate) fn content_hash(engine: &Engine) -> String {
    use std::hash::{Hash, Hasher};
    let mut compatibility = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut compatibility);
    let mut hasher = blake3::Hasher::new();
    hasher.update(IMAGE_FORMAT.as_bytes());
    hasher.update(&compatibility.finish().to_le_bytes());
    // Hashed when the guest was embedded: hashing 29 MB here would cost every start about 15 ms.
    hasher.update(GUEST_SHA256.as_bytes());
    for source in HOST_SOURCES {
        hasher.update(&(source.len() as u64).to_le_bytes());
        hasher.update(source.as_bytes());
    }
    for (name, source) in RUNTIME_MODULES.iter().chain(LAZY_MODULES) {
        hasher.update(&(name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update(&(source.len() as u64).to_le_bytes());
        hasher.update(source.as_bytes());
    }
    hasher.finalize().to_hex().to_string()
}

/// Where the compiled image for this build lives in `cache_dir`.
pub(crate) fn cache_path(cache_dir: &Path, hash: &str) -> PathBuf {
    cache_dir.join(format!("python-{hash}.cwasm"))
}

/// Cranelift's output per function, kept while an image is built. Pre-initialization compiles
/// the guest, and the module wizer makes from the initialized instance has the same functions
/// (only its data, globals and exports differ), so compiling the image finds each function here
/// instead of compiling the guest a second time. Holds nothing outside a build, so an engine
/// that compiles other modules does not grow it. Functions are keyed by their Cranelift IR, so
/// the snapshot must compile to the same IR: see `with_exports_of`.
#[derive(Debug, Default)]
pub(crate) struct CompiledFunctions {
    building: AtomicBool,
    entries: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
}

impl CacheStore for CompiledFunctions {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let entries = self.entries.lock().expect("not poisoned");
        entries.get(key).map(|compiled| Cow::Owned(compiled.clone()))
    }

    fn insert(&self, key: &[u8], compiled: Vec<u8>) -> bool {
        if !self.building.load(Ordering::Relaxed) {
            return false;
        }
        self.entries.lock().expect("not poisoned").insert(key.to_owned(), compiled);
        true
    }
}

/// Keeps the functions cache filling for one image build; empties it when the build ends,
/// however it ends.
struct ImageBuild<'a>(&'a CompiledFunctions);

impl<'a> ImageBuild<'a> {
    fn start(functions: &'a CompiledFunctions) -> Self {
        functions.building.store(true, Ordering::Relaxed);
        Self(functions)
    }
}

impl Drop for ImageBuild<'_> {
    fn drop(&mut self) {
        self.0.building.store(false, Ordering::Relaxed);
        let mut entries = self.0.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *entries = HashMap::new();
    }
}

/// Maps the cached image, or builds and caches it (once per machine and build). `functions`
/// is the cache `engine` was configured with (see `CompiledFunctions`).
pub(crate) async fn load_or_build(
    engine: &Engine,
    functions: &CompiledFunctions,
    cache_dir: &Path,
) -> Result<Image, SandboxError> {
    if cache_dir.as_os_str().is_empty() {
        let none = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no cache directory: set SLUICE_CACHE_DIR (or HOME); a shared temporary one is never used",
        );
        return Err(SandboxError::ImageCache(cache_dir.to_owned(), none));
    }
    let hash = content_hash(engine);
    let path = cache_path(cache_dir, &hash);
    // One process builds; others that start meanwhile wait for it instead of building too.
    create_private_dir(cache_dir).map_err(|e| SandboxError::ImageCache(cache_dir.to_owned(), e))?;
    check_private(cache_dir, true).map_err(|e| SandboxError::ImageCache(cache_dir.to_owned(), e))?;
    if path.exists() {
        check_private(&path, false).map_err(|e| SandboxError::ImageCache(path.clone(), e))?;
        if let Ok(module) = deserialize(engine, &path) {
            return Ok(Image { module, hash });
        }
    }
    let lock_path = path.with_extension("lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| SandboxError::ImageCache(lock_path.clone(), e))?;
    let lock = tokio::task::spawn_blocking(move || lock.lock().map(|()| lock))
        .await
        .map_err(|e| SandboxError::ImageBuild(e.to_string()))?
        .map_err(|e| SandboxError::ImageCache(lock_path.clone(), e))?;
    if path.exists() {
        check_private(&path, false).map_err(|e| SandboxError::ImageCache(path.clone(), e))?;
        match deserialize(engine, &path) {
            Ok(module) => return Ok(Image { module, hash }),
            // Written by another wasmtime build or configuration: make it again.
            Err(_) => std::fs::remove_file(&path).map_err(|e| SandboxError::ImageCache(path.clone(), e))?,
        }
    }
    let build = ImageBuild::start(functions);
    let wasm = preinitialize(engine).await?;
    let engine_for_compile = engine.clone();
    let module = tokio::task::spawn_blocking(move || Module::new(&engine_for_compile, &wasm))
        .await
        .map_err(|e| SandboxError::ImageBuild(e.to_string()))?
        .map_err(|e| SandboxError::ImageBuild(format!("compiling the image: {e:#}")))?;
    let compiled = module.serialize().map_err(|e| SandboxError::ImageBuild(e.to_string()))?;
    write_atomically(cache_dir, &path, &compiled)?;
    // Map the file we just wrote, so the image is shared with other processes' mappings.
    let module = deserialize(engine, &path).map_err(|e| SandboxError::ImageBuild(e.to_string()))?;
    drop(build);
    drop(lock);
    Ok(Image { module, hash })
}

#[allow(unsafe_code)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Module> {
    // SAFETY: the file is one this code compiled and wrote into the operator's cache
    // directory under its content hash; wasmtime checks that it matches this engine.
    unsafe { Module::deserialize_file(engine, path) }
}

/// Compiled code is loaded from the cache without re-checking: keep it private to this user.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Refuses a cache directory or image another user owns or may write: its code would run
/// as ours. (This process's user is the owner of `/proc/self`.)
pub(crate) fn check_private(path: &Path, directory: bool) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    let ours = std::fs::metadata("/proc/self")?.uid();
    let found = std::fs::symlink_metadata(path)?;
    if found.file_type().is_symlink() {
        return refuse(format!("{} is a symbolic link", path.display()));
    }
    if found.is_dir() != directory {
        return refuse(format!("{} is not a {}", path.display(), if directory { "directory" } else { "file" }));
    }
    if found.uid() != ours {
        return refuse(format!("{} belongs to user {}, not to this one ({ours})", path.display(), found.uid()));
    }
    if found.mode() & 0o022 != 0 {
        return refuse(format!("{} may be written by other users (mode {:o})", path.display(), found.mode() & 0o777));
    }
    Ok(())
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), SandboxError> {
    let io = |e| SandboxError::ImageCache(path.to_owned(), e);
    let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), uuid::Uuid::new_v4()));
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// The bootstrap frame the guest reads during pre-initialization.
fn bootstrap_frame() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "modules": RUNTIME_MODULES,
        "lazy_modules": LAZY_MODULES,
        "entry": RUNTIME_ENTRY,
    }))
    .expect("static data serializes")
}

/// The byte range of `wasm`'s export section, its header included.
fn export_section(wasm: &[u8]) -> Option<Range<usize>> {
    section_range(wasm, |id, _| id == EXPORT_SECTION_ID)
}

/// The byte range of `wasm`'s `name` custom section, its header included.
fn name_section(wasm: &[u8]) -> Option<Range<usize>> {
    section_range(
        wasm,
        |_, payload| matches!(payload, wasmparser::Payload::CustomSection(custom) if custom.name() == NAME_SECTION),
    )
}

/// The byte range, header included, of the first section of `wasm` that `wanted` picks (by
/// its id and payload). A section's header starts where the one before it ends (sizes may be
/// written in padded LEB128, so the header's length is not derived from the size).
fn section_range(wasm: &[u8], wanted: impl Fn(u8, &wasmparser::Payload<'_>) -> bool) -> Option<Range<usize>> {
    let mut previous_end = WASM_HEADER_BYTES;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.ok()?;
        let Some((id, contents)) = payload.as_section() else { continue };
        if wanted(id, &payload) {
            return Some(previous_end..contents.end);
        }
        previous_end = contents.end;
    }
    None
}

/// Gives the initialized module the exports of the module pre-initialization ran: wizer drops
/// the globals and memory it exported to read them, and Cranelift marks code that touches an
/// exported global differently from code touching a private one, so without them a third of
/// the functions would miss the cache (see `CompiledFunctions`). Exporting the stack pointer
/// gives the host nothing it lacked, and no script can reach an export.
fn with_exports_of(mut wasm: Vec<u8>, exports: Option<&[u8]>) -> Vec<u8> {
    if let (Some(exports), Some(range)) = (exports, export_section(&wasm)) {
        wasm.splice(range, exports.iter().copied());
    }
    wasm
}

/// Drops the `name` custom section. Wasmtime keeps a record per named function in the
/// compiled image's metadata, which every process start decodes: 17,000 names were a quarter
/// of that metadata and 0.3 ms of each `sluice run`. Nothing else reads them: trap messages
/// do not show guest frames, and the profiler names functions from the embedded guest.
fn without_names(mut wasm: Vec<u8>) -> Vec<u8> {
    if let Some(range) = name_section(&wasm) {
        wasm.drain(range);
    }
    wasm
}

/// Runs the guest's pre-initialization under wizer and returns the initialized module.
async fn preinitialize(engine: &Engine) -> Result<Vec<u8>, SandboxError> {
    let fail = |what: &str, e: wasmtime::Error| SandboxError::ImageBuild(format!("{what}: {e:#}"));
    let mut wizer = Wizer::new();
    // Kept exported, so the image's functions are the ones pre-initialization compiled.
    wizer.init_func(PREINIT_FUNC).keep_init_func(true);
    let guest = lz4_flex::decompress_size_prepended(GUEST_WASM_LZ4)
        .map_err(|e| SandboxError::ImageBuild(format!("the embedded guest does not decompress: {e}")))?;
    let (context, instrumented) = wizer.instrument(&guest).map_err(|e| fail("instrumenting the guest", e))?;
    let instrumented_exports = export_section(&instrumented).map(|range| instrumented[range].to_vec());
    let engine_for_compile = engine.clone();
    let module = tokio::task::spawn_blocking(move || Module::new(&engine_for_compile, &instrumented))
        .await
        .map_err(|e| SandboxError::ImageBuild(e.to_string()))?
        .map_err(|e| fail("compiling the guest", e))?;
    let linker = new_linker(engine, &module).map_err(|e| fail("linking the guest", e))?;
    let mut state = HostState::new(PREINIT_SEED, PREINIT_MEMORY_BYTES, PREINIT_CLOCK_NS);
    state.bootstrap = Some(bootstrap_frame());
    state.output = std::sync::Arc::new(std::sync::Mutex::new(super::state::Output::new(64 << 10)));
    let mut store = build_store(engine, state);
    store.data_mut().deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let instance =
        linker.instantiate_async(&mut store, &module).await.map_err(|e| fail("instantiating the guest", e))?;
    let run = async {
        if let Ok(init) = instance.get_typed_func::<(), ()>(&mut store, "_initialize") {
            init.call_async(&mut store, ()).await?;
        }
        instance.get_typed_func::<(), ()>(&mut store, PREINIT_FUNC)?.call_async(&mut store, ()).await
    };
    if let Err(e) = run.await {
        let (stdout, stderr) = store.data().output.lock().expect("not poisoned").take();
        return Err(SandboxError::ImageBuild(format!("pre-initializing the guest: {e:#}\n{stdout}{stderr}")));
    }
    let mut snapshot = WizerState { store: &mut store, instance };
    let initialized = wizer.snapshot(&context, &mut snapshot).await.map_err(|e| fail("snapshotting the guest", e))?;
    Ok(without_names(with_exports_of(initialized, instrumented_exports.as_deref())))
}

/// What wizer reads from the initialized instance.
struct WizerState<'a> {
    store: &'a mut Store<HostState>,
    instance: Instance,
}

impl InstanceState for WizerState<'_> {
    async fn global_get(&mut self, name: &str, _type_hint: WizerValType) -> SnapshotVal {
        let global = self.instance.get_global(&mut *self.store, name).expect("wizer names an exported global");
        match global.get(&mut *self.store) {
            wasmtime::Val::I32(x) => SnapshotVal::I32(x),
            wasmtime::Val::I64(x) => SnapshotVal::I64(x),
            wasmtime::Val::F32(x) => SnapshotVal::F32(x),
            wasmtime::Val::F64(x) => SnapshotVal::F64(x),
            wasmtime::Val::V128(x) => SnapshotVal::V128(x.as_u128()),
            other => panic!("the guest exports a global wizer cannot snapshot: {other:?}"),
        }
    }

    async fn memory_contents(&mut self, name: &str, contents: impl FnOnce(&[u8]) + Send) {
        let memory = self.instance.get_memory(&mut *self.store, name).expect("wizer names an exported memory");
        contents(super::guest_memory::contents(&memory, &*self.store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_functions_are_kept_only_while_an_image_is_built() {
        let functions = CompiledFunctions::default();
        assert!(!functions.insert(b"f", vec![1]), "outside a build nothing is kept");
        assert_eq!(functions.get(b"f"), None);
        {
            let _build = ImageBuild::start(&functions);
            assert!(functions.insert(b"f", vec![1, 2]));
            assert_eq!(functions.get(b"f").as_deref(), Some(&[1u8, 2][..]));
        }
        assert_eq!(functions.get(b"f"), None, "emptied when the build ends");
        assert!(!functions.insert(b"g", vec![3]));
    }

    #[test]
    fn the_export_section_is_found_whole_and_replaced_by_another() {
        let guest = lz4_flex::decompress_size_prepended(GUEST_WASM_LZ4).unwrap();
        let range = export_section(&guest).unwrap();
        assert_eq!(guest[range.start], EXPORT_SECTION_ID, "the range starts at the section's id");
        // Two exports ("a" and "b", both function 0) in place of the guest's.
        let exports = [EXPORT_SECTION_ID, 9, 2, 1, b'a', 0, 0, 1, b'b', 0, 0];
        let replaced = with_exports_of(guest.clone(), Some(&exports));
        assert_eq!(replaced.len(), guest.len() - range.len() + exports.len());
        let names: Vec<String> = wasmparser::Parser::new(0)
            .parse_all(&replaced)
            .find_map(|payload| match payload.unwrap() {
                wasmparser::Payload::ExportSection(reader) => {
                    Some(reader.into_iter().map(|export| export.unwrap().name.to_owned()).collect())
                }
                _ => None,
            })
            .unwrap();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(with_exports_of(guest.clone(), None), guest, "nothing to copy, nothing changed");
    }

    #[test]
    fn the_name_section_is_dropped_and_nothing_else() {
        let guest = lz4_flex::decompress_size_prepended(GUEST_WASM_LZ4).unwrap();
        let sections = |wasm: &[u8]| -> Vec<(u8, Option<String>, Vec<u8>)> {
            let mut found = Vec::new();
            for payload in wasmparser::Parser::new(0).parse_all(wasm) {
                let payload = payload.unwrap();
                let Some((id, range)) = payload.as_section() else { continue };
                let name = match &payload {
                    wasmparser::Payload::CustomSection(custom) => Some(custom.name().to_owned()),
                    _ => None,
                };
                found.push((id, name, wasm[range].to_vec()));
            }
            found
        };
        let before = sections(&guest);
        assert!(before.iter().any(|(_, name, _)| name.as_deref() == Some(NAME_SECTION)), "the guest is named");
        let unnamed = without_names(guest.clone());
        let kept: Vec<_> = before.into_iter().filter(|(_, name, _)| name.as_deref() != Some(NAME_SECTION)).collect();
        assert_eq!(sections(&unnamed), kept, "every other section stays, byte for byte and in order");
        assert_eq!(without_names(unnamed.clone()), unnamed, "no name section, nothing changed");
    }
}
