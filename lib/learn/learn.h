/* learn-feedback's learning, whichever method the config names (learn/guided.h, learn/gain_search.h),
 * and what identifies a run's inputs in its checkpoints. */
#ifndef SC_LEARN_H
#define SC_LEARN_H
#include <stdint.h>
#include "learn/learning.h"

/* Learns the policy by feedback.method (r->policy: the best). */
int sc_feedback_learn(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err);
/* The run hash of learn-feedback's checkpoints: the resolved config, the character as loaded, the
 * open-loop controller and its reference, the seed and the simulator's build. */
uint64_t sc_feedback_run_hash(const char *resolved_config, const sc_model *character, const sc_openloop_cycle *ol, uint64_t seed);

#endif
