/* 64-bit FNV-1a: identifies a model, options or build in snapshot and checkpoint headers (not
 * cryptographic; a mismatch is what matters, and collisions between real models are negligible). */
#ifndef SC_HASH_H
#define SC_HASH_H
#include <stddef.h>
#include <stdint.h>

#define SC_HASH_INIT 0xcbf29ce484222325ull

static inline uint64_t sc_hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
static inline uint64_t sc_hash_f64(uint64_t h, double v) { return sc_hash_bytes(h, &v, sizeof v); }
static inline uint64_t sc_hash_i64(uint64_t h, int64_t v) { return sc_hash_bytes(h, &v, sizeof v); }

#endif
