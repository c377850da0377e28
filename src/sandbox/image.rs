//! The base image: guest wasm plus Python runtime, pre-initialized once and cached compiled.
//!
//! Starting the interpreter costs about 75 ms inside wasm, so it runs once, under wizer, and
//! the initialized memory becomes the data of a new module. That module is compiled (seconds)
//! and cached as a `.cwasm` named by the content hash of everything that went into it; later
//! starts map the file in about a millisecond, and every container is a copy-on-write view.

use super::state::HostState;
use super::{SandboxError, build_store, new_linker};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Instance, Module, Store};
use wasmtime_wizer::{InstanceState, SnapshotVal, ValType as WizerValType, Wizer};

/// The guest built by `build.rs` from `sandbox-images/python`, lz4-compressed: it is read only
/// when the image cache misses, where decompressing costs milliseconds beside seconds of
/// compiling. A `static`: as a `const` it was copied three times into the binary.
static GUEST_WASM_LZ4: &[u8] = include_bytes!(env!("SLUICE_GUEST_WASM_LZ4"));
/// SHA-256 of the guest (uncompressed), hex, computed when it was built.
pub(crate) const GUEST_SHA256: &str = env!("SLUICE_GUEST_SHA256");

/// The Python half of the guest, handed in at pre-initialization (name, source), in import
/// order: each module may import the ones before it.
pub(crate) const RUNTIME_MODULES: &[(&str, &str)] = &[
    ("_sluice_preload", include_str!("../../sandbox-images/python/runtime/_sluice_preload.py")),
    ("sluice", include_str!("../../sandbox-images/python/runtime/sluice.py")),
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
const IMAGE_FORMAT: &str = "sluice-python-image/1";
/// What pre-initialization sees as time and seed: fixed, so the image is reproducible.
const PREINIT_CLOCK_NS: u64 = 1_767_225_600_000_000_000; // 2026-01-01T00:00:00Z
const PREINIT_SEED: u64 = 0;
const PREINIT_MEMORY_BYTES: u64 = 1 << 30;
const PREINIT_FUNC: &str = "sluice_preinit";

/// A compiled base image and the hash that names it.
pub(crate) struct Image {
    pub module: Module,
    pub hash: String,
}

/// SHA-256 over everything that shapes the image, and the engine's compatibility (hex).
pub(crate) fn content_hash(engine: &Engine) -> String {
    use std::hash::{Hash, Hasher};
    let mut compatibility = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut compatibility);
    let mut hasher = Sha256::new();
    hasher.update(IMAGE_FORMAT.as_bytes());
    hasher.update(compatibility.finish().to_le_bytes());
    // Hashed by build.rs: hashing 27 MB here would cost every process start about 15 ms.
    hasher.update(GUEST_SHA256.as_bytes());
    for source in HOST_SOURCES {
        hasher.update((source.len() as u64).to_le_bytes());
        hasher.update(source.as_bytes());
    }
    for (name, source) in RUNTIME_MODULES.iter().chain(LAZY_MODULES) {
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((source.len() as u64).to_le_bytes());
        hasher.update(source.as_bytes());
    }
    crate::call::hex(&hasher.finalize())
}

/// Where the compiled image for this build lives in `cache_dir`.
pub(crate) fn cache_path(cache_dir: &Path, hash: &str) -> PathBuf {
    cache_dir.join(format!("python-{hash}.cwasm"))
}

/// Maps the cached image, or builds and caches it (once per machine and build).
pub(crate) async fn load_or_build(engine: &Engine, cache_dir: &Path) -> Result<Image, SandboxError> {
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

/// Runs the guest's pre-initialization under wizer and returns the initialized module.
async fn preinitialize(engine: &Engine) -> Result<Vec<u8>, SandboxError> {
    let fail = |what: &str, e: wasmtime::Error| SandboxError::ImageBuild(format!("{what}: {e:#}"));
    let mut wizer = Wizer::new();
    wizer.init_func(PREINIT_FUNC);
    let guest = lz4_flex::decompress_size_prepended(GUEST_WASM_LZ4)
        .map_err(|e| SandboxError::ImageBuild(format!("the embedded guest does not decompress: {e}")))?;
    let (context, instrumented) = wizer.instrument(&guest).map_err(|e| fail("instrumenting the guest", e))?;
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
    wizer.snapshot(&context, &mut snapshot).await.map_err(|e| fail("snapshotting the guest", e))
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
