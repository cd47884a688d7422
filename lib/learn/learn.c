/* learn-feedback's learning: the method the config names (learn/learn.h). */
#include <string.h>
#include "learn/learn.h"
#include "sampling/run_hash.h"
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
    const uint64_t inputs[] = {ol->hash, ol->reference_hash};
    return sc_run_hash(resolved_config, sc_model_hash(character), inputs, 2, seed);
}
