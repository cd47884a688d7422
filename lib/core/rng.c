#include <math.h>
#include "rng.h"
#include "mathx.h"

void sc_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4])
{
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

void sc_rng_init(sc_rng *r, uint64_t seed, uint32_t a, uint32_t b)
{
    r->key[0] = (uint32_t)seed;
    r->key[1] = (uint32_t)(seed >> 32);
    r->ctr[0] = r->ctr[1] = 0;
    r->ctr[2] = a;
    r->ctr[3] = b;
    r->used = 4;
}

uint32_t sc_rng_u32(sc_rng *r)
{
    if (r->used == 4) {
        sc_philox4x32_10(r->ctr, r->key, r->out);
        if (++r->ctr[0] == 0) ++r->ctr[1];
        r->used = 0;
    }
    return r->out[r->used++];
}

uint64_t sc_rng_u64(sc_rng *r)
{
    uint64_t hi = sc_rng_u32(r);
    return (hi << 32) | sc_rng_u32(r);
}

double sc_rng_uniform(sc_rng *r) { return (double)(sc_rng_u64(r) >> 11) * 0x1.0p-53; }

double sc_rng_normal(sc_rng *r)
{
    double u1 = 1.0 - sc_rng_uniform(r), u2 = sc_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * SC_PI * u2);
}
