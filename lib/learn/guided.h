/* learn-feedback's method: guided (the default): iterations of guided sampling, each fragment's
 * law refitted on what they gathered, every iteration's policy tested closed loop; the best kept.
 * Resumable from the checkpoint written after every iteration; within an iteration the sampler
 * keeps its own checkpoint beside it. */
#ifndef SC_GUIDED_H
#define SC_GUIDED_H
#include <stddef.h>
#include "learn/learning.h"

int sc_feedback_guided(const sc_feedback_run *run, sc_feedback_result *r, sc_err *err);
/* Checks a sealed learner checkpoint (the dataset's bytes) of a policy of nfrag fragments, ndof
 * control DoFs and nact actions and a config of `iterations`, as --resume does: SC_EINPUT saying
 * what is damaged. For the fuzz harness, whose seeds _example writes: a learner after `done`
 * iterations with `rows` pairs and transitions. */
int sc_feedback_learner_checkpoint_check(const unsigned char *blob, size_t n, uint64_t run_hash, int nfrag, int ndof, int nact, int iterations,
                                         sc_err *err);
int sc_feedback_learner_checkpoint_example(uint64_t run_hash, int nfrag, int ndof, int nact, int done, long rows, unsigned char **blob, size_t *n,
                                           sc_err *err);
/* The sampler's checkpoint within an iteration: CHECKPOINT.samcon into path[n] (SC_EINPUT when
 * it does not fit). */
int sc_feedback_sampler_checkpoint(const char *checkpoint, char *path, size_t n);

#endif
