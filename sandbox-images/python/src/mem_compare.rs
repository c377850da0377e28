//! `memcmp` eight bytes at a time, in place of wasi-libc's byte-by-byte loop.
//!
//! Every comparison of two strings or byte strings in the guest ends here: a dict lookup whose
//! key is equal but not the same object, the JSON decoder's memo of keys and short values,
//! `str.__eq__`, sorting. wasi-libc's `memcmp` (musl's) reads one byte per iteration; the
//! linker takes it from libc only when no object defines the symbol, so defining it here
//! replaces it for the Rust code and SQLite's C alike. Sluice's case
//! `tests/cases/language/byte_order_compare.py` holds it to CPython's ordering.

/// Bytes compared per step: a wasm `i64.load` takes any alignment, and x86 reads it unaligned
/// at no extra cost.
const WORD: usize = size_of::<u64>();

/// C's `memcmp`: the sign of the difference of the first pair of bytes that differ (as
/// unsigned), zero when the `len` bytes are equal.
///
/// # Safety
/// `left` and `right` are readable for `len` bytes, as C requires of its callers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, len: usize) -> i32 {
    let mut offset = 0;
    while len - offset >= WORD {
        // SAFETY: `offset + WORD <= len`, and the caller vouches for `len` bytes.
        let (a, b) = unsafe {
            (left.add(offset).cast::<u64>().read_unaligned(), right.add(offset).cast::<u64>().read_unaligned())
        };
        if a != b {
            // Memory is little-endian: swapping the bytes puts the first one read in the most
            // significant place, so the words order as their bytes do.
            return if a.swap_bytes() < b.swap_bytes() { -1 } else { 1 };
        }
        offset += WORD;
    }
    while offset < len {
        // SAFETY: `offset < len`.
        let (a, b) = unsafe { (*left.add(offset), *right.add(offset)) };
        if a != b {
            return i32::from(a) - i32::from(b);
        }
        offset += 1;
    }
    0
}
