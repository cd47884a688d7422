/* 64-bit FNV-1a: identifies a model, options or build in snapshot and checkpoint headers (not
 * cryptographic; a mismatch is what matters, and collisions between real models are negligible). */
#ifndef SC_HASH_H
#define SC_HASH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
/* Word-wise, so a checksum of a 0.5 MB snapshot costs tens of microseconds, not a millisecond. */
static inline uint64_t sc_hash_words(const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = SC_HASH_INIT, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return sc_hash_bytes(h, p + i, n - i);
}

#endif
