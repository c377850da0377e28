//! The guest's Rust heap: small blocks from one free list per size, the rest from malloc.
//!
//! RustPython allocates and frees an object, a dict's tables or a vector's buffer for most
//! steps of a script, and nearly all of them are small. wasi-libc's dlmalloc serves each
//! through its general bins: a header per chunk, coalescing neighbours on every free. Here a
//! small request pops the head of its size's free list and a free pushes it back, as CPython's
//! pymalloc does for its objects. Rust hands the layout back on every free, so a block needs no
//! header: its size class comes from the layout.
//!
//! Small blocks are cut from aligned chunks taken from malloc. A freed block stays on its list,
//! so memory freed at one size serves only that size until malloc runs out: then every chunk
//! whose blocks are all free goes back to malloc (`release_free_chunks`) and the request is
//! tried again. A script that builds and drops many small objects and then needs one large
//! buffer gets that memory back, though not always all of it: the chunk in use may sit between
//! the freed span and the top of the heap, which malloc alone would have merged.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

// The lists take no locks: a guest built with threads would need them.
#[cfg(target_feature = "atomics")]
compile_error!("small_blocks assumes one thread; a threaded guest needs locked free lists");

/// Requests up to this many bytes (with an alignment of at most `GRANULE`) are small.
const MAX_SMALL_BYTES: usize = 512;
/// Block sizes step by this, and every block is aligned to it.
const GRANULE: usize = 8;
/// One free list per block size: `GRANULE`, `2 * GRANULE`, ... `MAX_SMALL_BYTES`.
const CLASSES: usize = MAX_SMALL_BYTES / GRANULE;
/// Chunks are aligned to this, so a block's chunk is its address rounded down.
const CHUNK_ALIGN: usize = 64 * 1024;
/// What a chunk leaves at the end of its aligned span for malloc's own header of the next
/// chunk, so chunks taken one after another sit at consecutive aligned addresses.
const MALLOC_HEADER_ROOM: usize = 64;
const CHUNK_BYTES: usize = CHUNK_ALIGN - MALLOC_HEADER_ROOM;
/// The chunk's header, rounded up to keep blocks `GRANULE`-aligned.
const HEADER_BYTES: usize = std::mem::size_of::<ChunkHeader>().next_multiple_of(GRANULE);
/// What a chunk's free blocks add up to when none of its blocks is in use.
const WHOLLY_FREE: usize = CHUNK_BYTES - HEADER_BYTES;

/// What a free block holds: the next free block of its size.
struct FreeBlock {
    next: *mut FreeBlock,
}

/// The start of every chunk.
struct ChunkHeader {
    next: *mut ChunkHeader,
    /// Bytes of this chunk's blocks on the free lists; counted only while releasing.
    free_tally: usize,
}

struct Lists {
    free: [*mut FreeBlock; CLASSES],
    /// The unused part of the current chunk.
    next: *mut u8,
    end: *mut u8,
    /// Every chunk taken from malloc and not released.
    chunks: *mut ChunkHeader,
    stats: HeapStats,
    /// `free_bytes` and `chunk_bytes` after the last release that found nothing to give back:
    /// until either changes, another walk would find nothing either.
    fruitless_at: (usize, usize),
}

/// What the small-block heap holds, for `_sluice_abi.heap_stats()`.
#[derive(Clone, Copy)]
pub struct HeapStats {
    /// Bytes held from malloc as chunks.
    pub chunk_bytes: usize,
    /// Bytes of free blocks on the lists.
    pub free_bytes: usize,
    /// Bytes of free blocks dropped from the lists when the image was made (see
    /// `SmallBlocks::forget_free_blocks`).
    pub forgotten_bytes: usize,
    /// Chunks given back to malloc.
    pub released_chunks: usize,
}

impl HeapStats {
    /// Each figure with the name `_sluice_abi.heap_stats()` gives it.
    pub fn named(&self) -> [(&'static str, usize); 4] {
        [
            ("chunk_bytes", self.chunk_bytes),
            ("free_bytes", self.free_bytes),
            ("forgotten_bytes", self.forgotten_bytes),
            ("released_chunks", self.released_chunks),
        ]
    }
}

/// The allocator; `#[global_allocator]` in `lib.rs`.
pub struct SmallBlocks {
    lists: UnsafeCell<Lists>,
}

// SAFETY: the guest runs on one thread (wasm32-wasip1 has no threads), so the lists are never
// touched from two places at once.
unsafe impl Sync for SmallBlocks {}

impl SmallBlocks {
    pub const fn new() -> Self {
        let stats = HeapStats { chunk_bytes: 0, free_bytes: 0, forgotten_bytes: 0, released_chunks: 0 };
        Self {
            lists: UnsafeCell::new(Lists {
                free: [ptr::null_mut(); CLASSES],
                next: ptr::null_mut(),
                end: ptr::null_mut(),
                chunks: ptr::null_mut(),
                stats,
                fruitless_at: (0, 0),
            }),
        }
    }

    pub fn stats(&self) -> HeapStats {
        self.lists().stats
    }

    /// Empties the free lists, leaving their blocks unused for good; called once, when the
    /// image is made. Pre-initialization frees the temporaries of loading the runtime all over
    /// the heap; served from the lists, a container's first allocations would land on as many
    /// scattered pages, each one a private copy of an image page. Cut from the current chunk
    /// instead, they share a few. The dropped blocks (a few hundred KiB) stay in the image but
    /// are never touched.
    pub fn forget_free_blocks(&self) {
        let lists = self.lists();
        lists.free = [ptr::null_mut(); CLASSES];
        lists.stats.forgotten_bytes += lists.stats.free_bytes;
        lists.stats.free_bytes = 0;
    }

    /// One thread, and no allocation re-enters another: the lists have one user at a time.
    #[allow(clippy::mut_from_ref)]
    fn lists(&self) -> &mut Lists {
        // SAFETY: see above.
        unsafe { &mut *self.lists.get() }
    }
}

/// The size class serving `size` bytes at `align`, or None when malloc serves it.
#[inline]
fn class_of(size: usize, align: usize) -> Option<usize> {
    (size <= MAX_SMALL_BYTES && align <= GRANULE).then(|| size.max(1).div_ceil(GRANULE) - 1)
}

#[inline]
const fn block_bytes(class: usize) -> usize {
    (class + 1) * GRANULE
}

#[inline]
fn chunk_of(block: *mut FreeBlock) -> *mut ChunkHeader {
    block.map_addr(|address| address & !(CHUNK_ALIGN - 1)).cast()
}

const CHUNK_LAYOUT: Layout = match Layout::from_size_align(CHUNK_BYTES, CHUNK_ALIGN) {
    Ok(layout) => layout,
    Err(_) => panic!("a chunk's layout is valid"),
};

impl Lists {
    /// A request to malloc, made again if it failed and wholly free chunks went back to it.
    unsafe fn ask_malloc(&mut self, request: impl Fn() -> *mut u8) -> *mut u8 {
        let block = request();
        if block.is_null() && unsafe { self.release_free_chunks() } { request() } else { block }
    }

    #[inline]
    unsafe fn push(&mut self, class: usize, block: *mut u8) {
        let block = block.cast::<FreeBlock>();
        // SAFETY: a block is at least GRANULE bytes and GRANULE-aligned, room for the link.
        unsafe { block.write(FreeBlock { next: self.free[class] }) };
        self.free[class] = block;
        self.stats.free_bytes += block_bytes(class);
    }

    #[inline]
    unsafe fn pop(&mut self, class: usize) -> *mut u8 {
        let head = self.free[class];
        if head.is_null() {
            return unsafe { self.carve(class) };
        }
        // SAFETY: every block on a list was written by `push`.
        self.free[class] = unsafe { (*head).next };
        self.stats.free_bytes -= block_bytes(class);
        head.cast()
    }

    /// A block never used before, cut from the current chunk or a new one.
    #[cold]
    unsafe fn carve(&mut self, class: usize) -> *mut u8 {
        let size = block_bytes(class);
        let rest = (self.end as usize) - (self.next as usize);
        if rest < size {
            // The rest of the chunk becomes one free block of its own size.
            if rest >= GRANULE {
                unsafe { self.push(rest / GRANULE - 1, self.next) };
            }
            (self.next, self.end) = (ptr::null_mut(), ptr::null_mut());
            let chunk = unsafe { self.ask_malloc(|| System.alloc(CHUNK_LAYOUT)) };
            if chunk.is_null() {
                return chunk;
            }
            // SAFETY: a fresh chunk of CHUNK_BYTES, aligned for its header.
            unsafe { chunk.cast::<ChunkHeader>().write(ChunkHeader { next: self.chunks, free_tally: 0 }) };
            self.chunks = chunk.cast();
            self.stats.chunk_bytes += CHUNK_BYTES;
            (self.next, self.end) = unsafe { (chunk.add(HEADER_BYTES), chunk.add(CHUNK_BYTES)) };
        }
        let block = self.next;
        self.next = unsafe { block.add(size) };
        block
    }

    /// Gives every chunk whose blocks are all on the free lists back to malloc, after taking
    /// those blocks off the lists; true when one went back. A walk over every free block,
    /// run only when malloc has just failed, and not again until blocks were freed or chunks
    /// taken since a walk that found nothing. The current chunk qualifies only once carving
    /// has used it up (its unused tail is on no list); then its bounds are cleared with it.
    #[cold]
    unsafe fn release_free_chunks(&mut self) -> bool {
        let now = (self.stats.free_bytes, self.stats.chunk_bytes);
        if self.stats.free_bytes < WHOLLY_FREE || now == self.fruitless_at {
            return false;
        }
        // SAFETY (the whole walk): every chunk on the list and every block on a free list was
        // written by `carve` and `push`, and each block lies inside the chunk its address
        // rounds down to.
        unsafe {
            let mut chunk = self.chunks;
            while !chunk.is_null() {
                (*chunk).free_tally = 0;
                chunk = (*chunk).next;
            }
            for (class, head) in self.free.iter().enumerate() {
                let mut block = *head;
                while !block.is_null() {
                    (*chunk_of(block)).free_tally += block_bytes(class);
                    block = (*block).next;
                }
            }
            for class in 0..CLASSES {
                let mut link: *mut *mut FreeBlock = &mut self.free[class];
                while !(*link).is_null() {
                    let block = *link;
                    if (*chunk_of(block)).free_tally == WHOLLY_FREE {
                        *link = (*block).next;
                        self.stats.free_bytes -= block_bytes(class);
                    } else {
                        link = &mut (*block).next;
                    }
                }
            }
            let mut released = false;
            let mut link: *mut *mut ChunkHeader = &mut self.chunks;
            while !(*link).is_null() {
                let chunk = *link;
                if (*chunk).free_tally == WHOLLY_FREE {
                    *link = (*chunk).next;
                    if self.end == chunk.cast::<u8>().add(CHUNK_BYTES) {
                        (self.next, self.end) = (ptr::null_mut(), ptr::null_mut());
                    }
                    System.dealloc(chunk.cast(), CHUNK_LAYOUT);
                    self.stats.chunk_bytes -= CHUNK_BYTES;
                    self.stats.released_chunks += 1;
                    released = true;
                } else {
                    link = &mut (*chunk).next;
                }
            }
            if !released {
                self.fruitless_at = (self.stats.free_bytes, self.stats.chunk_bytes);
            }
            released
        }
    }
}

unsafe impl GlobalAlloc for SmallBlocks {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(layout.size(), layout.align()) {
            Some(class) => unsafe { self.lists().pop(class) },
            None => unsafe { self.lists().ask_malloc(|| System.alloc(layout)) },
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match class_of(layout.size(), layout.align()) {
            // SAFETY: Rust frees with the layout it allocated with, so the block is this class's.
            Some(class) => unsafe { self.lists().push(class, block) },
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout.size(), layout.align()) else {
            // calloc knows when fresh memory is already zero.
            return unsafe { self.lists().ask_malloc(|| System.alloc_zeroed(layout)) };
        };
        let block = unsafe { self.lists().pop(class) };
        if !block.is_null() {
            unsafe { block.write_bytes(0, layout.size()) };
        }
        block
    }

    #[inline(never)]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, new) = (class_of(layout.size(), layout.align()), class_of(new_size, layout.align()));
        match (old, new) {
            // A failed realloc leaves the block where it was, so it can be asked again.
            (None, None) => unsafe { self.lists().ask_malloc(|| System.realloc(block, layout, new_size)) },
            (Some(old), Some(new)) if old == new => block,
            _ => {
                // SAFETY: the caller guarantees new_size, rounded to the alignment, fits isize.
                let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}
