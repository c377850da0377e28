/*
 * Loaded (LD_PRELOAD) into the compilers that build the guest from source, so that the same
 * sources make the same wasm byte for byte.
 *
 * RustPython's derive macros collect a class's properties and the frozen standard library's
 * modules in std HashMaps and emit code in their iteration order, which Rust seeds from
 * getrandom(2) in every process: each build orders those functions differently. Answering
 * getrandom with a fixed sequence makes every HashMap iterate the same way every time. Only
 * hash seeds depend on it in a build: temporary file names (tempfile's fastrand) also mix in
 * the clock, and nothing a compiler makes is secret.
 */
#include <stddef.h>
#include <sys/types.h>

ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
    (void)flags;
    unsigned char *out = buf;
    for (size_t i = 0; i < len; i++) {
        out[i] = (unsigned char)(0x5a + 7 * i);
    }
    return (ssize_t)len;
}
