/* The run hash of sampling/run_hash.h. */
#include <string.h>
#include "core/hash.h"
#include "sampling/run_hash.h"
#include "sim/sim.h"

uint64_t sc_run_hash(const char *resolved_config, uint64_t model_hash, const uint64_t *input_hashes, int ninputs, uint64_t seed)
{
    uint64_t h = sc_hash_bytes(SC_HASH_INIT, resolved_config, strlen(resolved_config));
    h = sc_hash_i64(h, (int64_t)model_hash);
    for (int i = 0; i < ninputs; i++) h = sc_hash_i64(h, (int64_t)input_hashes[i]);
    h = sc_hash_i64(h, (int64_t)seed);
    return sc_hash_i64(h, (int64_t)sc_sim_build_hash());
}
