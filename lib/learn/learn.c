/* learn-feedback's learning: the method the config names (learn/learn.h). */
#include <string.h>
#include "learn/learn.h"
#include "learn/gain_search.h"
#include "learn/guided.h"
#include "core/hash.h"

int sc_feedback_learn(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err)
{
    memset(r, 0, sizeof *r);
    return run->cfg->method == SC_LEARN_SEARCH ? sc_feedback_search(run, r, err) : sc_feedback_guided(run, r, err);
}

uint64_t sc_feedback_run_hash(const char *resolved_config, const sc_model *character, const sc_openloop_cycle *ol, uint64_t seed)
{
    uint64_t h = sc_hash_bytes(SC_HASH_INIT, resolved_config, strlen(resolved_config));
    h = sc_hash_i64(sc_hash_i64(sc_hash_i64(h, (int64_t)sc_model_hash(character)), (int64_t)ol->hash), (int64_t)ol->reference_hash);
    return sc_hash_i64(sc_hash_i64(h, (int64_t)seed), (int64_t)sc_sim_build_hash());
}
