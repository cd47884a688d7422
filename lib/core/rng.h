/* Counter-based RNG (Philox4x32-10, Salmon et al. 2011) keyed by (seed, stream ids).
 * A stream is a pure function of (seed, a, b): sample k of segment s draws from
 * sc_rng_init(seed, s, k) whatever rank or thread runs it, so results never depend on
 * the number of processes. */
#ifndef SC_RNG_H
#define SC_RNG_H
#include <stdint.h>

typedef struct sc_rng {
    uint32_t key[2];
    uint32_t ctr[4]; /* ctr[0..1] = block counter, ctr[2..3] = stream ids */
    uint32_t out[4];
    int used; /* outputs consumed from out[] */
} sc_rng;

void sc_rng_init(sc_rng *r, uint64_t seed, uint32_t stream_a, uint32_t stream_b);
uint32_t sc_rng_u32(sc_rng *r);
uint64_t sc_rng_u64(sc_rng *r);
double sc_rng_uniform(sc_rng *r); /* [0, 1), 53 bits */
double sc_rng_normal(sc_rng *r);  /* standard normal, Box-Muller (one draw per call) */
/* Philox4x32-10 block function, exposed for the known-answer test. */
void sc_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

#endif
